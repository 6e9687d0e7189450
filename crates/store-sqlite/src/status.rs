//! The kitchen's status machine, and the stock a cancellation puts back.

use ordergate_domain::events::EventType;
use ordergate_domain::inventory::{Cause, Operation, put_back};
use ordergate_domain::order::{LastMove, Order, OrderStatus, Recall, StatusChange, Transition};
use ordergate_domain::wait::KitchenTimes;
use ordergate_domain::{Rejection, Timestamp};
use rusqlite::{Connection, OptionalExtension, params};
use uuid::Uuid;

use crate::codec::{millis, name, opt_time, time, uuid};
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
        Transition::Cancel => put_back_stock(conn, &order, &change.actor, now)?,
        Transition::Advance => {}
    }
    let undoable = transition.undoable(order.status, now);
    move_order(conn, order, change.status, undoable, now)
}

/// Undoes an order's last advance (see [`Recall::judge`]); the recall
/// itself cannot be recalled.
pub(crate) fn recall(
    conn: &Connection,
    order_id: Uuid,
    recall: &Recall,
    now: Timestamp,
) -> Result<Order, SqliteError> {
    let order = find(conn, order_id)?.ok_or(Rejection::NotFound("order"))?;
    let last_move = conn
        .prepare_cached(
            "select last_move_from, last_move_at from orders
             where order_id = ?1 and last_move_from is not null",
        )?
        .query_row([order_id.to_string()], |row| {
            Ok(LastMove {
                from: name(row, 0, OrderStatus::parse)?,
                at: time(row, 1)?,
            })
        })
        .optional()?;
    let back_to = recall.judge(&order, last_move, now)?;
    move_order(conn, order, back_to, None, now)
}

/// Stores `order` at `status`, its next version, with what a recall may
/// undo of the move and the kitchen's times; announces it.
fn move_order(
    conn: &Connection,
    order: Order,
    status: OrderStatus,
    undoable: Option<LastMove>,
    now: Timestamp,
) -> Result<Order, SqliteError> {
    let times = conn
        .prepare_cached("select accepted_at, ready_at from orders where order_id = ?1")?
        .query_row([order.order_id.to_string()], |row| {
            Ok(KitchenTimes {
                accepted_at: opt_time(row, 0)?,
                ready_at: opt_time(row, 1)?,
            })
        })?
        .after_move(status, now);
    conn.prepare_cached(
        "update orders set status = ?2, version = version + 1, updated_at = ?3,
                           last_move_from = ?4, last_move_at = ?5,
                           accepted_at = ?6, ready_at = ?7
         where order_id = ?1",
    )?
    .execute(params![
        order.order_id.to_string(),
        status.as_str(),
        millis(now),
        undoable.map(|m| m.from.as_str()),
        undoable.map(|m| millis(m.at)),
        times.accepted_at.map(millis),
        times.ready_at.map(millis),
    ])?;
    let order = order.moved_to(status);
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
fn put_back_stock(
    conn: &Connection,
    order: &Order,
    actor: &str,
    now: Timestamp,
) -> Result<(), SqliteError> {
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
        ..Cause::new(Operation::Cancel, actor, now)
    };
    inventory::apply_moves(conn, order.shop_id, &put_back(&taken, &levels), &cause)
}
