//! The pages people use, embedded in the binary: the guest page
//! (`/t/{sessionId}`, PIN in the URL fragment, or a table's card
//! `/q/{code}`, which asks for the PIN), the kitchen display
//! (`/kitchen/{shopId}`), the staff console (`/staff/{shopId}`) and their
//! scripts and styles under `/web/`. Nothing to build or deploy beside the
//! server: the files in `web/` are compiled in.

use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rust_embed::RustEmbed;
use utoipa_axum::router::OpenApiRouter;

use crate::app::AppState;
use crate::error::ApiError;
use crate::etag::{entity_tag, matches_any};

#[derive(RustEmbed)]
#[folder = "../../web/"]
#[exclude = "test/*"]
#[exclude = "node_modules/*"]
#[exclude = "package.json"]
#[exclude = "package-lock.json"]
#[exclude = "*.md"]
struct Web;

/// Scripts and styles only from this server, no inline code, no framing:
/// a page that takes a PIN from its URL has no business running anyone
/// else's code.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; \
     form-action 'self'";

/// The pages are not part of the API document.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        // The start page: sign in, then the shops the credential works in.
        .route(
            "/",
            get(|h: HeaderMap| async move { page("home.html", &h) }),
        )
        .route(
            "/t/{session_id}",
            get(|h: HeaderMap| async move { page("guest.html", &h) }),
        )
        // A table's permanent QR card: the guest page asks for the PIN.
        .route(
            "/q/{code}",
            get(|h: HeaderMap| async move { page("guest.html", &h) }),
        )
        .route(
            "/kitchen/{shop_id}",
            get(|h: HeaderMap| async move { page("kitchen.html", &h) }),
        )
        .route(
            "/staff/{shop_id}",
            get(|h: HeaderMap| async move { page("staff.html", &h) }),
        )
        .route("/web/{*path}", get(asset))
}

async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    // HTML is reached through its page route; only scripts, styles and
    // images are served by name.
    if path.ends_with(".html") {
        return ApiError::not_found("file").into_response();
    }
    page(&path, &headers)
}

/// An embedded file with its content type, an ETag and `no-cache`: browsers
/// keep it, and revalidate it, so a new server version is picked up at once.
fn page(path: &str, headers: &HeaderMap) -> Response {
    let Some(file) = Web::get(path) else {
        return ApiError::not_found("file").into_response();
    };
    let etag = entity_tag(&file.metadata.sha256_hash());
    let mime = file.metadata.mimetype();
    let content_type = if mime.starts_with("text/") || mime.ends_with("javascript") {
        format!("{mime}; charset=utf-8")
    } else {
        mime.to_owned()
    };
    let common = [
        (header::ETAG, etag.clone()),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ),
        (
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ),
    ];
    if matches_any(headers, &etag) {
        return (StatusCode::NOT_MODIFIED, common).into_response();
    }
    let content_type = HeaderValue::from_str(&content_type)
        .unwrap_or(HeaderValue::from_static("application/octet-stream"));
    (
        common,
        [(header::CONTENT_TYPE, content_type)],
        file.data.into_owned(),
    )
        .into_response()
}
