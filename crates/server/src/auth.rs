//! Who is calling: staff (bearer token) or the guests of one table session
//! (its PIN).

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use ordergate_domain::Rejection;
use ordergate_domain::session::Session;
use ordergate_store::PinOutcome;
use sha2::{Digest, Sha256};
use std::net::IpAddr;
use subtle::ConstantTimeEq;

use uuid::Uuid;

use crate::app::AppState;
use crate::error::{ApiError, ErrorCode};

pub const PIN_HEADER: &str = "x-session-pin";

/// A configured secret, kept as its digest so that comparing it takes the
/// same time whatever the candidate's length or first wrong byte.
pub struct Secret([u8; 32]);

impl Secret {
    pub fn new(secret: &str) -> Secret {
        Secret(digest(secret))
    }

    pub fn matches(&self, given: &str) -> bool {
        bool::from(digest(given).ct_eq(&self.0))
    }
}

/// The staff token; without one nobody is staff.
pub struct StaffToken(Option<Secret>);

impl StaffToken {
    pub fn new(token: Option<&str>) -> StaffToken {
        StaffToken(token.map(Secret::new))
    }

    pub fn check(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let Some(expected) = &self.0 else {
            return Err(ApiError::new(
                ErrorCode::Unauthorized,
                "staff access is disabled: the server was started without a staff token",
            ));
        };
        let Some(given) = bearer(headers) else {
            return Err(ApiError::new(
                ErrorCode::Unauthorized,
                "send the staff token as Authorization: Bearer <token>",
            ));
        };
        if expected.matches(given) {
            Ok(())
        } else {
            Err(ApiError::new(
                ErrorCode::Unauthorized,
                "the staff token is not valid",
            ))
        }
    }
}

/// Who may read `/metrics`: anyone when it is public, otherwise staff or
/// the holder of the metrics token (a Prometheus scraper needs no more).
pub enum MetricsAccess {
    Public,
    Tokens(Option<Secret>),
}

impl MetricsAccess {
    pub fn check(&self, headers: &HeaderMap, staff: &StaffToken) -> Result<(), ApiError> {
        let MetricsAccess::Tokens(metrics_token) = self else {
            return Ok(());
        };
        let scraper = bearer(headers)
            .zip(metrics_token.as_ref())
            .is_some_and(|(given, expected)| expected.matches(given));
        if scraper {
            return Ok(());
        }
        staff.check(headers).map_err(|_| {
            ApiError::new(
                ErrorCode::Unauthorized,
                "send the metrics token or the staff token as Authorization: Bearer <token>",
            )
        })
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// The bearer token of a request; an empty one is no credential at all.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Proof that the request carries the staff token.
pub struct StaffAuth;

impl FromRequestParts<AppState> for StaffAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        state
            .staff_token()
            .check(&parts.headers)
            .map(|()| StaffAuth)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Principal {
    Staff,
    Guest,
}

/// Authorises a call on one session: staff when an `Authorization` header is
/// present, otherwise the session's guests by PIN. Unknown sessions are 404
/// before any PIN is judged.
pub async fn session_access(
    state: &AppState,
    headers: &HeaderMap,
    address: IpAddr,
    session_id: Uuid,
) -> Result<(Session, Principal), ApiError> {
    if headers.contains_key(header::AUTHORIZATION) {
        state.staff_token().check(headers)?;
        let session = state
            .store()
            .get_session(session_id)
            .await?
            .ok_or_else(|| ApiError::not_found("session"))?;
        return Ok((session, Principal::Staff));
    }
    let pin = headers
        .get(PIN_HEADER)
        .map(|v| v.to_str().unwrap_or_default());
    let session = judge_pin(state, address, session_id, pin).await?;
    Ok((session, Principal::Guest))
}

/// Judges a guest's PIN for a session, under both locks: the table's (a few
/// wrong PINs lock it) and the address's (a sweep over many tables from one
/// address is stopped too). A missing PIN is refused without being judged.
pub async fn judge_pin(
    state: &AppState,
    address: IpAddr,
    session_id: Uuid,
    pin: Option<&str>,
) -> Result<Session, ApiError> {
    let attempt = match pin {
        Some(pin) => Some(state.limits().pin_attempt(address, session_id, pin).await?),
        None => None,
    };
    let now = ordergate_domain::now();
    let outcome = state
        .store()
        .verify_pin(session_id, pin, state.pin_policy(), now)
        .await?;
    match outcome {
        PinOutcome::Accepted(session) => {
            if let Some(attempt) = attempt {
                attempt.right(state.limits());
            }
            Ok(session)
        }
        PinOutcome::Invalid => {
            if let Some(attempt) = attempt {
                attempt.wrong(address);
            }
            Err(Rejection::PinInvalid.into())
        }
        PinOutcome::Locked { until } => Err(Rejection::PinLocked { until }.into()),
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn with_auth(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn only_the_exact_bearer_token_passes() {
        let token = StaffToken::new(Some("s3cret"));
        assert!(token.check(&with_auth("Bearer s3cret")).is_ok());
        assert!(token.check(&with_auth("bearer s3cret")).is_ok());
        for wrong in [
            "Bearer s3cre",
            "Bearer s3cret!",
            "Basic s3cret",
            "s3cret",
            "Bearer ",
        ] {
            assert!(token.check(&with_auth(wrong)).is_err(), "{wrong}");
        }
        assert!(token.check(&HeaderMap::new()).is_err());
    }

    #[test]
    fn metrics_take_either_token_unless_public() {
        let staff = StaffToken::new(Some("staff-token-0123456"));
        let access = MetricsAccess::Tokens(Some(Secret::new("scrape-token-0123456")));
        assert!(
            access
                .check(&with_auth("Bearer scrape-token-0123456"), &staff)
                .is_ok()
        );
        assert!(
            access
                .check(&with_auth("Bearer staff-token-0123456"), &staff)
                .is_ok()
        );
        assert!(
            access
                .check(&with_auth("Bearer scrape-token-012345"), &staff)
                .is_err()
        );
        assert!(access.check(&HeaderMap::new(), &staff).is_err());
        assert!(
            MetricsAccess::Tokens(None)
                .check(&with_auth("Bearer "), &staff)
                .is_err()
        );
        assert!(
            MetricsAccess::Public
                .check(&HeaderMap::new(), &staff)
                .is_ok()
        );
    }

    #[test]
    fn without_a_configured_token_nobody_is_staff() {
        let token = StaffToken::new(None);
        assert!(token.check(&with_auth("Bearer anything")).is_err());
    }
}
