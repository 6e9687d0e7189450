//! When orders were placed and cancelled relative to one another, as the
//! duplicate rule needs to know.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::history::Ordered;
use crate::kitchen::Event;

/// When the kitchen's events say orders were placed and cancelled. Event
/// ids follow commit order, which the servers' clocks need not.
pub(super) struct Timeline<'a> {
    placed: BTreeMap<&'a str, i64>,
    cancelled: BTreeMap<&'a str, i64>,
}

impl<'a> Timeline<'a> {
    pub(super) fn new(events: &'a [Event]) -> Timeline<'a> {
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
    pub(super) fn order(&self, order: &Ordered) -> (Option<i64>, Option<DateTime<Utc>>) {
        (
            self.placed.get(order.id.as_str()).copied(),
            order.created_at,
        )
    }

    pub(super) fn placed_before(&self, x: &Ordered, y: &Ordered) -> bool {
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
    pub(super) fn live_when_placed(&self, x: &Ordered, y: &Ordered) -> bool {
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

    pub(super) fn evidence(&self, order: &Ordered) -> Value {
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
pub(super) fn within_window(x: &Ordered, y: &Ordered, window: Duration) -> bool {
    let window = chrono::Duration::from_std(window);
    let (Some(x), Some(y), Ok(window)) = (x.created_at, y.created_at, window) else {
        return false;
    };
    window > chrono::Duration::zero() && x > y - window
}
