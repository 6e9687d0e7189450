//! Idempotency records: looked up and completed inside the transaction of
//! the write they guard.

use ordergate_domain::Timestamp;
use ordergate_domain::idempotency::Fingerprint;
use ordergate_store::{Claim, KeyRecord, StoredResponse};
use rusqlite::{Connection, OptionalExtension, params};
use uuid::Uuid;

use crate::codec::{millis, time};
use crate::error::SqliteError;

/// The key's live record, if it has one.
pub(crate) fn record(
    conn: &Connection,
    claim: &Claim,
    now: Timestamp,
) -> Result<Option<KeyRecord>, SqliteError> {
    let record = conn
        .prepare_cached(
            "select fingerprint, status, body, location, expires_at from idempotency_keys
             where scope = ?1 and idempotency_key = ?2 and expires_at > ?3",
        )?
        .query_row(
            params![claim.scope.as_str(), claim.key.as_str(), millis(now)],
            |row| {
                Ok(KeyRecord {
                    fingerprint: Fingerprint::stored(row.get(0)?),
                    response: StoredResponse {
                        status: row.get(1)?,
                        body: row.get(2)?,
                        location: row.get(3)?,
                    },
                    expires_at: time(row, 4)?,
                })
            },
        )
        .optional()?;
    Ok(record)
}

/// Stores the response of a completed write; an expired record of the same
/// key is replaced (the key is new again).
pub(crate) fn complete(
    conn: &Connection,
    claim: &Claim,
    shop_id: Option<Uuid>,
    response: &StoredResponse,
    now: Timestamp,
) -> Result<(), SqliteError> {
    conn.prepare_cached(
        "insert into idempotency_keys (scope, idempotency_key, shop_id, fingerprint, status,
                                       body, location, created_at, expires_at)
         values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
         on conflict (scope, idempotency_key) do update set
             shop_id = excluded.shop_id, fingerprint = excluded.fingerprint,
             status = excluded.status, body = excluded.body, location = excluded.location,
             created_at = excluded.created_at, expires_at = excluded.expires_at",
    )?
    .execute(params![
        claim.scope.as_str(),
        claim.key.as_str(),
        shop_id.map(|id| id.to_string()),
        claim.fingerprint.as_str(),
        response.status,
        response.body,
        response.location,
        millis(now),
        millis(claim.expires_at)
    ])?;
    Ok(())
}

pub(crate) fn purge(conn: &Connection, now: Timestamp) -> Result<u64, SqliteError> {
    let purged = conn
        .prepare_cached("delete from idempotency_keys where expires_at <= ?1")?
        .execute([millis(now)])?;
    Ok(purged as u64)
}
