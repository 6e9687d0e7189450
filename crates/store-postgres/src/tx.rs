//! A write transaction and the changes it makes.
//!
//! Every write runs in one [`Tx`]: the steps note the [`Change`]s they make
//! on it as they go (a context passed down, not a thread-local, since one
//! task may have several transactions open across awaits). Committing hands
//! them back, to be announced on this node and rung to the others (see
//! [`crate::doorbell`]).

use std::time::Duration;

use ordergate_store::Change;
use sqlx::postgres::{PgConnection, PgPool, Postgres};
use sqlx::{AssertSqlSafe, Transaction};
use uuid::Uuid;

use crate::error::PgError;

/// The longest any statement waits for a lock, unless its transaction sets
/// another bound (the order path sets its deadline). Holders are short
/// transactions, so a wait this long means the database is stuck:
/// `Unavailable`.
pub(crate) const LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// A duration as a PostgreSQL setting: whole milliseconds, at least 1
/// (0 would turn a timeout off).
pub(crate) fn millis(wait: Duration) -> String {
    format!("{}ms", wait.as_millis().clamp(1, i32::MAX as u128))
}

/// The statement that bounds the rest of a transaction's lock waits: a
/// `SET LOCAL` statement, which Citus passes on to its workers
/// (`citus.propagate_set_commands = local`), where a `set_config` call
/// would not reach them. Its text is made of a number only.
fn set_lock_timeout(wait: Duration) -> String {
    format!("set local lock_timeout = '{}'", millis(wait))
}

pub(crate) struct Tx {
    db: Transaction<'static, Postgres>,
    distributed: bool,
    changes: Vec<Change>,
    newest_events: Vec<(Uuid, i64)>,
}

/// What a committed transaction changed: its changes, and the newest event
/// id it appended in each shop.
pub(crate) struct Committed {
    pub(crate) changes: Vec<Change>,
    pub(crate) newest_events: Vec<(Uuid, i64)>,
}

impl Tx {
    /// Begins a read-committed write transaction: each statement sees every
    /// commit made before it, so a step that waited for a row lock then
    /// reads what the holder committed. On Citus (`distributed`), whose
    /// workers hold the row locks and do not get the connection's own
    /// `lock_timeout`, the bound is set for the transaction, where Citus
    /// passes it on to every worker it joins.
    pub(crate) async fn begin(pool: &PgPool, distributed: bool) -> Result<Tx, sqlx::Error> {
        if distributed {
            return Tx::begin_waiting(pool, LOCK_TIMEOUT, distributed).await;
        }
        Ok(Tx::of(pool.begin().await?, distributed))
    }

    /// [`Tx::begin`] with every lock wait bounded by `wait` from the start:
    /// `SET LOCAL lock_timeout` goes in the same round trip as its `BEGIN`.
    pub(crate) async fn begin_waiting(
        pool: &PgPool,
        wait: Duration,
        distributed: bool,
    ) -> Result<Tx, sqlx::Error> {
        let begin = format!("begin; {}", set_lock_timeout(wait));
        Ok(Tx::of(
            pool.begin_with(AssertSqlSafe(begin)).await?,
            distributed,
        ))
    }

    fn of(db: Transaction<'static, Postgres>, distributed: bool) -> Tx {
        Tx {
            db,
            distributed,
            changes: Vec::new(),
            newest_events: Vec::new(),
        }
    }

    /// Whether the database is Citus: lock bounds set by `set_config`
    /// reach only the coordinator, not the workers that hold row locks.
    pub(crate) fn distributed(&self) -> bool {
        self.distributed
    }

    pub(crate) fn conn(&mut self) -> &mut PgConnection {
        &mut self.db
    }

    /// Notes a change of this transaction, to announce once it commits.
    pub(crate) fn note(&mut self, change: Change) {
        if !self.changes.contains(&change) {
            self.changes.push(change);
        }
    }

    /// Notes the event this transaction appended as `event_id` in the shop's
    /// log (and so the change of its events).
    pub(crate) fn note_event(&mut self, shop_id: Uuid, event_id: i64) {
        self.note(Change::Events(shop_id));
        match self
            .newest_events
            .iter_mut()
            .find(|(shop, _)| *shop == shop_id)
        {
            Some((_, newest)) => *newest = (*newest).max(event_id),
            None => self.newest_events.push((shop_id, event_id)),
        }
    }

    /// Bounds every lock wait of the rest of this transaction (`SET LOCAL
    /// lock_timeout`); a wait that runs out fails with SQLSTATE 55P03.
    pub(crate) async fn lock_timeout(&mut self, wait: Duration) -> Result<(), PgError> {
        sqlx::raw_sql(AssertSqlSafe(set_lock_timeout(wait)))
            .execute(self.conn())
            .await?;
        Ok(())
    }

    /// Commits, and returns what changed.
    pub(crate) async fn commit(self) -> Result<Committed, PgError> {
        self.db.commit().await?;
        Ok(Committed {
            changes: self.changes,
            newest_events: self.newest_events,
        })
    }

    /// Rolls back; a failure to do so is left to the pool, which discards a
    /// connection it cannot reset.
    pub(crate) async fn rollback(self) {
        if let Err(e) = self.db.rollback().await {
            tracing::debug!(error = %e, "rollback failed");
        }
    }
}
