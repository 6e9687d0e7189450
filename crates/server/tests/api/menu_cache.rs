//! The menu served from memory is never stale: every kind of stock change
//! shows on the very next read, warm reads never touch the database, and
//! the per-shop metrics count what happened.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::Utc;
use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::helpers::{OrderBody, TestApp, find, key};
use crate::sse::SseStream;

const MISSES: &str = "ordergate_menu_cache_misses_total";

/// (stock, soldOut) of a menu item as the menu shows it now.
async fn shown(app: &TestApp, shop: &str, item: &str) -> (Value, Value) {
    let menu = app.menu(shop).await;
    let entry = find(&menu.assert_status(200)["items"], "menuItemId", item);
    (entry["stock"].clone(), entry["soldOut"].clone())
}

/// (stock, soldOut) of a topping of the first menu item (curry).
async fn shown_topping(app: &TestApp, shop: &str, topping: &str) -> (Value, Value) {
    let menu = app.menu(shop).await;
    let entry = find(
        &menu.assert_status(200)["items"][0]["toppings"],
        "toppingId",
        topping,
    );
    (entry["stock"].clone(), entry["soldOut"].clone())
}

async fn misses(app: &TestApp, shop: &str) -> f64 {
    app.metric(MISSES, &[("shop_id", shop)]).await
}

/// Polls `/metrics` until `name{shop_id}` is `value` (for a gauge that
/// follows connections closing); fails after 3 s.
async fn await_metric(app: &TestApp, name: &str, shop: &str, value: f64) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    loop {
        let now = app.metric(name, &[("shop_id", shop)]).await;
        if now == value {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{name} of {shop} stayed at {now}, expected {value}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn every_kind_of_stock_change_shows_on_the_next_menu_read() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let yes = json!(true);
    let no = json!(false);
    assert_eq!(
        shown(&app, &shop, &ids.soup).await,
        (json!(null), no.clone())
    );

    // set
    app.set_inventory(&shop, &ids.soup, json!({"stock": 10}))
        .await
        .assert_status(200);
    assert_eq!(shown(&app, &shop, &ids.soup).await, (json!(10), no.clone()));
    let etag = app.menu(&shop).await.header("etag").unwrap().to_owned();

    // order, of an item and a topping
    app.set_inventory(&shop, &ids.cheese, json!({"stock": 4}))
        .await
        .assert_status(200);
    let body = OrderBody::new()
        .line(&ids.soup, 2)
        .topped(&ids.curry, 1, &[&ids.cheese])
        .json();
    let reply = app
        .place_order(&session, &pin, "phone-1", &key(), &body)
        .await;
    let order_id = reply.order_id();
    reply.assert_order(false);
    assert_eq!(shown(&app, &shop, &ids.soup).await, (json!(8), no.clone()));
    assert_eq!(
        shown_topping(&app, &shop, &ids.cheese).await,
        (json!(3), no.clone())
    );
    assert_eq!(
        app.menu_if_none_match(&shop, &etag).await.status,
        200,
        "the old ETag no longer matches"
    );

    // cancellation
    app.set_status(&order_id, "cancelled")
        .await
        .assert_status(200);
    assert_eq!(shown(&app, &shop, &ids.soup).await, (json!(10), no.clone()));
    assert_eq!(
        shown_topping(&app, &shop, &ids.cheese).await,
        (json!(4), no.clone())
    );

    // restock
    app.restock(&shop, &ids.soup, 5).await.assert_status(200);
    assert_eq!(shown(&app, &shop, &ids.soup).await, (json!(15), no.clone()));

    // an order that sells out, then a set to zero and back
    let all = OrderBody::new().line(&ids.soup, 15).json();
    app.place_order(&session, &pin, "phone-2", &key(), &all)
        .await
        .assert_order(false);
    assert_eq!(shown(&app, &shop, &ids.soup).await, (json!(0), yes.clone()));
    app.set_inventory(&shop, &ids.soup, json!({"stock": 3}))
        .await
        .assert_status(200);
    assert_eq!(shown(&app, &shop, &ids.soup).await, (json!(3), no.clone()));
    app.set_inventory(&shop, &ids.soup, json!({"stock": 0}))
        .await
        .assert_status(200);
    assert_eq!(shown(&app, &shop, &ids.soup).await, (json!(0), yes.clone()));
    app.set_inventory(&shop, &ids.soup, json!({"stock": null}))
        .await
        .assert_status(200);
    assert_eq!(
        shown(&app, &shop, &ids.soup).await,
        (json!(null), no.clone())
    );

    // 86 and its clearing
    app.set_inventory(&shop, &ids.beer, json!({"soldOut": true}))
        .await
        .assert_status(200);
    assert_eq!(
        shown(&app, &shop, &ids.beer).await,
        (json!(null), yes.clone())
    );
    app.set_inventory(&shop, &ids.beer, json!({"soldOut": false}))
        .await
        .assert_status(200);
    assert_eq!(
        shown(&app, &shop, &ids.beer).await,
        (json!(null), no.clone())
    );

    // 86 until a time that lapses, with nothing written when it does
    let until = Utc::now() + chrono::Duration::milliseconds(700);
    app.set_inventory(
        &shop,
        &ids.egg,
        json!({"soldOut": true, "soldOutUntil": until}),
    )
    .await
    .assert_status(200);
    assert_eq!(
        shown_topping(&app, &shop, &ids.egg).await,
        (json!(null), yes.clone())
    );
    let marked = app.menu(&shop).await.header("etag").unwrap().to_owned();
    assert_eq!(app.menu_if_none_match(&shop, &marked).await.status, 304);
    app.clock.skip(chrono::Duration::milliseconds(700));
    assert_eq!(
        shown_topping(&app, &shop, &ids.egg).await,
        (json!(null), no.clone())
    );
    assert_eq!(
        app.menu_if_none_match(&shop, &marked).await.status,
        200,
        "the lapsed 86 changed the menu and its ETag"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_menu_is_never_stale_while_others_keep_reading_it() {
    let app = Arc::new(TestApp::spawn().await);
    let (shop, ids) = app.shop_with_menu().await;
    let (session, _) = app.table(&shop, "T1").await;
    app.set_inventory(&shop, &ids.soup, json!({"stock": 100}))
        .await
        .assert_status(200);

    // Readers that fill the cache at every moment, racing each change.
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (app, stop, shop) = (Arc::clone(&app), Arc::clone(&stop), shop.clone());
            tokio::spawn(async move {
                let mut reads = 0;
                while !stop.load(Ordering::Relaxed) {
                    app.menu(&shop).await.assert_status(200);
                    reads += 1;
                }
                reads
            })
        })
        .collect();

    let mut stock = 100;
    for i in 0..40 {
        if i % 2 == 0 {
            app.restock(&shop, &ids.soup, 3).await.assert_status(200);
            stock += 3;
        } else {
            let body = OrderBody::new().line(&ids.soup, 2).json();
            app.staff_order(&session, None, &body)
                .await
                .assert_order(false);
            stock -= 2;
        }
        assert_eq!(
            shown(&app, &shop, &ids.soup).await.0,
            json!(stock),
            "read right after change {i}"
        );
    }
    stop.store(true, Ordering::Relaxed);
    for reader in readers {
        assert!(reader.await.unwrap() > 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_warm_menu_reads_never_miss_the_cache() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (other, _) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.soup, json!({"stock": 5}))
        .await
        .assert_status(200);
    let warm = app.menu(&shop).await;
    let etag = warm.header("etag").unwrap().to_owned();
    let before = misses(&app, &shop).await;
    assert!(before >= 1.0, "the first read loaded the menu");
    let echo = echo_reloads(&app);

    for _ in 0..20 {
        let replies = join_all((0..50).map(|_| app.menu(&shop))).await;
        for reply in replies {
            assert_eq!(reply.status, 200);
            assert_eq!(reply.header("etag"), Some(etag.as_str()));
            assert_eq!(reply.body, warm.body);
        }
    }
    let warm_misses = misses(&app, &shop).await;
    assert!(
        warm_misses <= before + echo,
        "1,000 warm reads, no miss: {warm_misses} after {before}"
    );
    assert_eq!(misses(&app, &other).await, 0.0, "counted per shop");

    // A change is one reload, then warm again.
    app.restock(&shop, &ids.soup, 1).await.assert_status(200);
    assert_eq!(shown(&app, &shop, &ids.soup).await.0, 6);
    let reloaded = misses(&app, &shop).await;
    assert!(reloaded > before, "a change makes the next read reload");
    let replies = join_all((0..100).map(|_| app.menu_if_none_match(&shop, &etag))).await;
    assert!(
        replies.iter().all(|r| r.status == 200),
        "the old ETag is stale"
    );
    let after = misses(&app, &shop).await;
    assert!(after <= reloaded + echo, "{after} after {reloaded}");
}

/// Reloads a change may cause besides the first read's: on PostgreSQL a
/// node also hears its own changes back through `NOTIFY`, which makes its
/// cache look once more whenever that arrives.
fn echo_reloads(app: &TestApp) -> f64 {
    if app.sqlite_file().is_some() {
        0.0
    } else {
        1.0
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rush_of_reads_after_a_change_loads_the_menu_once() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.soup, json!({"stock": 5}))
        .await
        .assert_status(200);
    app.menu(&shop).await.assert_status(200);
    for round in 1..=3 {
        let before = misses(&app, &shop).await;
        app.restock(&shop, &ids.soup, 1).await.assert_status(200);
        let replies = join_all((0..100).map(|_| app.menu(&shop))).await;
        assert!(replies.iter().all(|r| r.status == 200));
        let loads = misses(&app, &shop).await - before;
        assert!(
            (1.0..=1.0 + echo_reloads(&app)).contains(&loads),
            "round {round}: 100 reads after a change loaded the menu {loads} times"
        );
    }
}

#[tokio::test]
async fn order_metrics_are_counted_per_shop() {
    let app = TestApp::spawn_with(|s| s.client_cooldown_ms = 0).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (other, other_ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.soup, json!({"stock": 2}))
        .await
        .assert_status(200);
    let (session, pin) = app.table(&shop, "T1").await;
    let (elsewhere, elsewhere_pin) = app.table(&other, "T1").await;

    let first_key = key();
    let soup = OrderBody::new().line(&ids.soup, 1).json();
    app.place_order(&session, &pin, "phone-1", &first_key, &soup)
        .await
        .assert_order(false);
    app.place_order(&session, &pin, "phone-1", &first_key, &soup)
        .await
        .assert_order(true);
    app.place_order(
        &session,
        &pin,
        "phone-2",
        &key(),
        &OrderBody::new().line(&ids.beer, 1).json(),
    )
    .await
    .assert_order(false);
    for client in ["phone-3", "phone-4"] {
        let too_many = OrderBody::new().line(&ids.soup, 5).json();
        app.place_order(&session, &pin, client, &key(), &too_many)
            .await
            .assert_problem(409, "OUT_OF_STOCK");
    }
    app.place_order(&session, &pin, "phone-1", &key(), &soup)
        .await
        .assert_problem(409, "DUPLICATE_PAYLOAD");
    app.place_order(
        &elsewhere,
        &elsewhere_pin,
        "phone-1",
        &key(),
        &OrderBody::new().line(&other_ids.soup, 1).json(),
    )
    .await
    .assert_order(false);

    let of = |shop: &str| vec![("shop_id", shop.to_owned())];
    let metric = |name: &'static str, labels: Vec<(&'static str, String)>| {
        let app = &app;
        async move {
            let labels: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
            app.metric(name, &labels).await
        }
    };
    let rejected =
        |shop: &str, code: &str| vec![("shop_id", shop.to_owned()), ("code", code.to_owned())];
    assert_eq!(
        metric("ordergate_orders_placed_total", of(&shop)).await,
        2.0
    );
    assert_eq!(
        metric("ordergate_order_replays_total", of(&shop)).await,
        1.0
    );
    assert_eq!(
        metric(
            "ordergate_order_rejections_total",
            rejected(&shop, "OUT_OF_STOCK")
        )
        .await,
        2.0
    );
    assert_eq!(
        metric(
            "ordergate_order_rejections_total",
            rejected(&shop, "DUPLICATE_PAYLOAD")
        )
        .await,
        1.0
    );
    assert_eq!(metric("ordergate_out_of_stock_total", of(&shop)).await, 2.0);

    assert_eq!(
        metric("ordergate_orders_placed_total", of(&other)).await,
        1.0
    );
    assert_eq!(
        metric("ordergate_order_replays_total", of(&other)).await,
        0.0
    );
    assert_eq!(
        metric("ordergate_out_of_stock_total", of(&other)).await,
        0.0
    );
    assert_eq!(
        metric(
            "ordergate_order_rejections_total",
            rejected(&other, "OUT_OF_STOCK")
        )
        .await,
        0.0
    );
}

#[tokio::test]
async fn the_subscriber_gauge_follows_connected_streams() {
    const GAUGE: &str = "ordergate_sse_subscribers";
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let other = app.shop().await;
    let (session, pin) = app.table(&shop, "T1").await;
    await_metric(&app, GAUGE, &shop, 0.0).await;

    let staff = app.follow_shop(&shop, None).await;
    await_metric(&app, GAUGE, &shop, 1.0).await;
    let guest = SseStream::open(app.session_stream(&session, &pin)).await;
    await_metric(&app, GAUGE, &shop, 2.0).await;
    await_metric(&app, GAUGE, &other, 0.0).await;

    drop(staff);
    await_metric(&app, GAUGE, &shop, 1.0).await;
    drop(guest);
    await_metric(&app, GAUGE, &shop, 0.0).await;
}
