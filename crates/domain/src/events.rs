//! The live events a shop's kitchen and guests follow. Each is a row of the
//! shop's append-only event log, written in the same transaction as the
//! change it announces, with an id that only grows.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::Timestamp;
use crate::inventory::StockLevel;
use crate::session::{Session, SessionStatus};

pub const ORDER_PLACED: &str = "order.placed";
pub const ORDER_UPDATED: &str = "order.updated";
pub const STOCK_CHANGED: &str = "stock.changed";
pub const SESSION_OPENED: &str = "session.opened";
pub const SESSION_CLOSED: &str = "session.closed";

/// One event as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Strictly increasing per shop.
    pub event_id: i64,
    pub event_type: String,
    /// The session an order or session event belongs to (guests see only theirs).
    pub session_id: Option<Uuid>,
    /// The JSON payload.
    pub data: String,
}

impl Event {
    /// Whether the guests of `session_id` may see this event: their own
    /// session's orders and session changes, and every stock change.
    pub fn visible_to_session(&self, session_id: Uuid) -> bool {
        self.event_type == STOCK_CHANGED || self.session_id == Some(session_id)
    }
}

/// Data of `stock.changed`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StockChanged {
    pub item_id: Uuid,
    pub stock: Option<i64>,
    /// As of the change; a manual 86 lapses at `soldOutUntil` without an event.
    pub sold_out: bool,
    pub sold_out_until: Option<DateTime<Utc>>,
}

impl StockChanged {
    pub fn new(item_id: Uuid, level: &StockLevel, now: Timestamp) -> StockChanged {
        StockChanged {
            item_id,
            stock: level.stock,
            sold_out: level.sold_out(now),
            sold_out_until: level.active_sold_out_until(now),
        }
    }
}

/// Data of `session.opened` and `session.closed`: never the PIN.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionChanged {
    pub session_id: Uuid,
    pub shop_id: Uuid,
    pub table_label: String,
    pub status: SessionStatus,
    pub opened_at: DateTime<Utc>,
    pub closed_at: Option<DateTime<Utc>>,
}

impl From<&Session> for SessionChanged {
    fn from(session: &Session) -> SessionChanged {
        SessionChanged {
            session_id: session.session_id,
            shop_id: session.shop_id,
            table_label: session.table_label.clone(),
            status: session.status,
            opened_at: session.opened_at,
            closed_at: session.closed_at,
        }
    }
}
