//! How domain values are written to and read from columns.

use ordergate_domain::Timestamp;
use rusqlite::Row;
use rusqlite::types::FromSqlError;
use uuid::Uuid;

pub(crate) fn millis(t: Timestamp) -> i64 {
    t.timestamp_millis()
}

/// `t` as a column keeps it: to the millisecond.
pub(crate) fn stored_time(t: Timestamp) -> Timestamp {
    Timestamp::from_timestamp_millis(millis(t)).unwrap_or(t)
}

fn decode_error(idx: usize, e: impl std::error::Error + Send + Sync + 'static) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
}

pub(crate) fn uuid(row: &Row, idx: usize) -> rusqlite::Result<Uuid> {
    let text: String = row.get(idx)?;
    text.parse().map_err(|e| decode_error(idx, e))
}

pub(crate) fn opt_uuid(row: &Row, idx: usize) -> rusqlite::Result<Option<Uuid>> {
    let text: Option<String> = row.get(idx)?;
    text.map(|t| t.parse().map_err(|e| decode_error(idx, e)))
        .transpose()
}

pub(crate) fn time(row: &Row, idx: usize) -> rusqlite::Result<Timestamp> {
    let ms: i64 = row.get(idx)?;
    Timestamp::from_timestamp_millis(ms)
        .ok_or_else(|| decode_error(idx, FromSqlError::OutOfRange(ms)))
}

pub(crate) fn opt_time(row: &Row, idx: usize) -> rusqlite::Result<Option<Timestamp>> {
    let ms: Option<i64> = row.get(idx)?;
    ms.map(|ms| {
        Timestamp::from_timestamp_millis(ms)
            .ok_or_else(|| decode_error(idx, FromSqlError::OutOfRange(ms)))
    })
    .transpose()
}

/// Decodes a text column holding one of an enum's names.
pub(crate) fn name<T>(row: &Row, idx: usize, parse: fn(&str) -> Option<T>) -> rusqlite::Result<T> {
    let text: String = row.get(idx)?;
    parse(&text).ok_or_else(|| {
        decode_error(
            idx,
            FromSqlError::Other(format!("unexpected value {text:?}").into()),
        )
    })
}

pub(crate) fn json<T: serde::de::DeserializeOwned>(row: &Row, idx: usize) -> rusqlite::Result<T> {
    let text: String = row.get(idx)?;
    serde_json::from_str(&text).map_err(|e| decode_error(idx, e))
}
