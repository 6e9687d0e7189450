use ordergate_domain::events::{EventType, SessionChanged};
use ordergate_domain::paging::Limit;
use ordergate_domain::session::PinOutcome;
use ordergate_domain::session::{Bill, PinFailures, PinPolicy, Session, SessionStatus};
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::GuestGrant;
use rusqlite::{Connection, OptionalExtension, Row, params};
use uuid::Uuid;

use crate::codec::{millis, name, opt_time, time, uuid};
use crate::error::SqliteError;
use crate::{events, shops};

const COLUMNS: &str = "session_id, shop_id, table_label, pin, status, opened_at, closed_at,
                       pin_failures, pin_locked_until";

fn from_row(row: &Row) -> rusqlite::Result<Session> {
    Ok(Session {
        session_id: uuid(row, 0)?,
        shop_id: uuid(row, 1)?,
        table_label: row.get(2)?,
        pin: row.get(3)?,
        status: name(row, 4, SessionStatus::parse)?,
        opened_at: time(row, 5)?,
        closed_at: opt_time(row, 6)?,
        pin_failures: row.get(7)?,
        pin_locked_until: opt_time(row, 8)?,
    })
}

pub(crate) fn open(conn: &Connection, session: &Session) -> Result<(), SqliteError> {
    shops::require(conn, session.shop_id)?;
    let occupied: bool = conn
        .prepare_cached(
            "select exists (select 1 from table_sessions
                            where shop_id = ?1 and table_label = ?2 and status = 'active')",
        )?
        .query_row(
            params![session.shop_id.to_string(), session.table_label],
            |row| row.get(0),
        )?;
    if occupied {
        return Err(Rejection::TableOccupied {
            table_label: session.table_label.clone(),
        }
        .into());
    }
    conn.prepare_cached(
        "insert into table_sessions (session_id, shop_id, table_label, pin, status, opened_at)
         values (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        session.session_id.to_string(),
        session.shop_id.to_string(),
        session.table_label,
        session.pin,
        session.status.as_str(),
        millis(session.opened_at)
    ])?;
    let opened = SessionChanged::from(session);
    events::append(
        conn,
        session.shop_id,
        EventType::SessionOpened,
        Some(session.session_id),
        &opened,
        session.opened_at,
    )?;
    Ok(())
}

pub(crate) fn list(
    conn: &Connection,
    shop_id: Uuid,
    status: Option<SessionStatus>,
    limit: Limit,
) -> Result<Vec<Session>, SqliteError> {
    shops::require(conn, shop_id)?;
    let mut stmt = conn.prepare_cached(&format!(
        "select {COLUMNS} from table_sessions
         where shop_id = ?1 and (?2 is null or status = ?2)
         order by opened_at desc, rowid desc limit ?3"
    ))?;
    let sessions = stmt
        .query_map(
            params![
                shop_id.to_string(),
                status.map(SessionStatus::as_str),
                limit.get()
            ],
            from_row,
        )?
        .collect::<Result<_, _>>()?;
    Ok(sessions)
}

pub(crate) fn find(conn: &Connection, session_id: Uuid) -> Result<Option<Session>, SqliteError> {
    let mut stmt = conn.prepare_cached(&format!(
        "select {COLUMNS} from table_sessions where session_id = ?1"
    ))?;
    Ok(stmt
        .query_row([session_id.to_string()], from_row)
        .optional()?)
}

fn require(conn: &Connection, session_id: Uuid) -> Result<Session, SqliteError> {
    find(conn, session_id)?.ok_or_else(|| Rejection::NotFound("session").into())
}

pub(crate) fn verify_pin(
    conn: &Connection,
    session_id: Uuid,
    given: Option<&str>,
    policy: PinPolicy,
    now: Timestamp,
) -> Result<PinOutcome, SqliteError> {
    let session = require(conn, session_id)?;
    judge_pin(conn, &session, given, policy, now)
}

/// Judges a PIN attempt on a loaded session and records its effect.
pub(crate) fn judge_pin(
    conn: &Connection,
    session: &Session,
    given: Option<&str>,
    policy: PinPolicy,
    now: Timestamp,
) -> Result<PinOutcome, SqliteError> {
    let judged = session.judge_pin(given, policy, now);
    if let Some(count) = judged.record {
        record_failures(conn, session.session_id, count)?;
    }
    Ok(judged.outcome)
}

fn record_failures(
    conn: &Connection,
    session_id: Uuid,
    count: PinFailures,
) -> Result<(), SqliteError> {
    conn.prepare_cached(
        "update table_sessions set pin_failures = ?2, pin_locked_until = ?3
         where session_id = ?1",
    )?
    .execute(params![
        session_id.to_string(),
        count.failures,
        count.locked_until.map(millis)
    ])?;
    Ok(())
}

pub(crate) fn unlock_pin(conn: &Connection, session_id: Uuid) -> Result<Session, SqliteError> {
    let session = require(conn, session_id)?;
    record_failures(conn, session_id, PinFailures::CLEAR)?;
    Ok(session.with_failures(PinFailures::CLEAR))
}

/// Judges the PIN and, when it is accepted on an active session, records
/// the guest token in the same transaction.
pub(crate) fn grant_guest_access(
    conn: &Connection,
    grant: &GuestGrant,
) -> Result<PinOutcome, SqliteError> {
    let session = require(conn, grant.session_id)?;
    let outcome = judge_pin(
        conn,
        &session,
        grant.pin.as_deref(),
        grant.policy,
        grant.now,
    )?;
    if let PinOutcome::Accepted(session) = &outcome
        && session.status == SessionStatus::Active
    {
        conn.prepare_cached(
            "insert into guest_tokens (token_digest, shop_id, session_id, created_at, expires_at)
             values (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![
            grant.token_digest,
            session.shop_id.to_string(),
            session.session_id.to_string(),
            millis(grant.now),
            millis(grant.expires_at)
        ])?;
    }
    Ok(outcome)
}

pub(crate) fn guest_token_session(
    conn: &Connection,
    session_id: Uuid,
    token_digest: &str,
    now: Timestamp,
) -> Result<Option<Session>, SqliteError> {
    let mut stmt = conn.prepare_cached(&format!(
        "select {COLUMNS} from table_sessions
         where session_id = ?1 and status = 'active'
           and exists (select 1 from guest_tokens
                       where session_id = ?1 and token_digest = ?2 and expires_at > ?3)"
    ))?;
    Ok(stmt
        .query_row(
            params![session_id.to_string(), token_digest, millis(now)],
            from_row,
        )
        .optional()?)
}

pub(crate) fn purge_expired_tokens(conn: &Connection, now: Timestamp) -> Result<u64, SqliteError> {
    let purged = conn
        .prepare_cached("delete from guest_tokens where expires_at <= ?1")?
        .execute([millis(now)])?;
    Ok(purged as u64)
}

pub(crate) fn checkout(
    conn: &Connection,
    session_id: Uuid,
    now: Timestamp,
) -> Result<Bill, SqliteError> {
    let session = require(conn, session_id)?;
    let closed_at = match session.closed_at {
        Some(closed_at) => closed_at,
        None => {
            conn.prepare_cached(
                "update table_sessions set status = 'closed', closed_at = ?2 where session_id = ?1",
            )?
            .execute(params![session_id.to_string(), millis(now)])?;
            conn.prepare_cached("delete from guest_tokens where session_id = ?1")?
                .execute([session_id.to_string()])?;
            crate::service::answer_open(conn, session_id, now)?;
            let closed = SessionChanged::from(&Session {
                status: SessionStatus::Closed,
                closed_at: Some(now),
                ..session.clone()
            });
            events::append(
                conn,
                session.shop_id,
                EventType::SessionClosed,
                Some(session_id),
                &closed,
                now,
            )?;
            now
        }
    };
    let orders = crate::orders::of_session(conn, session_id, false, None)?;
    Ok(Bill::new(
        session_id,
        session.table_label,
        closed_at,
        orders,
    ))
}

pub(crate) fn shop_of(conn: &Connection, session_id: Uuid) -> Result<Uuid, SqliteError> {
    Ok(require(conn, session_id)?.shop_id)
}
