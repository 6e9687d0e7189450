//! Staff accounts on the server's side: passwords hashed and checked with
//! Argon2id (off the async threads: a hash takes tens of milliseconds by
//! design), and who a staff credential is.

use std::sync::LazyLock;

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use axum::extract::FromRequestParts;
use axum::http::HeaderMap;
use axum::http::request::Parts;
use ordergate_domain::staff::{Account, Membership, Role, staff_token_digest};
use uuid::Uuid;

use crate::app::AppState;
use crate::auth::bearer;
use crate::error::{ApiError, ErrorCode};

/// Argon2id with the crate's defaults (19 MiB, 2 passes, 1 lane): OWASP's
/// recommended minimum.
fn argon2() -> Argon2<'static> {
    Argon2::default()
}

/// The PHC string of `password` under a fresh random salt.
pub async fn hash_password(password: String) -> Result<String, ApiError> {
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::encode_b64(&rand::random::<[u8; 16]>())
            .map_err(|e| internal(&e.to_string()))?;
        argon2()
            .hash_password(password.as_bytes(), &salt)
            .map(|hash| hash.to_string())
            .map_err(|e| internal(&e.to_string()))
    })
    .await
    .map_err(|e| internal(&e.to_string()))?
}

/// A hash no password matches, checked when the username has no account:
/// an unknown user costs the same time as a wrong password, so timing
/// tells nobody which usernames exist.
static NOBODY: LazyLock<String> = LazyLock::new(|| {
    let salt = SaltString::encode_b64(&rand::random::<[u8; 16]>()).expect("16 bytes encode");
    let unguessable = hex::encode(rand::random::<[u8; 32]>());
    argon2()
        .hash_password(unguessable.as_bytes(), &salt)
        .expect("Argon2id hashes")
        .to_string()
});

/// Whether `password` is the account's; with no account, the same work
/// against a hash nothing matches, and `false`.
pub async fn verify_password(account: Option<&Account>, password: String) -> bool {
    let hash = account.map_or_else(|| NOBODY.clone(), |a| a.password_hash.clone());
    let known = account.is_some();
    tokio::task::spawn_blocking(move || {
        let Ok(parsed) = PasswordHash::new(&hash) else {
            return false;
        };
        argon2()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
            && known
    })
    .await
    .unwrap_or(false)
}

fn internal(cause: &str) -> ApiError {
    tracing::error!(cause, "password hashing failed");
    ApiError::new(ErrorCode::Internal, "an internal error occurred")
}

/// Who a staff credential is.
#[derive(Debug, Clone)]
pub enum Actor {
    /// The `--staff-token`: the platform's administrator, allowed everything.
    Admin,
    /// A signed-in account, in the shops it is a member of.
    Account {
        account_id: Uuid,
        username: String,
        memberships: Vec<Membership>,
        token_digest: String,
    },
}

impl Actor {
    /// The actor of the request's bearer token: 401 without one, or with
    /// one that is neither the staff token nor a live account token.
    pub async fn of(state: &AppState, headers: &HeaderMap) -> Result<Actor, ApiError> {
        let Some(token) = bearer(headers) else {
            return Err(ApiError::new(
                ErrorCode::Unauthorized,
                "send a staff credential as Authorization: Bearer <token>",
            ));
        };
        if state.staff_token().matches(token) {
            return Ok(Actor::Admin);
        }
        let token_digest = staff_token_digest(token);
        match state
            .store()
            .staff_token(&token_digest, state.now())
            .await?
        {
            Some((account, memberships)) => Ok(Actor::Account {
                account_id: account.account_id,
                username: account.username,
                memberships,
                token_digest,
            }),
            None => Err(ApiError::new(
                ErrorCode::Unauthorized,
                "the credential is not valid (signed out, expired, or never issued)",
            )),
        }
    }

    /// Refuses (403) unless the actor may act in the shop as one of `roles`.
    pub fn require(&self, shop_id: Uuid, roles: &[Role]) -> Result<(), ApiError> {
        match self {
            Actor::Admin => Ok(()),
            Actor::Account { memberships, .. } => {
                let allowed = memberships
                    .iter()
                    .any(|m| m.shop_id == shop_id && roles.contains(&m.role));
                if allowed {
                    Ok(())
                } else {
                    Err(ApiError::new(
                        ErrorCode::Forbidden,
                        "this account may not do that in this shop",
                    ))
                }
            }
        }
    }
}

/// Judged from the headers before a body is read: a bad credential is 401
/// whatever the body.
impl FromRequestParts<AppState> for Actor {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        Actor::of(state, &parts.headers).await
    }
}
