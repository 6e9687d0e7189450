//! The operations of the PostgreSQL store, each one transaction.

use std::time::Duration;

use ordergate_domain::audit::AuditEntry;
use ordergate_domain::catalog::{Catalog, CatalogInput};
use ordergate_domain::events::Event;
use ordergate_domain::inventory::{InventoryItem, LogEntry, StockChange};
use ordergate_domain::order::{Order, OrderStatus, StatusChange};
use ordergate_domain::paging::Limit;
use ordergate_domain::printing::Printer;
use ordergate_domain::service::{ServiceRequest, ServiceStatus};
use ordergate_domain::session::{Bill, GuestProof, PinOutcome, PinPolicy, Session, SessionStatus};
use ordergate_domain::shop::{Shop, ShopPatch};
use ordergate_domain::staff::{Account, Device, LoginPolicy, Member, Membership, Role};
use ordergate_domain::table::TableState;
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::{
    Answer, Claim, GuestGrant, MenuSource, Ordered, Owned, Photo, PlaceOrder, PrinterLease,
    PrinterState, Rendition, Replay, ServiceCall, StaffWrite, StoreResult,
};
use sqlx::Executor;
use sqlx::postgres::PgConnection;
use uuid::Uuid;

use crate::error::{PgError, cannot_connect, is_lock_timeout};
use crate::place::Locks;
use crate::tx::Tx;
use crate::{
    Pg, accounts, audit, catalog, done, events, idempotency, inventory, orders, photos, place,
    printers, replays, service, sessions, shops, staff, tables,
};

/// The operations themselves, each run by [`crate::PgStore::detached`].
impl Pg {
    pub(crate) async fn ping(&self) -> StoreResult<()> {
        self.pool
            .execute("select 1")
            .await
            .map_err(cannot_connect)?;
        Ok(())
    }

    pub(crate) async fn create_shop(&self, shop: Shop) -> StoreResult<Shop> {
        let mut tx = self.begin().await?;
        let result = shops::insert(tx.conn(), &shop).await;
        self.finish(tx, result).await?;
        Ok(shop)
    }

    pub(crate) async fn list_shops(&self) -> StoreResult<Vec<Shop>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(shops::list(&mut conn).await?)
    }

    pub(crate) async fn get_shop(&self, shop_id: Uuid) -> StoreResult<Option<Shop>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(shops::find(&mut conn, shop_id).await?)
    }

    pub(crate) async fn tables(&self, shop_id: Uuid) -> StoreResult<Vec<TableState>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(tables::list(&mut conn, shop_id).await?)
    }

    pub(crate) async fn table_by_code(&self, code: &str) -> StoreResult<Option<TableState>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(tables::by_code(&mut conn, code).await?)
    }

    pub(crate) async fn add_photo(&self, photo: Photo) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        let result = photos::insert(tx.conn(), &photo).await;
        self.finish(tx, result).await
    }

    pub(crate) async fn photo_rendition(&self, image_id: Uuid) -> StoreResult<Option<Rendition>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(photos::rendition(&mut conn, image_id).await?)
    }

    pub(crate) async fn update_shop(
        &self,
        shop_id: Uuid,
        patch: ShopPatch,
        now: Timestamp,
    ) -> StoreResult<Shop> {
        let mut tx = self.begin().await?;
        let result = shops::update(&mut tx, shop_id, patch, now).await;
        self.finish(tx, result).await
    }

    pub(crate) async fn put_catalog(
        &self,
        shop_id: Uuid,
        input: CatalogInput,
        expected_version: Option<i64>,
        now: Timestamp,
    ) -> StoreResult<Catalog> {
        let mut tx = self.begin().await?;
        let result = catalog::put(&mut tx, shop_id, input, expected_version, now).await;
        self.finish(tx, result).await
    }

    pub(crate) async fn get_catalog(&self, shop_id: Uuid) -> StoreResult<Catalog> {
        let mut snapshot = self.snapshot().await?;
        let result = async {
            shops::require(&mut snapshot, shop_id).await?;
            catalog::get(&mut snapshot, shop_id).await
        }
        .await;
        done(snapshot, result).await
    }

    pub(crate) async fn menu_source(&self, shop_id: Uuid) -> StoreResult<MenuSource> {
        let mut snapshot = self.snapshot().await?;
        let result = async {
            let shop = shops::require(&mut snapshot, shop_id).await?;
            let catalog = catalog::get(&mut snapshot, shop_id).await?;
            if catalog.version == 0 {
                return Err(Rejection::CatalogNotReady.into());
            }
            let inventory = inventory::list(&mut snapshot, shop_id).await?;
            Ok(MenuSource {
                shop,
                catalog,
                inventory,
            })
        }
        .await;
        done(snapshot, result).await
    }

    pub(crate) async fn list_inventory(&self, shop_id: Uuid) -> StoreResult<Vec<InventoryItem>> {
        let mut snapshot = self.snapshot().await?;
        let result = async {
            shops::require(&mut snapshot, shop_id).await?;
            inventory::list(&mut snapshot, shop_id).await
        }
        .await;
        done(snapshot, result).await
    }

    pub(crate) async fn update_inventory(
        &self,
        shop_id: Uuid,
        item_id: Uuid,
        change: StockChange,
        actor: &str,
        now: Timestamp,
    ) -> StoreResult<InventoryItem> {
        let mut tx = self.begin().await?;
        let result = inventory::update(&mut tx, shop_id, item_id, &change, actor, now).await;
        self.finish(tx, result).await
    }

    pub(crate) async fn restock(
        &self,
        shop_id: Uuid,
        item_id: Uuid,
        quantity: i64,
        actor: &str,
        now: Timestamp,
    ) -> StoreResult<InventoryItem> {
        let mut tx = self.begin().await?;
        let result = inventory::restock(&mut tx, shop_id, item_id, quantity, actor, now).await;
        self.finish(tx, result).await
    }

    pub(crate) async fn inventory_log(
        &self,
        shop_id: Uuid,
        limit: Limit,
    ) -> StoreResult<Vec<LogEntry>> {
        let mut snapshot = self.snapshot().await?;
        let result = inventory::log(&mut snapshot, shop_id, limit).await;
        done(snapshot, result).await
    }

    /// A new session id of the shop's: on Citus, one whose route shares
    /// the shop's shard (see [`crate::shards`]).
    pub(crate) fn new_session_id(&self, shop_id: Uuid) -> Uuid {
        self.shards.align(Uuid::new_v4(), shop_id)
    }

    pub(crate) async fn open_session(&self, session: Session) -> StoreResult<Session> {
        let mut tx = self.begin().await?;
        let result = sessions::open(&mut tx, &session).await;
        self.finish(tx, result).await?;
        Ok(session)
    }

    pub(crate) async fn list_sessions(
        &self,
        shop_id: Uuid,
        status: Option<SessionStatus>,
        limit: Limit,
    ) -> StoreResult<Vec<Session>> {
        let mut snapshot = self.snapshot().await?;
        let result = sessions::list(&mut snapshot, shop_id, status, limit).await;
        done(snapshot, result).await
    }

    pub(crate) async fn get_session(&self, session_id: Uuid) -> StoreResult<Option<Session>> {
        self.read_in(session_id, async |conn, shop_id| {
            sessions::find(conn, shop_id, session_id).await
        })
        .await
        .map(Option::flatten)
    }

    pub(crate) async fn verify_pin(
        &self,
        session_id: Uuid,
        given: Option<&str>,
        policy: PinPolicy,
        now: Timestamp,
    ) -> StoreResult<PinOutcome> {
        self.write_in(session_id, "session", async |tx, shop_id| {
            sessions::verify_pin(tx, shop_id, session_id, given, policy, now).await
        })
        .await
    }

    pub(crate) async fn checkout(&self, session_id: Uuid, now: Timestamp) -> StoreResult<Bill> {
        self.write_in(session_id, "session", async |tx, shop_id| {
            sessions::checkout(tx, shop_id, session_id, now).await
        })
        .await
    }

    pub(crate) async fn unlock_pin(&self, session_id: Uuid) -> StoreResult<Session> {
        self.write_in(session_id, "session", async |tx, shop_id| {
            sessions::unlock_pin(tx, shop_id, session_id).await
        })
        .await
    }

    pub(crate) async fn grant_guest_access(&self, grant: GuestGrant) -> StoreResult<PinOutcome> {
        self.write_in(grant.session_id, "session", async |tx, shop_id| {
            sessions::grant_guest_access(tx, shop_id, &grant).await
        })
        .await
    }

    pub(crate) async fn guest_token_session(
        &self,
        session_id: Uuid,
        token_digest: &str,
        now: Timestamp,
    ) -> StoreResult<Option<Session>> {
        self.read_in(session_id, async |conn, shop_id| {
            sessions::guest_token_session(conn, shop_id, session_id, token_digest, now).await
        })
        .await
        .map(Option::flatten)
    }

    pub(crate) async fn staff_write(
        &self,
        write: StaffWrite,
        claim: Option<Claim>,
        now: Timestamp,
        in_flight_wait: Duration,
    ) -> StoreResult<Answer> {
        let mut tx = self.begin().await?;
        if let Some(claim) = &claim
            && let Err(e) = staff::take_key(&mut tx, claim, in_flight_wait).await
        {
            return self.finish(tx, Err(e)).await;
        }
        let result = staff::write(&mut tx, &self.routes, claim.as_ref(), write, now).await;
        self.finish(tx, result).await
    }

    pub(crate) async fn request_service(
        &self,
        call: ServiceCall,
        in_flight_wait: Duration,
    ) -> StoreResult<Answer> {
        let mut tx = self.begin().await?;
        if let Some(claim) = &call.claim
            && let Err(e) = staff::take_key(&mut tx, claim, in_flight_wait).await
        {
            return self.finish(tx, Err(e)).await;
        }
        let result = async {
            let shop_id = self
                .routes
                .require(tx.conn(), call.session_id, "session")
                .await?;
            service::request(&mut tx, shop_id, call).await
        }
        .await;
        self.finish(tx, result).await
    }

    pub(crate) async fn acknowledge_service(
        &self,
        request_id: Uuid,
        now: Timestamp,
    ) -> StoreResult<ServiceRequest> {
        let mut tx = self.begin().await?;
        let result = async {
            let shop_id = accounts::shop_of(tx.conn(), Owned::ServiceRequest(request_id))
                .await?
                .ok_or(Rejection::NotFound("service request"))?;
            service::acknowledge(&mut tx, shop_id, request_id, now).await
        }
        .await;
        self.finish(tx, result).await
    }

    pub(crate) async fn service_requests(
        &self,
        shop_id: Uuid,
        status: Option<ServiceStatus>,
        limit: Limit,
    ) -> StoreResult<Vec<ServiceRequest>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(service::list(&mut conn, shop_id, status, limit).await?)
    }

    /// A new order id at the session: on Citus, one whose route shares the
    /// shard of the session's shop (see [`crate::shards`]).
    pub(crate) async fn new_order_id(&self, session_id: Uuid) -> StoreResult<Uuid> {
        let drawn = Uuid::now_v7();
        Ok(match self.route(session_id).await? {
            Some(shop_id) => self.shards.align(drawn, shop_id),
            None => drawn,
        })
    }

    /// Places an order in a transaction of its own, waiting for its key
    /// and its table (see [`place::Locks::Wait`]).
    pub(crate) async fn place_alone(
        &self,
        order: PlaceOrder,
        in_flight_wait: Duration,
    ) -> StoreResult<Ordered> {
        let first_wait = place::first_wait(&order, in_flight_wait);
        let mut tx = Tx::begin_waiting(&self.pool, first_wait, self.shards.distributed())
            .await
            .map_err(cannot_connect)?;
        let shop_id = match self
            .routes
            .require(tx.conn(), order.session_id, "session")
            .await
        {
            Ok(shop_id) => shop_id,
            Err(e) => return self.finish(tx, Err(e)).await,
        };
        let result = place::place(&mut tx, shop_id, std::slice::from_ref(&order), Locks::Wait)
            .await
            .and_then(|mut outcomes| {
                outcomes
                    .pop()
                    .flatten()
                    .ok_or_else(|| PgError::Corrupt("an order placed alone went unplaced".into()))
            });
        let gave_up = match &result {
            Err(PgError::Rejected(Rejection::RequestInProgress)) => {
                Some(Rejection::RequestInProgress)
            }
            Err(e) if is_lock_timeout(e) => Some(Rejection::SessionBusy),
            _ => None,
        };
        if let Some(rejection) = gave_up {
            // The wait for the key or the table ran out; that transaction is
            // aborted, so the refusal is filed in a new one.
            tx.rollback().await;
            let mut tx = self.begin().await?;
            let result = place::gave_up(&mut tx, shop_id, &order, rejection).await;
            return self.finish(tx, result).await;
        }
        self.finish(tx, result).await
    }

    pub(crate) async fn set_order_status(
        &self,
        order_id: Uuid,
        change: StatusChange,
        now: Timestamp,
    ) -> StoreResult<Order> {
        self.write_in(order_id, "order", async |tx, shop_id| {
            orders::set_status(tx, shop_id, order_id, &change, now).await
        })
        .await
    }

    pub(crate) async fn shop_orders(
        &self,
        shop_id: Uuid,
        statuses: Vec<OrderStatus>,
        limit: Limit,
    ) -> StoreResult<Vec<Order>> {
        let mut snapshot = self.snapshot().await?;
        let result = orders::of_shop(&mut snapshot, shop_id, &statuses, limit).await;
        done(snapshot, result).await
    }

    pub(crate) async fn kitchen_pace(
        &self,
        shop_id: Uuid,
        since: Timestamp,
    ) -> StoreResult<Vec<(Timestamp, Timestamp)>> {
        let mut snapshot = self.snapshot().await?;
        let result = orders::kitchen_pace(&mut snapshot, shop_id, since).await;
        done(snapshot, result).await
    }

    pub(crate) async fn events_after(
        &self,
        shop_id: Uuid,
        after: i64,
        limit: Limit,
    ) -> StoreResult<Vec<Event>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(events::after(&mut conn, shop_id, after, limit).await?)
    }

    pub(crate) async fn last_event_id(&self, shop_id: Uuid) -> StoreResult<i64> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(events::last_id(&mut conn, shop_id).await?)
    }

    pub(crate) async fn committed_replay(
        &self,
        session_id: Uuid,
        proof: &GuestProof,
        claim: &Claim,
        policy: PinPolicy,
        now: Timestamp,
    ) -> StoreResult<Option<Replay>> {
        if !self.replays.knows(claim) {
            return Ok(None);
        }
        let Some(shop_id) = self.route(session_id).await? else {
            return Ok(None);
        };
        let replays = &self.replays;
        replays::committed_replay(replays, shop_id, session_id, proof, claim, policy, now).await
    }

    /// One write transaction on the shop of the session or order `id`
    /// (`NotFound(noun)` when there is none), found by its route.
    async fn write_in<T>(
        &self,
        id: Uuid,
        noun: &'static str,
        write: impl AsyncFnOnce(&mut Tx, Uuid) -> Result<T, PgError>,
    ) -> StoreResult<T> {
        let mut tx = self.begin().await?;
        let result = match self.routes.require(tx.conn(), id, noun).await {
            Ok(shop_id) => write(&mut tx, shop_id).await,
            Err(e) => Err(e),
        };
        self.finish(tx, result).await
    }

    /// A read of the shop of the session or order `id`; `None` when there
    /// is none.
    async fn read_in<T>(
        &self,
        id: Uuid,
        read: impl AsyncFnOnce(&mut PgConnection, Uuid) -> Result<T, PgError>,
    ) -> StoreResult<Option<T>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        let Some(shop_id) = self.routes.shop_of(&mut conn, id).await? else {
            return Ok(None);
        };
        Ok(Some(read(&mut conn, shop_id).await?))
    }

    /// [`crate::routes::Routes::shop_of`] on a connection of its own.
    async fn route(&self, id: Uuid) -> StoreResult<Option<Uuid>> {
        if let Some(shop_id) = self.routes.known(id) {
            return Ok(Some(shop_id));
        }
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(self.routes.shop_of(&mut conn, id).await?)
    }

    /// Returns once the row has committed, in a group with the rows of
    /// other requests (see [`audit::filer`]): every `audit_log` call that
    /// starts afterwards sees it.
    pub(crate) async fn record_audit(&self, entry: AuditEntry) -> StoreResult<()> {
        match self.route(entry.session_id).await? {
            Some(shop_id) => self.audit.ask((shop_id, entry)).await,
            None => Ok(()),
        }
    }

    pub(crate) async fn audit_log(
        &self,
        shop_id: Uuid,
        limit: Limit,
    ) -> StoreResult<Vec<AuditEntry>> {
        let mut snapshot = self.snapshot().await?;
        let result = audit::list(&mut snapshot, shop_id, limit).await;
        done(snapshot, result).await
    }

    pub(crate) async fn session_orders(
        &self,
        session_id: Uuid,
        limit: Limit,
    ) -> StoreResult<Vec<Order>> {
        self.read_in(session_id, async |conn, shop_id| {
            orders::of_session(conn, shop_id, session_id, true, Some(limit)).await
        })
        .await
        .map(Option::unwrap_or_default)
    }

    pub(crate) async fn get_order(&self, order_id: Uuid) -> StoreResult<Option<Order>> {
        self.read_in(order_id, async |conn, shop_id| {
            orders::find(conn, shop_id, order_id).await
        })
        .await
        .map(Option::flatten)
    }

    pub(crate) async fn purge_expired(&self, now: Timestamp) -> StoreResult<u64> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        let keys = idempotency::purge(&mut conn, now).await?;
        let guest_tokens = sessions::purge_expired_tokens(&mut conn, now).await?;
        Ok(keys + guest_tokens + accounts::purge(&mut conn, now).await?)
    }

    pub(crate) async fn purge_audit(&self, before: Timestamp, batch: u32) -> StoreResult<u64> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(audit::purge(&mut conn, before, batch).await?)
    }

    pub(crate) async fn printers(&self, shop_id: Uuid) -> StoreResult<Vec<PrinterState>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(printers::of_shop(&mut conn, shop_id).await?)
    }

    pub(crate) async fn all_printers(&self) -> StoreResult<Vec<Printer>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(printers::all(&mut conn).await?)
    }

    pub(crate) async fn get_printer(&self, printer_id: Uuid) -> StoreResult<Option<PrinterState>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(printers::find(&mut conn, printer_id).await?)
    }

    pub(crate) async fn delete_printer(&self, printer_id: Uuid) -> StoreResult<()> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(printers::delete(&mut conn, printer_id).await?)
    }

    pub(crate) async fn request_reprint(
        &self,
        printer_id: Uuid,
        order_id: Uuid,
        now: Timestamp,
    ) -> StoreResult<i64> {
        let mut tx = self.begin().await?;
        let result = printers::request_reprint(&mut tx, printer_id, order_id, now).await;
        self.finish(tx, result).await
    }

    pub(crate) async fn lease_printer(
        &self,
        printer_id: Uuid,
    ) -> StoreResult<Option<Box<dyn PrinterLease>>> {
        printers::lease(&self.pool, printer_id).await
    }

    pub(crate) async fn add_member(
        &self,
        shop_id: Uuid,
        username: String,
        new_account: Option<Account>,
        role: Role,
        now: Timestamp,
    ) -> StoreResult<(Member, bool)> {
        let mut tx = self.begin().await?;
        let result =
            accounts::add_member(&mut tx, shop_id, &username, new_account.as_ref(), role, now)
                .await;
        self.finish(tx, result).await
    }

    pub(crate) async fn members(&self, shop_id: Uuid) -> StoreResult<Vec<Member>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(accounts::members(&mut conn, shop_id).await?)
    }

    pub(crate) async fn remove_member(&self, shop_id: Uuid, account_id: Uuid) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        let result = accounts::remove_member(&mut tx, shop_id, account_id).await;
        self.finish(tx, result).await
    }

    pub(crate) async fn account_by_username(&self, username: &str) -> StoreResult<Option<Account>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(accounts::account_by_username(&mut conn, username).await?)
    }

    pub(crate) async fn count_login_attempt(
        &self,
        subjects: Vec<String>,
        policy: LoginPolicy,
        now: Timestamp,
    ) -> StoreResult<Option<Timestamp>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(accounts::count_login_attempt(&mut conn, &subjects, policy, now).await?)
    }

    pub(crate) async fn forgive_login_attempt(
        &self,
        account: String,
        address: String,
    ) -> StoreResult<()> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(accounts::forgive_login_attempt(&mut conn, &account, &address).await?)
    }

    pub(crate) async fn create_staff_token(
        &self,
        token_digest: String,
        account_id: Uuid,
        now: Timestamp,
        expires_at: Timestamp,
    ) -> StoreResult<()> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(accounts::create_token(&mut conn, &token_digest, account_id, now, expires_at).await?)
    }

    pub(crate) async fn staff_token(
        &self,
        token_digest: String,
        now: Timestamp,
    ) -> StoreResult<Option<(Account, Vec<Membership>)>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(accounts::token_account(&mut conn, &token_digest, now).await?)
    }

    pub(crate) async fn revoke_staff_token(&self, token_digest: String) -> StoreResult<()> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(accounts::revoke_token(&mut conn, &token_digest).await?)
    }

    pub(crate) async fn change_password(
        &self,
        account_id: Uuid,
        password_hash: String,
        kept: String,
    ) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        let result = accounts::change_password(&mut tx, account_id, &password_hash, &kept).await;
        self.finish(tx, result).await
    }

    pub(crate) async fn create_device(
        &self,
        device: Device,
        token_digest: String,
    ) -> StoreResult<()> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(accounts::create_device(&mut conn, &device, &token_digest).await?)
    }

    pub(crate) async fn devices(&self, shop_id: Uuid) -> StoreResult<Vec<Device>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(accounts::devices(&mut conn, shop_id).await?)
    }

    pub(crate) async fn revoke_device(&self, shop_id: Uuid, device_id: Uuid) -> StoreResult<()> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(accounts::revoke_device(&mut conn, shop_id, device_id).await?)
    }

    pub(crate) async fn device_token(&self, token_digest: String) -> StoreResult<Option<Device>> {
        let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
        Ok(accounts::device_token(&mut conn, &token_digest).await?)
    }

    /// Sessions and orders by their routes; printers and service requests,
    /// off the order path, by their rows.
    pub(crate) async fn shop_of(&self, resource: Owned) -> StoreResult<Option<Uuid>> {
        match resource {
            Owned::Session(id) | Owned::Order(id) => self.route(id).await,
            Owned::Printer(_) | Owned::ServiceRequest(_) => {
                let mut conn = self.pool.acquire().await.map_err(cannot_connect)?;
                Ok(accounts::shop_of(&mut conn, resource).await?)
            }
        }
    }
}
