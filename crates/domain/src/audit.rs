//! The audit trail of guest order POSTs: one row per request, whatever
//! became of it, so "what happened to my order?" always has an answer.

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::code::ErrorCode;

/// What became of an audited request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuditCode {
    /// It placed an order.
    Accepted,
    /// It was answered by replaying a stored response.
    Replayed,
    Refused(ErrorCode),
}

impl AuditCode {
    /// The name the log stores and the API sends: `ACCEPTED`, `REPLAYED`
    /// or the error code.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditCode::Accepted => "ACCEPTED",
            AuditCode::Replayed => "REPLAYED",
            AuditCode::Refused(code) => code.as_str(),
        }
    }

    pub fn parse(name: &str) -> Option<AuditCode> {
        [AuditCode::Accepted, AuditCode::Replayed]
            .into_iter()
            .chain(ErrorCode::ALL.into_iter().map(AuditCode::Refused))
            .find(|code| code.as_str() == name)
    }
}

impl Serialize for AuditCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "ACCEPTED"))]
    pub code: AuditCode,
    pub idempotent_replay: bool,
    pub order_id: Option<Uuid>,
    /// The staff member or device that sent a staff order
    /// (`account:hana`, `device:Pass`); absent for guests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
}

impl AuditEntry {
    /// The same row, naming the staff member or device that acted.
    pub fn by(mut self, actor: Option<&str>) -> AuditEntry {
        self.actor = actor.map(str::to_owned);
        self
    }

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
            code: if replayed {
                AuditCode::Replayed
            } else {
                AuditCode::Accepted
            },
            idempotent_replay: replayed,
            order_id: Some(order_id),
            actor: None,
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
            code: AuditCode::Refused(code),
            idempotent_replay: false,
            order_id: None,
            actor: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_codes_keep_their_stored_names() {
        assert_eq!(AuditCode::Accepted.as_str(), "ACCEPTED");
        assert_eq!(AuditCode::Replayed.as_str(), "REPLAYED");
        assert_eq!(
            AuditCode::parse("PIN_INVALID"),
            Some(AuditCode::Refused(ErrorCode::PinInvalid))
        );
        for code in ErrorCode::ALL {
            let refused = AuditCode::Refused(code);
            assert_eq!(AuditCode::parse(refused.as_str()), Some(refused));
        }
        assert_eq!(AuditCode::parse("MAYBE"), None);
    }
}
