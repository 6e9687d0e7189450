//! The guest's exactly-once order POST: retries replay, duplicates are
//! caught, tables share one ticket sequence, and checkout closes the door
//! without breaking a retry.

use std::collections::BTreeSet;

use futures_util::future::join_all;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{OrderBody, TestApp, key, without_replay_flag};

#[tokio::test]
async fn an_order_is_priced_by_the_server_and_answered_in_full() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T4").await;
    let body = OrderBody::new()
        .topped(&ids.curry, 2, &[&ids.egg, &ids.cheese])
        .line(&ids.beer, 3)
        .line(&ids.soup, 1)
        .note("no onions")
        .json();
    let reply = app
        .place_order(&session, &pin, "phone-1", &key(), &body)
        .await;
    let order = reply.assert_order(false);
    let order_id = reply.order_id();
    assert_eq!(
        Uuid::parse_str(&order_id).unwrap().get_version_num(),
        7,
        "order ids are UUIDv7"
    );
    assert!(order["createdAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        order,
        json!({
            "orderId": order_id, "shopId": shop, "sessionId": session, "tableLabel": "T4",
            "ticketNumber": 1, "status": "placed", "source": "guest", "clientId": "phone-1",
            "items": [
                {"menuItemId": ids.curry, "name": "Curry", "unitPrice": 1080, "quantity": 2,
                 "toppings": [
                     {"toppingId": ids.egg, "name": "Egg", "price": 80},
                     {"toppingId": ids.cheese, "name": "Cheese", "price": 100}
                 ],
                 "lineTotal": 2160},
                {"menuItemId": ids.beer, "name": "Beer", "unitPrice": 600, "quantity": 3,
                 "toppings": [], "lineTotal": 1800},
                {"menuItemId": ids.soup, "name": "Miso soup", "unitPrice": 300, "quantity": 1,
                 "toppings": [], "lineTotal": 300}
            ],
            "note": "no onions", "total": 4260, "createdAt": order["createdAt"], "version": 1
        })
    );
    assert_eq!(app.get_order(&order_id).await.assert_status(200), &order);
    assert_eq!(app.orders_of(&session).await, [order]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_simultaneous_retries_of_one_key_place_exactly_one_order() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.beer, json!({"stock": 10}))
        .await
        .assert_status(200);
    let (session, pin) = app.table(&shop, "T1").await;
    let body = OrderBody::new().line(&ids.beer, 2).json();
    let key = key();

    let replies =
        join_all((0..50).map(|_| app.place_order(&session, &pin, "phone-1", &key, &body))).await;
    let fresh: Vec<_> = replies.iter().filter(|r| !r.replayed()).collect();
    assert_eq!(fresh.len(), 1, "exactly one first answer");
    let order = fresh[0].assert_order(false);
    let order_id = fresh[0].order_id();
    for reply in replies.iter().filter(|r| r.replayed()) {
        assert_eq!(
            reply.assert_order(true),
            order,
            "a replay is the same order"
        );
    }
    assert_eq!(replies.iter().filter(|r| r.replayed()).count(), 49);

    assert_eq!(app.orders_of(&session).await, std::slice::from_ref(&order));
    assert_eq!(app.stock_entry(&shop, &ids.beer).await["stock"], 8);
    let orders_logged: Vec<_> = app
        .stock_log(&shop)
        .await
        .into_iter()
        .filter(|e| e["operation"] == "order")
        .map(|e| {
            (
                e["itemId"].clone(),
                e["delta"].clone(),
                e["orderId"].clone(),
            )
        })
        .collect();
    assert_eq!(
        orders_logged,
        [(json!(ids.beer), json!(-2), json!(order_id))]
    );

    let audit = app.audit_entries(&shop).await;
    let outcomes: BTreeSet<_> = audit
        .iter()
        .map(|e| {
            (
                e["code"].as_str().unwrap(),
                e["status"].as_u64().unwrap(),
                e["idempotentReplay"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        BTreeSet::from([("ACCEPTED", 201, false), ("REPLAYED", 201, true)])
    );
    assert_eq!(audit.len(), 50, "one audit row per request");
    assert_eq!(audit.iter().filter(|e| e["code"] == "ACCEPTED").count(), 1);
    assert!(audit.iter().all(|e| e["orderId"] == order_id.as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_device_sending_a_fresh_key_per_tap_places_one_order() {
    let app = TestApp::spawn_with(|s| s.client_cooldown_ms = 0).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let body = OrderBody::new()
        .topped(&ids.curry, 1, &[&ids.cheese])
        .line(&ids.beer, 2)
        .json();

    let keys: Vec<String> = (0..20).map(|_| key()).collect();
    let replies = join_all(
        keys.iter()
            .map(|key| app.place_order(&session, &pin, "phone-1", key, &body)),
    )
    .await;
    let placed: Vec<_> = replies.iter().filter(|r| r.status == 201).collect();
    assert_eq!(placed.len(), 1, "exactly one order");
    let original = placed[0].assert_order(false);
    let duplicates: Vec<_> = replies.iter().filter(|r| r.status != 201).collect();
    assert_eq!(duplicates.len(), 19);
    for duplicate in duplicates {
        duplicate.assert_problem(409, "DUPLICATE_PAYLOAD");
        assert_eq!(duplicate.body["originalOrderId"], original["orderId"]);
        assert_eq!(duplicate.body["originalOrder"], original);
    }
    assert_eq!(
        app.orders_of(&session).await,
        std::slice::from_ref(&original)
    );

    let other_guest = app
        .place_order(&session, &pin, "phone-2", &key(), &body)
        .await;
    let second = other_guest.assert_order(false);
    assert_ne!(second["orderId"], original["orderId"]);
    assert_eq!(second["clientId"], "phone-2");

    let repeat = OrderBody::new()
        .topped(&ids.curry, 1, &[&ids.cheese])
        .line(&ids.beer, 2)
        .allow_repeat()
        .json();
    let third = app
        .place_order(&session, &pin, "phone-1", &key(), &repeat)
        .await
        .assert_order(false);
    assert_eq!(third["clientId"], "phone-1");
    assert_eq!(third["items"], original["items"]);
    assert_eq!(app.orders_of(&session).await, [third, second, original]);
}

#[tokio::test]
async fn the_same_items_with_another_note_are_not_a_duplicate() {
    let app = TestApp::spawn_with(|s| s.client_cooldown_ms = 0).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let plain = OrderBody::new().line(&ids.soup, 1).json();
    let spicy = OrderBody::new().line(&ids.soup, 1).note("extra hot").json();
    app.place_order(&session, &pin, "phone-1", &key(), &plain)
        .await
        .assert_order(false);
    app.place_order(&session, &pin, "phone-1", &key(), &spicy)
        .await
        .assert_order(false);
    // Split and reordered lines are still the same items.
    let split = OrderBody::new()
        .line(&ids.beer, 1)
        .line(&ids.soup, 1)
        .line(&ids.beer, 1)
        .json();
    let merged = OrderBody::new()
        .line(&ids.soup, 1)
        .line(&ids.beer, 2)
        .json();
    let first = app
        .place_order(&session, &pin, "phone-1", &key(), &split)
        .await
        .assert_order(false);
    let again = app
        .place_order(&session, &pin, "phone-1", &key(), &merged)
        .await;
    again.assert_problem(409, "DUPLICATE_PAYLOAD");
    assert_eq!(again.body["originalOrderId"], first["orderId"]);
    assert_eq!(app.orders_of(&session).await.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_guests_ordering_at_once_get_sixteen_tickets() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let body = OrderBody::new().line(&ids.curry, 1).json();
    let clients: Vec<String> = (1..=16).map(|n| format!("guest-{n}")).collect();

    let keys: Vec<String> = clients.iter().map(|_| key()).collect();
    let replies = join_all(
        clients
            .iter()
            .zip(&keys)
            .map(|(client, key)| app.place_order(&session, &pin, client, key, &body)),
    )
    .await;
    let orders: Vec<Value> = replies.iter().map(|r| r.assert_order(false)).collect();
    let mut tickets: Vec<i64> = orders
        .iter()
        .map(|o| o["ticketNumber"].as_i64().unwrap())
        .collect();
    tickets.sort_unstable();
    assert_eq!(tickets, (1..=16).collect::<Vec<_>>());
    let order_ids: BTreeSet<_> = orders.iter().map(|o| o["orderId"].to_string()).collect();
    assert_eq!(order_ids.len(), 16);
    let served: BTreeSet<_> = orders
        .iter()
        .map(|o| o["clientId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(served, clients.into_iter().collect());
    assert_eq!(app.orders_of(&session).await.len(), 16);
}

#[tokio::test]
async fn tickets_count_per_shop_across_its_tables() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (other_shop, other_ids) = app.shop_with_menu().await;
    let (t1, pin1) = app.table(&shop, "T1").await;
    let (t2, pin2) = app.table(&shop, "T2").await;
    let (elsewhere, pin3) = app.table(&other_shop, "T1").await;
    let body = OrderBody::new().line(&ids.soup, 1).json();
    let first = app.place_order(&t1, &pin1, "a", &key(), &body).await;
    let second = app.place_order(&t2, &pin2, "b", &key(), &body).await;
    let other = app
        .place_order(
            &elsewhere,
            &pin3,
            "c",
            &key(),
            &OrderBody::new().line(&other_ids.soup, 1).json(),
        )
        .await;
    assert_eq!(first.assert_order(false)["ticketNumber"], 1);
    assert_eq!(second.assert_order(false)["ticketNumber"], 2);
    assert_eq!(other.assert_order(false)["ticketNumber"], 1);
}

#[tokio::test]
async fn a_device_must_wait_out_its_cooldown_between_orders() {
    let app = TestApp::spawn_with(|s| s.client_cooldown_ms = 500).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let first_key = key();
    let first_body = OrderBody::new().line(&ids.curry, 1).json();
    let first = app
        .place_order(&session, &pin, "phone-1", &first_key, &first_body)
        .await
        .assert_order(false);

    let second_key = key();
    let second_body = OrderBody::new().line(&ids.beer, 1).json();
    let refused = app
        .place_order(&session, &pin, "phone-1", &second_key, &second_body)
        .await;
    refused.assert_problem(429, "COOLDOWN_ACTIVE");
    assert_eq!(refused.header("retry-after"), Some("1"));
    // A retry of the accepted order is a replay, not a new order.
    let retry = app
        .place_order(&session, &pin, "phone-1", &first_key, &first_body)
        .await;
    assert_eq!(retry.assert_order(true), first);
    // The cooldown is per device.
    app.place_order(&session, &pin, "phone-2", &key(), &second_body)
        .await
        .assert_order(false);

    app.clock.skip(chrono::Duration::milliseconds(500));
    let later = app
        .place_order(&session, &pin, "phone-1", &second_key, &second_body)
        .await;
    let second = later.assert_order(false);
    assert_eq!(second["items"][0]["menuItemId"], ids.beer);
    assert_eq!(app.orders_of(&session).await.len(), 3);
}

#[tokio::test]
async fn after_checkout_new_orders_are_refused_but_retries_still_replay() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T9").await;
    let first_key = key();
    let first_body = OrderBody::new()
        .topped(&ids.curry, 1, &[&ids.cheese])
        .json();
    let first = app
        .place_order(&session, &pin, "phone-1", &first_key, &first_body)
        .await
        .assert_order(false);
    let second = app
        .place_order(
            &session,
            &pin,
            "phone-2",
            &key(),
            &OrderBody::new().line(&ids.beer, 2).json(),
        )
        .await
        .assert_order(false);

    let bill = app.checkout(&session).await;
    let bill = bill.assert_status(200).clone();
    assert_eq!(bill["status"], "closed");
    assert_eq!(bill["tableLabel"], "T9");
    assert_eq!(
        bill["orders"],
        json!([first.clone(), second.clone()]),
        "oldest first"
    );
    assert_eq!(bill["total"], 1000 + 1200);
    assert_eq!(first["total"], 1000);
    assert_eq!(second["total"], 1200);

    let closed = app
        .place_order(
            &session,
            &pin,
            "phone-3",
            &key(),
            &OrderBody::new().line(&ids.soup, 1).json(),
        )
        .await;
    closed.assert_problem(410, "SESSION_CLOSED");
    let retry = app
        .place_order(&session, &pin, "phone-1", &first_key, &first_body)
        .await;
    assert_eq!(retry.assert_order(true), first);
    let staff = app
        .staff_order(&session, None, &OrderBody::new().line(&ids.soup, 1).json())
        .await;
    staff.assert_problem(410, "SESSION_CLOSED");

    assert_eq!(
        app.checkout(&session).await.body,
        bill,
        "the bill is unchanged"
    );
    assert_eq!(app.orders_of(&session).await, [second, first]);
}

#[tokio::test]
async fn a_replay_is_the_stored_answer_byte_for_byte() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let key = key();
    let body = OrderBody::new().line(&ids.soup, 2).note("hot").json();
    let first = app.place_order(&session, &pin, "p", &key, &body).await;
    first.assert_order(false);
    let replay = app.place_order(&session, &pin, "p", &key, &body).await;
    replay.assert_order(true);
    assert_eq!(
        replay.text,
        first
            .text
            .replace(r#""idempotentReplay":false"#, r#""idempotentReplay":true"#)
    );
    assert_eq!(replay.header("content-type"), Some("application/json"));
    assert_eq!(
        without_replay_flag(&replay.body),
        without_replay_flag(&first.body)
    );
}

#[tokio::test]
async fn a_line_note_reaches_the_kitchen_and_tells_carts_apart() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let noted = json!({"items": [
        {"menuItemId": ids.curry, "quantity": 1, "note": " no onions "},
        {"menuItemId": ids.curry, "quantity": 1}
    ]});
    let order_key = key();
    let placed = app
        .place_order(&session, &pin, "phone-1", &order_key, &noted)
        .await
        .assert_order(false);
    assert_eq!(placed["items"][0]["note"], "no onions");
    assert!(
        placed["items"][1].get("note").is_none(),
        "no note, no member"
    );

    let kitchen = app.shop_orders(&shop, "").await;
    let ticket = &kitchen.assert_status(200)["orders"][0];
    assert_eq!(ticket["items"][0]["note"], "no onions");
    let replay = app
        .place_order(&session, &pin, "phone-1", &order_key, &noted)
        .await
        .assert_order(true);
    assert_eq!(without_replay_flag(&replay), without_replay_flag(&placed));

    // The same cart without the note is another request, not a duplicate.
    let plain = json!({"items": [{"menuItemId": ids.curry, "quantity": 2}]});
    app.place_order(&session, &pin, "phone-1", &order_key, &plain)
        .await
        .assert_problem(422, "IDEMPOTENCY_KEY_REUSED");

    let long = json!({"items": [
        {"menuItemId": ids.curry, "quantity": 1, "note": "x".repeat(141)}
    ]});
    let refused = app
        .place_order(&session, &pin, "phone-2", &key(), &long)
        .await;
    assert_eq!(refused.invalid_fields(), ["items[0].note"]);
    assert_eq!(app.orders_of(&session).await.len(), 1);
}
