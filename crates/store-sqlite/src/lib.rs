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
mod checkpoint;
mod codec;
mod error;
mod events;
mod facade;
mod idempotency;
mod inventory;
mod orders;
mod photos;
mod placement;
mod printers;
mod replays;
mod service;
mod sessions;
mod shops;
mod staff;
mod status;
mod tables;
mod worker;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ordergate_domain::audit::AuditEntry;
use ordergate_store::{StoreError, StoreResult};
use rusqlite::{Connection, Transaction};
use rusqlite_migration::{M, Migrations};

use crate::error::SqliteError;
use crate::replays::ReplayCache;
use crate::worker::{Readers, Writer};

/// Read connections opened up front; more are opened if ever needed at once.
const READERS: usize = 4;
/// Prepared statements kept per connection: more than the store has.
const STATEMENT_CACHE: usize = 256;

/// The schema version this binary migrates a database to: one per
/// migration.
pub const SCHEMA_VERSION: usize = MIGRATIONS.len();

/// The refusal of a database a newer ordergate wrote: its migrations are
/// forward-only, so this binary cannot know what they changed.
fn too_new(version: i64) -> String {
    format!(
        "the database's schema is version {version}, newer than this ordergate's \
         ({SCHEMA_VERSION}): a newer ordergate wrote it. Run that release again, or restore the \
         backup taken before the upgrade (README, \"Upgrading\")"
    )
}

/// Forward only: a database is never migrated down.
const MIGRATIONS: &[M<'static>] = &[
    M::up(include_str!("../migrations/0001_foundation.sql")),
    M::up(include_str!("../migrations/0002_exactly_once.sql")),
    M::up(include_str!("../migrations/0003_guest_access.sql")),
    M::up(include_str!("../migrations/0004_item_details.sql")),
    M::up(include_str!("../migrations/0005_option_groups.sql")).foreign_key_check(),
    M::up(include_str!("../migrations/0006_languages.sql")),
    M::up(include_str!("../migrations/0007_photos.sql")),
    M::up(include_str!("../migrations/0008_tables.sql")),
    M::up(include_str!("../migrations/0009_service_requests.sql")),
    M::up(include_str!("../migrations/0010_recall.sql")),
    M::up(include_str!("../migrations/0011_kitchen_pace.sql")),
    M::up(include_str!("../migrations/0012_printers.sql")),
    M::up(include_str!("../migrations/0013_staff_accounts.sql")),
    M::up(include_str!("../migrations/0014_devices.sql")),
    M::up(include_str!("../migrations/0015_orders_by_client.sql")),
];

fn migrations() -> Migrations<'static> {
    Migrations::from_slice(MIGRATIONS)
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
            // Writes of a group other than orders run in savepoints, and
            // SQLite keeps the pages a savepoint may roll back in a
            // sub-journal: a temporary file once it outgrows 64 KiB, which a
            // group soon did when orders had savepoints too. Writing it was a
            // fifth of the writer's time; in memory it costs a copy.
            .and_then(|()| writer.pragma_update(None, "temp_store", "memory"))
            // A migration that builds a table anew (to change a check) must
            // run with foreign keys off, as SQLite's own recipe says; such a
            // migration checks them itself before it commits.
            .and_then(|()| writer.pragma_update(None, "foreign_keys", false))
            .map_err(SqliteError::from)?;
        migrations().to_latest(&mut writer).map_err(|e| match e {
            rusqlite_migration::Error::MigrationDefinition(
                rusqlite_migration::MigrationDefinitionError::DatabaseTooFarAhead,
            ) => {
                let version: i64 = writer
                    .query_row("pragma user_version", [], |row| row.get(0))
                    .unwrap_or_default();
                StoreError::Internal(too_new(version).into())
            }
            other => StoreError::Internal(Box::new(other)),
        })?;
        configure(&writer).map_err(SqliteError::from)?;
        let checkpointer = Connection::open(path).map_err(SqliteError::from)?;
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
        let writer =
            Writer::start(writer, checkpointer).map_err(|e| StoreError::Internal(Box::new(e)))?;
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

    /// [`SqliteStore::write`] for `f` that does the same when it runs again
    /// (see [`Writer::run_repeatable`]).
    async fn write_repeatable<R, F>(&self, f: F) -> StoreResult<R>
    where
        F: Fn(&Connection) -> Result<R, SqliteError> + Send + 'static,
        R: Send + 'static,
    {
        self.writer.run_repeatable(f).await
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

    /// Migration 5 builds the inventory table anew: a database written
    /// before it keeps every level and every log row pointing at one, and
    /// foreign keys are enforced again once the store is open.
    #[tokio::test]
    async fn inventory_and_its_log_survive_the_rebuild_of_the_inventory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("og.db");
        let mut old = Connection::open(&path).unwrap();
        old.pragma_update(None, "foreign_keys", true).unwrap();
        migrations().to_version(&mut old, 4).unwrap();
        old.execute_batch(
            "insert into shops values ('s', 'Diner', 'JPY', 'UTC', 1, 0);
             insert into inventory values ('s', 'curry', 'menuItem', 5, 0, null, 2, 0);
             insert into inventory_log (shop_id, item_id, operation, delta, stock_before,
                                        stock_after, order_id, actor, created_at)
             values ('s', 'curry', 'set', 5, null, 5, null, 'staff', 0);",
        )
        .unwrap();
        drop(old);

        drop(SqliteStore::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        let kept: (i64, i64) = conn
            .query_row(
                "select i.stock, count(l.log_id) from inventory i
                 join inventory_log l on l.item_id = i.item_id",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .unwrap();
        assert_eq!(kept, (5, 1));
        let problems: i64 = conn
            .query_row("select count(*) from pragma_foreign_key_check", [], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(problems, 0);
        let option_kind = conn.execute(
            "insert into inventory values ('s', 'large', 'option', null, 0, null, 1, 0)",
            [],
        );
        assert_eq!(option_kind.unwrap(), 1, "options are inventory entries now");

        drop(conn);

        let store = SqliteStore::open(&path).unwrap();
        let enforced: bool = store
            .write(|conn| Ok(conn.pragma_query_value(None, "foreign_keys", |row| row.get(0))?))
            .await
            .unwrap();
        assert!(enforced, "foreign keys are on again after the migrations");
    }
}
