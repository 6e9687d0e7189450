//! The guests (and the staff) of a rush: phones that browse, order and
//! misbehave, and a floor that restocks and cancels meanwhile.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde_json::{Value, json};
use uuid::Uuid;

use super::RushArgs;
use super::setup::{Shop, Table};
use crate::client::{Client, OrderAttempt};

/// How long after the rush a pending order keeps retrying before it gives up.
const SETTLE: Duration = Duration::from_secs(30);
/// A client that drops the answer waits this little for it.
const DROPPED: Duration = Duration::from_millis(1);
/// How long a patient client waits for an answer.
const PATIENT: Duration = Duration::from_secs(10);

/// How an intended order ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// Acknowledged with 201; every answer's order id (several for double taps).
    Placed(Vec<String>),
    /// Refused with this code (e.g. OUT_OF_STOCK).
    Refused(String),
    /// No final answer before giving up.
    GaveUp,
}

#[derive(Debug, Clone)]
pub struct Intent {
    pub client_id: String,
    pub session_id: String,
    pub double_tapped: bool,
    pub ending: Ending,
}

impl Intent {
    pub fn order_id(&self) -> Option<&str> {
        match &self.ending {
            Ending::Placed(ids) => ids.first().map(String::as_str),
            _ => None,
        }
    }
}

/// A buggy client's second tap with a fresh key, and what it got.
#[derive(Debug, Clone)]
pub struct FreshTap {
    /// The order the first tap placed.
    pub original: Option<String>,
    /// `originalOrderId` of a DUPLICATE_PAYLOAD refusal, or the order a 201 placed.
    pub answer: Result<String, String>,
    pub duplicate_refused: bool,
}

pub struct Tally {
    pub intents: Vec<Intent>,
    pub fresh_taps: Vec<FreshTap>,
    /// Microseconds from a guest's tap to its final answer, retries included.
    pub latency: Histogram<u64>,
    pub attempts: u64,
    pub lost_answers: u64,
    pub retries_by_code: BTreeMap<String, u64>,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            intents: Vec::new(),
            fresh_taps: Vec::new(),
            latency: Histogram::new_with_bounds(1, 120_000_000, 3).expect("histogram bounds"),
            attempts: 0,
            lost_answers: 0,
            retries_by_code: BTreeMap::new(),
        }
    }
}

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

/// What one send of an order came to.
enum Answer {
    Placed(String),
    Duplicate(String),
    Refused(String),
    GaveUp,
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
        let double_tapped = rand::random_bool(self.args.double_tap);
        let answers = if double_tapped {
            let (first, second) =
                tokio::join!(self.send(&attempt, drop_first), self.send(&attempt, false));
            vec![first, second]
        } else {
            vec![self.send(&attempt, drop_first).await]
        };
        let elapsed = started.elapsed().as_micros() as u64;
        let ending = ending(answers);
        if matches!(ending, Ending::Placed(_)) {
            self.acknowledged.fetch_add(1, Ordering::Relaxed);
        }
        let fresh_tap = if rand::random_bool(self.args.fresh_key_tap) {
            let buggy = OrderAttempt {
                key: Uuid::new_v4().to_string(),
                ..attempt.clone()
            };
            Some(self.send(&buggy, false).await)
        } else {
            None
        };
        let intent = Intent {
            client_id: self.client_id.clone(),
            session_id: self.table.session_id.clone(),
            double_tapped,
            ending,
        };
        let mut tally = self.tally.lock().unwrap_or_else(|e| e.into_inner());
        // Think times are ~2 s: longer answers are counted as the queue a
        // steady arrival rate would have built (coordinated omission).
        let _ = tally.latency.record_correct(elapsed.max(1), 2_000_000);
        if let Some(answer) = fresh_tap {
            let original = intent.order_id().map(str::to_owned);
            tally.fresh_taps.push(match answer {
                Answer::Duplicate(id) => FreshTap {
                    original,
                    answer: Ok(id),
                    duplicate_refused: true,
                },
                Answer::Placed(id) => FreshTap {
                    original,
                    answer: Ok(id),
                    duplicate_refused: false,
                },
                Answer::Refused(code) => FreshTap {
                    original,
                    answer: Err(code),
                    duplicate_refused: false,
                },
                Answer::GaveUp => FreshTap {
                    original,
                    answer: Err("no answer".into()),
                    duplicate_refused: false,
                },
            });
        }
        tally.intents.push(intent);
    }

    /// Sends an order until it has a final answer, with the same key every
    /// time: through lost answers, a server that is down, and the refusals
    /// that say "retry" (in progress, busy, cooldown, the session's order
    /// rate, unavailable, and a request timeout: that order may yet commit,
    /// and the retry then gets its answer).
    async fn send(&self, attempt: &OrderAttempt, drop_first: bool) -> Answer {
        let give_up = Instant::now() + Duration::from_secs(self.args.duration_secs) + SETTLE;
        let mut backoff = Duration::from_millis(50);
        let mut first = true;
        loop {
            let timeout = if drop_first && first {
                DROPPED
            } else {
                PATIENT
            };
            first = false;
            let answer = self.client().place_order(attempt, Some(timeout)).await;
            let retry_in = {
                let mut tally = self.tally.lock().unwrap_or_else(|e| e.into_inner());
                tally.attempts += 1;
                match &answer {
                    Ok(reply) if reply.status == 201 => {
                        return Answer::Placed(reply.str("orderId").unwrap_or_default().to_owned());
                    }
                    Ok(reply) => match reply.code().unwrap_or("?") {
                        code @ ("REQUEST_IN_PROGRESS"
                        | "SESSION_BUSY"
                        | "COOLDOWN_ACTIVE"
                        | "SESSION_RATE_LIMITED"
                        | "UNAVAILABLE"
                        | "REQUEST_TIMEOUT") => {
                            *tally.retries_by_code.entry(code.to_owned()).or_default() += 1;
                            reply.retry_after().unwrap_or(backoff)
                        }
                        "DUPLICATE_PAYLOAD" => {
                            let original = reply.str("originalOrderId").unwrap_or_default();
                            return Answer::Duplicate(original.to_owned());
                        }
                        code => return Answer::Refused(code.to_owned()),
                    },
                    Err(_) => {
                        tally.lost_answers += 1;
                        backoff
                    }
                }
            };
            if Instant::now() + retry_in > give_up {
                return Answer::GaveUp;
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

/// One intended order's ending from its answers (two for a double tap).
fn ending(answers: Vec<Answer>) -> Ending {
    let mut placed = Vec::new();
    for answer in answers {
        match answer {
            // The same cart placed moments ago by this device: that order.
            Answer::Placed(id) | Answer::Duplicate(id) => placed.push(id),
            Answer::Refused(code) => return Ending::Refused(code),
            Answer::GaveUp => return Ending::GaveUp,
        }
    }
    Ending::Placed(placed)
}

/// What the floor staff did during the rush.
#[derive(Debug, Default)]
pub struct StaffTally {
    /// Units added to each item by acknowledged restocks.
    pub restocked: BTreeMap<String, i64>,
    pub cancelled: Vec<String>,
}

/// Restocks the hot item every second and cancels a recent order every few
/// seconds, as a floor does, each with an Idempotency-Key kept on retry.
pub async fn staff(clients: Arc<Vec<Client>>, shop: Shop, deadline: Instant) -> StaffTally {
    let mut tally = StaffTally::default();
    let mut round = 0u64;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(1)).await;
        round += 1;
        let client = &clients[rand::random_range(0..clients.len())];
        if let Some(hot) = &shop.hot {
            let quantity = (shop.tables.len() as i64).max(1);
            let key = Uuid::new_v4().to_string();
            for _ in 0..20 {
                match client
                    .restock(&shop.shop_id, hot, quantity, Some(&key))
                    .await
                {
                    Ok(reply) if reply.status == 200 => {
                        *tally.restocked.entry(hot.clone()).or_default() += quantity;
                        break;
                    }
                    _ => tokio::time::sleep(Duration::from_millis(250)).await,
                }
            }
        }
        if round.is_multiple_of(3) {
            let table = &shop.tables[rand::random_range(0..shop.tables.len())];
            let Ok(orders) = client.session_orders(&table.session_id, 1).await else {
                continue;
            };
            let Some(order) = orders.body["orders"].as_array().and_then(|o| o.first()) else {
                continue;
            };
            let order_id = order["orderId"].as_str().unwrap_or_default().to_owned();
            let key = Uuid::new_v4().to_string();
            for _ in 0..20 {
                match client
                    .set_status(&order_id, &json!({"status": "cancelled"}), Some(&key))
                    .await
                {
                    Ok(reply) if reply.status == 200 => {
                        tally.cancelled.push(order_id);
                        break;
                    }
                    Ok(reply) if reply.status == 409 => break,
                    _ => tokio::time::sleep(Duration::from_millis(250)).await,
                }
            }
        }
    }
    tally
}
