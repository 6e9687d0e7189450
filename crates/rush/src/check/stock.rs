//! The checks on stock, read back from the inventory: it is what the
//! orders and restocks left, never below zero, and its op log adds up.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::history::Ordered;
use super::{Check, PAGE};
use crate::Outcome;
use crate::client::Reply;
use crate::setup::Shop;

/// Each item's stock as the inventory lists it (`None`: untracked).
pub(super) fn levels(inventory: &Reply) -> BTreeMap<String, Option<i64>> {
    inventory.body["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["itemId"].as_str().unwrap_or_default().to_owned(),
                e["stock"].as_i64(),
            )
        })
        .collect()
}

/// Stock is the initial count plus acknowledged restocks minus what the
/// orders still standing took.
pub(super) fn conserved(
    outcome: &Outcome,
    history: &[Ordered],
    stock: &BTreeMap<String, Option<i64>>,
    truncated: bool,
) -> Check {
    let shop = &outcome.setup;
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
    Check::new(
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
    )
}

/// The op log's deltas add up to each tracked item's stock, when the log
/// fits in one page.
pub(super) fn op_log(shop: &Shop, log: &Reply, stock: &BTreeMap<String, Option<i64>>) -> Check {
    let rows = log.body["entries"].as_array().cloned().unwrap_or_default();
    if rows.len() < PAGE as usize {
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
    }
}
