//! The per-shop event log the kitchen streams from, and the record of what
//! the current write changed, announced once it commits.

use std::cell::RefCell;

use ordergate_domain::Timestamp;
use ordergate_domain::events::{Event, EventType};
use ordergate_domain::paging::Limit;
use ordergate_store::Change;
use rusqlite::{Connection, params};
use uuid::Uuid;

use crate::codec::{millis, name, opt_uuid};
use crate::error::SqliteError;

thread_local! {
    /// Changes made by the writer thread's open transaction. Only the
    /// writer thread writes, so a thread-local is that transaction's own.
    static CHANGED: RefCell<Vec<Change>> = const { RefCell::new(Vec::new()) };
}

/// Notes a change of the open transaction, to announce after its commit.
pub(crate) fn note(change: Change) {
    CHANGED.with_borrow_mut(|changed| {
        if !changed.contains(&change) {
            changed.push(change);
        }
    });
}

/// The changes noted since the last call (a job rolled back may have noted
/// one that did not happen; announcing it only makes a listener look again).
pub(crate) fn take_noted() -> Vec<Change> {
    CHANGED.with_borrow_mut(std::mem::take)
}

/// Appends an event with the shop's next id. Writes are serialised by the
/// single writer, so `max + 1` is strictly increasing and never reused, and
/// ids are in commit order.
pub(crate) fn append(
    conn: &Connection,
    shop_id: Uuid,
    event_type: EventType,
    session_id: Option<Uuid>,
    data: &impl serde::Serialize,
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
        event_type.as_str(),
        session_id.map(|id| id.to_string()),
        serde_json::to_string(data)?,
        millis(now)
    ])?;
    note(Change::Events(shop_id));
    Ok(event_id)
}

pub(crate) fn after(
    conn: &Connection,
    shop_id: Uuid,
    after: i64,
    limit: Limit,
) -> Result<Vec<Event>, SqliteError> {
    let mut stmt = conn.prepare_cached(
        "select event_id, event_type, session_id, data from events
         where shop_id = ?1 and event_id > ?2 order by event_id limit ?3",
    )?;
    let events = stmt
        .query_map(params![shop_id.to_string(), after, limit.get()], |row| {
            Ok(Event {
                event_id: row.get(0)?,
                event_type: name(row, 1, EventType::parse)?,
                session_id: opt_uuid(row, 2)?,
                data: row.get(3)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(events)
}

pub(crate) fn last_id(conn: &Connection, shop_id: Uuid) -> Result<i64, SqliteError> {
    Ok(conn
        .prepare_cached("select coalesce(max(event_id), 0) from events where shop_id = ?1")?
        .query_row([shop_id.to_string()], |row| row.get(0))?)
}
