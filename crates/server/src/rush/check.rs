//! The verdict of a rush: the promise's invariants, checked from outside
//! through the API against what the guests, the staff and the kitchen saw.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use super::Outcome;
use super::guests::Ending;
use crate::client::Client;

/// Rows one list request returns at most.
const PAGE: u32 = 500;

#[derive(Debug, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub passed: bool,
    pub detail: String,
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

struct Ordered {
    id: String,
    cancelled: bool,
    /// Units of each item and topping the order took.
    units: BTreeMap<String, i64>,
}

pub async fn verify(client: &Client, outcome: &Outcome) -> anyhow::Result<Verdict> {
    let shop = &outcome.setup;
    let mut history = Vec::new();
    let mut truncated = false;
    for table in &shop.tables {
        let reply = client.session_orders(&table.session_id, PAGE).await?;
        let orders = reply.body["orders"].as_array().cloned().unwrap_or_default();
        truncated |= orders.len() == PAGE as usize;
        history.extend(orders.iter().map(ordered));
    }
    let in_history: BTreeSet<&str> = history.iter().map(|o| o.id.as_str()).collect();
    let intents = &outcome.guests.intents;
    let acknowledged: BTreeSet<&str> = intents.iter().filter_map(|i| i.order_id()).collect();
    let mut checks = Vec::new();

    let lost: Vec<&&str> = acknowledged.difference(&in_history).collect();
    checks.push(Check {
        name: "every acknowledged order is in the history",
        passed: lost.is_empty() && !truncated,
        detail: if truncated {
            format!("a table has {PAGE}+ orders: history is one page; run a smaller rush")
        } else {
            format!(
                "{} acknowledged, {} missing {lost:?}",
                acknowledged.len(),
                lost.len()
            )
        },
    });

    let unacknowledged: Vec<&&str> = in_history.difference(&acknowledged).collect();
    let split_taps = intents
        .iter()
        .filter(|i| matches!(&i.ending, Ending::Placed(ids) if ids.iter().any(|id| *id != ids[0])))
        .count();
    let fresh_key_orders = outcome
        .guests
        .fresh_taps
        .iter()
        .filter(|t| !t.duplicate_refused && t.answer.is_ok())
        .count();
    let duplicates = unacknowledged.len() + split_taps + fresh_key_orders;
    checks.push(Check {
        name: "no order was placed twice",
        passed: duplicates == 0,
        detail: format!(
            "{} orders nobody was told of {unacknowledged:?}, {split_taps} double taps answered with two orders, \
             {fresh_key_orders} fresh-key taps placed again",
            unacknowledged.len()
        ),
    });

    let gave_up = intents
        .iter()
        .filter(|i| i.ending == Ending::GaveUp)
        .count();
    let unexpected: BTreeMap<&str, usize> = intents
        .iter()
        .filter_map(|i| match &i.ending {
            Ending::Refused(code) if code != "OUT_OF_STOCK" => Some(code.as_str()),
            _ => None,
        })
        .fold(BTreeMap::new(), |mut counts, code| {
            *counts.entry(code).or_default() += 1;
            counts
        });
    checks.push(Check {
        name: "every order got a final answer, and only expected refusals",
        passed: gave_up == 0 && unexpected.is_empty(),
        detail: format!("{gave_up} without an answer; unexpected refusals {unexpected:?}"),
    });

    let inventory = client.inventory(&shop.shop_id).await?;
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
    for order in history.iter().filter(|o| !o.cancelled) {
        for (item, units) in &order.units {
            *taken.entry(item.as_str()).or_default() += units;
        }
    }
    let mut stock_problems = Vec::new();
    for (item, initial) in &shop.initial_stock {
        let restocked = outcome.staff.restocked.get(item).copied().unwrap_or(0);
        let expected = initial + restocked - taken.get(item.as_str()).copied().unwrap_or(0);
        let actual = stock.get(item).copied().flatten();
        if actual != Some(expected) || expected < 0 {
            stock_problems.push(format!("{item}: expected {expected}, found {actual:?}"));
        }
    }
    checks.push(Check {
        name: "stock = initial + restocks − ordered, never below zero",
        passed: stock_problems.is_empty() && !truncated,
        detail: if stock_problems.is_empty() {
            format!(
                "{} tracked items and toppings agree",
                shop.initial_stock.len()
            )
        } else {
            stock_problems.join("; ")
        },
    });

    let log = client.inventory_log(&shop.shop_id, PAGE).await?;
    let rows = log.body["entries"].as_array().cloned().unwrap_or_default();
    let op_log = if rows.len() < PAGE as usize {
        let mut sums: BTreeMap<&str, i64> = BTreeMap::new();
        for row in &rows {
            *sums
                .entry(row["itemId"].as_str().unwrap_or_default())
                .or_default() += row["delta"].as_i64().unwrap_or(0);
        }
        let disagreeing: Vec<String> = shop
            .initial_stock
            .keys()
            .filter(|item| {
                stock.get(*item).copied().flatten()
                    != Some(sums.get(item.as_str()).copied().unwrap_or(0))
            })
            .cloned()
            .collect();
        Check {
            name: "the op log adds up to the stock",
            passed: disagreeing.is_empty(),
            detail: format!(
                "{} rows; items whose log disagrees: {disagreeing:?}",
                rows.len()
            ),
        }
    } else {
        Check {
            name: "the op log adds up to the stock",
            passed: true,
            detail: format!(
                "not checked: the log has {PAGE}+ rows (one page); `ordergate verify` checks it all"
            ),
        }
    };
    checks.push(op_log);

    let events = &outcome.kitchen.events;
    let increasing = events.windows(2).all(|w| w[0].0 < w[1].0);
    let mut placed: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, kind, order) in events {
        if kind == "order.placed"
            && let Some(order) = order
        {
            *placed.entry(order.as_str()).or_default() += 1;
        }
    }
    let missing = in_history
        .iter()
        .filter(|id| !placed.contains_key(**id))
        .count();
    let doubled = placed.values().filter(|n| **n > 1).count();
    let strangers = placed
        .keys()
        .filter(|id| !in_history.contains(**id))
        .count();
    checks.push(Check {
        name: "the kitchen saw every order exactly once, ids increasing",
        passed: increasing && missing == 0 && doubled == 0 && strangers == 0,
        detail: format!(
            "{} events over {} reconnects; {missing} orders missing, {doubled} twice, {strangers} unknown; ids increasing: {increasing}",
            events.len(),
            outcome.kitchen.reconnects
        ),
    });

    Ok(Verdict {
        checks,
        in_history: in_history.len(),
        duplicates,
        lost: lost.len(),
    })
}

fn ordered(order: &Value) -> Ordered {
    let mut units = BTreeMap::new();
    for line in order["items"].as_array().into_iter().flatten() {
        let quantity = line["quantity"].as_i64().unwrap_or(0);
        let item = line["menuItemId"].as_str().unwrap_or_default().to_owned();
        *units.entry(item).or_default() += quantity;
        for topping in line["toppings"].as_array().into_iter().flatten() {
            let id = topping["toppingId"].as_str().unwrap_or_default().to_owned();
            *units.entry(id).or_default() += quantity;
        }
    }
    Ordered {
        id: order["orderId"].as_str().unwrap_or_default().to_owned(),
        cancelled: order["status"] == "cancelled",
        units,
    }
}
