//! Stock levels, manual "86" marks and the operation log that explains every
//! change. Stock never goes below zero, and every change to it is a log row
//! whose delta equals the change, so the log always adds up to the stock.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use uuid::Uuid;

use crate::catalog::ItemKind;
use crate::language::{Languages, Text};
use crate::validation::FieldErrors;
use crate::{Rejection, Timestamp};

pub const MAX_STOCK: i64 = 1_000_000;
pub const MAX_RESTOCK: i64 = 100_000;

/// The stock state of one item or topping.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StockLevel {
    /// `None` is untracked: unlimited.
    pub stock: Option<i64>,
    /// A manual 86 set by staff.
    pub marked_sold_out: bool,
    /// When the manual 86 lapses by itself; `None` keeps it until cleared.
    pub sold_out_until: Option<DateTime<Utc>>,
}

impl StockLevel {
    pub fn manual_86_active(&self, now: Timestamp) -> bool {
        self.marked_sold_out && self.sold_out_until.is_none_or(|until| until > now)
    }

    pub fn sold_out(&self, now: Timestamp) -> bool {
        self.stock == Some(0) || self.manual_86_active(now)
    }

    /// Units an order may take; `None` is unlimited. A manual 86 counts as 0.
    pub fn available(&self, now: Timestamp) -> Option<i64> {
        if self.manual_86_active(now) {
            Some(0)
        } else {
            self.stock
        }
    }

    /// The 86 expiry still ahead, if any.
    pub fn active_sold_out_until(&self, now: Timestamp) -> Option<Timestamp> {
        self.sold_out_until.filter(|_| self.manual_86_active(now))
    }
}

/// One inventory row as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct InventoryItem {
    pub item_id: Uuid,
    pub kind: ItemKind,
    pub name: String,
    pub level: StockLevel,
    pub version: i64,
    pub updated_at: DateTime<Utc>,
}

/// An inventory row as staff see it, with the 86 evaluated at a moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct InventoryEntry {
    pub item_id: Uuid,
    pub kind: ItemKind,
    pub name: String,
    /// `null` when the item is untracked (unlimited).
    pub stock: Option<i64>,
    /// True when tracked stock is 0 or a manual 86 is in force.
    pub sold_out: bool,
    pub sold_out_until: Option<DateTime<Utc>>,
    pub version: i64,
    pub updated_at: DateTime<Utc>,
}

impl InventoryItem {
    /// What an entry is called, in the shop's default language: an
    /// option (`of_item` is its item's name) after its item too, because
    /// options of different items share names ("Large", "Rare").
    pub fn display_name(own: &Text, of_item: Option<&Text>, languages: &Languages) -> String {
        match of_item {
            Some(item) => format!(
                "{} · {}",
                item.in_default(languages),
                own.in_default(languages)
            ),
            None => own.in_default(languages).to_owned(),
        }
    }

    pub fn entry(&self, now: Timestamp) -> InventoryEntry {
        InventoryEntry {
            item_id: self.item_id,
            kind: self.kind,
            name: self.name.clone(),
            stock: self.level.stock,
            sold_out: self.level.sold_out(now),
            sold_out_until: self.level.active_sold_out_until(now),
            version: self.version,
            updated_at: self.updated_at,
        }
    }
}

/// Body of `PUT /inventory/{itemId}`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InventoryUpdate {
    /// New count; `null` makes the item untracked (unlimited).
    #[serde(default, deserialize_with = "present")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub stock: Option<Option<i64>>,
    /// `true` marks a manual 86, `false` clears it.
    pub sold_out: Option<bool>,
    /// When the 86 lapses by itself; only with `soldOut: true`.
    #[serde(default, deserialize_with = "present")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub sold_out_until: Option<Option<Timestamp>>,
}

/// Distinguishes a field sent as `null` (`Some(None)`) from one left out (`None`).
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// A validated inventory update.
#[derive(Debug, Clone, PartialEq)]
pub struct StockChange {
    stock: Option<Option<i64>>,
    mark: Option<(bool, Option<Timestamp>)>,
}

impl InventoryUpdate {
    pub fn validate(self, now: Timestamp) -> Result<StockChange, Rejection> {
        let mut errors = FieldErrors::default();
        if self.stock.is_none() && self.sold_out.is_none() && self.sold_out_until.is_none() {
            errors.push("stock", "give stock, soldOut, or both");
        }
        if let Some(Some(stock)) = self.stock {
            errors.range("stock", stock, 0, MAX_STOCK);
        }
        let until = self.sold_out_until.flatten();
        match (self.sold_out, until) {
            (Some(true), Some(until)) if until <= now => {
                errors.push("soldOutUntil", "must be in the future");
            }
            (Some(true), _) | (Some(false), None) | (None, None) => {}
            (Some(false), Some(_)) => {
                errors.push("soldOutUntil", "only allowed with soldOut: true");
            }
            (None, Some(_)) => errors.push("soldOutUntil", "requires soldOut: true"),
        }
        if self.sold_out.is_none() && self.sold_out_until == Some(None) {
            errors.push("soldOutUntil", "requires soldOut");
        }
        errors.finish(StockChange {
            stock: self.stock,
            mark: self.sold_out.map(|marked| (marked, until)),
        })
    }
}

impl StockChange {
    pub fn apply(&self, level: &StockLevel) -> StockLevel {
        let mut next = level.clone();
        if let Some(stock) = self.stock {
            next.stock = stock;
        }
        if let Some((marked, until)) = self.mark {
            next.marked_sold_out = marked;
            next.sold_out_until = until;
        }
        next
    }
}

/// Adds `quantity` units to a tracked item.
pub fn restock(level: &StockLevel, item_id: Uuid, quantity: i64) -> Result<StockLevel, Rejection> {
    if !(1..=MAX_RESTOCK).contains(&quantity) {
        return Err(Rejection::field(
            "quantity",
            format!("must be between 1 and {MAX_RESTOCK}"),
        ));
    }
    let Some(stock) = level.stock else {
        return Err(Rejection::StockNotTracked { item_id });
    };
    if stock + quantity > MAX_STOCK {
        return Err(Rejection::field(
            "quantity",
            format!("stock would exceed {MAX_STOCK}"),
        ));
    }
    Ok(StockLevel {
        stock: Some(stock + quantity),
        ..level.clone()
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum Operation {
    Order,
    Cancel,
    Restock,
    Set,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Order => "order",
            Operation::Cancel => "cancel",
            Operation::Restock => "restock",
            Operation::Set => "set",
        }
    }

    pub fn parse(s: &str) -> Option<Operation> {
        [
            Operation::Order,
            Operation::Cancel,
            Operation::Restock,
            Operation::Set,
        ]
        .into_iter()
        .find(|op| op.as_str() == s)
    }
}

/// One row of the stock operation log.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    pub at: DateTime<Utc>,
    pub item_id: Uuid,
    pub operation: Operation,
    /// Change in stock, counting untracked as 0, so deltas sum to the stock.
    pub delta: i64,
    pub stock_before: Option<i64>,
    pub stock_after: Option<i64>,
    pub order_id: Option<Uuid>,
    /// Who made the change: `staff`, or `guest:<clientId>` for orders.
    pub actor: String,
}

/// Why stock levels change, for their log rows.
#[derive(Debug, Clone, Copy)]
pub struct Cause<'a> {
    pub operation: Operation,
    /// Who made the change: `staff`, or `guest:<clientId>` for orders.
    pub actor: &'a str,
    /// The order that took or gave back the stock.
    pub order_id: Option<Uuid>,
    pub now: Timestamp,
}

impl<'a> Cause<'a> {
    pub fn new(operation: Operation, actor: &'a str, now: Timestamp) -> Cause<'a> {
        Cause {
            operation,
            actor,
            order_id: None,
            now,
        }
    }

    /// The log row of a level change, or `None` when the stock count did
    /// not move (an 86 alone is not a stock change).
    pub fn log_entry(
        &self,
        item_id: Uuid,
        before: &StockLevel,
        after: &StockLevel,
    ) -> Option<LogEntry> {
        (before.stock != after.stock).then(|| LogEntry {
            at: self.now,
            item_id,
            operation: self.operation,
            delta: after.stock.unwrap_or(0) - before.stock.unwrap_or(0),
            stock_before: before.stock,
            stock_after: after.stock,
            order_id: self.order_id,
            actor: self.actor.to_owned(),
        })
    }
}

/// A tracked stock level moved by an order or its cancellation.
#[derive(Debug, Clone, PartialEq)]
pub struct StockMove {
    pub item_id: Uuid,
    /// Units added (negative: taken).
    pub delta: i64,
    pub before: StockLevel,
    pub after: StockLevel,
}

impl StockMove {
    /// Moves a tracked level by `delta`; `None` for an untracked one,
    /// which orders neither take from nor give back to.
    pub fn of(item_id: Uuid, before: &StockLevel, delta: i64) -> Option<StockMove> {
        let stock = before.stock?;
        Some(StockMove {
            item_id,
            delta,
            before: before.clone(),
            after: StockLevel {
                stock: Some(stock + delta),
                ..before.clone()
            },
        })
    }
}

/// What a cancelled order gives back: the units its placement took, per
/// item as its `order` log rows record them, to the levels that are still
/// tracked (an item untracked since then takes nothing back, and one that
/// was untracked then gave nothing). Ascending ids, as `taken` is.
pub fn put_back(
    taken: &[(Uuid, i64)],
    levels: &std::collections::HashMap<Uuid, StockLevel>,
) -> Vec<StockMove> {
    taken
        .iter()
        .filter_map(|&(item_id, quantity)| StockMove::of(item_id, levels.get(&item_id)?, quantity))
        .collect()
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::*;

    fn update(json: &str) -> InventoryUpdate {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn null_stock_is_distinct_from_absent_stock() {
        assert_eq!(update(r#"{"stock": null}"#).stock, Some(None));
        assert_eq!(update(r#"{"soldOut": true}"#).stock, None);
    }

    #[test]
    fn an_86_lapses_at_its_until_time() {
        let now = crate::now();
        let change = update(&format!(
            r#"{{"soldOut": true, "soldOutUntil": "{}"}}"#,
            (now + Duration::seconds(60)).to_rfc3339()
        ))
        .validate(now)
        .unwrap();
        let level = change.apply(&StockLevel::default());
        assert!(level.sold_out(now));
        assert!(!level.sold_out(now + Duration::seconds(60)));
        assert_eq!(
            level.active_sold_out_until(now + Duration::seconds(61)),
            None
        );
    }

    #[test]
    fn contradictory_updates_are_rejected() {
        let now = crate::now();
        let past = (now - Duration::seconds(1)).to_rfc3339();
        for body in [
            "{}".to_owned(),
            r#"{"stock": -1}"#.to_owned(),
            format!(r#"{{"soldOut": true, "soldOutUntil": "{past}"}}"#),
            format!(r#"{{"soldOut": false, "soldOutUntil": "{past}"}}"#),
            format!(r#"{{"soldOutUntil": "{past}"}}"#),
            r#"{"soldOutUntil": null}"#.to_owned(),
        ] {
            assert!(update(&body).validate(now).is_err(), "{body}");
        }
    }

    #[test]
    fn restock_needs_tracked_stock_and_stays_bounded() {
        let id = Uuid::nil();
        let tracked = StockLevel {
            stock: Some(3),
            ..Default::default()
        };
        assert_eq!(restock(&tracked, id, 5).unwrap().stock, Some(8));
        assert!(restock(&tracked, id, 0).is_err());
        assert!(restock(&tracked, id, MAX_RESTOCK + 1).is_err());
        assert_eq!(
            restock(&StockLevel::default(), id, 5),
            Err(Rejection::StockNotTracked { item_id: id })
        );
    }

    #[test]
    fn log_deltas_treat_untracked_as_zero() {
        let untracked = StockLevel::default();
        let twenty = StockLevel {
            stock: Some(20),
            ..Default::default()
        };
        let order_id = Uuid::from_u128(5);
        let cause = Cause {
            order_id: Some(order_id),
            ..Cause::new(Operation::Set, "staff", crate::now())
        };
        let up = cause.log_entry(Uuid::nil(), &untracked, &twenty).unwrap();
        let down = cause.log_entry(Uuid::nil(), &twenty, &untracked).unwrap();
        assert_eq!(up.delta + down.delta, 0);
        assert_eq!((up.order_id, up.actor.as_str()), (Some(order_id), "staff"));
        assert!(cause.log_entry(Uuid::nil(), &twenty, &twenty).is_none());
    }

    #[test]
    fn a_cancellation_gives_back_only_to_levels_still_tracked() {
        let (kept, dropped, gone) = (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3));
        let levels = std::collections::HashMap::from([
            (
                kept,
                StockLevel {
                    stock: Some(4),
                    ..Default::default()
                },
            ),
            (dropped, StockLevel::default()),
        ]);
        let moves = put_back(&[(kept, 2), (dropped, 1), (gone, 1)], &levels);
        assert_eq!(
            moves
                .iter()
                .map(|m| (m.item_id, m.delta, m.after.stock))
                .collect::<Vec<_>>(),
            vec![(kept, 2, Some(6))]
        );
    }
}
