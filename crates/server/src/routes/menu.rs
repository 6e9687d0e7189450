//! The guest menu, with live stock.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ordergate_domain::menu::Menu;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::app::AppState;
use crate::error::{ApiError, Problem};
use crate::etag::matches_any;
use crate::extract::ApiPath;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_menu))
}

/// The guest menu: active items with stock and sold-out state merged in.
///
/// Carries an `ETag`; send it back in `If-None-Match` to get 304 when nothing changed.
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/menu", tag = "menu",
    params(
        ("shopId" = Uuid, Path),
        ("If-None-Match" = Option<String>, Header, description = "ETag of a menu the client holds"),
    ),
    responses(
        (status = 200, description = "The menu", body = Menu,
         headers(("ETag" = String, description = "Changes whenever the menu does"))),
        (status = 304, description = "The menu still matches If-None-Match"),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 503, description = "The catalog was never published (CATALOG_NOT_READY) \
                                      or the database is unavailable (UNAVAILABLE)",
         body = Problem, content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn get_menu(
    State(state): State<AppState>,
    ApiPath(shop_id): ApiPath<Uuid>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let now = state.now();
    let menu = state
        .menu_cache()
        .get(state.store(), state.metrics(), shop_id, now)
        .await?;
    let etag = menu.etag;
    let cache = [
        (header::ETAG, etag.clone()),
        // Stock changes any second: caches must check back every time.
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
    ];
    if matches_any(&headers, &etag) {
        return Ok((StatusCode::NOT_MODIFIED, cache).into_response());
    }
    let json = HeaderValue::from_static("application/json");
    Ok((cache, [(header::CONTENT_TYPE, json)], menu.body).into_response())
}
