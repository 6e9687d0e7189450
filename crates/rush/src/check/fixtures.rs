//! What the accounting's tests build their cases from: taps and what they
//! heard, one cart, its orders as the server lists them, kitchen events.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::accounting::{Accounting, Facts, account};
use super::history::Ordered;
use crate::kitchen::Event;
use crate::tally::{Heard, Intent, Request};

const WINDOW: Duration = Duration::from_secs(30);

pub(super) fn heard(status: Option<u16>, code: Option<&str>, order_id: Option<&str>) -> Heard {
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

pub(super) fn created(id: &str) -> Heard {
    heard(Some(201), None, Some(id))
}

pub(super) fn refused(status: u16, code: &str) -> Heard {
    heard(Some(status), Some(code), None)
}

pub(super) fn unanswered() -> Heard {
    heard(None, None, None)
}

pub(super) fn cart(allow_repeat: bool) -> Value {
    json!({
        "items": [
            {"menuItemId": "curry", "quantity": 1, "toppingIds": ["egg", "cheese"]},
            {"menuItemId": "pie", "quantity": 1},
        ],
        "allowRepeat": allow_repeat,
    })
}

pub(super) fn intent(cart: Value, sends: Vec<Vec<Heard>>, fresh_tap: Option<Vec<Heard>>) -> Intent {
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
pub(super) fn order(id: &str, secs: i64, status: &str) -> Ordered {
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

pub(super) fn event(id: i64, kind: &str, order: &str, status: &str) -> Event {
    Event {
        id,
        kind: kind.into(),
        order_id: Some(order.into()),
        status: Some(status.into()),
    }
}

/// Placed events for `history` in its order, then `more`.
pub(super) fn events(history: &[Ordered], more: &[Event]) -> Vec<Event> {
    let mut events: Vec<Event> = (1..)
        .zip(history)
        .map(|(id, o)| event(id, "order.placed", &o.id, "placed"))
        .collect();
    events.extend(more.iter().cloned());
    events
}

pub(super) fn judge(intents: &[Intent], history: &[Ordered], events: &[Event]) -> Accounting {
    account(&Facts {
        intents,
        history,
        events,
        duplicate_window: WINDOW,
        truncated: false,
    })
}

pub(super) fn judge_simply(intents: &[Intent], history: &[Ordered]) -> Accounting {
    judge(intents, history, &events(history, &[]))
}

pub(super) fn assert_clean(accounting: &Accounting) {
    for check in &accounting.checks {
        assert!(check.passed, "{check:#?}");
    }
    assert_eq!((accounting.duplicates, accounting.lost), (0, 0));
}
