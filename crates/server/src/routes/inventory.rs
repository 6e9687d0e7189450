//! Inventory: stock counts, manual 86 marks, restocks and the op log.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use ordergate_domain::inventory::{InventoryEntry, InventoryItem, InventoryUpdate, LogEntry};
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
        .routes(routes!(list_inventory))
        .routes(routes!(update_inventory))
        .routes(routes!(restock))
        .routes(routes!(inventory_log))
}

#[derive(Serialize, ToSchema)]
struct InventoryList {
    entries: Vec<InventoryEntry>,
}

#[derive(Serialize, ToSchema)]
struct InventoryLog {
    entries: Vec<LogEntry>,
}

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Restock {
    /// Units to add, 1–100000.
    quantity: i64,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct LogQuery {
    /// 1–500, default 100.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500)]
    limit: Option<String>,
}

/// Stock of every active item and topping.
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/inventory", tag = "inventory",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path)),
    responses(
        (status = 200, description = "Menu items first, then toppings", body = InventoryList),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn list_inventory(
    State(state): State<AppState>,
    _: Allowed<duty::Inventory>,
    ApiPath(shop_id): ApiPath<Uuid>,
) -> Result<Json<InventoryList>, ApiError> {
    let now = state.now();
    let items = state.store().list_inventory(shop_id).await?;
    let entries = items.iter().map(|item| item.entry(now)).collect();
    Ok(Json(InventoryList { entries }))
}

/// Set the stock count and/or mark or clear a manual 86.
#[utoipa::path(put, path = "/api/v1/shops/{shopId}/inventory/{itemId}", tag = "inventory",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path), ("itemId" = Uuid, Path, description = "A menu item or topping id")),
    request_body = InventoryUpdate,
    responses(
        (status = 200, description = "The updated entry", body = InventoryEntry),
        (status = 404, description = "No such shop or active item (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id, %item_id))]
async fn update_inventory(
    State(state): State<AppState>,
    allowed: Allowed<duty::Inventory>,
    ApiPath((shop_id, item_id)): ApiPath<(Uuid, Uuid)>,
    ApiJson(update): ApiJson<InventoryUpdate>,
) -> Result<Json<InventoryEntry>, ApiError> {
    let now = state.now();
    let change = update.validate(now)?;
    let item = state
        .store()
        .update_inventory(shop_id, item_id, change, &allowed.actor().label(), now)
        .await?;
    Ok(Json(item.entry(now)))
}

/// Add units to a tracked item's stock.
#[utoipa::path(post, path = "/api/v1/shops/{shopId}/inventory/{itemId}/restock", tag = "inventory",
    security(("staffToken" = [])),
    params(
        ("shopId" = Uuid, Path),
        ("itemId" = Uuid, Path, description = "A menu item or topping id"),
        ("Idempotency-Key" = Option<String>, Header, description = "UUID v4; retries replay the first answer"),
    ),
    request_body = Restock,
    responses(
        (status = 200, description = "The updated entry", body = InventoryEntry),
        (status = 404, description = "No such shop or active item (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 409, description = "The item is untracked (STOCK_NOT_TRACKED)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id, %item_id))]
async fn restock(
    State(state): State<AppState>,
    allowed: Allowed<duty::Inventory>,
    ApiPath((shop_id, item_id)): ApiPath<(Uuid, Uuid)>,
    headers: HeaderMap,
    ApiJson(request): ApiJson<Restock>,
) -> Result<Sent, ApiError> {
    let now = state.now();
    let expires_at = state.settings().idempotency_expiry(now);
    let claim = staff_claim(
        &headers,
        StaffOperation::Restock { shop_id, item_id },
        &request,
        expires_at,
    )?;
    let render = move |item: &InventoryItem| Sent::render(StatusCode::OK, &item.entry(now), None);
    let write = StaffWrite::Restock {
        shop_id,
        item_id,
        quantity: request.quantity,
        actor: allowed.actor().label(),
        now,
        render: Box::new(render),
    };
    staff_write(&state, claim, write).await
}

/// The stock operation log, newest first.
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/inventory/log", tag = "inventory",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path), LogQuery),
    responses(
        (status = 200, description = "Newest first", body = InventoryLog),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn inventory_log(
    State(state): State<AppState>,
    _: Allowed<duty::Inventory>,
    ApiPath(shop_id): ApiPath<Uuid>,
    ApiQuery(query): ApiQuery<LogQuery>,
) -> Result<Json<InventoryLog>, ApiError> {
    let limit = Limit::parse(query.limit.as_deref(), Limit::DEFAULT)?;
    let entries = state.store().inventory_log(shop_id, limit).await?;
    Ok(Json(InventoryLog { entries }))
}
