//! Change announcements across nodes: `NOTIFY` payloads, and the task that
//! `LISTEN`s for them and hands them to this node's listener.
//!
//! Every write transaction sends one notification per change on
//! [`CHANNEL`] (delivered when it commits, never if it rolls back), and
//! also announces its changes on its own node right after the commit. The
//! listening task hears every node's notifications, its own included (a
//! change heard twice only makes a cache look again). When its connection
//! drops it reconnects with backoff and then announces
//! [`Change::Everything`]: notifications sent while it was away are lost.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use ordergate_store::{Change, ChangeListener};
use sqlx::postgres::{PgConnectOptions, PgListener, PgPool, PgPoolOptions};
use tokio::task::JoinHandle;
use uuid::Uuid;

pub(crate) const CHANNEL: &str = "ordergate_changes";

const FIRST_RETRY: Duration = Duration::from_millis(100);
const LAST_RETRY: Duration = Duration::from_secs(10);

/// The payload announcing `change`: `events:<shop id>`, `stock:<shop id>`,
/// `catalog:<shop id>` (or `everything`).
pub(crate) fn payload(change: Change) -> String {
    match change {
        Change::Events(shop_id) => format!("events:{shop_id}"),
        Change::Stock(shop_id) => format!("stock:{shop_id}"),
        Change::Catalog(shop_id) => format!("catalog:{shop_id}"),
        Change::Everything => "everything".to_owned(),
    }
}

pub(crate) fn parse(payload: &str) -> Option<Change> {
    if payload == "everything" {
        return Some(Change::Everything);
    }
    let (kind, shop_id) = payload.split_once(':')?;
    let shop_id: Uuid = shop_id.parse().ok()?;
    match kind {
        "events" => Some(Change::Events(shop_id)),
        "stock" => Some(Change::Stock(shop_id)),
        "catalog" => Some(Change::Catalog(shop_id)),
        _ => None,
    }
}

/// Who hears of changes on this node (none until the server registers one).
#[derive(Clone, Default)]
pub(crate) struct Announcer(Arc<RwLock<Option<ChangeListener>>>);

impl Announcer {
    pub(crate) fn set(&self, listener: ChangeListener) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = Some(listener);
    }

    pub(crate) fn announce(&self, change: Change) {
        // Cloned out of the lock: a listener that sets another one must not deadlock.
        let listener = self.0.read().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(listener) = listener {
            listener(change);
        }
    }
}

/// Connects a listener on its own one-connection pool (so it never takes
/// one of the store's) and starts listening; returns once `LISTEN` is in
/// place, so every change committed after that is heard.
pub(crate) async fn start(
    options: PgConnectOptions,
    announcer: Announcer,
) -> sqlx::Result<JoinHandle<()>> {
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .min_connections(0)
        .max_lifetime(None)
        .idle_timeout(None)
        .acquire_timeout(Duration::from_secs(5))
        .connect_lazy_with(options);
    let listener = listen(&pool).await?;
    Ok(tokio::spawn(run(pool, listener, announcer)))
}

async fn listen(pool: &PgPool) -> sqlx::Result<PgListener> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

async fn run(pool: PgPool, listener: PgListener, announcer: Announcer) {
    let mut listener = Some(listener);
    let mut retry = FIRST_RETRY;
    loop {
        let mut current = match listener.take() {
            Some(current) => current,
            None => match listen(&pool).await {
                Ok(current) => {
                    tracing::info!("listening for changes again; reloading everything");
                    retry = FIRST_RETRY;
                    announcer.announce(Change::Everything);
                    current
                }
                Err(e) => {
                    tracing::warn!(error = %e, ?retry, "cannot listen for changes; retrying");
                    tokio::time::sleep(retry).await;
                    retry = (retry * 2).min(LAST_RETRY);
                    continue;
                }
            },
        };
        loop {
            match current.try_recv().await {
                Ok(Some(notification)) => match parse(notification.payload()) {
                    Some(change) => announcer.announce(change),
                    None => tracing::warn!(
                        payload = notification.payload(),
                        "ignoring an unknown change notification"
                    ),
                },
                // The connection dropped and was re-established, LISTEN
                // included; whatever was sent in between is lost.
                Ok(None) => {
                    tracing::warn!("change listener reconnected; reloading everything");
                    announcer.announce(Change::Everything);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "change listener lost its connection");
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip() {
        let shop = Uuid::new_v4();
        for change in [
            Change::Events(shop),
            Change::Stock(shop),
            Change::Catalog(shop),
            Change::Everything,
        ] {
            assert_eq!(parse(&payload(change)), Some(change));
        }
        assert_eq!(payload(Change::Stock(shop)), format!("stock:{shop}"));
        assert_eq!(parse("menu:x"), None);
        assert_eq!(parse(&format!("menu:{shop}")), None);
        assert_eq!(parse("stock:not-a-uuid"), None);
    }
}
