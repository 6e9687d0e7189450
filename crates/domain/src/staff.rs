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

/// What is wrong with a password as a new one, if anything.
fn password_problem(password: &str) -> Option<String> {
    let (least, most) = PASSWORD_LENGTH;
    let length = password.chars().count();
    (!(least..=most).contains(&length))
        .then(|| format!("must be {least}–{most} characters (a passphrase is best)"))
}

/// A signed-in account changing its own password.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PasswordChange {
    pub current_password: String,
    pub new_password: String,
}

impl PasswordChange {
    /// The change, if the new password would do as one.
    pub fn validate(self) -> Result<PasswordChange, crate::Rejection> {
        let mut errors = FieldErrors::default();
        if let Some(problem) = password_problem(&self.new_password) {
            errors.push("newPassword", problem);
        }
        errors.finish(self)
    }
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
        if let Some(problem) = self.password.as_deref().and_then(password_problem) {
            errors.push("password", problem);
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
    format!(
        "{STAFF_TOKEN_PREFIX}{}",
        hex::encode(rand::random::<[u8; 32]>())
    )
}

/// The digest a staff token is stored and looked up by.
pub fn staff_token_digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// What a staff operation does, as far as who may do it goes. Every staff
/// route declares one; [`Role::may`] is the whole table of who may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Duty {
    /// The shop's own settings (name, languages, kitchen timings).
    Settings,
    /// Adding and removing staff accounts.
    Staff,
    /// Creating and revoking kitchen displays and floor tablets.
    Devices,
    Catalog,
    Inventory,
    Tables,
    /// Opening, serving and checking out table sessions, staff orders.
    Sessions,
    /// The kitchen's work: reading orders and the live events, moving
    /// orders along, recalling them.
    Kitchen,
    /// Seeing and acknowledging the guests' calls for staff or the bill.
    Service,
    Printers,
    Audit,
    /// The platform's own: creating shops, metrics. No role has it; only
    /// the administrator's token does.
    Platform,
}

impl Duty {
    /// The name the API gives it (`GET /auth/me` lists what a role may).
    pub const fn as_str(self) -> &'static str {
        match self {
            Duty::Settings => "settings",
            Duty::Staff => "staff",
            Duty::Devices => "devices",
            Duty::Catalog => "catalog",
            Duty::Inventory => "inventory",
            Duty::Tables => "tables",
            Duty::Sessions => "sessions",
            Duty::Kitchen => "kitchen",
            Duty::Service => "service",
            Duty::Printers => "printers",
            Duty::Audit => "audit",
            Duty::Platform => "platform",
        }
    }

    pub const ALL: [Duty; 12] = [
        Duty::Settings,
        Duty::Staff,
        Duty::Devices,
        Duty::Catalog,
        Duty::Inventory,
        Duty::Tables,
        Duty::Sessions,
        Duty::Kitchen,
        Duty::Service,
        Duty::Printers,
        Duty::Audit,
        Duty::Platform,
    ];
}

impl Role {
    /// Whether this role may do `duty` in its shop: an owner everything of
    /// the shop's, a manager all but staff accounts, the floor its tables
    /// and guests, the kitchen its tickets and the guests' calls.
    pub const fn may(self, duty: Duty) -> bool {
        match duty {
            Duty::Platform => false,
            Duty::Staff => matches!(self, Role::Owner),
            Duty::Settings
            | Duty::Devices
            | Duty::Catalog
            | Duty::Inventory
            | Duty::Printers
            | Duty::Audit => matches!(self, Role::Owner | Role::Manager),
            Duty::Tables | Duty::Sessions => {
                matches!(self, Role::Owner | Role::Manager | Role::Floor)
            }
            Duty::Kitchen | Duty::Service => true,
        }
    }

    /// The roles a device may have: a kitchen display or a floor tablet,
    /// never one that manages the shop.
    pub const fn fits_a_device(self) -> bool {
        matches!(self, Role::Floor | Role::Kitchen)
    }
}

/// A kitchen display or floor tablet of one shop: a long-lived credential
/// in one role, until revoked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Device {
    pub device_id: Uuid,
    #[serde(skip)]
    pub shop_id: Uuid,
    #[cfg_attr(feature = "openapi", schema(example = "Pass display"))]
    pub name: String,
    pub role: Role,
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewDevice {
    #[cfg_attr(feature = "openapi", schema(example = "Pass display"))]
    pub name: String,
    pub role: Role,
}

pub const DEVICE_NAME_LENGTH: usize = 60;

impl NewDevice {
    /// The device to create, with its name trimmed; a name is needed (the
    /// logs say which device acted by it) and the role must fit a device.
    pub fn validate(mut self) -> Result<NewDevice, crate::Rejection> {
        let mut errors = FieldErrors::default();
        self.name = self.name.trim().to_owned();
        let length = self.name.chars().count();
        if length == 0 || length > DEVICE_NAME_LENGTH || self.name.chars().any(char::is_control) {
            errors.push(
                "name",
                format!(
                    "must be 1–{DEVICE_NAME_LENGTH} characters, none of them control characters"
                ),
            );
        }
        if !self.role.fits_a_device() {
            errors.push(
                "role",
                "a device is a kitchen display or a floor tablet: kitchen or floor",
            );
        }
        errors.finish(self)
    }
}

/// A fresh device token: 256 random bits, marked so the server knows it
/// for a device's without a lookup elsewhere.
pub fn generate_device_token() -> String {
    format!(
        "{DEVICE_TOKEN_PREFIX}{}",
        hex::encode(rand::random::<[u8; 32]>())
    )
}

pub const STAFF_TOKEN_PREFIX: &str = "og_staff_";
pub const DEVICE_TOKEN_PREFIX: &str = "og_device_";

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
    fn each_role_may_what_api_md_says() {
        use Duty::*;
        let table = [
            (Role::Owner, &Duty::ALL[..11]),
            (
                Role::Manager,
                &[
                    Settings, Devices, Catalog, Inventory, Tables, Sessions, Kitchen, Service,
                    Printers, Audit,
                ][..],
            ),
            (Role::Floor, &[Tables, Sessions, Kitchen, Service][..]),
            (Role::Kitchen, &[Kitchen, Service][..]),
        ];
        for (role, allowed) in table {
            for duty in Duty::ALL {
                assert_eq!(role.may(duty), allowed.contains(&duty), "{role:?} {duty:?}");
            }
        }
    }

    #[test]
    fn devices_are_kitchen_displays_or_floor_tablets_with_a_name() {
        let device = |name: &str, role| {
            NewDevice {
                name: name.into(),
                role,
            }
            .validate()
        };
        assert_eq!(device(" Pass ", Role::Kitchen).unwrap().name, "Pass");
        assert!(device("Tablet 2", Role::Floor).is_ok());
        for (name, role) in [
            ("Pass", Role::Owner),
            ("Pass", Role::Manager),
            ("  ", Role::Kitchen),
            ("a\u{7}b", Role::Kitchen),
        ] {
            assert!(device(name, role).is_err(), "{name:?} {role:?}");
        }
        assert!(device(&"x".repeat(61), Role::Kitchen).is_err());
        let token = generate_device_token();
        assert!(
            token.starts_with(DEVICE_TOKEN_PREFIX) && token.len() == DEVICE_TOKEN_PREFIX.len() + 64
        );
    }

    #[test]
    fn failures_count_under_the_username_tried_whatever_its_case() {
        assert_eq!(account_subject(" Hana "), account_subject("hana"));
        assert_ne!(account_subject("hana"), address_subject("hana"));
    }
}
