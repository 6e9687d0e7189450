//! Who is calling: staff (the staff token) or the guests of one table
//! session (one of its guest tokens, or its PIN).

use axum::http::{HeaderMap, header};
use ordergate_domain::session::PinOutcome;
use ordergate_domain::session::{Session, guest_token_digest};
use ordergate_domain::staff::Duty;
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::StoreResult;
use sha2::{Digest, Sha256};
use std::future::Future;
use std::net::IpAddr;
use subtle::ConstantTimeEq;

use uuid::Uuid;

use crate::accounts::Actor;
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

    pub fn is_configured(&self) -> bool {
        self.0.is_some()
    }

    pub fn matches(&self, given: &str) -> bool {
        self.0
            .as_ref()
            .is_some_and(|expected| expected.matches(given))
    }
}

/// Who may read `/metrics`: anyone when it is public, otherwise staff or
/// the holder of the metrics token (a Prometheus scraper needs no more).
pub enum MetricsAccess {
    Public,
    Tokens(Option<Secret>),
}

impl MetricsAccess {
    /// Whether the request may read metrics without a staff credential:
    /// they are public, or it carries the metrics token.
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        match self {
            MetricsAccess::Public => true,
            MetricsAccess::Tokens(metrics_token) => bearer(headers)
                .zip(metrics_token.as_ref())
                .is_some_and(|(given, expected)| expected.matches(given)),
        }
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Principal {
    Staff,
    Guest,
}

/// What a call about one session carries to prove who it is. The PIN, when
/// sent, decides; otherwise the bearer token, which is the staff token or
/// one of the session's guest tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential<'a> {
    Pin(Option<&'a str>),
    Bearer(&'a str),
    /// An `Authorization` header that is no bearer token at all.
    Malformed,
}

impl<'a> Credential<'a> {
    pub fn of(headers: &'a HeaderMap) -> Credential<'a> {
        if let Some(pin) = headers.get(PIN_HEADER) {
            return Credential::Pin(Some(pin.to_str().unwrap_or_default()));
        }
        match bearer(headers) {
            Some(token) => Credential::Bearer(token),
            None if headers.contains_key(header::AUTHORIZATION) => Credential::Malformed,
            None => Credential::Pin(None),
        }
    }
}

/// The session a guest token opens, when it is the one in the path. A
/// token that opens nothing here — another table's, a forged one, one that
/// died at checkout — is 401, unless the path's session does not exist at
/// all (404, as for every caller).
pub async fn check_guest_token(
    state: &AppState,
    session_id: Uuid,
    token: &str,
) -> Result<Session, ApiError> {
    let now = state.now();
    let digest = guest_token_digest(token);
    let store = state.store();
    if let Some(session) = store.guest_token_session(session_id, &digest, now).await? {
        return Ok(session);
    }
    if store.get_session(session_id).await?.is_none() {
        return Err(ApiError::not_found("session"));
    }
    Err(ApiError::new(
        ErrorCode::Unauthorized,
        "this token is not valid for this table (a guest token ends at checkout): \
         send the table's PIN instead",
    ))
}

/// Who is calling about one session: its guests, or staff of its shop.
pub enum SessionCaller {
    Guest,
    Staff(Actor),
}

impl SessionCaller {
    pub fn principal(&self) -> Principal {
        match self {
            SessionCaller::Guest => Principal::Guest,
            SessionCaller::Staff(_) => Principal::Staff,
        }
    }
}

/// Authorises a call on one session: staff of its shop whose role has
/// `duty` (403 for others), or the session's guests by a guest token or
/// the PIN. Unknown sessions are 404 before any PIN is judged.
pub async fn session_access(
    state: &AppState,
    headers: &HeaderMap,
    address: IpAddr,
    session_id: Uuid,
    duty: Duty,
) -> Result<(Session, SessionCaller), ApiError> {
    match Credential::of(headers) {
        Credential::Bearer(token) if Actor::claims_staff(state, token) => {
            let actor = Actor::live(state, token).await?;
            let session = state
                .store()
                .get_session(session_id)
                .await?
                .ok_or_else(|| ApiError::not_found("session"))?;
            actor.require(session.shop_id, duty)?;
            Ok((session, SessionCaller::Staff(actor)))
        }
        Credential::Bearer(token) => {
            let session = check_guest_token(state, session_id, token).await?;
            Ok((session, SessionCaller::Guest))
        }
        Credential::Malformed => Err(ApiError::new(
            ErrorCode::Unauthorized,
            "send Authorization: Bearer <token>, or the table's PIN in X-Session-PIN",
        )),
        Credential::Pin(pin) => {
            let session = judge_pin(state, address, session_id, pin).await?;
            Ok((session, SessionCaller::Guest))
        }
    }
}

/// Judges a guest's PIN for a session, under both locks: the table's (a few
/// wrong PINs lock it) and the address's (a sweep over many tables from one
/// address is stopped too). A missing PIN is refused without being judged;
/// so is any PIN for a session checked out longer ago than its grace.
pub async fn judge_pin(
    state: &AppState,
    address: IpAddr,
    session_id: Uuid,
    pin: Option<&str>,
) -> Result<Session, ApiError> {
    let policy = state.pin_policy();
    judge_pin_with(state, address, session_id, pin, |now| {
        state.store().verify_pin(session_id, pin, policy, now)
    })
    .await
}

/// [`judge_pin`], with the store call that judges and records the attempt
/// (and whatever it records with it) given by the caller.
pub async fn judge_pin_with<Fut>(
    state: &AppState,
    address: IpAddr,
    session_id: Uuid,
    pin: Option<&str>,
    verify: impl FnOnce(Timestamp) -> Fut,
) -> Result<Session, ApiError>
where
    Fut: Future<Output = StoreResult<PinOutcome>>,
{
    let attempt = match pin {
        Some(pin) => Some(state.limits().pin_attempt(address, session_id, pin).await?),
        None => None,
    };
    match verify(state.now()).await? {
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
        PinOutcome::Gone => Err(Rejection::SessionClosed.into()),
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
    fn only_the_exact_bearer_token_is_the_staff_token() {
        let token = StaffToken::new(Some("s3cret"));
        for given in ["Bearer s3cret", "bearer s3cret"] {
            assert!(bearer(&with_auth(given)).is_some_and(|t| token.matches(t)));
        }
        for wrong in [
            "Bearer s3cre",
            "Bearer s3cret!",
            "Basic s3cret",
            "s3cret",
            "Bearer ",
        ] {
            assert!(
                !bearer(&with_auth(wrong)).is_some_and(|t| token.matches(t)),
                "{wrong}"
            );
        }
        assert!(bearer(&HeaderMap::new()).is_none());
    }

    #[test]
    fn metrics_take_the_metrics_token_unless_public() {
        let access = MetricsAccess::Tokens(Some(Secret::new("scrape-token-0123456")));
        assert!(access.admits(&with_auth("Bearer scrape-token-0123456")));
        assert!(!access.admits(&with_auth("Bearer scrape-token-012345")));
        assert!(!access.admits(&HeaderMap::new()));
        assert!(!MetricsAccess::Tokens(None).admits(&with_auth("Bearer ")));
        assert!(MetricsAccess::Public.admits(&HeaderMap::new()));
    }

    #[test]
    fn without_a_configured_token_nobody_is_the_administrator() {
        assert!(!StaffToken::new(None).matches("anything"));
    }
}
