//! The kitchen's side of orders: the ticket list and the status machine.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use ordergate_domain::Rejection;
use ordergate_domain::order::{Order, OrderStatus, RecallRequest, StatusChange};
use ordergate_domain::paging::Limit;
use ordergate_store::StaffWrite;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::accounts::{Allowed, duty};
use crate::app::AppState;
use crate::error::{ApiError, Problem};
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::idempotency::{Sent, StaffOperation, staff_claim, staff_write};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(set_status))
        .routes(routes!(recall))
        .routes(routes!(shop_orders))
}

#[derive(Serialize, ToSchema)]
struct OrderList {
    orders: Vec<Order>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct OrdersQuery {
    /// Comma-separated statuses, e.g. `placed,accepted`; all when absent.
    #[param(value_type = Option<String>, example = "placed,accepted")]
    status: Option<String>,
    /// 1–500, default 100.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    limit: Option<String>,
}

/// Move an order along `placed → accepted → preparing → ready → served`
/// (steps may be skipped), or cancel it before it is ready, which puts its
/// stock back.
#[utoipa::path(post, path = "/api/v1/orders/{orderId}/status", tag = "kitchen",
    security(("staffToken" = [])),
    params(
        ("orderId" = Uuid, Path),
        ("Idempotency-Key" = Option<String>, Header, description = "UUID v4; retries replay the first answer"),
    ),
    request_body = StatusChange,
    responses(
        (status = 200, description = "The order, changed (or already in that status)", body = Order),
        (status = 404, description = "No such order (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 409, description = "VERSION_CONFLICT (with currentVersion) or INVALID_TRANSITION",
         body = Problem, content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%order_id))]
async fn set_status(
    State(state): State<AppState>,
    allowed: Allowed<duty::Kitchen>,
    ApiPath(order_id): ApiPath<Uuid>,
    headers: HeaderMap,
    ApiJson(mut change): ApiJson<StatusChange>,
) -> Result<Sent, ApiError> {
    change.actor = allowed.actor().label();
    let now = state.now();
    let expires_at = state.settings().idempotency_expiry(now);
    let claim = staff_claim(
        &headers,
        StaffOperation::SetOrderStatus { order_id },
        &change,
        expires_at,
    )?;
    let render = |order: &Order| Sent::render(StatusCode::OK, order, None);
    let write = StaffWrite::SetOrderStatus {
        order_id,
        change,
        now,
        render: Box::new(render),
    };
    staff_write(&state, claim, write).await
}

/// Undo the order's last move along the kitchen's path (a bump made by
/// mistake): `ready` goes back to where it came from, and so on. Only the
/// last advance, only within `--recall-window-secs` (default 5 minutes),
/// and only the move the caller saw (`expectedVersion`). A cancel is never
/// recalled, nor a recall.
#[utoipa::path(post, path = "/api/v1/orders/{orderId}/recall", tag = "kitchen",
    security(("staffToken" = [])),
    params(
        ("orderId" = Uuid, Path),
        ("Idempotency-Key" = Option<String>, Header, description = "UUID v4; retries replay the first answer"),
    ),
    request_body = RecallRequest,
    responses(
        (status = 200, description = "The order, one move back", body = Order),
        (status = 404, description = "No such order (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 409, description = "VERSION_CONFLICT (with currentVersion), NOTHING_TO_RECALL \
         (with orderStatus) or RECALL_EXPIRED (with recallWindowSeconds)",
         body = Problem, content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%order_id))]
async fn recall(
    State(state): State<AppState>,
    _: Allowed<duty::Kitchen>,
    ApiPath(order_id): ApiPath<Uuid>,
    headers: HeaderMap,
    ApiJson(request): ApiJson<RecallRequest>,
) -> Result<Sent, ApiError> {
    let now = state.now();
    let expires_at = state.settings().idempotency_expiry(now);
    let claim = staff_claim(
        &headers,
        StaffOperation::RecallOrder { order_id },
        &request,
        expires_at,
    )?;
    let render = |order: &Order| Sent::render(StatusCode::OK, order, None);
    let write = StaffWrite::RecallOrder {
        order_id,
        recall: state.settings().recall(&request),
        now,
        render: Box::new(render),
    };
    staff_write(&state, claim, write).await
}

/// The shop's orders, oldest first (the order a kitchen works through them).
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/orders", tag = "kitchen",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path), OrdersQuery),
    responses(
        (status = 200, description = "Oldest first", body = OrderList),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn shop_orders(
    State(state): State<AppState>,
    _: Allowed<duty::Kitchen>,
    ApiPath(shop_id): ApiPath<Uuid>,
    ApiQuery(query): ApiQuery<OrdersQuery>,
) -> Result<Json<OrderList>, ApiError> {
    let statuses = parse_statuses(query.status.as_deref())?;
    let limit = Limit::parse(query.limit.as_deref(), Limit::DEFAULT)?;
    let orders = state.store().shop_orders(shop_id, statuses, limit).await?;
    Ok(Json(OrderList { orders }))
}

fn parse_statuses(raw: Option<&str>) -> Result<Vec<OrderStatus>, Rejection> {
    let Some(raw) = raw else {
        return Ok(Vec::new());
    };
    raw.split(',')
        .map(|s| {
            OrderStatus::parse(s.trim()).ok_or_else(|| {
                Rejection::field(
                    "status",
                    "a comma-separated list of placed, accepted, preparing, ready, served, cancelled",
                )
            })
        })
        .collect()
}
