//! The kitchen display of a rush: follows the shop's live events from the
//! first one, switching nodes and resuming with Last-Event-ID whenever its
//! stream breaks (a killed server, a node going away), and keeps what it saw.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use super::guests::Tally;
use crate::client::Client;

/// Every event the kitchen received, in order of arrival.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    /// (event id, event type, order id for order events).
    pub events: Vec<(i64, String, Option<String>)>,
    pub reconnects: u64,
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
                let order_id = event.data["orderId"].as_str().map(str::to_owned);
                let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
                seen.events.push((event.id, event.event, order_id));
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
        let expected: BTreeSet<&str> = tally.intents.iter().filter_map(|i| i.order_id()).collect();
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let complete = {
                let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
                let placed: BTreeSet<&str> = seen
                    .events
                    .iter()
                    .filter(|(_, kind, _)| kind == "order.placed")
                    .filter_map(|(_, _, id)| id.as_deref())
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
