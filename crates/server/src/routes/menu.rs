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
use crate::extract::ApiPath;
#[cfg(test)]
use crate::menu_cache::entity_tag;

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
    let now = ordergate_domain::now();
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

/// `If-None-Match` semantics (RFC 9110 §13.1.2): weak comparison, `*`, lists.
fn matches_any(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    let etag = etag.to_str().unwrap_or_default();
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == etag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_accepts_lists_weak_tags_and_star() {
        let etag = entity_tag(b"{}");
        let tag = etag.to_str().unwrap().to_owned();
        for value in [
            tag.clone(),
            format!("W/{tag}"),
            format!("\"x\", {tag}"),
            "*".into(),
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::IF_NONE_MATCH,
                HeaderValue::from_str(&value).unwrap(),
            );
            assert!(matches_any(&headers, &etag), "{value}");
        }
        let mut headers = HeaderMap::new();
        headers.insert(header::IF_NONE_MATCH, HeaderValue::from_static("\"other\""));
        assert!(!matches_any(&headers, &etag));
        assert!(!matches_any(&HeaderMap::new(), &etag));
    }
}
