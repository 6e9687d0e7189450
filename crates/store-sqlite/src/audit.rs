use ordergate_domain::Timestamp;
use ordergate_domain::audit::{AuditCode, AuditEntry};
use ordergate_domain::paging::Limit;
use rusqlite::{Connection, OptionalExtension, params};
use uuid::Uuid;

use crate::codec::{millis, name, opt_uuid, time, uuid};
use crate::error::SqliteError;
use crate::shops;

/// Appends the entry of a request at a session of the shop `shop_id`.
///
/// A plain `values` row: SQLite gives a statement that reads the rows it
/// inserts (`insert … select`, as this was) a journal of its own, a copy
/// of every page it touches, and that was a twelfth of the writer's time
/// when every order's audit row took it (profile in the commit that added
/// this).
pub(crate) fn append_at(
    conn: &Connection,
    shop_id: Uuid,
    entry: &AuditEntry,
) -> Result<(), SqliteError> {
    conn.prepare_cached(
        "insert into audit_log (shop_id, session_id, request_id, client_id, status, code,
                                idempotent_replay, order_id, created_at, actor)
         values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        shop_id.to_string(),
        entry.session_id.to_string(),
        entry.request_id,
        entry.client_id,
        entry.status,
        entry.code.as_str(),
        entry.idempotent_replay,
        entry.order_id.map(|id| id.to_string()),
        millis(entry.at),
        entry.actor
    ])?;
    Ok(())
}

/// Appends entries, each to the shop of its session (an entry of a session
/// that does not exist names nothing an operator could look up, and is
/// dropped).
pub(crate) fn append(conn: &Connection, entries: &[AuditEntry]) -> Result<(), SqliteError> {
    let mut shop_of =
        conn.prepare_cached("select shop_id from table_sessions where session_id = ?1")?;
    for entry in entries {
        let shop_id = shop_of
            .query_row([entry.session_id.to_string()], |row| uuid(row, 0))
            .optional()?;
        if let Some(shop_id) = shop_id {
            append_at(conn, shop_id, entry)?;
        }
    }
    Ok(())
}

pub(crate) fn list(
    conn: &Connection,
    shop_id: Uuid,
    limit: Limit,
) -> Result<Vec<AuditEntry>, SqliteError> {
    shops::require(conn, shop_id)?;
    let mut stmt = conn.prepare_cached(
        "select created_at, session_id, request_id, client_id, status, code, idempotent_replay,
                order_id, actor
         from audit_log where shop_id = ?1 order by audit_id desc limit ?2",
    )?;
    let entries = stmt
        .query_map(params![shop_id.to_string(), limit.get()], |row| {
            Ok(AuditEntry {
                at: time(row, 0)?,
                session_id: uuid(row, 1)?,
                request_id: row.get(2)?,
                client_id: row.get(3)?,
                status: row.get(4)?,
                code: name(row, 5, AuditCode::parse)?,
                idempotent_replay: row.get(6)?,
                order_id: opt_uuid(row, 7)?,
                actor: row.get(8)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(entries)
}

/// Deletes up to `batch` of the oldest rows recorded before `before`.
pub(crate) fn purge(conn: &Connection, before: Timestamp, batch: u32) -> Result<u64, SqliteError> {
    let purged = conn
        .prepare_cached(
            "delete from audit_log where audit_id in
                 (select audit_id from audit_log where created_at < ?1 limit ?2)",
        )?
        .execute(params![millis(before), batch])?;
    Ok(purged as u64)
}
