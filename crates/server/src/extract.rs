//! Extractors whose rejections are problem+json like every other error.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::error::{ApiError, ErrorCode};

/// Most a request body may carry; every request but a catalog fits in far less.
pub const MAX_BODY_BYTES: usize = 16 * 1024;
/// Most a catalog PUT may carry: a 500-item menu with option groups in
/// three languages.
pub const MAX_CATALOG_BYTES: usize = 2 * 1024 * 1024;

/// A JSON body: 415 without a JSON content type, 413 past the size limit,
/// 400 when it does not parse into `T` (syntax, types, unknown fields).
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(value)) => Ok(ApiJson(value)),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

fn json_rejection(rejection: JsonRejection) -> ApiError {
    match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!(
                "the body is too large: {} KiB at most ({} MiB for a catalog)",
                MAX_BODY_BYTES / 1024,
                MAX_CATALOG_BYTES / (1024 * 1024)
            ),
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::new(
            ErrorCode::UnsupportedMediaType,
            "send the body as JSON with Content-Type: application/json",
        ),
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
