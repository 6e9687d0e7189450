//! `Idempotency-Key` handling shared by every POST that honours it: the
//! claim a write carries into its transaction, the in-flight join that
//! makes a retry wait for the original instead of racing it, and the
//! response that may be a replay.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ordergate_domain::idempotency::{Fingerprint, IdempotencyKey, Scope};
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::{Answer, Claim, StaffWrite, StoredResponse};
use serde::Serialize;
use tokio::sync::watch;
use uuid::Uuid;

use crate::app::AppState;
use crate::error::{ApiError, ErrorCode};

pub const KEY_HEADER: HeaderName = HeaderName::from_static("idempotency-key");
pub const REPLAYED_HEADER: HeaderName = HeaderName::from_static("idempotent-replayed");

/// The raw value of a header, if it is there; an opaque (non-ASCII) value
/// reads as empty, which every parser refuses.
pub fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).map(|v| v.to_str().unwrap_or_default())
}

/// A staff write that honours an `Idempotency-Key`, with the ids its path
/// names as parsed. Its scope is built from these, never from the raw path:
/// ids in paths match in any case, so text would let `/shops/ABC…/…` and
/// `/shops/abc…/…` be two scopes and one key act twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaffOperation {
    CreateShop,
    CreateTable { shop_id: Uuid },
    CreatePrinter { shop_id: Uuid },
    OpenSession { shop_id: Uuid },
    Restock { shop_id: Uuid, item_id: Uuid },
    StaffOrder { session_id: Uuid },
    SetOrderStatus { order_id: Uuid },
    RecallOrder { order_id: Uuid },
    Checkout { session_id: Uuid },
}

impl StaffOperation {
    /// The staff principal, the method and the canonical path (lowercase
    /// ids): the same text earlier versions stored for lowercase paths, so
    /// keys recorded before an upgrade still replay.
    fn scope(self) -> Scope {
        let path = match self {
            StaffOperation::CreateShop => "/api/v1/shops".to_owned(),
            StaffOperation::CreateTable { shop_id } => format!("/api/v1/shops/{shop_id}/tables"),
            StaffOperation::CreatePrinter { shop_id } => {
                format!("/api/v1/shops/{shop_id}/printers")
            }
            StaffOperation::OpenSession { shop_id } => format!("/api/v1/shops/{shop_id}/sessions"),
            StaffOperation::Restock { shop_id, item_id } => {
                format!("/api/v1/shops/{shop_id}/inventory/{item_id}/restock")
            }
            StaffOperation::StaffOrder { session_id } => {
                format!("/api/v1/sessions/{session_id}/staff-orders")
            }
            StaffOperation::SetOrderStatus { order_id } => {
                format!("/api/v1/orders/{order_id}/status")
            }
            StaffOperation::RecallOrder { order_id } => format!("/api/v1/orders/{order_id}/recall"),
            StaffOperation::Checkout { session_id } => {
                format!("/api/v1/sessions/{session_id}/checkout")
            }
        };
        Scope::staff_post(&path)
    }
}

/// The claim of a staff POST: `None` without a key.
pub fn staff_claim(
    headers: &HeaderMap,
    operation: StaffOperation,
    request: &impl Serialize,
    expires_at: Timestamp,
) -> Result<Option<Claim>, ApiError> {
    let Some(raw) = header_text(headers, KEY_HEADER.as_str()) else {
        return Ok(None);
    };
    let key = IdempotencyKey::parse(Some(raw)).map_err(key_error)?;
    Ok(Some(Claim {
        scope: operation.scope(),
        key,
        fingerprint: Fingerprint::of_json(request),
        expires_at,
    }))
}

pub fn key_error(code: ErrorCode) -> ApiError {
    let detail = match code {
        ErrorCode::IdempotencyKeyMissing => {
            "send an Idempotency-Key header: a UUID v4 kept for every retry of this order"
        }
        _ => "the Idempotency-Key must be a UUID v4, bare or as a quoted string",
    };
    ApiError::new(code, detail)
}

/// A response, first sent or replayed.
pub struct Sent {
    pub response: StoredResponse,
    pub replayed: bool,
}

impl Sent {
    pub fn fresh(response: StoredResponse) -> Sent {
        Sent {
            response,
            replayed: false,
        }
    }

    /// A JSON response of `status` for `value`, as stored for replays.
    pub fn render(
        status: StatusCode,
        value: &impl Serialize,
        location: Option<String>,
    ) -> StoredResponse {
        StoredResponse {
            status: status.as_u16(),
            body: serde_json::to_string(value).unwrap_or_default(),
            location,
        }
    }
}

impl From<Answer> for Sent {
    fn from(answer: Answer) -> Sent {
        match answer {
            Answer::Fresh(response) => Sent::fresh(response),
            Answer::Replayed(response) => Sent {
                response,
                replayed: true,
            },
        }
    }
}

impl IntoResponse for Sent {
    fn into_response(self) -> Response {
        let StoredResponse {
            status,
            body,
            location,
        } = self.response;
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
        let mut response =
            (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
        let headers = response.headers_mut();
        if let Some(location) = location.and_then(|l| HeaderValue::from_str(&l).ok()) {
            headers.insert(header::LOCATION, location);
        }
        if self.replayed {
            headers.insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
        }
        response
    }
}

/// Requests being processed in this process, by scope and key. A second
/// request with the same key waits for the first to finish (the store then
/// replays its stored outcome) rather than racing it into the database.
/// Across processes the database decides; this only spares it the race.
#[derive(Default)]
pub struct InFlight {
    running: Mutex<HashMap<String, watch::Receiver<()>>>,
}

/// Marks a key in flight until dropped; dropping it wakes every waiter.
struct Running {
    registry: Arc<InFlight>,
    key: String,
    _done: watch::Sender<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(mut running) = self.registry.running.lock() {
            running.remove(&self.key);
        }
    }
}

impl InFlight {
    /// Runs `work` for `key`: at once if no request with that key is running
    /// here, after it finishes otherwise. `None` when that request is still
    /// running after `wait` (the caller answers 409 `REQUEST_IN_PROGRESS`).
    pub async fn run<Fut: Future>(
        self: &Arc<Self>,
        key: String,
        wait: Duration,
        work: impl FnOnce() -> Fut,
    ) -> Option<Fut::Output> {
        let ahead = {
            let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
            match running.get(&key) {
                Some(done) => Err(done.clone()),
                None => {
                    let (done, finished) = watch::channel(());
                    running.insert(key.clone(), finished);
                    Ok(Running {
                        registry: Arc::clone(self),
                        key,
                        _done: done,
                    })
                }
            }
        };
        match ahead {
            Ok(_running) => Some(work().await),
            Err(mut finished) => {
                // The sender is dropped when the first request finishes.
                let still_running = tokio::time::timeout(wait, finished.changed())
                    .await
                    .is_err();
                if still_running {
                    return None;
                }
                Some(work().await)
            }
        }
    }
}

/// Runs a staff write, under its claim when the request has a key (replay,
/// mismatch, in-flight join, response stored with the write). Either way
/// the store renders the response with the write's own `render`, so a
/// replay is byte for byte what the first request got.
pub async fn staff_write(
    state: &AppState,
    claim: Option<Claim>,
    write: StaffWrite,
) -> Result<Sent, ApiError> {
    let store = state.store();
    let Some(claim) = claim else {
        return Ok(Sent::from(
            store.staff_write(write, None, state.now()).await?,
        ));
    };
    let in_flight_key = claim.scoped_key();
    state
        .in_flight()
        .run(in_flight_key, state.settings().inflight_wait(), || async {
            Ok(Sent::from(
                store.staff_write(write, Some(claim), state.now()).await?,
            ))
        })
        .await
        .unwrap_or_else(|| Err(Rejection::RequestInProgress.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staff_scopes_are_canonical_and_keep_their_stored_form() {
        let shop_id: Uuid = "6F9619FF-8B86-D011-B42D-00C04FC964FF".parse().unwrap();
        let item_id = Uuid::nil();
        assert_eq!(
            StaffOperation::Restock { shop_id, item_id }
                .scope()
                .as_str(),
            "staff POST /api/v1/shops/6f9619ff-8b86-d011-b42d-00c04fc964ff/inventory/\
             00000000-0000-0000-0000-000000000000/restock"
        );
        assert_eq!(
            StaffOperation::CreateShop.scope().as_str(),
            "staff POST /api/v1/shops"
        );
    }

    #[tokio::test]
    async fn a_second_request_waits_for_the_first_and_then_runs() {
        let registry = Arc::new(InFlight::default());
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let first = {
            let registry = Arc::clone(&registry);
            tokio::spawn(async move {
                registry
                    .run("k".into(), Duration::from_secs(5), || async {
                        released.await.unwrap();
                        "first"
                    })
                    .await
            })
        };
        tokio::task::yield_now().await;
        while registry.running.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
        let second = {
            let registry = Arc::clone(&registry);
            tokio::spawn(async move {
                registry
                    .run("k".into(), Duration::from_secs(5), || async { "second" })
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!second.is_finished(), "the second waits for the first");
        release.send(()).unwrap();
        assert_eq!(first.await.unwrap(), Some("first"));
        assert_eq!(second.await.unwrap(), Some("second"));
        assert!(registry.running.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn waiting_past_the_limit_gives_up() {
        let registry = Arc::new(InFlight::default());
        let _running = {
            let mut running = registry.running.lock().unwrap();
            let (done, finished) = watch::channel(());
            running.insert("k".into(), finished);
            done
        };
        let outcome = registry
            .run("k".into(), Duration::from_millis(20), || async {})
            .await;
        assert_eq!(outcome, None);
    }
}
