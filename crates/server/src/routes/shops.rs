//! Shops.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use ordergate_domain::shop::{NewShop, Shop, ShopPatch};
use ordergate_store::StaffWrite;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::accounts::{Actor, Allowed, duty};
use crate::app::AppState;
use crate::error::{ApiError, Problem};
use crate::extract::{ApiJson, ApiPath};
use crate::idempotency::{Sent, StaffOperation, staff_claim, staff_write};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_shop, list_shops))
        .routes(routes!(get_shop, update_shop))
}

#[derive(Serialize, ToSchema)]
struct ShopList {
    shops: Vec<Shop>,
}

/// Create a shop.
#[utoipa::path(post, path = "/api/v1/shops", tag = "shops",
    security(("staffToken" = [])),
    params(("Idempotency-Key" = Option<String>, Header, description = "UUID v4; retries replay the first answer")),
    request_body = NewShop,
    responses((status = 201, description = "Created", body = Shop,
               headers(("Location" = String, description = "The shop's URL")))),
)]
#[tracing::instrument(skip_all)]
async fn create_shop(
    State(state): State<AppState>,
    _: Allowed<duty::Platform>,
    headers: HeaderMap,
    ApiJson(new_shop): ApiJson<NewShop>,
) -> Result<Sent, ApiError> {
    let now = state.now();
    let expires_at = state.settings().idempotency_expiry(now);
    let claim = staff_claim(&headers, StaffOperation::CreateShop, &new_shop, expires_at)?;
    let shop = new_shop.validate(Uuid::new_v4(), now)?;
    let render = |shop: &Shop| {
        let location = format!("/api/v1/shops/{}", shop.shop_id);
        Sent::render(StatusCode::CREATED, shop, Some(location))
    };
    let write = StaffWrite::CreateShop(shop, Box::new(render));
    staff_write(&state, claim, write).await
}

/// The shops the credential works in: every shop for the administrator,
/// an account's shops, a device's one shop.
#[utoipa::path(get, path = "/api/v1/shops", tag = "shops",
    security(("staffToken" = [])),
    responses((status = 200, description = "Oldest first", body = ShopList)),
)]
#[tracing::instrument(skip_all)]
async fn list_shops(
    State(state): State<AppState>,
    actor: Actor,
) -> Result<Json<ShopList>, ApiError> {
    let mut shops = state.store().list_shops().await?;
    if let Some(mine) = actor.shops() {
        shops.retain(|shop| mine.contains(&shop.shop_id));
    }
    Ok(Json(ShopList { shops }))
}

/// A shop's public details.
#[utoipa::path(get, path = "/api/v1/shops/{shopId}", tag = "shops",
    params(("shopId" = Uuid, Path)),
    responses(
        (status = 200, description = "The shop", body = Shop),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(shop_id = %shop_id))]
async fn get_shop(
    State(state): State<AppState>,
    ApiPath(shop_id): ApiPath<Uuid>,
) -> Result<Json<Shop>, ApiError> {
    let shop = state.store().get_shop(shop_id).await?;
    shop.map(Json).ok_or_else(|| ApiError::not_found("shop"))
}

/// Change a shop's name or its menu's languages (staff).
///
/// A field left out stays as it is. The menu is rendered anew in the new
/// languages at once; catalog texts in a language the shop no longer lists
/// are kept, and shown only as a fallback.
#[utoipa::path(patch, path = "/api/v1/shops/{shopId}", tag = "shops",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path)),
    request_body = ShopPatch,
    responses(
        (status = 200, description = "The shop as changed", body = Shop),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(shop_id = %shop_id))]
async fn update_shop(
    State(state): State<AppState>,
    _: Allowed<duty::Settings>,
    ApiPath(shop_id): ApiPath<Uuid>,
    ApiJson(patch): ApiJson<ShopPatch>,
) -> Result<Json<Shop>, ApiError> {
    let now = state.now();
    Ok(Json(state.store().update_shop(shop_id, patch, now).await?))
}
