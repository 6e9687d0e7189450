//! The guests of a rush: phones that browse, order and misbehave.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::client::{Client, ClientError, OrderAttempt};
use crate::setup::{Shop, Table};
use crate::tally::{Heard, Intent, Request, Tally};
use crate::{RushArgs, SETTLE};

/// A client that drops the answer waits this little for it.
const DROPPED: Duration = Duration::from_millis(1);
/// How long a patient client waits for an answer.
const PATIENT: Duration = Duration::from_secs(10);

/// Runs every guest until `deadline`, then lets pending orders settle.
pub async fn run(
    clients: Arc<Vec<Client>>,
    shop: Shop,
    args: RushArgs,
    deadline: Instant,
    acknowledged: Arc<AtomicUsize>,
) -> Tally {
    let tally = Arc::new(Mutex::new(Tally::new()));
    let shop = Arc::new(shop);
    let mut guests = tokio::task::JoinSet::new();
    for (t, table) in shop.tables.iter().enumerate() {
        for g in 0..args.guests {
            let guest = Guest {
                clients: Arc::clone(&clients),
                shop: Arc::clone(&shop),
                table: table.clone(),
                client_id: format!("rush-{}-{g}", table.label),
                bursting: args.burst && t == 0,
                args: args.clone(),
                tally: Arc::clone(&tally),
                acknowledged: Arc::clone(&acknowledged),
            };
            guests.spawn(guest.live(deadline));
        }
    }
    while guests.join_next().await.is_some() {}
    let tally = Arc::try_unwrap(tally)
        .map_err(|_| ())
        .expect("every guest has left");
    tally.into_inner().unwrap_or_else(|e| e.into_inner())
}

struct Guest {
    clients: Arc<Vec<Client>>,
    shop: Arc<Shop>,
    table: Table,
    client_id: String,
    bursting: bool,
    args: RushArgs,
    tally: Arc<Mutex<Tally>>,
    /// Orders acknowledged so far, for the progress bar.
    acknowledged: Arc<AtomicUsize>,
}

impl Guest {
    fn client(&self) -> &Client {
        &self.clients[rand::random_range(0..self.clients.len())]
    }

    async fn live(self, deadline: Instant) {
        let mut last_cart = Value::Null;
        while Instant::now() < deadline {
            let Some(cart) = self.choose(&last_cart).await else {
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            };
            last_cart = cart.clone();
            self.order(cart).await;
            self.think().await;
        }
    }

    /// Reads the menu and picks a cart: one to three lines of what is not
    /// sold out, sometimes with toppings, and the hot item when there is one.
    async fn choose(&self, last: &Value) -> Option<Value> {
        let menu = self.client().menu(&self.shop.shop_id).await.ok()?;
        let available: Vec<&Value> = menu.body["items"]
            .as_array()?
            .iter()
            .filter(|item| item["soldOut"] == false)
            .collect();
        if available.is_empty() {
            return None;
        }
        let mut lines = Vec::new();
        for _ in 0..rand::random_range(1..=3) {
            let item = available[rand::random_range(0..available.len())];
            let max = item["maxToppings"].as_u64().unwrap_or(0) as usize;
            let toppings: Vec<Value> = item["toppings"]
                .as_array()
                .map(|all| {
                    all.iter()
                        .filter(|t| t["soldOut"] == false)
                        .take(rand::random_range(0..=max))
                        .map(|t| t["toppingId"].clone())
                        .collect()
                })
                .unwrap_or_default();
            lines.push(json!({"menuItemId": item["menuItemId"], "quantity": rand::random_range(1..=2), "toppingIds": toppings}));
        }
        if let Some(hot) = &self.shop.hot {
            lines.push(json!({"menuItemId": hot, "quantity": 1}));
        }
        let mut cart = json!({"items": lines});
        if cart == *last {
            // The same cart again is a new order, not a double tap: say so.
            cart["allowRepeat"] = json!(true);
        }
        Some(cart)
    }

    async fn order(&self, cart: Value) {
        let attempt = OrderAttempt {
            session_id: self.table.session_id.clone(),
            pin: self.table.pin.clone(),
            client_id: self.client_id.clone(),
            key: Uuid::new_v4().to_string(),
            body: cart,
        };
        let started = Instant::now();
        let drop_first = rand::random_bool(self.args.drop);
        let sends = if rand::random_bool(self.args.double_tap) {
            let (first, second) = tokio::join!(
                self.send(&attempt, 1, drop_first),
                self.send(&attempt, 2, false)
            );
            vec![first, second]
        } else {
            vec![self.send(&attempt, 1, drop_first).await]
        };
        let elapsed = started.elapsed().as_micros() as u64;
        let request = Request {
            key: attempt.key.clone(),
            sends,
        };
        if !request.placed().is_empty() {
            self.acknowledged.fetch_add(1, Ordering::Relaxed);
        }
        let fresh_tap = if rand::random_bool(self.args.fresh_key_tap) {
            let buggy = OrderAttempt {
                key: Uuid::new_v4().to_string(),
                ..attempt.clone()
            };
            Some(Request {
                sends: vec![self.send(&buggy, 1, false).await],
                key: buggy.key,
            })
        } else {
            None
        };
        let intent = Intent {
            table: self.table.label.clone(),
            session_id: attempt.session_id,
            client_id: attempt.client_id,
            cart: attempt.body,
            request,
            fresh_tap,
        };
        let mut tally = self.tally.lock().unwrap_or_else(|e| e.into_inner());
        // Think times are ~2 s: longer answers are counted as the queue a
        // steady arrival rate would have built (coordinated omission).
        let _ = tally.latency.record_correct(elapsed.max(1), 2_000_000);
        tally.intents.push(intent);
    }

    /// Sends an order until it has a final answer, with the same key every
    /// time: through lost answers, a server that is down, and the refusals
    /// that say "retry" ([`RETRIED`](crate::tally::RETRIED)). Returns every attempt's answer; `tap`
    /// tells a double tap's two sends apart in their request ids.
    async fn send(&self, attempt: &OrderAttempt, tap: u8, drop_first: bool) -> Vec<Heard> {
        let give_up = Instant::now() + Duration::from_secs(self.args.duration_secs) + SETTLE;
        let mut backoff = Duration::from_millis(50);
        let mut attempts = Vec::new();
        loop {
            let timeout = if drop_first && attempts.is_empty() {
                DROPPED
            } else {
                PATIENT
            };
            // Plain (hex, '-', '.') and at most 64 characters, so the server
            // keeps it in its audit row: the key, the tap, the attempt.
            let request_id = format!("{}.{tap}.{}", attempt.key, attempts.len() + 1);
            let node = rand::random_range(0..self.clients.len());
            let sent_at = Utc::now();
            let answer = self.clients[node]
                .place_order_as(attempt, &request_id, Some(timeout))
                .await;
            let heard = match &answer {
                Ok(reply) => Heard {
                    request_id,
                    node,
                    sent_at,
                    status: Some(reply.status),
                    error: None,
                    code: reply.code().map(str::to_owned),
                    order_id: reply
                        .str("orderId")
                        .or_else(|| reply.str("originalOrderId"))
                        .map(str::to_owned),
                    replayed: reply.replayed(),
                },
                Err(error) => Heard {
                    request_id,
                    node,
                    sent_at,
                    status: None,
                    error: Some(match error {
                        ClientError::Timeout => "timeout",
                        ClientError::Network(_) => "connection",
                    }),
                    code: None,
                    order_id: None,
                    replayed: false,
                },
            };
            let done = heard.answer().is_some();
            let retry_in = match &answer {
                Ok(reply) => reply.retry_after().unwrap_or(backoff),
                Err(_) => backoff,
            };
            {
                let mut tally = self.tally.lock().unwrap_or_else(|e| e.into_inner());
                tally.attempts += 1;
                match &heard.code {
                    _ if done => {}
                    Some(code) => *tally.retries_by_code.entry(code.clone()).or_default() += 1,
                    None => tally.lost_answers += 1,
                }
            }
            attempts.push(heard);
            if done || Instant::now() + retry_in > give_up {
                return attempts;
            }
            tokio::time::sleep(retry_in).await;
            backoff = (backoff * 2).min(Duration::from_secs(2));
        }
    }

    async fn think(&self) {
        if self.bursting {
            // The whole table orders together: wake at the next second.
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            let to_next = Duration::from_millis(1000 - u64::from(now.subsec_millis()));
            tokio::time::sleep(to_next + Duration::from_secs(1)).await;
        } else {
            tokio::time::sleep(Duration::from_millis(rand::random_range(1_000..3_000))).await;
        }
    }
}
