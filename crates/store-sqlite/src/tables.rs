//! The restaurant's tables, each with its active session if any.

use ordergate_domain::Rejection;
use ordergate_domain::table::{Table, TableState};
use rusqlite::{Connection, OptionalExtension, Row, params};
use uuid::Uuid;

use crate::codec::{millis, opt_uuid, time, uuid};
use crate::error::SqliteError;
use crate::shops;

/// A table and the session active at it (by its name).
const WITH_SESSION: &str = "
    select t.table_id, t.shop_id, t.name, t.code, t.created_at, s.session_id
    from tables t
    left join table_sessions s
        on s.shop_id = t.shop_id and s.table_label = t.name and s.status = 'active'";

fn from_row(row: &Row) -> rusqlite::Result<TableState> {
    Ok(TableState {
        table: Table {
            table_id: uuid(row, 0)?,
            shop_id: uuid(row, 1)?,
            name: row.get(2)?,
            code: row.get(3)?,
            created_at: time(row, 4)?,
        },
        session_id: opt_uuid(row, 5)?,
    })
}

pub(crate) fn insert(conn: &Connection, table: &Table) -> Result<(), SqliteError> {
    shops::require(conn, table.shop_id)?;
    let taken: bool = conn
        .prepare_cached("select exists (select 1 from tables where shop_id = ?1 and name = ?2)")?
        .query_row(params![table.shop_id.to_string(), table.name], |row| {
            row.get(0)
        })?;
    if taken {
        return Err(Rejection::TableNameTaken {
            name: table.name.clone(),
        }
        .into());
    }
    conn.prepare_cached(
        "insert into tables (shop_id, table_id, name, code, created_at)
         values (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        table.shop_id.to_string(),
        table.table_id.to_string(),
        table.name,
        table.code,
        millis(table.created_at)
    ])?;
    Ok(())
}

/// The shop's tables, by name.
pub(crate) fn list(conn: &Connection, shop_id: Uuid) -> Result<Vec<TableState>, SqliteError> {
    shops::require(conn, shop_id)?;
    let mut stmt = conn.prepare_cached(&format!(
        "{WITH_SESSION} where t.shop_id = ?1 order by t.name"
    ))?;
    let tables = stmt
        .query_map([shop_id.to_string()], from_row)?
        .collect::<Result<_, _>>()?;
    Ok(tables)
}

pub(crate) fn by_code(conn: &Connection, code: &str) -> Result<Option<TableState>, SqliteError> {
    let mut stmt = conn.prepare_cached(&format!("{WITH_SESSION} where t.code = ?1"))?;
    Ok(stmt.query_row([code], from_row).optional()?)
}
