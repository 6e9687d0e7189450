//! The kitchen's side of orders over HTTP: the status machine (forward
//! only, cancellation before the food is ready puts stock back once,
//! versions), its `Idempotency-Key`, and the shop's ticket list.

use futures_util::future::join_all;
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Menu, OrderBody, Reply, TestApp, key};

const STATUSES: [&str; 6] = [
    "placed",
    "accepted",
    "preparing",
    "ready",
    "served",
    "cancelled",
];

/// Where a status sits on the kitchen's path; `cancelled` is off it.
fn step(status: &str) -> Option<usize> {
    STATUSES[..5].iter().position(|s| *s == status)
}

/// What the contract says moving an order `from` → `to` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Unchanged,
    Changed,
    Invalid,
}

fn expected(from: &str, to: &str) -> Expect {
    if from == to {
        return Expect::Unchanged;
    }
    match (step(from), step(to)) {
        (Some(from), None) if from <= 2 => Expect::Changed,
        (Some(from), Some(to)) if to > from => Expect::Changed,
        _ => Expect::Invalid,
    }
}

/// A staff order of one soup at `session`; returns the order.
async fn soup_order(app: &TestApp, session: &str, ids: &Menu) -> Value {
    app.staff_order(session, None, &OrderBody::new().line(&ids.soup, 1).json())
        .await
        .assert_order(false)
}

/// The stock of every tracked item and topping of the test menu.
async fn stocks(app: &TestApp, shop: &str, ids: &Menu) -> Vec<Value> {
    let mut stocks = Vec::new();
    for item in [&ids.curry, &ids.soup, &ids.beer, &ids.cheese, &ids.egg] {
        stocks.push(app.stock_entry(shop, item).await["stock"].clone());
    }
    stocks
}

#[track_caller]
fn assert_changed(reply: &Reply, order: &Value, status: &str, version: i64) -> Value {
    let body = reply.assert_status(200).clone();
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let mut expected = order.clone();
    expected["status"] = json!(status);
    expected["version"] = json!(version);
    assert_eq!(body, expected, "the full order, moved");
    body
}

#[tokio::test]
async fn statuses_move_forward_skipping_steps_and_each_change_bumps_the_version() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, _) = app.table(&shop, "T1").await;
    let order = soup_order(&app, &session, &ids).await;
    let id = order["orderId"].as_str().unwrap();
    assert_eq!(
        (order["status"].clone(), order["version"].clone()),
        (json!("placed"), json!(1))
    );

    assert_changed(&app.set_status(id, "accepted").await, &order, "accepted", 2);
    // Skipping `preparing`.
    let ready = assert_changed(&app.set_status(id, "ready").await, &order, "ready", 3);
    assert_eq!(app.get_order(id).await.assert_status(200), &ready);

    // The same status again: 200, nothing changes, not even the version.
    let again = app.set_status(id, "ready").await;
    assert_eq!(again.assert_status(200), &ready);
    assert_eq!(app.get_order(id).await.body, ready);

    // Backwards, and cancelling once the food is ready, are refused.
    for to in ["placed", "accepted", "preparing", "cancelled"] {
        let refused = app.set_status(id, to).await;
        refused.assert_problem(409, "INVALID_TRANSITION");
    }
    assert_eq!(
        app.get_order(id).await.body,
        ready,
        "refusals change nothing"
    );

    let served = assert_changed(&app.set_status(id, "served").await, &order, "served", 4);
    for to in ["placed", "accepted", "preparing", "ready", "cancelled"] {
        app.set_status(id, to)
            .await
            .assert_problem(409, "INVALID_TRANSITION");
    }
    assert_eq!(
        app.set_status(id, "served").await.assert_status(200),
        &served
    );
    assert_eq!(app.get_order(id).await.body, served, "served is final");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_pair_of_statuses_follows_the_transition_table() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, _) = app.table(&shop, "T1").await;
    let pairs: Vec<(&str, &str)> = STATUSES
        .iter()
        .flat_map(|from| STATUSES.iter().map(move |to| (*from, *to)))
        .collect();
    let outcomes = join_all(pairs.iter().map(|&(from, to)| {
        let (app, ids, session) = (&app, &ids, &session);
        async move {
            let order = soup_order(app, session, ids).await;
            let id = order["orderId"].as_str().unwrap().to_owned();
            let mut version = 1;
            if from != "placed" {
                let moved = app.set_status(&id, from).await;
                moved.assert_status(200);
                version = 2;
            }
            let before = app.get_order(&id).await.body;
            let reply = app.set_status(&id, to).await;
            let after = app.get_order(&id).await.body;
            (from, to, before, reply, after, version)
        }
    }))
    .await;

    for (from, to, before, reply, after, version) in outcomes {
        let context = format!("{from} → {to}: {}", reply.text);
        match expected(from, to) {
            Expect::Unchanged => {
                assert_eq!(reply.status, 200, "{context}");
                assert_eq!(reply.body, before, "{context}");
                assert_eq!(after["version"], version, "{context}");
            }
            Expect::Changed => {
                assert_eq!(reply.status, 200, "{context}");
                assert_eq!(reply.body["status"], to, "{context}");
                assert_eq!(reply.body["version"], version + 1, "{context}");
                assert_eq!(after, reply.body, "{context}");
            }
            Expect::Invalid => {
                reply.assert_problem(409, "INVALID_TRANSITION");
                assert_eq!(after, before, "{context}");
            }
        }
    }
}

#[tokio::test]
async fn cancelling_restores_every_item_and_topping_once_and_logs_cancel() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    for item in [&ids.curry, &ids.soup, &ids.cheese, &ids.egg] {
        app.set_inventory(&shop, item, json!({"stock": 10}))
            .await
            .assert_status(200);
    }
    let (session, pin) = app.table(&shop, "T1").await;
    let before = stocks(&app, &shop, &ids).await;
    assert_eq!(
        before,
        [json!(10), json!(10), json!(null), json!(10), json!(10)]
    );

    let body = OrderBody::new()
        .topped(&ids.curry, 2, &[&ids.cheese, &ids.egg])
        .topped(&ids.curry, 1, &[&ids.egg])
        .line(&ids.soup, 3)
        .line(&ids.beer, 4)
        .json();
    let reply = app
        .place_order(&session, &pin, "phone-1", &key(), &body)
        .await;
    let order = reply.assert_order(false);
    let id = reply.order_id();
    assert_eq!(
        stocks(&app, &shop, &ids).await,
        [json!(7), json!(7), json!(null), json!(8), json!(7)]
    );

    let accepted = assert_changed(
        &app.set_status(&id, "accepted").await,
        &order,
        "accepted",
        2,
    );
    let cancelled = assert_changed(
        &app.set_status(&id, "cancelled").await,
        &accepted,
        "cancelled",
        3,
    );
    assert_eq!(
        stocks(&app, &shop, &ids).await,
        before,
        "every unit is back"
    );

    let log = app.stock_log(&shop).await;
    let mut cancels: Vec<(String, i64, i64, i64)> = log
        .iter()
        .filter(|e| e["operation"] == "cancel")
        .map(|e| {
            assert_eq!(e["orderId"], id.as_str(), "{e}");
            (
                e["itemId"].as_str().unwrap().to_owned(),
                e["delta"].as_i64().unwrap(),
                e["stockBefore"].as_i64().unwrap(),
                e["stockAfter"].as_i64().unwrap(),
            )
        })
        .collect();
    cancels.sort();
    let mut expected = vec![
        (ids.curry.clone(), 3, 7, 10),
        (ids.soup.clone(), 3, 7, 10),
        (ids.cheese.clone(), 2, 8, 10),
        (ids.egg.clone(), 3, 7, 10),
    ];
    expected.sort();
    assert_eq!(
        cancels, expected,
        "one cancel row per tracked item, beer untracked"
    );

    // Cancelling again is "the current status again": nothing moves.
    for _ in 0..3 {
        let again = app.set_status(&id, "cancelled").await;
        assert_eq!(again.assert_status(200), &cancelled);
    }
    assert_eq!(stocks(&app, &shop, &ids).await, before, "restored once");
    assert_eq!(app.stock_log(&shop).await, log, "no second cancel row");
    for to in ["placed", "accepted", "preparing", "ready", "served"] {
        app.set_status(&id, to)
            .await
            .assert_problem(409, "INVALID_TRANSITION");
    }
    assert_eq!(
        app.get_order(&id).await.body,
        cancelled,
        "cancelled is final"
    );

    // The restored stock is orderable again, to the last unit.
    let all = OrderBody::new().line(&ids.soup, 10).json();
    app.place_order(&session, &pin, "phone-2", &key(), &all)
        .await
        .assert_order(false);
    assert_eq!(app.stock_entry(&shop, &ids.soup).await["stock"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_simultaneous_cancels_restore_the_stock_once() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    for item in [&ids.curry, &ids.cheese] {
        app.set_inventory(&shop, item, json!({"stock": 5}))
            .await
            .assert_status(200);
    }
    let (session, _) = app.table(&shop, "T1").await;
    let body = OrderBody::new()
        .topped(&ids.curry, 2, &[&ids.cheese])
        .json();
    let order = app
        .staff_order(&session, None, &body)
        .await
        .assert_order(false);
    let id = order["orderId"].as_str().unwrap();
    assert_changed(
        &app.set_status(id, "preparing").await,
        &order,
        "preparing",
        2,
    );

    let replies = join_all((0..20).map(|_| app.set_status(id, "cancelled"))).await;
    for reply in &replies {
        let body = reply.assert_status(200);
        assert_eq!(
            (body["status"].clone(), body["version"].clone()),
            (json!("cancelled"), json!(3))
        );
    }
    assert_eq!(app.stock_entry(&shop, &ids.curry).await["stock"], 5);
    assert_eq!(app.stock_entry(&shop, &ids.cheese).await["stock"], 5);
    let cancels = app
        .stock_log(&shop)
        .await
        .into_iter()
        .filter(|e| e["operation"] == "cancel")
        .count();
    assert_eq!(cancels, 2, "one row per item, once");
}

#[tokio::test]
async fn a_stale_expected_version_is_a_version_conflict_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.soup, json!({"stock": 3}))
        .await
        .assert_status(200);
    let (session, _) = app.table(&shop, "T1").await;
    let order = soup_order(&app, &session, &ids).await;
    let id = order["orderId"].as_str().unwrap();

    let with = |status: &str, version: i64| json!({"status": status, "expectedVersion": version});
    let accepted = app.set_status_with(id, None, &with("accepted", 1)).await;
    let accepted = assert_changed(&accepted, &order, "accepted", 2);

    for stale in [1, 3, 0] {
        for to in ["preparing", "cancelled", "served"] {
            let conflict = app.set_status_with(id, None, &with(to, stale)).await;
            conflict.assert_problem(409, "VERSION_CONFLICT");
            assert_eq!(conflict.body["currentVersion"], 2, "{}", conflict.text);
        }
    }
    assert_eq!(app.get_order(id).await.body, accepted, "nothing changed");
    assert_eq!(
        app.stock_entry(&shop, &ids.soup).await["stock"],
        2,
        "no stock back"
    );

    let cancelled = app.set_status_with(id, None, &with("cancelled", 2)).await;
    assert_changed(&cancelled, &accepted, "cancelled", 3);
    assert_eq!(app.stock_entry(&shop, &ids.soup).await["stock"], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn simultaneous_changes_from_one_version_let_exactly_one_through() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.soup, json!({"stock": 5}))
        .await
        .assert_status(200);
    let (session, _) = app.table(&shop, "T1").await;
    let mut orders = Vec::new();
    for _ in 0..5 {
        orders.push(soup_order(&app, &session, &ids).await);
    }
    assert_eq!(app.stock_entry(&shop, &ids.soup).await["stock"], 0);

    // Five orders, each sent five different changes at once, all from
    // version 1: per order, one goes through and four are stale.
    let targets = ["accepted", "preparing", "ready", "served", "cancelled"];
    let requests: Vec<(String, &str)> = orders
        .iter()
        .flat_map(|o| {
            let id = o["orderId"].as_str().unwrap().to_owned();
            targets.iter().map(move |to| (id.clone(), *to))
        })
        .collect();
    let replies = join_all(requests.iter().map(|(id, to)| {
        let body = json!({"status": to, "expectedVersion": 1});
        let app = &app;
        async move { (id.clone(), app.set_status_with(id, None, &body).await) }
    }))
    .await;
    let mut cancelled = 0;
    for order in &orders {
        let id = order["orderId"].as_str().unwrap();
        let mine: Vec<_> = replies
            .iter()
            .filter(|(o, _)| o == id)
            .map(|(_, r)| r)
            .collect();
        let winners: Vec<_> = mine.iter().filter(|r| r.status == 200).collect();
        assert_eq!(winners.len(), 1, "exactly one change from version 1");
        assert_eq!(winners[0].body["version"], 2);
        for loser in mine.iter().filter(|r| r.status != 200) {
            loser.assert_problem(409, "VERSION_CONFLICT");
            assert_eq!(loser.body["currentVersion"], 2);
        }
        let now = app.get_order(id).await;
        assert_eq!(&now.body, &winners[0].body);
        if now.body["status"] == "cancelled" {
            cancelled += 1;
        }
    }
    assert_eq!(
        app.stock_entry(&shop, &ids.soup).await["stock"],
        cancelled,
        "each cancelled order gave its soup back once"
    );
}

#[tokio::test]
async fn status_changes_are_refused_when_malformed_unknown_or_unauthorised() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let order = soup_order(&app, &session, &ids).await;
    let id = order["orderId"].as_str().unwrap();
    let path = format!("/api/v1/orders/{id}/status");
    let body = json!({"status": "accepted"});

    TestApp::send(app.request(Method::POST, &path).json(&body))
        .await
        .assert_problem(401, "UNAUTHORIZED");
    TestApp::send(app.guest(Method::POST, &path, &pin).json(&body))
        .await
        .assert_problem(401, "UNAUTHORIZED");
    app.set_status(&Uuid::now_v7().to_string(), "accepted")
        .await
        .assert_problem(404, "NOT_FOUND");
    for bad in [
        json!({"status": "eaten"}),
        json!({"status": "accepted", "extra": 1}),
        json!({"expectedVersion": 1}),
        json!({"status": "accepted", "expectedVersion": "one"}),
    ] {
        app.set_status_with(id, None, &bad)
            .await
            .assert_problem(400, "MALFORMED_REQUEST");
    }
    assert_eq!(app.get_order(id).await.body, order, "nothing changed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_repeated_status_change_with_one_key_replays_its_first_answer() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.soup, json!({"stock": 4}))
        .await
        .assert_status(200);
    let (session, _) = app.table(&shop, "T1").await;
    let order = soup_order(&app, &session, &ids).await;
    let id = order["orderId"].as_str().unwrap();

    let accept_key = key();
    let accept = json!({"status": "accepted"});
    let first = app.set_status_with(id, Some(&accept_key), &accept).await;
    let accepted = assert_changed(&first, &order, "accepted", 2);
    assert_eq!(first.header("idempotent-replayed"), None);
    let again = app.set_status_with(id, Some(&accept_key), &accept).await;
    assert_eq!(
        (again.status, again.text.as_str()),
        (200, first.text.as_str())
    );
    assert!(again.replayed());

    // Moved on since: the key still replays the first answer, as it was.
    assert_changed(
        &app.set_status(id, "preparing").await,
        &accepted,
        "preparing",
        3,
    );
    let later = app.set_status_with(id, Some(&accept_key), &accept).await;
    assert!(later.replayed());
    assert_eq!(later.body, accepted);
    app.set_status_with(id, Some(&accept_key), &json!({"status": "ready"}))
        .await
        .assert_problem(422, "IDEMPOTENCY_KEY_REUSED");

    // Twenty simultaneous cancels under one key: one cancel, stock back once.
    let cancel_key = key();
    let cancel = json!({"status": "cancelled", "expectedVersion": 3});
    let replies =
        join_all((0..20).map(|_| app.set_status_with(id, Some(&cancel_key), &cancel))).await;
    let fresh: Vec<_> = replies.iter().filter(|r| !r.replayed()).collect();
    assert_eq!(
        fresh.len(),
        1,
        "one first answer: {:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    assert_eq!(fresh[0].assert_status(200)["version"], 4);
    for reply in replies.iter().filter(|r| r.replayed()) {
        assert_eq!((reply.status, &reply.text), (200, &fresh[0].text));
    }
    assert_eq!(app.stock_entry(&shop, &ids.soup).await["stock"], 4);
    let cancels = app
        .stock_log(&shop)
        .await
        .into_iter()
        .filter(|e| e["operation"] == "cancel")
        .count();
    assert_eq!(cancels, 1);

    // Refusals are not stored against the key: corrected, it runs.
    let other = soup_order(&app, &session, &ids).await;
    let other_id = other["orderId"].as_str().unwrap();
    let retried_key = key();
    app.set_status_with(
        other_id,
        Some(&retried_key),
        &json!({"status": "accepted", "expectedVersion": 5}),
    )
    .await
    .assert_problem(409, "VERSION_CONFLICT");
    let corrected = json!({"status": "accepted", "expectedVersion": 1});
    let ran = app
        .set_status_with(other_id, Some(&retried_key), &corrected)
        .await;
    assert_changed(&ran, &other, "accepted", 2);
    assert!(!ran.replayed());
    let replayed = app
        .set_status_with(other_id, Some(&retried_key), &corrected)
        .await;
    assert!(replayed.replayed());
    assert_eq!(replayed.text, ran.text);
    app.set_status_with(other_id, Some("not-a-key"), &accept)
        .await
        .assert_problem(400, "IDEMPOTENCY_KEY_INVALID");
}

#[tokio::test]
async fn shop_orders_are_filtered_by_status_oldest_first_within_the_limit() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (t1, _) = app.table(&shop, "T1").await;
    let (t2, _) = app.table(&shop, "T2").await;
    let mut orders = Vec::new();
    for (i, session) in [&t1, &t2, &t1, &t2, &t1, &t2].into_iter().enumerate() {
        let body = OrderBody::new().line(&ids.soup, i as i64 + 1).json();
        orders.push(
            app.staff_order(session, None, &body)
                .await
                .assert_order(false),
        );
    }
    // Another shop's orders never show.
    let (other, other_ids) = app.shop_with_menu().await;
    let (elsewhere, _) = app.table(&other, "T1").await;
    app.staff_order(
        &elsewhere,
        None,
        &OrderBody::new().line(&other_ids.soup, 1).json(),
    )
    .await
    .assert_order(false);

    let moves = [
        "accepted",
        "placed",
        "preparing",
        "accepted",
        "cancelled",
        "served",
    ];
    for (order, status) in orders.iter_mut().zip(moves) {
        if status != "placed" {
            let id = order["orderId"].as_str().unwrap().to_owned();
            *order = app.set_status(&id, status).await.assert_status(200).clone();
        }
    }
    let listed = |reply: Reply| -> Vec<Value> {
        reply.assert_status(200)["orders"]
            .as_array()
            .expect("orders")
            .clone()
    };
    let pick =
        |indexes: &[usize]| -> Vec<Value> { indexes.iter().map(|&i| orders[i].clone()).collect() };

    assert_eq!(
        listed(app.shop_orders(&shop, "").await),
        pick(&[0, 1, 2, 3, 4, 5]),
        "oldest first"
    );
    assert_eq!(
        listed(app.shop_orders(&shop, "?status=placed,accepted").await),
        pick(&[0, 1, 3])
    );
    assert_eq!(
        listed(
            app.shop_orders(&shop, "?status=accepted,placed&limit=2")
                .await
        ),
        pick(&[0, 1]),
        "the oldest within the limit"
    );
    assert_eq!(
        listed(app.shop_orders(&shop, "?status=cancelled").await),
        pick(&[4])
    );
    assert_eq!(
        listed(app.shop_orders(&shop, "?status=served,preparing").await),
        pick(&[2, 5])
    );
    assert_eq!(
        listed(app.shop_orders(&shop, "?status=ready").await),
        Vec::<Value>::new()
    );
    assert_eq!(listed(app.shop_orders(&shop, "?limit=1").await), pick(&[0]));
    assert_eq!(listed(app.shop_orders(&other, "").await).len(), 1);

    for bad in [
        "?status=eaten",
        "?status=placed,eaten",
        "?status=",
        "?status=placed,,accepted",
    ] {
        let reply = app.shop_orders(&shop, bad).await;
        assert_eq!(reply.invalid_fields(), ["status"], "{bad}");
    }
    for bad in ["?limit=0", "?limit=501", "?limit=ten"] {
        assert_eq!(
            app.shop_orders(&shop, bad).await.invalid_fields(),
            ["limit"],
            "{bad}"
        );
    }
    app.shop_orders(&Uuid::new_v4().to_string(), "")
        .await
        .assert_problem(404, "NOT_FOUND");
    TestApp::send(app.request(Method::GET, &format!("/api/v1/shops/{shop}/orders")))
        .await
        .assert_problem(401, "UNAUTHORIZED");
}

async fn recall(app: &TestApp, order: &str, version: i64, key: Option<&str>) -> Reply {
    let path = format!("/api/v1/orders/{order}/recall");
    app.staff_post(&path, key, Some(&json!({"expectedVersion": version})))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_recall_undoes_a_bump_once_however_many_screens_press_it() {
    let app = TestApp::spawn_with(|s| s.recall_window_secs = 120).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, _) = app.table(&shop, "T1").await;
    let order = soup_order(&app, &session, &ids).await;
    let id = order["orderId"].as_str().unwrap();
    let mut kitchen = app.follow_shop(&shop, None).await;
    app.set_status(id, "preparing").await.assert_status(200);
    app.set_status(id, "ready").await.assert_status(200);

    // Two screens and a bump bar recall the same bump at once: one undoes
    // it, the others saw a version that is gone.
    let presses = join_all((0..6).map(|_| recall(&app, id, 3, None))).await;
    let undone: Vec<&Reply> = presses.iter().filter(|r| r.status == 200).collect();
    assert_eq!(
        undone.len(),
        1,
        "{:?}",
        presses.iter().map(|r| &r.text).collect::<Vec<_>>()
    );
    let back = assert_changed(undone[0], &order, "preparing", 4);
    for refused in presses.iter().filter(|r| r.status != 200) {
        refused.assert_problem(409, "VERSION_CONFLICT");
        assert_eq!(refused.body["currentVersion"], 4);
    }
    let heard = kitchen.take(3).await;
    let moves: Vec<(&str, &Value)> = heard
        .iter()
        .map(|e| (e.event.as_str(), &e.data["status"]))
        .collect();
    assert_eq!(
        moves,
        [
            ("order.updated", &json!("preparing")),
            ("order.updated", &json!("ready")),
            ("order.updated", &json!("preparing"))
        ]
    );
    assert_eq!(heard[2].data, back, "the recall, announced as it answered");
    let again = recall(&app, id, 4, None).await;
    again.assert_problem(409, "NOTHING_TO_RECALL");
    assert_eq!(again.body["orderStatus"], "preparing");

    // Under a key, a retry whose answer was lost gets the answer again.
    app.set_status(id, "served").await.assert_status(200);
    let k = key();
    let first = recall(&app, id, 5, Some(&k)).await;
    let first_body = assert_changed(&first, &order, "preparing", 6);
    let retried = recall(&app, id, 5, Some(&k)).await;
    assert!(retried.replayed());
    assert_eq!(retried.assert_status(200), &first_body);
    recall(&app, id, 6, Some(&k))
        .await
        .assert_problem(422, "IDEMPOTENCY_KEY_REUSED");
    assert_eq!(app.get_order(id).await.body, first_body);

    // Past the window the bump stays.
    app.set_status(id, "ready").await.assert_status(200);
    app.clock.skip(chrono::Duration::seconds(121));
    let late = recall(&app, id, 7, None).await;
    late.assert_problem(409, "RECALL_EXPIRED");
    assert_eq!(late.body["recallWindowSeconds"], 120);
    assert_eq!(app.get_order(id).await.body["status"], "ready");

    // A cancel is never undone: its stock may be sold already.
    let cancelled = soup_order(&app, &session, &ids).await;
    let cancelled_id = cancelled["orderId"].as_str().unwrap();
    app.set_status(cancelled_id, "cancelled")
        .await
        .assert_status(200);
    recall(&app, cancelled_id, 2, None)
        .await
        .assert_problem(409, "NOTHING_TO_RECALL");
    recall(&app, &Uuid::new_v4().to_string(), 1, None)
        .await
        .assert_problem(404, "NOT_FOUND");
    for body in [json!({}), json!({"expectedVersion": "2"})] {
        let path = format!("/api/v1/orders/{cancelled_id}/recall");
        TestApp::send(app.staff(Method::POST, &path).json(&body))
            .await
            .assert_problem(400, "MALFORMED_REQUEST");
    }
}
