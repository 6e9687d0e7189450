//! Staff accounts on the server's side: passwords hashed and checked with
//! Argon2id (off the async threads: a hash takes tens of milliseconds by
//! design), and who a staff credential is.

use std::sync::LazyLock;

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use axum::extract::FromRequestParts;
use axum::extract::RawPathParams;
use axum::http::HeaderMap;
use axum::http::request::Parts;
use ordergate_domain::staff::{
    Account, DEVICE_TOKEN_PREFIX, Device, Duty, Membership, STAFF_TOKEN_PREFIX, staff_token_digest,
};
use ordergate_store::Owned;
use std::marker::PhantomData;
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
    /// A kitchen display or floor tablet, in its one shop and role.
    Device {
        device: Device,
        token_digest: String,
    },
}

impl Actor {
    /// The actor of the request's bearer token: 401 without one, or with
    /// one that is neither the staff token nor a live account or device
    /// token.
    pub async fn of(state: &AppState, headers: &HeaderMap) -> Result<Actor, ApiError> {
        let Some(token) = bearer(headers) else {
            return Err(ApiError::new(
                ErrorCode::Unauthorized,
                "send a staff credential as Authorization: Bearer <token>",
            ));
        };
        Actor::live(state, token).await
    }

    /// The actor of `token`: 401 unless it is a live staff credential.
    pub async fn live(state: &AppState, token: &str) -> Result<Actor, ApiError> {
        if let Some(actor) = Actor::of_token(state, token).await? {
            return Ok(actor);
        }
        let signed_in =
            token.starts_with(STAFF_TOKEN_PREFIX) || token.starts_with(DEVICE_TOKEN_PREFIX);
        let detail = if signed_in || state.staff_token().is_configured() {
            "the credential is not valid (signed out, revoked, expired, or never issued)"
        } else {
            "the server was started without a staff token: only account and device tokens are valid"
        };
        Err(ApiError::new(ErrorCode::Unauthorized, detail))
    }

    /// Whether `token` is a staff credential at all (the staff token, or
    /// shaped like an account's or a device's), judged without the store.
    pub fn claims_staff(state: &AppState, token: &str) -> bool {
        state.staff_token().matches(token)
            || token.starts_with(STAFF_TOKEN_PREFIX)
            || token.starts_with(DEVICE_TOKEN_PREFIX)
    }

    /// The actor `token` is, if it is a live staff credential.
    pub async fn of_token(state: &AppState, token: &str) -> Result<Option<Actor>, ApiError> {
        if state.staff_token().matches(token) {
            return Ok(Some(Actor::Admin));
        }
        let token_digest = staff_token_digest(token);
        if token.starts_with(DEVICE_TOKEN_PREFIX) {
            return Actor::device(state, token_digest).await;
        }
        if token.starts_with(STAFF_TOKEN_PREFIX) {
            return Actor::account(state, token_digest).await;
        }
        Ok(None)
    }

    async fn account(state: &AppState, token_digest: String) -> Result<Option<Actor>, ApiError> {
        let signed_in = state
            .store()
            .staff_token(&token_digest, state.now())
            .await?;
        Ok(signed_in.map(|(account, memberships)| Actor::Account {
            account_id: account.account_id,
            username: account.username,
            memberships,
            token_digest,
        }))
    }

    async fn device(state: &AppState, token_digest: String) -> Result<Option<Actor>, ApiError> {
        let device = state.store().device_token(&token_digest).await?;
        Ok(device.map(|device| Actor::Device {
            device,
            token_digest,
        }))
    }

    /// The same credential, as the store knows it now: `None` once it was
    /// signed out, revoked or expired. An open stream asks this whenever
    /// a credential was revoked anywhere, and now and then besides.
    pub async fn again(&self, state: &AppState) -> Result<Option<Actor>, ApiError> {
        match self {
            Actor::Admin => Ok(Some(Actor::Admin)),
            Actor::Account { token_digest, .. } => {
                Actor::account(state, token_digest.clone()).await
            }
            Actor::Device { token_digest, .. } => Actor::device(state, token_digest.clone()).await,
        }
    }

    /// Whether the actor may do `duty` in the shop.
    pub fn may(&self, shop_id: Uuid, duty: Duty) -> bool {
        match self {
            Actor::Admin => true,
            Actor::Account { memberships, .. } => memberships
                .iter()
                .any(|m| m.shop_id == shop_id && m.role.may(duty)),
            Actor::Device { device, .. } => device.shop_id == shop_id && device.role.may(duty),
        }
    }

    /// Refuses (403) unless the actor may do `duty` in the shop.
    pub fn require(&self, shop_id: Uuid, duty: Duty) -> Result<(), ApiError> {
        if self.may(shop_id, duty) {
            return Ok(());
        }
        let message = match self {
            Actor::Device { .. } => "this device may not do that in this shop",
            _ => "this account may not do that in this shop",
        };
        Err(ApiError::new(ErrorCode::Forbidden, message))
    }

    /// The shops the actor works in; `None` for the administrator, who
    /// sees every shop.
    pub fn shops(&self) -> Option<Vec<Uuid>> {
        match self {
            Actor::Admin => None,
            Actor::Account { memberships, .. } => {
                Some(memberships.iter().map(|m| m.shop_id).collect())
            }
            Actor::Device { device, .. } => Some(vec![device.shop_id]),
        }
    }

    /// Who acted, as the audit and inventory logs name them.
    pub fn label(&self) -> String {
        match self {
            Actor::Admin => "admin".to_owned(),
            Actor::Account { username, .. } => format!("account:{username}"),
            Actor::Device { device, .. } => format!("device:{}", device.name),
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

/// A signed-in account, for what is a person's own (their password): a
/// device or the administrator's token is 403, judged before the body.
pub struct SignedInAccount {
    pub account_id: Uuid,
    pub username: String,
    pub token_digest: String,
}

impl FromRequestParts<AppState> for SignedInAccount {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        match Actor::of(state, &parts.headers).await? {
            Actor::Account {
                account_id,
                username,
                token_digest,
                ..
            } => Ok(SignedInAccount {
                account_id,
                username,
                token_digest,
            }),
            _ => Err(ApiError::new(
                ErrorCode::Forbidden,
                "only an account has a password (a device or the administrator's token has none)",
            )),
        }
    }
}

/// A duty a route declares as a type, for [`Allowed`].
pub trait Declared {
    const DUTY: Duty;
}

/// The duties, one type each: a route asks for `Allowed<duty::Catalog>`.
pub mod duty {
    use ordergate_domain::staff::Duty;

    macro_rules! declare {
        ($($name:ident),* $(,)?) => {
            $(
                pub struct $name;
                impl super::Declared for $name {
                    const DUTY: Duty = Duty::$name;
                }
            )*
        };
    }

    declare!(
        Settings, Staff, Devices, Catalog, Inventory, Tables, Sessions, Kitchen, Service, Printers,
        Audit, Platform,
    );
}

/// The one authorisation point of staff routes: the credential (401 when
/// there is none or it is not live), the shop the route acts in (from its
/// `shopId`, or the shop of the session, order, printer or service request
/// its path names: 404 when there is none), and the route's declared duty
/// (403 unless the credential's role in that shop has it). All from the
/// request's head, before a body is read.
pub struct Allowed<D> {
    actor: Actor,
    duty: PhantomData<D>,
}

impl<D> Allowed<D> {
    pub fn actor(&self) -> &Actor {
        &self.actor
    }
}

/// Where a route acts, by the names of its path parameters.
const SHOP_PARAMETER: &str = "shopId";
type Naming = fn(Uuid) -> Owned;
const OWNED_PARAMETERS: [(&str, Naming); 4] = [
    ("sessionId", Owned::Session),
    ("orderId", Owned::Order),
    ("printerId", Owned::Printer),
    ("requestId", Owned::ServiceRequest),
];

impl<D: Declared + Send + Sync> FromRequestParts<AppState> for Allowed<D> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let actor = Actor::of(state, &parts.headers).await?;
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::new(ErrorCode::NotFound, "no such endpoint"))?;
        let params: Vec<(String, String)> = params
            .iter()
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect();
        authorize(state, actor, &params, D::DUTY)
            .await
            .map(|actor| Allowed {
                actor,
                duty: PhantomData,
            })
    }
}

/// Judges `actor` for `duty` where the path parameters say the route acts.
/// The administrator is let through without a lookup: the route itself
/// answers 404 for what does not exist.
pub async fn authorize(
    state: &AppState,
    actor: Actor,
    params: &[(String, String)],
    duty: Duty,
) -> Result<Actor, ApiError> {
    if matches!(actor, Actor::Admin) {
        return Ok(actor);
    }
    let value = |name: &str| {
        params
            .iter()
            .find(|(param, _)| param == name)
            .map(|(_, value)| value.as_str())
    };
    let shop_id = if let Some(raw) = value(SHOP_PARAMETER) {
        Some(
            raw.parse::<Uuid>()
                .map_err(|_| ApiError::not_found("shop"))?,
        )
    } else if let Some((raw, owned)) = OWNED_PARAMETERS
        .iter()
        .find_map(|(name, owned)| value(name).map(|raw| (raw, owned)))
    {
        let resource = owned(
            raw.parse::<Uuid>()
                .map_err(|_| ApiError::not_found("resource"))?,
        );
        let shop_id = state.store().shop_of(resource).await?;
        Some(shop_id.ok_or_else(|| ApiError::not_found(resource.noun()))?)
    } else {
        None
    };
    match shop_id {
        Some(shop_id) => actor.require(shop_id, duty)?,
        // A route of no one shop is the platform's.
        None => {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "only the platform administrator may do that",
            ));
        }
    }
    Ok(actor)
}
