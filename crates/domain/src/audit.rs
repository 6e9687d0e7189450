//! The audit trail of guest order POSTs: one row per request, whatever
//! became of it, so "what happened to my order?" always has an answer.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::code::ErrorCode;

/// `code` of an audit row for a request that placed an order.
pub const ACCEPTED: &str = "ACCEPTED";
/// `code` of an audit row for a request answered by replaying a stored response.
pub const REPLAYED: &str = "REPLAYED";

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub at: DateTime<Utc>,
    pub session_id: Uuid,
    /// The `x-request-id` of the request.
    pub request_id: String,
    /// Only when it was a valid client id.
    pub client_id: Option<String>,
    pub status: u16,
    /// `ACCEPTED`, `REPLAYED` or the error code.
    pub code: String,
    pub idempotent_replay: bool,
    pub order_id: Option<Uuid>,
}

impl AuditEntry {
    /// The row for a request that placed `order_id`, or replayed its placement.
    pub fn placed(
        at: DateTime<Utc>,
        session_id: Uuid,
        request_id: &str,
        client_id: Option<&str>,
        order_id: Uuid,
        replayed: bool,
    ) -> AuditEntry {
        AuditEntry {
            at,
            session_id,
            request_id: request_id.to_owned(),
            client_id: client_id.map(str::to_owned),
            status: 201,
            code: if replayed { REPLAYED } else { ACCEPTED }.to_owned(),
            idempotent_replay: replayed,
            order_id: Some(order_id),
        }
    }

    /// The row for a refused request.
    pub fn refused(
        at: DateTime<Utc>,
        session_id: Uuid,
        request_id: &str,
        client_id: Option<&str>,
        code: ErrorCode,
    ) -> AuditEntry {
        AuditEntry {
            at,
            session_id,
            request_id: request_id.to_owned(),
            client_id: client_id.map(str::to_owned),
            status: code.status(),
            code: code.as_str().to_owned(),
            idempotent_replay: false,
            order_id: None,
        }
    }
}
