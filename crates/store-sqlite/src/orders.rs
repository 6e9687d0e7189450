//! Orders: a placed one stored, and read back: one, a session's, a shop's.

use ordergate_domain::Timestamp;
use ordergate_domain::order::{Order, OrderSource, OrderStatus};
use ordergate_domain::paging::Limit;
use rusqlite::{Connection, OptionalExtension, Row, params};
use uuid::Uuid;

use crate::codec::{json, millis, name, time, uuid};
use crate::error::SqliteError;
use crate::shops;

/// Order columns after the session's: decoded by [`from_row`].
pub(crate) const COLUMNS: &str =
    "o.order_id, o.shop_id, o.session_id, s.table_label, o.ticket_number,
                       o.status, o.source, o.client_id, o.lines, o.note, o.total,
                       o.created_at, o.version";
pub(crate) const FROM: &str = "from orders o join table_sessions s on s.session_id = o.session_id";

/// Stores a just-placed order under its ticket day; `payload_hash` is what
/// the duplicate rule compares.
pub(crate) fn insert(
    conn: &Connection,
    order: &Order,
    day: &str,
    payload_hash: &str,
) -> Result<(), SqliteError> {
    conn.prepare_cached(
        "insert into orders (order_id, shop_id, session_id, ticket_day, ticket_number, status,
                             source, client_id, payload_hash, lines, note, total, version,
                             created_at, updated_at)
         values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?14)",
    )?
    .execute(params![
        order.order_id.to_string(),
        order.shop_id.to_string(),
        order.session_id.to_string(),
        day,
        order.ticket_number,
        order.status.as_str(),
        order.source.as_str(),
        order.client_id,
        payload_hash,
        serde_json::to_string(&order.items)?,
        order.note,
        order.total,
        order.version,
        millis(order.created_at)
    ])?;
    Ok(())
}

pub(crate) fn from_row(row: &Row) -> rusqlite::Result<Order> {
    Ok(Order {
        order_id: uuid(row, 0)?,
        shop_id: uuid(row, 1)?,
        session_id: uuid(row, 2)?,
        table_label: row.get(3)?,
        ticket_number: row.get(4)?,
        status: name(row, 5, OrderStatus::parse)?,
        source: name(row, 6, OrderSource::parse)?,
        client_id: row.get(7)?,
        items: json(row, 8)?,
        note: row.get(9)?,
        total: row.get(10)?,
        created_at: time(row, 11)?,
        version: row.get(12)?,
    })
}

pub(crate) fn find(conn: &Connection, order_id: Uuid) -> Result<Option<Order>, SqliteError> {
    let mut stmt =
        conn.prepare_cached(&format!("select {COLUMNS} {FROM} where o.order_id = ?1"))?;
    Ok(stmt
        .query_row([order_id.to_string()], from_row)
        .optional()?)
}

pub(crate) fn of_session(
    conn: &Connection,
    session_id: Uuid,
    newest_first: bool,
    limit: Option<Limit>,
) -> Result<Vec<Order>, SqliteError> {
    let direction = if newest_first { "desc" } else { "asc" };
    let mut stmt = conn.prepare_cached(&format!(
        "select {COLUMNS} {FROM} where o.session_id = ?1
         order by o.created_at {direction}, o.order_id {direction} limit ?2"
    ))?;
    let limit = limit.map_or(-1, |l| i64::from(l.get()));
    let orders = stmt
        .query_map(params![session_id.to_string(), limit], from_row)?
        .collect::<Result<_, _>>()?;
    Ok(orders)
}

/// The shop's orders in `statuses` (every status when empty), oldest first:
/// the order a kitchen works through them.
pub(crate) fn of_shop(
    conn: &Connection,
    shop_id: Uuid,
    statuses: &[OrderStatus],
    limit: Limit,
) -> Result<Vec<Order>, SqliteError> {
    shops::require(conn, shop_id)?;
    // One cached statement for any filter: ",placed,accepted," contains ",placed,".
    let filter: String = statuses
        .iter()
        .map(|s| format!(",{}", s.as_str()))
        .collect();
    let filter = if filter.is_empty() {
        filter
    } else {
        format!("{filter},")
    };
    let mut stmt = conn.prepare_cached(&format!(
        "select {COLUMNS} {FROM}
         where o.shop_id = ?1 and (?2 = '' or instr(?2, ',' || o.status || ',') > 0)
         order by o.created_at, o.order_id limit ?3"
    ))?;
    let orders = stmt
        .query_map(params![shop_id.to_string(), filter, limit.get()], from_row)?
        .collect::<Result<_, _>>()?;
    Ok(orders)
}

/// See `Store::kitchen_pace`.
pub(crate) fn kitchen_pace(
    conn: &Connection,
    shop_id: Uuid,
    since: Timestamp,
) -> Result<Vec<(Timestamp, Timestamp)>, SqliteError> {
    shops::require(conn, shop_id)?;
    let mut stmt = conn.prepare_cached(
        "select coalesce(accepted_at, created_at), ready_at from orders
         where shop_id = ?1 and ready_at is not null and ready_at >= ?2",
    )?;
    let times = stmt
        .query_map(params![shop_id.to_string(), millis(since)], |row| {
            Ok((time(row, 0)?, time(row, 1)?))
        })?
        .collect::<Result<_, _>>()?;
    Ok(times)
}
