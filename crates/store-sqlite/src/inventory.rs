use std::collections::HashMap;

use ordergate_domain::catalog::ItemKind;
use ordergate_domain::events::{EventType, StockChanged};
use ordergate_domain::inventory::{
    self, Cause, InventoryItem, LogEntry, Operation, StockChange, StockLevel, StockMove,
};
use ordergate_domain::language::{Languages, Text};
use ordergate_domain::paging::Limit;
use ordergate_domain::{Rejection, Timestamp};
use rusqlite::{Connection, OptionalExtension, Row, params};
use uuid::Uuid;

use crate::codec::{json, millis, name, opt_time, opt_uuid, time, uuid};
use crate::error::SqliteError;
use crate::{events, shops};
use ordergate_store::Change;

/// Inventory rows of active (not retired) items, toppings and options,
/// with their names as stored (an option's item's too) and the shop's
/// languages to name them in.
const ACTIVE: &str = "
    select i.item_id, i.kind, coalesce(m.name, t.name, o.name), i.stock, i.marked_sold_out,
           i.sold_out_until, i.version, i.updated_at, om.name, s.languages
    from inventory i
    join shops s on s.shop_id = i.shop_id
    left join menu_items m
        on i.kind = 'menuItem' and m.shop_id = i.shop_id and m.menu_item_id = i.item_id
    left join toppings t
        on i.kind = 'topping' and t.shop_id = i.shop_id and t.topping_id = i.item_id
    left join item_options o
        on i.kind = 'option' and o.shop_id = i.shop_id and o.option_id = i.item_id
    left join menu_items om on om.shop_id = o.shop_id and om.menu_item_id = o.menu_item_id
    where i.shop_id = ?1 and coalesce(m.retired, t.retired, o.retired) = 0";

fn from_row(row: &Row) -> rusqlite::Result<InventoryItem> {
    let of_item: Option<Text> = match row.get::<_, Option<String>>(8)? {
        Some(_) => Some(json(row, 8)?),
        None => None,
    };
    let languages: Languages = json(row, 9)?;
    Ok(InventoryItem {
        item_id: uuid(row, 0)?,
        kind: name(row, 1, ItemKind::parse)?,
        name: InventoryItem::display_name(&json(row, 2)?, of_item.as_ref(), &languages),
        level: StockLevel {
            stock: row.get(3)?,
            marked_sold_out: row.get(4)?,
            sold_out_until: opt_time(row, 5)?,
        },
        version: row.get(6)?,
        updated_at: time(row, 7)?,
    })
}

/// Menu items first, then toppings, then options, each in catalog order.
pub(crate) fn list(conn: &Connection, shop_id: Uuid) -> Result<Vec<InventoryItem>, SqliteError> {
    let mut stmt = conn.prepare_cached(&format!(
        "{ACTIVE} order by case i.kind when 'menuItem' then 0 when 'topping' then 1 else 2 end,
                  coalesce(m.position, t.position, om.position), o.position"
    ))?;
    let items = stmt
        .query_map([shop_id.to_string()], from_row)?
        .collect::<Result<_, _>>()?;
    Ok(items)
}

fn require_active(
    conn: &Connection,
    shop_id: Uuid,
    item_id: Uuid,
) -> Result<InventoryItem, SqliteError> {
    shops::require(conn, shop_id)?;
    let mut stmt = conn.prepare_cached(&format!("{ACTIVE} and i.item_id = ?2"))?;
    stmt.query_row(params![shop_id.to_string(), item_id.to_string()], from_row)
        .optional()?
        .ok_or_else(|| Rejection::NotFound("inventory item").into())
}

pub(crate) fn update(
    conn: &Connection,
    shop_id: Uuid,
    item_id: Uuid,
    change: &StockChange,
    actor: &str,
    now: Timestamp,
) -> Result<InventoryItem, SqliteError> {
    let item = require_active(conn, shop_id, item_id)?;
    let next = change.apply(&item.level);
    store_level(
        conn,
        shop_id,
        item,
        next,
        &Cause::new(Operation::Set, actor, now),
    )
}

pub(crate) fn restock(
    conn: &Connection,
    shop_id: Uuid,
    item_id: Uuid,
    quantity: i64,
    actor: &str,
    now: Timestamp,
) -> Result<InventoryItem, SqliteError> {
    let item = require_active(conn, shop_id, item_id)?;
    let next = inventory::restock(&item.level, item_id, quantity)?;
    store_level(
        conn,
        shop_id,
        item,
        next,
        &Cause::new(Operation::Restock, actor, now),
    )
}

/// Writes a new level, bumping the version; logs the stock change if there
/// is one and announces it. Writing an unchanged level is a no-op.
fn store_level(
    conn: &Connection,
    shop_id: Uuid,
    item: InventoryItem,
    next: StockLevel,
    cause: &Cause<'_>,
) -> Result<InventoryItem, SqliteError> {
    if next == item.level {
        return Ok(item);
    }
    change_level(conn, shop_id, item.item_id, &item.level, &next, cause)?;
    Ok(InventoryItem {
        level: next,
        version: item.version + 1,
        updated_at: cause.now,
        ..item
    })
}

/// Every change of a stock level goes through here: the row, its op-log
/// entry when the count moved, and its `stock.changed` event, together.
pub(crate) fn change_level(
    conn: &Connection,
    shop_id: Uuid,
    item_id: Uuid,
    before: &StockLevel,
    after: &StockLevel,
    cause: &Cause<'_>,
) -> Result<(), SqliteError> {
    write_level(conn, shop_id, item_id, after, cause.now)?;
    if let Some(entry) = cause.log_entry(item_id, before, after) {
        append_log(conn, shop_id, &entry)?;
    }
    let changed = StockChanged::new(item_id, after, cause.now);
    events::append(
        conn,
        shop_id,
        EventType::StockChanged,
        None,
        &changed,
        cause.now,
    )?;
    events::note(Change::Stock(shop_id));
    Ok(())
}

/// Stores each move's level over the one it was read as.
pub(crate) fn apply_moves(
    conn: &Connection,
    shop_id: Uuid,
    moves: &[StockMove],
    cause: &Cause<'_>,
) -> Result<(), SqliteError> {
    for step in moves {
        change_level(
            conn,
            shop_id,
            step.item_id,
            &step.before,
            &step.after,
            cause,
        )?;
    }
    Ok(())
}

/// The stored levels of these items and toppings (active or retired).
pub(crate) fn levels(
    conn: &Connection,
    shop_id: Uuid,
    item_ids: &[Uuid],
) -> Result<HashMap<Uuid, StockLevel>, SqliteError> {
    let mut levels = HashMap::new();
    for &item_id in item_ids {
        if let Some(level) = level(conn, shop_id, item_id)? {
            levels.insert(item_id, level);
        }
    }
    Ok(levels)
}

/// The stored level of an item or topping (active or retired).
fn level(
    conn: &Connection,
    shop_id: Uuid,
    item_id: Uuid,
) -> Result<Option<StockLevel>, SqliteError> {
    let mut stmt = conn.prepare_cached(
        "select stock, marked_sold_out, sold_out_until from inventory
         where shop_id = ?1 and item_id = ?2",
    )?;
    let level = stmt
        .query_row(params![shop_id.to_string(), item_id.to_string()], |row| {
            Ok(StockLevel {
                stock: row.get(0)?,
                marked_sold_out: row.get(1)?,
                sold_out_until: opt_time(row, 2)?,
            })
        })
        .optional()?;
    Ok(level)
}

/// Stores a level, bumping the version.
fn write_level(
    conn: &Connection,
    shop_id: Uuid,
    item_id: Uuid,
    level: &StockLevel,
    now: Timestamp,
) -> Result<(), SqliteError> {
    conn.prepare_cached(
        "update inventory
         set stock = ?3, marked_sold_out = ?4, sold_out_until = ?5,
             version = version + 1, updated_at = ?6
         where shop_id = ?1 and item_id = ?2",
    )?
    .execute(params![
        shop_id.to_string(),
        item_id.to_string(),
        level.stock,
        level.marked_sold_out,
        level.sold_out_until.map(millis),
        millis(now)
    ])?;
    Ok(())
}

pub(crate) fn append_log(
    conn: &Connection,
    shop_id: Uuid,
    entry: &LogEntry,
) -> Result<(), SqliteError> {
    conn.prepare_cached(
        "insert into inventory_log (shop_id, item_id, operation, delta, stock_before,
                                    stock_after, order_id, actor, created_at)
         values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        shop_id.to_string(),
        entry.item_id.to_string(),
        entry.operation.as_str(),
        entry.delta,
        entry.stock_before,
        entry.stock_after,
        entry.order_id.map(|id| id.to_string()),
        entry.actor,
        millis(entry.at)
    ])?;
    Ok(())
}

pub(crate) fn log(
    conn: &Connection,
    shop_id: Uuid,
    limit: Limit,
) -> Result<Vec<LogEntry>, SqliteError> {
    shops::require(conn, shop_id)?;
    let mut stmt = conn.prepare_cached(
        "select created_at, item_id, operation, delta, stock_before, stock_after, order_id, actor
         from inventory_log where shop_id = ?1 order by log_id desc limit ?2",
    )?;
    let entries = stmt
        .query_map(params![shop_id.to_string(), limit.get()], |row| {
            Ok(LogEntry {
                at: time(row, 0)?,
                item_id: uuid(row, 1)?,
                operation: name(row, 2, Operation::parse)?,
                delta: row.get(3)?,
                stock_before: row.get(4)?,
                stock_after: row.get(5)?,
                order_id: opt_uuid(row, 6)?,
                actor: row.get(7)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(entries)
}
