//! The verdict of a rush: the promise's invariants, checked from outside
//! through the API against what the guests, the staff and the kitchen saw.
//!
//! Orders are accounted for by the answers that named them. Each order in
//! the history belongs to the one idempotency key whose 201 carried its id;
//! an order no answer named belongs to a key whose tap never got a final
//! answer (its request may have committed with the answer lost), if one of
//! the same device and cart is left, and is otherwise an order nobody was
//! told of. An order is placed twice when one key produced two orders, or
//! when the server's duplicate rule should have refused it: a request
//! without `allowRepeat` placed the same cart as an order of the same
//! device and table that was live (not cancelled) and inside the duplicate
//! window. Everything else that looks alike is what the contract asks for:
//! a fresh key after a refusal or a cancellation, a repeat the guest asked
//! for, a cart placed again once the window has passed.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use anyhow::bail;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};

use super::Outcome;
use super::guests::{Answer, Intent, Request, says_retry};
use super::kitchen::Event;
use crate::client::{Answer as ClientAnswer, Client, Reply};

/// Rows one list request returns at most.
const PAGE: u32 = 500;
/// Problems a failed check lists with their evidence; more are counted.
const EVIDENCE: usize = 50;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub name: &'static str,
    pub passed: bool,
    pub detail: String,
    /// A failed check's problems, each with the keys, answers and orders
    /// involved, so that the report alone can be diagnosed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Value>,
    #[serde(skip_serializing_if = "is_zero")]
    pub evidence_left_out: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Check {
    fn new(name: &'static str, passed: bool, detail: String, problems: Vec<Value>) -> Check {
        let (evidence, evidence_left_out) = if passed {
            (Vec::new(), 0)
        } else {
            let left_out = problems.len().saturating_sub(EVIDENCE);
            (problems.into_iter().take(EVIDENCE).collect(), left_out)
        };
        Check {
            name,
            passed,
            detail,
            evidence,
            evidence_left_out,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Verdict {
    pub checks: Vec<Check>,
    pub in_history: usize,
    pub duplicates: usize,
    pub lost: usize,
}

impl Verdict {
    pub fn holds(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }
}

/// An order of the history, as the checks need it.
#[derive(Debug, Clone)]
pub struct Ordered {
    pub id: String,
    pub session_id: String,
    pub client_id: Option<String>,
    pub status: String,
    pub created_at: Option<DateTime<Utc>>,
    pub payload: Payload,
    /// Units of each item and topping the order took.
    pub units: BTreeMap<String, i64>,
}

impl Ordered {
    pub fn from_json(order: &Value) -> Ordered {
        let text = |field: &str| order[field].as_str().unwrap_or_default().to_owned();
        let mut units = BTreeMap::new();
        for line in order["items"].as_array().into_iter().flatten() {
            let quantity = line["quantity"].as_i64().unwrap_or(0);
            let item = line["menuItemId"].as_str().unwrap_or_default().to_owned();
            *units.entry(item).or_default() += quantity;
            for topping in toppings(&line["toppings"], "toppingId") {
                *units.entry(topping).or_default() += quantity;
            }
        }
        Ordered {
            id: text("orderId"),
            session_id: text("sessionId"),
            client_id: order["clientId"].as_str().map(str::to_owned),
            status: text("status"),
            created_at: order["createdAt"]
                .as_str()
                .and_then(|at| DateTime::parse_from_rfc3339(at).ok())
                .map(|at| at.with_timezone(&Utc)),
            payload: Payload::new(&order["items"], &order["note"], |line| {
                toppings(&line["toppings"], "toppingId")
            }),
            units,
        }
    }

    fn cancelled(&self) -> bool {
        self.status == "cancelled"
    }
}

fn toppings(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|t| t[field].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Items and note as the duplicate rule compares them: lines of one item
/// with the same toppings merged, toppings sorted (the server's canonical
/// payload), so that a cart and the order it placed compare equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    lines: BTreeMap<(String, Vec<String>), i64>,
    note: String,
}

impl Payload {
    fn new(items: &Value, note: &Value, toppings: impl Fn(&Value) -> Vec<String>) -> Payload {
        let mut lines = BTreeMap::new();
        for line in items.as_array().into_iter().flatten() {
            let mut ids = toppings(line);
            ids.sort();
            let item = line["menuItemId"].as_str().unwrap_or_default().to_owned();
            *lines.entry((item, ids)).or_default() += line["quantity"].as_i64().unwrap_or(0);
        }
        Payload {
            lines,
            note: note.as_str().unwrap_or_default().trim().to_owned(),
        }
    }

    /// A request body's payload.
    pub fn of_cart(cart: &Value) -> Payload {
        Payload::new(&cart["items"], &cart["note"], |line| {
            line["toppingIds"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|id| id.as_str().map(str::to_owned))
                .collect()
        })
    }
}

/// How long a read the verdict is drawn from may keep failing.
const READ_PATIENCE: Duration = Duration::from_secs(30);

/// A read the verdict is drawn from. A failed read must never pass for an
/// empty one (a history read answered 500 looked like 27 lost orders): it
/// is retried, on each node in turn, through lost answers and what
/// [`says_retry`], each failure told on stderr; anything but 200 in the
/// end stops the rush without a verdict.
async fn read<'a, A>(
    clients: &'a [Client],
    what: &str,
    get: impl Fn(&'a Client) -> A,
) -> anyhow::Result<Reply>
where
    A: Future<Output = ClientAnswer>,
{
    let give_up = Instant::now() + READ_PATIENCE;
    let mut attempt = 0;
    loop {
        let client = &clients[attempt % clients.len()];
        attempt += 1;
        let answer = get(client).await;
        let said = match &answer {
            Ok(reply) if reply.status == 200 => return answer.map_err(Into::into),
            Ok(reply) => format!("{} {}", reply.status, reply.code().unwrap_or_default()),
            Err(e) => e.to_string(),
        };
        let retry = answer.as_ref().map_or(true, says_retry);
        if !retry || Instant::now() > give_up {
            bail!("could not read {what} from {}: {said}", client.base());
        }
        eprintln!(
            "rush: reading {what} from {}: {said}; retrying",
            client.base()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

pub async fn verify(
    clients: &[Client],
    outcome: &Outcome,
    duplicate_window: Duration,
) -> anyhow::Result<Verdict> {
    let shop = &outcome.setup;
    let mut history = Vec::new();
    let mut truncated = false;
    for table in &shop.tables {
        let what = format!("the history of {}", table.label);
        let reply = read(clients, &what, |c| {
            c.session_orders(&table.session_id, PAGE)
        })
        .await?;
        let orders = reply.body["orders"].as_array().cloned().unwrap_or_default();
        truncated |= orders.len() == PAGE as usize;
        history.extend(orders.iter().map(Ordered::from_json));
    }
    let accounting = account(&Facts {
        intents: &outcome.guests.intents,
        history: &history,
        events: &outcome.kitchen.events,
        duplicate_window,
        truncated,
    });
    let mut checks = accounting.checks;

    let inventory = read(clients, "the inventory", |c| c.inventory(&shop.shop_id)).await?;
    let stock: BTreeMap<String, Option<i64>> = inventory.body["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["itemId"].as_str().unwrap_or_default().to_owned(),
                e["stock"].as_i64(),
            )
        })
        .collect();
    let mut taken: BTreeMap<&str, i64> = BTreeMap::new();
    for order in history.iter().filter(|o| !o.cancelled()) {
        for (item, units) in &order.units {
            *taken.entry(item.as_str()).or_default() += units;
        }
    }
    let mut stock_problems = Vec::new();
    for (item, initial) in &shop.initial_stock {
        let restocked = outcome.staff.restocked.get(item).copied().unwrap_or(0);
        let ordered = taken.get(item.as_str()).copied().unwrap_or(0);
        let expected = initial + restocked - ordered;
        let actual = stock.get(item).copied().flatten();
        if actual != Some(expected) || expected < 0 {
            stock_problems.push(json!({
                "problem": "stock disagrees",
                "itemId": item, "initial": initial, "restocked": restocked,
                "ordered": ordered, "expected": expected, "found": actual,
            }));
        }
    }
    let unanswered = outcome.staff.unanswered_restocks;
    checks.push(Check::new(
        "stock = initial + restocks − ordered, never below zero",
        stock_problems.is_empty() && !truncated && unanswered == 0,
        if unanswered > 0 {
            format!("{unanswered} restocks never answered: whether they applied is unknown")
        } else if stock_problems.is_empty() {
            format!(
                "{} tracked items and toppings agree",
                shop.initial_stock.len()
            )
        } else {
            format!("{} items disagree", stock_problems.len())
        },
        stock_problems,
    ));

    let log = read(clients, "the inventory log", |c| {
        c.inventory_log(&shop.shop_id, PAGE)
    })
    .await?;
    let rows = log.body["entries"].as_array().cloned().unwrap_or_default();
    let op_log = if rows.len() < PAGE as usize {
        let mut sums: BTreeMap<&str, i64> = BTreeMap::new();
        for row in &rows {
            *sums
                .entry(row["itemId"].as_str().unwrap_or_default())
                .or_default() += row["delta"].as_i64().unwrap_or(0);
        }
        let disagreeing: Vec<Value> = shop
            .initial_stock
            .keys()
            .filter_map(|item| {
                let found = stock.get(item).copied().flatten();
                let logged = sums.get(item.as_str()).copied().unwrap_or(0);
                (found != Some(logged)).then(|| {
                    json!({"problem": "log disagrees", "itemId": item, "stock": found, "logSum": logged})
                })
            })
            .collect();
        Check::new(
            "the op log adds up to the stock",
            disagreeing.is_empty(),
            format!(
                "{} rows; {} items whose log disagrees",
                rows.len(),
                disagreeing.len()
            ),
            disagreeing,
        )
    } else {
        Check::new(
            "the op log adds up to the stock",
            true,
            format!(
                "not checked: the log has {PAGE}+ rows (one page); `ordergate verify` checks it all"
            ),
            Vec::new(),
        )
    };
    checks.push(op_log);
    checks.push(kitchen(outcome, &history));

    Ok(Verdict {
        checks,
        in_history: history.len(),
        duplicates: accounting.duplicates,
        lost: accounting.lost,
    })
}

fn kitchen(outcome: &Outcome, history: &[Ordered]) -> Check {
    let events = &outcome.kitchen.events;
    let in_history: BTreeSet<&str> = history.iter().map(|o| o.id.as_str()).collect();
    let backwards: Vec<Value> = events
        .windows(2)
        .filter(|w| w[0].id >= w[1].id)
        .map(|w| json!({"problem": "event ids not increasing", "events": [w[0].id, w[1].id]}))
        .collect();
    let mut placed: BTreeMap<&str, usize> = BTreeMap::new();
    for event in events.iter().filter(|e| e.kind == "order.placed") {
        if let Some(order) = &event.order_id {
            *placed.entry(order.as_str()).or_default() += 1;
        }
    }
    let missing: Vec<&str> = in_history
        .iter()
        .filter(|id| !placed.contains_key(**id))
        .copied()
        .collect();
    let doubled: Vec<&str> = placed
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, _)| *id)
        .collect();
    let strangers: Vec<&str> = placed
        .keys()
        .filter(|id| !in_history.contains(**id))
        .copied()
        .collect();
    let passed =
        backwards.is_empty() && missing.is_empty() && doubled.is_empty() && strangers.is_empty();
    let detail = format!(
        "{} events over {} reconnects; {} orders missing, {} twice, {} unknown; ids increasing: {}",
        events.len(),
        outcome.kitchen.reconnects,
        missing.len(),
        doubled.len(),
        strangers.len(),
        backwards.is_empty()
    );
    let mut problems = backwards;
    for (problem, ids) in [
        ("in the history, never announced", missing),
        ("announced twice", doubled),
        ("announced, not in the history", strangers),
    ] {
        problems.extend(
            ids.iter()
                .map(|id| json!({"problem": problem, "orders": [{"orderId": id}]})),
        );
    }
    Check::new(
        "the kitchen saw every order exactly once, ids increasing",
        passed,
        detail,
        problems,
    )
}

/// What the accounting of orders goes by.
pub struct Facts<'a> {
    pub intents: &'a [Intent],
    pub history: &'a [Ordered],
    pub events: &'a [Event],
    /// The servers' `--duplicate-window-secs` (zero: no duplicate rule).
    pub duplicate_window: Duration,
    /// The history is one page of a longer one.
    pub truncated: bool,
}

/// The checks on the guests' answers and the history, and their counts.
pub struct Accounting {
    pub checks: Vec<Check>,
    pub duplicates: usize,
    pub lost: usize,
}

/// One idempotency key of the rush: an intent's, or its fresh-key tap's.
#[derive(Clone, Copy)]
struct Keyed<'a> {
    /// The intent's place in the tally, which the report names it by.
    number: usize,
    intent: &'a Intent,
    request: &'a Request,
    fresh: bool,
}

impl Keyed<'_> {
    fn evidence(&self) -> Value {
        json!({
            "intent": self.number,
            "key": self.request.key,
            "freshKeyTap": self.fresh,
            "table": self.intent.table,
            "sessionId": self.intent.session_id,
            "clientId": self.intent.client_id,
            "allowRepeat": self.intent.allow_repeat(),
            "items": self.intent.cart["items"],
            "sends": self.request.sends,
        })
    }

    fn could_have_placed(&self, order: &Ordered) -> bool {
        order.session_id == self.intent.session_id
            && order.client_id.as_deref() == Some(self.intent.client_id.as_str())
            && order.payload == Payload::of_cart(&self.intent.cart)
    }
}

/// When the kitchen's events say orders were placed and cancelled. Event
/// ids follow commit order, which the servers' clocks need not.
struct Timeline<'a> {
    placed: BTreeMap<&'a str, i64>,
    cancelled: BTreeMap<&'a str, i64>,
}

impl<'a> Timeline<'a> {
    fn new(events: &'a [Event]) -> Timeline<'a> {
        let mut timeline = Timeline {
            placed: BTreeMap::new(),
            cancelled: BTreeMap::new(),
        };
        for event in events {
            let Some(order) = event.order_id.as_deref() else {
                continue;
            };
            if event.kind == "order.placed" {
                timeline.placed.entry(order).or_insert(event.id);
            } else if event.kind == "order.updated" && event.status.as_deref() == Some("cancelled")
            {
                timeline.cancelled.entry(order).or_insert(event.id);
            }
        }
        timeline
    }

    /// A key that sorts orders as they were placed, as well as it is known.
    fn order(&self, order: &Ordered) -> (Option<i64>, Option<DateTime<Utc>>) {
        (
            self.placed.get(order.id.as_str()).copied(),
            order.created_at,
        )
    }

    fn placed_before(&self, x: &Ordered, y: &Ordered) -> bool {
        match (
            self.placed.get(x.id.as_str()),
            self.placed.get(y.id.as_str()),
        ) {
            (Some(x), Some(y)) => x < y,
            _ => x.created_at < y.created_at,
        }
    }

    /// Whether `x` was not yet cancelled when `y` was placed. A cancel whose
    /// event went unseen counts as earlier: nothing shows it was not.
    fn live_when_placed(&self, x: &Ordered, y: &Ordered) -> bool {
        if !x.cancelled() {
            return true;
        }
        match (
            self.cancelled.get(x.id.as_str()),
            self.placed.get(y.id.as_str()),
        ) {
            (Some(cancelled), Some(placed)) => cancelled > placed,
            _ => false,
        }
    }

    fn evidence(&self, order: &Ordered) -> Value {
        json!({
            "orderId": order.id,
            "sessionId": order.session_id,
            "clientId": order.client_id,
            "status": order.status,
            "createdAt": order.created_at,
            "placedEvent": self.placed.get(order.id.as_str()),
            "cancelledEvent": self.cancelled.get(order.id.as_str()),
        })
    }
}

/// Whether the server's duplicate rule covered `x` when `y` came: `x` was
/// created less than the window before `y` (the server's own clock on both).
fn within_window(x: &Ordered, y: &Ordered, window: Duration) -> bool {
    let window = chrono::Duration::from_std(window);
    let (Some(x), Some(y), Ok(window)) = (x.created_at, y.created_at, window) else {
        return false;
    };
    window > chrono::Duration::zero() && x > y - window
}

pub fn account(facts: &Facts) -> Accounting {
    let ledger = Ledger::new(facts);
    let (lost, lost_count) = ledger.acknowledged_in_history();
    let owners = ledger.owners();
    let twice = ledger.placed_twice(&owners);
    let answers = ledger.answers(&owners);
    Accounting {
        duplicates: twice.duplicates,
        lost: lost_count,
        checks: vec![lost, twice.check, answers],
    }
}

/// The rush's keys and the history, side by side.
struct Ledger<'a> {
    facts: &'a Facts<'a>,
    keyed: Vec<Keyed<'a>>,
    orders: BTreeMap<&'a str, &'a Ordered>,
    timeline: Timeline<'a>,
    /// The keys each 201 named an order to.
    named: BTreeMap<&'a str, Vec<usize>>,
}

/// Who placed each order of the history, as far as the answers tell.
struct Owners<'a> {
    /// The key whose 201 named the order or, failing that, an unanswered
    /// key of its device and cart.
    of: BTreeMap<&'a str, usize>,
    /// Orders attributed to an unanswered key, by that key.
    unheard: BTreeMap<usize, &'a Ordered>,
    /// Orders nobody was told of, and no unanswered key could have placed.
    unexplained: Vec<&'a Ordered>,
}

struct PlacedTwice {
    check: Check,
    duplicates: usize,
}

impl<'a> Ledger<'a> {
    fn new(facts: &'a Facts<'a>) -> Ledger<'a> {
        let keyed: Vec<Keyed> = facts
            .intents
            .iter()
            .enumerate()
            .flat_map(|(number, intent)| {
                intent.requests().map(move |(request, fresh)| Keyed {
                    number,
                    intent,
                    request,
                    fresh,
                })
            })
            .collect();
        let mut named: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (k, keyed) in keyed.iter().enumerate() {
            for id in keyed.request.placed() {
                named.entry(id).or_default().push(k);
            }
        }
        Ledger {
            facts,
            keyed,
            orders: facts.history.iter().map(|o| (o.id.as_str(), o)).collect(),
            timeline: Timeline::new(facts.events),
            named,
        }
    }

    fn requests(&self, ks: impl IntoIterator<Item = usize>) -> Vec<Value> {
        ks.into_iter().map(|k| self.keyed[k].evidence()).collect()
    }

    fn order(&self, id: &str) -> Value {
        self.orders
            .get(id)
            .map_or_else(|| json!({"orderId": id}), |o| self.timeline.evidence(o))
    }

    /// The check, and how many acknowledged orders are missing.
    fn acknowledged_in_history(&self) -> (Check, usize) {
        let lost: Vec<Value> = self
            .named
            .iter()
            .filter(|(id, _)| !self.orders.contains_key(**id))
            .map(|(id, ks)| {
                json!({
                    "problem": "acknowledged, not in the history",
                    "orders": [{"orderId": id}],
                    "requests": self.requests(ks.iter().copied()),
                })
            })
            .collect();
        let count = lost.len();
        let check = Check::new(
            "every acknowledged order is in the history",
            lost.is_empty() && !self.facts.truncated,
            if self.facts.truncated {
                format!("a table has {PAGE}+ orders: history is one page; run a smaller rush")
            } else {
                format!(
                    "{} orders acknowledged by a 201 (fresh-key taps' included), {count} missing",
                    self.named.len()
                )
            },
            lost,
        );
        (check, count)
    }

    fn owners(&self) -> Owners<'a> {
        let mut owners = Owners {
            of: self.named.iter().map(|(id, ks)| (*id, ks[0])).collect(),
            unheard: BTreeMap::new(),
            unexplained: Vec::new(),
        };
        let mut unnamed: Vec<&Ordered> = self
            .facts
            .history
            .iter()
            .filter(|o| !self.named.contains_key(o.id.as_str()))
            .collect();
        unnamed.sort_by_key(|o| self.timeline.order(o));
        let unresolved: Vec<usize> = (0..self.keyed.len())
            .filter(|k| self.keyed[*k].request.unresolved())
            .collect();
        for order in unnamed {
            // One key places one order at most.
            let candidate = unresolved.iter().copied().find(|k| {
                !owners.unheard.contains_key(k) && self.keyed[*k].could_have_placed(order)
            });
            match candidate {
                Some(k) => {
                    owners.of.insert(&order.id, k);
                    owners.unheard.insert(k, order);
                }
                None => owners.unexplained.push(order),
            }
        }
        owners
    }

    fn placed_twice(&self, owners: &Owners) -> PlacedTwice {
        // Orders that should not exist, each with why, and what they were.
        let mut extra: BTreeMap<&str, Value> = BTreeMap::new();
        let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
        let mut count = |what| *counts.entry(what).or_default() += 1;

        for keyed in &self.keyed {
            let mut ids: Vec<&Ordered> = keyed
                .request
                .placed()
                .into_iter()
                .filter_map(|id| self.orders.get(id).copied())
                .collect();
            ids.sort_by_key(|o| self.timeline.order(o));
            for second in ids.iter().skip(1) {
                count("keys answered with several orders");
                extra.entry(&second.id).or_insert_with(|| {
                    json!({
                        "problem": "one key answered with several orders",
                        "orders": ids.iter().map(|o| self.timeline.evidence(o)).collect::<Vec<_>>(),
                        "requests": [keyed.evidence()],
                    })
                });
            }
        }

        for order in &owners.unexplained {
            count("orders nobody was told of");
            // Keys of the same device and cart that were never told of an
            // order: where to look in the audit log.
            let alike = (0..self.keyed.len()).filter(|k| {
                self.keyed[*k].request.placed().is_empty()
                    && self.keyed[*k].could_have_placed(order)
            });
            extra.insert(
                &order.id,
                json!({
                    "problem": "an order nobody was told of: no answer named it, and no \
                                unanswered tap of its device and cart is left to have placed it",
                    "orders": [self.timeline.evidence(order)],
                    "requests": self.requests(alike.take(10)),
                }),
            );
        }

        let mut by_device: BTreeMap<(&str, Option<&str>), Vec<&Ordered>> = BTreeMap::new();
        for order in self.facts.history {
            by_device
                .entry((&order.session_id, order.client_id.as_deref()))
                .or_default()
                .push(order);
        }
        for same_device in by_device.values() {
            for y in same_device {
                let Some(&k) = owners.of.get(y.id.as_str()) else {
                    continue;
                };
                let Some(x) = self.repeated(y, &self.keyed[k], same_device) else {
                    continue;
                };
                count("placed while an identical order was live");
                let problem = if self.keyed[k].fresh {
                    "a fresh-key tap placed its cart again while the original was live"
                } else {
                    "placed again while the same device's same cart was live, without allowRepeat"
                };
                let keys = owners.of.get(x.id.as_str()).copied().into_iter().chain([k]);
                extra.entry(&y.id).or_insert_with(|| {
                    json!({
                        "problem": problem,
                        "orders": [self.timeline.evidence(x), self.timeline.evidence(y)],
                        "requests": self.requests(keys),
                    })
                });
            }
        }

        let shared: Vec<Value> = self
            .named
            .iter()
            .filter(|(_, ks)| ks.len() > 1)
            .map(|(id, ks)| {
                json!({
                    "problem": "one order answered to several keys",
                    "orders": [self.order(id)],
                    "requests": self.requests(ks.iter().copied()),
                })
            })
            .collect();
        for _ in &shared {
            count("orders answered to several keys");
        }

        let duplicates = extra.len();
        let named = self.facts.history.len() - owners.unheard.len() - owners.unexplained.len();
        let detail = format!(
            "{} orders in the history, {named} named by the answer to one key{}; {}",
            self.facts.history.len(),
            if owners.unheard.is_empty() {
                String::new()
            } else {
                format!(
                    ", {} committed with their answer never heard",
                    owners.unheard.len()
                )
            },
            if counts.is_empty() {
                "none placed twice".to_owned()
            } else {
                let counts: Vec<String> = counts
                    .iter()
                    .map(|(what, n)| format!("{n} {what}"))
                    .collect();
                counts.join(", ")
            }
        );
        let mut problems: Vec<Value> = extra.into_values().collect();
        problems.extend(shared);
        PlacedTwice {
            check: Check::new(
                "no order was placed twice",
                problems.is_empty(),
                detail,
                problems,
            ),
            duplicates,
        }
    }

    /// The order the duplicate rule should have refused `y` for, if any: an
    /// earlier one of the same device and cart, inside the window and not
    /// yet cancelled, when `y`'s request did not ask for a repeat.
    fn repeated(
        &self,
        y: &Ordered,
        by: &Keyed,
        same_device: &[&'a Ordered],
    ) -> Option<&'a Ordered> {
        if by.intent.allow_repeat() {
            return None;
        }
        same_device.iter().copied().find(|x| {
            x.id != y.id
                && x.payload == y.payload
                && self.timeline.placed_before(x, y)
                && within_window(x, y, self.facts.duplicate_window)
                && self.timeline.live_when_placed(x, y)
        })
    }

    fn answers(&self, owners: &Owners) -> Check {
        let mut gave_up = 0;
        let mut unexpected: BTreeMap<&str, usize> = BTreeMap::new();
        let mut problems = Vec::new();
        for (k, keyed) in self.keyed.iter().enumerate() {
            let mut wrong = Vec::new();
            for answer in keyed.request.answers() {
                let code = match answer {
                    Answer::Placed(_) | Answer::Refused("OUT_OF_STOCK") => continue,
                    Answer::Duplicate(original)
                        if self
                            .orders
                            .get(original)
                            .is_some_and(|o| keyed.could_have_placed(o)) =>
                    {
                        continue;
                    }
                    Answer::GaveUp => {
                        gave_up += 1;
                        wrong.push("no final answer".to_owned());
                        continue;
                    }
                    Answer::Duplicate(_) => "DUPLICATE_PAYLOAD",
                    Answer::Refused(code) => code,
                };
                *unexpected.entry(code).or_default() += 1;
                wrong.push(if code == "DUPLICATE_PAYLOAD" {
                    "DUPLICATE_PAYLOAD naming no order of this device and cart".to_owned()
                } else {
                    format!("refused {code}")
                });
            }
            if !wrong.is_empty() {
                // What its lost answer would have said, when it committed.
                let committed = owners.unheard.get(&k).map(|o| self.timeline.evidence(o));
                problems.push(json!({
                    "problem": wrong.join("; "),
                    "requests": [keyed.evidence()],
                    "orders": committed.into_iter().collect::<Vec<_>>(),
                }));
            }
        }
        Check::new(
            "every order got a final answer, and only expected refusals",
            problems.is_empty(),
            format!("{gave_up} taps without an answer; unexpected refusals {unexpected:?}"),
            problems,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guests::{Ending, Heard};

    const WINDOW: Duration = Duration::from_secs(30);

    fn heard(status: Option<u16>, code: Option<&str>, order_id: Option<&str>) -> Heard {
        Heard {
            request_id: "r".into(),
            node: 0,
            sent_at: Utc::now(),
            status,
            error: status.is_none().then_some("timeout"),
            code: code.map(str::to_owned),
            order_id: order_id.map(str::to_owned),
            replayed: false,
        }
    }

    fn created(id: &str) -> Heard {
        heard(Some(201), None, Some(id))
    }

    fn refused(status: u16, code: &str) -> Heard {
        heard(Some(status), Some(code), None)
    }

    fn unanswered() -> Heard {
        heard(None, None, None)
    }

    fn cart(allow_repeat: bool) -> Value {
        json!({
            "items": [
                {"menuItemId": "curry", "quantity": 1, "toppingIds": ["egg", "cheese"]},
                {"menuItemId": "pie", "quantity": 1},
            ],
            "allowRepeat": allow_repeat,
        })
    }

    fn intent(cart: Value, sends: Vec<Vec<Heard>>, fresh_tap: Option<Vec<Heard>>) -> Intent {
        Intent {
            table: "T1".into(),
            session_id: "session-1".into(),
            client_id: "rush-T1-0".into(),
            cart,
            request: Request {
                key: "key".into(),
                sends,
            },
            fresh_tap: fresh_tap.map(|sends| Request {
                key: "fresh-key".into(),
                sends: vec![sends],
            }),
        }
    }

    /// An order of that cart as the server lists it, created `secs` into the rush.
    fn order(id: &str, secs: i64, status: &str) -> Ordered {
        let at = DateTime::parse_from_rfc3339("2025-01-01T12:00:00Z").unwrap()
            + chrono::Duration::seconds(secs);
        Ordered::from_json(&json!({
            "orderId": id, "sessionId": "session-1", "clientId": "rush-T1-0",
            "status": status, "createdAt": at.to_rfc3339(), "note": "",
            // The server keeps the lines as sent; the toppings' order too.
            "items": [
                {"menuItemId": "pie", "quantity": 1, "toppings": []},
                {"menuItemId": "curry", "quantity": 1,
                 "toppings": [{"toppingId": "egg"}, {"toppingId": "cheese"}]},
            ],
        }))
    }

    fn event(id: i64, kind: &str, order: &str, status: &str) -> Event {
        Event {
            id,
            kind: kind.into(),
            order_id: Some(order.into()),
            status: Some(status.into()),
        }
    }

    /// Placed events for `history` in its order, then `more`.
    fn events(history: &[Ordered], more: &[Event]) -> Vec<Event> {
        let mut events: Vec<Event> = (1..)
            .zip(history)
            .map(|(id, o)| event(id, "order.placed", &o.id, "placed"))
            .collect();
        events.extend(more.iter().cloned());
        events
    }

    fn judge(intents: &[Intent], history: &[Ordered], events: &[Event]) -> Accounting {
        account(&Facts {
            intents,
            history,
            events,
            duplicate_window: WINDOW,
            truncated: false,
        })
    }

    fn judge_simply(intents: &[Intent], history: &[Ordered]) -> Accounting {
        judge(intents, history, &events(history, &[]))
    }

    fn assert_clean(accounting: &Accounting) {
        for check in &accounting.checks {
            assert!(check.passed, "{check:#?}");
        }
        assert_eq!((accounting.duplicates, accounting.lost), (0, 0));
    }

    #[test]
    fn a_fresh_key_tap_after_a_refusal_places_the_only_order() {
        let intents = [intent(
            cart(false),
            vec![vec![refused(409, "OUT_OF_STOCK")]],
            Some(vec![created("y")]),
        )];
        assert_clean(&judge_simply(&intents, &[order("y", 1, "placed")]));
    }

    #[test]
    fn a_fresh_key_tap_of_a_repeat_is_placed_once_the_cooldown_is_over() {
        let intents = [intent(
            cart(true),
            vec![vec![created("x")]],
            Some(vec![refused(429, "COOLDOWN_ACTIVE"), created("y")]),
        )];
        let history = [order("x", 0, "placed"), order("y", 2, "placed")];
        assert_clean(&judge_simply(&intents, &history));
    }

    #[test]
    fn a_fresh_key_tap_after_staff_cancelled_the_original_is_placed() {
        let intents = [intent(
            cart(false),
            vec![vec![created("x")]],
            Some(vec![created("y")]),
        )];
        let history = [order("x", 0, "cancelled"), order("y", 2, "placed")];
        let cancelled_first = [
            event(1, "order.placed", "x", "placed"),
            event(2, "order.updated", "x", "cancelled"),
            event(3, "order.placed", "y", "placed"),
        ];
        assert_clean(&judge(&intents, &history, &cancelled_first));

        // Cancelled only after the second was placed: the rule should have held.
        let cancelled_after = [
            event(1, "order.placed", "x", "placed"),
            event(2, "order.placed", "y", "placed"),
            event(3, "order.updated", "x", "cancelled"),
        ];
        let accounting = judge(&intents, &history, &cancelled_after);
        assert!(!accounting.checks[1].passed);
        assert_eq!(accounting.duplicates, 1);
    }

    #[test]
    fn a_double_tap_refused_then_placed_after_a_restock_is_acknowledged() {
        let double_tap = intent(
            cart(false),
            vec![
                vec![refused(409, "OUT_OF_STOCK")],
                vec![refused(409, "REQUEST_IN_PROGRESS"), created("x")],
            ],
            None,
        );
        assert_eq!(double_tap.ending(), Ending::Placed);
        assert_clean(&judge_simply(&[double_tap], &[order("x", 0, "placed")]));
    }

    #[test]
    fn a_fresh_key_tap_placed_while_the_original_is_live_is_a_duplicate_with_its_evidence() {
        let intents = [intent(
            cart(false),
            vec![vec![unanswered(), created("x")]],
            Some(vec![created("y")]),
        )];
        let history = [order("x", 0, "placed"), order("y", 1, "placed")];
        let accounting = judge_simply(&intents, &history);
        let check = &accounting.checks[1];
        assert!(!check.passed);
        assert_eq!(accounting.duplicates, 1);
        assert!(
            check
                .detail
                .contains("1 placed while an identical order was live")
        );
        let evidence = serde_json::to_value(check).unwrap()["evidence"].clone();
        let problem = &evidence[0];
        assert_eq!(
            problem["problem"],
            "a fresh-key tap placed its cart again while the original was live"
        );
        assert_eq!(problem["orders"][0]["orderId"], "x");
        assert_eq!(problem["orders"][1]["orderId"], "y");
        assert_eq!(problem["orders"][1]["placedEvent"], 2);
        assert_eq!(problem["requests"][0]["key"], "key");
        assert_eq!(problem["requests"][0]["sends"][0][0]["requestId"], "r");
        assert!(
            problem["requests"][0]["sends"][0][0]
                .get("status")
                .is_none()
        );
        assert_eq!(problem["requests"][0]["sends"][0][1]["status"], 201);
        assert_eq!(problem["requests"][1]["key"], "fresh-key");
        assert_eq!(problem["requests"][1]["freshKeyTap"], true);
        assert_eq!(problem["requests"][1]["sends"][0][0]["orderId"], "y");
        // The other checks hold, and say nothing more.
        assert!(accounting.checks[0].passed && accounting.checks[2].passed);
        assert!(accounting.checks[0].evidence.is_empty());
    }

    #[test]
    fn the_same_cart_again_after_the_duplicate_window_is_a_new_order() {
        let intents = [intent(
            cart(false),
            vec![vec![created("x")]],
            Some(vec![created("y")]),
        )];
        let history = [order("x", 0, "placed"), order("y", 30, "placed")];
        assert_clean(&judge_simply(&intents, &history));
        let history = [order("x", 0, "placed"), order("y", 29, "placed")];
        assert_eq!(judge_simply(&intents, &history).duplicates, 1);
    }

    #[test]
    fn one_key_answered_with_two_orders_is_a_duplicate() {
        let intents = [intent(
            cart(true),
            vec![vec![created("x")], vec![created("y")]],
            None,
        )];
        let history = [order("x", 0, "placed"), order("y", 0, "placed")];
        let accounting = judge_simply(&intents, &history);
        assert_eq!(accounting.duplicates, 1);
        assert!(
            accounting.checks[1]
                .detail
                .contains("1 keys answered with several orders")
        );
    }

    #[test]
    fn an_order_no_answer_named_needs_an_unanswered_tap_of_its_cart() {
        let placed = intent(cart(false), vec![vec![created("x")]], None);
        let history = [order("x", 0, "placed"), order("z", 40, "placed")];
        let accounting = judge_simply(std::slice::from_ref(&placed), &history);
        assert_eq!(accounting.duplicates, 1);
        assert!(
            accounting.checks[1]
                .detail
                .contains("1 orders nobody was told of")
        );

        // A tap that never heard its answer may have committed: its order is
        // no duplicate, but the tap without an answer is a failure of its own.
        let gave_up = intent(
            cart(false),
            vec![vec![unanswered(), refused(409, "REQUEST_IN_PROGRESS")]],
            None,
        );
        let accounting = judge_simply(&[placed, gave_up], &history);
        assert!(accounting.checks[1].passed, "{:#?}", accounting.checks[1]);
        assert!(
            accounting.checks[1]
                .detail
                .contains("1 committed with their answer never heard")
        );
        let answers = &accounting.checks[2];
        assert!(!answers.passed);
        assert_eq!(answers.evidence[0]["problem"], "no final answer");
        assert_eq!(answers.evidence[0]["orders"][0]["orderId"], "z");
    }

    #[test]
    fn a_server_error_after_a_lost_answer_leaves_the_order_to_that_key() {
        // The first try committed, its answer lost; the retry hit a broken
        // connection: a 500, not the replay. Not a duplicate, but a failure.
        let broken = intent(
            cart(false),
            vec![vec![unanswered(), refused(500, "INTERNAL")]],
            None,
        );
        let accounting = judge_simply(&[broken], &[order("z", 0, "placed")]);
        assert!(accounting.checks[1].passed, "{:#?}", accounting.checks[1]);
        let answers = &accounting.checks[2];
        assert!(!answers.passed);
        assert_eq!(answers.evidence[0]["problem"], "refused INTERNAL");
        assert_eq!(answers.evidence[0]["orders"][0]["orderId"], "z");

        // A refusal the contract gives only when nothing was recorded for
        // the key rules its order out: this one was placed all the same.
        let refused = intent(
            cart(false),
            vec![vec![unanswered(), refused(409, "OUT_OF_STOCK")]],
            None,
        );
        let accounting = judge_simply(&[refused], &[order("z", 0, "placed")]);
        assert_eq!(accounting.duplicates, 1);
        assert!(accounting.checks[2].passed);
    }

    #[test]
    fn a_refusal_as_a_duplicate_must_name_an_order_of_the_same_device_and_cart() {
        let first = intent(cart(false), vec![vec![created("x")]], None);
        let again = |original: &str| {
            let mut duplicate = refused(409, "DUPLICATE_PAYLOAD");
            duplicate.order_id = Some(original.into());
            intent(cart(false), vec![vec![duplicate]], None)
        };
        let history = [order("x", 0, "placed")];
        assert_clean(&judge_simply(&[first.clone(), again("x")], &history));
        let accounting = judge_simply(&[first, again("elsewhere")], &history);
        assert!(!accounting.checks[2].passed);
        assert!(accounting.checks[2].detail.contains("DUPLICATE_PAYLOAD"));
    }

    #[test]
    fn an_acknowledged_order_missing_from_the_history_is_lost() {
        let intents = [intent(cart(false), vec![vec![created("x")]], None)];
        let accounting = judge_simply(&intents, &[]);
        assert_eq!(accounting.lost, 1);
        assert!(!accounting.checks[0].passed);
        assert_eq!(
            accounting.checks[0].evidence[0]["orders"][0]["orderId"],
            "x"
        );
    }
}
