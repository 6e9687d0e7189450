//! The check on the kitchen's live stream: every order of the history
//! announced exactly once, with event ids increasing.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::Check;
use super::history::Ordered;
use crate::Outcome;

/// Every order of the history was announced once, and nothing else was.
pub(super) fn check(outcome: &Outcome, history: &[Ordered]) -> Check {
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
