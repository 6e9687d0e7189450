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

/// The staff token, kept as a digest so that comparing it takes the same
/// time whatever the candidate's length or first wrong byte.
pub struct StaffToken(Option<[u8; 32]>);

impl StaffToken {
    pub fn new(token: Option<&str>) -> StaffToken {
        StaffToken(token.map(digest))
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
        if bool::from(digest(given).ct_eq(expected)) {
            Ok(())
        } else {
            Err(ApiError::new(
                ErrorCode::Unauthorized,
                "the staff token is not valid",
            ))
        }
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
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
/// address is stopped too).
pub async fn judge_pin(
    state: &AppState,
    address: IpAddr,
    session_id: Uuid,
    pin: Option<&str>,
) -> Result<Session, ApiError> {
    state.limits().check_pin_attempt(address)?;
    let now = ordergate_domain::now();
    match state
        .store()
        .verify_pin(session_id, pin, state.pin_policy(), now)
        .await?
    {
        PinOutcome::Accepted(session) => Ok(session),
        PinOutcome::Invalid => {
            if pin.is_some() {
                state.limits().pin_failed(address);
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
    fn without_a_configured_token_nobody_is_staff() {
        let token = StaffToken::new(None);
        assert!(token.check(&with_auth("Bearer anything")).is_err());
    }
}
