//! A throwaway schema per test, in the database `ORDERGATE_TEST_DATABASE_URL`
//! names; without that variable the PostgreSQL tests skip, saying so.

#![allow(dead_code)] // each test binary uses its own part of this module

use std::io::Write;

use ordergate_store_postgres::{ConnectOptions, PgStore};
use sqlx::{Connection, Executor, PgConnection};
use uuid::Uuid;

pub const URL_VAR: &str = "ORDERGATE_TEST_DATABASE_URL";

/// The test database's URL, or `None` after telling stderr the test is skipped.
pub fn database_url() -> Option<String> {
    match std::env::var(URL_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            let test = std::thread::current()
                .name()
                .unwrap_or("a PostgreSQL test")
                .to_owned();
            // Straight to stderr: the test harness captures `eprintln!` of
            // passing tests, and a skip must not pass silently.
            let _ = writeln!(
                std::io::stderr(),
                "{test}: skipped: set {URL_VAR}=postgres://postgres@127.0.0.1:5432/test \
                 to run the PostgreSQL conformance suite"
            );
            None
        }
    }
}

/// A schema of its own, dropped (with everything in it) when this goes.
pub struct Schema {
    url: String,
    pub name: String,
}

impl Schema {
    pub async fn create(url: &str) -> Schema {
        let name = format!("og_{}", Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(url)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {URL_VAR}: {e}"));
        admin
            .execute(sqlx::AssertSqlSafe(format!("create schema {name}")))
            .await
            .expect("create a test schema");
        let _ = admin.close().await;
        Schema {
            url: url.to_owned(),
            name,
        }
    }

    /// The schema `name` that something else made in the database `url`
    /// names: dropped, like one this made, when this goes.
    pub fn adopt(url: &str, name: &str) -> Schema {
        Schema {
            url: url.to_owned(),
            name: name.to_owned(),
        }
    }

    /// Options for connections that work inside this schema.
    pub fn options(&self) -> ConnectOptions {
        self.url
            .parse::<ConnectOptions>()
            .expect("a valid PostgreSQL URL")
            .options([("search_path", self.name.as_str())])
    }

    pub async fn store(&self) -> PgStore {
        PgStore::connect_with(self.options())
            .await
            .expect("connect the PostgreSQL store")
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        // Drop runs inside the test's runtime, where blocking on another
        // future is not allowed: a thread with a runtime of its own does it.
        let (url, name) = (self.url.clone(), self.name.clone());
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime to drop the test schema");
            runtime.block_on(async move {
                let mut admin = PgConnection::connect(&url).await?;
                admin
                    .execute(sqlx::AssertSqlSafe(format!(
                        "drop schema if exists {name} cascade"
                    )))
                    .await?;
                admin.close().await
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            let _ = writeln!(
                std::io::stderr(),
                "could not drop test schema {}",
                self.name
            );
        }
    }
}

/// A store in a fresh schema, or `None` (skipped) without a test database.
pub async fn fresh_store() -> Option<(PgStore, Schema)> {
    let url = database_url()?;
    let schema = Schema::create(&url).await;
    let store = schema.store().await;
    Some((store, schema))
}

// ---------------------------------------------------------------------------
// A shop to order from, for the PostgreSQL-specific tests.

use std::time::{Duration, Instant};

use ordergate_domain::Timestamp;
use ordergate_domain::catalog::{CatalogInput, MenuItemInput};
use ordergate_domain::idempotency::{ClientId, IdempotencyKey, Scope};
use ordergate_domain::inventory::InventoryUpdate;
use ordergate_domain::order::admission::{Caller, OrderRules};
use ordergate_domain::order::{LineRequest, OrderRequest, ValidOrder};
use ordergate_domain::session::{GuestProof, PinPolicy, Session, SessionStatus};
use ordergate_domain::shop::Shop;
use ordergate_store::{Claim, PlaceOrder, Store};

pub const PIN: &str = "012345";

/// A published shop whose one menu item, curry, has `stock` tracked units.
pub async fn curry_shop(store: &dyn Store, stock: i64) -> (Uuid, Uuid) {
    let now = ordergate_domain::now();
    let shop = Shop {
        shop_id: Uuid::new_v4(),
        name: "Sakura Diner".into(),
        currency: "JPY".into(),
        timezone: ordergate_domain::shop::ShopTimeZone::parse("Asia/Tokyo").expect("a time zone"),
        languages: Default::default(),
        kitchen_warn_minutes: ordergate_domain::shop::KITCHEN_WARN_MINUTES,
        kitchen_late_minutes: ordergate_domain::shop::KITCHEN_LATE_MINUTES,
        created_at: now,
    };
    store.create_shop(shop.clone()).await.expect("create shop");
    let curry = Uuid::new_v4();
    let input = CatalogInput {
        toppings: vec![],
        items: vec![MenuItemInput {
            menu_item_id: Some(curry),
            name: "Curry".into(),
            description: Default::default(),
            category: "Mains".into(),
            price: 900,
            topping_ids: vec![],
            max_toppings: None,
            allergens: vec![],
            tags: vec![],
            station: None,
            option_groups: vec![],
            image_id: None,
        }],
    };
    store
        .put_catalog(shop.shop_id, input, None, now)
        .await
        .expect("publish the catalog");
    let change = InventoryUpdate {
        stock: Some(Some(stock)),
        sold_out: None,
        sold_out_until: None,
    }
    .validate(now)
    .expect("a valid stock change");
    store
        .update_inventory(shop.shop_id, curry, change, "staff", now)
        .await
        .expect("set the stock");
    (shop.shop_id, curry)
}

pub async fn open_table(store: &dyn Store, shop_id: Uuid, label: &str) -> Session {
    let session = Session {
        session_id: Uuid::new_v4(),
        shop_id,
        table_label: label.to_owned(),
        pin: PIN.to_owned(),
        status: SessionStatus::Active,
        opened_at: ordergate_domain::now(),
        closed_at: None,
        pin_failures: 0,
        pin_locked_until: None,
    };
    store.open_session(session).await.expect("open a table")
}

/// A cart of `quantity` of one `item`.
pub fn cart(item: Uuid, quantity: i64) -> ValidOrder {
    OrderRequest {
        items: vec![LineRequest {
            menu_item_id: item,
            quantity,
            topping_ids: vec![],
            note: None,
            option_ids: vec![],
        }],
        note: None,
        allow_repeat: false,
    }
    .validate()
    .expect("a valid order")
}

/// A guest's order of one `item` under a fresh key, willing to wait `wait`
/// for its table.
pub fn guest_order(session_id: Uuid, client: &str, item: Uuid, wait: Duration) -> PlaceOrder {
    let order = cart(item, 1);
    let now: Timestamp = ordergate_domain::now();
    PlaceOrder {
        order_id: Uuid::now_v7(),
        session_id,
        caller: Caller::Guest {
            proof: GuestProof::Pin(Some(PIN.to_owned())),
            client_id: ClientId::parse(Some(client)).expect("a valid client id"),
        },
        claim: Some(Claim {
            scope: Scope::session(session_id),
            key: IdempotencyKey::generate(),
            fingerprint: order.fingerprint.clone(),
            expires_at: now + chrono::Duration::days(1),
        }),
        order,
        receipt: ordergate_store::conformance::receipt,
        rules: OrderRules {
            pin_policy: PinPolicy {
                max_failures: 5,
                lockout: chrono::Duration::seconds(300),
                closed_grace: chrono::Duration::minutes(30),
            },
            duplicate_window: chrono::Duration::zero(),
            cooldown: chrono::Duration::zero(),
            session_order_limit: 0,
            busy_deadline: Instant::now() + wait,
        },
        request_id: format!("req-{}", Uuid::new_v4()),
        now,
    }
}
