//! The guest menu, with live stock, and how long the kitchen is taking.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ordergate_domain::language::Languages;
use ordergate_domain::menu::Menu;
use ordergate_domain::wait::{WAIT_WINDOW, WaitEstimate};
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::app::AppState;
use crate::error::{ApiError, Problem};
use crate::etag::matches_any;
use crate::extract::{ApiPath, ApiQuery};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_menu))
        .routes(routes!(get_wait))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct MenuQuery {
    /// The language to render the menu in (BCP 47); wins over
    /// `Accept-Language`. One the shop does not serve gets its default.
    lang: Option<String>,
}

/// The guest menu: active items with stock and sold-out state merged in.
///
/// Every text is in one language: `lang`, else the best of
/// `Accept-Language` the shop serves, else the shop's default. Carries an
/// `ETag` (one per language); send it back in `If-None-Match` to get 304
/// when nothing changed.
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/menu", tag = "menu",
    params(
        ("shopId" = Uuid, Path),
        MenuQuery,
        ("Accept-Language" = Option<String>, Header, description = "The guest's languages"),
        ("If-None-Match" = Option<String>, Header, description = "ETag of a menu the client holds"),
    ),
    responses(
        (status = 200, description = "The menu", body = Menu,
         headers(("ETag" = String, description = "Changes whenever the menu does"),
                 ("Content-Language" = String, description = "The language of its texts"))),
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
    ApiQuery(query): ApiQuery<MenuQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let now = state.now();
    let wanted = match (query.lang, headers.get(header::ACCEPT_LANGUAGE)) {
        (Some(lang), _) => vec![lang],
        (None, Some(accepted)) => Languages::accepted(accepted.to_str().unwrap_or_default()),
        (None, None) => Vec::new(),
    };
    let menu = state
        .menu_cache()
        .get(state.store(), state.metrics(), shop_id, &wanted, now)
        .await?;
    let etag = menu.etag;
    let cache = [
        (header::ETAG, etag.clone()),
        // Stock changes any second: caches must check back every time.
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        (header::VARY, HeaderValue::from_static("accept-language")),
        (header::CONTENT_LANGUAGE, menu.language),
    ];
    if matches_any(&headers, &etag) {
        return Ok((StatusCode::NOT_MODIFIED, cache).into_response());
    }
    let json = HeaderValue::from_static("application/json");
    Ok((cache, [(header::CONTENT_TYPE, json)], menu.body).into_response())
}

/// How long food takes right now: the median time from the kitchen taking
/// an order (its placing, if it was never accepted) to its food being
/// ready, over the orders that became ready in the last hour; no estimate
/// with fewer than three. Guests see it before and after they order.
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/wait", tag = "menu",
    params(("shopId" = Uuid, Path)),
    responses(
        (status = 200, description = "The estimate", body = WaitEstimate,
         headers(("Cache-Control" = String, description = "max-age=30: it moves slowly"))),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn get_wait(
    State(state): State<AppState>,
    ApiPath(shop_id): ApiPath<Uuid>,
) -> Result<Response, ApiError> {
    let since = state.now() - WAIT_WINDOW;
    let times = state.store().kitchen_pace(shop_id, since).await?;
    Ok((
        [(
            header::CACHE_CONTROL,
            HeaderValue::from_static("max-age=30"),
        )],
        Json(WaitEstimate::of(&times)),
    )
        .into_response())
}
