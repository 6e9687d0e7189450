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
//! every node through a `NOTIFY` sent just after the commit (see
//! [`doorbell`] and [`listen`]).

mod accounts;
mod audit;
mod catalog;
mod codec;
mod doorbell;
mod error;
mod events;
mod facade;
mod filing;
mod grouped;
mod idempotency;
mod inventory;
mod listen;
mod operations;
mod orders;
mod photos;
mod place;
mod printers;
mod replays;
mod routes;
mod service;
mod sessions;
mod shards;
mod shops;
mod staff;
mod tables;
mod turns;
mod tx;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ordergate_store::{StoreError, StoreResult};
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions, Postgres};
use sqlx::{Connection, Transaction};

use crate::doorbell::Doorbell;
use crate::error::{PgError, cannot_connect, classify};
use crate::listen::{Announcer, Listening};
use crate::routes::Routes;
use crate::shards::Shards;
use crate::tx::{LOCK_TIMEOUT, Tx};

pub use error::describe;
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
    shards: Shards,
    routes: Routes,
    turns: turns::Turns,
    audit: audit::Filer,
    replays: replays::Replays,
    announcer: Announcer,
    doorbell: Doorbell,
    listening: Listening,
}

/// The contract's default `inflight-wait-ms`.
const DEFAULT_IN_FLIGHT_WAIT: Duration = Duration::from_secs(2);

/// The version of this binary's newest migration.
fn newest_migration() -> i64 {
    MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
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
        // Migrations wait for their locks as long as they need: on Citus,
        // distributing tables waits on metadata locks other nodes' reads
        // hold, and one node migrates at a time anyway (sqlx's own lock).
        let mut first = PgConnection::connect_with(&options)
            .await
            .map_err(cannot_connect)?;
        migrate(&mut first).await?;
        let distributed = match citus(&mut first).await.map_err(classify)? {
            Citus::Absent => false,
            Citus::Distributed => true,
            Citus::Undistributed => {
                tracing::warn!(
                    "the citus extension is in this database, but its tables are not spread \
                     over the cluster: run `ordergate distribute` (README, \"Running on Citus\")"
                );
                false
            }
        };
        let aligning = distributed && shards::hash_agrees(&mut first).await?;
        let _ = first.close().await;

        let mut options = options.options([("lock_timeout", tx::millis(LOCK_TIMEOUT))]);
        if distributed {
            options = options.options([("citus.propagate_set_commands", "local")]);
        }
        let pool = PgPoolOptions::new()
            .max_connections(POOL_SIZE)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options.clone())
            .await
            .map_err(cannot_connect)?;
        let shards = Shards::load(&pool, distributed, aligning).await?;
        let announcer = Announcer::default();
        let doorbell = Doorbell::start(&options);
        let listening = listen::start(options, pool.clone(), announcer.clone())
            .await
            .map_err(classify)?;
        let routes = Routes::new(distributed);
        Ok(PgStore {
            pg: Arc::new(Pg {
                audit: audit::filer(pool.clone(), distributed),
                replays: replays::Replays::start(pool.clone(), distributed),
                pool,
                shards,
                routes,
                turns: turns::Turns::default(),
                announcer,
                doorbell,
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

/// Applies this backend's migrations, refusing a database a newer
/// release migrated.
async fn migrate(conn: &mut PgConnection) -> StoreResult<()> {
    MIGRATOR.run(conn).await.map_err(|e| match e {
        sqlx::migrate::MigrateError::Execute(e) => classify(e),
        sqlx::migrate::MigrateError::VersionMissing(version) if version > newest_migration() => {
            StoreError::Internal(
                format!(
                    "the database's schema has migration {version}, newer than this \
                     ordergate's newest ({}): a newer ordergate wrote it. Run that release \
                     again, or restore the backup taken before the upgrade (README, \
                     \"Upgrading\")",
                    newest_migration()
                )
                .into(),
            )
        }
        other => StoreError::Internal(Box::new(other)),
    })
}

/// Where a database stands with Citus.
enum Citus {
    /// Plain PostgreSQL.
    Absent,
    /// The shops are spread over the cluster's workers.
    Distributed,
    /// Citus came after the schema was migrated: `ordergate distribute`.
    Undistributed,
}

async fn citus(conn: &mut PgConnection) -> Result<Citus, sqlx::Error> {
    let present: bool =
        sqlx::query_scalar("select exists (select from pg_extension where extname = 'citus')")
            .fetch_one(&mut *conn)
            .await?;
    if !present {
        return Ok(Citus::Absent);
    }
    let distributed: bool = sqlx::query_scalar(
        "select exists (select from pg_dist_partition where logicalrelid = 'shops'::regclass)",
    )
    .fetch_one(conn)
    .await?;
    Ok(if distributed {
        Citus::Distributed
    } else {
        Citus::Undistributed
    })
}

/// Spreads a database that got Citus after it was migrated over the
/// cluster it is now the coordinator of: this release's migrations first,
/// then every table not yet distributed (`ordergate_distribute()`, from
/// migration 0016, which the migrations themselves call on a database that
/// has Citus). Returns how many tables it distributed: 0 when all were.
/// Their rows move to the workers in one transaction, which holds each
/// table's lock until it commits: stop every node first.
pub async fn distribute(options: PgConnectOptions) -> StoreResult<i32> {
    let mut conn = PgConnection::connect_with(&options)
        .await
        .map_err(cannot_connect)?;
    migrate(&mut conn).await?;
    let distributed = sqlx::query_scalar("select ordergate_distribute()")
        .fetch_one(&mut conn)
        .await
        .map_err(classify)?;
    let _ = conn.close().await;
    Ok(distributed)
}

impl Pg {
    async fn begin(&self) -> StoreResult<Tx> {
        Tx::begin(&self.pool, self.shards.distributed())
            .await
            .map_err(cannot_connect)
    }

    /// Commits `tx` when `result` is a success, announces its changes on
    /// this node and rings the other nodes before answering; rolls it back
    /// otherwise.
    async fn finish<T>(&self, tx: Tx, result: Result<T, PgError>) -> StoreResult<T> {
        match result {
            Ok(value) => {
                let committed = tx.commit().await?;
                committed
                    .changes
                    .iter()
                    .for_each(|change| self.announcer.announce(*change));
                for (shop_id, event_id) in &committed.newest_events {
                    self.listening.heard.note(*shop_id, *event_id);
                }
                self.doorbell.ring(&committed);
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
            .map_err(cannot_connect)
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
