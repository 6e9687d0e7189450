//! Telling the other nodes that something changed, after it committed.
//!
//! A `NOTIFY` inside a write transaction makes its commit take a lock that
//! is global to the database and holds it through the commit's WAL flush:
//! notifying commits take turns, one flush each, and the order path's
//! throughput falls with it (pgbench here, 16 clients, single-row inserts:
//! 8 000 tx/s, 3 000 with a `NOTIFY` in each). So a write commits without
//! one, then rings this node's doorbell: one task sends every change rung
//! since its last send in one notifying transaction of its own, on a
//! connection of its own with `synchronous_commit` off (a doorbell needs
//! no flush: it is not data, and one that is lost is caught up, see
//! [`crate::listen`]). Changes rung while a send is under way go in the
//! next one, so there is at most one notifying commit per node at a time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ordergate_store::Change;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::listen::{self, note_newest};
use crate::tx::Committed;

const FIRST_RETRY: Duration = Duration::from_millis(50);
const LAST_RETRY: Duration = Duration::from_secs(1);

/// This node's doorbell: what is waiting to be sent, and the sending task.
pub(crate) struct Doorbell {
    waiting: Arc<Waiting>,
    sending: JoinHandle<()>,
}

/// The changes rung and not sent yet, each with the newest event id of its
/// shop where it has one.
#[derive(Default)]
struct Waiting {
    changes: Mutex<HashMap<Change, i64>>,
    rung: Notify,
}

impl Doorbell {
    /// Starts the sending task on a one-connection pool of its own.
    pub(crate) fn start(options: &PgConnectOptions) -> Doorbell {
        let options = options
            .clone()
            .options([("synchronous_commit", "off")])
            .application_name("ordergate doorbell");
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .min_connections(0)
            .acquire_timeout(Duration::from_secs(5))
            .connect_lazy_with(options);
        let waiting = Arc::new(Waiting::default());
        let sending = tokio::spawn(send(pool, Arc::clone(&waiting)));
        Doorbell { waiting, sending }
    }

    /// Rings for a transaction that has committed; never blocks.
    pub(crate) fn ring(&self, committed: &Committed) {
        let mut waiting = self
            .waiting
            .changes
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for change in &committed.changes {
            note_newest(&mut waiting, *change, 0);
        }
        for (shop_id, event_id) in &committed.newest_events {
            note_newest(&mut waiting, Change::Events(*shop_id), *event_id);
        }
        drop(waiting);
        self.waiting.rung.notify_one();
    }
}

impl Drop for Doorbell {
    fn drop(&mut self) {
        self.sending.abort();
    }
}

async fn send(pool: PgPool, waiting: Arc<Waiting>) {
    loop {
        waiting.rung.notified().await;
        let mut retry = FIRST_RETRY;
        loop {
            let batch: Vec<(Change, i64)> = waiting
                .changes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .drain()
                .collect();
            if batch.is_empty() {
                break;
            }
            let payloads: Vec<String> = batch
                .iter()
                .map(|(change, event_id)| listen::payload(*change, *event_id))
                .collect();
            let sent =
                sqlx::query("select pg_notify($1, payload) from unnest($2::text[]) as payload")
                    .bind(listen::CHANNEL)
                    .bind(payloads)
                    .execute(&pool)
                    .await;
            if let Err(e) = sent {
                // Back in the queue, merged with whatever was rung meanwhile;
                // other nodes catch up by themselves should this never get through.
                tracing::warn!(error = %e, ?retry, "cannot ring the other nodes; retrying");
                {
                    let mut changes = waiting.changes.lock().unwrap_or_else(|e| e.into_inner());
                    for (change, event_id) in batch {
                        note_newest(&mut changes, change, event_id);
                    }
                }
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(LAST_RETRY);
            }
        }
    }
}
