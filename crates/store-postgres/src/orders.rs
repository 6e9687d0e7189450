//! Orders as stored: reading them, and moving them along their status
//! machine (a cancellation puts back the stock its placement took).

use ordergate_domain::Rejection;
use ordergate_domain::Timestamp;
use ordergate_domain::events::EventType;
use ordergate_domain::inventory::{Cause, Operation, put_back};
use ordergate_domain::order::{
    LastMove, Order, OrderSource, OrderStatus, Recall, StatusChange, Transition,
};
use ordergate_domain::paging::Limit;
use ordergate_domain::wait::KitchenTimes;
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgRow};
use uuid::Uuid;

use crate::codec::{json, name};
use crate::error::PgError;
use crate::inventory;
use crate::tx::Tx;
use crate::{events, shops};

/// Order columns with the session's table label, decoded by [`from_row`].
macro_rules! select {
    () => {
        "select o.order_id, o.shop_id, o.session_id, s.table_label, o.ticket_number,
                o.status, o.source, o.client_id, o.lines, o.note, o.total,
                o.created_at, o.version
         from orders o
         join table_sessions s on s.shop_id = o.shop_id and s.session_id = o.session_id"
    };
}
pub(crate) use select;

pub(crate) fn from_row(row: PgRow) -> sqlx::Result<Order> {
    Ok(Order {
        order_id: row.try_get(0)?,
        shop_id: row.try_get(1)?,
        session_id: row.try_get(2)?,
        table_label: row.try_get(3)?,
        ticket_number: row.try_get(4)?,
        status: name(&row, 5, OrderStatus::parse)?,
        source: name(&row, 6, OrderSource::parse)?,
        client_id: row.try_get(7)?,
        items: json(&row, 8)?,
        note: row.try_get(9)?,
        total: row.try_get(10)?,
        created_at: row.try_get(11)?,
        version: row.try_get(12)?,
    })
}

pub(crate) async fn find(
    conn: &mut PgConnection,
    shop_id: Uuid,
    order_id: Uuid,
) -> Result<Option<Order>, PgError> {
    Ok(sqlx::query(concat!(
        select!(),
        " where o.shop_id = $1 and o.order_id = $2"
    ))
    .bind(shop_id)
    .bind(order_id)
    .try_map(from_row)
    .fetch_optional(conn)
    .await?)
}

pub(crate) async fn of_session(
    conn: &mut PgConnection,
    shop_id: Uuid,
    session_id: Uuid,
    newest_first: bool,
    limit: Option<Limit>,
) -> Result<Vec<Order>, PgError> {
    let query = if newest_first {
        sqlx::query(concat!(
            select!(),
            " where o.shop_id = $1 and o.session_id = $2
              order by o.created_at desc, o.order_id desc limit $3"
        ))
    } else {
        sqlx::query(concat!(
            select!(),
            " where o.shop_id = $1 and o.session_id = $2
              order by o.created_at, o.order_id limit $3"
        ))
    };
    Ok(query
        .bind(shop_id)
        .bind(session_id)
        .bind(limit.map(|l| i64::from(l.get())))
        .try_map(from_row)
        .fetch_all(conn)
        .await?)
}

/// The shop's orders in `statuses` (every status when empty), oldest first:
/// the order a kitchen works through them.
pub(crate) async fn of_shop(
    conn: &mut PgConnection,
    shop_id: Uuid,
    statuses: &[OrderStatus],
    limit: Limit,
) -> Result<Vec<Order>, PgError> {
    shops::require(conn, shop_id).await?;
    let statuses: Vec<&str> = statuses.iter().map(|s| s.as_str()).collect();
    Ok(sqlx::query(concat!(
        select!(),
        " where o.shop_id = $1 and (cardinality($2::text[]) = 0 or o.status = any($2))
         order by o.created_at, o.order_id limit $3"
    ))
    .bind(shop_id)
    .bind(statuses)
    .bind(i64::from(limit.get()))
    .try_map(from_row)
    .fetch_all(conn)
    .await?)
}

/// The order, its row locked so concurrent changes of it take turns.
async fn lock(tx: &mut Tx, shop_id: Uuid, order_id: Uuid) -> Result<Order, PgError> {
    Ok(sqlx::query(concat!(
        select!(),
        " where o.shop_id = $1 and o.order_id = $2 for update of o"
    ))
    .bind(shop_id)
    .bind(order_id)
    .try_map(from_row)
    .fetch_optional(tx.conn())
    .await?
    .ok_or(Rejection::NotFound("order"))?)
}

/// Moves an order along its status machine (see [`OrderStatus::transition`]).
pub(crate) async fn set_status(
    tx: &mut Tx,
    shop_id: Uuid,
    order_id: Uuid,
    change: &StatusChange,
    now: Timestamp,
) -> Result<Order, PgError> {
    let order = lock(tx, shop_id, order_id).await?;
    let transition = change.judge(&order)?;
    match transition {
        Transition::Unchanged => return Ok(order),
        Transition::Cancel => put_back_stock(tx, &order, &change.actor, now).await?,
        Transition::Advance => {}
    }
    let undoable = transition.undoable(order.status, now);
    move_order(tx, order, change.status, undoable, now).await
}

/// Undoes an order's last advance (see [`Recall::judge`]); the recall
/// itself cannot be recalled.
pub(crate) async fn recall(
    tx: &mut Tx,
    shop_id: Uuid,
    order_id: Uuid,
    recall: &Recall,
    now: Timestamp,
) -> Result<Order, PgError> {
    let order = lock(tx, shop_id, order_id).await?;
    let last_move = sqlx::query(
        "select last_move_from, last_move_at from orders
         where shop_id = $1 and order_id = $2 and last_move_from is not null",
    )
    .bind(shop_id)
    .bind(order_id)
    .try_map(|row: PgRow| {
        Ok(LastMove {
            from: name(&row, 0, OrderStatus::parse)?,
            at: row.try_get(1)?,
        })
    })
    .fetch_optional(tx.conn())
    .await?;
    let back_to = recall.judge(&order, last_move, now)?;
    move_order(tx, order, back_to, None, now).await
}

/// Stores `order` at `status`, its next version, with what a recall may
/// undo of the move and the kitchen's times; announces it.
async fn move_order(
    tx: &mut Tx,
    order: Order,
    status: OrderStatus,
    undoable: Option<LastMove>,
    now: Timestamp,
) -> Result<Order, PgError> {
    let times = sqlx::query(
        "select accepted_at, ready_at from orders where shop_id = $1 and order_id = $2",
    )
    .bind(order.shop_id)
    .bind(order.order_id)
    .try_map(|row: PgRow| {
        Ok(KitchenTimes {
            accepted_at: row.try_get(0)?,
            ready_at: row.try_get(1)?,
        })
    })
    .fetch_one(tx.conn())
    .await?
    .after_move(status, now);
    sqlx::query(
        "update orders set status = $3, version = version + 1, updated_at = $4,
                           last_move_from = $5, last_move_at = $6,
                           accepted_at = $7, ready_at = $8
         where shop_id = $1 and order_id = $2",
    )
    .bind(order.shop_id)
    .bind(order.order_id)
    .bind(status.as_str())
    .bind(now)
    .bind(undoable.map(|m| m.from.as_str()))
    .bind(undoable.map(|m| m.at))
    .bind(times.accepted_at)
    .bind(times.ready_at)
    .execute(tx.conn())
    .await?;
    let order = order.moved_to(status);
    events::append(
        tx,
        order.shop_id,
        EventType::OrderUpdated,
        Some(order.session_id),
        &order,
        now,
    )
    .await?;
    Ok(order)
}

/// Returns what the order's placement took (see [`put_back`]). Every row
/// is locked (ascending ids) before the first is written.
async fn put_back_stock(
    tx: &mut Tx,
    order: &Order,
    actor: &str,
    now: Timestamp,
) -> Result<(), PgError> {
    let taken: Vec<(Uuid, i64)> = sqlx::query(
        "select item_id, (-sum(delta))::bigint from inventory_log
         where shop_id = $1 and order_id = $2 and operation = 'order'
         group by item_id order by item_id",
    )
    .bind(order.shop_id)
    .bind(order.order_id)
    .try_map(|row: PgRow| Ok((row.try_get(0)?, row.try_get(1)?)))
    .fetch_all(tx.conn())
    .await?;
    let ids: Vec<Uuid> = taken.iter().map(|(id, _)| *id).collect();
    let levels = inventory::lock_levels(tx, order.shop_id, &ids).await?;
    let cause = Cause {
        order_id: Some(order.order_id),
        ..Cause::new(Operation::Cancel, actor, now)
    };
    for step in put_back(&taken, &levels) {
        inventory::change_level(
            tx,
            order.shop_id,
            step.item_id,
            &step.before,
            &step.after,
            &cause,
        )
        .await?;
    }
    Ok(())
}

/// See `Store::kitchen_pace`.
pub(crate) async fn kitchen_pace(
    conn: &mut PgConnection,
    shop_id: Uuid,
    since: Timestamp,
) -> Result<Vec<(Timestamp, Timestamp)>, PgError> {
    shops::require(conn, shop_id).await?;
    Ok(sqlx::query(
        "select coalesce(accepted_at, created_at), ready_at from orders
         where shop_id = $1 and ready_at is not null and ready_at >= $2",
    )
    .bind(shop_id)
    .bind(since)
    .try_map(|row: PgRow| Ok((row.try_get(0)?, row.try_get(1)?)))
    .fetch_all(conn)
    .await?)
}
