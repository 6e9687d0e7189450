//! Reading rows of either backend as one kind of value, so that the same
//! query can be asked of SQLite and PostgreSQL and the answers compared.
//!
//! Values are brought to SQLite's representation, which is the narrower
//! one: UUIDs as lowercase hyphenated text, times as unix milliseconds,
//! booleans as 0/1, every integer as `i64`.

use std::fmt;

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use futures_util::TryStreamExt;
use rusqlite::Connection;
use rusqlite::types::ValueRef;
use sha2::{Digest, Sha256};
use sqlx::postgres::{PgConnection, PgRow};
use sqlx::{Column, Row, TypeInfo, ValueRef as _};
use uuid::Uuid;

/// One column value in SQLite's representation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Val {
    Null,
    Int(i64),
    Text(String),
    /// A photo's bytes.
    Bytes(Vec<u8>),
}

impl Val {
    pub(crate) fn int(&self) -> Option<i64> {
        match self {
            Val::Int(n) => Some(*n),
            _ => None,
        }
    }

    pub(crate) fn text(&self) -> &str {
        match self {
            Val::Text(s) => s,
            _ => "",
        }
    }
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Null => f.write_str("null"),
            Val::Int(n) => write!(f, "{n}"),
            Val::Text(s) => f.write_str(s),
            Val::Bytes(bytes) => write!(
                f,
                "{} bytes, SHA-256 {}",
                bytes.len(),
                hex::encode(Sha256::digest(bytes))
            ),
        }
    }
}

pub(crate) type Rows = Vec<Vec<Val>>;

fn sqlite_val(value: ValueRef<'_>) -> Result<Val> {
    Ok(match value {
        ValueRef::Null => Val::Null,
        ValueRef::Integer(n) => Val::Int(n),
        ValueRef::Text(bytes) => Val::Text(
            std::str::from_utf8(bytes)
                .context("a text value that is not UTF-8")?
                .to_owned(),
        ),
        ValueRef::Real(x) => bail!("unexpected real value {x}"),
        ValueRef::Blob(bytes) => Val::Bytes(bytes.to_vec()),
    })
}

/// Calls `each` with every row `sql` answers on SQLite.
pub(crate) fn sqlite_each(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    mut each: impl FnMut(Vec<Val>) -> Result<()>,
) -> Result<()> {
    let mut stmt = conn
        .prepare_cached(sql)
        .with_context(|| format!("SQLite: {sql}"))?;
    let width = stmt.column_count();
    let mut rows = stmt.query(params)?;
    while let Some(row) = rows.next()? {
        let vals = (0..width)
            .map(|i| sqlite_val(row.get_ref(i)?))
            .collect::<Result<Vec<_>>>()?;
        each(vals)?;
    }
    Ok(())
}

pub(crate) fn sqlite_rows(conn: &Connection, sql: &str) -> Result<Rows> {
    let mut rows = Vec::new();
    sqlite_each(conn, sql, [], |row| {
        rows.push(row);
        Ok(())
    })?;
    Ok(rows)
}

fn pg_val(row: &PgRow, i: usize) -> Result<Val> {
    if row.try_get_raw(i)?.is_null() {
        return Ok(Val::Null);
    }
    let column = row.column(i);
    Ok(match column.type_info().name() {
        "INT8" => Val::Int(row.try_get::<i64, _>(i)?),
        "INT4" => Val::Int(row.try_get::<i32, _>(i)?.into()),
        "INT2" => Val::Int(row.try_get::<i16, _>(i)?.into()),
        "BOOL" => Val::Int(row.try_get::<bool, _>(i)?.into()),
        "TEXT" | "VARCHAR" | "BPCHAR" | "NAME" => Val::Text(row.try_get::<String, _>(i)?),
        "UUID" => Val::Text(row.try_get::<Uuid, _>(i)?.to_string()),
        "BYTEA" => Val::Bytes(row.try_get::<Vec<u8>, _>(i)?),
        "TIMESTAMPTZ" => Val::Int(row.try_get::<DateTime<Utc>, _>(i)?.timestamp_millis()),
        other => bail!(
            "unexpected PostgreSQL type {other} in column {}",
            column.name()
        ),
    })
}

pub(crate) fn pg_vals(row: &PgRow) -> Result<Vec<Val>> {
    (0..row.len()).map(|i| pg_val(row, i)).collect()
}

/// Calls `each` with every row `sql` answers on PostgreSQL, streamed.
pub(crate) async fn pg_each(
    conn: &mut PgConnection,
    sql: &str,
    mut each: impl FnMut(Vec<Val>) -> Result<()>,
) -> Result<()> {
    let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())).fetch(conn);
    while let Some(row) = rows
        .try_next()
        .await
        .with_context(|| format!("PostgreSQL: {sql}"))?
    {
        each(pg_vals(&row)?)?;
    }
    Ok(())
}

pub(crate) async fn pg_rows(conn: &mut PgConnection, sql: &str) -> Result<Rows> {
    let mut rows = Vec::new();
    pg_each(conn, sql, |row| {
        rows.push(row);
        Ok(())
    })
    .await?;
    Ok(rows)
}

/// A database of either backend, read inside one snapshot.
pub(crate) enum Db<'a> {
    Sqlite(&'a Connection),
    Pg(&'a mut PgConnection),
}

impl Db<'_> {
    pub(crate) async fn rows(&mut self, sql: &str) -> Result<Rows> {
        match self {
            Db::Sqlite(conn) => sqlite_rows(conn, sql),
            Db::Pg(conn) => pg_rows(conn, sql).await,
        }
    }

    pub(crate) async fn each(
        &mut self,
        sql: &str,
        each: impl FnMut(Vec<Val>) -> Result<()>,
    ) -> Result<()> {
        match self {
            Db::Sqlite(conn) => sqlite_each(conn, sql, [], each),
            Db::Pg(conn) => pg_each(conn, sql, each).await,
        }
    }

    /// The SQL text of a top-level member `field` of the JSON text in
    /// `column`: a string as text; a number as SQLite's integer but
    /// PostgreSQL's text, so cast it.
    pub(crate) fn json_text(&self, column: &str, field: &str) -> String {
        match self {
            Db::Sqlite(_) => format!("json_extract({column}, '$.{field}')"),
            Db::Pg(_) => format!("(({column})::jsonb ->> '{field}')"),
        }
    }

    /// The SQL text of a table with a row for each element of the JSON
    /// array in `json` (or in its top-level member `member`), the element in
    /// its column `value`: both backends name that column so.
    pub(crate) fn json_elements(&self, json: &str, member: Option<&str>) -> String {
        match (self, member) {
            (Db::Sqlite(_), None) => format!("json_each({json})"),
            (Db::Sqlite(_), Some(member)) => format!("json_each({json}, '$.{member}')"),
            (Db::Pg(_), None) => format!("jsonb_array_elements(({json})::jsonb)"),
            (Db::Pg(_), Some(member)) => {
                format!("jsonb_array_elements(({json})::jsonb -> '{member}')")
            }
        }
    }

    pub(crate) fn is_postgres(&self) -> bool {
        matches!(self, Db::Pg(_))
    }
}

/// An order-independent digest of a set of rows: the count, and the sum
/// (mod 2^256) of every row's SHA-256. Two tables with the same rows in any
/// order have the same digest; a changed byte anywhere changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct RowDigest {
    pub rows: u64,
    sum: [u64; 4],
}

impl RowDigest {
    pub(crate) fn add(&mut self, row: &[Val]) {
        let mut hash = Sha256::new();
        for val in row {
            match val {
                Val::Null => hash.update([0u8]),
                Val::Int(n) => {
                    hash.update([1u8]);
                    hash.update(n.to_be_bytes());
                }
                Val::Text(s) => {
                    hash.update([2u8]);
                    hash.update((s.len() as u64).to_be_bytes());
                    hash.update(s.as_bytes());
                }
                Val::Bytes(bytes) => {
                    hash.update([3u8]);
                    hash.update((bytes.len() as u64).to_be_bytes());
                    hash.update(bytes);
                }
            }
        }
        let bytes: [u8; 32] = hash.finalize().into();
        let mut carry = false;
        for (i, limb) in self.sum.iter_mut().enumerate().rev() {
            let mut word = [0u8; 8];
            word.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
            let (sum, over1) = limb.overflowing_add(u64::from_be_bytes(word));
            let (sum, over2) = sum.overflowing_add(u64::from(carry));
            *limb = sum;
            carry = over1 || over2;
        }
        self.rows += 1;
    }

    pub(crate) fn hex(&self) -> String {
        self.sum.iter().map(|limb| format!("{limb:016x}")).collect()
    }

    /// The first hex digits, enough to tell digests apart in a table.
    pub(crate) fn short(&self) -> String {
        self.hex()[..12].to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(n: i64, s: &str) -> Vec<Val> {
        vec![Val::Int(n), Val::Text(s.into()), Val::Null]
    }

    #[test]
    fn digests_ignore_order_and_see_every_byte() {
        let mut a = RowDigest::default();
        a.add(&row(1, "x"));
        a.add(&row(2, "y"));
        let mut b = RowDigest::default();
        b.add(&row(2, "y"));
        b.add(&row(1, "x"));
        assert_eq!(a, b);
        let mut c = RowDigest::default();
        c.add(&row(1, "x"));
        c.add(&row(2, "z"));
        assert_ne!(a, c);
        // Text "1" and integer 1 differ; so do a null and an empty text.
        let mut d = RowDigest::default();
        d.add(&[Val::Text("1".into())]);
        let mut e = RowDigest::default();
        e.add(&[Val::Int(1)]);
        assert_ne!(d, e);
        let mut f = RowDigest::default();
        f.add(&[Val::Null]);
        let mut g = RowDigest::default();
        g.add(&[Val::Text(String::new())]);
        assert_ne!(f, g);
    }
}
