//! The kitchen display of a rush: follows the shop's live events from the
//! first one, switching nodes and resuming with Last-Event-ID whenever its
//! stream breaks (a killed server, a node going away), and keeps what it saw.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use super::tally::Tally;
use crate::client::Client;

/// Every event the kitchen received, in order of arrival.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    pub events: Vec<Event>,
    pub reconnects: u64,
}

/// What the checks need of one event. Ids increase in commit order, so they
/// also tell whether an order was cancelled before another was placed.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub id: i64,
    pub kind: String,
    /// For order events.
    pub order_id: Option<String>,
    /// The order's status, for order events.
    pub status: Option<String>,
}

pub struct Follower {
    seen: Arc<Mutex<Seen>>,
    task: JoinHandle<()>,
}

pub fn follow(clients: Arc<Vec<Client>>, shop_id: String) -> Follower {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let task = tokio::spawn(watch(clients, shop_id, Arc::clone(&seen)));
    Follower { seen, task }
}

async fn watch(clients: Arc<Vec<Client>>, shop_id: String, seen: Arc<Mutex<Seen>>) {
    let mut last = 0;
    for node in (0..clients.len()).cycle() {
        if let Ok(mut stream) = clients[node].events(&shop_id, last).await {
            while let Ok(Some(event)) = stream.next().await {
                last = event.id;
                let text = |field: &str| event.data[field].as_str().map(str::to_owned);
                let seen_event = Event {
                    id: event.id,
                    order_id: text("orderId"),
                    status: text("status"),
                    kind: event.event,
                };
                let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
                seen.events.push(seen_event);
            }
        }
        seen.lock().unwrap_or_else(|e| e.into_inner()).reconnects += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

impl Follower {
    /// Waits (up to 10 s) until the kitchen has seen every acknowledged
    /// order, then stops following and returns what it saw.
    pub async fn finish(self, tally: &Tally) -> Seen {
        let expected = tally.answered_orders();
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let complete = {
                let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
                let placed: BTreeSet<&str> = seen
                    .events
                    .iter()
                    .filter(|e| e.kind == "order.placed")
                    .filter_map(|e| e.order_id.as_deref())
                    .collect();
                expected.is_subset(&placed)
            };
            if complete || Instant::now() > until {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // A moment more, so an extra (duplicate) event would be caught too.
        tokio::time::sleep(Duration::from_millis(300)).await;
        self.task.abort();
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.clone()
    }
}
