//! Service requests: a table calls for staff or asks for the bill from the
//! guest page; staff see it on the console and the kitchen display, and
//! acknowledge it ("on the way").

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use ordergate_domain::idempotency::{Fingerprint, IdempotencyKey, Scope};
use ordergate_domain::paging::Limit;
use ordergate_domain::service::{NewServiceRequest, ServiceRequest, ServiceStatus};
use ordergate_domain::staff::Duty;
use ordergate_store::{Called, Claim, ServiceCall};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::accounts::{Allowed, duty};
use crate::app::AppState;
use crate::auth::session_access;
use crate::error::{ApiError, Problem};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::idempotency::{KEY_HEADER, Sent, header_text, key_error};
use crate::limits::ClientAddress;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(call_service))
        .routes(routes!(acknowledge))
        .routes(routes!(list_requests))
}

#[derive(Serialize, ToSchema)]
struct RequestList {
    requests: Vec<ServiceRequest>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Only requests in this state.
    #[param(value_type = Option<ServiceStatus>)]
    status: Option<String>,
    /// 1–500, default 100.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    limit: Option<String>,
}

/// Call staff, or ask for the bill (the table's guests).
///
/// While a request of the same kind is open, asking again answers that one
/// (200) and changes nothing: a double tap calls staff once. With an
/// `Idempotency-Key` a retry gets the first answer back.
#[utoipa::path(post, path = "/api/v1/sessions/{sessionId}/service-requests", tag = "service",
    security(("sessionPin" = []), ("guestToken" = []), ("staffToken" = [])),
    params(
        ("sessionId" = Uuid, Path),
        ("Idempotency-Key" = Option<String>, Header, description = "UUID v4; retries replay the first answer"),
    ),
    request_body = NewServiceRequest,
    responses(
        (status = 201, description = "Staff are called", body = ServiceRequest),
        (status = 200, description = "A request of this kind was open already: that one",
         body = ServiceRequest),
        (status = 404, description = "No such session (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 409, description = "A request with this key is in progress (REQUEST_IN_PROGRESS)",
         body = Problem, content_type = "application/problem+json"),
        (status = 410, description = "The table is checked out (SESSION_CLOSED)", body = Problem,
         content_type = "application/problem+json"),
        (status = 422, description = "The key was used for another request (IDEMPOTENCY_KEY_REUSED)",
         body = Problem, content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%session_id))]
async fn call_service(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<Uuid>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    body: Result<ApiJson<NewServiceRequest>, ApiError>,
) -> Result<Sent, ApiError> {
    // Credentials first: a stranger learns nothing from how a body is judged.
    session_access(&state, &headers, address, session_id, Duty::Service).await?;
    let ApiJson(request) = body?;
    let now = state.now();
    let claim = match header_text(&headers, KEY_HEADER.as_str()) {
        None => None,
        Some(raw) => Some(Claim {
            scope: Scope::service_requests(session_id),
            key: IdempotencyKey::parse(Some(raw)).map_err(key_error)?,
            fingerprint: Fingerprint::of_json(&request),
            expires_at: state.settings().idempotency_expiry(now),
        }),
    };
    let render = |called: &Called| {
        let status = if called.created {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        };
        Sent::render(status, &called.request, None)
    };
    let call = ServiceCall {
        session_id,
        request,
        claim,
        now,
        render: Box::new(render),
    };
    Ok(Sent::from(state.store().request_service(call).await?))
}

/// Acknowledge a service request (staff): the guests see staff are on the
/// way. Acknowledging again answers the request as it is.
#[utoipa::path(post, path = "/api/v1/service-requests/{requestId}/ack", tag = "service",
    security(("staffToken" = [])),
    params(("requestId" = Uuid, Path)),
    responses(
        (status = 200, description = "Acknowledged", body = ServiceRequest),
        (status = 404, description = "No such request (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%request_id))]
async fn acknowledge(
    State(state): State<AppState>,
    _: Allowed<duty::Service>,
    ApiPath(request_id): ApiPath<Uuid>,
) -> Result<Json<ServiceRequest>, ApiError> {
    let now = state.now();
    Ok(Json(
        state.store().acknowledge_service(request_id, now).await?,
    ))
}

/// The shop's service requests (staff), oldest first: `?status=open` for
/// the ones still waiting.
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/service-requests", tag = "service",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path), ListQuery),
    responses(
        (status = 200, description = "Oldest first", body = RequestList),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn list_requests(
    State(state): State<AppState>,
    _: Allowed<duty::Service>,
    ApiPath(shop_id): ApiPath<Uuid>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Json<RequestList>, ApiError> {
    let status = query
        .status
        .map(|s| {
            ServiceStatus::parse(&s).ok_or_else(|| {
                ordergate_domain::Rejection::field("status", "must be open or acknowledged")
            })
        })
        .transpose()?;
    let limit = Limit::parse(query.limit.as_deref(), Limit::DEFAULT)?;
    let requests = state
        .store()
        .service_requests(shop_id, status, limit)
        .await?;
    Ok(Json(RequestList { requests }))
}
