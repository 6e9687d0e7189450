//! The history's orders as the checks compare them: who placed what, and
//! the cart in the form the server's duplicate rule compares.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

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

    pub(super) fn cancelled(&self) -> bool {
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
