//! Builders and assertions the checks share.

use std::collections::BTreeMap;
use std::fmt::Debug;

use chrono::Duration;
use ordergate_domain::audit::{AuditCode, AuditEntry};
use ordergate_domain::catalog::{CatalogInput, MenuItemInput, ToppingInput};
use ordergate_domain::idempotency::{ClientId, Fingerprint, IdempotencyKey, Scope};
use ordergate_domain::inventory::{InventoryItem, InventoryUpdate, StockChange};
use ordergate_domain::language::Languages;
use ordergate_domain::order::admission::{Caller, OrderRules};
use ordergate_domain::order::{
    LineRequest, LineTopping, Order, OrderLine, OrderReceipt, OrderRequest, OrderSource,
    OrderStatus, ValidOrder,
};
use ordergate_domain::paging::Limit;
use ordergate_domain::session::{GuestProof, PinPolicy, Session, SessionStatus};
use ordergate_domain::shop::{Shop, ShopTimeZone};
use ordergate_domain::validation::FieldError;
use ordergate_domain::{Rejection, Timestamp};
use uuid::Uuid;

use crate::{Claim, PlaceOrder, Placed, Store, StoreError, StoreResult, StoredResponse};

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
        name: name.into(),
        currency: "JPY".to_owned(),
        timezone: ShopTimeZone::parse("Asia/Tokyo").expect("a time zone"),
        languages: Languages::default(),
        kitchen_warn_minutes: ordergate_domain::shop::KITCHEN_WARN_MINUTES,
        kitchen_late_minutes: ordergate_domain::shop::KITCHEN_LATE_MINUTES,
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
        name: name.into(),
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
        name: name.into(),
        description: format!("{name}, made fresh").into(),
        category: "Mains".into(),
        price,
        topping_ids,
        max_toppings: None,
        allergens: vec![],
        tags: vec![],
        station: None,
        option_groups: vec![],
        image_id: None,
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
    published_in(store, "Asia/Tokyo").await
}

/// [`published`], in a shop keeping the clock of `timezone`.
pub(super) async fn published_in(store: &dyn Store, timezone: &str) -> Published {
    let shop = ok(store
        .create_shop(Shop {
            timezone: ShopTimeZone::parse(timezone).expect("a time zone"),
            ..shop_named("Sakura Diner", ordergate_domain::now())
        })
        .await);
    let published = Published {
        shop_id: shop.shop_id,
        curry: Uuid::new_v4(),
        ramen: Uuid::new_v4(),
        cheese: Uuid::new_v4(),
    };
    let catalog = ok(store
        .put_catalog(shop.shop_id, published.input(), None, instant())
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
        closed_grace: CLOSED_GRACE,
    }
}

/// How long guests may still reach a checked-out session.
pub(super) const CLOSED_GRACE: Duration = Duration::minutes(30);

pub(super) const PIN: &str = "012345";
pub(super) const WRONG_PIN: &str = "999999";

pub(super) async fn pin_session(store: &dyn Store) -> Session {
    let shop = new_shop(store).await;
    ok(store
        .open_session(session_at(shop.shop_id, "T1", PIN, instant()))
        .await)
}

// ---------------------------------------------------------------------------
// The order path.

/// The default rules of the contract: 5 PIN failures lock for 300 s, a
/// 30 s duplicate window, a 2 s client cooldown, 60 guest orders per
/// session per 10 minutes, and a table that is free.
pub(super) fn order_rules() -> OrderRules {
    OrderRules {
        pin_policy: policy(5, secs(300)),
        duplicate_window: secs(30),
        cooldown: secs(2),
        session_order_limit: 60,
        busy_deadline: std::time::Instant::now() + std::time::Duration::from_secs(5),
    }
}

/// The contract's rules with the duplicate-payload and cooldown rules off,
/// for checks that place several orders from one client in quick succession.
pub(super) fn lenient_rules() -> OrderRules {
    OrderRules {
        duplicate_window: Duration::zero(),
        cooldown: Duration::zero(),
        ..order_rules()
    }
}

/// A deadline that has already passed: the order gave up waiting for its table.
pub(super) fn past_deadline() -> std::time::Instant {
    std::time::Instant::now()
        .checked_sub(std::time::Duration::from_secs(1))
        .expect("an instant one second ago")
}

pub(super) const CLIENT: &str = "phone-1";
pub(super) const OTHER_CLIENT: &str = "phone-2";

pub(super) fn client_id(id: &str) -> ClientId {
    ClientId::parse(Some(id)).expect("a valid client id")
}

/// A guest at the table who knows its PIN.
pub(super) fn guest(client: &str) -> Caller {
    guest_with_pin(client, Some(PIN))
}

/// The right PIN, as a guest proves it.
pub(super) fn pin_proof() -> GuestProof {
    GuestProof::Pin(Some(PIN.to_owned()))
}

pub(super) fn guest_with_pin(client: &str, pin: Option<&str>) -> Caller {
    Caller::Guest {
        proof: GuestProof::Pin(pin.map(str::to_owned)),
        client_id: client_id(client),
    }
}

pub(super) fn line(menu_item_id: Uuid, quantity: i64, toppings: &[Uuid]) -> LineRequest {
    LineRequest {
        menu_item_id,
        quantity,
        topping_ids: toppings.to_vec(),
        note: None,
        option_ids: vec![],
    }
}

pub(super) fn order_of(lines: Vec<LineRequest>, note: &str, allow_repeat: bool) -> ValidOrder {
    OrderRequest {
        items: lines,
        note: Some(note.to_owned()),
        allow_repeat,
    }
    .validate()
    .expect("a valid order request")
}

/// `quantity` × `item`, nothing else.
pub(super) fn simple_order(item: Uuid, quantity: i64) -> ValidOrder {
    order_of(vec![line(item, quantity, &[])], "", false)
}

/// When the claims of the order checks expire: a day after [`instant`].
pub(super) fn claim_expiry() -> Timestamp {
    instant() + Duration::days(1)
}

/// A fresh key for `order`, scoped to the guest's session.
pub(super) fn guest_claim(session_id: Uuid, order: &ValidOrder) -> Claim {
    Claim {
        scope: Scope::session(session_id),
        key: IdempotencyKey::generate(),
        fingerprint: order.fingerprint.clone(),
        expires_at: claim_expiry(),
    }
}

/// An order's answer as the server renders it (201, the order with its
/// replay flag, its location): what stores keep for replays.
pub fn receipt(order: &Order) -> StoredResponse {
    StoredResponse {
        status: 201,
        body: serde_json::to_string(&OrderReceipt {
            order,
            idempotent_replay: false,
        })
        .expect("an order serialises"),
        location: Some(format!("/api/v1/orders/{}", order.order_id)),
    }
}

/// A guest order POST with a fresh key, under the contract's default rules.
pub(super) fn guest_order(
    session_id: Uuid,
    client: &str,
    order: ValidOrder,
    now: Timestamp,
) -> PlaceOrder {
    PlaceOrder {
        order_id: Uuid::now_v7(),
        session_id,
        caller: guest(client),
        claim: Some(guest_claim(session_id, &order)),
        order,
        rules: order_rules(),
        receipt,
        request_id: format!("req-{}", Uuid::new_v4()),
        now,
    }
}

/// The same request sent again: same claim and body, a new order id and
/// request id as a retry would have, at `now`.
pub(super) fn retry(cmd: &PlaceOrder, now: Timestamp) -> PlaceOrder {
    PlaceOrder {
        order_id: Uuid::now_v7(),
        request_id: format!("req-{}", Uuid::new_v4()),
        rules: OrderRules {
            busy_deadline: order_rules().busy_deadline,
            ..cmd.rules
        },
        now,
        ..cmd.clone()
    }
}

/// A staff order without an idempotency key.
pub(super) fn staff_order(session_id: Uuid, order: ValidOrder, now: Timestamp) -> PlaceOrder {
    PlaceOrder {
        order_id: Uuid::now_v7(),
        session_id,
        caller: Caller::Staff {
            actor: STAFF.to_owned(),
        },
        claim: None,
        order,
        rules: order_rules(),
        receipt,
        request_id: format!("req-{}", Uuid::new_v4()),
        now,
    }
}

/// A published shop ([`published`]) with table `T4` open since [`instant`].
pub(super) struct Table {
    pub(super) menu: Published,
    pub(super) session: Session,
}

pub(super) async fn open_table(store: &dyn Store, shop_id: Uuid, label: &str) -> Session {
    ok(store
        .open_session(session_at(shop_id, label, PIN, instant()))
        .await)
}

pub(super) async fn table(store: &dyn Store) -> Table {
    let menu = published(store).await;
    let session = open_table(store, menu.shop_id, "T4").await;
    Table { menu, session }
}

/// A priced line as the catalog of [`published`] prices it.
pub(super) fn priced(
    menu_item_id: Uuid,
    name: &str,
    price: i64,
    quantity: i64,
    toppings: &[(Uuid, &str, i64)],
) -> OrderLine {
    let toppings: Vec<LineTopping> = toppings
        .iter()
        .map(|&(topping_id, name, price)| LineTopping {
            topping_id,
            name: name.into(),
            price,
        })
        .collect();
    let unit_price = price + toppings.iter().map(|t| t.price).sum::<i64>();
    OrderLine {
        menu_item_id,
        name: name.into(),
        unit_price,
        quantity,
        toppings,
        options: vec![],
        line_total: unit_price * quantity,
        note: None,
    }
}

/// The order a placement is expected to have stored.
pub(super) fn placed_order(
    cmd: &PlaceOrder,
    session: &Session,
    ticket_number: i64,
    items: Vec<OrderLine>,
) -> Order {
    let (source, client_id) = match &cmd.caller {
        Caller::Guest { client_id, .. } => {
            (OrderSource::Guest, Some(client_id.as_str().to_owned()))
        }
        Caller::Staff { .. } => (OrderSource::Staff, None),
    };
    Order {
        order_id: cmd.order_id,
        shop_id: session.shop_id,
        session_id: session.session_id,
        table_label: session.table_label.clone(),
        ticket_number,
        status: OrderStatus::Placed,
        source,
        client_id,
        total: items.iter().map(|l| l.line_total).sum(),
        items,
        note: cmd.order.note.clone(),
        created_at: cmd.now,
        version: 1,
    }
}

#[track_caller]
pub(super) fn placed(result: StoreResult<Placed>) -> Placed {
    let placed = ok(result);
    assert!(!placed.replayed, "expected a fresh placement, got a replay");
    placed
}

#[track_caller]
pub(super) fn replayed(result: StoreResult<Placed>) -> Placed {
    let placed = ok(result);
    assert!(placed.replayed, "expected a replay, got a fresh placement");
    placed
}

/// Asserts the response of an order POST: 201, its `Location`, and a body
/// that is the order plus `"idempotentReplay"`.
#[track_caller]
pub(super) fn assert_receipt(response: &StoredResponse, order: &Order, replay: bool) {
    assert_eq!(response.status, 201, "status of {response:?}");
    assert_eq!(
        response.location.as_deref(),
        Some(format!("/api/v1/orders/{}", order.order_id).as_str())
    );
    let body: serde_json::Value = serde_json::from_str(&response.body).expect("a JSON body");
    let receipt = OrderReceipt {
        order,
        idempotent_replay: replay,
    };
    let expected = serde_json::to_value(receipt).expect("serialisable");
    assert_eq!(body, expected, "body {}", response.body);
}

/// The order, as the kitchen, the guest and the bill see it, is in the store.
pub(super) async fn assert_stored(store: &dyn Store, order: &Order) {
    assert_eq!(
        ok(store.get_order(order.order_id).await).as_ref(),
        Some(order)
    );
}

pub(super) fn order_ids(orders: &[Order]) -> Vec<Uuid> {
    orders.iter().map(|o| o.order_id).collect()
}

pub(super) async fn session_order_ids(store: &dyn Store, session_id: Uuid) -> Vec<Uuid> {
    order_ids(&ok(store.session_orders(session_id, limit(500)).await))
}

pub(super) async fn stock_of(store: &dyn Store, shop_id: Uuid, item_id: Uuid) -> Option<i64> {
    inventory_of(store, shop_id, item_id).await.level.stock
}

pub(super) async fn audit_rows(store: &dyn Store, shop_id: Uuid) -> Vec<AuditEntry> {
    ok(store.audit_log(shop_id, limit(500)).await)
}

/// The audit row of a refused order POST.
pub(super) fn refusal_row(cmd: &PlaceOrder, code: &str, status: u16) -> AuditEntry {
    AuditEntry {
        at: cmd.now,
        session_id: cmd.session_id,
        request_id: cmd.request_id.clone(),
        client_id: caller_client(cmd),
        status,
        code: AuditCode::parse(code).expect("an audit code"),
        idempotent_replay: false,
        order_id: None,
        actor: cmd.caller.staff_actor().map(str::to_owned),
    }
}

/// The audit row of an order POST that placed (or replayed) `order_id`.
pub(super) fn success_row(cmd: &PlaceOrder, order_id: Uuid, replay: bool) -> AuditEntry {
    AuditEntry {
        at: cmd.now,
        session_id: cmd.session_id,
        request_id: cmd.request_id.clone(),
        client_id: caller_client(cmd),
        status: 201,
        code: if replay {
            AuditCode::Replayed
        } else {
            AuditCode::Accepted
        },
        idempotent_replay: replay,
        order_id: Some(order_id),
        actor: cmd.caller.staff_actor().map(str::to_owned),
    }
}

fn caller_client(cmd: &PlaceOrder) -> Option<String> {
    match &cmd.caller {
        Caller::Guest { client_id, .. } => Some(client_id.as_str().to_owned()),
        Caller::Staff { .. } => None,
    }
}

/// A staff claim expiring a day from the wall clock: `idempotent` takes no
/// `now`, so a backend judges staff claims by its own clock.
pub(super) fn staff_claim(path: &str, fingerprint: &str) -> Claim {
    Claim {
        scope: Scope::staff_post(path),
        key: IdempotencyKey::generate(),
        fingerprint: Fingerprint::of(fingerprint),
        expires_at: ordergate_domain::now() + Duration::days(1),
    }
}

/// `place_order` with its refusals as errors, the shape the checks assert on.
pub(super) trait PlaceOrderExt {
    fn place(&self, order: PlaceOrder) -> impl Future<Output = StoreResult<Placed>> + Send;
}

impl PlaceOrderExt for dyn Store {
    async fn place(&self, order: PlaceOrder) -> StoreResult<Placed> {
        let ordered = self.place_order(order).await?;
        ordered.outcome.map_err(StoreError::Rejected)
    }
}
