//! The embedded SQLite backend of ordergate.
//!
//! WAL mode with `synchronous = FULL`, so an acknowledged write survives a
//! power cut; foreign keys on. All writes go through one writer thread that
//! commits them in groups (see `worker.rs`), in `BEGIN IMMEDIATE`
//! transactions; reads run on the caller's thread on pooled connections,
//! each inside a deferred transaction, so it sees one consistent snapshot.
//! A guest's retry of a placed order is answered from memory when what is
//! remembered decides it (see `replays.rs`).

mod audit;
mod catalog;
mod codec;
mod error;
mod events;
mod idempotency;
mod inventory;
mod orders;
mod placement;
mod replays;
mod sessions;
mod shops;
mod status;
mod worker;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use ordergate_domain::audit::AuditEntry;
use ordergate_domain::catalog::{Catalog, CatalogInput};
use ordergate_domain::events::Event;
use ordergate_domain::inventory::{InventoryItem, LogEntry, StockChange};
use ordergate_domain::order::admission::KeyLookup;
use ordergate_domain::order::{Order, OrderStatus, StatusChange};
use ordergate_domain::paging::Limit;
use ordergate_domain::session::{Bill, GuestProof, PinOutcome, PinPolicy, Session, SessionStatus};
use ordergate_domain::shop::Shop;
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::{
    Answer, ChangeListener, Claim, GuestGrant, MenuSource, Ordered, PlaceOrder, Replay, StaffWrite,
    Store, StoreError, StoreResult,
};
use rusqlite::{Connection, Transaction};
use rusqlite_migration::{M, Migrations};
use uuid::Uuid;

use crate::error::SqliteError;
use crate::replays::ReplayCache;
use crate::worker::{Readers, Writer};

/// Read connections opened up front; more are opened if ever needed at once.
const READERS: usize = 4;
/// Prepared statements kept per connection: more than the store has.
const STATEMENT_CACHE: usize = 256;

fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(include_str!("../migrations/0001_foundation.sql")),
        M::up(include_str!("../migrations/0002_exactly_once.sql")),
        M::up(include_str!("../migrations/0003_guest_access.sql")),
    ])
}

pub struct SqliteStore {
    writer: Writer,
    readers: Readers,
    /// Audit rows recorded outside an order's transaction, not yet queued.
    audit_backlog: Arc<Mutex<Vec<AuditEntry>>>,
    replays: Arc<ReplayCache>,
    _serving: ServingLock,
}

/// The file a `sqlite://` URL names: `sqlite://ordergate.db` is relative to
/// the working directory, `sqlite:///var/lib/ordergate.db` is absolute.
pub fn path_from_url(url: &str) -> Option<PathBuf> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or_default();
    (!path.is_empty()).then(|| PathBuf::from(path))
}

impl SqliteStore {
    /// Opens the database file, creating it if missing, and applies migrations.
    pub fn open(path: &Path) -> StoreResult<SqliteStore> {
        let serving = ServingLock::take(path)?;
        let mut writer = Connection::open(path).map_err(SqliteError::from)?;
        writer
            .pragma_update(None, "journal_mode", "wal")
            .and_then(|()| writer.pragma_update(None, "synchronous", "full"))
            // Each write of a group runs in a savepoint, and SQLite keeps the
            // pages a savepoint may roll back in a sub-journal: a temporary
            // file once it outgrows 64 KiB, which a group soon did. Writing it
            // was a fifth of the writer's time; in memory it costs a copy.
            .and_then(|()| writer.pragma_update(None, "temp_store", "memory"))
            .and_then(|()| configure(&writer))
            .map_err(SqliteError::from)?;
        migrations()
            .to_latest(&mut writer)
            .map_err(|e| StoreError::Internal(Box::new(e)))?;
        let path = path.to_owned();
        let open_reader = move || {
            let conn = Connection::open(&path)?;
            configure(&conn)?;
            conn.pragma_update(None, "query_only", true)?;
            Ok(conn)
        };
        let readers = (0..READERS)
            .map(|_| open_reader())
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(SqliteError::from)?;
        let replays = Arc::new(ReplayCache::new());
        replays.watch(&writer);
        let settled = Arc::clone(&replays);
        let writer = Writer::start(writer, Box::new(move || settled.group_settled()))
            .map_err(|e| StoreError::Internal(Box::new(e)))?;
        Ok(SqliteStore {
            writer,
            readers: Readers::new(readers, Box::new(open_reader)),
            audit_backlog: Arc::default(),
            replays,
            _serving: serving,
        })
    }

    /// Runs `f` atomically on the writer thread (in its own savepoint of a
    /// group commit); answers once the write is durable, or rolled back.
    async fn write<R, F>(&self, f: F) -> StoreResult<R>
    where
        F: FnOnce(&Connection) -> Result<R, SqliteError> + Send + 'static,
        R: Send + 'static,
    {
        self.writer.run(f).await
    }

    /// Runs `f` in a read transaction on a reader thread.
    async fn read<R, F>(&self, f: F) -> StoreResult<R>
    where
        F: FnOnce(&Transaction) -> Result<R, SqliteError> + Send + 'static,
        R: Send + 'static,
    {
        self.readers.run(f).await
    }
}

fn write_audit_backlog(
    conn: &Connection,
    backlog: &Mutex<Vec<AuditEntry>>,
) -> Result<(), SqliteError> {
    let entries = std::mem::take(&mut *backlog.lock().unwrap_or_else(|e| e.into_inner()));
    audit::append(conn, &entries)
}

/// Makes one store the only one serving a database file, for as long as it
/// is held. The caches (the menus, the replays) rest on every write going
/// through the store's one writer; a second server on the same file would
/// write behind them. An exclusive advisory lock on a `-lock` file beside
/// the database, not on the database itself: closing any descriptor of the
/// database would drop SQLite's own locks. It goes with the process,
/// however that ends. Tools that only read (`ordergate backup`, `verify`,
/// `migrate`) do not take it.
pub struct ServingLock {
    /// Unlocked when closed.
    _locked: std::fs::File,
}

impl ServingLock {
    pub fn take(path: &Path) -> StoreResult<ServingLock> {
        let mut lock_path = path.as_os_str().to_owned();
        lock_path.push("-lock");
        let lock = std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| StoreError::Unavailable(Box::new(e)))?;
        match lock.try_lock() {
            Ok(()) => Ok(ServingLock { _locked: lock }),
            Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::Unavailable(
                format!(
                    "{} is in use by another ordergate server (it holds {})",
                    path.display(),
                    Path::new(&lock_path).display()
                )
                .into(),
            )),
            Err(std::fs::TryLockError::Error(e)) => Err(StoreError::Unavailable(Box::new(e))),
        }
    }
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "foreign_keys", true)?;
    // The order path alone prepares a few dozen distinct statements; with
    // rusqlite's default cache of 16 they evicted each other and every order
    // parsed its SQL again.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // Only other processes (a backup, an operator's sqlite3 shell) can hold
    // the lock: this process serialises its own writes.
    conn.busy_timeout(std::time::Duration::from_secs(5))
}

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

    async fn put_catalog(
        &self,
        shop_id: Uuid,
        input: CatalogInput,
        now: Timestamp,
    ) -> StoreResult<Catalog> {
        self.write(move |tx| catalog::put(tx, shop_id, input, now))
            .await
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
        token_digest: &str,
        now: Timestamp,
    ) -> StoreResult<Option<Session>> {
        let token_digest = token_digest.to_owned();
        self.read(move |tx| sessions::guest_token_session(tx, &token_digest, now))
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
            };
            if let Some(claim) = &claim {
                idempotency::complete(conn, claim, Some(shop_id), &response, now)?;
            }
            Ok(Answer::Fresh(response))
        })
        .await
    }

    async fn place_order(&self, order: PlaceOrder) -> StoreResult<Ordered> {
        self.write(move |conn| placement::place(conn, &order)).await
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
        if let Some(replay) = self.replays.find(session_id, proof, claim, policy, now) {
            return Ok(Some(replay));
        }
        let generation = self.replays.generation();
        let (proof, read_claim) = (proof.clone(), claim.clone());
        let committed = self
            .read(move |tx| {
                placement::committed_replay(tx, session_id, &proof, &read_claim, policy, now)
            })
            .await?;
        Ok(committed.map(|committed| {
            let replay = committed.replay.clone();
            self.replays.remember(claim, committed, generation);
            replay
        }))
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
            Ok(idempotency::purge(conn, now)? + sessions::purge_expired_tokens(conn, now)?)
        })
        .await
    }

    async fn purge_audit(&self, before: Timestamp, batch: u32) -> StoreResult<u64> {
        self.write(move |conn| audit::purge(conn, before, batch))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_relative_and_absolute_files() {
        assert_eq!(
            path_from_url("sqlite://ordergate.db"),
            Some("ordergate.db".into())
        );
        assert_eq!(
            path_from_url("sqlite:///var/lib/og.db"),
            Some("/var/lib/og.db".into())
        );
        assert_eq!(path_from_url("sqlite:og.db?mode=rwc"), Some("og.db".into()));
        assert_eq!(path_from_url("postgres://localhost/og"), None);
        assert_eq!(path_from_url("sqlite://"), None);
    }

    #[test]
    fn migrations_are_valid() {
        migrations().validate().unwrap();
    }
}
