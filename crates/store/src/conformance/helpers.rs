//! Builders and assertions the checks share.

use std::collections::BTreeMap;
use std::fmt::Debug;

use chrono::Duration;
use ordergate_domain::catalog::{CatalogInput, MenuItemInput, ToppingInput};
use ordergate_domain::inventory::{InventoryItem, InventoryUpdate, StockChange};
use ordergate_domain::paging::Limit;
use ordergate_domain::session::{PinPolicy, Session, SessionStatus};
use ordergate_domain::shop::Shop;
use ordergate_domain::validation::FieldError;
use ordergate_domain::{Rejection, Timestamp};
use uuid::Uuid;

use crate::{Store, StoreError, StoreResult};

pub(super) const STAFF: &str = "staff";

pub(super) fn limit(n: u32) -> Limit {
    Limit::parse(Some(&n.to_string()), Limit::DEFAULT).expect("a limit between 1 and 500")
}

/// A fixed instant with a non-zero millisecond part, so a store that keeps
/// only seconds is caught.
pub(super) fn instant() -> Timestamp {
    Timestamp::from_timestamp_millis(1_718_000_000_123).expect("valid instant")
}

pub(super) fn ms(n: i64) -> Duration {
    Duration::milliseconds(n)
}

pub(super) fn secs(n: i64) -> Duration {
    Duration::seconds(n)
}

#[track_caller]
pub(super) fn ok<T: Debug>(result: StoreResult<T>) -> T {
    match result {
        Ok(value) => value,
        Err(e) => panic!("expected success, got {e:?}"),
    }
}

#[track_caller]
pub(super) fn rejected<T: Debug>(result: StoreResult<T>) -> Rejection {
    match result {
        Err(StoreError::Rejected(rejection)) => rejection,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[track_caller]
pub(super) fn validation_fields<T: Debug>(result: StoreResult<T>) -> Vec<String> {
    match rejected(result) {
        Rejection::Validation(errors) => errors.into_iter().map(|e: FieldError| e.field).collect(),
        other => panic!("expected a validation rejection, got {other:?}"),
    }
}

pub(super) fn shop_named(name: &str, created_at: Timestamp) -> Shop {
    Shop {
        shop_id: Uuid::new_v4(),
        name: name.to_owned(),
        currency: "JPY".to_owned(),
        timezone: "Asia/Tokyo".to_owned(),
        created_at,
    }
}

pub(super) async fn new_shop(store: &dyn Store) -> Shop {
    ok(store
        .create_shop(shop_named("Sakura Diner", ordergate_domain::now()))
        .await)
}

pub(super) fn topping(id: Option<Uuid>, name: &str, price: i64) -> ToppingInput {
    ToppingInput {
        topping_id: id,
        name: name.to_owned(),
        price,
    }
}

pub(super) fn item(
    id: Option<Uuid>,
    name: &str,
    price: i64,
    topping_ids: Vec<Uuid>,
) -> MenuItemInput {
    MenuItemInput {
        menu_item_id: id,
        name: name.to_owned(),
        description: format!("{name}, made fresh"),
        category: "Mains".to_owned(),
        price,
        topping_ids,
        max_toppings: None,
    }
}

/// A published shop with a menu item `curry` (which may take `cheese`), a
/// second menu item `ramen`, and a topping `cheese`.
pub(super) struct Published {
    pub(super) shop_id: Uuid,
    pub(super) curry: Uuid,
    pub(super) ramen: Uuid,
    pub(super) cheese: Uuid,
}

impl Published {
    pub(super) fn input(&self) -> CatalogInput {
        CatalogInput {
            toppings: vec![topping(Some(self.cheese), "Cheese", 100)],
            items: vec![
                item(Some(self.curry), "Curry", 900, vec![self.cheese]),
                item(Some(self.ramen), "Ramen", 850, vec![]),
            ],
        }
    }
}

pub(super) async fn published(store: &dyn Store) -> Published {
    let shop = new_shop(store).await;
    let published = Published {
        shop_id: shop.shop_id,
        curry: Uuid::new_v4(),
        ramen: Uuid::new_v4(),
        cheese: Uuid::new_v4(),
    };
    let catalog = ok(store
        .put_catalog(shop.shop_id, published.input(), instant())
        .await);
    assert_eq!(catalog.version, 1);
    published
}

pub(super) fn set_stock(stock: Option<i64>, now: Timestamp) -> StockChange {
    InventoryUpdate {
        stock: Some(stock),
        sold_out: None,
        sold_out_until: None,
    }
    .validate(now)
    .expect("valid stock change")
}

pub(super) fn mark_sold_out(
    sold_out: bool,
    until: Option<Timestamp>,
    now: Timestamp,
) -> StockChange {
    InventoryUpdate {
        stock: None,
        sold_out: Some(sold_out),
        sold_out_until: until.map(Some),
    }
    .validate(now)
    .expect("valid 86 change")
}

pub(super) async fn inventory_of(store: &dyn Store, shop_id: Uuid, item_id: Uuid) -> InventoryItem {
    ok(store.list_inventory(shop_id).await)
        .into_iter()
        .find(|i| i.item_id == item_id)
        .unwrap_or_else(|| panic!("{item_id} missing from the inventory"))
}

pub(super) fn by_id(items: Vec<InventoryItem>) -> BTreeMap<Uuid, InventoryItem> {
    items.into_iter().map(|i| (i.item_id, i)).collect()
}

pub(super) fn session_at(
    shop_id: Uuid,
    table_label: &str,
    pin: &str,
    opened_at: Timestamp,
) -> Session {
    Session {
        session_id: Uuid::new_v4(),
        shop_id,
        table_label: table_label.to_owned(),
        pin: pin.to_owned(),
        status: SessionStatus::Active,
        opened_at,
        closed_at: None,
        pin_failures: 0,
        pin_locked_until: None,
    }
}

pub(super) fn ids(sessions: &[Session]) -> Vec<Uuid> {
    sessions.iter().map(|s| s.session_id).collect()
}

pub(super) fn policy(max_failures: u32, lockout: Duration) -> PinPolicy {
    PinPolicy {
        max_failures,
        lockout,
    }
}

pub(super) const PIN: &str = "012345";
pub(super) const WRONG_PIN: &str = "999999";

pub(super) async fn pin_session(store: &dyn Store) -> Session {
    let shop = new_shop(store).await;
    ok(store
        .open_session(session_at(shop.shop_id, "T1", PIN, instant()))
        .await)
}
