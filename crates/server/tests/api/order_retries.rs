//! Retries at the edges: a key that is still in flight, one raced with
//! different bodies, one whose first attempt was refused, one that expired,
//! and orders racing the checkout.

use std::collections::BTreeSet;

use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::helpers::{OrderBody, TestApp, key};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn simultaneous_requests_with_one_key_and_different_bodies_place_one_order() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let key = key();
    let bodies: Vec<Value> = (1..=10)
        .map(|n| OrderBody::new().line(&ids.soup, n).json())
        .collect();
    let replies = join_all(
        bodies
            .iter()
            .map(|body| app.place_order(&session, &pin, "phone-1", &key, body)),
    )
    .await;
    let placed: Vec<_> = replies.iter().filter(|r| r.status == 201).collect();
    assert_eq!(placed.len(), 1, "one body wins the key");
    let order = placed[0].assert_order(false);
    for reply in replies.iter().filter(|r| r.status != 201) {
        reply.assert_problem(422, "IDEMPOTENCY_KEY_REUSED");
    }
    assert_eq!(app.orders_of(&session).await, [order]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_retry_that_cannot_wait_for_its_original_is_told_to_retry() {
    let app = TestApp::spawn_with(|s| s.inflight_wait_ms = 0).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let key = key();
    let body = OrderBody::new().line(&ids.curry, 1).json();
    let replies =
        join_all((0..30).map(|_| app.place_order(&session, &pin, "phone-1", &key, &body))).await;
    let mut orders = BTreeSet::new();
    let mut in_progress = 0;
    for reply in &replies {
        if reply.status == 201 {
            orders.insert(reply.order_id());
        } else {
            reply.assert_problem(409, "REQUEST_IN_PROGRESS");
            assert_eq!(reply.header("retry-after"), Some("1"));
            in_progress += 1;
        }
    }
    assert_eq!(orders.len(), 1, "every success is the same order");
    assert_eq!(
        replies
            .iter()
            .filter(|r| r.status == 201 && !r.replayed())
            .count(),
        1
    );
    // Retrying later replays the order.
    let retry = app
        .place_order(&session, &pin, "phone-1", &key, &body)
        .await;
    retry.assert_order(true);
    assert!(orders.contains(&retry.order_id()));
    assert_eq!(app.orders_of(&session).await.len(), 1);
    let audited = app
        .audit_entries(&shop)
        .await
        .iter()
        .filter(|e| e["code"] == "REQUEST_IN_PROGRESS")
        .map(|e| (e["status"].clone(), e["clientId"].clone()))
        .collect::<Vec<_>>();
    assert_eq!(audited, vec![(json!(409), json!("phone-1")); in_progress]);
}

#[tokio::test]
async fn a_refused_order_leaves_its_key_free_for_a_corrected_retry() {
    let app = TestApp::spawn_with(|s| s.client_cooldown_ms = 0).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let place = |key: &str, body: Value| {
        let (app, session, pin, key) = (&app, &session, &pin, key.to_owned());
        async move { app.place_order(session, pin, "phone-1", &key, &body).await }
    };

    let invalid_key = key();
    place(&invalid_key, OrderBody::new().line(&ids.soup, 0).json())
        .await
        .assert_problem(422, "VALIDATION_FAILED");
    place(&invalid_key, OrderBody::new().line(&ids.soup, 1).json())
        .await
        .assert_order(false);

    let unknown_key = key();
    place(&unknown_key, OrderBody::new().line(&ids.cheese, 1).json())
        .await
        .assert_problem(422, "UNKNOWN_MENU_ITEM");
    place(&unknown_key, OrderBody::new().line(&ids.curry, 1).json())
        .await
        .assert_order(false);

    let duplicate_key = key();
    let duplicate = place(&duplicate_key, OrderBody::new().line(&ids.curry, 1).json()).await;
    duplicate.assert_problem(409, "DUPLICATE_PAYLOAD");
    let repeat = place(
        &duplicate_key,
        OrderBody::new().line(&ids.curry, 1).allow_repeat().json(),
    )
    .await;
    repeat.assert_order(false);
    assert_ne!(repeat.body["orderId"], duplicate.body["originalOrderId"]);
    assert_eq!(app.orders_of(&session).await.len(), 3);
}

#[tokio::test]
async fn an_expired_key_is_a_new_key() {
    let app = TestApp::spawn_with(|s| {
        s.idempotency_ttl_secs = 1;
        s.duplicate_window_secs = 0;
        s.client_cooldown_ms = 0;
    })
    .await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let key = key();
    let body = OrderBody::new().line(&ids.soup, 1).json();
    let first = app
        .place_order(&session, &pin, "phone-1", &key, &body)
        .await
        .assert_order(false);
    app.clock.skip(chrono::Duration::seconds(1));
    let later = app
        .place_order(&session, &pin, "phone-1", &key, &body)
        .await
        .assert_order(false);
    assert_ne!(later["orderId"], first["orderId"]);
    assert_eq!(app.orders_of(&session).await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn orders_racing_the_checkout_are_on_the_bill_or_refused() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let body = OrderBody::new().line(&ids.beer, 1).json();
    let guests: Vec<(String, String)> = (0..20).map(|n| (format!("guest-{n}"), key())).collect();
    let orders = join_all(
        guests
            .iter()
            .map(|(client, key)| app.place_order(&session, &pin, client, key, &body)),
    );
    let (replies, bill) = tokio::join!(orders, app.checkout(&session));
    let bill = bill.assert_status(200).clone();

    let mut placed = Vec::new();
    for reply in &replies {
        if reply.status == 201 {
            placed.push(reply.assert_order(false));
        } else {
            reply.assert_problem(410, "SESSION_CLOSED");
        }
    }
    let billed: BTreeSet<_> = bill["orders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["orderId"].as_str().unwrap().to_owned())
        .collect();
    let accepted: BTreeSet<_> = placed
        .iter()
        .map(|o| o["orderId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(billed, accepted, "every accepted order is billed, no other");
    assert_eq!(bill["total"], 600 * placed.len() as i64);
    assert_eq!(app.orders_of(&session).await.len(), placed.len());
    assert_eq!(app.checkout(&session).await.body, bill);
}

#[tokio::test]
async fn a_retry_replays_even_when_the_order_could_not_be_placed_again() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.beer, json!({"stock": 2}))
        .await
        .assert_status(200);
    let (session, pin) = app.table(&shop, "T1").await;
    let key = key();
    let body = OrderBody::new().line(&ids.beer, 2).json();
    let order = app
        .place_order(&session, &pin, "phone-1", &key, &body)
        .await
        .assert_order(false);
    // The beer is gone, then retired, and the device is cooling down.
    assert_eq!(app.stock_entry(&shop, &ids.beer).await["stock"], 0);
    let replay = app
        .place_order(&session, &pin, "phone-1", &key, &body)
        .await;
    assert_eq!(replay.assert_order(true), order);
    let mut catalog = ids.catalog();
    catalog["items"].as_array_mut().unwrap().remove(2);
    app.put_catalog(&shop, catalog).await.assert_status(200);
    let replay = app
        .place_order(&session, &pin, "phone-1", &key, &body)
        .await;
    assert_eq!(
        replay.assert_order(true),
        order,
        "the order keeps its snapshot"
    );

    app.checkout(&session).await.assert_status(200);
    let other = OrderBody::new().line(&ids.soup, 1).json();
    app.place_order(&session, &pin, "phone-1", &key, &other)
        .await
        .assert_problem(422, "IDEMPOTENCY_KEY_REUSED");
    let replay = app
        .place_order(&session, &pin, "phone-1", &key, &body)
        .await;
    assert_eq!(replay.assert_order(true), order);
    assert_eq!(app.orders_of(&session).await, [order]);
}
