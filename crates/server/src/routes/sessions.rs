//! Table sessions: opened by staff, used by guests with the PIN, closed at checkout.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use chrono::{DateTime, Utc};
use ordergate_domain::Rejection;
use ordergate_domain::paging::Limit;
use ordergate_domain::session::{
    Bill, GUEST_TOKEN_LIFETIME, NewSession, SeatAt, Session, SessionStatus, generate_guest_token,
    generate_pin, guest_token_digest,
};
use ordergate_domain::staff::Duty;
use ordergate_store::{GuestGrant, StaffWrite};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::accounts::{Allowed, duty};
use crate::app::AppState;
use crate::auth::{PIN_HEADER, Principal, judge_pin_with, session_access};
use crate::error::{ApiError, Problem};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::idempotency::{Sent, StaffOperation, header_text, staff_claim, staff_write};
use crate::limits::ClientAddress;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(open_session, list_sessions))
        .routes(routes!(get_session))
        .routes(routes!(grant_access))
        .routes(routes!(unlock))
        .routes(routes!(checkout))
}

/// A session as its reader may see it: staff see the PIN and the guest URL
/// (which contains the PIN); guests see neither.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct SessionView {
    session_id: Uuid,
    shop_id: Uuid,
    table_label: String,
    /// Staff only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pin: Option<String>,
    status: SessionStatus,
    opened_at: DateTime<Utc>,
    closed_at: Option<DateTime<Utc>>,
    /// Until when wrong PINs have locked the table (`null`: not locked).
    /// Staff only; `POST …/unlock` clears it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<DateTime<Utc>>)]
    pin_locked_until: Option<Option<DateTime<Utc>>>,
    /// `<public-url>/t/<sessionId>#pin=<pin>`, for the table's QR code. Staff only.
    #[serde(skip_serializing_if = "Option::is_none")]
    guest_url: Option<String>,
}

impl SessionView {
    fn new(session: Session, principal: Principal, state: &AppState) -> SessionView {
        let staff = principal == Principal::Staff;
        let now = state.now();
        let public_url = state.public_url();
        SessionView {
            guest_url: staff
                .then(|| format!("{public_url}/t/{}#pin={}", session.session_id, session.pin)),
            pin_locked_until: staff.then(|| session.locked_until(now)),
            pin: staff.then_some(session.pin),
            session_id: session.session_id,
            shop_id: session.shop_id,
            table_label: session.table_label,
            status: session.status,
            opened_at: session.opened_at,
            closed_at: session.closed_at,
        }
    }
}

#[derive(Serialize, ToSchema)]
struct SessionList {
    sessions: Vec<SessionView>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Only sessions in this state.
    #[param(value_type = Option<SessionStatus>)]
    status: Option<String>,
    /// 1–500, default 100.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    limit: Option<String>,
}

/// Open a table: a new session with a fresh PIN.
#[utoipa::path(post, path = "/api/v1/shops/{shopId}/sessions", tag = "sessions",
    security(("staffToken" = [])),
    params(
        ("shopId" = Uuid, Path),
        ("Idempotency-Key" = Option<String>, Header, description = "UUID v4; retries replay the first answer"),
    ),
    request_body = NewSession,
    responses(
        (status = 201, description = "Opened; show guestUrl as the table's QR code", body = SessionView,
         headers(("Location" = String, description = "The session's URL"))),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 409, description = "The table already has an active session (TABLE_OCCUPIED)",
         body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Neither or both of tableLabel and tableId, or a tableId \
                                      that is no table of the shop (VALIDATION_FAILED)",
         body = Problem, content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn open_session(
    State(state): State<AppState>,
    _: Allowed<duty::Sessions>,
    ApiPath(shop_id): ApiPath<Uuid>,
    headers: HeaderMap,
    ApiJson(new_session): ApiJson<NewSession>,
) -> Result<Sent, ApiError> {
    let now = state.now();
    let expires_at = state.settings().idempotency_expiry(now);
    let claim = staff_claim(
        &headers,
        StaffOperation::OpenSession { shop_id },
        &new_session,
        expires_at,
    )?;
    let table_label = match new_session.validate()? {
        SeatAt::Label(label) => label,
        SeatAt::Table(table_id) => table_name(&state, shop_id, table_id).await?,
    };
    let session = Session {
        session_id: state.store().new_session_id(shop_id),
        shop_id,
        table_label,
        pin: generate_pin(),
        status: SessionStatus::Active,
        opened_at: now,
        closed_at: None,
        pin_failures: 0,
        pin_locked_until: None,
    };
    let viewer = state.clone();
    let render = move |session: &Session| {
        let location = format!("/api/v1/sessions/{}", session.session_id);
        let view = SessionView::new(session.clone(), Principal::Staff, &viewer);
        Sent::render(StatusCode::CREATED, &view, Some(location))
    };
    let write = StaffWrite::OpenSession(session, Box::new(render));
    staff_write(&state, claim, write).await
}

/// The name of the shop's table `table_id`: the label of its sessions.
async fn table_name(state: &AppState, shop_id: Uuid, table_id: Uuid) -> Result<String, ApiError> {
    let tables = state.store().tables(shop_id).await?;
    tables
        .into_iter()
        .find(|t| t.table.table_id == table_id)
        .map(|t| t.table.name)
        .ok_or_else(|| Rejection::field("tableId", "not a table of this shop").into())
}

/// The shop's sessions, newest first, with their PINs.
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/sessions", tag = "sessions",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path), ListQuery),
    responses(
        (status = 200, description = "Newest first", body = SessionList),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn list_sessions(
    State(state): State<AppState>,
    _: Allowed<duty::Sessions>,
    ApiPath(shop_id): ApiPath<Uuid>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Json<SessionList>, ApiError> {
    let status = query
        .status
        .map(|s| {
            SessionStatus::parse(&s)
                .ok_or_else(|| Rejection::field("status", "must be active or closed"))
        })
        .transpose()?;
    let limit = Limit::parse(query.limit.as_deref(), Limit::DEFAULT)?;
    let sessions = state.store().list_sessions(shop_id, status, limit).await?;
    let sessions = sessions
        .into_iter()
        .map(|s| SessionView::new(s, Principal::Staff, &state))
        .collect();
    Ok(Json(SessionList { sessions }))
}

/// One session: for its guests (by PIN) without the PIN, for staff with it.
#[utoipa::path(get, path = "/api/v1/sessions/{sessionId}", tag = "sessions",
    security(("sessionPin" = []), ("guestToken" = []), ("staffToken" = [])),
    params(("sessionId" = Uuid, Path)),
    responses(
        (status = 200, description = "The session", body = SessionView),
        (status = 404, description = "No such session (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%session_id))]
async fn get_session(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<Uuid>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
) -> Result<Json<SessionView>, ApiError> {
    let (session, caller) =
        session_access(&state, &headers, address, session_id, Duty::Sessions).await?;
    Ok(Json(SessionView::new(session, caller.principal(), &state)))
}

/// A guest token: the table's PIN, exchanged once for a credential that
/// other people's wrong PINs cannot lock out.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct GuestAccess {
    /// Send as `Authorization: Bearer <guestToken>` on this session's guest
    /// calls (`?access_token=` on its event stream). Shown once.
    guest_token: String,
    session_id: Uuid,
    /// The token ends then, or at checkout if that comes first.
    expires_at: DateTime<Utc>,
}

/// Exchange the table's PIN for a guest token.
///
/// The exchange is a PIN use like any other: a wrong PIN counts towards the
/// table's and the address's lockouts. The token is then accepted in place
/// of the PIN on every guest call of this session, and is never refused by
/// a PIN lockout. It ends at checkout.
#[utoipa::path(post, path = "/api/v1/sessions/{sessionId}/access", tag = "sessions",
    security(("sessionPin" = [])),
    params(("sessionId" = Uuid, Path)),
    responses(
        (status = 200, description = "A fresh guest token", body = GuestAccess),
        (status = 404, description = "No such session (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 410, description = "The table was checked out (SESSION_CLOSED)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%session_id))]
async fn grant_access(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<Uuid>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
) -> Result<impl IntoResponse, ApiError> {
    // Only the PIN opens a session here: a token cannot mint tokens.
    let pin = header_text(&headers, PIN_HEADER);
    let guest_token = generate_guest_token();
    let token_digest = guest_token_digest(&guest_token);
    let policy = state.pin_policy();
    let expires_at = state.now() + GUEST_TOKEN_LIFETIME;
    let session = judge_pin_with(&state, address, session_id, pin, |now| {
        state.store().grant_guest_access(GuestGrant {
            session_id,
            pin: pin.map(str::to_owned),
            token_digest,
            expires_at,
            policy,
            now,
        })
    })
    .await?;
    if session.status == SessionStatus::Closed {
        return Err(Rejection::SessionClosed.into());
    }
    // A credential: no cache may keep it.
    Ok((
        [(header::CACHE_CONTROL, "no-store")],
        Json(GuestAccess {
            guest_token,
            session_id,
            expires_at,
        }),
    ))
}

/// Clear the table's PIN lock (staff): its guests may use the PIN again at
/// once, with a fresh set of tries.
#[utoipa::path(post, path = "/api/v1/sessions/{sessionId}/unlock", tag = "sessions",
    security(("staffToken" = [])),
    params(("sessionId" = Uuid, Path)),
    responses(
        (status = 200, description = "The session, unlocked", body = SessionView),
        (status = 404, description = "No such session (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%session_id))]
async fn unlock(
    State(state): State<AppState>,
    _: Allowed<duty::Sessions>,
    ApiPath(session_id): ApiPath<Uuid>,
) -> Result<Json<SessionView>, ApiError> {
    let session = state.store().unlock_pin(session_id).await?;
    Ok(Json(SessionView::new(session, Principal::Staff, &state)))
}

/// Close the table and produce its bill; calling it again returns the same bill.
#[utoipa::path(post, path = "/api/v1/sessions/{sessionId}/checkout", tag = "sessions",
    security(("staffToken" = [])),
    params(
        ("sessionId" = Uuid, Path),
        ("Idempotency-Key" = Option<String>, Header, description = "UUID v4; retries replay the first answer"),
    ),
    responses(
        (status = 200, description = "The bill; cancelled orders are listed but not counted",
         body = Bill),
        (status = 404, description = "No such session (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%session_id))]
async fn checkout(
    State(state): State<AppState>,
    _: Allowed<duty::Sessions>,
    ApiPath(session_id): ApiPath<Uuid>,
    headers: HeaderMap,
) -> Result<Sent, ApiError> {
    let now = state.now();
    let expires_at = state.settings().idempotency_expiry(now);
    let claim = staff_claim(
        &headers,
        StaffOperation::Checkout { session_id },
        &(),
        expires_at,
    )?;
    let render = |bill: &Bill| Sent::render(StatusCode::OK, bill, None);
    let write = StaffWrite::Checkout {
        session_id,
        now,
        render: Box::new(render),
    };
    staff_write(&state, claim, write).await
}
