//! A write transaction and the changes it makes.
//!
//! Every write runs in one [`Tx`]: the steps note the [`Change`]s they make
//! on it as they go (a context passed down, not a thread-local, since one
//! task may have several transactions open across awaits). Committing
//! queues one `NOTIFY` per change inside the transaction, so other nodes
//! hear of it exactly when it becomes visible, and hands the changes back
//! to be announced on this node.

use std::time::Duration;

use ordergate_store::Change;
use sqlx::Transaction;
use sqlx::postgres::{PgConnection, PgPool, Postgres};

use crate::error::PgError;
use crate::listen;

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

pub(crate) struct Tx {
    db: Transaction<'static, Postgres>,
    changes: Vec<Change>,
}

impl Tx {
    /// Begins a read-committed write transaction: each statement sees every
    /// commit made before it, so a step that waited for a row lock then
    /// reads what the holder committed.
    pub(crate) async fn begin(pool: &PgPool) -> Result<Tx, sqlx::Error> {
        Ok(Tx {
            db: pool.begin().await?,
            changes: Vec::new(),
        })
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

    /// Bounds every lock wait of the rest of this transaction (`SET LOCAL
    /// lock_timeout`); a wait that runs out fails with SQLSTATE 55P03.
    pub(crate) async fn lock_timeout(&mut self, wait: Duration) -> Result<(), PgError> {
        sqlx::query("select set_config('lock_timeout', $1, true)")
            .bind(millis(wait))
            .execute(self.conn())
            .await?;
        Ok(())
    }

    /// Commits, with a `NOTIFY` for every noted change delivered on commit,
    /// and returns the changes for this node's own listener.
    pub(crate) async fn commit(mut self) -> Result<Vec<Change>, PgError> {
        if !self.changes.is_empty() {
            let payloads: Vec<String> = self.changes.iter().map(|c| listen::payload(*c)).collect();
            sqlx::query("select pg_notify($1, payload) from unnest($2::text[]) as payload")
                .bind(listen::CHANNEL)
                .bind(payloads)
                .execute(&mut *self.db)
                .await?;
        }
        self.db.commit().await?;
        Ok(self.changes)
    }

    /// Rolls back; a failure to do so is left to the pool, which discards a
    /// connection it cannot reset.
    pub(crate) async fn rollback(self) {
        if let Err(e) = self.db.rollback().await {
            tracing::debug!(error = %e, "rollback failed");
        }
    }
}
