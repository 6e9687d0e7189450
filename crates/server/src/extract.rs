//! Extractors whose rejections are problem+json like every other error.

use axum::body::Bytes;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use serde::de::DeserializeOwned;

use crate::error::{ApiError, ErrorCode};

/// Most a request body may carry; every request but a catalog fits in far less.
pub const MAX_BODY_BYTES: usize = 16 * 1024;
/// Most a catalog PUT may carry: a 500-item menu with option groups in
/// three languages.
pub const MAX_CATALOG_BYTES: usize = 2 * 1024 * 1024;

/// A JSON body: 415 without a JSON content type, 413 past the size limit,
/// 400 when it is not a JSON object or does not parse into `T` (syntax,
/// types, unknown fields).
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(req.headers()) {
            return Err(unsupported());
        }
        let body = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                too_large()
            } else {
                ApiError::new(ErrorCode::MalformedRequest, rejection.body_text())
            }
        })?;
        // Every body of the API is an object; serde would also read a
        // struct from an array of its fields in order (`[null, null]` as
        // an empty patch), which no client means.
        if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return Err(ApiError::new(
                ErrorCode::MalformedRequest,
                "the body must be a JSON object",
            ));
        }
        match axum::Json::<T>::from_bytes(&body) {
            Ok(axum::Json(value)) => Ok(ApiJson(value)),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

/// `application/json`, or a `+json` type, as axum's own extractor takes.
fn is_json(headers: &HeaderMap) -> bool {
    let Some(content_type) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

fn unsupported() -> ApiError {
    ApiError::new(
        ErrorCode::UnsupportedMediaType,
        "send the body as JSON with Content-Type: application/json",
    )
}

fn too_large() -> ApiError {
    ApiError::new(
        ErrorCode::PayloadTooLarge,
        format!(
            "the body is too large: {} KiB at most ({} MiB for a catalog)",
            MAX_BODY_BYTES / 1024,
            MAX_CATALOG_BYTES / (1024 * 1024)
        ),
    )
}

fn json_rejection(rejection: JsonRejection) -> ApiError {
    match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => too_large(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => unsupported(),
        _ => ApiError::new(ErrorCode::MalformedRequest, rejection.body_text()),
    }
}

/// Path parameters; an id that does not parse names nothing, hence 404.
pub struct ApiPath<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiPath<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| ApiPath(value))
            // The rejection's own text quotes the raw value and the parser's
            // complaint about it; neither helps a client, and echoing input
            // back is how reflected content starts.
            .map_err(|_: PathRejection| {
                ApiError::new(
                    ErrorCode::NotFound,
                    "nothing has this id: ids in paths are UUIDs",
                )
            })
    }
}

/// Query parameters; a bad one is a validation failure (422).
pub struct ApiQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiQuery<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(value)| ApiQuery(value))
            .map_err(|rejection: QueryRejection| {
                ApiError::new(ErrorCode::ValidationFailed, rejection.body_text())
            })
    }
}
