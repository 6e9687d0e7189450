//! Shops checks.

use ordergate_domain::shop::{Shop, ShopPatch, ShopTimeZone};
use uuid::Uuid;

use crate::Store;

use super::helpers::*;

pub async fn store_answers_ping(store: &dyn Store) {
    ok(store.ping().await);
}

pub async fn shops_round_trip_through_create_get_and_list(store: &dyn Store) {
    assert_eq!(ok(store.list_shops().await), []);

    let sakura = shop_named("Sakura Diner", ordergate_domain::now());
    let kissa = Shop {
        currency: "USD".to_owned(),
        kitchen_warn_minutes: 3,
        kitchen_late_minutes: 4,
        timezone: ShopTimeZone::parse("America/New_York").expect("a time zone"),
        ..shop_named("喫茶 ひだまり", instant())
    };
    assert_eq!(ok(store.create_shop(sakura.clone()).await), sakura);
    assert_eq!(ok(store.create_shop(kissa.clone()).await), kissa);

    assert_eq!(
        ok(store.get_shop(sakura.shop_id).await),
        Some(sakura.clone())
    );
    assert_eq!(ok(store.get_shop(kissa.shop_id).await), Some(kissa.clone()));

    let mut listed = ok(store.list_shops().await);
    listed.sort_by_key(|s| s.shop_id);
    let mut expected = vec![sakura, kissa];
    expected.sort_by_key(|s| s.shop_id);
    assert_eq!(listed, expected);
}

pub async fn get_shop_of_an_unknown_id_is_none(store: &dyn Store) {
    new_shop(store).await;
    assert_eq!(ok(store.get_shop(Uuid::new_v4()).await), None);
}

/// The kitchen's age colours are kept as patched, and only as patched.
pub async fn a_shop_keeps_the_kitchen_thresholds_it_sets(store: &dyn Store) {
    let shop = new_shop(store).await;
    let patch = ShopPatch {
        kitchen_late_minutes: Some(25),
        ..ShopPatch::default()
    };
    let patched = ok(store.update_shop(shop.shop_id, patch, instant()).await);
    let expected = Shop {
        kitchen_late_minutes: 25,
        ..shop.clone()
    };
    assert_eq!(patched, expected);
    assert_eq!(
        ok(store.get_shop(shop.shop_id).await),
        Some(expected.clone())
    );
    let refused = ShopPatch {
        kitchen_warn_minutes: Some(30),
        ..ShopPatch::default()
    };
    assert!(matches!(
        rejected(store.update_shop(shop.shop_id, refused, instant()).await),
        ordergate_domain::Rejection::Validation(_)
    ));
    assert_eq!(ok(store.get_shop(shop.shop_id).await), Some(expected));
}
