//! `Idempotency-Key` on staff POSTs: a retry replays the first answer and
//! the write happens once; keys are scoped to the operation and its ids
//! (whatever their case in the path); only successes are stored.

use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::helpers::{OrderBody, Reply, TestApp, key};

/// Asserts that `again` replays `first` exactly: same status, headers that
/// matter, and body, byte for byte.
#[track_caller]
fn assert_replays(first: &Reply, again: &Reply) {
    assert!(
        (200..300).contains(&first.status),
        "unexpected reply: {}",
        first.text
    );
    assert_eq!(first.header("idempotent-replayed"), None, "{}", first.text);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.status, first.status);
    assert_eq!(again.body, first.body);
    assert_eq!(again.text, first.text);
    assert_eq!(again.header("location"), first.header("location"));
    assert_eq!(again.header("content-type"), first.header("content-type"));
}

fn restock_path(shop: &str, item: &str) -> String {
    format!("/api/v1/shops/{shop}/inventory/{item}/restock")
}

fn sessions_path(shop: &str) -> String {
    format!("/api/v1/shops/{shop}/sessions")
}

#[tokio::test]
async fn a_repeated_shop_creation_creates_one_shop() {
    let app = TestApp::spawn().await;
    let key = key();
    let body = json!({"name": "Sakura", "currency": "JPY", "timezone": "Asia/Tokyo"});
    let first = app
        .staff_post("/api/v1/shops", Some(&key), Some(&body))
        .await;
    let again = app
        .staff_post("/api/v1/shops", Some(&key), Some(&body))
        .await;
    first.assert_status(201);
    assert_replays(&first, &again);
    assert_eq!(app.list_shops().await.body["shops"], json!([first.body]));

    let other = json!({"name": "Sakura 2", "currency": "JPY", "timezone": "Asia/Tokyo"});
    app.staff_post("/api/v1/shops", Some(&key), Some(&other))
        .await
        .assert_problem(422, "IDEMPOTENCY_KEY_REUSED");
    app.staff_post("/api/v1/shops", Some("not-a-key"), Some(&other))
        .await
        .assert_problem(400, "IDEMPOTENCY_KEY_INVALID");
    let quoted = format!("\"{}\"", key.to_uppercase());
    let third = app
        .staff_post("/api/v1/shops", Some(&quoted), Some(&body))
        .await;
    assert_replays(&first, &third);
    assert_eq!(
        app.list_shops().await.body["shops"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_repeated_table_opening_opens_one_session() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let key = key();
    let body = json!({"tableLabel": "T4"});
    let path = sessions_path(&shop);
    let first = app.staff_post(&path, Some(&key), Some(&body)).await;
    let again = app.staff_post(&path, Some(&key), Some(&body)).await;
    first.assert_status(201);
    assert_replays(&first, &again);
    let sessions = app.list_sessions(&shop, "").await.body["sessions"].clone();
    assert_eq!(sessions.as_array().unwrap().len(), 1);
    assert_eq!(sessions[0]["sessionId"], first.body["sessionId"]);
    assert_eq!(sessions[0]["pin"], first.body["pin"]);

    app.staff_post(&path, Some(&key), Some(&json!({"tableLabel": "T5"})))
        .await
        .assert_problem(422, "IDEMPOTENCY_KEY_REUSED");
    app.staff_post(
        &path,
        Some("{not-a-key}"),
        Some(&json!({"tableLabel": "T5"})),
    )
    .await
    .assert_problem(400, "IDEMPOTENCY_KEY_INVALID");
    // Without the key, the same request is a new one: the table is taken.
    app.staff_post(&path, None, Some(&body))
        .await
        .assert_problem(409, "TABLE_OCCUPIED");
    assert_eq!(
        app.list_sessions(&shop, "").await.body["sessions"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_repeated_restock_adds_once() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.beer, json!({"stock": 5}))
        .await
        .assert_status(200);
    let key = key();
    let path = restock_path(&shop, &ids.beer);
    let body = json!({"quantity": 3});
    let first = app.staff_post(&path, Some(&key), Some(&body)).await;
    assert_eq!(first.assert_status(200)["stock"], 8);
    let again = app.staff_post(&path, Some(&key), Some(&body)).await;
    assert_replays(&first, &again);
    assert_eq!(app.stock_entry(&shop, &ids.beer).await["stock"], 8);

    app.staff_post(&path, Some(&key), Some(&json!({"quantity": 4})))
        .await
        .assert_problem(422, "IDEMPOTENCY_KEY_REUSED");
    app.staff_post(&path, Some("3"), Some(&body))
        .await
        .assert_problem(400, "IDEMPOTENCY_KEY_INVALID");
    let restocks: Vec<_> = app
        .stock_log(&shop)
        .await
        .into_iter()
        .filter(|e| e["operation"] == "restock")
        .map(|e| e["delta"].clone())
        .collect();
    assert_eq!(restocks, [json!(3)]);
    assert_eq!(app.stock_entry(&shop, &ids.beer).await["stock"], 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_simultaneous_restocks_with_one_key_add_once() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.beer, json!({"stock": 0}))
        .await
        .assert_status(200);
    let key = key();
    let path = restock_path(&shop, &ids.beer);
    let body = json!({"quantity": 7});
    let replies = join_all((0..20).map(|_| app.staff_post(&path, Some(&key), Some(&body)))).await;
    let first: Vec<_> = replies.iter().filter(|r| !r.replayed()).collect();
    assert_eq!(first.len(), 1, "exactly one first answer");
    assert_eq!(first[0].assert_status(200)["stock"], 7);
    for reply in replies.iter().filter(|r| r.replayed()) {
        assert_replays(first[0], reply);
    }
    assert_eq!(app.stock_entry(&shop, &ids.beer).await["stock"], 7);
    let restocks = app
        .stock_log(&shop)
        .await
        .into_iter()
        .filter(|e| e["operation"] == "restock")
        .count();
    assert_eq!(restocks, 1);
}

#[tokio::test]
async fn a_repeated_checkout_replays_the_bill() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    app.place_order(
        &session,
        &pin,
        "phone-1",
        &key(),
        &OrderBody::new().line(&ids.soup, 2).json(),
    )
    .await
    .assert_order(false);
    let key = key();
    let path = format!("/api/v1/sessions/{session}/checkout");
    let first = app.staff_post(&path, Some(&key), None).await;
    assert_eq!(first.assert_status(200)["total"], 600);
    let again = app.staff_post(&path, Some(&key), None).await;
    assert_replays(&first, &again);
    app.staff_post(&path, Some("nope"), None)
        .await
        .assert_problem(400, "IDEMPOTENCY_KEY_INVALID");
    assert_eq!(
        app.list_sessions(&shop, "?status=closed").await.body["sessions"][0]["closedAt"],
        first.body["closedAt"]
    );
}

#[tokio::test]
async fn a_repeated_staff_order_places_one_order() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.beer, json!({"stock": 10}))
        .await
        .assert_status(200);
    let (session, _) = app.table(&shop, "T1").await;
    let key = key();
    let body = OrderBody::new().line(&ids.beer, 2).json();
    let first = app.staff_order(&session, Some(&key), &body).await;
    let order = first.assert_order(false);
    let again = app.staff_order(&session, Some(&key), &body).await;
    assert_eq!(again.assert_order(true), order);
    assert_eq!(
        again.text,
        first
            .text
            .replace(r#""idempotentReplay":false"#, r#""idempotentReplay":true"#)
    );
    assert_eq!(app.orders_of(&session).await, [order]);
    assert_eq!(app.stock_entry(&shop, &ids.beer).await["stock"], 8);

    app.staff_order(
        &session,
        Some(&key),
        &OrderBody::new().line(&ids.beer, 3).json(),
    )
    .await
    .assert_problem(422, "IDEMPOTENCY_KEY_REUSED");
    app.staff_order(&session, Some("not-a-key"), &body)
        .await
        .assert_problem(400, "IDEMPOTENCY_KEY_INVALID");
    assert_eq!(app.orders_of(&session).await.len(), 1);
}

#[tokio::test]
async fn refused_writes_are_not_stored_against_their_key() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;

    // Restock of an untracked item: refused, then done once it is tracked.
    let restock_key = key();
    let path = restock_path(&shop, &ids.soup);
    let body = json!({"quantity": 4});
    app.staff_post(&path, Some(&restock_key), Some(&body))
        .await
        .assert_problem(409, "STOCK_NOT_TRACKED");
    app.set_inventory(&shop, &ids.soup, json!({"stock": 1}))
        .await
        .assert_status(200);
    let done = app.staff_post(&path, Some(&restock_key), Some(&body)).await;
    assert_eq!(done.assert_status(200)["stock"], 5);
    assert!(!done.replayed());

    // Opening an occupied table: refused, then done after checkout.
    let (occupant, _) = app.table(&shop, "T1").await;
    let open_key = key();
    let table = json!({"tableLabel": "T1"});
    app.staff_post(&sessions_path(&shop), Some(&open_key), Some(&table))
        .await
        .assert_problem(409, "TABLE_OCCUPIED");
    app.checkout(&occupant).await.assert_status(200);
    let opened = app
        .staff_post(&sessions_path(&shop), Some(&open_key), Some(&table))
        .await;
    assert_ne!(opened.assert_status(201)["sessionId"], json!(occupant));
    assert!(!opened.replayed());

    // A staff order short of stock: refused, then placed after a restock.
    let session = opened.body["sessionId"].as_str().unwrap().to_owned();
    let order_key = key();
    let order = OrderBody::new().line(&ids.soup, 6).json();
    app.staff_order(&session, Some(&order_key), &order)
        .await
        .assert_problem(409, "OUT_OF_STOCK");
    app.restock(&shop, &ids.soup, 1).await.assert_status(200);
    let placed = app.staff_order(&session, Some(&order_key), &order).await;
    placed.assert_order(false);
    assert_eq!(app.stock_entry(&shop, &ids.soup).await["stock"], 0);
}

#[tokio::test]
async fn keys_are_scoped_to_the_path() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    for item in [&ids.beer, &ids.soup] {
        app.set_inventory(&shop, item, json!({"stock": 0}))
            .await
            .assert_status(200);
    }
    let key = key();
    let body = json!({"quantity": 2});
    let beer = app
        .staff_post(&restock_path(&shop, &ids.beer), Some(&key), Some(&body))
        .await;
    let soup = app
        .staff_post(&restock_path(&shop, &ids.soup), Some(&key), Some(&body))
        .await;
    for reply in [&beer, &soup] {
        assert_eq!(reply.assert_status(200)["stock"], 2);
        assert!(!reply.replayed());
    }
    let opened = app
        .staff_post(
            &sessions_path(&shop),
            Some(&key),
            Some(&json!({"tableLabel": "T1"})),
        )
        .await;
    opened.assert_status(201);
    assert!(!opened.replayed());
    let (other_session, _) = app.table(&shop, "T2").await;
    let session = opened.body["sessionId"].as_str().unwrap().to_owned();

    // One key, two sessions' checkouts: two bills.
    for id in [&session, &other_session] {
        let path = format!("/api/v1/sessions/{id}/checkout");
        let bill = app.staff_post(&path, Some(&key), None).await;
        assert_eq!(bill.assert_status(200)["sessionId"], json!(id));
        assert!(!bill.replayed());
    }
    let (t3, pin3) = app.table(&shop, "T3").await;
    let (t4, _) = app.table(&shop, "T4").await;
    let soup_order = OrderBody::new().line(&ids.soup, 1).json();
    app.restock(&shop, &ids.soup, 1).await.assert_status(200);
    // A guest's key and staff's key are different keys, as are two sessions'.
    let guest = app
        .place_order(&t3, &pin3, "phone-1", &key, &soup_order)
        .await;
    let staff = app.staff_order(&t3, Some(&key), &soup_order).await;
    let elsewhere = app.staff_order(&t4, Some(&key), &soup_order).await;
    let orders: Vec<Value> = [guest, staff, elsewhere]
        .iter()
        .map(|r| r.assert_order(false))
        .collect();
    assert_eq!(orders[0]["source"], "guest");
    assert_eq!(orders[1]["source"], "staff");
    assert_eq!(orders[2]["sessionId"], json!(t4));
    assert_eq!(app.orders_of(&t3).await.len(), 2);
    assert_eq!(app.orders_of(&t4).await.len(), 1);
    assert_eq!(app.stock_entry(&shop, &ids.soup).await["stock"], 0);
}

#[tokio::test]
async fn a_key_resent_with_the_ids_in_another_case_replays() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.beer, json!({"stock": 15}))
        .await
        .assert_status(200);
    let restock_key = key();
    let body = json!({"quantity": 5});
    let first = app
        .staff_post(
            &restock_path(&shop, &ids.beer),
            Some(&restock_key),
            Some(&body),
        )
        .await;
    assert_eq!(first.assert_status(200)["stock"], 20);
    let shouted = restock_path(&shop.to_uppercase(), &ids.beer.to_uppercase());
    let again = app
        .staff_post(&shouted, Some(&restock_key), Some(&body))
        .await;
    assert_replays(&first, &again);
    assert_eq!(app.stock_entry(&shop, &ids.beer).await["stock"], 20);

    let (session, _) = app.table(&shop, "T1").await;
    let order_key = key();
    let order = OrderBody::new().line(&ids.beer, 1).json();
    let placed = app.staff_order(&session, Some(&order_key), &order).await;
    let original = placed.assert_order(false);
    let retried = app
        .staff_order(&session.to_uppercase(), Some(&order_key), &order)
        .await;
    assert_eq!(retried.assert_order(true), original);
    assert_eq!(app.orders_of(&session).await.len(), 1);
    assert_eq!(app.stock_entry(&shop, &ids.beer).await["stock"], 19);
}
