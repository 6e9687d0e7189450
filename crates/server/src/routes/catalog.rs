//! The catalog: staff's master list of items and toppings.

use axum::Json;
use axum::extract::{DefaultBodyLimit, State};
use ordergate_domain::catalog::{Catalog, CatalogInput};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::app::AppState;
use crate::auth::StaffAuth;
use crate::error::{ApiError, Problem};
use crate::extract::{ApiJson, ApiPath, MAX_CATALOG_BYTES};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(put_catalog, get_catalog))
        // A restaurant's whole menu, in several languages, is one body.
        .layer(DefaultBodyLimit::max(MAX_CATALOG_BYTES))
}

/// Replace the whole catalog.
///
/// Ids given are kept, missing ids are assigned; items and toppings left out
/// are retired (no longer orderable). Every call bumps `version`.
#[utoipa::path(put, path = "/api/v1/shops/{shopId}/catalog", tag = "catalog",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path)),
    request_body = CatalogInput,
    responses(
        (status = 200, description = "The stored catalog", body = Catalog),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 413, description = "Body over 2 MiB (PAYLOAD_TOO_LARGE)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn put_catalog(
    State(state): State<AppState>,
    _: StaffAuth,
    ApiPath(shop_id): ApiPath<Uuid>,
    ApiJson(input): ApiJson<CatalogInput>,
) -> Result<Json<Catalog>, ApiError> {
    Ok(Json(
        state
            .store()
            .put_catalog(shop_id, input, state.now())
            .await?,
    ))
}

/// The active catalog (version 0 and empty until the first PUT).
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/catalog", tag = "catalog",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path)),
    responses(
        (status = 200, description = "The active catalog", body = Catalog),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn get_catalog(
    State(state): State<AppState>,
    _: StaffAuth,
    ApiPath(shop_id): ApiPath<Uuid>,
) -> Result<Json<Catalog>, ApiError> {
    Ok(Json(state.store().get_catalog(shop_id).await?))
}
