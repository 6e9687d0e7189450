//! The kitchen's status machine, and the stock a cancellation puts back.

use ordergate_domain::events::ORDER_UPDATED;
use ordergate_domain::inventory::{Operation, StockLevel};
use ordergate_domain::order::{Order, StatusChange, Transition};
use ordergate_domain::{Rejection, Timestamp};
use rusqlite::{Connection, params};
use uuid::Uuid;

use crate::codec::{millis, uuid};
use crate::error::SqliteError;
use crate::orders::find;
use crate::{events, inventory};

/// Moves an order along its status machine (see
/// [`ordergate_domain::order::OrderStatus::transition`]).
pub(crate) fn set_status(
    conn: &Connection,
    order_id: Uuid,
    change: &StatusChange,
    now: Timestamp,
) -> Result<Order, SqliteError> {
    let order = find(conn, order_id)?.ok_or(Rejection::NotFound("order"))?;
    let transition = order.status.transition(change.status);
    if transition == Some(Transition::Unchanged) {
        return Ok(order);
    }
    if let Some(expected) = change.expected_version
        && expected != order.version
    {
        return Err(Rejection::VersionConflict {
            current: order.version,
        }
        .into());
    }
    match transition {
        Some(Transition::Cancel) => put_back_stock(conn, &order, now)?,
        Some(Transition::Advance | Transition::Unchanged) => {}
        None => {
            return Err(Rejection::InvalidTransition {
                from: order.status.as_str(),
                to: change.status.as_str(),
            }
            .into());
        }
    }
    conn.prepare_cached(
        "update orders set status = ?2, version = version + 1, updated_at = ?3 where order_id = ?1",
    )?
    .execute(params![
        order_id.to_string(),
        change.status.as_str(),
        millis(now)
    ])?;
    let order = Order {
        status: change.status,
        version: order.version + 1,
        ..order
    };
    events::append(
        conn,
        order.shop_id,
        ORDER_UPDATED,
        Some(order.session_id),
        &order,
        now,
    )?;
    Ok(order)
}

/// Returns what the order's placement took, as its `order` log rows record
/// it: an item untracked since then takes nothing back, and one that was
/// untracked then gives nothing.
fn put_back_stock(conn: &Connection, order: &Order, now: Timestamp) -> Result<(), SqliteError> {
    let taken: Vec<(Uuid, i64)> = conn
        .prepare_cached(
            "select item_id, -sum(delta) from inventory_log
             where shop_id = ?1 and order_id = ?2 and operation = 'order'
             group by item_id order by item_id",
        )?
        .query_map(
            params![order.shop_id.to_string(), order.order_id.to_string()],
            |row| Ok((uuid(row, 0)?, row.get(1)?)),
        )?
        .collect::<Result<_, _>>()?;
    for (item_id, quantity) in taken {
        let Some(before) =
            inventory::level(conn, order.shop_id, item_id)?.filter(|l| l.stock.is_some())
        else {
            continue;
        };
        let after = StockLevel {
            stock: before.stock.map(|s| s + quantity),
            ..before.clone()
        };
        let order_id = Some(order.order_id);
        inventory::change_level(
            conn,
            order.shop_id,
            item_id,
            &before,
            &after,
            Operation::Cancel,
            "staff",
            order_id,
            now,
        )?;
    }
    Ok(())
}
