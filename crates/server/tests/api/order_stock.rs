//! Orders take stock all or nothing: never oversold, never half taken, and
//! a refused order leaves no trace against its key.

use chrono::Utc;
use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::helpers::{OrderBody, TestApp, key};

/// Shortages sorted by item id, for comparing.
fn shortages(reply: &crate::helpers::Reply) -> Vec<Value> {
    reply.assert_problem(409, "OUT_OF_STOCK");
    let mut list = reply.body["shortages"]
        .as_array()
        .expect("shortages")
        .clone();
    list.sort_by_key(|s| s["itemId"].as_str().unwrap().to_owned());
    list
}

fn sorted(mut list: Vec<Value>) -> Vec<Value> {
    list.sort_by_key(|s| s["itemId"].as_str().unwrap().to_owned());
    list
}

#[tokio::test]
async fn an_order_needing_more_than_the_stock_takes_nothing() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    for (item, stock) in [(&ids.curry, 5), (&ids.cheese, 1), (&ids.beer, 3)] {
        app.set_inventory(&shop, item, json!({"stock": stock}))
            .await
            .assert_status(200);
    }
    let (session, pin) = app.table(&shop, "T1").await;
    let inventory_before = app.inventory(&shop).await.body;
    let log_before = app.stock_log(&shop).await;

    let key = key();
    let body = OrderBody::new()
        .topped(&ids.curry, 2, &[&ids.cheese])
        .line(&ids.beer, 1)
        .json();
    let refused = app
        .place_order(&session, &pin, "phone-1", &key, &body)
        .await;
    assert_eq!(
        shortages(&refused),
        [json!({"itemId": ids.cheese, "requested": 2, "available": 1})]
    );
    let greedy = OrderBody::new()
        .topped(&ids.curry, 4, &[&ids.cheese])
        .topped(&ids.curry, 2, &[])
        .line(&ids.beer, 3)
        .json();
    let refused_twice = app
        .place_order(&session, &pin, "phone-2", &crate::helpers::key(), &greedy)
        .await;
    assert_eq!(
        shortages(&refused_twice),
        sorted(vec![
            json!({"itemId": ids.curry, "requested": 6, "available": 5}),
            json!({"itemId": ids.cheese, "requested": 4, "available": 1}),
        ])
    );

    assert_eq!(app.inventory(&shop).await.body, inventory_before);
    assert_eq!(app.stock_log(&shop).await, log_before);
    assert_eq!(app.orders_of(&session).await, Vec::<Value>::new());

    // Nothing was recorded against the key: after a restock it places the order.
    app.restock(&shop, &ids.cheese, 1).await.assert_status(200);
    let placed = app
        .place_order(&session, &pin, "phone-1", &key, &body)
        .await;
    let order = placed.assert_order(false);
    let stock = |entry: Value| entry["stock"].clone();
    assert_eq!(stock(app.stock_entry(&shop, &ids.curry).await), 3);
    assert_eq!(stock(app.stock_entry(&shop, &ids.cheese).await), 0);
    assert_eq!(stock(app.stock_entry(&shop, &ids.beer).await), 2);
    let taken: Vec<_> = app
        .stock_log(&shop)
        .await
        .into_iter()
        .filter(|e| e["operation"] == "order")
        .map(|e| {
            assert_eq!(e["orderId"], order["orderId"]);
            assert_eq!(e["actor"], "guest:phone-1");
            (
                e["itemId"].as_str().unwrap().to_owned(),
                e["delta"].as_i64().unwrap(),
            )
        })
        .collect();
    let mut expected = vec![
        (ids.curry.clone(), -2),
        (ids.cheese.clone(), -2),
        (ids.beer.clone(), -1),
    ];
    let mut taken = taken;
    taken.sort();
    expected.sort();
    assert_eq!(taken, expected);
    assert_eq!(app.orders_of(&session).await, [order]);
}

#[tokio::test]
async fn a_manual_86_counts_as_none_available() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let until = Utc::now() + chrono::Duration::minutes(30);
    app.set_inventory(&shop, &ids.soup, json!({"soldOut": true}))
        .await
        .assert_status(200);
    app.set_inventory(
        &shop,
        &ids.beer,
        json!({"stock": 5, "soldOut": true, "soldOutUntil": until}),
    )
    .await
    .assert_status(200);
    let soup = app
        .place_order(
            &session,
            &pin,
            "phone-1",
            &key(),
            &OrderBody::new().line(&ids.soup, 1).json(),
        )
        .await;
    assert_eq!(
        shortages(&soup),
        [json!({"itemId": ids.soup, "requested": 1, "available": 0})]
    );
    let beer = app
        .place_order(
            &session,
            &pin,
            "phone-1",
            &key(),
            &OrderBody::new().line(&ids.beer, 2).json(),
        )
        .await;
    assert_eq!(
        shortages(&beer),
        [json!({"itemId": ids.beer, "requested": 2, "available": 0})]
    );
    assert_eq!(app.stock_entry(&shop, &ids.beer).await["stock"], 5);

    app.set_inventory(&shop, &ids.beer, json!({"soldOut": false}))
        .await
        .assert_status(200);
    app.place_order(
        &session,
        &pin,
        "phone-1",
        &key(),
        &OrderBody::new().line(&ids.beer, 2).json(),
    )
    .await
    .assert_order(false);
    assert_eq!(app.stock_entry(&shop, &ids.beer).await["stock"], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_guests_racing_for_ten_beers_get_exactly_ten() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.beer, json!({"stock": 10}))
        .await
        .assert_status(200);
    let (session, pin) = app.table(&shop, "T1").await;
    let body = OrderBody::new().line(&ids.beer, 1).json();
    let guests: Vec<(String, String)> = (0..30).map(|n| (format!("guest-{n}"), key())).collect();

    let replies = join_all(
        guests
            .iter()
            .map(|(client, key)| app.place_order(&session, &pin, client, key, &body)),
    )
    .await;
    let mut placed: Vec<String> = replies
        .iter()
        .filter(|r| r.status == 201)
        .map(|r| {
            r.assert_order(false);
            r.order_id()
        })
        .collect();
    let refused: Vec<_> = replies.iter().filter(|r| r.status != 201).collect();
    assert_eq!((placed.len(), refused.len()), (10, 20));
    for reply in refused {
        assert_eq!(
            shortages(reply),
            [json!({"itemId": ids.beer, "requested": 1, "available": 0})]
        );
    }

    let beer = app.stock_entry(&shop, &ids.beer).await;
    assert_eq!(
        (beer["stock"].clone(), beer["soldOut"].clone()),
        (json!(0), json!(true))
    );
    let log = app.stock_log(&shop).await;
    let mut logged: Vec<String> = log
        .iter()
        .filter(|e| e["operation"] == "order")
        .map(|e| {
            assert_eq!(e["delta"], -1);
            assert_eq!(e["itemId"], ids.beer);
            e["orderId"].as_str().unwrap().to_owned()
        })
        .collect();
    logged.sort();
    placed.sort();
    assert_eq!(logged, placed, "one log row per placed order");
    let sum: i64 = log.iter().map(|e| e["delta"].as_i64().unwrap()).sum();
    assert_eq!(sum, 0, "+10 set, -10 ordered");
    let after: Vec<_> = log.iter().map(|e| e["stockAfter"].clone()).collect();
    let expected: Vec<_> = (0..=10).map(|n| json!(n)).collect();
    assert_eq!(after, expected, "newest first, one unit at a time");
    assert_eq!(app.orders_of(&session).await.len(), 10);
}
