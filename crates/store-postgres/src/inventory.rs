//! Stock levels, manual 86 marks and their op log. A level is only changed
//! with its row locked (`for update`), and every change writes its log row
//! and `stock.changed` event in the same transaction.

use std::collections::HashMap;

use ordergate_domain::catalog::ItemKind;
use ordergate_domain::events::{EventType, StockChanged};
use ordergate_domain::inventory::{
    self, Cause, InventoryItem, LogEntry, Operation, StockChange, StockLevel,
};
use ordergate_domain::language::{Languages, Text};
use ordergate_domain::paging::Limit;
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::Change;
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgRow};
use uuid::Uuid;

use crate::codec::{json, name};
use crate::error::PgError;
use crate::tx::Tx;
use crate::{events, shops};

/// Inventory rows of active (not retired) items, toppings and options,
/// with their names as stored (an option's item's too) and the shop's
/// languages to name them in.
macro_rules! active {
    () => {
        "select i.item_id, i.kind, coalesce(m.name, t.name, o.name), i.stock, i.marked_sold_out,
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
         where i.shop_id = $1 and not coalesce(m.retired, t.retired, o.retired)"
    };
}

fn from_row(row: PgRow) -> sqlx::Result<InventoryItem> {
    let of_item: Option<Text> = match row.try_get::<Option<String>, _>(8)? {
        Some(_) => Some(json(&row, 8)?),
        None => None,
    };
    let languages: Languages = json(&row, 9)?;
    Ok(InventoryItem {
        item_id: row.try_get(0)?,
        kind: name(&row, 1, ItemKind::parse)?,
        name: InventoryItem::display_name(&json(&row, 2)?, of_item.as_ref(), &languages),
        level: StockLevel {
            stock: row.try_get(3)?,
            marked_sold_out: row.try_get(4)?,
            sold_out_until: row.try_get(5)?,
        },
        version: row.try_get(6)?,
        updated_at: row.try_get(7)?,
    })
}

/// Menu items first, then toppings, then options, each in catalog order.
pub(crate) async fn list(
    conn: &mut PgConnection,
    shop_id: Uuid,
) -> Result<Vec<InventoryItem>, PgError> {
    Ok(sqlx::query(concat!(
        active!(),
        " order by case i.kind when 'menuItem' then 0 when 'topping' then 1 else 2 end,
                   coalesce(m.position, t.position, om.position), o.position"
    ))
    .bind(shop_id)
    .try_map(from_row)
    .fetch_all(conn)
    .await?)
}

/// The active item, its inventory row locked until the transaction ends.
async fn require_active(
    tx: &mut Tx,
    shop_id: Uuid,
    item_id: Uuid,
) -> Result<InventoryItem, PgError> {
    shops::require(tx.conn(), shop_id).await?;
    sqlx::query(concat!(active!(), " and i.item_id = $2 for update of i"))
        .bind(shop_id)
        .bind(item_id)
        .try_map(from_row)
        .fetch_optional(tx.conn())
        .await?
        .ok_or_else(|| Rejection::NotFound("inventory item").into())
}

pub(crate) async fn update(
    tx: &mut Tx,
    shop_id: Uuid,
    item_id: Uuid,
    change: &StockChange,
    actor: &str,
    now: Timestamp,
) -> Result<InventoryItem, PgError> {
    let item = require_active(tx, shop_id, item_id).await?;
    let next = change.apply(&item.level);
    store_level(
        tx,
        shop_id,
        item,
        next,
        Cause::new(Operation::Set, actor, now),
    )
    .await
}

pub(crate) async fn restock(
    tx: &mut Tx,
    shop_id: Uuid,
    item_id: Uuid,
    quantity: i64,
    actor: &str,
    now: Timestamp,
) -> Result<InventoryItem, PgError> {
    let item = require_active(tx, shop_id, item_id).await?;
    let next = inventory::restock(&item.level, item_id, quantity)?;
    store_level(
        tx,
        shop_id,
        item,
        next,
        Cause::new(Operation::Restock, actor, now),
    )
    .await
}

/// Writes a new level, bumping the version; logs the stock change if there
/// is one and announces it. Writing an unchanged level is a no-op.
async fn store_level(
    tx: &mut Tx,
    shop_id: Uuid,
    item: InventoryItem,
    next: StockLevel,
    cause: Cause<'_>,
) -> Result<InventoryItem, PgError> {
    if next == item.level {
        return Ok(item);
    }
    change_level(tx, shop_id, item.item_id, &item.level, &next, &cause).await?;
    Ok(InventoryItem {
        level: next,
        version: item.version + 1,
        updated_at: cause.now,
        ..item
    })
}

/// Stores `after` over a level read (and locked) as `before`.
pub(crate) async fn change_level(
    tx: &mut Tx,
    shop_id: Uuid,
    item_id: Uuid,
    before: &StockLevel,
    after: &StockLevel,
    cause: &Cause<'_>,
) -> Result<(), PgError> {
    sqlx::query(
        "update inventory
         set stock = $3, marked_sold_out = $4, sold_out_until = $5,
             version = version + 1, updated_at = $6
         where shop_id = $1 and item_id = $2",
    )
    .bind(shop_id)
    .bind(item_id)
    .bind(after.stock)
    .bind(after.marked_sold_out)
    .bind(after.sold_out_until)
    .bind(cause.now)
    .execute(tx.conn())
    .await?;
    record(tx, shop_id, item_id, before, after, cause).await
}

/// The op-log row (when the count moved) and the `stock.changed` event.
async fn record(
    tx: &mut Tx,
    shop_id: Uuid,
    item_id: Uuid,
    before: &StockLevel,
    after: &StockLevel,
    cause: &Cause<'_>,
) -> Result<(), PgError> {
    if let Some(entry) = cause.log_entry(item_id, before, after) {
        append_log(tx.conn(), shop_id, &entry).await?;
    }
    let changed = StockChanged::new(item_id, after, cause.now);
    events::append(
        tx,
        shop_id,
        EventType::StockChanged,
        None,
        &changed,
        cause.now,
    )
    .await?;
    tx.note(Change::Stock(shop_id));
    Ok(())
}

/// The stored levels of these items and toppings (active or retired), the
/// tracked ones' rows locked in ascending id order, the order every
/// transaction locks stock in, so concurrent orders cannot deadlock.
pub(crate) async fn lock_levels(
    tx: &mut Tx,
    shop_id: Uuid,
    item_ids: &[Uuid],
) -> Result<HashMap<Uuid, StockLevel>, PgError> {
    // Only tracked rows are locked: an untracked item has no stock to take,
    // and locking its row would make every order of a popular dish take
    // turns. A row made untracked while this waited for it drops out (it
    // has nothing to take); one made tracked after this statement began
    // reads as untracked (the order went first).
    let rows = sqlx::query(
        "with tracked as (
             select item_id, stock, marked_sold_out, sold_out_until from inventory
             where shop_id = $1 and item_id = any($2) and stock is not null
             order by item_id for update
         )
         select item_id, stock, marked_sold_out, sold_out_until from tracked
         union all
         select item_id, stock, marked_sold_out, sold_out_until from inventory
         where shop_id = $1 and item_id = any($2) and stock is null",
    )
    .bind(shop_id)
    .bind(item_ids)
    .try_map(|row: PgRow| {
        Ok((
            row.try_get::<Uuid, _>(0)?,
            StockLevel {
                stock: row.try_get(1)?,
                marked_sold_out: row.try_get(2)?,
                sold_out_until: row.try_get(3)?,
            },
        ))
    })
    .fetch_all(tx.conn())
    .await?;
    Ok(rows.into_iter().collect())
}

async fn append_log(
    conn: &mut PgConnection,
    shop_id: Uuid,
    entry: &LogEntry,
) -> Result<(), PgError> {
    sqlx::query(
        "insert into inventory_log (shop_id, item_id, operation, delta, stock_before,
                                    stock_after, order_id, actor, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(shop_id)
    .bind(entry.item_id)
    .bind(entry.operation.as_str())
    .bind(entry.delta)
    .bind(entry.stock_before)
    .bind(entry.stock_after)
    .bind(entry.order_id)
    .bind(&entry.actor)
    .bind(entry.at)
    .execute(conn)
    .await?;
    Ok(())
}

pub(crate) async fn log(
    conn: &mut PgConnection,
    shop_id: Uuid,
    limit: Limit,
) -> Result<Vec<LogEntry>, PgError> {
    shops::require(conn, shop_id).await?;
    Ok(sqlx::query(
        "select created_at, item_id, operation, delta, stock_before, stock_after, order_id, actor
         from inventory_log where shop_id = $1 order by log_id desc limit $2",
    )
    .bind(shop_id)
    .bind(i64::from(limit.get()))
    .try_map(|row: PgRow| {
        Ok(LogEntry {
            at: row.try_get(0)?,
            item_id: row.try_get(1)?,
            operation: name(&row, 2, Operation::parse)?,
            delta: row.try_get(3)?,
            stock_before: row.try_get(4)?,
            stock_after: row.try_get(5)?,
            order_id: row.try_get(6)?,
            actor: row.try_get(7)?,
        })
    })
    .fetch_all(conn)
    .await?)
}
