//! The [`Store`] the server calls: each operation one job on the writer
//! thread (writes) or one read transaction on a reader (reads).

use std::sync::Arc;

use async_trait::async_trait;
use ordergate_domain::audit::AuditEntry;
use ordergate_domain::catalog::{Catalog, CatalogInput};
use ordergate_domain::events::Event;
use ordergate_domain::inventory::{InventoryItem, LogEntry, StockChange};
use ordergate_domain::order::admission::KeyLookup;
use ordergate_domain::order::{Order, OrderStatus, StatusChange};
use ordergate_domain::paging::Limit;
use ordergate_domain::printing::{Printer, PrinterProgress};
use ordergate_domain::service::{ServiceRequest, ServiceStatus};
use ordergate_domain::session::{Bill, GuestProof, PinOutcome, PinPolicy, Session, SessionStatus};
use ordergate_domain::shop::{Shop, ShopPatch};
use ordergate_domain::staff::{Account, Device, LoginPolicy, Member, Membership, Role};
use ordergate_domain::table::TableState;
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::{
    Answer, ChangeListener, Claim, GuestGrant, MenuSource, Ordered, Owned, Photo, PlaceOrder,
    PrintStep, PrinterLease, PrinterState, Rendition, Replay, ServiceCall, StaffWrite, Store,
    StoreResult,
};
use uuid::Uuid;

use crate::worker::Writer;
use crate::{
    SqliteStore, audit, catalog, events, idempotency, inventory, orders, photos, placement,
    printers, service, sessions, shops, staff, status, tables, write_audit_backlog,
};

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> StoreResult<()> {
        // A read still succeeds on a file that can no longer be written:
        // ready means an order can commit, so the check is a durable write
        // that changes nothing (the schema version, rewritten as it is).
        self.write(|conn| {
            let version: i64 = conn.query_row("pragma user_version", [], |row| row.get(0))?;
            conn.pragma_update(None, "user_version", version)?;
            Ok(())
        })
        .await
    }

    async fn create_shop(&self, shop: Shop) -> StoreResult<Shop> {
        self.write(move |tx| {
            shops::insert(tx, &shop)?;
            Ok(shop)
        })
        .await
    }

    async fn list_shops(&self) -> StoreResult<Vec<Shop>> {
        self.read(|tx| shops::list(tx)).await
    }

    async fn get_shop(&self, shop_id: Uuid) -> StoreResult<Option<Shop>> {
        self.read(move |tx| shops::find(tx, shop_id)).await
    }

    async fn update_shop(
        &self,
        shop_id: Uuid,
        patch: ShopPatch,
        now: Timestamp,
    ) -> StoreResult<Shop> {
        self.write(move |tx| shops::update(tx, shop_id, patch, now))
            .await
    }

    async fn put_catalog(
        &self,
        shop_id: Uuid,
        input: CatalogInput,
        expected_version: Option<i64>,
        now: Timestamp,
    ) -> StoreResult<Catalog> {
        self.write(move |tx| catalog::put(tx, shop_id, input, expected_version, now))
            .await
    }

    async fn add_photo(&self, photo: Photo) -> StoreResult<()> {
        self.write(move |tx| photos::insert(tx, &photo)).await
    }

    async fn photo_rendition(&self, image_id: Uuid) -> StoreResult<Option<Rendition>> {
        self.read(move |tx| photos::rendition(tx, image_id)).await
    }

    async fn get_catalog(&self, shop_id: Uuid) -> StoreResult<Catalog> {
        self.read(move |tx| {
            shops::require(tx, shop_id)?;
            catalog::get(tx, shop_id)
        })
        .await
    }

    async fn menu_source(&self, shop_id: Uuid) -> StoreResult<MenuSource> {
        self.read(move |tx| {
            let shop = shops::require(tx, shop_id)?;
            let catalog = catalog::get(tx, shop_id)?;
            if !catalog.is_published() {
                return Err(Rejection::CatalogNotReady.into());
            }
            Ok(MenuSource {
                shop,
                catalog,
                inventory: inventory::list(tx, shop_id)?,
            })
        })
        .await
    }

    async fn list_inventory(&self, shop_id: Uuid) -> StoreResult<Vec<InventoryItem>> {
        self.read(move |tx| {
            shops::require(tx, shop_id)?;
            inventory::list(tx, shop_id)
        })
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
        self.write(move |tx| inventory::update(tx, shop_id, item_id, &change, &actor, now))
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
        self.write(move |tx| inventory::restock(tx, shop_id, item_id, quantity, &actor, now))
            .await
    }

    async fn inventory_log(&self, shop_id: Uuid, limit: Limit) -> StoreResult<Vec<LogEntry>> {
        self.read(move |tx| inventory::log(tx, shop_id, limit))
            .await
    }

    async fn tables(&self, shop_id: Uuid) -> StoreResult<Vec<TableState>> {
        self.read(move |tx| tables::list(tx, shop_id)).await
    }

    async fn table_by_code(&self, code: &str) -> StoreResult<Option<TableState>> {
        let code = code.to_owned();
        self.read(move |tx| tables::by_code(tx, &code)).await
    }

    async fn open_session(&self, session: Session) -> StoreResult<Session> {
        self.write(move |tx| {
            sessions::open(tx, &session)?;
            Ok(session)
        })
        .await
    }

    async fn list_sessions(
        &self,
        shop_id: Uuid,
        status: Option<SessionStatus>,
        limit: Limit,
    ) -> StoreResult<Vec<Session>> {
        self.read(move |tx| sessions::list(tx, shop_id, status, limit))
            .await
    }

    async fn get_session(&self, session_id: Uuid) -> StoreResult<Option<Session>> {
        self.read(move |tx| sessions::find(tx, session_id)).await
    }

    async fn verify_pin(
        &self,
        session_id: Uuid,
        given: Option<&str>,
        policy: PinPolicy,
        now: Timestamp,
    ) -> StoreResult<PinOutcome> {
        let given = given.map(str::to_owned);
        self.write(move |tx| sessions::verify_pin(tx, session_id, given.as_deref(), policy, now))
            .await
    }

    async fn checkout(&self, session_id: Uuid, now: Timestamp) -> StoreResult<Bill> {
        self.write(move |tx| sessions::checkout(tx, session_id, now))
            .await
    }

    async fn unlock_pin(&self, session_id: Uuid) -> StoreResult<Session> {
        self.write(move |tx| sessions::unlock_pin(tx, session_id))
            .await
    }

    async fn grant_guest_access(&self, grant: GuestGrant) -> StoreResult<PinOutcome> {
        self.write(move |tx| sessions::grant_guest_access(tx, &grant))
            .await
    }

    async fn guest_token_session(
        &self,
        session_id: Uuid,
        token_digest: &str,
        now: Timestamp,
    ) -> StoreResult<Option<Session>> {
        let token_digest = token_digest.to_owned();
        self.read(move |tx| sessions::guest_token_session(tx, session_id, &token_digest, now))
            .await
    }

    async fn staff_write(
        &self,
        write: StaffWrite,
        claim: Option<Claim>,
        now: Timestamp,
    ) -> StoreResult<Answer> {
        self.write(move |conn| {
            if let Some(claim) = &claim {
                match claim.judge(idempotency::record(conn, claim, now)?, now) {
                    KeyLookup::Absent => {}
                    KeyLookup::Replay(response) => return Ok(Answer::Replayed(response)),
                    KeyLookup::Mismatch => return Err(Rejection::IdempotencyKeyReused.into()),
                }
            }
            let (shop_id, response) = match write {
                StaffWrite::CreateShop(shop, render) => {
                    shops::insert(conn, &shop)?;
                    (shop.shop_id, render(&shop))
                }
                StaffWrite::CreateTable(table, render) => {
                    tables::insert(conn, &table)?;
                    (table.shop_id, render(&table))
                }
                StaffWrite::CreatePrinter(printer, render) => {
                    printers::insert(conn, &printer)?;
                    (printer.shop_id, render(&printer))
                }
                StaffWrite::OpenSession(session, render) => {
                    sessions::open(conn, &session)?;
                    (session.shop_id, render(&session))
                }
                StaffWrite::Restock {
                    shop_id,
                    item_id,
                    quantity,
                    actor,
                    now,
                    render,
                } => {
                    let item = inventory::restock(conn, shop_id, item_id, quantity, &actor, now)?;
                    (shop_id, render(&item))
                }
                StaffWrite::Checkout {
                    session_id,
                    now,
                    render,
                } => {
                    let bill = sessions::checkout(conn, session_id, now)?;
                    (sessions::shop_of(conn, session_id)?, render(&bill))
                }
                StaffWrite::SetOrderStatus {
                    order_id,
                    change,
                    now,
                    render,
                } => {
                    let order = status::set_status(conn, order_id, &change, now)?;
                    (order.shop_id, render(&order))
                }
                StaffWrite::RecallOrder {
                    order_id,
                    recall,
                    now,
                    render,
                } => {
                    let order = status::recall(conn, order_id, &recall, now)?;
                    (order.shop_id, render(&order))
                }
            };
            if let Some(claim) = &claim {
                idempotency::complete(conn, claim, Some(shop_id), &response, now)?;
            }
            Ok(Answer::Fresh(response))
        })
        .await
    }

    async fn request_service(&self, call: ServiceCall) -> StoreResult<Answer> {
        self.write(move |conn| service::request(conn, call)).await
    }

    async fn acknowledge_service(
        &self,
        request_id: Uuid,
        now: Timestamp,
    ) -> StoreResult<ServiceRequest> {
        self.write(move |conn| service::acknowledge(conn, request_id, now))
            .await
    }

    async fn service_requests(
        &self,
        shop_id: Uuid,
        status: Option<ServiceStatus>,
        limit: Limit,
    ) -> StoreResult<Vec<ServiceRequest>> {
        self.read(move |tx| service::list(tx, shop_id, status, limit))
            .await
    }

    async fn place_order(&self, order: PlaceOrder) -> StoreResult<Ordered> {
        let claim = order.claim.clone();
        let replays = Arc::clone(&self.replays);
        let (ordered, seen) = self
            .write_repeatable(move |conn| placement::place(conn, &order, &replays))
            .await?;
        if let (Some(claim), Some(seen), Ok(placed)) = (claim, seen, &ordered.outcome) {
            self.replays.remember(&claim, ordered.shop_id, placed, seen);
        }
        Ok(ordered)
    }

    async fn set_order_status(
        &self,
        order_id: Uuid,
        change: StatusChange,
        now: Timestamp,
    ) -> StoreResult<Order> {
        self.write(move |conn| status::set_status(conn, order_id, &change, now))
            .await
    }

    async fn shop_orders(
        &self,
        shop_id: Uuid,
        statuses: Vec<OrderStatus>,
        limit: Limit,
    ) -> StoreResult<Vec<Order>> {
        self.read(move |tx| orders::of_shop(tx, shop_id, &statuses, limit))
            .await
    }

    async fn kitchen_pace(
        &self,
        shop_id: Uuid,
        since: Timestamp,
    ) -> StoreResult<Vec<(Timestamp, Timestamp)>> {
        self.read(move |tx| orders::kitchen_pace(tx, shop_id, since))
            .await
    }

    async fn events_after(
        &self,
        shop_id: Uuid,
        after: i64,
        limit: Limit,
    ) -> StoreResult<Vec<Event>> {
        self.read(move |tx| events::after(tx, shop_id, after, limit))
            .await
    }

    async fn last_event_id(&self, shop_id: Uuid) -> StoreResult<i64> {
        self.read(move |tx| events::last_id(tx, shop_id)).await
    }

    fn set_change_listener(&self, listener: ChangeListener) {
        self.writer.set_listener(listener);
    }

    async fn committed_replay(
        &self,
        session_id: Uuid,
        proof: &GuestProof,
        claim: &Claim,
        policy: PinPolicy,
        now: Timestamp,
    ) -> StoreResult<Option<Replay>> {
        Ok(self.replays.find(session_id, proof, claim, policy, now))
    }

    async fn record_audit(&self, entry: AuditEntry) -> StoreResult<()> {
        // Entries gather in the backlog; the first one into an empty backlog
        // queues the write that takes all there are by the time it runs.
        // One queued job per batch instead of one per replay: the job, its
        // savepoint and the writer's wake-up cost more than the row.
        let first = {
            let mut backlog = self.audit_backlog.lock().unwrap_or_else(|e| e.into_inner());
            backlog.push(entry);
            backlog.len() == 1
        };
        if !first {
            return Ok(());
        }
        let backlog = Arc::clone(&self.audit_backlog);
        self.writer
            .submit(move |conn| write_audit_backlog(conn, &backlog))
            .await
    }

    async fn audit_log(&self, shop_id: Uuid, limit: Limit) -> StoreResult<Vec<AuditEntry>> {
        // Through the writer's queue, behind every audit row queued before,
        // and with the backlog written first: whoever recorded a row reads it.
        let backlog = Arc::clone(&self.audit_backlog);
        self.write(move |conn| {
            write_audit_backlog(conn, &backlog)?;
            audit::list(conn, shop_id, limit)
        })
        .await
    }

    async fn session_orders(&self, session_id: Uuid, limit: Limit) -> StoreResult<Vec<Order>> {
        self.read(move |tx| orders::of_session(tx, session_id, true, Some(limit)))
            .await
    }

    async fn get_order(&self, order_id: Uuid) -> StoreResult<Option<Order>> {
        self.read(move |tx| orders::find(tx, order_id)).await
    }

    async fn purge_expired(&self, now: Timestamp) -> StoreResult<u64> {
        self.write(move |conn| {
            Ok(idempotency::purge(conn, now)?
                + sessions::purge_expired_tokens(conn, now)?
                + staff::purge(conn, now)?)
        })
        .await
    }

    async fn purge_audit(&self, before: Timestamp, batch: u32) -> StoreResult<u64> {
        self.write(move |conn| audit::purge(conn, before, batch))
            .await
    }

    async fn printers(&self, shop_id: Uuid) -> StoreResult<Vec<PrinterState>> {
        self.read(move |tx| printers::of_shop(tx, shop_id)).await
    }

    async fn all_printers(&self) -> StoreResult<Vec<Printer>> {
        self.read(|tx| printers::all(tx)).await
    }

    async fn get_printer(&self, printer_id: Uuid) -> StoreResult<Option<PrinterState>> {
        self.read(move |tx| printers::find(tx, printer_id)).await
    }

    async fn delete_printer(&self, printer_id: Uuid) -> StoreResult<()> {
        self.write(move |conn| printers::delete(conn, printer_id))
            .await
    }

    async fn request_reprint(
        &self,
        printer_id: Uuid,
        order_id: Uuid,
        now: Timestamp,
    ) -> StoreResult<i64> {
        self.write(move |conn| printers::request_reprint(conn, printer_id, order_id, now))
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
        self.write(move |conn| {
            staff::add_member(conn, shop_id, &username, new_account.as_ref(), role, now)
        })
        .await
    }

    async fn members(&self, shop_id: Uuid) -> StoreResult<Vec<Member>> {
        self.read(move |tx| staff::members(tx, shop_id)).await
    }

    async fn remove_member(&self, shop_id: Uuid, account_id: Uuid) -> StoreResult<()> {
        self.write(move |conn| staff::remove_member(conn, shop_id, account_id))
            .await
    }

    async fn account_by_username(&self, username: &str) -> StoreResult<Option<Account>> {
        let username = username.to_owned();
        self.read(move |tx| staff::account_by_username(tx, &username))
            .await
    }

    async fn count_login_attempt(
        &self,
        subjects: Vec<String>,
        policy: LoginPolicy,
        now: Timestamp,
    ) -> StoreResult<Option<Timestamp>> {
        self.write(move |conn| staff::count_login_attempt(conn, &subjects, policy, now))
            .await
    }

    async fn forgive_login_attempt(&self, account: String, address: String) -> StoreResult<()> {
        self.write(move |conn| staff::forgive_login_attempt(conn, &account, &address))
            .await
    }

    async fn create_staff_token(
        &self,
        token_digest: String,
        account_id: Uuid,
        now: Timestamp,
        expires_at: Timestamp,
    ) -> StoreResult<()> {
        self.write(move |conn| {
            staff::create_token(conn, &token_digest, account_id, now, expires_at)
        })
        .await
    }

    async fn staff_token(
        &self,
        token_digest: &str,
        now: Timestamp,
    ) -> StoreResult<Option<(Account, Vec<Membership>)>> {
        let token_digest = token_digest.to_owned();
        self.read(move |tx| staff::token_account(tx, &token_digest, now))
            .await
    }

    async fn revoke_staff_token(&self, token_digest: &str) -> StoreResult<()> {
        let token_digest = token_digest.to_owned();
        self.write(move |conn| staff::revoke_token(conn, &token_digest))
            .await
    }

    async fn change_password(
        &self,
        account_id: Uuid,
        password_hash: String,
        kept: String,
    ) -> StoreResult<()> {
        self.write(move |conn| staff::change_password(conn, account_id, &password_hash, &kept))
            .await
    }

    async fn create_device(&self, device: Device, token_digest: String) -> StoreResult<()> {
        self.write(move |conn| staff::create_device(conn, &device, &token_digest))
            .await
    }

    async fn devices(&self, shop_id: Uuid) -> StoreResult<Vec<Device>> {
        self.read(move |tx| staff::devices(tx, shop_id)).await
    }

    async fn revoke_device(&self, shop_id: Uuid, device_id: Uuid) -> StoreResult<()> {
        self.write(move |conn| staff::revoke_device(conn, shop_id, device_id))
            .await
    }

    async fn device_token(&self, token_digest: &str) -> StoreResult<Option<Device>> {
        let token_digest = token_digest.to_owned();
        self.read(move |tx| staff::device_token(tx, &token_digest))
            .await
    }

    async fn shop_of(&self, resource: Owned) -> StoreResult<Option<Uuid>> {
        self.read(move |tx| staff::shop_of(tx, resource)).await
    }

    async fn lease_printer(&self, printer_id: Uuid) -> StoreResult<Option<Box<dyn PrinterLease>>> {
        // One server serves a database file (its serving lock): the lease is
        // always this one's.
        Ok(Some(Box::new(SqliteLease {
            writer: self.writer.clone(),
            printer_id,
        })))
    }
}

/// Reads and records through the writer, so each read sees every step
/// recorded before it.
struct SqliteLease {
    writer: Writer,
    printer_id: Uuid,
}

#[async_trait]
impl PrinterLease for SqliteLease {
    async fn progress(&mut self) -> StoreResult<Option<PrinterProgress>> {
        let printer_id = self.printer_id;
        self.writer
            .run(move |conn| Ok(printers::find(conn, printer_id)?.map(|state| state.progress)))
            .await
    }

    async fn record(&mut self, step: PrintStep, now: Timestamp) -> StoreResult<()> {
        let printer_id = self.printer_id;
        self.writer
            .run(move |conn| printers::record(conn, printer_id, &step, now))
            .await
    }
}
