//! Orders as the kitchen, the guest and the bill see them. Lines are priced
//! snapshots: a later catalog change never rewrites a placed order.

pub mod admission;
mod canonical;
mod options;
pub mod placement;
mod pricing;
mod request;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub use options::{OptionError, choose_options};
pub use pricing::{ItemLookup, Shortage, price_lines, stock_needed};
pub use request::{
    LineRequest, MAX_LINES, MAX_NOTE_CHARS, MAX_OPTIONS_PER_LINE, MAX_QUANTITY, OrderRequest,
    ValidOrder,
};

use crate::{Rejection, Timestamp};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum OrderStatus {
    Placed,
    Accepted,
    Preparing,
    Ready,
    Served,
    Cancelled,
}

impl OrderStatus {
    pub const ALL: [OrderStatus; 6] = [
        OrderStatus::Placed,
        OrderStatus::Accepted,
        OrderStatus::Preparing,
        OrderStatus::Ready,
        OrderStatus::Served,
        OrderStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Placed => "placed",
            OrderStatus::Accepted => "accepted",
            OrderStatus::Preparing => "preparing",
            OrderStatus::Ready => "ready",
            OrderStatus::Served => "served",
            OrderStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<OrderStatus> {
        Self::ALL.into_iter().find(|status| status.as_str() == s)
    }

    /// Place along the kitchen's path; `cancelled` is off the path.
    fn step(self) -> Option<u8> {
        match self {
            OrderStatus::Placed => Some(0),
            OrderStatus::Accepted => Some(1),
            OrderStatus::Preparing => Some(2),
            OrderStatus::Ready => Some(3),
            OrderStatus::Served => Some(4),
            OrderStatus::Cancelled => None,
        }
    }

    /// What moving an order from `self` to `to` means: forward only (steps
    /// may be skipped), cancellation only before the food is ready, nothing
    /// out of `served` or `cancelled`, and the current status again is no
    /// change at all.
    pub fn transition(self, to: OrderStatus) -> Option<Transition> {
        if self == to {
            return Some(Transition::Unchanged);
        }
        match (self.step(), to.step()) {
            (Some(from), None) if from <= 2 => Some(Transition::Cancel),
            (Some(from), Some(to)) if to > from => Some(Transition::Advance),
            _ => None,
        }
    }
}

/// An allowed status change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// Already there: answer as is, change nothing.
    Unchanged,
    /// Forward along the kitchen's path.
    Advance,
    /// Cancelled: the order's stock goes back, once.
    Cancel,
}

impl Transition {
    /// What a recall may undo once this change from `from` is stored at
    /// `now`: an advance; never a cancel (the stock it put back may be
    /// sold since).
    pub fn undoable(self, from: OrderStatus, now: Timestamp) -> Option<LastMove> {
        (self == Transition::Advance).then_some(LastMove { from, at: now })
    }
}

/// Body of `POST /orders/{orderId}/status`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatusChange {
    pub status: OrderStatus,
    /// The version the caller last saw; a newer one → 409 `VERSION_CONFLICT`.
    pub expected_version: Option<i64>,
    /// Who asks, as the inventory log names them when a cancel puts stock
    /// back: set by the server from the credential, never read from a body.
    #[serde(skip)]
    pub actor: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum OrderSource {
    Guest,
    Staff,
}

impl OrderSource {
    pub fn as_str(self) -> &'static str {
        match self {
            OrderSource::Guest => "guest",
            OrderSource::Staff => "staff",
        }
    }

    pub fn parse(s: &str) -> Option<OrderSource> {
        [OrderSource::Guest, OrderSource::Staff]
            .into_iter()
            .find(|source| source.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LineTopping {
    pub topping_id: Uuid,
    pub name: String,
    pub price: i64,
}

/// An option a line chose, priced as the catalog had it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LineOption {
    pub option_id: Uuid,
    /// The option group it was chosen in.
    pub group_id: Uuid,
    pub name: String,
    pub price: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct OrderLine {
    pub menu_item_id: Uuid,
    pub name: String,
    pub unit_price: i64,
    pub quantity: i64,
    pub toppings: Vec<LineTopping>,
    /// The options chosen from the item's groups, in the menu's order;
    /// absent when none (so lines placed before option groups read, and
    /// replay, as they were).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<LineOption>,
    pub line_total: i64,
    /// The guest's note for the kitchen about this line; absent when none
    /// (so lines placed before line notes read, and replay, as they were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Order {
    pub order_id: Uuid,
    pub shop_id: Uuid,
    pub session_id: Uuid,
    pub table_label: String,
    pub ticket_number: i64,
    pub status: OrderStatus,
    pub source: OrderSource,
    pub client_id: Option<String>,
    pub items: Vec<OrderLine>,
    pub note: String,
    pub total: i64,
    pub created_at: DateTime<Utc>,
    pub version: i64,
}

impl Order {
    pub fn counts_toward_bill(&self) -> bool {
        self.status != OrderStatus::Cancelled
    }

    /// The order once `change` is stored: its status, and its next version.
    pub fn moved_to(self, status: OrderStatus) -> Order {
        Order {
            status,
            version: self.version + 1,
            ..self
        }
    }
}

impl StatusChange {
    /// What this change means for `order` as stored: the current status
    /// again is [`Transition::Unchanged`] whatever version was expected (a
    /// retried tap); any other change needs the version the caller saw to
    /// be current, and the move to be allowed.
    pub fn judge(&self, order: &Order) -> Result<Transition, Rejection> {
        let transition = order.status.transition(self.status);
        if transition == Some(Transition::Unchanged) {
            return Ok(Transition::Unchanged);
        }
        if let Some(expected) = self.expected_version
            && expected != order.version
        {
            return Err(Rejection::VersionConflict {
                current: order.version,
            });
        }
        transition.ok_or(Rejection::InvalidTransition {
            from: order.status.as_str(),
            to: self.status.as_str(),
        })
    }
}

/// Body of `POST /orders/{orderId}/recall`: undo the order's last move
/// along the kitchen's path (a bump made by mistake).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecallRequest {
    /// The version the caller last saw: a recall undoes the move the
    /// kitchen saw, never one made since.
    pub expected_version: i64,
}

/// The move a recall can undo, as stored with the order: where it came
/// from, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastMove {
    pub from: OrderStatus,
    pub at: Timestamp,
}

/// A recall as the server judges it: the request and how long after a
/// move it may still be undone.
#[derive(Debug, Clone, Copy)]
pub struct Recall {
    pub expected_version: i64,
    pub window: chrono::Duration,
}

impl Recall {
    /// The status `order` goes back to, given its undoable last move
    /// (`None`: never moved, cancelled, or recalled already). A cancel is
    /// never undone: the stock it gave back may be sold since.
    pub fn judge(
        &self,
        order: &Order,
        last_move: Option<LastMove>,
        now: Timestamp,
    ) -> Result<OrderStatus, Rejection> {
        if self.expected_version != order.version {
            return Err(Rejection::VersionConflict {
                current: order.version,
            });
        }
        let Some(last_move) = last_move else {
            return Err(Rejection::NothingToRecall {
                status: order.status.as_str(),
            });
        };
        if now - last_move.at > self.window {
            return Err(Rejection::RecallExpired {
                window_secs: self.window.num_seconds(),
            });
        }
        Ok(last_move.from)
    }
}

/// The response body of an order POST; `idempotentReplay` tells a client
/// that retried whether this answer is the original or its replay.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct OrderReceipt<'a> {
    #[serde(flatten)]
    pub order: &'a Order,
    pub idempotent_replay: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_move_forward_and_cancel_only_before_ready() {
        use OrderStatus::*;
        let allowed = |from: OrderStatus, to| from.transition(to);
        assert_eq!(allowed(Placed, Accepted), Some(Transition::Advance));
        assert_eq!(
            allowed(Placed, Served),
            Some(Transition::Advance),
            "steps may be skipped"
        );
        assert_eq!(allowed(Ready, Ready), Some(Transition::Unchanged));
        assert_eq!(allowed(Cancelled, Cancelled), Some(Transition::Unchanged));
        for from in [Placed, Accepted, Preparing] {
            assert_eq!(
                allowed(from, Cancelled),
                Some(Transition::Cancel),
                "{from:?}"
            );
        }
        for (from, to) in [
            (Accepted, Placed),
            (Ready, Preparing),
            (Ready, Cancelled),
            (Served, Cancelled),
            (Served, Placed),
            (Cancelled, Placed),
            (Cancelled, Served),
        ] {
            assert_eq!(allowed(from, to), None, "{from:?} → {to:?}");
        }
    }

    fn order(status: OrderStatus, version: i64) -> Order {
        Order {
            order_id: Uuid::nil(),
            shop_id: Uuid::nil(),
            session_id: Uuid::nil(),
            table_label: "T1".into(),
            ticket_number: 1,
            status,
            source: OrderSource::Guest,
            client_id: None,
            items: vec![],
            note: String::new(),
            total: 0,
            created_at: "2026-12-01T12:00:00Z".parse().unwrap(),
            version,
        }
    }

    #[test]
    fn a_recall_undoes_the_last_advance_seen_within_its_window() {
        use OrderStatus::*;
        let bumped_at: Timestamp = "2026-12-01T12:10:00Z".parse().unwrap();
        let bump = Transition::Advance.undoable(Preparing, bumped_at);
        assert_eq!(
            bump,
            Some(LastMove {
                from: Preparing,
                at: bumped_at
            })
        );
        assert_eq!(Transition::Cancel.undoable(Preparing, bumped_at), None);
        let recall = |expected_version| Recall {
            expected_version,
            window: chrono::Duration::minutes(5),
        };
        let ready = order(Ready, 4);
        let minutes = |m| bumped_at + chrono::Duration::minutes(m);
        assert_eq!(recall(4).judge(&ready, bump, minutes(5)), Ok(Preparing));
        assert_eq!(
            recall(4).judge(&ready, bump, minutes(6)),
            Err(Rejection::RecallExpired { window_secs: 300 })
        );
        assert_eq!(
            recall(3).judge(&ready, bump, minutes(1)),
            Err(Rejection::VersionConflict { current: 4 }),
            "a move made since the caller looked is not undone"
        );
        assert_eq!(
            recall(4).judge(&order(Cancelled, 4), None, minutes(1)),
            Err(Rejection::NothingToRecall {
                status: "cancelled"
            })
        );
    }

    #[test]
    fn a_status_change_needs_the_current_version_unless_it_changes_nothing() {
        let order = order(OrderStatus::Accepted, 3);
        let change = |status, expected_version| StatusChange {
            status,
            expected_version,
            actor: "admin".into(),
        };
        use OrderStatus::*;
        assert_eq!(
            change(Accepted, Some(1)).judge(&order),
            Ok(Transition::Unchanged)
        );
        assert_eq!(
            change(Ready, Some(2)).judge(&order),
            Err(Rejection::VersionConflict { current: 3 })
        );
        assert_eq!(
            change(Ready, Some(3)).judge(&order),
            Ok(Transition::Advance)
        );
        assert_eq!(
            change(Cancelled, None).judge(&order),
            Ok(Transition::Cancel)
        );
        assert_eq!(
            change(Placed, None).judge(&order),
            Err(Rejection::InvalidTransition {
                from: "accepted",
                to: "placed"
            })
        );
        let moved = order.moved_to(Ready);
        assert_eq!((moved.status, moved.version), (Ready, 4));
    }
}
