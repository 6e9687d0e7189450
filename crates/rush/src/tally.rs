//! What the guests sent and heard: every attempt of every tap, kept whole
//! for the checks and the report, and which answers are final.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use hdrhistogram::Histogram;
use serde::Serialize;
use serde_json::Value;

use crate::client::Reply;

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
    pub fn new() -> Tally {
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

/// Whether an answer asks for the same request again later: a server
/// error, or a [`RETRIED`] refusal.
pub fn says_retry(reply: &Reply) -> bool {
    reply.status >= 500 || reply.code().is_some_and(|c| RETRIED.contains(&c))
}
