//! The per-shop event log the kitchen streams from.

use ordergate_domain::Timestamp;
use rusqlite::{Connection, params};
use uuid::Uuid;

use crate::codec::millis;
use crate::error::SqliteError;

/// Appends an event with the shop's next id. Writes are serialised by the
/// single writer, so `max + 1` is strictly increasing and never reused.
pub(crate) fn append(
    conn: &Connection,
    shop_id: Uuid,
    event_type: &str,
    session_id: Option<Uuid>,
    data: &str,
    now: Timestamp,
) -> Result<i64, SqliteError> {
    let shop = shop_id.to_string();
    let event_id: i64 = conn
        .prepare_cached("select coalesce(max(event_id), 0) + 1 from events where shop_id = ?1")?
        .query_row([&shop], |row| row.get(0))?;
    conn.prepare_cached(
        "insert into events (shop_id, event_id, event_type, session_id, data, created_at)
         values (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        shop,
        event_id,
        event_type,
        session_id.map(|id| id.to_string()),
        data,
        millis(now)
    ])?;
    Ok(event_id)
}
