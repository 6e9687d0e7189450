//! The [`Store`] each node serves from: every operation forwarded to
//! [`Pg`], run to its end on a task of its own (see [`PgStore`]).

use std::sync::Arc;

use async_trait::async_trait;
use ordergate_domain::Timestamp;
use ordergate_domain::audit::AuditEntry;
use ordergate_domain::catalog::{Catalog, CatalogInput};
use ordergate_domain::events::Event;
use ordergate_domain::inventory::{InventoryItem, LogEntry, StockChange};
use ordergate_domain::order::admission::Caller;
use ordergate_domain::order::{Order, OrderStatus, StatusChange};
use ordergate_domain::paging::Limit;
use ordergate_domain::printing::Printer;
use ordergate_domain::service::{ServiceRequest, ServiceStatus};
use ordergate_domain::session::{Bill, GuestProof, PinOutcome, PinPolicy, Session, SessionStatus};
use ordergate_domain::shop::{Shop, ShopPatch};
use ordergate_domain::staff::{Account, Device, LoginPolicy, Member, Membership, Role};
use ordergate_domain::table::TableState;
use ordergate_store::{
    Answer, ChangeListener, Claim, GuestGrant, MenuSource, Ordered, Owned, Photo, PlaceOrder,
    PrinterLease, PrinterState, Rendition, Replay, ServiceCall, StaffWrite, Store, StoreResult,
};
use uuid::Uuid;

use crate::PgStore;

#[async_trait]
impl Store for PgStore {
    async fn ping(&self) -> StoreResult<()> {
        self.detached(|pg| async move { pg.ping().await }).await
    }

    async fn create_shop(&self, shop: Shop) -> StoreResult<Shop> {
        self.detached(|pg| async move { pg.create_shop(shop).await })
            .await
    }

    async fn list_shops(&self) -> StoreResult<Vec<Shop>> {
        self.detached(|pg| async move { pg.list_shops().await })
            .await
    }

    async fn get_shop(&self, shop_id: Uuid) -> StoreResult<Option<Shop>> {
        self.detached(move |pg| async move { pg.get_shop(shop_id).await })
            .await
    }

    async fn tables(&self, shop_id: Uuid) -> StoreResult<Vec<TableState>> {
        self.detached(move |pg| async move { pg.tables(shop_id).await })
            .await
    }

    async fn table_by_code(&self, code: &str) -> StoreResult<Option<TableState>> {
        let code = code.to_owned();
        self.detached(move |pg| async move { pg.table_by_code(&code).await })
            .await
    }

    async fn add_photo(&self, photo: Photo) -> StoreResult<()> {
        self.detached(move |pg| async move { pg.add_photo(photo).await })
            .await
    }

    async fn photo_rendition(&self, image_id: Uuid) -> StoreResult<Option<Rendition>> {
        self.detached(move |pg| async move { pg.photo_rendition(image_id).await })
            .await
    }

    async fn update_shop(
        &self,
        shop_id: Uuid,
        patch: ShopPatch,
        now: Timestamp,
    ) -> StoreResult<Shop> {
        self.detached(move |pg| async move { pg.update_shop(shop_id, patch, now).await })
            .await
    }

    async fn put_catalog(
        &self,
        shop_id: Uuid,
        input: CatalogInput,
        expected_version: Option<i64>,
        now: Timestamp,
    ) -> StoreResult<Catalog> {
        self.detached(move |pg| async move {
            pg.put_catalog(shop_id, input, expected_version, now).await
        })
        .await
    }

    async fn get_catalog(&self, shop_id: Uuid) -> StoreResult<Catalog> {
        self.detached(move |pg| async move { pg.get_catalog(shop_id).await })
            .await
    }

    async fn menu_source(&self, shop_id: Uuid) -> StoreResult<MenuSource> {
        self.detached(move |pg| async move { pg.menu_source(shop_id).await })
            .await
    }

    async fn list_inventory(&self, shop_id: Uuid) -> StoreResult<Vec<InventoryItem>> {
        self.detached(move |pg| async move { pg.list_inventory(shop_id).await })
            .await
    }

    async fn update_inventory(
        &self,
        shop_id: Uuid,
        item_id: Uuid,
        change: StockChange,
        actor: &str,
        now: Timestamp,
    ) -> StoreResult<InventoryItem> {
        let actor = actor.to_owned();
        self.detached(move |pg| async move {
            pg.update_inventory(shop_id, item_id, change, &actor, now)
                .await
        })
        .await
    }

    async fn restock(
        &self,
        shop_id: Uuid,
        item_id: Uuid,
        quantity: i64,
        actor: &str,
        now: Timestamp,
    ) -> StoreResult<InventoryItem> {
        let actor = actor.to_owned();
        self.detached(
            move |pg| async move { pg.restock(shop_id, item_id, quantity, &actor, now).await },
        )
        .await
    }

    async fn inventory_log(&self, shop_id: Uuid, limit: Limit) -> StoreResult<Vec<LogEntry>> {
        self.detached(move |pg| async move { pg.inventory_log(shop_id, limit).await })
            .await
    }

    fn new_session_id(&self, shop_id: Uuid) -> Uuid {
        self.pg.new_session_id(shop_id)
    }

    async fn open_session(&self, session: Session) -> StoreResult<Session> {
        self.detached(|pg| async move { pg.open_session(session).await })
            .await
    }

    async fn list_sessions(
        &self,
        shop_id: Uuid,
        status: Option<SessionStatus>,
        limit: Limit,
    ) -> StoreResult<Vec<Session>> {
        self.detached(move |pg| async move { pg.list_sessions(shop_id, status, limit).await })
            .await
    }

    async fn get_session(&self, session_id: Uuid) -> StoreResult<Option<Session>> {
        self.detached(move |pg| async move { pg.get_session(session_id).await })
            .await
    }

    async fn verify_pin(
        &self,
        session_id: Uuid,
        given: Option<&str>,
        policy: PinPolicy,
        now: Timestamp,
    ) -> StoreResult<PinOutcome> {
        let given = given.map(str::to_owned);
        self.detached(move |pg| async move {
            pg.verify_pin(session_id, given.as_deref(), policy, now)
                .await
        })
        .await
    }

    async fn checkout(&self, session_id: Uuid, now: Timestamp) -> StoreResult<Bill> {
        self.detached(move |pg| async move { pg.checkout(session_id, now).await })
            .await
    }

    async fn unlock_pin(&self, session_id: Uuid) -> StoreResult<Session> {
        self.detached(move |pg| async move { pg.unlock_pin(session_id).await })
            .await
    }

    async fn grant_guest_access(&self, grant: GuestGrant) -> StoreResult<PinOutcome> {
        self.detached(|pg| async move { pg.grant_guest_access(grant).await })
            .await
    }

    async fn guest_token_session(
        &self,
        session_id: Uuid,
        token_digest: &str,
        now: Timestamp,
    ) -> StoreResult<Option<Session>> {
        let token_digest = token_digest.to_owned();
        self.detached(move |pg| async move {
            pg.guest_token_session(session_id, &token_digest, now).await
        })
        .await
    }

    async fn staff_write(
        &self,
        write: StaffWrite,
        claim: Option<Claim>,
        now: Timestamp,
    ) -> StoreResult<Answer> {
        let wait = self.in_flight_wait;
        self.detached(move |pg| async move { pg.staff_write(write, claim, now, wait).await })
            .await
    }

    async fn request_service(&self, call: ServiceCall) -> StoreResult<Answer> {
        let wait = self.in_flight_wait;
        self.detached(move |pg| async move { pg.request_service(call, wait).await })
            .await
    }

    async fn acknowledge_service(
        &self,
        request_id: Uuid,
        now: Timestamp,
    ) -> StoreResult<ServiceRequest> {
        self.detached(move |pg| async move { pg.acknowledge_service(request_id, now).await })
            .await
    }

    async fn service_requests(
        &self,
        shop_id: Uuid,
        status: Option<ServiceStatus>,
        limit: Limit,
    ) -> StoreResult<Vec<ServiceRequest>> {
        self.detached(move |pg| async move { pg.service_requests(shop_id, status, limit).await })
            .await
    }

    async fn new_order_id(&self, session_id: Uuid) -> StoreResult<Uuid> {
        self.detached(move |pg| async move { pg.new_order_id(session_id).await })
            .await
    }

    async fn place_order(&self, order: PlaceOrder) -> StoreResult<Ordered> {
        let wait = self.in_flight_wait;
        self.detached(move |pg| async move {
            let guest_claim = match order.caller {
                Caller::Guest { .. } => order.claim.clone(),
                Caller::Staff { .. } => None,
            };
            let ordered = Arc::clone(&pg).place_order(order, wait).await?;
            if let (Some(claim), Ok(_)) = (guest_claim, &ordered.outcome) {
                pg.replays.answered(&claim);
            }
            Ok(ordered)
        })
        .await
    }

    async fn set_order_status(
        &self,
        order_id: Uuid,
        change: StatusChange,
        now: Timestamp,
    ) -> StoreResult<Order> {
        self.detached(move |pg| async move { pg.set_order_status(order_id, change, now).await })
            .await
    }

    async fn shop_orders(
        &self,
        shop_id: Uuid,
        statuses: Vec<OrderStatus>,
        limit: Limit,
    ) -> StoreResult<Vec<Order>> {
        self.detached(move |pg| async move { pg.shop_orders(shop_id, statuses, limit).await })
            .await
    }

    async fn kitchen_pace(
        &self,
        shop_id: Uuid,
        since: Timestamp,
    ) -> StoreResult<Vec<(Timestamp, Timestamp)>> {
        self.detached(move |pg| async move { pg.kitchen_pace(shop_id, since).await })
            .await
    }

    async fn events_after(
        &self,
        shop_id: Uuid,
        after: i64,
        limit: Limit,
    ) -> StoreResult<Vec<Event>> {
        self.detached(move |pg| async move { pg.events_after(shop_id, after, limit).await })
            .await
    }

    async fn last_event_id(&self, shop_id: Uuid) -> StoreResult<i64> {
        self.detached(move |pg| async move { pg.last_event_id(shop_id).await })
            .await
    }

    fn set_change_listener(&self, listener: ChangeListener) {
        self.pg.announcer.set(listener);
    }

    async fn committed_replay(
        &self,
        session_id: Uuid,
        proof: &GuestProof,
        claim: &Claim,
        policy: PinPolicy,
        now: Timestamp,
    ) -> StoreResult<Option<Replay>> {
        let (proof, claim) = (proof.clone(), claim.clone());
        self.detached(move |pg| async move {
            pg.committed_replay(session_id, &proof, &claim, policy, now)
                .await
        })
        .await
    }

    async fn record_audit(&self, entry: AuditEntry) -> StoreResult<()> {
        self.detached(|pg| async move { pg.record_audit(entry).await })
            .await
    }

    async fn audit_log(&self, shop_id: Uuid, limit: Limit) -> StoreResult<Vec<AuditEntry>> {
        self.detached(move |pg| async move { pg.audit_log(shop_id, limit).await })
            .await
    }

    async fn session_orders(&self, session_id: Uuid, limit: Limit) -> StoreResult<Vec<Order>> {
        self.detached(move |pg| async move { pg.session_orders(session_id, limit).await })
            .await
    }

    async fn get_order(&self, order_id: Uuid) -> StoreResult<Option<Order>> {
        self.detached(move |pg| async move { pg.get_order(order_id).await })
            .await
    }

    async fn purge_expired(&self, now: Timestamp) -> StoreResult<u64> {
        self.detached(move |pg| async move { pg.purge_expired(now).await })
            .await
    }

    async fn purge_audit(&self, before: Timestamp, batch: u32) -> StoreResult<u64> {
        self.detached(move |pg| async move { pg.purge_audit(before, batch).await })
            .await
    }

    async fn printers(&self, shop_id: Uuid) -> StoreResult<Vec<PrinterState>> {
        self.detached(move |pg| async move { pg.printers(shop_id).await })
            .await
    }

    async fn all_printers(&self) -> StoreResult<Vec<Printer>> {
        self.detached(|pg| async move { pg.all_printers().await })
            .await
    }

    async fn get_printer(&self, printer_id: Uuid) -> StoreResult<Option<PrinterState>> {
        self.detached(move |pg| async move { pg.get_printer(printer_id).await })
            .await
    }

    async fn delete_printer(&self, printer_id: Uuid) -> StoreResult<()> {
        self.detached(move |pg| async move { pg.delete_printer(printer_id).await })
            .await
    }

    async fn request_reprint(
        &self,
        printer_id: Uuid,
        order_id: Uuid,
        now: Timestamp,
    ) -> StoreResult<i64> {
        self.detached(move |pg| async move { pg.request_reprint(printer_id, order_id, now).await })
            .await
    }

    async fn lease_printer(&self, printer_id: Uuid) -> StoreResult<Option<Box<dyn PrinterLease>>> {
        self.detached(move |pg| async move { pg.lease_printer(printer_id).await })
            .await
    }

    async fn add_member(
        &self,
        shop_id: Uuid,
        username: String,
        new_account: Option<Account>,
        role: Role,
        now: Timestamp,
    ) -> StoreResult<(Member, bool)> {
        self.detached(move |pg| async move {
            pg.add_member(shop_id, username, new_account, role, now)
                .await
        })
        .await
    }

    async fn members(&self, shop_id: Uuid) -> StoreResult<Vec<Member>> {
        self.detached(move |pg| async move { pg.members(shop_id).await })
            .await
    }

    async fn remove_member(&self, shop_id: Uuid, account_id: Uuid) -> StoreResult<()> {
        self.detached(move |pg| async move { pg.remove_member(shop_id, account_id).await })
            .await
    }

    async fn account_by_username(&self, username: &str) -> StoreResult<Option<Account>> {
        let username = username.to_owned();
        self.detached(move |pg| async move { pg.account_by_username(&username).await })
            .await
    }

    async fn count_login_attempt(
        &self,
        subjects: Vec<String>,
        policy: LoginPolicy,
        now: Timestamp,
    ) -> StoreResult<Option<Timestamp>> {
        self.detached(move |pg| async move { pg.count_login_attempt(subjects, policy, now).await })
            .await
    }

    async fn forgive_login_attempt(&self, account: String, address: String) -> StoreResult<()> {
        self.detached(move |pg| async move { pg.forgive_login_attempt(account, address).await })
            .await
    }

    async fn create_staff_token(
        &self,
        token_digest: String,
        account_id: Uuid,
        now: Timestamp,
        expires_at: Timestamp,
    ) -> StoreResult<()> {
        self.detached(move |pg| async move {
            pg.create_staff_token(token_digest, account_id, now, expires_at)
                .await
        })
        .await
    }

    async fn staff_token(
        &self,
        token_digest: &str,
        now: Timestamp,
    ) -> StoreResult<Option<(Account, Vec<Membership>)>> {
        let token_digest = token_digest.to_owned();
        self.detached(move |pg| async move { pg.staff_token(token_digest, now).await })
            .await
    }

    async fn revoke_staff_token(&self, token_digest: &str) -> StoreResult<()> {
        let token_digest = token_digest.to_owned();
        self.detached(move |pg| async move { pg.revoke_staff_token(token_digest).await })
            .await
    }

    async fn change_password(
        &self,
        account_id: Uuid,
        password_hash: String,
        kept: String,
    ) -> StoreResult<()> {
        self.detached(
            move |pg| async move { pg.change_password(account_id, password_hash, kept).await },
        )
        .await
    }

    async fn create_device(&self, device: Device, token_digest: String) -> StoreResult<()> {
        self.detached(move |pg| async move { pg.create_device(device, token_digest).await })
            .await
    }

    async fn devices(&self, shop_id: Uuid) -> StoreResult<Vec<Device>> {
        self.detached(move |pg| async move { pg.devices(shop_id).await })
            .await
    }

    async fn revoke_device(&self, shop_id: Uuid, device_id: Uuid) -> StoreResult<()> {
        self.detached(move |pg| async move { pg.revoke_device(shop_id, device_id).await })
            .await
    }

    async fn device_token(&self, token_digest: &str) -> StoreResult<Option<Device>> {
        let token_digest = token_digest.to_owned();
        self.detached(move |pg| async move { pg.device_token(token_digest).await })
            .await
    }

    async fn shop_of(&self, resource: Owned) -> StoreResult<Option<Uuid>> {
        self.detached(move |pg| async move { pg.shop_of(resource).await })
            .await
    }
}
