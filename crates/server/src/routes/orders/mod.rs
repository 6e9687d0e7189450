//! Orders: the guest's exactly-once POST, staff orders, order history for
//! reconciliation, and the audit trail.

mod place;

use std::net::IpAddr;
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use ordergate_domain::Rejection;
use ordergate_domain::audit::AuditEntry;
use ordergate_domain::idempotency::{ClientId, IdempotencyKey, Scope};
use ordergate_domain::order::admission::Caller;
use ordergate_domain::order::{Order, OrderRequest};
use ordergate_domain::paging::Limit;
use ordergate_domain::session::GuestProof;
use ordergate_domain::staff::Duty;
use ordergate_store::Claim;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::accounts::{Allowed, duty};
use crate::app::AppState;
use crate::auth::{Credential, check_guest_token, judge_pin, session_access};
use crate::error::{ApiError, ErrorCode, Problem};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::idempotency::{KEY_HEADER, Sent, StaffOperation, header_text, key_error, staff_claim};
use crate::limits::ClientAddress;
use place::{audited, place};

/// How long an order waits for its table before 409 `SESSION_BUSY`.
const SESSION_WAIT: Duration = Duration::from_secs(5);
const CLIENT_ID_HEADER: &str = "x-client-id";
const REQUEST_ID_HEADER: &str = "x-request-id";

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(place_guest_order, session_orders))
        .routes(routes!(place_staff_order))
        .routes(routes!(get_order))
        .routes(routes!(audit_log))
}

#[derive(Serialize, ToSchema)]
struct OrderList {
    orders: Vec<Order>,
}

#[derive(Serialize, ToSchema)]
struct AuditLog {
    entries: Vec<AuditEntry>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct LimitQuery {
    /// 1–500.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    limit: Option<String>,
}

/// Place a guest order, exactly once.
///
/// Retry with the same `Idempotency-Key` until an answer arrives: a request
/// that already succeeded is replayed (same status and body,
/// `"idempotentReplay": true`, header `Idempotent-Replayed: true`).
#[utoipa::path(post, path = "/api/v1/sessions/{sessionId}/orders", tag = "orders",
    security(("sessionPin" = []), ("guestToken" = [])),
    params(
        ("sessionId" = Uuid, Path),
        ("Idempotency-Key" = String, Header, description = "UUID v4, one per cart, kept for every retry"),
        ("X-Client-Id" = String, Header, description = "This device's id: 1–64 of [A-Za-z0-9._:-]"),
    ),
    request_body = OrderRequest,
    responses(
        (status = 201, description = "Placed, or a replay of the request that placed it",
         body = Order, headers(("Location" = String), ("Idempotent-Replayed" = String))),
        (status = 400, description = "Missing or invalid Idempotency-Key or X-Client-Id, or a body \
                                      that is not valid JSON for this operation",
         body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such session (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 409, description = "REQUEST_IN_PROGRESS, DUPLICATE_PAYLOAD (with originalOrderId \
                                      and originalOrder), SESSION_BUSY or OUT_OF_STOCK (with shortages)",
         body = Problem, content_type = "application/problem+json"),
        (status = 410, description = "The session is closed (SESSION_CLOSED)", body = Problem,
         content_type = "application/problem+json"),
        (status = 422, description = "VALIDATION_FAILED, IDEMPOTENCY_KEY_REUSED, UNKNOWN_MENU_ITEM, \
                                      INVALID_TOPPING, INVALID_OPTIONS (errors: [{field, groupId, \
                                      message}]) or ITEM_UNAVAILABLE",
         body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "PIN_LOCKED, COOLDOWN_ACTIVE or SESSION_RATE_LIMITED, with \
                                      Retry-After", body = Problem,
         content_type = "application/problem+json"),
        (status = 503, description = "CATALOG_NOT_READY or UNAVAILABLE", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%session_id))]
async fn place_guest_order(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<Uuid>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    body: Result<ApiJson<OrderRequest>, ApiError>,
) -> Result<Sent, ApiError> {
    let busy_deadline = Instant::now() + SESSION_WAIT;
    let now = state.now();
    let request_id = header_text(&headers, REQUEST_ID_HEADER)
        .unwrap_or_default()
        .to_owned();
    let key = IdempotencyKey::parse(header_text(&headers, KEY_HEADER.as_str())).map_err(key_error);
    let client_id =
        ClientId::parse(header_text(&headers, CLIENT_ID_HEADER)).map_err(client_id_error);
    let order = body.and_then(|ApiJson(request)| Ok(request.validate()?));

    // Step 1. A call that proves nothing (no PIN, a token that opens
    // nothing here) is refused before anything is judged: counted, never
    // audited, so a flood of them cannot grow the audit log.
    let proof = guest_proof(&state, &headers, session_id).await?;

    let (key, client_id, order) = match (key, client_id, order) {
        (Ok(key), Ok(client_id), Ok(order)) => (key, client_id, order),
        (key, client_id, order) => {
            let audit_client = client_id.as_ref().ok().cloned();
            let wrong_form = key.and(client_id).and(order).err().unwrap_or_else(|| {
                ApiError::new(ErrorCode::Internal, "an internal error occurred")
            });
            let refusal = refuse_form(
                &state,
                &proof,
                address,
                session_id,
                &request_id,
                audit_client.as_ref(),
                wrong_form,
            );
            return Err(refusal.await);
        }
    };

    let claim = Claim {
        scope: Scope::session(session_id),
        key,
        fingerprint: order.fingerprint.clone(),
        expires_at: state.settings().idempotency_expiry(now),
    };
    let attempt = match &proof {
        GuestProof::Pin(Some(pin)) => Some(
            state
                .limits()
                .pin_attempt(address, session_id, pin)
                .await
                .map_err(|refusal| unjudged(&state, refusal))?,
        ),
        _ => None,
    };
    let caller = Caller::Guest { proof, client_id };
    let placed = place(
        &state,
        session_id,
        caller,
        Some(claim),
        order,
        &request_id,
        busy_deadline,
    )
    .await;
    if let Some(attempt) = attempt {
        // Refusals other than a wrong PIN may come before the PIN was
        // judged (a lock, a busy table): they prove nothing either way.
        match placed.as_ref().map_err(ApiError::code) {
            Ok(_) => attempt.right(state.limits()),
            Err(ErrorCode::PinInvalid) => attempt.wrong(address),
            Err(_) => {}
        }
    }
    placed
}

/// What the caller proves itself with. A call that proves nothing is
/// refused here, [`unjudged`].
async fn guest_proof(
    state: &AppState,
    headers: &HeaderMap,
    session_id: Uuid,
) -> Result<GuestProof, ApiError> {
    match Credential::of(headers) {
        Credential::Pin(Some(pin)) => Ok(GuestProof::Pin(Some(pin.to_owned()))),
        Credential::Bearer(token) => match check_guest_token(state, session_id, token).await {
            Ok(_) => Ok(GuestProof::Token),
            Err(refusal) => Err(unjudged(state, refusal)),
        },
        Credential::Pin(None) | Credential::Malformed => {
            let refusal = match state.store().get_session(session_id).await? {
                None => ApiError::not_found("session"),
                Some(_) => Rejection::PinInvalid.into(),
            };
            Err(unjudged(state, refusal))
        }
    }
}

/// Refuses a request whose form is wrong. The credentials are judged
/// before the request's form (step 1 before 2); only a form refused past
/// them is audited.
async fn refuse_form(
    state: &AppState,
    proof: &GuestProof,
    address: IpAddr,
    session_id: Uuid,
    request_id: &str,
    client_id: Option<&ClientId>,
    wrong_form: ApiError,
) -> ApiError {
    let judged = match proof {
        GuestProof::Token => Ok(()),
        GuestProof::Pin(pin) => judge_pin(state, address, session_id, pin.as_deref())
            .await
            .map(drop),
    };
    let refusal = match judged {
        Err(wrong_pin) if wrong_pin.code() == ErrorCode::PinInvalid => wrong_pin,
        Err(refusal) => return unjudged(state, refusal),
        Ok(()) => wrong_form,
    };
    audited(state, session_id, request_id, client_id, refusal).await
}

/// Counts a refusal given before the caller's credentials were judged,
/// which the audit log does not keep, and passes it on.
fn unjudged(state: &AppState, refusal: ApiError) -> ApiError {
    state
        .metrics()
        .order_refused_unaudited(refusal.code().as_str());
    refusal
}

fn client_id_error(code: ErrorCode) -> ApiError {
    ApiError::new(
        code,
        "send X-Client-Id: this device's id, 1–64 characters of [A-Za-z0-9._:-], the same for every order",
    )
}

/// Place an order on behalf of a table (staff).
///
/// No cooldown or duplicate-payload rule; `Idempotency-Key` is optional and
/// honoured, scoped to the staff principal.
#[utoipa::path(post, path = "/api/v1/sessions/{sessionId}/staff-orders", tag = "orders",
    security(("staffToken" = [])),
    params(
        ("sessionId" = Uuid, Path),
        ("Idempotency-Key" = Option<String>, Header, description = "UUID v4; retries replay the first answer"),
    ),
    request_body = OrderRequest,
    responses(
        (status = 201, description = "Placed, or a replay", body = Order,
         headers(("Location" = String), ("Idempotent-Replayed" = String))),
        (status = 404, description = "No such session (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 409, description = "REQUEST_IN_PROGRESS, SESSION_BUSY or OUT_OF_STOCK", body = Problem,
         content_type = "application/problem+json"),
        (status = 410, description = "The session is closed (SESSION_CLOSED)", body = Problem,
         content_type = "application/problem+json"),
        (status = 422, description = "VALIDATION_FAILED, IDEMPOTENCY_KEY_REUSED, UNKNOWN_MENU_ITEM, \
                                      INVALID_TOPPING, INVALID_OPTIONS (errors: [{field, groupId, \
                                      message}]) or ITEM_UNAVAILABLE",
         body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "CATALOG_NOT_READY or UNAVAILABLE", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%session_id))]
async fn place_staff_order(
    State(state): State<AppState>,
    allowed: Allowed<duty::Sessions>,
    ApiPath(session_id): ApiPath<Uuid>,
    headers: HeaderMap,
    ApiJson(request): ApiJson<OrderRequest>,
) -> Result<Sent, ApiError> {
    let busy_deadline = Instant::now() + SESSION_WAIT;
    let now = state.now();
    let order = request.validate()?;
    let claim = staff_claim(
        &headers,
        StaffOperation::StaffOrder { session_id },
        &order.fingerprint,
        state.settings().idempotency_expiry(now),
    )?;
    let request_id = header_text(&headers, REQUEST_ID_HEADER)
        .unwrap_or_default()
        .to_owned();
    place(
        &state,
        session_id,
        Caller::Staff {
            actor: allowed.actor().label(),
        },
        claim,
        order,
        &request_id,
        busy_deadline,
    )
    .await
}

/// The session's orders, newest first: what a client reads to reconcile
/// after a lost response.
#[utoipa::path(get, path = "/api/v1/sessions/{sessionId}/orders", tag = "orders",
    security(("sessionPin" = []), ("guestToken" = []), ("staffToken" = [])),
    params(("sessionId" = Uuid, Path), LimitQuery),
    responses(
        (status = 200, description = "Newest first (default limit 20)", body = OrderList),
        (status = 404, description = "No such session (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%session_id))]
async fn session_orders(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<Uuid>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<LimitQuery>,
) -> Result<Json<OrderList>, ApiError> {
    let limit = Limit::parse(query.limit.as_deref(), Limit::ORDER_HISTORY);
    session_access(&state, &headers, address, session_id, Duty::Sessions).await?;
    let orders = state.store().session_orders(session_id, limit?).await?;
    Ok(Json(OrderList { orders }))
}

/// One order (staff).
#[utoipa::path(get, path = "/api/v1/orders/{orderId}", tag = "orders",
    security(("staffToken" = [])),
    params(("orderId" = Uuid, Path)),
    responses(
        (status = 200, description = "The order", body = Order),
        (status = 404, description = "No such order (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%order_id))]
async fn get_order(
    State(state): State<AppState>,
    _: Allowed<duty::Kitchen>,
    ApiPath(order_id): ApiPath<Uuid>,
) -> Result<Json<Order>, ApiError> {
    let order = state.store().get_order(order_id).await?;
    order.map(Json).ok_or_else(|| ApiError::not_found("order"))
}

/// The audit trail of guest order POSTs, newest first (staff).
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/audit", tag = "orders",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path), LimitQuery),
    responses(
        (status = 200, description = "Newest first (default limit 100)", body = AuditLog),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn audit_log(
    State(state): State<AppState>,
    _: Allowed<duty::Audit>,
    ApiPath(shop_id): ApiPath<Uuid>,
    ApiQuery(query): ApiQuery<LimitQuery>,
) -> Result<Json<AuditLog>, ApiError> {
    let limit = Limit::parse(query.limit.as_deref(), Limit::DEFAULT)?;
    let entries = state.store().audit_log(shop_id, limit).await?;
    Ok(Json(AuditLog { entries }))
}
