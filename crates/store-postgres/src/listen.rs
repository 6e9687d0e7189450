//! Change announcements across nodes: `NOTIFY` payloads, the task that
//! `LISTEN`s for them and hands them to this node's listener, and the
//! catch-up that finds what no notification told.
//!
//! Every write announces its changes on its own node right after it
//! commits, and rings the doorbell ([`crate::doorbell`]), which sends them
//! on [`CHANNEL`] just after. The listening task hears every node's
//! notifications, its own included (a change heard twice only makes a
//! cache look again). When its connection drops it reconnects with backoff
//! and then announces [`Change::Everything`]: notifications sent while it
//! was away are lost.
//!
//! A doorbell can also go unrung: its node died between a commit and the
//! ring, or could not reach the database since. Every change appends to its
//! shop's event log, so the catch-up task reads each shop's newest event id
//! every [`CATCH_UP`]; a shop whose log is past what was heard on two reads
//! running (one is only a doorbell on its way) has all its changes
//! announced. A lost notification delays a change by at most two periods.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use ordergate_store::{Change, ChangeListener};
use sqlx::postgres::{PgConnectOptions, PgListener, PgPool, PgPoolOptions};
use tokio::task::JoinHandle;
use uuid::Uuid;

pub(crate) const CHANNEL: &str = "ordergate_changes";

const FIRST_RETRY: Duration = Duration::from_millis(100);
const LAST_RETRY: Duration = Duration::from_secs(10);
/// How often the catch-up reads the shops' newest event ids: twice that is
/// inside the second the contract gives an order to reach every node's
/// streams.
pub(crate) const CATCH_UP: Duration = Duration::from_millis(400);

/// The payload announcing `change`: `events:<shop id>:<newest event id>`,
/// `stock:<shop id>`, `catalog:<shop id>` (or `everything`).
pub(crate) fn payload(change: Change, newest_event_id: i64) -> String {
    match change {
        Change::Events(shop_id) => format!("events:{shop_id}:{newest_event_id}"),
        Change::Stock(shop_id) => format!("stock:{shop_id}"),
        Change::Catalog(shop_id) => format!("catalog:{shop_id}"),
        Change::Everything => "everything".to_owned(),
    }
}

/// The change a payload announces, with the newest event id it names.
pub(crate) fn parse(payload: &str) -> Option<(Change, Option<i64>)> {
    if payload == "everything" {
        return Some((Change::Everything, None));
    }
    let (kind, rest) = payload.split_once(':')?;
    if kind == "events" {
        let (shop_id, event_id) = rest.split_once(':')?;
        return Some((
            Change::Events(shop_id.parse().ok()?),
            Some(event_id.parse().ok()?),
        ));
    }
    let shop_id: Uuid = rest.parse().ok()?;
    match kind {
        "stock" => Some((Change::Stock(shop_id), None)),
        "catalog" => Some((Change::Catalog(shop_id), None)),
        _ => None,
    }
}

/// The newest event id heard of in each shop: committed here, rung by a
/// node, or caught up.
#[derive(Clone, Default)]
pub(crate) struct Heard(Arc<Mutex<HashMap<Uuid, i64>>>);

impl Heard {
    pub(crate) fn note(&self, shop_id: Uuid, event_id: i64) {
        let mut heard = self.0.lock().unwrap_or_else(|e| e.into_inner());
        note_newest(&mut heard, shop_id, event_id);
    }

    fn newest(&self, shop_id: Uuid) -> i64 {
        let heard = self.0.lock().unwrap_or_else(|e| e.into_inner());
        heard.get(&shop_id).copied().unwrap_or(0)
    }
}

/// Keeps the newer of `event_id` and the id `newest` holds for `key`
/// (0 when it holds none).
pub(crate) fn note_newest<K: std::hash::Hash + Eq>(
    newest: &mut HashMap<K, i64>,
    key: K,
    event_id: i64,
) {
    let held = newest.entry(key).or_insert(0);
    *held = (*held).max(event_id);
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

/// The listening and catch-up tasks, stopped when dropped, and what they
/// have heard.
pub(crate) struct Listening {
    pub(crate) heard: Heard,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.tasks.iter().for_each(JoinHandle::abort);
    }
}

/// Connects a listener on its own one-connection pool (so it never takes
/// one of the store's) and starts listening, and starts the catch-up on
/// `store_pool`; returns once `LISTEN` is in place and the catch-up knows
/// every shop's newest event, so every change committed after that is
/// heard. When the shops' newest events cannot be read (on Citus, a
/// worker is down), the node starts anyway: its doorbells are heard from
/// now on, and its catch-up starts from its first read that succeeds.
pub(crate) async fn start(
    options: PgConnectOptions,
    store_pool: PgPool,
    announcer: Announcer,
) -> sqlx::Result<Listening> {
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .min_connections(0)
        .max_lifetime(None)
        .idle_timeout(None)
        .acquire_timeout(Duration::from_secs(5))
        .connect_lazy_with(options);
    let listener = listen(&pool).await?;
    let heard = Heard::default();
    let seeded = match newest_events(&store_pool).await {
        Ok(newest) => {
            newest
                .into_iter()
                .for_each(|(shop, id)| heard.note(shop, id));
            true
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the shops' newest events yet");
            false
        }
    };
    Ok(Listening {
        tasks: vec![
            tokio::spawn(run(pool, listener, announcer.clone(), heard.clone())),
            tokio::spawn(catch_up(store_pool, announcer, heard.clone(), seeded)),
        ],
        heard,
    })
}

async fn newest_events(pool: &PgPool) -> sqlx::Result<Vec<(Uuid, i64)>> {
    sqlx::query_as("select shop_id, last_event_id from event_counters")
        .fetch_all(pool)
        .await
}

/// Announces every change of a shop whose log is past what was heard on
/// two reads running. Until it has read every shop's newest event once
/// (`seeded`), a read only learns them.
async fn catch_up(pool: PgPool, announcer: Announcer, heard: Heard, mut seeded: bool) {
    let mut ticks = tokio::time::interval(CATCH_UP);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Shops whose log was past what was heard at the last read, and by how far.
    let mut behind: HashMap<Uuid, i64> = HashMap::new();
    loop {
        ticks.tick().await;
        let newest = match newest_events(&pool).await {
            Ok(newest) => newest,
            // The database is away; the requests that need it say so.
            Err(e) => {
                tracing::debug!(error = %e, "catching up on changes failed");
                continue;
            }
        };
        if !seeded {
            newest
                .into_iter()
                .for_each(|(shop, id)| heard.note(shop, id));
            seeded = true;
            continue;
        }
        let was_behind = std::mem::take(&mut behind);
        for (shop_id, event_id) in newest {
            let known = heard.newest(shop_id);
            if event_id <= known {
                continue;
            }
            match was_behind.get(&shop_id) {
                Some(&then) if known < then => {
                    tracing::info!(%shop_id, event_id, "caught up on changes no node announced");
                    heard.note(shop_id, event_id);
                    for change in [
                        Change::Events(shop_id),
                        Change::Stock(shop_id),
                        Change::Catalog(shop_id),
                    ] {
                        announcer.announce(change);
                    }
                }
                _ => {
                    behind.insert(shop_id, event_id);
                }
            }
        }
    }
}

async fn listen(pool: &PgPool) -> sqlx::Result<PgListener> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

async fn run(pool: PgPool, listener: PgListener, announcer: Announcer, heard: Heard) {
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
                    Some((change, newest_event_id)) => {
                        if let (Change::Events(shop_id), Some(event_id)) = (change, newest_event_id)
                        {
                            heard.note(shop_id, event_id);
                        }
                        announcer.announce(change);
                    }
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
        assert_eq!(
            parse(&payload(Change::Events(shop), 42)),
            Some((Change::Events(shop), Some(42)))
        );
        for change in [
            Change::Stock(shop),
            Change::Catalog(shop),
            Change::Everything,
        ] {
            assert_eq!(parse(&payload(change, 0)), Some((change, None)));
        }
        assert_eq!(payload(Change::Stock(shop), 0), format!("stock:{shop}"));
        assert_eq!(parse("menu:x"), None);
        assert_eq!(parse(&format!("menu:{shop}")), None);
        assert_eq!(parse(&format!("events:{shop}")), None);
        assert_eq!(parse(&format!("events:{shop}:x")), None);
        assert_eq!(parse("stock:not-a-uuid"), None);
    }
}
