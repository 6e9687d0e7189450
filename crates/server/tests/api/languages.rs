//! Languages over HTTP: a shop's languages set at creation and patched,
//! catalog texts given per language, and the menu rendered in the one a
//! guest asks for, with its own ETag, falling back to the shop's default.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{OrderBody, Reply, TestApp, key};

/// A Japanese shop with an English menu too: one item, its texts in both.
async fn bilingual(app: &TestApp) -> (String, String) {
    let created = app
        .create_shop(
            json!({"name": "Sakura", "currency": "JPY", "timezone": "Asia/Tokyo",
                            "languages": ["ja", "en"]}),
        )
        .await;
    let shop = created.assert_status(201)["shopId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(created.body["languages"], json!(["ja", "en"]));
    let curry = Uuid::new_v4().to_string();
    app.put_catalog(
        &shop,
        json!({"items": [{"menuItemId": curry, "price": 900,
            "name": {"ja": "カレー", "en": "Curry"},
            "description": {"ja": "辛口", "en": "Hot"},
            "category": {"ja": "主菜", "en": "Mains"},
            "optionGroups": [{"name": {"ja": "サイズ", "en": "Size"}, "minChoices": 1,
                "options": [{"name": {"ja": "並", "en": "Regular"}},
                            {"name": {"ja": "大盛り", "en": "Large"}, "price": 150}]}]}]}),
    )
    .await
    .assert_status(200);
    (shop, curry)
}

async fn menu_with(app: &TestApp, shop: &str, query: &str, accept: Option<&str>) -> Reply {
    let mut request = app.request(Method::GET, &format!("/api/v1/shops/{shop}/menu{query}"));
    if let Some(accept) = accept {
        request = request.header("Accept-Language", accept);
    }
    TestApp::send(request).await
}

/// The texts a menu shows: item, description, category, group, option.
fn texts(menu: &Value) -> Vec<Value> {
    let item = &menu["items"][0];
    vec![
        item["name"].clone(),
        item["description"].clone(),
        item["category"].clone(),
        item["optionGroups"][0]["name"].clone(),
        item["optionGroups"][0]["options"][1]["name"].clone(),
    ]
}

#[tokio::test]
async fn the_menu_is_rendered_in_the_language_asked_for_else_the_default() {
    let app = TestApp::spawn().await;
    let (shop, _) = bilingual(&app).await;

    let default = menu_with(&app, &shop, "", None).await;
    assert_eq!(
        texts(default.assert_status(200)),
        ["カレー", "辛口", "主菜", "サイズ", "大盛り"]
    );
    assert_eq!(
        (&default.body["language"], &default.body["languages"]),
        (&json!("ja"), &json!(["ja", "en"]))
    );
    assert_eq!(default.header("content-language"), Some("ja"));
    assert_eq!(default.header("vary"), Some("accept-language"));

    let english = menu_with(&app, &shop, "?lang=en", None).await;
    assert_eq!(
        texts(english.assert_status(200)),
        ["Curry", "Hot", "Mains", "Size", "Large"]
    );
    assert_eq!(english.header("content-language"), Some("en"));
    assert_ne!(
        english.header("etag"),
        default.header("etag"),
        "one ETag per language"
    );

    let browser = menu_with(&app, &shop, "", Some("en-US,en;q=0.9,ja;q=0.8")).await;
    assert_eq!(browser.body["language"], "en", "en-US is served by en");
    assert_eq!(browser.header("etag"), english.header("etag"));
    let lang_wins = menu_with(&app, &shop, "?lang=ja", Some("en")).await;
    assert_eq!(lang_wins.body["language"], "ja");
    for unserved in ["?lang=fr", "?lang=not%20a%20tag"] {
        let fallback = menu_with(&app, &shop, unserved, None).await;
        assert_eq!(fallback.assert_status(200)["language"], "ja", "{unserved}");
    }

    let ja_etag = default.header("etag").unwrap().to_owned();
    let revalidated = TestApp::send(
        app.request(Method::GET, &format!("/api/v1/shops/{shop}/menu?lang=en"))
            .header("If-None-Match", &ja_etag),
    )
    .await;
    assert_eq!(
        revalidated.status, 200,
        "the Japanese menu is not the English one"
    );
    let unchanged = TestApp::send(
        app.request(Method::GET, &format!("/api/v1/shops/{shop}/menu"))
            .header("If-None-Match", &ja_etag),
    )
    .await;
    assert_eq!(unchanged.status, 304);
}

#[tokio::test]
async fn the_catalog_keeps_every_language_and_orders_keep_the_default() {
    let app = TestApp::spawn().await;
    let (shop, curry) = bilingual(&app).await;
    let catalog = app.get_catalog(&shop).await;
    let item = &catalog.assert_status(200)["items"][0];
    assert_eq!(item["name"], json!({"en": "Curry", "ja": "カレー"}));
    let large = item["optionGroups"][0]["options"][1]["optionId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        app.stock_entry(&shop, &large).await["name"],
        "カレー · 大盛り",
        "inventory speaks the shop's default"
    );

    let (session, pin) = app.table(&shop, "T1").await;
    let body = OrderBody::new().chosen(&curry, 1, &[&large]).json();
    let order = app
        .place_order(&session, &pin, "phone-1", &key(), &body)
        .await
        .assert_order(false);
    assert_eq!(
        (
            &order["items"][0]["name"],
            &order["items"][0]["options"][0]["name"]
        ),
        (&json!("カレー"), &json!("大盛り")),
        "the kitchen's language"
    );
}

#[tokio::test]
async fn staff_patch_a_shops_languages_and_the_menu_follows_at_once() {
    let app = TestApp::spawn().await;
    let (shop, _) = bilingual(&app).await;
    let before = menu_with(&app, &shop, "", None).await;
    assert_eq!(before.body["language"], "ja");

    let path = format!("/api/v1/shops/{shop}");
    let patched = TestApp::send(
        app.staff(Method::PATCH, &path)
            .json(&json!({"languages": ["en", "ja"]})),
    )
    .await;
    assert_eq!(patched.assert_status(200)["languages"], json!(["en", "ja"]));
    assert_eq!(patched.body["name"], "Sakura", "left as it was");
    let after = menu_with(&app, &shop, "", None).await;
    assert_eq!(
        after.body["language"], "en",
        "the cached menu was rendered anew"
    );
    assert_eq!(texts(&after.body)[0], "Curry");
    assert_eq!(
        app.get_shop(&shop).await.body["languages"],
        json!(["en", "ja"])
    );

    let refused = TestApp::send(
        app.staff(Method::PATCH, &path)
            .json(&json!({"name": "", "languages": ["en", "klingon!"]})),
    )
    .await;
    assert_eq!(refused.invalid_fields(), ["name", "languages[1]"]);
    let currency = TestApp::send(
        app.staff(Method::PATCH, &path)
            .json(&json!({"currency": "USD"})),
    )
    .await;
    currency.assert_problem(400, "MALFORMED_REQUEST");
    let anonymous = TestApp::send(
        app.request(Method::PATCH, &path)
            .json(&json!({"languages": ["ja"]})),
    )
    .await;
    anonymous.assert_problem(401, "UNAUTHORIZED");
    assert_eq!(
        app.get_shop(&shop).await.body["languages"],
        json!(["en", "ja"])
    );
}

#[tokio::test]
async fn bad_languages_and_texts_are_field_errors_and_change_nothing() {
    let app = TestApp::spawn().await;
    let refused = app
        .create_shop(json!({"name": "Sakura", "currency": "JPY", "languages": []}))
        .await;
    assert_eq!(refused.invalid_fields(), ["languages"]);
    let shop = app.shop().await;
    assert_eq!(app.get_shop(&shop).await.body["languages"], json!(["en"]));

    let bad = json!({"items": [
        {"name": {}, "category": "Mains", "price": 100},
        {"name": {"xx!": "Curry"}, "category": {"ja": " "}, "price": 100}
    ]});
    let reply = app.put_catalog(&shop, bad).await;
    assert_eq!(
        reply.invalid_fields(),
        ["items[0].name", "items[1].name", "items[1].category.ja"]
    );
    let not_text = app
        .put_catalog(
            &shop,
            json!({"items": [{"name": 5, "category": "M", "price": 1}]}),
        )
        .await;
    not_text.assert_problem(400, "MALFORMED_REQUEST");
    assert_eq!(app.get_catalog(&shop).await.body["version"], 0);
}

/// A restaurant's whole menu: 500 items in 25 categories, each with a
/// description, two option groups (one required) and every text in three
/// languages.
fn restaurant_catalog() -> Value {
    let text = |what: &str, n: usize| {
        json!({"ja": format!("{what}その{n}"), "en": format!("{what} number {n}"),
               "zh-Hant": format!("{what}第{n}號")})
    };
    let items: Vec<Value> = (0..500)
        .map(|i| {
            let option = |kind: &str, o: usize, price: usize| {
                json!({"optionId": Uuid::new_v4(), "name": text(kind, o), "price": price})
            };
            json!({
                "menuItemId": Uuid::new_v4(), "name": text("Dish", i),
                "description": text(
                    "Grilled over binchotan charcoal and brushed with our house tare, served with \
                     seasonal pickles, miso soup and rice; ask staff about today's",
                    i,
                ),
                "category": text("Category", i % 25), "price": 400 + i,
                "allergens": ["wheat", "soy"], "tags": ["spicy"], "station": "grill",
                "optionGroups": [
                    {"name": text("Size", i), "minChoices": 1, "maxChoices": 1,
                     "options": [option("Regular", 1, 0), option("Large", 2, 150)]},
                    {"name": text("Extras", i), "maxChoices": 2,
                     "options": [option("Egg", 1, 80), option("Cheese", 2, 100),
                                 option("Greens", 3, 60)]}
                ]
            })
        })
        .collect();
    json!({"items": items})
}

#[tokio::test]
async fn a_restaurants_whole_menu_in_three_languages_is_stored_rendered_and_cached() {
    let app = TestApp::spawn().await;
    let created = app
        .create_shop(json!({"name": "Izakaya", "currency": "JPY",
                            "languages": ["ja", "en", "zh-Hant"]}))
        .await;
    let shop = created.assert_status(201)["shopId"]
        .as_str()
        .unwrap()
        .to_owned();
    let catalog = restaurant_catalog();
    let size = serde_json::to_vec(&catalog).unwrap().len();
    assert!(
        (512 * 1024..2 * 1024 * 1024).contains(&size),
        "a catalog of {size} bytes: far over the 16 KiB of other bodies, within the 2 MiB \
         a catalog PUT takes"
    );
    let stored = app.put_catalog(&shop, catalog).await;
    assert_eq!(
        stored.assert_status(200)["items"].as_array().unwrap().len(),
        500
    );
    let labels = [("shop_id", shop.as_str())];
    let misses = || app.metric("ordergate_menu_cache_misses_total", &labels);
    for (lang, dish) in [
        ("ja", "Dishその499"),
        ("en", "Dish number 499"),
        ("zh-Hant", "Dish第499號"),
    ] {
        let menu = menu_with(&app, &shop, &format!("?lang={lang}"), None).await;
        let items = menu.assert_status(200)["items"].as_array().unwrap();
        assert_eq!((items.len(), &items[499]["name"]), (500, &json!(dish)));
        assert_eq!(
            items[499]["optionGroups"][1]["options"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
    }
    let loaded = misses().await;
    for lang in ["ja", "en", "zh-Hant", "ja"] {
        menu_with(&app, &shop, &format!("?lang={lang}"), None)
            .await
            .assert_status(200);
    }
    assert_eq!(misses().await, loaded, "every language served from memory");
}

#[tokio::test]
async fn every_table_hears_when_the_menu_changes_otherwise_than_by_stock() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let mut guest = crate::sse::SseStream::open(app.session_stream(&session, &pin)).await;
    let mut kitchen = app.follow_shop(&shop, None).await;

    let mut catalog = ids.catalog();
    catalog["items"][2]["name"] = json!("Draft beer");
    app.put_catalog(&shop, catalog).await.assert_status(200);
    let path = format!("/api/v1/shops/{shop}");
    TestApp::send(
        app.staff(Method::PATCH, &path)
            .json(&json!({"languages": ["en", "ja"]})),
    )
    .await
    .assert_status(200);

    for stream in [&mut guest, &mut kitchen] {
        let heard: Vec<(String, Value)> = stream
            .take(2)
            .await
            .into_iter()
            .map(|e| (e.event, e.data))
            .collect();
        assert_eq!(
            heard,
            [
                ("menu.changed".to_owned(), json!({"catalogVersion": 2})),
                ("menu.changed".to_owned(), json!({"catalogVersion": 2})),
            ]
        );
    }
    let menu = menu_with(&app, &shop, "", None).await;
    assert_eq!(menu.body["catalogVersion"], 2);
}
