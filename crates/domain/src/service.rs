//! Service requests: a table calling for staff, or asking for the bill,
//! from the guest page. Each stays open until staff acknowledge it; a
//! second call of the same kind while one is open is that one (a guest
//! tapping "call staff" twice calls staff once).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::Timestamp;
use crate::session::Session;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum ServiceKind {
    /// Someone to come to the table.
    Call,
    /// The bill.
    Bill,
}

impl ServiceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ServiceKind::Call => "call",
            ServiceKind::Bill => "bill",
        }
    }

    pub fn parse(s: &str) -> Option<ServiceKind> {
        [ServiceKind::Call, ServiceKind::Bill]
            .into_iter()
            .find(|kind| kind.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum ServiceStatus {
    Open,
    /// Staff saw it and are on the way.
    Acknowledged,
}

impl ServiceStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ServiceStatus::Open => "open",
            ServiceStatus::Acknowledged => "acknowledged",
        }
    }

    pub fn parse(s: &str) -> Option<ServiceStatus> {
        [ServiceStatus::Open, ServiceStatus::Acknowledged]
            .into_iter()
            .find(|status| status.as_str() == s)
    }
}

/// Body of `POST /sessions/{sessionId}/service-requests`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewServiceRequest {
    pub kind: ServiceKind,
}

/// A service request as stored, sent, and announced on the streams.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ServiceRequest {
    pub request_id: Uuid,
    pub shop_id: Uuid,
    pub session_id: Uuid,
    pub table_label: String,
    pub kind: ServiceKind,
    pub status: ServiceStatus,
    pub created_at: DateTime<Utc>,
    pub acknowledged_at: Option<DateTime<Utc>>,
}

/// What a guest's call becomes, given the one of its kind already open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// A new request, to be stored and announced.
    New(ServiceRequest),
    /// The open one again: nothing changes.
    AlreadyOpen(ServiceRequest),
}

impl NewServiceRequest {
    /// The call from `session` now, the open request of its kind (if any)
    /// as read under the session's lock.
    pub fn call(self, session: &Session, open: Option<ServiceRequest>, now: Timestamp) -> Call {
        match open {
            Some(open) => Call::AlreadyOpen(open),
            None => Call::New(ServiceRequest {
                request_id: Uuid::now_v7(),
                shop_id: session.shop_id,
                session_id: session.session_id,
                table_label: session.table_label.clone(),
                kind: self.kind,
                status: ServiceStatus::Open,
                created_at: now,
                acknowledged_at: None,
            }),
        }
    }
}

impl ServiceRequest {
    /// The request once acknowledged at `now`; `None` when it already was
    /// (acknowledging twice changes nothing).
    pub fn acknowledged(&self, now: Timestamp) -> Option<ServiceRequest> {
        (self.status == ServiceStatus::Open).then(|| ServiceRequest {
            status: ServiceStatus::Acknowledged,
            acknowledged_at: Some(now),
            ..self.clone()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::SessionStatus;

    fn session() -> Session {
        Session {
            session_id: Uuid::from_u128(1),
            shop_id: Uuid::from_u128(2),
            table_label: "T4".into(),
            pin: "123456".into(),
            status: SessionStatus::Active,
            opened_at: crate::now(),
            closed_at: None,
            pin_failures: 0,
            pin_locked_until: None,
        }
    }

    #[test]
    fn a_call_while_one_is_open_is_that_one_and_an_ack_happens_once() {
        let now = crate::now();
        let Call::New(first) = NewServiceRequest {
            kind: ServiceKind::Bill,
        }
        .call(&session(), None, now) else {
            panic!("expected a new request");
        };
        assert_eq!(
            (first.table_label.as_str(), first.kind, first.status),
            ("T4", ServiceKind::Bill, ServiceStatus::Open)
        );
        let again = NewServiceRequest {
            kind: ServiceKind::Bill,
        }
        .call(&session(), Some(first.clone()), now);
        assert_eq!(again, Call::AlreadyOpen(first.clone()));
        let acked = first.acknowledged(now).unwrap();
        assert_eq!(
            (acked.status, acked.acknowledged_at),
            (ServiceStatus::Acknowledged, Some(now))
        );
        assert_eq!(acked.acknowledged(now), None);
        assert_eq!(ServiceKind::parse("call"), Some(ServiceKind::Call));
        assert_eq!(
            ServiceStatus::parse("acknowledged"),
            Some(ServiceStatus::Acknowledged)
        );
    }
}
