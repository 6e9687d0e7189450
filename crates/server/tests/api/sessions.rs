use std::time::Duration;

use futures_util::future::join_all;
use serde_json::json;
use uuid::Uuid;

use crate::helpers::TestApp;

#[tokio::test]
async fn opening_a_table_gives_a_pin_and_a_guest_url() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let reply = app.open_session(&shop, "T4").await;
    let session = reply.assert_status(201).clone();
    let id = session["sessionId"].as_str().unwrap();
    let pin = session["pin"].as_str().unwrap();
    assert!(
        pin.len() == 6 && pin.bytes().all(|b| b.is_ascii_digit()),
        "{pin}"
    );
    assert_eq!(
        session["guestUrl"],
        format!("{}/t/{id}#pin={pin}", app.base)
    );
    assert_eq!(session["status"], "active");
    assert_eq!(session["tableLabel"], "T4");
    assert_eq!(session["shopId"], shop);
    assert_eq!(
        reply.header("location"),
        Some(format!("/api/v1/sessions/{id}").as_str())
    );
}

#[tokio::test]
async fn public_url_setting_shapes_the_guest_url() {
    let app =
        TestApp::spawn_with(|s| s.public_url = Some("https://order.example.com/".into())).await;
    let shop = app.shop().await;
    let session = app.open_session(&shop, "T1").await.body;
    let url = session["guestUrl"].as_str().unwrap();
    assert!(url.starts_with("https://order.example.com/t/"), "{url}");
}

#[tokio::test]
async fn a_table_with_an_active_session_is_occupied_until_checkout() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let (session, _) = app.table(&shop, "T1").await;
    let reply = app.open_session(&shop, "T1").await;
    reply.assert_problem(409, "TABLE_OCCUPIED");
    assert_eq!(reply.body["tableLabel"], "T1");
    app.table(&shop, "T2").await;

    app.checkout(&session).await.assert_status(200);
    app.table(&shop, "T1").await;
}

#[tokio::test]
async fn simultaneous_opens_of_one_table_give_exactly_one_session() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let replies = join_all((0..20).map(|_| app.open_session(&shop, "T7"))).await;
    let created = replies.iter().filter(|r| r.status == 201).count();
    let occupied = replies
        .iter()
        .filter(|r| r.body["code"] == "TABLE_OCCUPIED")
        .count();
    assert_eq!((created, occupied), (1, 19));
    let listed = app.list_sessions(&shop, "?status=active").await;
    assert_eq!(listed.body["sessions"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn guests_see_their_session_without_the_pin_and_staff_see_it_all() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let guest = app.guest_session(&session, &pin).await;
    let body = guest.assert_status(200);
    assert_eq!(body["sessionId"], session);
    assert_eq!(body["tableLabel"], "T1");
    assert_eq!(body["status"], "active");
    assert!(
        body.get("pin").is_none() && body.get("guestUrl").is_none(),
        "{body}"
    );
    assert!(!guest.text.contains(&pin));

    let staff = app.staff_session(&session).await;
    assert_eq!(staff.assert_status(200)["pin"], pin);
}

#[tokio::test]
async fn unknown_sessions_are_not_found_before_any_pin_is_judged() {
    let app = TestApp::spawn().await;
    let unknown = Uuid::new_v4().to_string();
    app.guest_session(&unknown, "123456")
        .await
        .assert_problem(404, "NOT_FOUND");
    app.staff_session(&unknown)
        .await
        .assert_problem(404, "NOT_FOUND");
    app.checkout(&unknown)
        .await
        .assert_problem(404, "NOT_FOUND");
    app.guest_session("nope", "123456")
        .await
        .assert_problem(404, "NOT_FOUND");
}

#[tokio::test]
async fn wrong_missing_or_foreign_pins_are_refused() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let (_, other_pin) = app.table(&shop, "T2").await;
    let wrong = if pin == "000000" { "000001" } else { "000000" };
    app.guest_session(&session, wrong)
        .await
        .assert_problem(401, "PIN_INVALID");
    if other_pin != pin {
        app.guest_session(&session, &other_pin)
            .await
            .assert_problem(401, "PIN_INVALID");
    }
    app.get(&format!("/api/v1/sessions/{session}"))
        .await
        .assert_problem(401, "PIN_INVALID");
    // Without a PIN, the bearer token decides: neither staff's nor a guest's.
    let bad_bearer = TestApp::send(
        app.request(reqwest::Method::GET, &format!("/api/v1/sessions/{session}"))
            .bearer_auth("wrong"),
    )
    .await;
    bad_bearer.assert_problem(401, "UNAUTHORIZED");
}

#[tokio::test]
async fn five_wrong_pins_lock_the_session_even_for_the_right_pin() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let wrong = if pin == "999999" { "999998" } else { "999999" };
    for _ in 0..5 {
        app.guest_session(&session, wrong)
            .await
            .assert_problem(401, "PIN_INVALID");
    }
    let locked = app.guest_session(&session, &pin).await;
    locked.assert_problem(429, "PIN_LOCKED");
    let retry: u64 = locked.header("retry-after").unwrap().parse().unwrap();
    assert!((299..=300).contains(&retry), "{retry}");
    assert_eq!(
        app.staff_session(&session).await.status,
        200,
        "staff are not locked out"
    );
}

#[tokio::test]
async fn retry_after_counts_down_by_the_servers_clock() {
    let app = TestApp::spawn_with(|s| {
        s.pin_max_failures = 1;
        s.pin_lockout_secs = 60;
    })
    .await;
    let shop = app.shop().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let wrong = if pin == "999999" { "999998" } else { "999999" };
    app.guest_session(&session, wrong)
        .await
        .assert_problem(401, "PIN_INVALID");
    let locked = app.guest_session(&session, &pin).await;
    locked.assert_problem(429, "PIN_LOCKED");
    assert_eq!(locked.header("retry-after"), Some("60"));
    app.clock.skip(chrono::Duration::seconds(45));
    let later = app.guest_session(&session, &pin).await;
    later.assert_problem(429, "PIN_LOCKED");
    assert_eq!(later.header("retry-after"), Some("15"));
}

#[tokio::test]
async fn the_lock_lapses_after_the_lockout_time() {
    let app = TestApp::spawn_with(|s| {
        s.pin_max_failures = 2;
        s.pin_lockout_secs = 1;
    })
    .await;
    let shop = app.shop().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let wrong = if pin == "999999" { "999998" } else { "999999" };
    for _ in 0..2 {
        app.guest_session(&session, wrong)
            .await
            .assert_problem(401, "PIN_INVALID");
    }
    app.guest_session(&session, &pin)
        .await
        .assert_problem(429, "PIN_LOCKED");
    app.clock.skip(chrono::Duration::seconds(1));
    app.guest_session(&session, &pin).await.assert_status(200);
}

#[tokio::test]
async fn a_right_pin_resets_the_failure_count() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let wrong = if pin == "999999" { "999998" } else { "999999" };
    for _ in 0..4 {
        app.guest_session(&session, wrong)
            .await
            .assert_problem(401, "PIN_INVALID");
    }
    app.guest_session(&session, &pin).await.assert_status(200);
    for _ in 0..4 {
        app.guest_session(&session, wrong)
            .await
            .assert_problem(401, "PIN_INVALID");
    }
    app.guest_session(&session, &pin).await.assert_status(200);
}

#[tokio::test]
async fn simultaneous_guesses_get_exactly_the_allowed_tries() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let guesses: Vec<String> = (0..30)
        .map(|n| format!("{:06}", n))
        .filter(|guess| *guess != pin)
        .take(25)
        .collect();
    let replies = join_all(
        guesses
            .iter()
            .map(|guess| app.guest_session(&session, guess)),
    )
    .await;
    let invalid = replies
        .iter()
        .filter(|r| r.body["code"] == "PIN_INVALID")
        .count();
    let locked = replies
        .iter()
        .filter(|r| r.body["code"] == "PIN_LOCKED")
        .count();
    assert_eq!((invalid, locked), (5, 20));
}

#[tokio::test]
async fn sessions_are_listed_newest_first_with_filters() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let (first, _) = app.table(&shop, "T1").await;
    let (second, _) = app.table(&shop, "T2").await;
    let (third, third_pin) = app.table(&shop, "T3").await;
    app.checkout(&second).await.assert_status(200);

    let ids = |reply: &crate::helpers::Reply| -> Vec<String> {
        reply.body["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["sessionId"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        ids(&app.list_sessions(&shop, "").await),
        [third.clone(), second.clone(), first.clone()]
    );
    assert_eq!(
        ids(&app.list_sessions(&shop, "?status=active").await),
        [third.clone(), first.clone()]
    );
    assert_eq!(
        ids(&app.list_sessions(&shop, "?status=closed").await),
        vec![second.clone()]
    );
    assert_eq!(
        ids(&app.list_sessions(&shop, "?limit=1").await),
        vec![third.clone()]
    );
    let all = app.list_sessions(&shop, "").await;
    assert_eq!(all.body["sessions"][0]["pin"], third_pin, "staff see PINs");
    assert_eq!(
        app.list_sessions(&shop, "?status=open")
            .await
            .invalid_fields(),
        ["status"]
    );
    assert_eq!(
        app.list_sessions(&shop, "?limit=0").await.invalid_fields(),
        ["limit"]
    );
    app.list_sessions(&Uuid::new_v4().to_string(), "")
        .await
        .assert_problem(404, "NOT_FOUND");
}

#[tokio::test]
async fn checkout_closes_the_session_and_repeats_the_same_bill() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let (session, pin) = app.table(&shop, "T4").await;
    let bill = app.checkout(&session).await;
    let body = bill.assert_status(200).clone();
    assert_eq!(body["sessionId"], session);
    assert_eq!(body["tableLabel"], "T4");
    assert_eq!(body["status"], "closed");
    assert_eq!(body["orders"], json!([]));
    assert_eq!(body["total"], 0);
    assert!(body["closedAt"].is_string());

    tokio::time::sleep(Duration::from_millis(5)).await;
    assert_eq!(
        app.checkout(&session).await.body,
        body,
        "the same bill again"
    );
    let guest = app.guest_session(&session, &pin).await;
    assert_eq!(guest.assert_status(200)["status"], "closed");
    assert_eq!(guest.body["closedAt"], body["closedAt"]);
}
