//! Table sessions: opening (one active session per table), PIN attempts,
//! guest tokens, unlocking, checkout.

use ordergate_domain::events::{EventType, SessionChanged};
use ordergate_domain::paging::Limit;
use ordergate_domain::session::PinOutcome;
use ordergate_domain::session::{Bill, PinFailures, PinPolicy, Session, SessionStatus};
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::GuestGrant;
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgRow};
use uuid::Uuid;

use crate::codec::name;
use crate::error::PgError;
use crate::tx::Tx;
use crate::{events, routes, shops};

/// Session columns, decoded by [`from_row`].
macro_rules! columns {
    () => {
        "session_id, shop_id, table_label, pin, status, opened_at, closed_at, pin_failures,
         pin_locked_until"
    };
}
pub(crate) use columns;

/// How many [`columns!`] there are.
pub(crate) const COLUMN_COUNT: usize = 9;

/// The first [`columns!`] of `row`.
pub(crate) fn from_row(row: PgRow) -> sqlx::Result<Session> {
    Ok(Session {
        session_id: row.try_get(0)?,
        shop_id: row.try_get(1)?,
        table_label: row.try_get(2)?,
        pin: row.try_get(3)?,
        status: name(&row, 4, SessionStatus::parse)?,
        opened_at: row.try_get(5)?,
        closed_at: row.try_get(6)?,
        pin_failures: row.try_get(7)?,
        pin_locked_until: row.try_get(8)?,
    })
}

pub(crate) async fn open(tx: &mut Tx, session: &Session) -> Result<(), PgError> {
    shops::require(tx.conn(), session.shop_id).await?;
    let occupied = || Rejection::TableOccupied {
        table_label: session.table_label.clone(),
    };
    // Waits for a checkout of the table in progress, and sees its outcome.
    let active = sqlx::query(
        "select 1 from table_sessions
         where shop_id = $1 and table_label = $2 and status = 'active' for update",
    )
    .bind(session.shop_id)
    .bind(&session.table_label)
    .fetch_optional(tx.conn())
    .await?;
    if active.is_some() {
        return Err(occupied().into());
    }
    // Two opens of a free table both get here; the unique index of active
    // sessions lets one insert and makes the other wait for it, then insert
    // nothing. (Citus does not say which constraint a worker's row broke,
    // so the conflict is named here rather than read from an error.)
    let inserted = sqlx::query(
        "insert into table_sessions (session_id, shop_id, table_label, pin, status, opened_at)
         values ($1, $2, $3, $4, $5, $6)
         on conflict (shop_id, table_label) where status = 'active' do nothing",
    )
    .bind(session.session_id)
    .bind(session.shop_id)
    .bind(&session.table_label)
    .bind(&session.pin)
    .bind(session.status.as_str())
    .bind(session.opened_at)
    .execute(tx.conn())
    .await?;
    if inserted.rows_affected() == 0 {
        return Err(occupied().into());
    }
    routes::insert(tx, session.session_id, session.shop_id).await?;
    let opened = SessionChanged::from(session);
    events::append(
        tx,
        session.shop_id,
        EventType::SessionOpened,
        Some(session.session_id),
        &opened,
        session.opened_at,
    )
    .await?;
    Ok(())
}

pub(crate) async fn list(
    conn: &mut PgConnection,
    shop_id: Uuid,
    status: Option<SessionStatus>,
    limit: Limit,
) -> Result<Vec<Session>, PgError> {
    shops::require(conn, shop_id).await?;
    Ok(sqlx::query(concat!(
        "select ",
        columns!(),
        " from table_sessions
         where shop_id = $1 and ($2::text is null or status = $2)
         order by opened_at desc, seq desc limit $3"
    ))
    .bind(shop_id)
    .bind(status.map(SessionStatus::as_str))
    .bind(i64::from(limit.get()))
    .try_map(from_row)
    .fetch_all(conn)
    .await?)
}

pub(crate) async fn find(
    conn: &mut PgConnection,
    shop_id: Uuid,
    session_id: Uuid,
) -> Result<Option<Session>, PgError> {
    Ok(sqlx::query(concat!(
        "select ",
        columns!(),
        " from table_sessions where shop_id = $1 and session_id = $2"
    ))
    .bind(shop_id)
    .bind(session_id)
    .try_map(from_row)
    .fetch_optional(conn)
    .await?)
}

/// The session with its row locked until the transaction ends: PIN
/// attempts, orders and checkout of one table take turns. The wait is
/// bounded by the transaction's `lock_timeout`, if it set one.
pub(crate) async fn lock(
    tx: &mut Tx,
    shop_id: Uuid,
    session_id: Uuid,
) -> Result<Option<Session>, PgError> {
    Ok(sqlx::query(concat!(
        "select ",
        columns!(),
        " from table_sessions where shop_id = $1 and session_id = $2 for update"
    ))
    .bind(shop_id)
    .bind(session_id)
    .try_map(from_row)
    .fetch_optional(tx.conn())
    .await?)
}

async fn require_locked(tx: &mut Tx, shop_id: Uuid, session_id: Uuid) -> Result<Session, PgError> {
    lock(tx, shop_id, session_id)
        .await?
        .ok_or_else(|| Rejection::NotFound("session").into())
}

pub(crate) async fn verify_pin(
    tx: &mut Tx,
    shop_id: Uuid,
    session_id: Uuid,
    given: Option<&str>,
    policy: PinPolicy,
    now: Timestamp,
) -> Result<PinOutcome, PgError> {
    let session = require_locked(tx, shop_id, session_id).await?;
    judge_pin(tx, &session, given, policy, now).await
}

/// Judges a PIN attempt on a session locked by this transaction and
/// records its effect.
pub(crate) async fn judge_pin(
    tx: &mut Tx,
    session: &Session,
    given: Option<&str>,
    policy: PinPolicy,
    now: Timestamp,
) -> Result<PinOutcome, PgError> {
    let judged = session.judge_pin(given, policy, now);
    if let Some(count) = judged.record {
        record_failures(tx, session, count).await?;
    }
    Ok(judged.outcome)
}

pub(crate) async fn unlock_pin(
    tx: &mut Tx,
    shop_id: Uuid,
    session_id: Uuid,
) -> Result<Session, PgError> {
    let session = require_locked(tx, shop_id, session_id).await?;
    record_failures(tx, &session, PinFailures::CLEAR).await?;
    Ok(session.with_failures(PinFailures::CLEAR))
}

/// Judges the PIN and, when it is accepted on an active session, records
/// the guest token in the same transaction.
pub(crate) async fn grant_guest_access(
    tx: &mut Tx,
    shop_id: Uuid,
    grant: &GuestGrant,
) -> Result<PinOutcome, PgError> {
    let session = require_locked(tx, shop_id, grant.session_id).await?;
    let outcome = judge_pin(tx, &session, grant.pin.as_deref(), grant.policy, grant.now).await?;
    if let PinOutcome::Accepted(session) = &outcome
        && session.status == SessionStatus::Active
    {
        sqlx::query(
            "insert into guest_tokens (token_digest, shop_id, session_id, created_at, expires_at)
             values ($1, $2, $3, $4, $5)",
        )
        .bind(&grant.token_digest)
        .bind(session.shop_id)
        .bind(session.session_id)
        .bind(grant.now)
        .bind(grant.expires_at)
        .execute(tx.conn())
        .await?;
    }
    Ok(outcome)
}

/// The session, when it is active and `token_digest` is one of its live
/// guest tokens.
pub(crate) async fn guest_token_session(
    conn: &mut PgConnection,
    shop_id: Uuid,
    session_id: Uuid,
    token_digest: &str,
    now: Timestamp,
) -> Result<Option<Session>, PgError> {
    Ok(sqlx::query(concat!(
        "select ",
        columns!(),
        " from table_sessions
         where shop_id = $1 and session_id = $2 and status = 'active'
           and exists (select from guest_tokens
                       where shop_id = $1 and session_id = $2 and token_digest = $3
                         and expires_at > $4)"
    ))
    .bind(shop_id)
    .bind(session_id)
    .bind(token_digest)
    .bind(now)
    .try_map(from_row)
    .fetch_optional(conn)
    .await?)
}

pub(crate) async fn purge_expired_tokens(
    conn: &mut PgConnection,
    now: Timestamp,
) -> Result<u64, PgError> {
    Ok(
        sqlx::query("delete from guest_tokens where expires_at <= $1")
            .bind(now)
            .execute(conn)
            .await?
            .rows_affected(),
    )
}

async fn record_failures(
    tx: &mut Tx,
    session: &Session,
    count: PinFailures,
) -> Result<(), PgError> {
    sqlx::query(
        "update table_sessions set pin_failures = $3, pin_locked_until = $4
         where shop_id = $1 and session_id = $2",
    )
    .bind(session.shop_id)
    .bind(session.session_id)
    .bind(count.failures)
    .bind(count.locked_until)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// Closes the session once and returns its bill.
pub(crate) async fn checkout(
    tx: &mut Tx,
    shop_id: Uuid,
    session_id: Uuid,
    now: Timestamp,
) -> Result<Bill, PgError> {
    let session = require_locked(tx, shop_id, session_id).await?;
    let closed_at = match session.closed_at {
        Some(closed_at) => closed_at,
        None => {
            sqlx::query(
                "update table_sessions set status = 'closed', closed_at = $3
                 where shop_id = $1 and session_id = $2",
            )
            .bind(shop_id)
            .bind(session_id)
            .bind(now)
            .execute(tx.conn())
            .await?;
            sqlx::query("delete from guest_tokens where shop_id = $1 and session_id = $2")
                .bind(shop_id)
                .bind(session_id)
                .execute(tx.conn())
                .await?;
            crate::service::answer_open(tx, shop_id, session_id, now).await?;
            let closed = SessionChanged::from(&Session {
                status: SessionStatus::Closed,
                closed_at: Some(now),
                ..session.clone()
            });
            events::append(
                tx,
                session.shop_id,
                EventType::SessionClosed,
                Some(session_id),
                &closed,
                now,
            )
            .await?;
            now
        }
    };
    let orders = crate::orders::of_session(tx.conn(), shop_id, session_id, false, None).await?;
    Ok(Bill::new(
        session_id,
        session.table_label,
        closed_at,
        orders,
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_column_count_counts_the_columns() {
        assert_eq!(columns!().split(',').count(), super::COLUMN_COUNT);
    }
}
