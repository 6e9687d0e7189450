use chrono::Utc;
use futures_util::future::join_all;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{TestApp, find};

#[tokio::test]
async fn every_active_item_and_topping_starts_untracked() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let reply = app.inventory(&shop).await;
    let entries = reply.assert_status(200)["entries"]
        .as_array()
        .unwrap()
        .clone();
    let listed: Vec<_> = entries
        .iter()
        .map(|e| (e["itemId"].clone(), e["kind"].clone()))
        .collect();
    assert_eq!(
        listed,
        [
            (json!(ids.curry), json!("menuItem")),
            (json!(ids.soup), json!("menuItem")),
            (json!(ids.beer), json!("menuItem")),
            (json!(ids.cheese), json!("topping")),
            (json!(ids.egg), json!("topping")),
        ]
    );
    let curry = &entries[0];
    assert_eq!(curry["name"], "Curry");
    assert_eq!(curry["stock"], json!(null));
    assert_eq!(curry["soldOut"], false);
    assert_eq!(curry["soldOutUntil"], json!(null));
    assert_eq!(curry["version"], 1);
}

#[tokio::test]
async fn set_and_restock_are_logged_with_their_deltas() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let set = app
        .set_inventory(&shop, &ids.soup, json!({"stock": 20}))
        .await;
    let entry = set.assert_status(200);
    assert_eq!(
        (entry["stock"].clone(), entry["version"].clone()),
        (json!(20), json!(2))
    );
    let restocked = app.restock(&shop, &ids.soup, 5).await;
    assert_eq!(restocked.assert_status(200)["stock"], 25);
    assert_eq!(restocked.body["version"], 3);
    app.set_inventory(&shop, &ids.soup, json!({"stock": 2}))
        .await
        .assert_status(200);

    let log = app.inventory_log(&shop, "").await;
    let entries = log.assert_status(200)["entries"]
        .as_array()
        .unwrap()
        .clone();
    let summary: Vec<_> = entries
        .iter()
        .map(|e| {
            (
                e["operation"].as_str().unwrap().to_owned(),
                e["delta"].as_i64().unwrap(),
                e["stockBefore"].clone(),
                e["stockAfter"].clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("set".to_owned(), -23, json!(25), json!(2)),
            ("restock".to_owned(), 5, json!(20), json!(25)),
            ("set".to_owned(), 20, json!(null), json!(20)),
        ],
        "newest first"
    );
    for entry in &entries {
        assert_eq!(entry["itemId"], ids.soup);
        assert_eq!(entry["actor"], "admin");
        assert_eq!(entry["orderId"], json!(null));
        assert!(entry["at"].is_string());
    }
    let sum: i64 = entries.iter().map(|e| e["delta"].as_i64().unwrap()).sum();
    assert_eq!(sum, 2, "the log adds up to the stock");
}

#[tokio::test]
async fn an_86_is_not_a_stock_change_and_leaves_the_log_alone() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let until = Utc::now() + chrono::Duration::minutes(30);
    let reply = app
        .set_inventory(
            &shop,
            &ids.cheese,
            json!({"soldOut": true, "soldOutUntil": until}),
        )
        .await;
    assert_eq!(reply.assert_status(200)["version"], 2);
    assert_eq!(
        app.inventory_log(&shop, "").await.body["entries"],
        json!([])
    );
}

#[tokio::test]
async fn log_limit_is_validated() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    for stock in 1..=3 {
        app.set_inventory(&shop, &ids.beer, json!({"stock": stock}))
            .await
            .assert_status(200);
    }
    let two = app.inventory_log(&shop, "?limit=2").await;
    assert_eq!(
        two.assert_status(200)["entries"].as_array().unwrap().len(),
        2
    );
    for bad in ["0", "501", "-1", "ten"] {
        let reply = app.inventory_log(&shop, &format!("?limit={bad}")).await;
        assert_eq!(reply.invalid_fields(), ["limit"], "limit={bad}");
    }
}

#[tokio::test]
async fn invalid_updates_are_refused_and_change_nothing() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let past = Utc::now() - chrono::Duration::minutes(1);
    let cases: [(Value, &str); 5] = [
        (json!({}), "stock"),
        (json!({"stock": -1}), "stock"),
        (json!({"stock": 1_000_001}), "stock"),
        (
            json!({"soldOut": true, "soldOutUntil": past}),
            "soldOutUntil",
        ),
        (
            json!({"soldOutUntil": Utc::now() + chrono::Duration::minutes(1)}),
            "soldOutUntil",
        ),
    ];
    for (body, field) in cases {
        let reply = app.set_inventory(&shop, &ids.curry, body.clone()).await;
        assert_eq!(reply.invalid_fields(), [field], "{body}");
    }
    app.set_inventory(&shop, &ids.curry, json!({"stock": "ten"}))
        .await
        .assert_problem(400, "MALFORMED_REQUEST");
    let curry = find(
        &app.inventory(&shop).await.body["entries"],
        "itemId",
        &ids.curry,
    )
    .clone();
    assert_eq!(curry["version"], 1, "nothing changed");
}

#[tokio::test]
async fn restock_needs_tracked_stock_and_a_sane_quantity() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let untracked = app.restock(&shop, &ids.curry, 5).await;
    untracked.assert_problem(409, "STOCK_NOT_TRACKED");
    assert_eq!(untracked.body["itemId"], ids.curry);
    app.set_inventory(&shop, &ids.curry, json!({"stock": 1}))
        .await
        .assert_status(200);
    for quantity in [0, -3, 100_001] {
        assert_eq!(
            app.restock(&shop, &ids.curry, quantity)
                .await
                .invalid_fields(),
            ["quantity"]
        );
    }
    let log = app.inventory_log(&shop, "").await;
    assert_eq!(
        log.body["entries"].as_array().unwrap().len(),
        1,
        "only the set"
    );
}

#[tokio::test]
async fn unknown_items_and_shops_are_not_found() {
    let app = TestApp::spawn().await;
    let (shop, _) = app.shop_with_menu().await;
    let unknown = Uuid::new_v4().to_string();
    app.set_inventory(&shop, &unknown, json!({"stock": 1}))
        .await
        .assert_problem(404, "NOT_FOUND");
    app.restock(&shop, &unknown, 1)
        .await
        .assert_problem(404, "NOT_FOUND");
    app.inventory(&unknown)
        .await
        .assert_problem(404, "NOT_FOUND");
    app.inventory_log(&unknown, "")
        .await
        .assert_problem(404, "NOT_FOUND");
}

#[tokio::test]
async fn concurrent_restocks_all_count_and_all_log() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.beer, json!({"stock": 0}))
        .await
        .assert_status(200);
    let replies = join_all((0..40).map(|_| app.restock(&shop, &ids.beer, 2))).await;
    assert!(replies.iter().all(|r| r.status == 200));
    let beer = find(
        &app.inventory(&shop).await.body["entries"],
        "itemId",
        &ids.beer,
    )
    .clone();
    assert_eq!(beer["stock"], 80);
    let log = app.inventory_log(&shop, "?limit=500").await;
    let entries = log.body["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 41);
    let sum: i64 = entries.iter().map(|e| e["delta"].as_i64().unwrap()).sum();
    assert_eq!(sum, 80);
}
