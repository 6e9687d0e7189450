use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Menu, OrderBody, TestApp, find, key};

#[tokio::test]
async fn a_new_shop_has_an_empty_catalog_at_version_zero() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let catalog = app.get_catalog(&shop).await;
    assert_eq!(
        catalog.assert_status(200),
        &json!({"shopId": shop, "version": 0, "toppings": [], "items": []})
    );
}

#[tokio::test]
async fn put_keeps_given_ids_assigns_missing_ones_and_bumps_the_version() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let cheese = Uuid::new_v4().to_string();
    let reply = app
        .put_catalog(
            &shop,
            json!({
                "toppings": [{"toppingId": cheese, "name": "Cheese", "price": 100}],
                "items": [{"name": "Curry", "category": "Mains", "price": 900,
                           "toppingIds": [cheese]}]
            }),
        )
        .await;
    let stored = reply.assert_status(200).clone();
    assert_eq!(stored["version"], 1);
    assert_eq!(stored["toppings"][0]["toppingId"], cheese);
    let curry = stored["items"][0].clone();
    assert!(Uuid::parse_str(curry["menuItemId"].as_str().unwrap()).is_ok());
    assert_eq!(curry["maxToppings"], 1, "defaults to the allowed toppings");
    assert_eq!(curry["description"], "");
    assert_eq!(app.get_catalog(&shop).await.body, stored);

    let again = app
        .put_catalog(
            &shop,
            json!({"toppings": stored["toppings"], "items": [curry]}),
        )
        .await;
    assert_eq!(again.assert_status(200)["version"], 2);
    assert_eq!(again.body["items"][0]["menuItemId"], curry["menuItemId"]);
}

#[tokio::test]
async fn items_left_out_are_retired_and_come_back_with_their_stock() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.beer, json!({"stock": 7}))
        .await
        .assert_status(200);

    let mut without_beer = ids.catalog();
    without_beer["items"]
        .as_array_mut()
        .unwrap()
        .retain(|i| i["menuItemId"] != ids.beer);
    app.put_catalog(&shop, without_beer)
        .await
        .assert_status(200);
    let items = app.get_catalog(&shop).await.body["items"].clone();
    assert_eq!(items.as_array().unwrap().len(), 2);
    assert!(
        !app.menu(&shop).await.text.contains(&ids.beer),
        "retired items leave the menu"
    );
    app.set_inventory(&shop, &ids.beer, json!({"stock": 1}))
        .await
        .assert_problem(404, "NOT_FOUND");

    app.put_catalog(&shop, ids.catalog())
        .await
        .assert_status(200);
    let menu = app.menu(&shop).await;
    assert_eq!(
        find(&menu.body["items"], "menuItemId", &ids.beer)["stock"],
        7
    );
}

#[tokio::test]
async fn invalid_catalogs_report_every_field_and_change_nothing() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let before = app.get_catalog(&shop).await.body;
    let dup = Uuid::new_v4().to_string();
    let reply = app
        .put_catalog(
            &shop,
            json!({
                "toppings": [
                    {"toppingId": dup, "name": "Cheese", "price": 100},
                    {"toppingId": dup, "name": "Egg", "price": -5}
                ],
                "items": [
                    {"name": "", "category": "Mains", "price": 900,
                     "toppingIds": [Uuid::new_v4(), dup, dup], "maxToppings": 5},
                    {"menuItemId": ids.cheese, "name": "Cheese plate", "category": "Sides",
                     "price": 100_000_001}
                ]
            }),
        )
        .await;
    assert_eq!(
        reply.invalid_fields(),
        [
            "toppings[1].toppingId",
            "toppings[1].price",
            "items[0].name",
            "items[0].toppingIds[0]",
            "items[0].toppingIds[2]",
            "items[0].maxToppings",
            "items[1].menuItemId",
            "items[1].price",
        ]
    );
    assert_eq!(app.get_catalog(&shop).await.body, before);
}

#[tokio::test]
async fn items_declare_allergens_tags_and_a_station_that_guests_see() {
    let app = TestApp::spawn().await;
    let (shop, _) = app.shop_with_menu().await;
    let curry = Uuid::new_v4().to_string();
    let stored = app
        .put_catalog(
            &shop,
            json!({"items": [{
                "menuItemId": curry, "name": "Katsu curry", "category": "Mains", "price": 1100,
                "allergens": ["wheat", "egg", "pork"], "tags": ["spicy"], "station": "fryer"
            }]}),
        )
        .await;
    let item = &stored.assert_status(200)["items"][0];
    assert_eq!(item["allergens"], json!(["wheat", "egg", "pork"]));
    assert_eq!(
        (&item["tags"], &item["station"]),
        (&json!(["spicy"]), &json!("fryer"))
    );

    let menu = app.menu(&shop).await;
    let shown = find(&menu.assert_status(200)["items"], "menuItemId", &curry);
    assert_eq!(shown["allergens"], json!(["wheat", "egg", "pork"]));
    assert_eq!(shown["tags"], json!(["spicy"]));

    let before = app.get_catalog(&shop).await.body;
    let refused = app
        .put_catalog(
            &shop,
            json!({"items": [{
                "name": "Curry", "category": "Mains", "price": 900,
                "allergens": ["nuts"], "tags": ["Vegan"], "station": ""
            }]}),
        )
        .await;
    assert_eq!(
        refused.invalid_fields(),
        [
            "items[0].allergens[0]",
            "items[0].tags[0]",
            "items[0].station"
        ]
    );
    assert_eq!(app.get_catalog(&shop).await.body, before, "nothing changed");
}

#[tokio::test]
async fn concurrent_editors_of_one_version_save_once_and_the_rest_are_told() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let read = app.get_catalog(&shop).await;
    let etag = read
        .header("etag")
        .expect("the catalog's version")
        .to_owned();
    assert_eq!(etag, "\"1\"");

    let edit = |price: i64| {
        let mut catalog = ids.catalog();
        catalog["items"][0]["price"] = json!(price);
        app.put_catalog_if_match(&shop, &etag, catalog)
    };
    let replies = futures_util::future::join_all((0..8).map(|n| edit(1000 + n))).await;
    let mut statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 412, 412, 412, 412, 412, 412, 412]);

    let saved = app.get_catalog(&shop).await;
    assert_eq!(saved.body["version"], 2);
    assert_eq!(saved.header("etag"), Some("\"2\""));

    let stale = app.put_catalog_if_match(&shop, &etag, ids.catalog()).await;
    stale.assert_problem(412, "CATALOG_VERSION_CONFLICT");
    assert_eq!(stale.body["currentVersion"], 2);
    app.put_catalog_if_match(&shop, "\"2\"", ids.catalog())
        .await
        .assert_status(200);
    app.put_catalog_if_match(&shop, "*", ids.catalog())
        .await
        .assert_status(200);
    app.put_catalog_if_match(&shop, "W/\"4\"", ids.catalog())
        .await
        .assert_problem(400, "MALFORMED_REQUEST");
    assert_eq!(app.get_catalog(&shop).await.body["version"], 4);
}

#[tokio::test]
async fn catalog_of_an_unknown_shop_is_not_found() {
    let app = TestApp::spawn().await;
    let unknown = Uuid::new_v4().to_string();
    app.put_catalog(&unknown, Menu::default().catalog())
        .await
        .assert_problem(404, "NOT_FOUND");
    app.get_catalog(&unknown)
        .await
        .assert_problem(404, "NOT_FOUND");
}

#[tokio::test]
async fn a_500_item_menu_in_two_languages_stores_renders_and_takes_orders() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    // What a real menu's descriptions look like, Japanese then English.
    let description = "国産の豚骨を十二時間煮込んだ濃厚スープに、自家製の中太麺。\
                       チャーシュー二枚、味玉、海苔、ネギ。辛さは三段階から選べます。 \
                       Rich pork-bone broth simmered for twelve hours, house-made medium \
                       noodles, two slices of chashu, a marinated egg, nori and scallions.";
    let items: Vec<Value> = (0..500)
        .map(|n| {
            json!({"name": format!("特製ラーメン Special Ramen No. {n}"),
                   "description": description, "category": format!("Category {}", n % 12),
                   "price": 900 + n})
        })
        .collect();
    let body = json!({"items": items});
    assert!(
        body.to_string().len() > 200 * 1024,
        "well past the 16 KiB of other bodies"
    );
    let stored = app.put_catalog(&shop, body).await;
    assert_eq!(
        stored.assert_status(200)["items"].as_array().unwrap().len(),
        500
    );

    let menu = app.menu(&shop).await;
    let items = menu.assert_status(200)["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 500);
    assert_eq!(items[499]["description"], description);
    let last = items[499]["menuItemId"].as_str().unwrap().to_owned();
    let (session, pin) = app.table(&shop, "T1").await;
    let order = OrderBody::new().line(&last, 2).json();
    let placed = app
        .place_order(&session, &pin, "phone", &key(), &order)
        .await;
    assert_eq!(placed.assert_order(false)["total"], 2 * (900 + 499));
}
