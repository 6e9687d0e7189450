//! Every guest order POST leaves exactly one audit row saying what became
//! of it.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{OrderBody, Reply, TestApp, key, wrong_pin};

/// What an audit row says: code, status, clientId, idempotentReplay, orderId.
fn summary(entry: &Value) -> (String, u64, Value, bool, Value) {
    (
        entry["code"].as_str().unwrap().to_owned(),
        entry["status"].as_u64().unwrap(),
        entry["clientId"].clone(),
        entry["idempotentReplay"].as_bool().unwrap(),
        entry["orderId"].clone(),
    )
}

#[tokio::test]
async fn every_outcome_leaves_exactly_one_audit_row() {
    let app = TestApp::spawn_with(|s| s.client_cooldown_ms = 60_000).await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.beer, json!({"stock": 0}))
        .await
        .assert_status(200);
    let (session, pin) = app.table(&shop, "T1").await;
    let curry = OrderBody::new().line(&ids.curry, 1).json();
    let soup = OrderBody::new().line(&ids.soup, 1).json();
    let first_key = key();
    let mut replies: Vec<Reply> = Vec::new();
    let mut expected = Vec::new();
    let none = Value::Null;

    let accepted = app
        .place_order(&session, &pin, "phone-a", &first_key, &curry)
        .await;
    accepted.assert_order(false);
    let order = json!(accepted.order_id());
    expected.push(("ACCEPTED", 201, json!("phone-a"), false, order.clone()));
    replies.push(accepted);

    let replayed = app
        .place_order(&session, &pin, "phone-a", &first_key, &curry)
        .await;
    replayed.assert_order(true);
    expected.push(("REPLAYED", 201, json!("phone-a"), true, order.clone()));
    replies.push(replayed);

    let duplicate = app
        .place_order(&session, &pin, "phone-a", &key(), &curry)
        .await;
    duplicate.assert_problem(409, "DUPLICATE_PAYLOAD");
    expected.push((
        "DUPLICATE_PAYLOAD",
        409,
        json!("phone-a"),
        false,
        none.clone(),
    ));
    replies.push(duplicate);

    let cooldown = app
        .place_order(&session, &pin, "phone-a", &key(), &soup)
        .await;
    cooldown.assert_problem(429, "COOLDOWN_ACTIVE");
    expected.push((
        "COOLDOWN_ACTIVE",
        429,
        json!("phone-a"),
        false,
        none.clone(),
    ));
    replies.push(cooldown);

    let reused = app
        .place_order(&session, &pin, "phone-a", &first_key, &soup)
        .await;
    reused.assert_problem(422, "IDEMPOTENCY_KEY_REUSED");
    expected.push((
        "IDEMPOTENCY_KEY_REUSED",
        422,
        json!("phone-a"),
        false,
        none.clone(),
    ));
    replies.push(reused);

    let out_of_stock = app
        .place_order(
            &session,
            &pin,
            "phone-b",
            &key(),
            &OrderBody::new().line(&ids.beer, 1).json(),
        )
        .await;
    out_of_stock.assert_problem(409, "OUT_OF_STOCK");
    expected.push(("OUT_OF_STOCK", 409, json!("phone-b"), false, none.clone()));
    replies.push(out_of_stock);

    let invalid = app
        .place_order(
            &session,
            &pin,
            "phone-b",
            &key(),
            &OrderBody::new().line(&ids.soup, 0).json(),
        )
        .await;
    assert_eq!(invalid.invalid_fields(), ["items[0].quantity"]);
    expected.push((
        "VALIDATION_FAILED",
        422,
        json!("phone-b"),
        false,
        none.clone(),
    ));
    replies.push(invalid);

    let unknown_item = app
        .place_order(
            &session,
            &pin,
            "phone-b",
            &key(),
            &OrderBody::new().line(&Uuid::new_v4().to_string(), 1).json(),
        )
        .await;
    unknown_item.assert_problem(422, "UNKNOWN_MENU_ITEM");
    expected.push((
        "UNKNOWN_MENU_ITEM",
        422,
        json!("phone-b"),
        false,
        none.clone(),
    ));
    replies.push(unknown_item);

    let bad_key = app
        .place_order(&session, &pin, "phone-b", "not-a-key", &soup)
        .await;
    bad_key.assert_problem(400, "IDEMPOTENCY_KEY_INVALID");
    expected.push((
        "IDEMPOTENCY_KEY_INVALID",
        400,
        json!("phone-b"),
        false,
        none.clone(),
    ));
    replies.push(bad_key);

    let no_key = TestApp::send(
        app.order_request(&session, Some(&pin), Some("phone-b"), None)
            .json(&soup),
    )
    .await;
    no_key.assert_problem(400, "IDEMPOTENCY_KEY_MISSING");
    expected.push((
        "IDEMPOTENCY_KEY_MISSING",
        400,
        json!("phone-b"),
        false,
        none.clone(),
    ));
    replies.push(no_key);

    let bad_client = app
        .place_order(&session, &pin, "not a client id", &key(), &soup)
        .await;
    bad_client.assert_problem(400, "CLIENT_ID_INVALID");
    expected.push(("CLIENT_ID_INVALID", 400, none.clone(), false, none.clone()));
    replies.push(bad_client);

    let malformed = TestApp::send(
        app.order_request(&session, Some(&pin), Some("phone-b"), Some(&key()))
            .header("Content-Type", "application/json")
            .body("{\"items\": ["),
    )
    .await;
    malformed.assert_problem(400, "MALFORMED_REQUEST");
    expected.push((
        "MALFORMED_REQUEST",
        400,
        json!("phone-b"),
        false,
        none.clone(),
    ));
    replies.push(malformed);

    let wrong = app
        .place_order(&session, wrong_pin(&pin), "phone-b", &key(), &soup)
        .await;
    wrong.assert_problem(401, "PIN_INVALID");
    expected.push(("PIN_INVALID", 401, json!("phone-b"), false, none.clone()));
    replies.push(wrong);

    // An unknown session belongs to no shop's trail.
    app.place_order(&Uuid::new_v4().to_string(), &pin, "phone-b", &key(), &soup)
        .await
        .assert_problem(404, "NOT_FOUND");

    app.checkout(&session).await.assert_status(200);
    let closed = app
        .place_order(&session, &pin, "phone-c", &key(), &soup)
        .await;
    closed.assert_problem(410, "SESSION_CLOSED");
    expected.push(("SESSION_CLOSED", 410, json!("phone-c"), false, none.clone()));
    replies.push(closed);

    let late_retry = app
        .place_order(&session, &pin, "phone-a", &first_key, &curry)
        .await;
    late_retry.assert_order(true);
    expected.push(("REPLAYED", 201, json!("phone-a"), true, order.clone()));
    replies.push(late_retry);

    let entries = app.audit_entries(&shop).await;
    let mut expected: Vec<_> = expected
        .into_iter()
        .map(|(code, status, client, replay, order)| {
            (code.to_owned(), status, client, replay, order)
        })
        .collect();
    expected.reverse();
    assert_eq!(
        entries.iter().map(summary).collect::<Vec<_>>(),
        expected,
        "newest first"
    );
    replies.reverse();
    for (entry, reply) in entries.iter().zip(&replies) {
        assert_eq!(entry["sessionId"], session);
        assert_eq!(
            entry["requestId"].as_str(),
            reply.header("x-request-id"),
            "the row names its request"
        );
        assert!(entry["at"].as_str().unwrap().ends_with('Z'));
    }
    let ats: Vec<chrono::DateTime<chrono::Utc>> = entries
        .iter()
        .map(|e| e["at"].as_str().unwrap().parse().unwrap())
        .collect();
    let mut newest_first = ats.clone();
    newest_first.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(ats, newest_first);
}

#[tokio::test]
async fn the_audit_trail_is_for_staff_and_takes_a_limit() {
    let app = TestApp::spawn_with(|s| s.client_cooldown_ms = 0).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    for n in 1..=3 {
        app.place_order(
            &session,
            &pin,
            "phone-a",
            &key(),
            &OrderBody::new().line(&ids.soup, n).json(),
        )
        .await
        .assert_order(false);
    }
    let two = app.audit(&shop, "?limit=2").await;
    assert_eq!(
        two.assert_status(200)["entries"].as_array().unwrap().len(),
        2
    );
    assert_eq!(app.audit_entries(&shop).await.len(), 3);
    for bad in ["0", "501", "x"] {
        assert_eq!(
            app.audit(&shop, &format!("?limit={bad}"))
                .await
                .invalid_fields(),
            ["limit"]
        );
    }
    let path = format!("/api/v1/shops/{shop}/audit");
    TestApp::send(app.request(Method::GET, &path))
        .await
        .assert_problem(401, "UNAUTHORIZED");
    TestApp::send(app.guest(Method::GET, &path, &pin))
        .await
        .assert_problem(401, "UNAUTHORIZED");
    app.audit(&Uuid::new_v4().to_string(), "")
        .await
        .assert_problem(404, "NOT_FOUND");
    let (other_shop, _) = app.shop_with_menu().await;
    assert_eq!(app.audit_entries(&other_shop).await, Vec::<Value>::new());
}
