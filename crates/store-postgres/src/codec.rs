//! How stored values that are not plain column types are decoded: enum
//! names, JSON text, and integers narrower than `bigint`.

use sqlx::Row;
use sqlx::postgres::PgRow;

fn decode_error(idx: usize, e: impl Into<sqlx::error::BoxDynError>) -> sqlx::Error {
    sqlx::Error::ColumnDecode {
        index: idx.to_string(),
        source: e.into(),
    }
}

/// Decodes a text column holding one of an enum's names.
pub(crate) fn name<T>(row: &PgRow, idx: usize, parse: fn(&str) -> Option<T>) -> sqlx::Result<T> {
    let text: &str = row.try_get(idx)?;
    parse(text).ok_or_else(|| decode_error(idx, format!("unexpected value {text:?}")))
}

/// Decodes a text column holding JSON.
pub(crate) fn json<T: serde::de::DeserializeOwned>(row: &PgRow, idx: usize) -> sqlx::Result<T> {
    let text: &str = row.try_get(idx)?;
    serde_json::from_str(text).map_err(|e| decode_error(idx, e))
}

/// Decodes a `bigint` column holding an HTTP status.
pub(crate) fn status(row: &PgRow, idx: usize) -> sqlx::Result<u16> {
    let status: i64 = row.try_get(idx)?;
    u16::try_from(status).map_err(|e| decode_error(idx, e))
}
