//! Staff accounts (API v1.1): signing in and out, and each shop's members,
//! managed by its owners (or the platform's administrator).

use std::net::IpAddr;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use ordergate_domain::Rejection;
use ordergate_domain::staff::{
    Account, Duty, Member, Membership, NewMember, PasswordChange, Role, STAFF_TOKEN_LIFETIME,
    account_subject, address_subject, canonical_username, generate_staff_token, staff_token_digest,
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::accounts::{Actor, Allowed, SignedInAccount, duty, hash_password, verify_password};
use crate::app::AppState;
use crate::error::{ApiError, ErrorCode, Problem};
use crate::extract::{ApiJson, ApiPath};
use crate::limits::ClientAddress;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(login))
        .routes(routes!(logout))
        .routes(routes!(me))
        .routes(routes!(change_password))
        .routes(routes!(add_member, list_members))
        .routes(routes!(remove_member))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Credentials {
    username: String,
    password: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct AccountView {
    account_id: Uuid,
    username: String,
}

/// A signed-in account's token; shown once.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct SignedIn {
    /// Send it as `Authorization: Bearer <token>`.
    token: String,
    expires_at: DateTime<Utc>,
    account: AccountView,
    memberships: Vec<Membership>,
}

#[derive(Serialize, ToSchema)]
struct MemberList {
    staff: Vec<Member>,
}

/// Sign in with a username and password.
#[utoipa::path(post, path = "/api/v1/auth/login", tag = "staff",
    request_body = Credentials,
    responses(
        (status = 200, description = "Signed in", body = SignedIn),
        (status = 401, description = "Wrong username or password, the same answer whether the account exists or not (LOGIN_FAILED)",
         body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "Too many attempts for this username or from this address (LOGIN_LOCKED), with Retry-After",
         body = Problem, content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all)]
async fn login(
    State(state): State<AppState>,
    ClientAddress(address): ClientAddress,
    ApiJson(credentials): ApiJson<Credentials>,
) -> Result<Json<SignedIn>, ApiError> {
    let now = state.now();
    let username = canonical_username(&credentials.username);
    let attempt = count_attempt(&state, &username, address).await?;
    let account = state.store().account_by_username(&username).await?;
    let verified = verify_password(account.as_ref(), credentials.password).await;
    let Some(account) = account.filter(|_| verified) else {
        return Err(ApiError::new(
            ErrorCode::LoginFailed,
            "wrong username or password",
        ));
    };
    attempt.forgive(&state).await?;
    let token = generate_staff_token();
    let digest = staff_token_digest(&token);
    let expires_at = now + STAFF_TOKEN_LIFETIME;
    state
        .store()
        .create_staff_token(digest.clone(), account.account_id, now, expires_at)
        .await?;
    let memberships = state
        .store()
        .staff_token(&digest, now)
        .await?
        .map(|(_, memberships)| memberships)
        .unwrap_or_default();
    Ok(Json(SignedIn {
        token,
        expires_at,
        account: AccountView {
            account_id: account.account_id,
            username: account.username,
        },
        memberships,
    }))
}

/// A password attempt, counted under the username and the address.
struct Attempt {
    account: String,
    address: String,
}

impl Attempt {
    /// The password was right: the username's count starts again.
    async fn forgive(self, state: &AppState) -> Result<(), ApiError> {
        Ok(state
            .store()
            .forgive_login_attempt(self.account, self.address)
            .await?)
    }
}

/// Counts a password attempt before the password is judged: of any number
/// of attempts at once, only the allowed count is judged at all; past it,
/// 429 `LOGIN_LOCKED` until the window lapses.
async fn count_attempt(
    state: &AppState,
    username: &str,
    address: IpAddr,
) -> Result<Attempt, ApiError> {
    let attempt = Attempt {
        account: account_subject(username),
        address: address_subject(&address.to_string()),
    };
    let subjects = vec![attempt.account.clone(), attempt.address.clone()];
    let policy = state.settings().login_policy();
    let locked = state
        .store()
        .count_login_attempt(subjects, policy, state.now())
        .await?;
    if let Some(until) = locked {
        return Err(ApiError::new(
            ErrorCode::LoginLocked,
            "too many sign-in attempts; wait before trying again",
        )
        .retry_at(until));
    }
    Ok(attempt)
}

/// Change the signed-in account's own password. Its other sign-ins end
/// (their tokens are revoked and their streams close); this one stays.
/// The current password is counted like a sign-in attempt, so a stolen
/// token cannot try passwords here faster than at the door.
#[utoipa::path(post, path = "/api/v1/auth/password", tag = "staff",
    security(("staffToken" = [])),
    request_body = PasswordChange,
    responses(
        (status = 204, description = "Changed; every other sign-in of the account ended"),
        (status = 403, description = "Not an account: a device or the administrator has no password (FORBIDDEN)",
         body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "currentPassword is not the account's, or newPassword is too short or long (VALIDATION_FAILED)",
         body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "Too many attempts for this username or from this address (LOGIN_LOCKED), with Retry-After",
         body = Problem, content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all)]
async fn change_password(
    State(state): State<AppState>,
    ClientAddress(address): ClientAddress,
    SignedInAccount {
        account_id,
        username,
        token_digest,
    }: SignedInAccount,
    ApiJson(change): ApiJson<PasswordChange>,
) -> Result<StatusCode, ApiError> {
    let change = change.validate()?;
    let attempt = count_attempt(&state, &username, address).await?;
    let account = state.store().account_by_username(&username).await?;
    if !verify_password(account.as_ref(), change.current_password).await {
        return Err(Rejection::field("currentPassword", "is not this account's password").into());
    }
    attempt.forgive(&state).await?;
    let hash = hash_password(change.new_password).await?;
    state
        .store()
        .change_password(account_id, hash, token_digest)
        .await?;
    state.revoked();
    Ok(StatusCode::NO_CONTENT)
}

/// Sign out: the token stops working at once (a device's too: it is
/// revoked), and streams opened with it end.
#[utoipa::path(post, path = "/api/v1/auth/logout", tag = "staff",
    security(("staffToken" = [])),
    responses((status = 204, description = "Signed out")),
)]
#[tracing::instrument(skip_all)]
async fn logout(State(state): State<AppState>, actor: Actor) -> Result<StatusCode, ApiError> {
    match actor {
        // The administrator's token is configuration, not a sign-in.
        Actor::Admin => return Ok(StatusCode::NO_CONTENT),
        Actor::Account { token_digest, .. } => {
            state.store().revoke_staff_token(&token_digest).await?;
        }
        Actor::Device { device, .. } => {
            state
                .store()
                .revoke_device(device.shop_id, device.device_id)
                .await?;
        }
    }
    state.revoked();
    Ok(StatusCode::NO_CONTENT)
}

/// Who a credential is, and what it may do in each of its shops.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct WhoAmI {
    /// `admin` (the platform's `--staff-token`), `account` or `device`.
    #[schema(example = "account")]
    kind: &'static str,
    /// The signed-in account (accounts only).
    #[serde(skip_serializing_if = "Option::is_none")]
    account: Option<AccountView>,
    /// The device (devices only).
    #[serde(skip_serializing_if = "Option::is_none")]
    device: Option<DeviceView>,
    /// The shops it works in (none listed for the administrator, who may
    /// do everything everywhere).
    shops: Vec<Rights>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct DeviceView {
    device_id: Uuid,
    name: String,
}

/// A role in one shop and the duties it has there.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Rights {
    shop_id: Uuid,
    role: Role,
    /// Of `settings`, `staff`, `devices`, `catalog`, `inventory`, `tables`,
    /// `sessions`, `kitchen`, `service`, `printers`, `audit`.
    #[schema(example = json!(["tables", "sessions", "kitchen", "service"]))]
    may: Vec<&'static str>,
}

impl Rights {
    fn of(shop_id: Uuid, role: Role) -> Rights {
        let may = Duty::ALL
            .into_iter()
            .filter(|duty| role.may(*duty))
            .map(Duty::as_str)
            .collect();
        Rights { shop_id, role, may }
    }
}

/// Who the credential is and what it may do where: what the staff pages
/// show and hide by.
#[utoipa::path(get, path = "/api/v1/auth/me", tag = "staff",
    security(("staffToken" = [])),
    responses((status = 200, description = "The credential's identity and rights", body = WhoAmI)),
)]
#[tracing::instrument(skip_all)]
async fn me(actor: Actor) -> Json<WhoAmI> {
    let who = match actor {
        Actor::Admin => WhoAmI {
            kind: "admin",
            account: None,
            device: None,
            shops: Vec::new(),
        },
        Actor::Account {
            account_id,
            username,
            memberships,
            ..
        } => WhoAmI {
            kind: "account",
            account: Some(AccountView {
                account_id,
                username,
            }),
            device: None,
            shops: memberships
                .iter()
                .map(|m| Rights::of(m.shop_id, m.role))
                .collect(),
        },
        Actor::Device { device, .. } => WhoAmI {
            kind: "device",
            account: None,
            shops: vec![Rights::of(device.shop_id, device.role)],
            device: Some(DeviceView {
                device_id: device.device_id,
                name: device.name,
            }),
        },
    };
    Json(who)
}

/// Give an account a role in the shop (its owners, or the administrator): a
/// new account with `password`, or an existing one by its username alone.
/// A member already gets the new role.
#[utoipa::path(post, path = "/api/v1/shops/{shopId}/staff", tag = "staff",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path)),
    request_body = NewMember,
    responses(
        (status = 201, description = "A new member", body = Member),
        (status = 200, description = "A member already: the role is changed", body = Member),
        (status = 403, description = "Not an owner of this shop (FORBIDDEN)", body = Problem,
         content_type = "application/problem+json"),
        (status = 404, description = "No such shop, or no account of that username (NOT_FOUND)",
         body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "A password was sent for a username that has an account (USERNAME_TAKEN)",
         body = Problem, content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn add_member(
    State(state): State<AppState>,
    _: Allowed<duty::Staff>,
    ApiPath(shop_id): ApiPath<Uuid>,
    ApiJson(new_member): ApiJson<NewMember>,
) -> Result<(StatusCode, Json<Member>), ApiError> {
    let new_member = new_member.validate()?;
    let now = state.now();
    let new_account = match new_member.password {
        Some(password) => Some(Account {
            account_id: Uuid::new_v4(),
            username: new_member.username.clone(),
            password_hash: hash_password(password).await?,
            created_at: now,
        }),
        None => None,
    };
    let (member, created) = state
        .store()
        .add_member(
            shop_id,
            new_member.username,
            new_account,
            new_member.role,
            now,
        )
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(member)))
}

/// The shop's members, by username (its owners, or the administrator).
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/staff", tag = "staff",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path)),
    responses(
        (status = 200, description = "By username", body = MemberList),
        (status = 403, description = "Not an owner of this shop (FORBIDDEN)", body = Problem,
         content_type = "application/problem+json"),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn list_members(
    State(state): State<AppState>,
    _: Allowed<duty::Staff>,
    ApiPath(shop_id): ApiPath<Uuid>,
) -> Result<Json<MemberList>, ApiError> {
    let staff = state.store().members(shop_id).await?;
    Ok(Json(MemberList { staff }))
}

/// End an account's membership of the shop (its owners, or the
/// administrator): its credentials no longer open the shop, from its next
/// request on.
#[utoipa::path(delete, path = "/api/v1/shops/{shopId}/staff/{accountId}", tag = "staff",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path), ("accountId" = Uuid, Path)),
    responses(
        (status = 204, description = "Removed"),
        (status = 403, description = "Not an owner of this shop (FORBIDDEN)", body = Problem,
         content_type = "application/problem+json"),
        (status = 404, description = "Not a member (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id, %account_id))]
async fn remove_member(
    State(state): State<AppState>,
    _: Allowed<duty::Staff>,
    ApiPath((shop_id, account_id)): ApiPath<(Uuid, Uuid)>,
) -> Result<StatusCode, ApiError> {
    state.store().remove_member(shop_id, account_id).await?;
    state.revoked();
    Ok(StatusCode::NO_CONTENT)
}
