//! The guests (and the staff) of a rush: phones that browse, order and
//! misbehave, and a floor that restocks and cancels meanwhile.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use hdrhistogram::Histogram;
use serde::Serialize;
use serde_json::{Value, json};
use uuid::Uuid;

use super::RushArgs;
use super::setup::{Shop, Table};
use crate::client::{Answer as ClientAnswer, Client, ClientError, OrderAttempt, Reply};

/// How long after the rush a pending order keeps retrying before it gives up.
const SETTLE: Duration = Duration::from_secs(30);
/// A client that drops the answer waits this little for it.
const DROPPED: Duration = Duration::from_millis(1);
/// How long a patient client waits for an answer.
const PATIENT: Duration = Duration::from_secs(10);

/// Refusals that say "not now": a guest waits them out and sends again
/// with the same key. REQUEST_TIMEOUT is one too: the order may yet
/// commit, and the retry then gets its answer.
const RETRIED: [&str; 6] = [
    "REQUEST_IN_PROGRESS",
    "SESSION_BUSY",
    "COOLDOWN_ACTIVE",
    "SESSION_RATE_LIMITED",
    "UNAVAILABLE",
    "REQUEST_TIMEOUT",
];

/// What one attempt heard back: kept whole, so that a failed check can
/// show exactly what each tap was told.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Heard {
    /// The attempt's `X-Request-Id`, which the server's audit log keeps.
    pub request_id: String,
    /// The server it went to: its place in `--url` order, or among the
    /// servers rush started (node 0 is the one `--kill` restarts).
    pub node: usize,
    /// When it went out, to set beside the server's timestamps.
    pub sent_at: DateTime<Utc>,
    /// `None` when no answer came: see `error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Why no answer came: "timeout" (given up on, as a dropped answer is)
    /// or "connection" (the server was down or went away).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// A 201's `orderId`, or a DUPLICATE_PAYLOAD's `originalOrderId`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_id: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}

/// How one tap's send ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Answer<'a> {
    /// 201, naming the order.
    Placed(&'a str),
    /// DUPLICATE_PAYLOAD, naming the order it repeats.
    Duplicate(&'a str),
    Refused(&'a str),
    /// No final answer before giving up.
    GaveUp,
}

impl Heard {
    /// Whether the request may have committed though its answer did not
    /// say so: none came, a 5xx (a commit whose acknowledgement was lost
    /// fails too), or REQUEST_TIMEOUT (the server says so).
    fn may_have_committed(&self) -> bool {
        self.status.is_none_or(|status| status >= 500)
            || self.code.as_deref() == Some("REQUEST_TIMEOUT")
    }

    /// The final answer this attempt was, if it was one.
    pub fn answer(&self) -> Option<Answer<'_>> {
        let id = self.order_id.as_deref().unwrap_or_default();
        match (self.status?, self.code.as_deref()) {
            (201, _) => Some(Answer::Placed(id)),
            (_, Some("DUPLICATE_PAYLOAD")) => Some(Answer::Duplicate(id)),
            (_, Some(code)) if RETRIED.contains(&code) => None,
            (_, code) => Some(Answer::Refused(code.unwrap_or("?"))),
        }
    }
}

/// Everything sent with one idempotency key.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    pub key: String,
    /// Every attempt of each tap (two taps at once for a double tap), up to
    /// its final answer.
    pub sends: Vec<Vec<Heard>>,
}

impl Request {
    /// How each tap's send ended.
    pub fn answers(&self) -> impl Iterator<Item = Answer<'_>> {
        self.sends.iter().map(|attempts| {
            attempts
                .last()
                .and_then(Heard::answer)
                .unwrap_or(Answer::GaveUp)
        })
    }

    /// The orders this key's 201 answers named: one, or none; more is a
    /// duplicate.
    pub fn placed(&self) -> BTreeSet<&str> {
        self.answers()
            .filter_map(|answer| match answer {
                Answer::Placed(id) => Some(id),
                _ => None,
            })
            .collect()
    }

    /// Whether the key may have placed an order nobody heard of: no 201
    /// named one, an attempt may have committed unheard, and a tap ended
    /// without an answer that rules a commit out. After a commit the
    /// contract answers every retry with its replay, so a refusal such as
    /// OUT_OF_STOCK does; giving up or a 5xx (a defect of its own, which
    /// the checks report) does not.
    pub fn unresolved(&self) -> bool {
        let inconclusive = |attempts: &Vec<Heard>| {
            attempts
                .last()
                .is_none_or(|last| last.answer().is_none() || last.status.is_some_and(|s| s >= 500))
        };
        self.placed().is_empty()
            && self.sends.iter().flatten().any(Heard::may_have_committed)
            && self.sends.iter().any(inconclusive)
    }
}

/// How an intended order ended, from its taps' answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// A 201 named its order (whatever the other tap of a double tap heard:
    /// one refused before a restock may be followed by one placed after it).
    Placed,
    /// Refused with this code (OUT_OF_STOCK, DUPLICATE_PAYLOAD, ...).
    Refused(String),
    /// No final answer before giving up.
    GaveUp,
}

/// One order a guest meant to place: its cart, the key it was sent with,
/// and a buggy client's second tap of it with a fresh key.
#[derive(Debug, Clone)]
pub struct Intent {
    pub table: String,
    pub session_id: String,
    pub client_id: String,
    pub cart: Value,
    pub request: Request,
    /// Sent after the first key's answer, with the same cart.
    pub fresh_tap: Option<Request>,
}

impl Intent {
    pub fn double_tapped(&self) -> bool {
        self.request.sends.len() > 1
    }

    /// The guest chose the same cart again and said so: the server places it
    /// however recently the same cart was placed.
    pub fn allow_repeat(&self) -> bool {
        self.cart["allowRepeat"] == true
    }

    pub fn ending(&self) -> Ending {
        if !self.request.placed().is_empty() {
            return Ending::Placed;
        }
        self.request
            .answers()
            .find_map(|answer| match answer {
                Answer::Duplicate(_) => Some(Ending::Refused("DUPLICATE_PAYLOAD".into())),
                Answer::Refused(code) => Some(Ending::Refused(code.to_owned())),
                _ => None,
            })
            .unwrap_or(Ending::GaveUp)
    }

    /// Every key of this intent, and whether it is the fresh-key tap's.
    pub fn requests(&self) -> impl Iterator<Item = (&Request, bool)> {
        std::iter::once((&self.request, false)).chain(self.fresh_tap.iter().map(|r| (r, true)))
    }
}

pub struct Tally {
    pub intents: Vec<Intent>,
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
            latency: Histogram::new_with_bounds(1, 120_000_000, 3).expect("histogram bounds"),
            attempts: 0,
            lost_answers: 0,
            retries_by_code: BTreeMap::new(),
        }
    }

    /// Every order some 201 named, fresh-key taps' included.
    pub fn answered_orders(&self) -> BTreeSet<&str> {
        self.intents
            .iter()
            .flat_map(Intent::requests)
            .flat_map(|(request, _)| request.placed())
            .collect()
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
    /// that say "retry" ([`RETRIED`]). Returns every attempt's answer; `tap`
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

/// What the floor staff did during the rush.
#[derive(Debug, Default)]
pub struct StaffTally {
    /// Units added to each item by acknowledged restocks.
    pub restocked: BTreeMap<String, i64>,
    /// Restocks that never got an answer: applied or not, nobody can say,
    /// so the stock cannot be judged.
    pub unanswered_restocks: usize,
    pub cancelled: Vec<String>,
}

/// Restocks the hot item every second and cancels a recent order every few
/// seconds, as a floor does, each with an Idempotency-Key kept on retry.
pub async fn staff(clients: Arc<Vec<Client>>, shop: Shop, deadline: Instant) -> StaffTally {
    let mut tally = StaffTally::default();
    let give_up = deadline + SETTLE;
    let mut round = 0u64;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(1)).await;
        round += 1;
        let client = &clients[rand::random_range(0..clients.len())];
        if let Some(hot) = &shop.hot {
            let quantity = (shop.tables.len() as i64).max(1);
            let key = Uuid::new_v4().to_string();
            let restock = || client.restock(&shop.shop_id, hot, quantity, Some(&key));
            match until_answered(give_up, restock).await {
                Some(reply) if reply.status == 200 => {
                    *tally.restocked.entry(hot.clone()).or_default() += quantity;
                }
                // Refused: nothing was added.
                Some(_) => {}
                None => tally.unanswered_restocks += 1,
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
            let body = json!({"status": "cancelled"});
            let cancel = || client.set_status(&order_id, &body, Some(&key));
            if until_answered(give_up, cancel)
                .await
                .is_some_and(|reply| reply.status == 200)
            {
                tally.cancelled.push(order_id);
            }
        }
    }
    tally
}

/// Sends a staff request, with the same key every time, until it is
/// answered with something other than "try again" (a lost answer, or what
/// [`says_retry`]); `None` if `give_up` came first.
async fn until_answered<F, A>(give_up: Instant, mut send: F) -> Option<Reply>
where
    F: FnMut() -> A,
    A: Future<Output = ClientAnswer>,
{
    loop {
        match send().await {
            Ok(reply) if !says_retry(&reply) => return Some(reply),
            _ if Instant::now() > give_up => return None,
            _ => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
}

/// Whether an answer asks for the same request again later: a server
/// error, or a [`RETRIED`] refusal.
pub fn says_retry(reply: &Reply) -> bool {
    reply.status >= 500 || reply.code().is_some_and(|c| RETRIED.contains(&c))
}
