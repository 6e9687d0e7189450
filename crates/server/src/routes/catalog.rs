//! The catalog: staff's master list of items and toppings.

use axum::Json;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use ordergate_domain::catalog::{Catalog, CatalogInput};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::accounts::{Allowed, duty};
use crate::app::AppState;
use crate::error::{ApiError, ErrorCode, Problem};
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
/// are retired (no longer orderable). Every call bumps `version`. With
/// `If-Match: "<version>"` (the `ETag` of the catalog the edit started
/// from) the PUT is refused with 412 when another edit came first.
#[utoipa::path(put, path = "/api/v1/shops/{shopId}/catalog", tag = "catalog",
    security(("staffToken" = [])),
    params(
        ("shopId" = Uuid, Path),
        ("If-Match" = Option<String>, Header, description = "\"<version>\" the edit started from, or *"),
    ),
    request_body = CatalogInput,
    responses(
        (status = 200, description = "The stored catalog", body = Catalog,
         headers(("ETag" = String, description = "\"<version>\""))),
        (status = 400, description = "An If-Match that is not \"<version>\" or * (MALFORMED_REQUEST)",
         body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 412, description = "Another edit came first (CATALOG_VERSION_CONFLICT, with \
                                      currentVersion)", body = Problem,
         content_type = "application/problem+json"),
        (status = 413, description = "Body over 2 MiB (PAYLOAD_TOO_LARGE)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn put_catalog(
    State(state): State<AppState>,
    _: Allowed<duty::Catalog>,
    ApiPath(shop_id): ApiPath<Uuid>,
    headers: HeaderMap,
    ApiJson(input): ApiJson<CatalogInput>,
) -> Result<Versioned, ApiError> {
    let expected = expected_version(&headers)?;
    let catalog = state
        .store()
        .put_catalog(shop_id, input, expected, state.now())
        .await?;
    Ok(Versioned(catalog))
}

/// The version an edit started from, from `If-Match`: `None` without one
/// or with `*`.
fn expected_version(headers: &HeaderMap) -> Result<Option<i64>, ApiError> {
    let Some(value) = headers.get(header::IF_MATCH) else {
        return Ok(None);
    };
    let text = value.to_str().unwrap_or_default().trim();
    if text == "*" {
        return Ok(None);
    }
    text.strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
        .and_then(|version| version.parse::<i64>().ok())
        .filter(|version| *version >= 0)
        .map(Some)
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::MalformedRequest,
                "If-Match must be the catalog's ETag (\"<version>\") or *",
            )
        })
}

/// A catalog with its version as a strong `ETag`, for the next `If-Match`.
struct Versioned(Catalog);

impl IntoResponse for Versioned {
    fn into_response(self) -> Response {
        let etag = format!("\"{}\"", self.0.version);
        let mut response = Json(self.0).into_response();
        if let Ok(etag) = HeaderValue::from_str(&etag) {
            response.headers_mut().insert(header::ETAG, etag);
        }
        response
    }
}

/// The active catalog (version 0 and empty until the first PUT). Every
/// role reads it (the kitchen display takes its stations from it); owners
/// and managers change it.
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/catalog", tag = "catalog",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path)),
    responses(
        (status = 200, description = "The active catalog", body = Catalog,
         headers(("ETag" = String, description = "\"<version>\": send it as If-Match with the PUT"))),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn get_catalog(
    State(state): State<AppState>,
    _: Allowed<duty::Kitchen>,
    ApiPath(shop_id): ApiPath<Uuid>,
) -> Result<Versioned, ApiError> {
    Ok(Versioned(state.store().get_catalog(shop_id).await?))
}
