//! The PostgreSQL backend of ordergate: any number of `ordergate serve`
//! processes share one database.
//!
//! Every write is one read-committed transaction that locks what it
//! decides on, so the rules hold across processes without any coordination
//! outside the database:
//!
//! - an order takes an advisory lock on its idempotency key, then its
//!   session row (`for update`), both with a bounded `lock_timeout`, then
//!   decides every rule from committed data (see [`place`]);
//! - stock rows are locked in ascending id order before any is changed, and
//!   decremented with a conditional update;
//! - event ids come from a per-shop counter row held to commit, so they
//!   increase in commit order;
//! - PIN attempts, checkout and table opening lock the session rows they
//!   judge; a unique index backs the one-active-session-per-table rule.
//!
//! Each transaction touches one shop's rows. Committed changes are
//! announced to this node's listener before the write returns, and to
//! every node through `NOTIFY` (see [`listen`]).

mod audit;
mod catalog;
mod codec;
mod error;
mod events;
mod idempotency;
mod inventory;
mod listen;
mod orders;
mod place;
mod sessions;
mod shops;
mod staff;
mod tx;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use ordergate_domain::audit::AuditEntry;
use ordergate_domain::catalog::{Catalog, CatalogInput};
use ordergate_domain::events::Event;
use ordergate_domain::inventory::{InventoryItem, LogEntry, StockChange};
use ordergate_domain::order::{Order, OrderStatus, StatusChange};
use ordergate_domain::paging::Limit;
use ordergate_domain::session::{Bill, GuestProof, PinOutcome, PinPolicy, Session, SessionStatus};
use ordergate_domain::shop::Shop;
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::{
    Answer, ChangeListener, Claim, GuestGrant, MenuSource, Ordered, PlaceOrder, Replay, StaffWrite,
    Store, StoreError, StoreResult,
};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, Postgres};
use sqlx::{Executor, Transaction};
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::error::{PgError, classify, is_lock_timeout};
use crate::listen::Announcer;
use crate::tx::{LOCK_TIMEOUT, Tx};

pub use sqlx::postgres::PgConnectOptions as ConnectOptions;

/// Connections each process keeps to the database.
const POOL_SIZE: u32 = 16;
/// How long a request waits for a free connection before the database
/// counts as unavailable.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!();

/// Whether `url` names a PostgreSQL database.
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// A pool of connections to one ordergate database.
///
/// Every operation runs on a task of its own, to its end, whether or not
/// its caller still waits: a future dropped midway (a client that hung up,
/// a request that timed out) would drop a sqlx call in the middle of its
/// exchange with the server, and could hand the connection back to the
/// pool inside a transaction sqlx no longer knew of ("there is already a
/// transaction in progress", then failures on every later use of it).
pub struct PgStore {
    pg: Arc<Pg>,
    in_flight_wait: Duration,
}

/// What the operations share.
struct Pg {
    pool: PgPool,
    announcer: Announcer,
    listening: JoinHandle<()>,
}

/// The contract's default `inflight-wait-ms`.
const DEFAULT_IN_FLIGHT_WAIT: Duration = Duration::from_secs(2);

impl Drop for Pg {
    fn drop(&mut self) {
        self.listening.abort();
    }
}

impl PgStore {
    /// Connects to the database a `postgres://` URL names.
    pub async fn connect(url: &str) -> StoreResult<PgStore> {
        let options: PgConnectOptions = url
            .parse()
            .map_err(|e: sqlx::Error| StoreError::Internal(Box::new(e)))?;
        PgStore::connect_with(options).await
    }

    /// Opens a pool of [`POOL_SIZE`] connections, applies this backend's
    /// migrations (in the first schema of the connection's `search_path`),
    /// and starts listening for other nodes' changes.
    pub async fn connect_with(options: PgConnectOptions) -> StoreResult<PgStore> {
        let options = options.options([("lock_timeout", tx::millis(LOCK_TIMEOUT))]);
        let pool = PgPoolOptions::new()
            .max_connections(POOL_SIZE)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options.clone())
            .await
            .map_err(classify)?;
        MIGRATOR.run(&pool).await.map_err(|e| match e {
            sqlx::migrate::MigrateError::Execute(e) => classify(e),
            other => StoreError::Internal(Box::new(other)),
        })?;
        let announcer = Announcer::default();
        let listening = listen::start(options, announcer.clone())
            .await
            .map_err(classify)?;
        Ok(PgStore {
            pg: Arc::new(Pg {
                pool,
                announcer,
                listening,
            }),
            in_flight_wait: DEFAULT_IN_FLIGHT_WAIT,
        })
    }

    /// How long a request waits for another one holding its idempotency key
    /// (on any node) before it is answered `RequestInProgress`.
    pub fn with_in_flight_wait(mut self, wait: Duration) -> PgStore {
        self.in_flight_wait = wait;
        self
    }

    /// Runs `operation` on a task of its own (see [`PgStore`]) and waits
    /// for its result.
    async fn detached<T, Fut>(&self, operation: impl FnOnce(Arc<Pg>) -> Fut) -> StoreResult<T>
    where
        Fut: Future<Output = StoreResult<T>> + Send + 'static,
        T: Send + 'static,
    {
        match tokio::spawn(operation(Arc::clone(&self.pg))).await {
            Ok(result) => result,
            Err(failed) if failed.is_panic() => std::panic::resume_unwind(failed.into_panic()),
            // The runtime is shutting down.
            Err(cancelled) => Err(StoreError::Unavailable(Box::new(cancelled))),
        }
    }
}

impl Pg {
    async fn begin(&self) -> StoreResult<Tx> {
        Ok(Tx::begin(&self.pool).await?)
    }

    /// Commits `tx` when `result` is a success and announces its changes on
    /// this node before answering; rolls it back otherwise.
    async fn finish<T>(&self, tx: Tx, result: Result<T, PgError>) -> StoreResult<T> {
        match result {
            Ok(value) => {
                let changes = tx.commit().await?;
                changes
                    .into_iter()
                    .for_each(|change| self.announcer.announce(change));
                Ok(value)
            }
            Err(e) => {
                tx.rollback().await;
                Err(e.into())
            }
        }
    }

    /// A read-only transaction that sees one snapshot throughout.
    async fn snapshot(&self) -> StoreResult<Transaction<'static, Postgres>> {
        self.pool
            .begin_with("begin isolation level repeatable read read only")
            .await
            .map_err(classify)
    }
}

/// Ends a read transaction; reads have nothing to lose if this fails.
async fn done<T>(
    snapshot: Transaction<'static, Postgres>,
    result: Result<T, PgError>,
) -> StoreResult<T> {
    let value = result?;
    if let Err(e) = snapshot.commit().await {
        tracing::debug!(error = %e, "ending a read transaction failed");
    }
    Ok(value)
}

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

    async fn put_catalog(
        &self,
        shop_id: Uuid,
        input: CatalogInput,
        now: Timestamp,
    ) -> StoreResult<Catalog> {
        self.detached(move |pg| async move { pg.put_catalog(shop_id, input, now).await })
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
        token_digest: &str,
        now: Timestamp,
    ) -> StoreResult<Option<Session>> {
        let token_digest = token_digest.to_owned();
        self.detached(move |pg| async move { pg.guest_token_session(&token_digest, now).await })
            .await
    }

    async fn idempotent(&self, claim: Claim, write: StaffWrite) -> StoreResult<Answer> {
        let wait = self.in_flight_wait;
        self.detached(move |pg| async move { pg.idempotent(claim, write, wait).await })
            .await
    }

    async fn place_order(&self, order: PlaceOrder) -> StoreResult<Ordered> {
        let wait = self.in_flight_wait;
        self.detached(move |pg| async move { pg.place_order(order, wait).await })
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
}

/// The operations themselves, each run by [`PgStore::detached`].
impl Pg {
    async fn ping(&self) -> StoreResult<()> {
        self.pool.execute("select 1").await.map_err(classify)?;
        Ok(())
    }

    async fn create_shop(&self, shop: Shop) -> StoreResult<Shop> {
        let mut tx = self.begin().await?;
        let result = shops::insert(tx.conn(), &shop).await;
        self.finish(tx, result).await?;
        Ok(shop)
    }

    async fn list_shops(&self) -> StoreResult<Vec<Shop>> {
        let mut conn = self.pool.acquire().await.map_err(classify)?;
        Ok(shops::list(&mut conn).await?)
    }

    async fn get_shop(&self, shop_id: Uuid) -> StoreResult<Option<Shop>> {
        let mut conn = self.pool.acquire().await.map_err(classify)?;
        Ok(shops::find(&mut conn, shop_id).await?)
    }

    async fn put_catalog(
        &self,
        shop_id: Uuid,
        input: CatalogInput,
        now: Timestamp,
    ) -> StoreResult<Catalog> {
        let mut tx = self.begin().await?;
        let result = catalog::put(&mut tx, shop_id, input, now).await;
        self.finish(tx, result).await
    }

    async fn get_catalog(&self, shop_id: Uuid) -> StoreResult<Catalog> {
        let mut snapshot = self.snapshot().await?;
        let result = async {
            shops::require(&mut snapshot, shop_id).await?;
            catalog::get(&mut snapshot, shop_id).await
        }
        .await;
        done(snapshot, result).await
    }

    async fn menu_source(&self, shop_id: Uuid) -> StoreResult<MenuSource> {
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

    async fn list_inventory(&self, shop_id: Uuid) -> StoreResult<Vec<InventoryItem>> {
        let mut snapshot = self.snapshot().await?;
        let result = async {
            shops::require(&mut snapshot, shop_id).await?;
            inventory::list(&mut snapshot, shop_id).await
        }
        .await;
        done(snapshot, result).await
    }

    async fn update_inventory(
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

    async fn restock(
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

    async fn inventory_log(&self, shop_id: Uuid, limit: Limit) -> StoreResult<Vec<LogEntry>> {
        let mut snapshot = self.snapshot().await?;
        let result = inventory::log(&mut snapshot, shop_id, limit).await;
        done(snapshot, result).await
    }

    async fn open_session(&self, session: Session) -> StoreResult<Session> {
        let mut tx = self.begin().await?;
        let result = sessions::open(&mut tx, &session).await;
        self.finish(tx, result).await?;
        Ok(session)
    }

    async fn list_sessions(
        &self,
        shop_id: Uuid,
        status: Option<SessionStatus>,
        limit: Limit,
    ) -> StoreResult<Vec<Session>> {
        let mut snapshot = self.snapshot().await?;
        let result = sessions::list(&mut snapshot, shop_id, status, limit).await;
        done(snapshot, result).await
    }

    async fn get_session(&self, session_id: Uuid) -> StoreResult<Option<Session>> {
        let mut conn = self.pool.acquire().await.map_err(classify)?;
        Ok(sessions::find(&mut conn, session_id).await?)
    }

    async fn verify_pin(
        &self,
        session_id: Uuid,
        given: Option<&str>,
        policy: PinPolicy,
        now: Timestamp,
    ) -> StoreResult<PinOutcome> {
        let mut tx = self.begin().await?;
        let result = sessions::verify_pin(&mut tx, session_id, given, policy, now).await;
        self.finish(tx, result).await
    }

    async fn checkout(&self, session_id: Uuid, now: Timestamp) -> StoreResult<Bill> {
        let mut tx = self.begin().await?;
        let result = sessions::checkout(&mut tx, session_id, now).await;
        Ok(self.finish(tx, result).await?.0)
    }

    async fn unlock_pin(&self, session_id: Uuid) -> StoreResult<Session> {
        let mut tx = self.begin().await?;
        let result = sessions::unlock_pin(&mut tx, session_id).await;
        self.finish(tx, result).await
    }

    async fn grant_guest_access(&self, grant: GuestGrant) -> StoreResult<PinOutcome> {
        let mut tx = self.begin().await?;
        let result = sessions::grant_guest_access(&mut tx, &grant).await;
        self.finish(tx, result).await
    }

    async fn guest_token_session(
        &self,
        token_digest: &str,
        now: Timestamp,
    ) -> StoreResult<Option<Session>> {
        let mut conn = self.pool.acquire().await.map_err(classify)?;
        Ok(sessions::guest_token_session(&mut conn, token_digest, now).await?)
    }

    async fn idempotent(
        &self,
        claim: Claim,
        write: StaffWrite,
        in_flight_wait: Duration,
    ) -> StoreResult<Answer> {
        let now = ordergate_domain::now();
        let mut tx = self.begin().await?;
        if let Err(e) = staff::take_key(&mut tx, &claim, in_flight_wait).await {
            return self.finish(tx, Err(e)).await;
        }
        let result = staff::write(&mut tx, &claim, write, now).await;
        self.finish(tx, result).await
    }

    async fn place_order(
        &self,
        order: PlaceOrder,
        in_flight_wait: Duration,
    ) -> StoreResult<Ordered> {
        let mut tx = self.begin().await?;
        let result = place::place(&mut tx, &order, in_flight_wait).await;
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
            let result = place::gave_up(&mut tx, &order, rejection).await;
            return self.finish(tx, result).await;
        }
        self.finish(tx, result).await
    }

    async fn set_order_status(
        &self,
        order_id: Uuid,
        change: StatusChange,
        now: Timestamp,
    ) -> StoreResult<Order> {
        let mut tx = self.begin().await?;
        let result = orders::set_status(&mut tx, order_id, &change, now).await;
        self.finish(tx, result).await
    }

    async fn shop_orders(
        &self,
        shop_id: Uuid,
        statuses: Vec<OrderStatus>,
        limit: Limit,
    ) -> StoreResult<Vec<Order>> {
        let mut snapshot = self.snapshot().await?;
        let result = orders::of_shop(&mut snapshot, shop_id, &statuses, limit).await;
        done(snapshot, result).await
    }

    async fn events_after(
        &self,
        shop_id: Uuid,
        after: i64,
        limit: Limit,
    ) -> StoreResult<Vec<Event>> {
        let mut conn = self.pool.acquire().await.map_err(classify)?;
        Ok(events::after(&mut conn, shop_id, after, limit).await?)
    }

    async fn last_event_id(&self, shop_id: Uuid) -> StoreResult<i64> {
        let mut conn = self.pool.acquire().await.map_err(classify)?;
        Ok(events::last_id(&mut conn, shop_id).await?)
    }

    async fn committed_replay(
        &self,
        session_id: Uuid,
        proof: &GuestProof,
        claim: &Claim,
        policy: PinPolicy,
        now: Timestamp,
    ) -> StoreResult<Option<Replay>> {
        let mut conn = self.pool.acquire().await.map_err(classify)?;
        Ok(place::committed_replay(&mut conn, session_id, proof, claim, policy, now).await?)
    }

    /// Inserts the row and commits before returning (a single statement in
    /// its own transaction): PostgreSQL has no queue to leave it in, and
    /// every `audit_log` call that starts afterwards sees it.
    async fn record_audit(&self, entry: AuditEntry) -> StoreResult<()> {
        let mut conn = self.pool.acquire().await.map_err(classify)?;
        Ok(audit::append_for_session(&mut conn, &entry).await?)
    }

    async fn audit_log(&self, shop_id: Uuid, limit: Limit) -> StoreResult<Vec<AuditEntry>> {
        let mut snapshot = self.snapshot().await?;
        let result = audit::list(&mut snapshot, shop_id, limit).await;
        done(snapshot, result).await
    }

    async fn session_orders(&self, session_id: Uuid, limit: Limit) -> StoreResult<Vec<Order>> {
        let mut conn = self.pool.acquire().await.map_err(classify)?;
        Ok(orders::of_session(&mut conn, session_id, true, Some(limit)).await?)
    }

    async fn get_order(&self, order_id: Uuid) -> StoreResult<Option<Order>> {
        let mut conn = self.pool.acquire().await.map_err(classify)?;
        Ok(orders::find(&mut conn, order_id).await?)
    }

    async fn purge_expired(&self, now: Timestamp) -> StoreResult<u64> {
        let mut conn = self.pool.acquire().await.map_err(classify)?;
        let keys = idempotency::purge(&mut conn, now).await?;
        Ok(keys + sessions::purge_expired_tokens(&mut conn, now).await?)
    }

    async fn purge_audit(&self, before: Timestamp, batch: u32) -> StoreResult<u64> {
        let mut conn = self.pool.acquire().await.map_err(classify)?;
        Ok(audit::purge(&mut conn, before, batch).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_urls_are_recognised() {
        assert!(is_postgres_url("postgres://localhost/og"));
        assert!(is_postgres_url("postgresql://u@h:5432/og?sslmode=disable"));
        assert!(!is_postgres_url("sqlite://ordergate.db"));
        assert!(!is_postgres_url("postgres:/x"));
    }
}
