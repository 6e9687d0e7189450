//! Guest access and abuse limits (API v1.1): guest tokens, unlocking a
//! table, the per-session order rate, the grace after checkout, refusals
//! that are counted but not audited, and the audit retention.

use futures_util::future::join_all;
use reqwest::Method;
use serde_json::json;

use crate::helpers::{OrderBody, TestApp, key, wrong_pin};
use crate::sse::{SseStream, WAIT};

const DINING_ROOM: &str = "198.51.100.20";

#[tokio::test]
async fn a_guest_token_stands_in_for_the_pin_on_every_guest_call() {
    let app = TestApp::spawn().await;
    let (shop, menu) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let (other, other_pin) = app.table(&shop, "T2").await;
    let exchange = app.guest(
        Method::POST,
        &format!("/api/v1/sessions/{session}/access"),
        &pin,
    );
    let granted = TestApp::send(exchange).await;
    let token = granted.assert_status(200)["guestToken"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(granted.header("cache-control"), Some("no-store"));
    let with_token = |method: Method, path: &str| app.request(method, path).bearer_auth(&token);

    let view = TestApp::send(with_token(
        Method::GET,
        &format!("/api/v1/sessions/{session}"),
    ))
    .await;
    assert_eq!(view.assert_status(200)["tableLabel"], "T1");
    assert!(view.body.get("pin").is_none(), "a guest never sees the PIN");
    let mut stream = SseStream::open(app.request(
        Method::GET,
        &format!("/api/v1/sessions/{session}/events?access_token={token}"),
    ))
    .await;
    let order = OrderBody::new().line(&menu.curry, 1).json();
    let order_key = key();
    let placed = TestApp::send(
        with_token(Method::POST, &format!("/api/v1/sessions/{session}/orders"))
            .header("Idempotency-Key", &order_key)
            .header("X-Client-Id", "phone-1")
            .json(&order),
    )
    .await;
    let placed = placed.assert_order(false);
    let again = TestApp::send(
        with_token(Method::POST, &format!("/api/v1/sessions/{session}/orders"))
            .header("Idempotency-Key", &order_key)
            .header("X-Client-Id", "phone-1")
            .json(&order),
    )
    .await;
    assert_eq!(again.assert_order(true), placed);
    let history = TestApp::send(with_token(
        Method::GET,
        &format!("/api/v1/sessions/{session}/orders"),
    ))
    .await;
    assert_eq!(history.assert_status(200)["orders"], json!([placed]));
    let event = loop {
        let event = stream.next().await;
        if event.event == "order.placed" {
            break event;
        }
    };
    assert_eq!(event.data["orderId"], placed["orderId"]);

    // The token opens its own table only, and a token is no staff token.
    let foreign = TestApp::send(with_token(
        Method::GET,
        &format!("/api/v1/sessions/{other}"),
    ))
    .await;
    foreign.assert_problem(401, "UNAUTHORIZED");
    let foreign_order = TestApp::send(
        with_token(Method::POST, &format!("/api/v1/sessions/{other}/orders"))
            .header("Idempotency-Key", key())
            .header("X-Client-Id", "phone-1")
            .json(&order),
    )
    .await;
    foreign_order.assert_problem(401, "UNAUTHORIZED");
    TestApp::send(with_token(
        Method::GET,
        &format!("/api/v1/shops/{shop}/sessions"),
    ))
    .await
    .assert_problem(401, "UNAUTHORIZED");
    let guessed = app
        .request(Method::GET, &format!("/api/v1/sessions/{session}"))
        .bearer_auth(format!("{token}0"));
    TestApp::send(guessed)
        .await
        .assert_problem(401, "UNAUTHORIZED");
    assert!(app.orders_of(&other).await.is_empty());
    // A token cannot mint tokens: the exchange takes the PIN only.
    TestApp::send(with_token(
        Method::POST,
        &format!("/api/v1/sessions/{other}/access"),
    ))
    .await
    .assert_problem(401, "PIN_INVALID");
    app.guest_token(&other, &other_pin).await;

    // Checkout ends the token, and the stream with it.
    app.checkout(&session).await.assert_status(200);
    let rest = stream.rest().await;
    assert_eq!(
        rest.last().map(|e| e.event.as_str()),
        Some("session.closed")
    );
    TestApp::send(with_token(
        Method::GET,
        &format!("/api/v1/sessions/{session}"),
    ))
    .await
    .assert_problem(401, "UNAUTHORIZED");
    // The PIN still reads the closed table within the grace.
    app.guest_session(&session, &pin).await.assert_status(200);
    TestApp::send(app.guest(
        Method::POST,
        &format!("/api/v1/sessions/{session}/access"),
        &pin,
    ))
    .await
    .assert_problem(410, "SESSION_CLOSED");
}

#[tokio::test]
async fn wrong_pins_from_the_same_address_lock_out_nobody_already_seated() {
    let app = TestApp::spawn_with(|s| s.trusted_proxies = vec!["127.0.0.1".parse().unwrap()]).await;
    let (shop, menu) = app.shop_with_menu().await;
    let (seated, seated_pin) = app.table(&shop, "T1").await;
    let token = app.guest_token(&seated, &seated_pin).await;

    // Someone on the restaurant's Wi-Fi guesses: the seated table's own
    // lock, then the whole address's.
    let mut tables = vec![(seated.clone(), seated_pin.clone())];
    for n in 2..=6 {
        tables.push(app.table(&shop, &format!("T{n}")).await);
    }
    let app = &app;
    let guesses = tables.iter().flat_map(|(session, pin)| {
        (0..5).map(move |_| {
            TestApp::send(
                app.guest(
                    Method::GET,
                    &format!("/api/v1/sessions/{session}"),
                    wrong_pin(pin),
                )
                .header("X-Forwarded-For", DINING_ROOM),
            )
        })
    });
    let refusals = join_all(guesses).await;
    assert!(refusals.iter().all(|r| r.status == 401 || r.status == 429));
    // A party arriving now, with only its PIN, waits out the address's
    // window (or is let in by its token once it has one).
    let (newcomer, newcomer_pin) = app.table(&shop, "T7").await;
    let by_pin = app
        .guest(
            Method::POST,
            &format!("/api/v1/sessions/{newcomer}/access"),
            &newcomer_pin,
        )
        .header("X-Forwarded-For", DINING_ROOM);
    let locked = TestApp::send(by_pin).await;
    locked.assert_problem(429, "PIN_LOCKED");
    assert_eq!(locked.body["scope"], "address");

    // The seated party's token carries on, from the same address.
    let order = OrderBody::new().line(&menu.soup, 1).json();
    let placed = TestApp::send(
        app.request(Method::POST, &format!("/api/v1/sessions/{seated}/orders"))
            .bearer_auth(&token)
            .header("X-Forwarded-For", DINING_ROOM)
            .header("Idempotency-Key", key())
            .header("X-Client-Id", "phone-1")
            .json(&order),
    )
    .await;
    placed.assert_order(false);
    let view = app
        .request(Method::GET, &format!("/api/v1/sessions/{seated}"))
        .bearer_auth(&token)
        .header("X-Forwarded-For", DINING_ROOM);
    TestApp::send(view).await.assert_status(200);
}

#[tokio::test]
async fn the_exchange_counts_as_a_pin_use_and_staff_can_unlock_a_table() {
    let app = TestApp::spawn_with(|s| s.pin_max_failures = 2).await;
    let (shop, _) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let access = format!("/api/v1/sessions/{session}/access");
    for _ in 0..2 {
        TestApp::send(app.guest(Method::POST, &access, wrong_pin(&pin)))
            .await
            .assert_problem(401, "PIN_INVALID");
    }
    let locked = TestApp::send(app.guest(Method::POST, &access, &pin)).await;
    locked.assert_problem(429, "PIN_LOCKED");
    assert_eq!(locked.body["scope"], "table", "staff can lift this one");
    TestApp::send(app.request(Method::POST, &access))
        .await
        .assert_problem(429, "PIN_LOCKED");
    let listed = app.list_sessions(&shop, "?status=active").await;
    assert!(listed.body["sessions"][0]["pinLockedUntil"].is_string());

    let unlock = format!("/api/v1/sessions/{session}/unlock");
    TestApp::send(app.request(Method::POST, &unlock))
        .await
        .assert_problem(401, "UNAUTHORIZED");
    TestApp::send(app.guest(Method::POST, &unlock, &pin))
        .await
        .assert_problem(401, "UNAUTHORIZED");
    let unlocked = TestApp::send(app.staff(Method::POST, &unlock)).await;
    let unlocked = unlocked.assert_status(200);
    assert_eq!(unlocked["pinLockedUntil"], json!(null));
    assert_eq!(unlocked["pin"], pin.as_str());
    app.guest_token(&session, &pin).await;
    TestApp::send(app.staff(
        Method::POST,
        &format!("/api/v1/sessions/{}/unlock", uuid::Uuid::new_v4()),
    ))
    .await
    .assert_problem(404, "NOT_FOUND");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_table_places_at_most_its_order_limit_whatever_its_devices_say() {
    let app = TestApp::spawn_with(|s| {
        s.session_order_limit = 3;
        s.client_cooldown_ms = 0;
    })
    .await;
    let (shop, menu) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    // Ten devices at once, each with a fresh client id.
    let orders = (0..10).map(|n| {
        let order = OrderBody::new().line(&menu.beer, 1).json();
        let pin = pin.clone();
        let session = session.clone();
        let app = &app;
        async move {
            app.place_order(&session, &pin, &format!("phone-{n}"), &key(), &order)
                .await
        }
    });
    let replies = join_all(orders).await;
    let placed = replies.iter().filter(|r| r.status == 201).count();
    assert_eq!(placed, 3);
    for refused in replies.iter().filter(|r| r.status != 201) {
        refused.assert_problem(429, "SESSION_RATE_LIMITED");
        let retry: u64 = refused.header("retry-after").unwrap().parse().unwrap();
        assert!((1..=600).contains(&retry), "Retry-After {retry}");
    }
    assert_eq!(app.orders_of(&session).await.len(), 3);
    // Staff can still put an order through for the table.
    app.staff_order(&session, None, &OrderBody::new().line(&menu.beer, 1).json())
        .await
        .assert_order(false);
}

#[tokio::test]
async fn after_its_grace_a_checked_out_table_answers_guests_with_410_only() {
    let app = TestApp::spawn_with(|s| s.closed_session_grace_secs = 0).await;
    let (shop, menu) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let order = OrderBody::new().line(&menu.curry, 1).json();
    let order_key = key();
    app.place_order(&session, &pin, "phone-1", &order_key, &order)
        .await
        .assert_order(false);
    app.checkout(&session).await.assert_status(200);
    let audited = app.audit_entries(&shop).await.len();

    app.guest_session(&session, &pin)
        .await
        .assert_problem(410, "SESSION_CLOSED");
    app.guest_orders(&session, &pin, "")
        .await
        .assert_problem(410, "SESSION_CLOSED");
    let stream = SseStream::try_open(app.session_stream(&session, &pin)).await;
    stream.err().unwrap().assert_problem(410, "SESSION_CLOSED");
    // Even a replay, and even a wrong PIN: nothing is judged any more.
    app.place_order(&session, &pin, "phone-1", &order_key, &order)
        .await
        .assert_problem(410, "SESSION_CLOSED");
    app.guest_session(&session, wrong_pin(&pin))
        .await
        .assert_problem(410, "SESSION_CLOSED");
    assert_eq!(app.audit_entries(&shop).await.len(), audited);
    // Staff still see it all.
    app.staff_session(&session).await.assert_status(200);
    assert_eq!(app.orders_of(&session).await.len(), 1);
}

#[tokio::test]
async fn refusals_before_any_pin_is_judged_are_counted_not_audited() {
    let app = TestApp::spawn_with(|s| s.pin_max_failures = 1).await;
    let (shop, menu) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let order = OrderBody::new().line(&menu.curry, 1).json();
    let no_pin = (0..30).map(|_| {
        TestApp::send(
            app.order_request(&session, None, Some("phone-1"), Some(&key()))
                .json(&order),
        )
    });
    for reply in join_all(no_pin).await {
        reply.assert_problem(401, "PIN_INVALID");
    }
    let bad_token = app
        .order_request(&session, None, Some("phone-1"), Some(&key()))
        .bearer_auth("og_guest_forged")
        .json(&order);
    TestApp::send(bad_token)
        .await
        .assert_problem(401, "UNAUTHORIZED");
    assert!(app.audit_entries(&shop).await.is_empty());

    // A wrong PIN is judged, and on file; the lock it sets judges nothing.
    app.place_order(&session, wrong_pin(&pin), "phone-1", &key(), &order)
        .await
        .assert_problem(401, "PIN_INVALID");
    for _ in 0..3 {
        app.place_order(&session, &pin, "phone-1", &key(), &order)
            .await
            .assert_problem(429, "PIN_LOCKED");
    }
    let codes: Vec<_> = app
        .audit_entries(&shop)
        .await
        .iter()
        .map(|row| row["code"].clone())
        .collect();
    assert_eq!(codes, ["PIN_INVALID"]);
    for (code, count) in [
        ("PIN_INVALID", 30.0),
        ("UNAUTHORIZED", 1.0),
        ("PIN_LOCKED", 3.0),
    ] {
        let counted = app
            .metric(
                "ordergate_order_refusals_unaudited_total",
                &[("code", code)],
            )
            .await;
        assert_eq!(counted, count, "{code}");
    }
}

#[tokio::test]
async fn audit_rows_past_their_retention_are_purged() {
    let app = TestApp::spawn_with(|s| s.audit_retention_days = 30).await;
    let (shop, menu) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    for n in 0..3 {
        let order = OrderBody::new().line(&menu.curry, n + 1).json();
        app.place_order(&session, &pin, &format!("phone-{n}"), &key(), &order)
            .await
            .assert_order(false);
    }
    let rows = app.audit_entries(&shop).await;
    let oldest = rows.last().unwrap()["requestId"].clone();
    // The oldest row, as if written 31 days ago.
    app.execute_sql(
        "update audit_log set created_at = created_at - 31 * 86400000
         where audit_id = (select min(audit_id) from audit_log)",
        // Citus refuses a column in a time zone's arithmetic: a constant.
        "update audit_log set created_at = now() - interval '31 days'
         where audit_id = (select min(audit_id) from audit_log)",
    )
    .await;
    // The purge runs at start, then every minute.
    let app = app.restart().await;
    let deadline = tokio::time::Instant::now() + WAIT;
    let left = loop {
        let left = app.audit_entries(&shop).await;
        if left.len() == 2 || tokio::time::Instant::now() > deadline {
            break left;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(left.len(), 2);
    assert!(left.iter().all(|row| row["requestId"] != oldest));
    assert_eq!(app.orders_of(&session).await.len(), 3, "orders are kept");
}
