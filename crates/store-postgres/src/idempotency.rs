//! Idempotency records: claimed, looked up and completed inside the
//! transaction of the write they guard.

use std::time::Duration;

use ordergate_domain::Timestamp;
use ordergate_domain::idempotency::Fingerprint;
use ordergate_store::{Claim, KeyRecord, StoredResponse};
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgRow};
use uuid::Uuid;

use crate::codec::status;
use crate::error::PgError;
use crate::tx::{Tx, millis};

/// Takes the claim's key for the rest of the transaction: a request with
/// the same scope and key, on any node, waits here until this transaction
/// ends, then finds its record. Bounded by the transaction's
/// `lock_timeout`, which the caller sets first; once the key is taken, the
/// rest of the transaction waits at most `then_wait` for any lock (set in
/// the same statement: the subquery, volatile, runs first). The hashed
/// text is the one earlier versions built in SQL (scope, newline, key), so
/// nodes of either version take the same lock during a rolling upgrade.
pub(crate) async fn lock(tx: &mut Tx, claim: &Claim, then_wait: Duration) -> Result<(), PgError> {
    sqlx::query(
        "select set_config('lock_timeout', $2, true)
         from (select pg_advisory_xact_lock(hashtextextended($1, 0))) as taken",
    )
    .bind(claim.scoped_key())
    .bind(millis(then_wait))
    .execute(tx.conn())
    .await?;
    // The key's lock is the coordinator's; the rows are the workers'.
    if tx.distributed() {
        tx.lock_timeout(then_wait).await?;
    }
    Ok(())
}

/// Takes each of the scoped keys (as [`Claim::scoped_key`] writes them)
/// that nobody holds, without waiting: whether each was taken, in their
/// order. The locks are the ones [`lock`] waits for.
pub(crate) async fn try_lock_all(
    tx: &mut Tx,
    scoped_keys: &[String],
) -> Result<Vec<bool>, PgError> {
    if scoped_keys.is_empty() {
        return Ok(Vec::new());
    }
    Ok(sqlx::query_scalar(
        "select pg_try_advisory_xact_lock(hashtextextended(k, 0))
         from unnest($1::text[]) with ordinality as t(k, n) order by n",
    )
    .bind(scoped_keys)
    .fetch_all(tx.conn())
    .await?)
}

/// A key's record columns, decoded by [`record_at`].
macro_rules! record_columns {
    () => {
        "fingerprint, status, body, location, expires_at"
    };
}
pub(crate) use record_columns;

/// How many [`record_columns!`] there are.
pub(crate) const RECORD_COLUMN_COUNT: usize = 5;

/// The [`record_columns!`] of `row` from its column `first` on.
pub(crate) fn record_at(row: &PgRow, first: usize) -> sqlx::Result<KeyRecord> {
    Ok(KeyRecord {
        fingerprint: Fingerprint::stored(row.try_get(first)?),
        response: StoredResponse {
            status: status(row, first + 1)?,
            body: row.try_get(first + 2)?,
            location: row.try_get(first + 3)?,
        },
        expires_at: row.try_get(first + 4)?,
    })
}

/// The key's live record, if it has one. A record is kept under the shop
/// of its write: `shop_id` names it when the write's shop is known before
/// it runs (every write but a new shop's, whose id each attempt draws anew).
pub(crate) async fn record(
    conn: &mut PgConnection,
    claim: &Claim,
    shop_id: Option<Uuid>,
    now: Timestamp,
) -> Result<Option<KeyRecord>, PgError> {
    let query = match shop_id {
        Some(_) => sqlx::query(concat!(
            "select ",
            record_columns!(),
            " from idempotency_keys
             where scope = $1 and idempotency_key = $2 and expires_at > $3 and shop_id = $4"
        )),
        None => sqlx::query(concat!(
            "select ",
            record_columns!(),
            " from idempotency_keys
             where scope = $1 and idempotency_key = $2 and expires_at > $3"
        )),
    };
    let query = query
        .bind(claim.scope.as_str())
        .bind(claim.key.as_str())
        .bind(now);
    let query = match shop_id {
        Some(shop_id) => query.bind(shop_id),
        None => query,
    };
    Ok(query
        .try_map(|row: PgRow| record_at(&row, 0))
        .fetch_optional(conn)
        .await?)
}

/// The insert of a key's record, in its columns' order, as far as its rows
/// ([`record_kept!`] ends it).
macro_rules! insert_record {
    () => {
        "insert into idempotency_keys (scope, idempotency_key, shop_id, fingerprint, status,
                                       body, location, created_at, expires_at) "
    };
}
pub(crate) use insert_record;

/// The end of [`insert_record!`]: an expired record of the same key is
/// replaced (the key is new again).
macro_rules! record_kept {
    () => {
        " on conflict (shop_id, scope, idempotency_key) do update set
             fingerprint = excluded.fingerprint,
             status = excluded.status, body = excluded.body, location = excluded.location,
             created_at = excluded.created_at, expires_at = excluded.expires_at"
    };
}
pub(crate) use record_kept;

/// Stores the response of a completed write (see [`record_kept!`]).
pub(crate) async fn complete(
    tx: &mut Tx,
    claim: &Claim,
    shop_id: Uuid,
    response: &StoredResponse,
    now: Timestamp,
) -> Result<(), PgError> {
    sqlx::query(concat!(
        insert_record!(),
        "values ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        record_kept!()
    ))
    .bind(claim.scope.as_str())
    .bind(claim.key.as_str())
    .bind(shop_id)
    .bind(claim.fingerprint.as_str())
    .bind(i64::from(response.status))
    .bind(&response.body)
    .bind(&response.location)
    .bind(now)
    .bind(claim.expires_at)
    .execute(tx.conn())
    .await?;
    Ok(())
}

pub(crate) async fn purge(conn: &mut PgConnection, now: Timestamp) -> Result<u64, PgError> {
    Ok(
        sqlx::query("delete from idempotency_keys where expires_at <= $1")
            .bind(now)
            .execute(conn)
            .await?
            .rows_affected(),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_column_count_counts_the_columns() {
        assert_eq!(
            record_columns!().split(',').count(),
            super::RECORD_COLUMN_COUNT
        );
    }
}
