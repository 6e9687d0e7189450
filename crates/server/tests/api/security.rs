//! The security rules of SECURITY.md: one table's guests cannot see or touch
//! another's, every staff operation of the published document refuses bad
//! tokens, hostile input never reaches an answer as internal text, and what
//! clients send is checked before it is logged.

use reqwest::Method;
use reqwest::header::HeaderValue;
use serde_json::{Value, json};

use crate::helpers::{OrderBody, Reply, STAFF_TOKEN, TestApp, key};
use crate::sse::SseStream;

/// Everything staff can see of a shop: what a refused request must leave alone.
async fn everything(app: &TestApp, shop: &str, session: &str) -> Value {
    json!({
        "shops": app.list_shops().await.assert_status(200).clone(),
        "catalog": app.get_catalog(shop).await.assert_status(200).clone(),
        "inventory": app.inventory(shop).await.assert_status(200).clone(),
        "sessions": app.list_sessions(shop, "").await.assert_status(200).clone(),
        "orders": app.orders_of(session).await,
        "audit": app.audit_entries(shop).await,
    })
}

#[tokio::test]
async fn a_guest_cannot_read_or_touch_another_tables_session() {
    let app = TestApp::spawn().await;
    let (shop, menu) = app.shop_with_menu().await;
    let (mine, my_pin) = app.table(&shop, "T1").await;
    let (theirs, their_pin) = app.table(&shop, "T2").await;
    let mut my_stream = SseStream::open(app.session_stream(&mine, &my_pin)).await;
    let their_key = key();
    let their_order = app
        .place_order(
            &theirs,
            &their_pin,
            "their-phone",
            &their_key,
            &OrderBody::new().line(&menu.curry, 1).json(),
        )
        .await
        .assert_order(false);
    let their_order_id = their_order["orderId"].as_str().unwrap();

    // My PIN opens nothing of theirs.
    let with_my_pin =
        |method: Method, path: String| app.request(method, &path).header("X-Session-PIN", &my_pin);
    let refusals = [
        with_my_pin(Method::GET, format!("/api/v1/sessions/{theirs}")),
        with_my_pin(Method::GET, format!("/api/v1/sessions/{theirs}/orders")),
        with_my_pin(Method::POST, format!("/api/v1/sessions/{theirs}/orders"))
            .header("Idempotency-Key", key())
            .header("X-Client-Id", "my-phone")
            .json(&OrderBody::new().line(&menu.soup, 1).json()),
        app.request(
            Method::GET,
            &format!("/api/v1/sessions/{theirs}/events?pin={my_pin}"),
        ),
    ];
    for request in refusals {
        TestApp::send(request)
            .await
            .assert_problem(401, "PIN_INVALID");
    }
    // Staff operations on their order take no PIN at all.
    let staff_only = [
        with_my_pin(Method::GET, format!("/api/v1/orders/{their_order_id}")),
        with_my_pin(
            Method::POST,
            format!("/api/v1/orders/{their_order_id}/status"),
        )
        .json(&json!({"status": "cancelled"})),
        with_my_pin(Method::POST, format!("/api/v1/sessions/{theirs}/checkout")),
        with_my_pin(
            Method::POST,
            format!("/api/v1/sessions/{theirs}/staff-orders"),
        )
        .json(&OrderBody::new().line(&menu.soup, 1).json()),
    ];
    for request in staff_only {
        TestApp::send(request)
            .await
            .assert_problem(401, "UNAUTHORIZED");
    }

    // Their key in my session is my own key: a new order of mine, never
    // their receipt.
    let mine_with_their_key = app
        .place_order(
            &mine,
            &my_pin,
            "my-phone",
            &their_key,
            &OrderBody::new().line(&menu.curry, 1).json(),
        )
        .await
        .assert_order(false);
    assert_ne!(mine_with_their_key["orderId"], their_order["orderId"]);
    assert_eq!(mine_with_their_key["sessionId"], mine.as_str());
    assert_eq!(app.orders_of(&theirs).await.len(), 1);
    let my_history = app.guest_orders(&mine, &my_pin, "").await;
    let my_history = my_history.assert_status(200)["orders"].as_array().unwrap();
    assert_eq!(my_history.len(), 1);
    assert_eq!(my_history[0]["orderId"], mine_with_their_key["orderId"]);

    // My stream carries my order and nothing of theirs.
    let mut seen = Vec::new();
    loop {
        let event = my_stream.next().await;
        let done = event.event == "order.placed";
        seen.push(event);
        if done {
            break;
        }
    }
    for event in &seen {
        assert_ne!(event.data["sessionId"], theirs.as_str(), "{:?}", event.data);
        assert_ne!(event.data["orderId"], their_order_id, "{:?}", event.data);
    }
    assert_eq!(
        seen.last().unwrap().data["orderId"],
        mine_with_their_key["orderId"]
    );
    // Their order is untouched.
    let theirs_now = app.get_order(their_order_id).await;
    assert_eq!(theirs_now.assert_status(200)["status"], "placed");
}

/// Every way a staff token can be missing, wrong or malformed.
fn bad_authorizations() -> Vec<Option<HeaderValue>> {
    let long = format!("Bearer {}", "x".repeat(4000));
    let near_misses = [
        "Bearer wrong-token".to_owned(),
        format!("Bearer {}", &STAFF_TOKEN[..STAFF_TOKEN.len() - 1]),
        format!("Bearer {STAFF_TOKEN}x"),
        format!("Bearer {}", STAFF_TOKEN.to_uppercase()),
        format!("Basic {STAFF_TOKEN}"),
        STAFF_TOKEN.to_owned(),
        "Bearer".to_owned(),
        "Bearer ".to_owned(),
        "123456".to_owned(),
        long,
    ];
    let mut values: Vec<Option<HeaderValue>> = near_misses
        .iter()
        .map(|v| Some(HeaderValue::from_str(v).unwrap()))
        .collect();
    values.push(Some(HeaderValue::from_bytes(b"Bearer \xff\xfe").unwrap()));
    values.push(None);
    values
}

/// The operations anyone may call.
const PUBLIC: [(&str, &str); 9] = [
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/api/v1/openapi.json"),
    ("get", "/api/v1/shops/{shopId}"),
    ("get", "/api/v1/shops/{shopId}/menu"),
    ("get", "/api/v1/shops/{shopId}/wait"),
    ("get", "/images/{imageId}"),
    ("get", "/api/v1/tables/{code}"),
    // Signing in is how a credential is had.
    ("post", "/api/v1/auth/login"),
];

#[tokio::test]
async fn every_staff_operation_refuses_missing_wrong_and_malformed_tokens() {
    let app = TestApp::spawn().await;
    let (shop, menu) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let order = app
        .place_order(
            &session,
            &pin,
            "phone",
            &key(),
            &OrderBody::new().line(&menu.soup, 1).json(),
        )
        .await
        .order_id();
    let document = app.get("/api/v1/openapi.json").await;
    let paths = document.assert_status(200)["paths"]
        .as_object()
        .unwrap()
        .clone();
    let before = everything(&app, &shop, &session).await;

    let mut staff_operations = 0;
    for (template, item) in &paths {
        for (method, operation) in item.as_object().unwrap() {
            let alternatives = operation["security"].as_array();
            if !alternatives.is_some_and(|a| a.iter().any(|a| a.get("staffToken").is_some())) {
                // Only these are open to anyone; any other operation that
                // documents no staff token would be a hole (or a wrong document).
                let guests_only = |a: &Vec<Value>| {
                    a.iter()
                        .all(|a| a.get("sessionPin").is_some() || a.get("guestToken").is_some())
                };
                let open_to_all = PUBLIC.contains(&(method.as_str(), template.as_str()))
                    || alternatives.is_some_and(guests_only);
                assert!(open_to_all, "{method} {template} asks for no credentials");
                continue;
            }
            staff_operations += 1;
            let path = template
                .replace("{shopId}", &shop)
                .replace("{sessionId}", &session)
                .replace("{orderId}", &order)
                .replace("{itemId}", &menu.soup);
            let method: Method = method.to_uppercase().parse().unwrap();
            for authorization in bad_authorizations() {
                let mut request = app
                    .request(method.clone(), &path)
                    .header("Idempotency-Key", key());
                if operation.get("requestBody").is_some() {
                    request = request.json(&json!({}));
                }
                if let Some(value) = &authorization {
                    request = request.header("Authorization", value.clone());
                }
                let reply = TestApp::send(request).await;
                // Operations guests may also call judge the missing PIN.
                let code = reply.body["code"].as_str().unwrap_or_default();
                assert!(
                    reply.status == 401 && ["UNAUTHORIZED", "PIN_INVALID"].contains(&code),
                    "{method} {template} with {authorization:?}: {} {}",
                    reply.status,
                    reply.text
                );
            }
        }
    }
    assert!(
        staff_operations >= 15,
        "only {staff_operations} staff operations documented"
    );
    // The event stream's query-string token is judged the same way.
    for token in ["wrong-token", "", &STAFF_TOKEN[1..]] {
        let path = format!("/api/v1/shops/{shop}/events?access_token={token}");
        TestApp::send(app.request(Method::GET, &path))
            .await
            .assert_problem(401, "UNAUTHORIZED");
    }
    assert_eq!(everything(&app, &shop, &session).await, before);
}

/// Words that would mean an answer carries internals: the engine, the query
/// or a panic.
const INTERNALS: [&str; 10] = [
    "sqlite",
    "postgres",
    "sqlx",
    "rusqlite",
    "select ",
    "insert ",
    "panicked",
    "src/",
    "constraint",
    "syntax error",
];

#[track_caller]
fn assert_no_internals(what: &str, reply: &Reply) {
    assert!(
        reply.status < 500,
        "{what}: {} {}",
        reply.status,
        reply.text
    );
    let text = reply.text.to_lowercase();
    for word in INTERNALS {
        assert!(
            !text.contains(word),
            "{what} answered with {word:?}: {}",
            reply.text
        );
    }
}

#[tokio::test]
async fn hostile_input_is_refused_or_stored_verbatim_never_answered_with_internals() {
    let app = TestApp::spawn().await;
    let (shop, menu) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let injection = "'); drop table orders; --";

    // SQL in a field is a name like any other, kept to the byte.
    let opened = app.open_session(&shop, injection).await;
    assert_eq!(opened.assert_status(201)["tableLabel"], injection);
    let note = OrderBody::new().line(&menu.soup, 1).note(injection).json();
    let placed = app
        .place_order(&session, &pin, "phone", &key(), &note)
        .await;
    assert_eq!(placed.assert_order(false)["note"], injection);

    let path_ids = [
        "'%20or%201=1--",
        "1;select%20pg_sleep(5)",
        "%00",
        "..%2F..%2Fetc%2Fpasswd",
        &"9".repeat(400),
    ];
    for id in path_ids {
        for path in [
            format!("/api/v1/shops/{id}/menu"),
            format!("/api/v1/sessions/{id}/orders"),
            format!("/api/v1/orders/{id}"),
        ] {
            let reply =
                TestApp::send(app.staff(Method::GET, &path).header("X-Session-PIN", &pin)).await;
            assert_no_internals(&path, &reply);
            assert!(reply.status >= 400, "{path}: {}", reply.status);
        }
    }
    let bodies: Vec<(&str, Vec<u8>)> = vec![
        (
            "a NUL in a name",
            br#"{"tableLabel": "T\u0000 9"}"#.to_vec(),
        ),
        ("invalid UTF-8", b"{\"tableLabel\": \"\xff\xfe\"}".to_vec()),
        ("a huge number", br#"{"tableLabel": 1e400}"#.to_vec()),
        (
            "deep nesting",
            format!("{}{}", "[".repeat(5000), "]".repeat(5000)).into_bytes(),
        ),
        ("a truncated document", br#"{"tableLabel": "#.to_vec()),
        (
            "an escape sequence",
            br#"{"tableLabel": "\u001b[31mred"}"#.to_vec(),
        ),
    ];
    for (what, body) in bodies {
        let reply = TestApp::send(
            app.staff(Method::POST, &format!("/api/v1/shops/{shop}/sessions"))
                .header("Content-Type", "application/json")
                .body(body),
        )
        .await;
        assert_no_internals(what, &reply);
        assert!([400, 422].contains(&reply.status), "{what}: {}", reply.text);
    }
    let hostile_orders = [
        json!({"items": [{"menuItemId": menu.soup, "quantity": 1e30}]}),
        json!({"items": [{"menuItemId": menu.soup, "quantity": -1}]}),
        json!({"items": [{"menuItemId": "'; drop table stock; --", "quantity": 1}]}),
        json!({"items": [{"menuItemId": menu.soup, "quantity": 1}], "note": "a\u{0000}b"}),
    ];
    for body in hostile_orders {
        let reply = app
            .place_order(&session, &pin, "phone-2", &key(), &body)
            .await;
        assert_no_internals(&body.to_string(), &reply);
        assert!([400, 422].contains(&reply.status), "{body}: {}", reply.text);
    }
    assert_eq!(app.orders_of(&session).await.len(), 1);
}

#[tokio::test]
async fn client_request_ids_are_kept_only_when_they_are_safe_to_log() {
    let app = TestApp::spawn().await;
    let with_id = |id: HeaderValue| {
        app.request(Method::GET, "/healthz")
            .header("x-request-id", id)
    };
    let safe = "checkout-7f3a.retry:2_of_3";
    let reply = TestApp::send(with_id(HeaderValue::from_static(safe))).await;
    assert_eq!(reply.header("x-request-id"), Some(safe));

    let unsafe_ids = [
        HeaderValue::from_str(&"a".repeat(65)).unwrap(),
        HeaderValue::from_static("two words"),
        HeaderValue::from_static("quote\"and=equals"),
        HeaderValue::from_static("level=error msg=forged"),
        HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap(),
    ];
    for id in unsafe_ids {
        let reply = TestApp::send(with_id(id.clone())).await;
        let given = reply.header("x-request-id").unwrap_or_default();
        assert_ne!(given.as_bytes(), id.as_bytes());
        assert!(
            uuid::Uuid::parse_str(given).is_ok(),
            "{given:?} is not a fresh id"
        );
    }
    // A rejected identity never reaches the store either.
    let (shop, menu) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let body = OrderBody::new().line(&menu.soup, 1).json();
    for client in ["phone\tlevel=error", &"p".repeat(65), "phone 2", ""] {
        let reply = app.place_order(&session, &pin, client, &key(), &body).await;
        reply.assert_problem(400, "CLIENT_ID_INVALID");
    }
    for bad_key in ["not-a-uuid", "00000000-0000-0000-0000-000000000000\tx"] {
        let reply = app
            .place_order(&session, &pin, "phone", bad_key, &body)
            .await;
        reply.assert_problem(400, "IDEMPOTENCY_KEY_INVALID");
    }
    assert!(app.orders_of(&session).await.is_empty());
}

#[tokio::test]
async fn an_empty_token_is_never_a_credential() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let stream = format!("/api/v1/shops/{shop}/events");
    for request in [
        app.request(
            Method::GET,
            &format!("{stream}?access_token=&lastEventId=0"),
        ),
        app.request(Method::GET, &format!("{stream}?access_token=%20")),
        app.request(Method::GET, &stream)
            .header("Authorization", "Bearer "),
        app.request(Method::GET, "/api/v1/shops")
            .header("Authorization", "Bearer"),
        app.request(Method::GET, "/api/v1/shops")
            .header("Authorization", "Bearer    "),
    ] {
        TestApp::send(request)
            .await
            .assert_problem(401, "UNAUTHORIZED");
    }
}

#[tokio::test]
async fn hidden_formatting_characters_are_refused_in_notes_names_and_labels() {
    let app = TestApp::spawn().await;
    let (shop, menu) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    for note in [
        "no nuts\u{202e}stun",
        "zero\u{200b}width",
        "\u{2066}isolate\u{2069}",
    ] {
        let order = OrderBody::new().line(&menu.soup, 1).note(note).json();
        let refused = app
            .place_order(&session, &pin, "phone", &key(), &order)
            .await;
        refused.assert_problem(422, "VALIDATION_FAILED");
        assert_eq!(refused.invalid_fields(), ["note"]);
    }
    let label = TestApp::send(
        app.staff(Method::POST, &format!("/api/v1/shops/{shop}/sessions"))
            .json(&json!({"tableLabel": "T\u{200d}2"})),
    )
    .await;
    label.assert_problem(422, "VALIDATION_FAILED");
    assert_eq!(label.invalid_fields(), ["tableLabel"]);
    let mut catalog = menu.catalog();
    catalog["items"][0]["name"] = json!("Curry\u{feff}");
    let refused = app.put_catalog(&shop, catalog).await;
    refused.assert_problem(422, "VALIDATION_FAILED");
    assert_eq!(refused.invalid_fields(), ["items[0].name"]);

    // Nothing was stored; a newline in a note is still fine.
    assert!(app.orders_of(&session).await.is_empty());
    let multiline = OrderBody::new()
        .line(&menu.soup, 1)
        .note("no onions\nextra spicy")
        .json();
    app.place_order(&session, &pin, "phone", &key(), &multiline)
        .await
        .assert_order(false);
}
