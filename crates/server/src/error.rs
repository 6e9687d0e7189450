//! The one error type of the HTTP layer and its RFC 9457 problem+json form.
//!
//! Every refusal, from a bad header to a database outage, leaves through
//! [`ApiError`]'s `IntoResponse`, so each carries the same shape and a stable
//! `code`. Server-side failures are logged in full here and reach the client
//! as a generic message only.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ordergate_domain::Rejection;
use ordergate_domain::validation::FieldError;
use ordergate_store::StoreError;
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// The stable, machine-readable reason of a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    MalformedRequest,
    Unauthorized,
    PinInvalid,
    NotFound,
    MethodNotAllowed,
    TableOccupied,
    StockNotTracked,
    PayloadTooLarge,
    UnsupportedMediaType,
    ValidationFailed,
    PinLocked,
    Internal,
    Unavailable,
    CatalogNotReady,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 14] = [
        ErrorCode::MalformedRequest,
        ErrorCode::Unauthorized,
        ErrorCode::PinInvalid,
        ErrorCode::NotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::TableOccupied,
        ErrorCode::StockNotTracked,
        ErrorCode::PayloadTooLarge,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::ValidationFailed,
        ErrorCode::PinLocked,
        ErrorCode::Internal,
        ErrorCode::Unavailable,
        ErrorCode::CatalogNotReady,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::MalformedRequest => "MALFORMED_REQUEST",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
            ErrorCode::PinInvalid => "PIN_INVALID",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            ErrorCode::TableOccupied => "TABLE_OCCUPIED",
            ErrorCode::StockNotTracked => "STOCK_NOT_TRACKED",
            ErrorCode::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            ErrorCode::UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            ErrorCode::ValidationFailed => "VALIDATION_FAILED",
            ErrorCode::PinLocked => "PIN_LOCKED",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::Unavailable => "UNAVAILABLE",
            ErrorCode::CatalogNotReady => "CATALOG_NOT_READY",
        }
    }

    pub fn status(self) -> StatusCode {
        match self {
            ErrorCode::MalformedRequest => StatusCode::BAD_REQUEST,
            ErrorCode::Unauthorized | ErrorCode::PinInvalid => StatusCode::UNAUTHORIZED,
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::TableOccupied | ErrorCode::StockNotTracked => StatusCode::CONFLICT,
            ErrorCode::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::ValidationFailed => StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::PinLocked => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Unavailable | ErrorCode::CatalogNotReady => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn title(self) -> &'static str {
        match self {
            ErrorCode::MalformedRequest => "Malformed request",
            ErrorCode::Unauthorized => "Staff authentication required",
            ErrorCode::PinInvalid => "Wrong or missing session PIN",
            ErrorCode::NotFound => "Not found",
            ErrorCode::MethodNotAllowed => "Method not allowed",
            ErrorCode::TableOccupied => "Table already has an active session",
            ErrorCode::StockNotTracked => "Stock is not tracked for this item",
            ErrorCode::PayloadTooLarge => "Request body too large",
            ErrorCode::UnsupportedMediaType => "Unsupported media type",
            ErrorCode::ValidationFailed => "Validation failed",
            ErrorCode::PinLocked => "Session PIN locked",
            ErrorCode::Internal => "Internal error",
            ErrorCode::Unavailable => "Service unavailable",
            ErrorCode::CatalogNotReady => "Catalog not ready",
        }
    }

    /// `urn:ordergate:problem:<kebab-code>`.
    fn problem_type(self) -> String {
        format!(
            "urn:ordergate:problem:{}",
            self.as_str().to_ascii_lowercase().replace('_', "-")
        )
    }
}

/// An RFC 9457 problem document.
#[derive(Debug, Serialize, ToSchema)]
pub struct Problem {
    #[serde(rename = "type")]
    #[schema(example = "urn:ordergate:problem:validation-failed")]
    pub problem_type: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// Stable machine-readable code, e.g. `VALIDATION_FAILED`.
    #[schema(example = "VALIDATION_FAILED")]
    pub code: String,
    /// Per-field problems, for `VALIDATION_FAILED`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
}

#[derive(Debug)]
pub struct ApiError {
    code: ErrorCode,
    detail: String,
    errors: Vec<FieldError>,
    extensions: Map<String, Value>,
    retry_after_secs: Option<u64>,
}

impl ApiError {
    pub fn new(code: ErrorCode, detail: impl Into<String>) -> Self {
        ApiError {
            code,
            detail: detail.into(),
            errors: Vec::new(),
            extensions: Map::new(),
            retry_after_secs: None,
        }
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// Adds an extension member to the problem body.
    pub fn with(mut self, member: &str, value: impl Serialize) -> Self {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        self.extensions.insert(member.to_owned(), value);
        self
    }

    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after_secs = Some(secs.max(1));
        self
    }

    pub fn not_found(what: &str) -> Self {
        ApiError::new(ErrorCode::NotFound, format!("{what} not found"))
    }

    pub fn validation(errors: Vec<FieldError>) -> Self {
        let mut e = ApiError::new(
            ErrorCode::ValidationFailed,
            "the request has invalid fields",
        );
        e.errors = errors;
        e
    }
}

impl From<Rejection> for ApiError {
    fn from(rejection: Rejection) -> Self {
        match rejection {
            Rejection::NotFound(what) => ApiError::not_found(what),
            Rejection::Validation(errors) => ApiError::validation(errors),
            Rejection::TableOccupied { table_label } => ApiError::new(
                ErrorCode::TableOccupied,
                format!("table {table_label} already has an active session; check it out first"),
            )
            .with("tableLabel", table_label),
            Rejection::CatalogNotReady => ApiError::new(
                ErrorCode::CatalogNotReady,
                "this shop has not published its catalog yet",
            )
            .retry_after(30),
            Rejection::StockNotTracked { item_id } => ApiError::new(
                ErrorCode::StockNotTracked,
                "this item is untracked (unlimited); set a stock count before restocking it",
            )
            .with("itemId", item_id),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Rejected(rejection) => rejection.into(),
            StoreError::Unavailable(source) => {
                tracing::warn!(error = %source, "database unavailable");
                ApiError::new(
                    ErrorCode::Unavailable,
                    "the service is temporarily unavailable; retry shortly",
                )
                .retry_after(5)
            }
            StoreError::Internal(source) => {
                tracing::error!(error = %source, "storage failure");
                ApiError::new(ErrorCode::Internal, "an internal error occurred")
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.code.status();
        let problem = Problem {
            problem_type: self.code.problem_type(),
            title: self.code.title().to_owned(),
            status: status.as_u16(),
            detail: self.detail,
            code: self.code.as_str().to_owned(),
            errors: self.errors,
        };
        let mut body = match serde_json::to_value(problem) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        for (member, value) in self.extensions {
            body.entry(member).or_insert(value);
        }
        let mut response = (status, axum::Json(Value::Object(body))).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(secs) = self.retry_after_secs {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if self.code == ErrorCode::Unauthorized {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clients branch on these pairs; changing one is a breaking change.
    #[test]
    fn every_code_keeps_its_status() {
        let pinned: Vec<(&str, u16)> = ErrorCode::ALL
            .iter()
            .map(|code| (code.as_str(), code.status().as_u16()))
            .collect();
        assert_eq!(
            pinned,
            [
                ("MALFORMED_REQUEST", 400),
                ("UNAUTHORIZED", 401),
                ("PIN_INVALID", 401),
                ("NOT_FOUND", 404),
                ("METHOD_NOT_ALLOWED", 405),
                ("TABLE_OCCUPIED", 409),
                ("STOCK_NOT_TRACKED", 409),
                ("PAYLOAD_TOO_LARGE", 413),
                ("UNSUPPORTED_MEDIA_TYPE", 415),
                ("VALIDATION_FAILED", 422),
                ("PIN_LOCKED", 429),
                ("INTERNAL", 500),
                ("UNAVAILABLE", 503),
                ("CATALOG_NOT_READY", 503),
            ]
        );
    }

    #[test]
    fn problem_response_is_typed_and_says_when_to_retry() {
        let response = ApiError::new(ErrorCode::PinLocked, "locked")
            .retry_after(42)
            .into_response();
        assert_eq!(response.status(), 429);
        assert_eq!(response.headers()[header::RETRY_AFTER], "42");
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "application/problem+json"
        );
        assert_eq!(
            ErrorCode::PinLocked.problem_type(),
            "urn:ordergate:problem:pin-locked"
        );
    }

    #[test]
    fn internal_failures_never_show_their_cause() {
        let error = ApiError::from(StoreError::Internal("no such column: secret_sql".into()));
        assert_eq!(error.code, ErrorCode::Internal);
        assert!(!error.detail.contains("secret_sql"));
    }
}
