//! Languages: a shop's list kept and patched, catalog texts kept in every
//! language they were given in, and orders and inventory named in the
//! shop's default language.

use std::collections::BTreeMap;

use ordergate_domain::Rejection;
use ordergate_domain::catalog::{CatalogInput, MenuItemInput, OptionGroupInput, OptionInput};
use ordergate_domain::events::EventType;
use ordergate_domain::language::{Languages, Text};
use ordergate_domain::order::LineRequest;
use ordergate_domain::shop::{Shop, ShopPatch};
use uuid::Uuid;

use super::helpers::*;
use crate::{PlaceOrder, Store};

fn languages(tags: &[&str]) -> Languages {
    let mut errors = ordergate_domain::validation::FieldErrors::default();
    let languages = Languages::validate(
        tags.iter().map(|t| (*t).to_owned()).collect(),
        "languages",
        &mut errors,
    );
    assert!(errors.is_empty(), "{tags:?} are languages");
    languages
}

fn both(ja: &str, en: &str) -> Text {
    Text::Localized(BTreeMap::from([
        ("en".to_owned(), en.to_owned()),
        ("ja".to_owned(), ja.to_owned()),
    ]))
}

fn patch(name: Option<&str>, tags: Option<&[&str]>) -> ShopPatch {
    ShopPatch {
        name: name.map(str::to_owned),
        languages: tags.map(|tags| tags.iter().map(|t| (*t).to_owned()).collect()),
        ..ShopPatch::default()
    }
}

/// A shop keeps its languages, default first; a patch changes what it
/// names and nothing else, and a refused patch changes nothing.
pub async fn shops_keep_their_languages_and_a_patch_changes_only_what_it_names(store: &dyn Store) {
    let sakura = Shop {
        languages: languages(&["ja", "en"]),
        ..shop_named("Sakura Diner", instant())
    };
    ok(store.create_shop(sakura.clone()).await);
    assert_eq!(
        ok(store.get_shop(sakura.shop_id).await),
        Some(sakura.clone())
    );

    let english_first = ok(store
        .update_shop(
            sakura.shop_id,
            patch(None, Some(&["en", "ja", "zh-Hant"])),
            instant(),
        )
        .await);
    assert_eq!(
        english_first,
        Shop {
            languages: languages(&["en", "ja", "zh-Hant"]),
            ..sakura.clone()
        }
    );
    let renamed = ok(store
        .update_shop(sakura.shop_id, patch(Some(" Sakura "), None), instant())
        .await);
    assert_eq!(
        (renamed.name.as_str(), &renamed.languages),
        ("Sakura", &english_first.languages)
    );
    assert_eq!(
        ok(store.get_shop(sakura.shop_id).await),
        Some(renamed.clone())
    );

    let refused = store
        .update_shop(
            sakura.shop_id,
            patch(Some("New name"), Some(&["en", "EN"])),
            instant(),
        )
        .await;
    assert_eq!(validation_fields(refused), ["languages[1]"]);
    assert_eq!(ok(store.get_shop(sakura.shop_id).await), Some(renamed));
    // Each patch told the shop's pages, the refused one did not.
    let told: Vec<(EventType, String)> = ok(store.events_after(sakura.shop_id, 0, limit(10)).await)
        .into_iter()
        .map(|e| (e.event_type, e.data))
        .collect();
    let changed = (EventType::MenuChanged, r#"{"catalogVersion":0}"#.to_owned());
    assert_eq!(told, [changed.clone(), changed]);
    assert_eq!(
        rejected(
            store
                .update_shop(Uuid::new_v4(), patch(Some("x"), None), instant())
                .await
        ),
        Rejection::NotFound("shop")
    );
}

/// Catalog texts come back in every language they were given in; orders
/// and inventory name things in the shop's default language, as it is
/// when they are written or read.
pub async fn catalog_texts_keep_every_language_and_orders_use_the_default(store: &dyn Store) {
    let shop = Shop {
        languages: languages(&["ja", "en"]),
        ..shop_named("Sakura Diner", instant())
    };
    ok(store.create_shop(shop.clone()).await);
    let (curry, large) = (Uuid::new_v4(), Uuid::new_v4());
    let input = CatalogInput {
        toppings: vec![],
        items: vec![MenuItemInput {
            name: both("カレー", "Curry"),
            category: both("主菜", "Mains"),
            description: "".into(),
            option_groups: vec![OptionGroupInput {
                group_id: None,
                name: both("サイズ", "Size"),
                min_choices: 1,
                max_choices: Some(1),
                options: vec![OptionInput {
                    option_id: Some(large),
                    name: both("大盛り", "Large"),
                    price: 200,
                }],
            }],
            ..item(Some(curry), "Curry", 900, vec![])
        }],
    };
    let catalog = ok(store
        .put_catalog(shop.shop_id, input, None, instant())
        .await);
    assert_eq!(catalog.items[0].name, both("カレー", "Curry"));
    let told = ok(store.events_after(shop.shop_id, 0, limit(10)).await);
    assert_eq!(
        told.iter()
            .map(|e| (e.event_type, e.session_id, e.data.as_str()))
            .collect::<Vec<_>>(),
        [(EventType::MenuChanged, None, r#"{"catalogVersion":1}"#)],
        "every table hears of a new catalog"
    );
    assert_eq!(
        catalog.items[0].option_groups[0].options[0].name,
        both("大盛り", "Large")
    );
    assert_eq!(ok(store.get_catalog(shop.shop_id).await), catalog);
    assert_eq!(
        inventory_of(store, shop.shop_id, large).await.name,
        "カレー · 大盛り"
    );

    let session = open_table(store, shop.shop_id, "T1").await;
    let line = LineRequest {
        option_ids: vec![large],
        ..line(curry, 1, &[])
    };
    let order = |n: i64| PlaceOrder {
        rules: lenient_rules(),
        ..guest_order(
            session.session_id,
            CLIENT,
            order_of(vec![line.clone()], "", false),
            instant() + secs(n),
        )
    };
    let first = placed(store.place(order(1)).await);
    let names = |placed: &crate::Placed| {
        let body: serde_json::Value = serde_json::from_str(&placed.response.body).unwrap();
        (
            body["items"][0]["name"].clone(),
            body["items"][0]["options"][0]["name"].clone(),
        )
    };
    assert_eq!(names(&first), ("カレー".into(), "大盛り".into()));

    ok(store
        .update_shop(shop.shop_id, patch(None, Some(&["en", "ja"])), instant())
        .await);
    let second = placed(store.place(order(2)).await);
    assert_eq!(names(&second), ("Curry".into(), "Large".into()));
    assert_eq!(inventory_of(store, shop.shop_id, curry).await.name, "Curry");
    let history = ok(store.session_orders(session.session_id, limit(10)).await);
    assert_eq!(
        history
            .iter()
            .map(|o| o.items[0].name.as_str())
            .collect::<Vec<_>>(),
        ["Curry", "カレー"],
        "a placed order keeps the names it was placed with"
    );
}
