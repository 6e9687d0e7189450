//! Service requests: a table's calls for staff or the bill.

use ordergate_domain::events::EventType;
use ordergate_domain::order::admission::KeyLookup;
use ordergate_domain::paging::Limit;
use ordergate_domain::service::{Call, ServiceKind, ServiceRequest, ServiceStatus};
use ordergate_domain::session::SessionStatus;
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::{Answer, Called, ServiceCall};
use rusqlite::{Connection, OptionalExtension, Row, params};
use uuid::Uuid;

use crate::codec::{millis, name, opt_time, time, uuid};
use crate::error::SqliteError;
use crate::{events, idempotency, sessions, shops};

const COLUMNS: &str = "request_id, shop_id, session_id, table_label, kind, status, created_at, \
                       acknowledged_at";

fn from_row(row: &Row) -> rusqlite::Result<ServiceRequest> {
    Ok(ServiceRequest {
        request_id: uuid(row, 0)?,
        shop_id: uuid(row, 1)?,
        session_id: uuid(row, 2)?,
        table_label: row.get(3)?,
        kind: name(row, 4, ServiceKind::parse)?,
        status: name(row, 5, ServiceStatus::parse)?,
        created_at: time(row, 6)?,
        acknowledged_at: opt_time(row, 7)?,
    })
}

/// A guest's call (see `Store::request_service`), on the writer: the
/// session's lock.
pub(crate) fn request(conn: &Connection, call: ServiceCall) -> Result<Answer, SqliteError> {
    if let Some(claim) = &call.claim {
        match claim.judge(idempotency::record(conn, claim, call.now)?, call.now) {
            KeyLookup::Absent => {}
            KeyLookup::Replay(response) => return Ok(Answer::Replayed(response)),
            KeyLookup::Mismatch => return Err(Rejection::IdempotencyKeyReused.into()),
        }
    }
    let session = sessions::find(conn, call.session_id)?.ok_or(Rejection::NotFound("session"))?;
    if session.status != SessionStatus::Active {
        return Err(Rejection::SessionClosed.into());
    }
    let open = conn
        .prepare_cached(&format!(
            "select {COLUMNS} from service_requests
             where session_id = ?1 and kind = ?2 and status = 'open'"
        ))?
        .query_row(
            params![session.session_id.to_string(), call.request.kind.as_str()],
            from_row,
        )
        .optional()?;
    let called = match call.request.call(&session, open, call.now) {
        Call::AlreadyOpen(request) => Called {
            request,
            created: false,
        },
        Call::New(request) => {
            insert(conn, &request)?;
            let event = EventType::ServiceRequested;
            events::append(
                conn,
                request.shop_id,
                event,
                Some(request.session_id),
                &request,
                call.now,
            )?;
            Called {
                request,
                created: true,
            }
        }
    };
    let response = (call.render)(&called);
    if let Some(claim) = &call.claim {
        idempotency::complete(conn, claim, Some(session.shop_id), &response, call.now)?;
    }
    Ok(Answer::Fresh(response))
}

fn insert(conn: &Connection, request: &ServiceRequest) -> Result<(), SqliteError> {
    conn.prepare_cached(
        "insert into service_requests (shop_id, request_id, session_id, table_label, kind, status,
                                       created_at, acknowledged_at)
         values (?1, ?2, ?3, ?4, ?5, ?6, ?7, null)",
    )?
    .execute(params![
        request.shop_id.to_string(),
        request.request_id.to_string(),
        request.session_id.to_string(),
        request.table_label,
        request.kind.as_str(),
        request.status.as_str(),
        millis(request.created_at)
    ])?;
    Ok(())
}

pub(crate) fn acknowledge(
    conn: &Connection,
    request_id: Uuid,
    now: Timestamp,
) -> Result<ServiceRequest, SqliteError> {
    let request = conn
        .prepare_cached(&format!(
            "select {COLUMNS} from service_requests where request_id = ?1"
        ))?
        .query_row([request_id.to_string()], from_row)
        .optional()?
        .ok_or(Rejection::NotFound("service request"))?;
    let Some(acknowledged) = request.acknowledged(now) else {
        return Ok(request);
    };
    conn.prepare_cached(
        "update service_requests set status = ?3, acknowledged_at = ?4
         where shop_id = ?1 and request_id = ?2",
    )?
    .execute(params![
        acknowledged.shop_id.to_string(),
        request_id.to_string(),
        acknowledged.status.as_str(),
        millis(now)
    ])?;
    events::append(
        conn,
        acknowledged.shop_id,
        EventType::ServiceAcknowledged,
        Some(acknowledged.session_id),
        &acknowledged,
        now,
    )?;
    Ok(acknowledged)
}

/// A checkout answers the table's open requests (the bill came, staff were
/// there), each announced, before the session's close is.
pub(crate) fn answer_open(
    conn: &Connection,
    session_id: Uuid,
    now: Timestamp,
) -> Result<(), SqliteError> {
    let open: Vec<Uuid> = conn
        .prepare_cached(
            "select request_id from service_requests
             where session_id = ?1 and status = 'open' order by created_at, request_id",
        )?
        .query_map([session_id.to_string()], |row| uuid(row, 0))?
        .collect::<Result<_, _>>()?;
    for request_id in open {
        acknowledge(conn, request_id, now)?;
    }
    Ok(())
}

pub(crate) fn list(
    conn: &Connection,
    shop_id: Uuid,
    status: Option<ServiceStatus>,
    limit: Limit,
) -> Result<Vec<ServiceRequest>, SqliteError> {
    shops::require(conn, shop_id)?;
    let mut stmt = conn.prepare_cached(&format!(
        "select {COLUMNS} from service_requests
         where shop_id = ?1 and (?2 is null or status = ?2)
         order by created_at, request_id limit ?3"
    ))?;
    let requests = stmt
        .query_map(
            params![
                shop_id.to_string(),
                status.map(ServiceStatus::as_str),
                limit.get()
            ],
            from_row,
        )?
        .collect::<Result<_, _>>()?;
    Ok(requests)
}
