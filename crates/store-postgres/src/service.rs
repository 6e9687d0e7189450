//! Service requests: a table's calls for staff or the bill.

use ordergate_domain::events::EventType;
use ordergate_domain::order::admission::KeyLookup;
use ordergate_domain::paging::Limit;
use ordergate_domain::service::{Call, ServiceKind, ServiceRequest, ServiceStatus};
use ordergate_domain::session::SessionStatus;
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::{Answer, Called, ServiceCall};
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgRow};
use uuid::Uuid;

use crate::codec::name;
use crate::error::PgError;
use crate::tx::Tx;
use crate::{events, idempotency, sessions, shops};

macro_rules! columns {
    () => {
        "request_id, shop_id, session_id, table_label, kind, status, created_at, acknowledged_at"
    };
}

fn from_row(row: PgRow) -> sqlx::Result<ServiceRequest> {
    Ok(ServiceRequest {
        request_id: row.try_get(0)?,
        shop_id: row.try_get(1)?,
        session_id: row.try_get(2)?,
        table_label: row.try_get(3)?,
        kind: name(&row, 4, ServiceKind::parse)?,
        status: name(&row, 5, ServiceStatus::parse)?,
        created_at: row.try_get(6)?,
        acknowledged_at: row.try_get(7)?,
    })
}

/// A guest's call (see `Store::request_service`) at a session of
/// `shop_id`, under the session's row lock: calls of one table take turns,
/// so a double tap opens one request.
pub(crate) async fn request(
    tx: &mut Tx,
    shop_id: Uuid,
    call: ServiceCall,
) -> Result<Answer, PgError> {
    if let Some(claim) = &call.claim {
        let record = idempotency::record(tx.conn(), claim, Some(shop_id), call.now).await?;
        match claim.judge(record, call.now) {
            KeyLookup::Absent => {}
            KeyLookup::Replay(response) => return Ok(Answer::Replayed(response)),
            KeyLookup::Mismatch => return Err(Rejection::IdempotencyKeyReused.into()),
        }
    }
    let session = sessions::lock(tx, shop_id, call.session_id)
        .await?
        .ok_or(Rejection::NotFound("session"))?;
    if session.status != SessionStatus::Active {
        return Err(Rejection::SessionClosed.into());
    }
    let open = sqlx::query(concat!(
        "select ",
        columns!(),
        " from service_requests
          where shop_id = $1 and session_id = $2 and kind = $3 and status = 'open'"
    ))
    .bind(shop_id)
    .bind(session.session_id)
    .bind(call.request.kind.as_str())
    .try_map(from_row)
    .fetch_optional(tx.conn())
    .await?;
    let called = match call.request.call(&session, open, call.now) {
        Call::AlreadyOpen(request) => Called {
            request,
            created: false,
        },
        Call::New(request) => {
            insert(tx.conn(), &request).await?;
            let event = EventType::ServiceRequested;
            let session_id = Some(request.session_id);
            events::append(tx, request.shop_id, event, session_id, &request, call.now).await?;
            Called {
                request,
                created: true,
            }
        }
    };
    let response = (call.render)(&called);
    if let Some(claim) = &call.claim {
        idempotency::complete(tx, claim, session.shop_id, &response, call.now).await?;
    }
    Ok(Answer::Fresh(response))
}

async fn insert(conn: &mut PgConnection, request: &ServiceRequest) -> Result<(), PgError> {
    sqlx::query(
        "insert into service_requests (shop_id, request_id, session_id, table_label, kind, status,
                                       created_at, acknowledged_at)
         values ($1, $2, $3, $4, $5, $6, $7, null)",
    )
    .bind(request.shop_id)
    .bind(request.request_id)
    .bind(request.session_id)
    .bind(&request.table_label)
    .bind(request.kind.as_str())
    .bind(request.status.as_str())
    .bind(request.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub(crate) async fn acknowledge(
    tx: &mut Tx,
    shop_id: Uuid,
    request_id: Uuid,
    now: Timestamp,
) -> Result<ServiceRequest, PgError> {
    let request = sqlx::query(concat!(
        "select ",
        columns!(),
        " from service_requests where shop_id = $1 and request_id = $2 for update"
    ))
    .bind(shop_id)
    .bind(request_id)
    .try_map(from_row)
    .fetch_optional(tx.conn())
    .await?
    .ok_or(Rejection::NotFound("service request"))?;
    let Some(acknowledged) = request.acknowledged(now) else {
        return Ok(request);
    };
    sqlx::query(
        "update service_requests set status = $3, acknowledged_at = $4
         where shop_id = $1 and request_id = $2",
    )
    .bind(acknowledged.shop_id)
    .bind(request_id)
    .bind(acknowledged.status.as_str())
    .bind(now)
    .execute(tx.conn())
    .await?;
    let event = EventType::ServiceAcknowledged;
    let session_id = Some(acknowledged.session_id);
    events::append(
        tx,
        acknowledged.shop_id,
        event,
        session_id,
        &acknowledged,
        now,
    )
    .await?;
    Ok(acknowledged)
}

/// A checkout answers the table's open requests (the bill came, staff were
/// there), each announced, before the session's close is.
pub(crate) async fn answer_open(
    tx: &mut Tx,
    shop_id: Uuid,
    session_id: Uuid,
    now: Timestamp,
) -> Result<(), PgError> {
    let open: Vec<Uuid> = sqlx::query_scalar(
        "select request_id from service_requests
         where shop_id = $1 and session_id = $2 and status = 'open'
         order by created_at, request_id",
    )
    .bind(shop_id)
    .bind(session_id)
    .fetch_all(tx.conn())
    .await?;
    for request_id in open {
        acknowledge(tx, shop_id, request_id, now).await?;
    }
    Ok(())
}

pub(crate) async fn list(
    conn: &mut PgConnection,
    shop_id: Uuid,
    status: Option<ServiceStatus>,
    limit: Limit,
) -> Result<Vec<ServiceRequest>, PgError> {
    shops::require(&mut *conn, shop_id).await?;
    Ok(sqlx::query(concat!(
        "select ",
        columns!(),
        " from service_requests
          where shop_id = $1 and ($2::text is null or status = $2)
          order by created_at, request_id limit $3"
    ))
    .bind(shop_id)
    .bind(status.map(ServiceStatus::as_str))
    .bind(i64::from(limit.get()))
    .try_map(from_row)
    .fetch_all(conn)
    .await?)
}
