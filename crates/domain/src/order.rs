//! Orders as the kitchen, the guest and the bill see them. Lines are priced
//! snapshots: a later catalog change never rewrites a placed order.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::catalog::{MenuItem, Topping};
use crate::validation::FieldErrors;
use crate::{Rejection, Timestamp};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
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

/// Body of `POST /orders/{orderId}/status`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatusChange {
    pub status: OrderStatus,
    /// The version the caller last saw; a newer one → 409 `VERSION_CONFLICT`.
    pub expected_version: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LineTopping {
    pub topping_id: Uuid,
    pub name: String,
    pub price: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderLine {
    pub menu_item_id: Uuid,
    pub name: String,
    pub unit_price: i64,
    pub quantity: i64,
    pub toppings: Vec<LineTopping>,
    pub line_total: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
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
}

pub const MAX_LINES: usize = 50;
pub const MAX_QUANTITY: i64 = 99;
pub const MAX_NOTE_CHARS: usize = 200;

/// Body of an order POST (guest or staff).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OrderRequest {
    /// 1–50 lines.
    pub items: Vec<LineRequest>,
    /// At most 200 characters.
    #[serde(default)]
    pub note: Option<String>,
    /// Place this order even if the same client just placed an identical one.
    #[serde(default)]
    pub allow_repeat: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LineRequest {
    pub menu_item_id: Uuid,
    /// 1–99.
    pub quantity: i64,
    /// From the item's allowed toppings, at most its `maxToppings`, none twice.
    #[serde(default)]
    pub topping_ids: Vec<Uuid>,
}

/// An order request within the contract's limits, with its two digests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidOrder {
    pub lines: Vec<LineRequest>,
    pub note: String,
    pub allow_repeat: bool,
    /// Identifies the request for idempotency: same key, other fingerprint → 422.
    pub fingerprint: String,
    /// Identifies the items and note alone, for the duplicate-payload rule.
    pub payload_hash: String,
}

impl OrderRequest {
    pub fn validate(self) -> Result<ValidOrder, Rejection> {
        let mut errors = FieldErrors::default();
        if self.items.is_empty() || self.items.len() > MAX_LINES {
            errors.push("items", format!("must have 1 to {MAX_LINES} lines"));
        }
        for (i, line) in self.items.iter().enumerate() {
            errors.range(
                &format!("items[{i}].quantity"),
                line.quantity,
                1,
                MAX_QUANTITY,
            );
            let mut seen = BTreeSet::new();
            for (j, topping) in line.topping_ids.iter().enumerate() {
                if !seen.insert(topping) {
                    errors.push(format!("items[{i}].toppingIds[{j}]"), "listed twice");
                }
            }
        }
        let note = self.note.unwrap_or_default();
        if note.chars().count() > MAX_NOTE_CHARS {
            errors.push(
                "note",
                format!("must be at most {MAX_NOTE_CHARS} characters"),
            );
        } else if note.chars().any(|c| c.is_control() && c != '\n') {
            errors.push("note", "must not contain control characters");
        }
        let note = note.trim().to_owned();
        let payload = canonical_payload(&self.items, &note);
        let fingerprint = digest(&serde_json::json!({
            "payload": payload,
            "allowRepeat": self.allow_repeat,
        }));
        errors.finish(ValidOrder {
            payload_hash: digest(&payload),
            fingerprint,
            lines: self.items,
            note,
            allow_repeat: self.allow_repeat,
        })
    }
}

/// Items and note in a form where equal orders are equal values: lines of
/// the same item with the same toppings merged, toppings sorted, lines sorted.
fn canonical_payload(lines: &[LineRequest], note: &str) -> serde_json::Value {
    let mut merged: BTreeMap<(Uuid, Vec<Uuid>), i64> = BTreeMap::new();
    for line in lines {
        let mut toppings = line.topping_ids.clone();
        toppings.sort_unstable();
        *merged.entry((line.menu_item_id, toppings)).or_default() += line.quantity;
    }
    let lines: Vec<_> = merged
        .into_iter()
        .map(|((item, toppings), quantity)| serde_json::json!([item, quantity, toppings]))
        .collect();
    serde_json::json!({ "lines": lines, "note": note })
}

fn digest(value: &serde_json::Value) -> String {
    hex::encode(Sha256::digest(value.to_string().as_bytes()))
}

/// What the catalog says about a menu item an order names.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemLookup {
    Active(MenuItem),
    Retired,
    Unknown,
}

/// Prices every line from the catalog; the client's idea of a price is
/// never asked. `topping` answers for active toppings only.
pub fn price_lines(
    order: &ValidOrder,
    item: impl Fn(Uuid) -> ItemLookup,
    topping: impl Fn(Uuid) -> Option<Topping>,
) -> Result<Vec<OrderLine>, Rejection> {
    order
        .lines
        .iter()
        .enumerate()
        .map(|(line, request)| {
            let menu_item_id = request.menu_item_id;
            let menu_item = match item(menu_item_id) {
                ItemLookup::Active(menu_item) => menu_item,
                ItemLookup::Retired => {
                    return Err(Rejection::ItemUnavailable { line, menu_item_id });
                }
                ItemLookup::Unknown => {
                    return Err(Rejection::UnknownMenuItem { line, menu_item_id });
                }
            };
            if request.topping_ids.len() as i64 > menu_item.max_toppings {
                return Err(Rejection::InvalidTopping {
                    line,
                    topping_id: None,
                    reason: format!(
                        "{} allows at most {} toppings",
                        menu_item.name, menu_item.max_toppings
                    ),
                });
            }
            let toppings = request
                .topping_ids
                .iter()
                .map(|&topping_id| {
                    let allowed = menu_item.topping_ids.contains(&topping_id);
                    match topping(topping_id).filter(|_| allowed) {
                        Some(t) => Ok(LineTopping {
                            topping_id,
                            name: t.name,
                            price: t.price,
                        }),
                        None => Err(Rejection::InvalidTopping {
                            line,
                            topping_id: Some(topping_id),
                            reason: format!("not a topping offered with {}", menu_item.name),
                        }),
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            let unit_price = menu_item.price + toppings.iter().map(|t| t.price).sum::<i64>();
            Ok(OrderLine {
                menu_item_id,
                name: menu_item.name,
                unit_price,
                quantity: request.quantity,
                toppings,
                line_total: unit_price * request.quantity,
            })
        })
        .collect()
}

/// Units each item and topping must give up, in ascending id order: the
/// order in which stock rows are locked, so concurrent orders never deadlock.
pub fn stock_needed(lines: &[OrderLine]) -> BTreeMap<Uuid, i64> {
    let mut needed = BTreeMap::new();
    for line in lines {
        *needed.entry(line.menu_item_id).or_default() += line.quantity;
        for topping in &line.toppings {
            *needed.entry(topping.topping_id).or_default() += line.quantity;
        }
    }
    needed
}

/// An item an order wanted more of than there is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Shortage {
    pub item_id: Uuid,
    pub requested: i64,
    pub available: i64,
}

/// The day a ticket number counts in: the shop's local date.
pub fn ticket_day(now: Timestamp, timezone: &str) -> String {
    let tz: chrono_tz::Tz = timezone.parse().unwrap_or(chrono_tz::UTC);
    now.with_timezone(&tz).format("%Y-%m-%d").to_string()
}

/// The response body of an order POST; `idempotentReplay` tells a client
/// that retried whether this answer is the original or its replay.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderReceipt<'a> {
    #[serde(flatten)]
    pub order: &'a Order,
    pub idempotent_replay: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(item: Uuid, quantity: i64, toppings: &[Uuid]) -> LineRequest {
        LineRequest {
            menu_item_id: item,
            quantity,
            topping_ids: toppings.to_vec(),
        }
    }

    fn request(items: Vec<LineRequest>, note: &str, allow_repeat: bool) -> ValidOrder {
        OrderRequest {
            items,
            note: Some(note.to_owned()),
            allow_repeat,
        }
        .validate()
        .unwrap()
    }

    #[test]
    fn fingerprint_ignores_line_order_topping_order_splits_and_note_padding() {
        let (a, b, x, y) = (
            Uuid::new_v4(),
            Uuid::new_v4(),
            Uuid::new_v4(),
            Uuid::new_v4(),
        );
        let one = request(
            vec![line(a, 2, &[x, y]), line(b, 1, &[])],
            "no onions",
            false,
        );
        let other = request(
            vec![line(b, 1, &[]), line(a, 1, &[y, x]), line(a, 1, &[x, y])],
            "  no onions ",
            false,
        );
        assert_eq!(one.fingerprint, other.fingerprint);
        assert_eq!(one.payload_hash, other.payload_hash);

        let repeat = request(
            vec![line(a, 2, &[x, y]), line(b, 1, &[])],
            "no onions",
            true,
        );
        assert_ne!(
            one.fingerprint, repeat.fingerprint,
            "allowRepeat is part of the request"
        );
        assert_eq!(
            one.payload_hash, repeat.payload_hash,
            "but not of the payload"
        );
        let more = request(
            vec![line(a, 3, &[x, y]), line(b, 1, &[])],
            "no onions",
            false,
        );
        assert_ne!(one.payload_hash, more.payload_hash);
        let other_note = request(
            vec![line(a, 2, &[x, y]), line(b, 1, &[])],
            "extra spicy",
            false,
        );
        assert_ne!(one.payload_hash, other_note.payload_hash);
    }

    #[test]
    fn limits_are_field_errors() {
        let a = Uuid::new_v4();
        let bad = OrderRequest {
            items: vec![line(a, 0, &[]), line(a, 100, &[a, a])],
            note: Some("x".repeat(201)),
            allow_repeat: false,
        };
        let Err(Rejection::Validation(errors)) = bad.validate() else {
            panic!("expected validation errors")
        };
        let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "items[0].quantity",
                "items[1].quantity",
                "items[1].toppingIds[1]",
                "note"
            ]
        );
        let empty = OrderRequest {
            items: vec![],
            note: None,
            allow_repeat: false,
        };
        assert!(empty.validate().is_err());
        let too_many = OrderRequest {
            items: (0..51).map(|_| line(a, 1, &[])).collect(),
            note: None,
            allow_repeat: false,
        };
        assert!(too_many.validate().is_err());
    }

    #[test]
    fn lines_are_priced_from_the_catalog_with_their_toppings() {
        let (curry, cheese, egg) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let menu_item = MenuItem {
            menu_item_id: curry,
            name: "Curry".into(),
            description: String::new(),
            category: "Mains".into(),
            price: 900,
            topping_ids: vec![cheese, egg],
            max_toppings: 1,
        };
        let lookup = |id| {
            if id == curry {
                ItemLookup::Active(menu_item.clone())
            } else {
                ItemLookup::Unknown
            }
        };
        let toppings = |id| {
            (id == cheese || id == egg).then(|| Topping {
                topping_id: id,
                name: "T".into(),
                price: 100,
            })
        };
        let order = request(vec![line(curry, 2, &[cheese])], "", false);
        let lines = price_lines(&order, lookup, toppings).unwrap();
        assert_eq!((lines[0].unit_price, lines[0].line_total), (1000, 2000));
        assert_eq!(
            stock_needed(&lines),
            BTreeMap::from([(curry, 2), (cheese, 2)])
        );

        let two_toppings = request(vec![line(curry, 1, &[cheese, egg])], "", false);
        assert!(matches!(
            price_lines(&two_toppings, lookup, toppings),
            Err(Rejection::InvalidTopping {
                line: 0,
                topping_id: None,
                ..
            })
        ));
        let stranger = Uuid::new_v4();
        let unknown = request(vec![line(curry, 1, &[]), line(stranger, 1, &[])], "", false);
        assert_eq!(
            price_lines(&unknown, lookup, toppings),
            Err(Rejection::UnknownMenuItem {
                line: 1,
                menu_item_id: stranger
            })
        );
    }

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

    #[test]
    fn ticket_days_follow_the_shop_clock() {
        let now: Timestamp = "2026-11-30T20:30:00Z".parse().unwrap();
        assert_eq!(ticket_day(now, "UTC"), "2026-11-30");
        assert_eq!(ticket_day(now, "Asia/Tokyo"), "2026-12-01");
    }
}
