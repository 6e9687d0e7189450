//! Staff accounts: who works at which shop, in which role, and how signing
//! in is judged. Passwords are hashed by the server (Argon2id); here are
//! only the rules that need no secret.

use chrono::Duration;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::Timestamp;
use crate::validation::FieldErrors;

/// A role in one shop (API.md "Staff accounts and roles").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Everything in the shop, its staff and devices included.
    Owner,
    /// Catalog, inventory, tables, sessions, orders, printers, audit.
    Manager,
    /// Tables, sessions, orders, service requests.
    Floor,
    /// The kitchen display: reads orders and events, changes order status.
    Kitchen,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Owner, Role::Manager, Role::Floor, Role::Kitchen];

    pub const fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Manager => "manager",
            Role::Floor => "floor",
            Role::Kitchen => "kitchen",
        }
    }

    pub fn parse(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|role| role.as_str() == name)
    }
}

/// An account as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub account_id: Uuid,
    pub username: String,
    /// The Argon2id hash in PHC string form.
    pub password_hash: String,
    pub created_at: Timestamp,
}

/// An account's place in one shop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Membership {
    pub shop_id: Uuid,
    pub role: Role,
}

/// A shop's member as its owner sees them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub account_id: Uuid,
    pub username: String,
    pub role: Role,
}

/// Body of `POST /shops/{shopId}/staff`: a new account with its password,
/// or an existing one by its username alone.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewMember {
    /// 3–64 of `a-z 0-9 . _ -` (kept lowercase: `Ana` and `ana` are one).
    #[cfg_attr(feature = "openapi", schema(example = "hana"))]
    pub username: String,
    /// 12–256 characters; only for a new account.
    #[serde(default)]
    pub password: Option<String>,
    pub role: Role,
}

pub const USERNAME_LENGTH: (usize, usize) = (3, 64);
pub const PASSWORD_LENGTH: (usize, usize) = (12, 256);

/// A username as stored and looked up: trimmed, lowercase.
pub fn canonical_username(given: &str) -> String {
    given.trim().to_lowercase()
}

impl NewMember {
    /// Checks the fields; the username comes back canonical.
    pub fn validate(mut self) -> Result<NewMember, crate::Rejection> {
        let mut errors = FieldErrors::default();
        let username = canonical_username(&self.username);
        let (least, most) = USERNAME_LENGTH;
        let plain = username
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
        if !(least..=most).contains(&username.len()) || !plain {
            errors.push(
                "username",
                format!("must be {least}–{most} of a-z, 0-9, '.', '_' and '-'"),
            );
        }
        if let Some(password) = &self.password {
            let (least, most) = PASSWORD_LENGTH;
            if !(least..=most).contains(&password.chars().count()) {
                errors.push(
                    "password",
                    format!("must be {least}–{most} characters (a passphrase is best)"),
                );
            }
        }
        self.username = username;
        errors.finish(self)
    }
}

/// How sign-in failures are counted: per account (by the username tried,
/// known or not) and per client address, each in a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginPolicy {
    pub max_account_failures: i64,
    pub max_address_failures: i64,
    /// A count starts with its first failure and lapses this long after.
    pub window: Duration,
}

impl Default for LoginPolicy {
    fn default() -> Self {
        LoginPolicy {
            max_account_failures: 5,
            max_address_failures: 50,
            window: Duration::minutes(15),
        }
    }
}

impl LoginPolicy {
    /// The attempts a window allows under `subject` (from
    /// [`account_subject`] or [`address_subject`]).
    pub fn most_failures(&self, subject: &str) -> i64 {
        if subject.starts_with(ADDRESS_PREFIX) {
            self.max_address_failures
        } else {
            self.max_account_failures
        }
    }
}

const ADDRESS_PREFIX: &str = "address:";

/// Attempt counts are kept this long at most: longer than any window.
pub const ATTEMPTS_KEPT: Duration = Duration::days(1);

/// What a sign-in attempt is counted under.
pub fn account_subject(username: &str) -> String {
    format!("account:{}", canonical_username(username))
}

pub fn address_subject(address: &str) -> String {
    format!("{ADDRESS_PREFIX}{address}")
}

/// A fresh session token of a signed-in account: 256 random bits.
pub fn generate_staff_token() -> String {
    format!("og_staff_{}", hex::encode(rand::random::<[u8; 32]>()))
}

/// The digest a staff token is stored and looked up by.
pub fn staff_token_digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// How long a signed-in account's token lasts: a long shift.
pub const STAFF_TOKEN_LIFETIME: Duration = Duration::hours(12);

#[cfg(test)]
mod tests {
    use super::*;

    fn member(username: &str, password: Option<&str>) -> NewMember {
        NewMember {
            username: username.into(),
            password: password.map(Into::into),
            role: Role::Floor,
        }
    }

    #[test]
    fn usernames_are_kept_lowercase_and_plain() {
        let ok = member("  Hana.K ", Some("correct horse battery")).validate();
        assert_eq!(ok.unwrap().username, "hana.k");
        for bad in ["ab", "hana k", "hana@shop", "ハナ", &"a".repeat(65)] {
            assert!(member(bad, None).validate().is_err(), "{bad}");
        }
        assert!(
            member("hana", None).validate().is_ok(),
            "an existing account"
        );
    }

    #[test]
    fn passwords_are_long_enough() {
        assert!(member("hana", Some("short")).validate().is_err());
        assert!(member("hana", Some(&"x".repeat(257))).validate().is_err());
        assert!(member("hana", Some("twelve chars")).validate().is_ok());
    }

    #[test]
    fn roles_keep_their_names() {
        for role in Role::ALL {
            assert_eq!(Role::parse(role.as_str()), Some(role));
        }
        assert_eq!(Role::parse("admin"), None);
        assert_eq!(
            serde_json::to_string(&Role::Kitchen).unwrap(),
            "\"kitchen\""
        );
    }

    #[test]
    fn staff_tokens_are_random_and_stored_as_digests() {
        let token = generate_staff_token();
        assert!(token.starts_with("og_staff_") && token.len() == 9 + 64);
        assert_ne!(token, generate_staff_token());
        assert_ne!(staff_token_digest(&token), token);
    }

    #[test]
    fn failures_count_under_the_username_tried_whatever_its_case() {
        assert_eq!(account_subject(" Hana "), account_subject("hana"));
        assert_ne!(account_subject("hana"), address_subject("hana"));
    }
}
