//! The kitchen's status machine, and the stock a cancellation puts back.

use ordergate_domain::events::EventType;
use ordergate_domain::inventory::{Cause, Operation, put_back};
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
    let transition = change.judge(&order)?;
    match transition {
        Transition::Unchanged => return Ok(order),
        Transition::Cancel => put_back_stock(conn, &order, now)?,
        Transition::Advance => {}
    }
    conn.prepare_cached(
        "update orders set status = ?2, version = version + 1, updated_at = ?3 where order_id = ?1",
    )?
    .execute(params![
        order_id.to_string(),
        change.status.as_str(),
        millis(now)
    ])?;
    let order = order.moved_to(change.status);
    events::append(
        conn,
        order.shop_id,
        EventType::OrderUpdated,
        Some(order.session_id),
        &order,
        now,
    )?;
    Ok(order)
}

/// Returns what the order's placement took (see [`put_back`]).
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
    let ids: Vec<Uuid> = taken.iter().map(|(id, _)| *id).collect();
    let levels = inventory::levels(conn, order.shop_id, &ids)?;
    let cause = Cause {
        order_id: Some(order.order_id),
        ..Cause::new(Operation::Cancel, "staff", now)
    };
    inventory::apply_moves(conn, order.shop_id, &put_back(&taken, &levels), &cause)
}
