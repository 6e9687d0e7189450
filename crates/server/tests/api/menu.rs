use chrono::Utc;
use serde_json::json;
use uuid::Uuid;

use crate::helpers::{TestApp, find};

#[tokio::test]
async fn menu_is_not_ready_until_a_catalog_is_published() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let reply = app.menu(&shop).await;
    reply.assert_problem(503, "CATALOG_NOT_READY");
    assert!(reply.header("retry-after").is_some());
    app.menu(&Uuid::new_v4().to_string())
        .await
        .assert_problem(404, "NOT_FOUND");
}

#[tokio::test]
async fn menu_lists_items_in_order_with_toppings_and_stock() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.egg, json!({"stock": 0}))
        .await
        .assert_status(200);
    app.set_inventory(&shop, &ids.soup, json!({"stock": 4}))
        .await
        .assert_status(200);

    let menu = app.menu(&shop).await;
    let body = menu.assert_status(200);
    assert_eq!(body["shopId"], shop);
    assert_eq!(body["catalogVersion"], 1);
    assert_eq!(body["currency"], "JPY");
    let names: Vec<_> = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].clone())
        .collect();
    assert_eq!(names, [json!("Curry"), json!("Miso soup"), json!("Beer")]);
    assert_eq!(
        body["items"][0],
        json!({
            "menuItemId": ids.curry, "name": "Curry", "description": "Mild", "category": "Mains",
            "price": 900, "stock": null, "soldOut": false, "soldOutUntil": null, "maxToppings": 2,
            "toppings": [
                {"toppingId": ids.cheese, "name": "Cheese", "price": 100, "stock": null,
                 "soldOut": false, "soldOutUntil": null},
                {"toppingId": ids.egg, "name": "Egg", "price": 80, "stock": 0, "soldOut": true,
                 "soldOutUntil": null}
            ],
            "optionGroups": [], "allergens": [], "tags": [], "imageId": null, "imageUrl": null
        })
    );
    assert_eq!(find(&body["items"], "menuItemId", &ids.soup)["stock"], 4);
}

#[tokio::test]
async fn etag_answers_304_until_a_restock_changes_the_menu() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.soup, json!({"stock": 0}))
        .await
        .assert_status(200);
    let first = app.menu(&shop).await;
    let etag = first.header("etag").unwrap().to_owned();
    assert_eq!(first.header("cache-control"), Some("no-cache"));
    assert!(
        find(&first.body["items"], "menuItemId", &ids.soup)["soldOut"]
            .as_bool()
            .unwrap()
    );

    let unchanged = app.menu_if_none_match(&shop, &etag).await;
    assert_eq!(unchanged.status, 304);
    assert_eq!(unchanged.text, "");
    assert_eq!(unchanged.header("etag"), Some(etag.as_str()));

    app.restock(&shop, &ids.soup, 3).await.assert_status(200);
    let changed = app.menu_if_none_match(&shop, &etag).await;
    let body = changed.assert_status(200);
    assert_ne!(changed.header("etag"), Some(etag.as_str()));
    let soup = find(&body["items"], "menuItemId", &ids.soup);
    assert_eq!(
        (soup["stock"].clone(), soup["soldOut"].clone()),
        (json!(3), json!(false))
    );
}

#[tokio::test]
async fn an_86_without_until_holds_until_cleared() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let marked = app
        .set_inventory(&shop, &ids.curry, json!({"soldOut": true}))
        .await;
    assert_eq!(marked.assert_status(200)["soldOut"], true);
    assert_eq!(marked.body["soldOutUntil"], json!(null));
    let menu = app.menu(&shop).await;
    assert_eq!(
        find(&menu.body["items"], "menuItemId", &ids.curry)["soldOut"],
        true
    );

    app.set_inventory(&shop, &ids.curry, json!({"soldOut": false}))
        .await
        .assert_status(200);
    let menu = app.menu(&shop).await;
    assert_eq!(
        find(&menu.body["items"], "menuItemId", &ids.curry)["soldOut"],
        false
    );
}

#[tokio::test]
async fn an_86_with_until_lapses_by_itself() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let until = Utc::now() + chrono::Duration::milliseconds(1500);
    let marked = app
        .set_inventory(
            &shop,
            &ids.beer,
            json!({"soldOut": true, "soldOutUntil": until}),
        )
        .await;
    assert_eq!(marked.assert_status(200)["soldOut"], true);
    assert!(marked.body["soldOutUntil"].is_string());
    let menu = app.menu(&shop).await;
    assert_eq!(
        find(&menu.body["items"], "menuItemId", &ids.beer)["soldOut"],
        true
    );

    app.clock.skip(chrono::Duration::milliseconds(1500));
    let menu = app.menu(&shop).await;
    assert_eq!(
        find(&menu.body["items"], "menuItemId", &ids.beer)["soldOut"],
        false
    );
    let inventory = app.inventory(&shop).await;
    let beer = find(&inventory.body["entries"], "itemId", &ids.beer);
    assert_eq!(
        (beer["soldOut"].clone(), beer["soldOutUntil"].clone()),
        (json!(false), json!(null))
    );
}
