//! The one error type of the HTTP layer and its RFC 9457 problem+json form.
//!
//! Every refusal, from a bad header to a database outage, leaves through
//! [`ApiError`]'s `IntoResponse`, so each carries the same shape and a stable
//! `code`. Server-side failures are logged in full here and reach the client
//! as a generic message only.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
pub use ordergate_domain::code::ErrorCode;
use ordergate_domain::validation::FieldError;
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::StoreError;
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::app::AppState;

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
    /// Per-field problems, for `VALIDATION_FAILED`; for `INVALID_OPTIONS`
    /// each also names the option group it breaks (`groupId`, `null` for an
    /// option the item does not offer).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
}

#[derive(Debug)]
pub struct ApiError {
    code: ErrorCode,
    detail: String,
    errors: Vec<FieldError>,
    extensions: Map<String, Value>,
    retry_after: Option<RetryAfter>,
}

/// When a refused client may try again.
#[derive(Debug, Clone, Copy)]
enum RetryAfter {
    Seconds(u64),
    /// Until a moment of the server's clock: turned into seconds by
    /// [`retry_after_by_clock`], which knows what time it is.
    At(Timestamp),
}

/// A response's pending `Retry-After`, as a moment.
#[derive(Debug, Clone, Copy)]
struct RetryAt(Timestamp);

impl ApiError {
    pub fn new(code: ErrorCode, detail: impl Into<String>) -> Self {
        ApiError {
            code,
            detail: detail.into(),
            errors: Vec::new(),
            extensions: Map::new(),
            retry_after: None,
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
        self.retry_after = Some(RetryAfter::Seconds(secs.max(1)));
        self
    }

    /// `Retry-After` until `until`, by the server's clock.
    pub fn retry_at(mut self, until: Timestamp) -> Self {
        self.retry_after = Some(RetryAfter::At(until));
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
        let error = ApiError::new(rejection.code(), detail(&rejection));
        match rejection {
            Rejection::Validation(errors) => ApiError::validation(errors),
            Rejection::TableOccupied { table_label } => error.with("tableLabel", table_label),
            Rejection::TableNameTaken { name } | Rejection::PrinterNameTaken { name } => {
                error.with("name", name)
            }
            Rejection::UsernameTaken { username } => error.with("username", username),
            Rejection::CatalogNotReady => error.retry_after(30),
            Rejection::StockNotTracked { item_id } => error.with("itemId", item_id),
            Rejection::PinLocked { until } => error.with("scope", "table").retry_at(until),
            Rejection::DuplicatePayload { original } => error
                .with("originalOrderId", original.order_id)
                .with("originalOrder", &original),
            Rejection::CooldownActive { until } | Rejection::SessionRateLimited { until } => {
                error.retry_at(until)
            }
            Rejection::RequestInProgress | Rejection::SessionBusy => error.retry_after(1),
            Rejection::OutOfStock { shortages } => error.with("shortages", shortages),
            Rejection::UnknownMenuItem { line, menu_item_id }
            | Rejection::ItemUnavailable { line, menu_item_id } => error
                .with("field", format!("items[{line}].menuItemId"))
                .with("menuItemId", menu_item_id),
            Rejection::VersionConflict { current }
            | Rejection::CatalogVersionConflict { current } => {
                error.with("currentVersion", current)
            }
            Rejection::InvalidTransition { from, to } => error.with("from", from).with("to", to),
            Rejection::RecallExpired { window_secs } => {
                error.with("recallWindowSeconds", window_secs)
            }
            Rejection::NothingToRecall { status } => error.with("orderStatus", status),
            Rejection::InvalidTopping {
                line, topping_id, ..
            } => error
                .with("field", format!("items[{line}].toppingIds"))
                .with("toppingId", topping_id),
            Rejection::InvalidOptions { errors } => error.with("errors", errors),
            Rejection::NotFound(_)
            | Rejection::PinInvalid
            | Rejection::IdempotencyKeyReused
            | Rejection::SessionClosed => error,
        }
    }
}

/// What a refusal tells the person behind the client, in a sentence.
fn detail(rejection: &Rejection) -> String {
    match rejection {
        Rejection::NotFound(what) => format!("{what} not found"),
        Rejection::Validation(_) => "the request has invalid fields".into(),
        Rejection::TableOccupied { table_label } => {
            format!("table {table_label} already has an active session; check it out first")
        }
        Rejection::TableNameTaken { name } => {
            format!("this shop has a table called {name} already; give the new one another name")
        }
        Rejection::UsernameTaken { username } => format!(
            "an account is called {username} already; add it without a password to give it a role here"
        ),
        Rejection::PrinterNameTaken { name } => {
            format!("this shop has a printer called {name} already; give the new one another name")
        }
        Rejection::CatalogNotReady => "this shop has not published its catalog yet".into(),
        Rejection::StockNotTracked { .. } => {
            "this item is untracked (unlimited); set a stock count before restocking it".into()
        }
        Rejection::PinInvalid => {
            "send this table's six-digit PIN in the X-Session-PIN header".into()
        }
        Rejection::PinLocked { .. } => {
            "too many wrong PINs for this table; ask staff or try again later".into()
        }
        Rejection::IdempotencyKeyReused => "this Idempotency-Key was used for a different \
            request; use a new key for a new order"
            .into(),
        Rejection::SessionClosed => {
            "this table has been checked out; ask staff to open it again".into()
        }
        Rejection::DuplicatePayload { .. } => "this device placed the same order moments ago; \
            send allowRepeat: true to order it again"
            .into(),
        Rejection::CooldownActive { .. } => {
            "this device just placed an order; wait a moment".into()
        }
        Rejection::SessionRateLimited { .. } => {
            "this table has placed as many orders as it may for now; ask staff, or wait".into()
        }
        Rejection::RequestInProgress => "a request with this Idempotency-Key is still being \
            processed; retry in a moment"
            .into(),
        Rejection::SessionBusy => "the table is busy with other orders; retry shortly".into(),
        Rejection::OutOfStock { .. } => "not enough stock for this order; nothing was taken".into(),
        Rejection::UnknownMenuItem { line, .. } => {
            format!("line {line} names no item of this menu")
        }
        Rejection::ItemUnavailable { line, .. } => {
            format!("line {line} names an item no longer on the menu")
        }
        Rejection::CatalogVersionConflict { current } => format!(
            "the catalog is now at version {current}: someone else saved it; reload, \
             apply your changes again and save"
        ),
        Rejection::VersionConflict { current } => {
            format!("the order is now at version {current}; read it again before changing it")
        }
        Rejection::InvalidTransition { from, to } => {
            format!("an order that is {from} cannot become {to}")
        }
        Rejection::RecallExpired { window_secs } => format!(
            "a recall undoes a move for {window_secs} seconds after it; move the order on instead"
        ),
        Rejection::NothingToRecall { status } => format!(
            "this {status} order has no move to undo: it never moved, was cancelled, or was \
             recalled already"
        ),
        Rejection::InvalidTopping { line, reason, .. } => format!("line {line}: {reason}"),
        Rejection::InvalidOptions { errors } => match errors.as_slice() {
            [only] => only.message.clone(),
            _ => "some choices do not fit their items' option groups; see errors".into(),
        },
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
        let status =
            StatusCode::from_u16(self.code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
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
        let retry_at = match self.retry_after {
            Some(RetryAfter::Seconds(secs)) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
                None
            }
            Some(RetryAfter::At(until)) => Some(RetryAt(until)),
            None => None,
        };
        if self.code == ErrorCode::Unauthorized {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(retry_at) = retry_at {
            response.extensions_mut().insert(retry_at);
        }
        response
    }
}

/// Gives a refusal that holds until a moment its `Retry-After`: the whole
/// seconds from now to then, rounded up, by the server's clock.
pub async fn retry_after_by_clock(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let mut response = next.run(request).await;
    if let Some(RetryAt(until)) = response.extensions_mut().remove::<RetryAt>() {
        let millis = (until - state.now()).num_milliseconds().max(0) as u64;
        let secs = millis.div_ceil(1000).max(1);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_details_read_as_one_sentence() {
        assert_eq!(
            detail(&Rejection::IdempotencyKeyReused),
            "this Idempotency-Key was used for a different request; use a new key for a new order"
        );
        assert_eq!(
            detail(&Rejection::RequestInProgress),
            "a request with this Idempotency-Key is still being processed; retry in a moment"
        );
        let original = Box::new(
            serde_json::from_value(serde_json::json!({
                "orderId": "00000000-0000-0000-0000-000000000001",
                "shopId": "00000000-0000-0000-0000-000000000002",
                "sessionId": "00000000-0000-0000-0000-000000000003",
                "tableLabel": "T1", "ticketNumber": 1, "status": "placed", "source": "guest",
                "clientId": null, "items": [], "note": "", "total": 0,
                "createdAt": "2026-12-01T12:00:00Z", "version": 1
            }))
            .unwrap(),
        );
        assert_eq!(
            detail(&Rejection::DuplicatePayload { original }),
            "this device placed the same order moments ago; send allowRepeat: true to order it again"
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
