//! The live events a shop's kitchen and guests follow. Each is a row of the
//! shop's append-only event log, written in the same transaction as the
//! change it announces, with an id that only grows.

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::Timestamp;
use crate::inventory::StockLevel;
use crate::session::{Session, SessionStatus};

/// What an event announces; its name is what streams send as the SSE
/// `event:` and what the log stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    OrderPlaced,
    OrderUpdated,
    StockChanged,
    SessionOpened,
    SessionClosed,
    /// The menu changed otherwise than by stock (its catalog, its
    /// languages): whoever shows it reads it again.
    MenuChanged,
    /// A table called for staff or asked for the bill.
    ServiceRequested,
    ServiceAcknowledged,
    /// Staff asked a kitchen printer for a copy of a ticket.
    TicketReprint,
}

impl EventType {
    pub const ALL: [EventType; 9] = [
        EventType::OrderPlaced,
        EventType::OrderUpdated,
        EventType::StockChanged,
        EventType::SessionOpened,
        EventType::SessionClosed,
        EventType::MenuChanged,
        EventType::ServiceRequested,
        EventType::ServiceAcknowledged,
        EventType::TicketReprint,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            EventType::OrderPlaced => "order.placed",
            EventType::OrderUpdated => "order.updated",
            EventType::StockChanged => "stock.changed",
            EventType::SessionOpened => "session.opened",
            EventType::SessionClosed => "session.closed",
            EventType::MenuChanged => "menu.changed",
            EventType::ServiceRequested => "service.requested",
            EventType::ServiceAcknowledged => "service.acknowledged",
            EventType::TicketReprint => "ticket.reprint",
        }
    }

    /// Whether every table's guests hear it: what their menus show.
    pub fn is_shop_wide(self) -> bool {
        matches!(self, EventType::StockChanged | EventType::MenuChanged)
    }

    pub fn parse(name: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// One event as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Strictly increasing per shop.
    pub event_id: i64,
    pub event_type: EventType,
    /// The session an order or session event belongs to (guests see only theirs).
    pub session_id: Option<Uuid>,
    /// The JSON payload.
    pub data: String,
}

impl Event {
    /// Whether the guests of `session_id` may see this event: their own
    /// session's orders and session changes, and every change of the menu
    /// (stock included).
    pub fn visible_to_session(&self, session_id: Uuid) -> bool {
        self.event_type.is_shop_wide() || self.session_id == Some(session_id)
    }
}

/// Data of `stock.changed`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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

/// Data of `menu.changed`: the catalog version the menu is at now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MenuChanged {
    pub catalog_version: i64,
}

/// Data of `session.opened` and `session.closed`: never the PIN.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_types_keep_their_stored_names() {
        let names: Vec<_> = EventType::ALL.iter().map(|t| t.as_str()).collect();
        assert_eq!(
            names,
            [
                "order.placed",
                "order.updated",
                "stock.changed",
                "session.opened",
                "session.closed",
                "menu.changed",
                "service.requested",
                "service.acknowledged",
                "ticket.reprint"
            ]
        );
        for event_type in EventType::ALL {
            assert_eq!(EventType::parse(event_type.as_str()), Some(event_type));
        }
        assert_eq!(EventType::parse("order.deleted"), None);
    }
}
