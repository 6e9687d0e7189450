//! Request identity: the `Idempotency-Key` a client sends with an order and
//! the `X-Client-Id` of the guest's device. Both are validated before they
//! touch a log or a database, so neither can smuggle anything in.

use std::fmt;

use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::code::ErrorCode;

/// A UUID v4, normalised to lowercase hyphenated form.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// Accepts a UUID v4 in any case, bare or as an RFC 8941 string
    /// (`"…"`); both forms are the same key.
    pub fn parse(header: Option<&str>) -> Result<IdempotencyKey, ErrorCode> {
        let raw = header
            .ok_or(ErrorCode::IdempotencyKeyMissing)?
            .trim_matches([' ', '\t']);
        let bare = raw
            .strip_prefix('"')
            .and_then(|rest| rest.strip_suffix('"'))
            .unwrap_or(raw);
        // Only the hyphenated form: the uuid crate would also take braces,
        // URNs and the 32-digit form, which the contract does not allow.
        let hyphens_in_place = bare.len() == 36
            && bare
                .char_indices()
                .all(|(i, c)| matches!(i, 8 | 13 | 18 | 23) == (c == '-'));
        match Uuid::try_parse(bare) {
            Ok(uuid) if hyphens_in_place && uuid.get_version_num() == 4 => {
                Ok(IdempotencyKey(uuid.hyphenated().to_string()))
            }
            _ => Err(ErrorCode::IdempotencyKeyInvalid),
        }
    }

    /// A fresh key, as a client makes one per request.
    pub fn generate() -> IdempotencyKey {
        IdempotencyKey(Uuid::new_v4().hyphenated().to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whose idempotency keys these are: equal keys of different scopes never
/// meet. Stored as text, so its forms never change: keys recorded before
/// an upgrade must still be found after it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scope(String);

impl Scope {
    /// A guest's keys are the session's: every device at the table shares
    /// them.
    pub fn session(session_id: Uuid) -> Scope {
        Scope(format!("session:{session_id}"))
    }

    /// The keys of a table's service requests: the session's, apart from
    /// its orders' (a key sent for an order and a call is two requests).
    pub fn service_requests(session_id: Uuid) -> Scope {
        Scope(format!("session:{session_id} service-requests"))
    }

    /// A staff write's keys: the staff principal, the method and the
    /// canonical path (lowercase ids).
    pub fn staff_post(canonical_path: &str) -> Scope {
        Scope(format!("staff POST {canonical_path}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// One text for (scope, key), unique to the pair: what requests in
    /// flight are joined by, and what PostgreSQL's advisory lock hashes
    /// (a scope never holds a newline).
    pub fn with_key(&self, key: &IdempotencyKey) -> String {
        format!("{}\n{}", self.0, key.as_str())
    }
}

/// What makes a request the same request again: the SHA-256 of its
/// canonical form, in hex. One scheme for orders and staff writes; the
/// digests already stored must keep matching after an upgrade, so the
/// canonical forms never change.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Fingerprint(String);

impl Fingerprint {
    pub fn of(canonical: &str) -> Fingerprint {
        Fingerprint(hex::encode(Sha256::digest(canonical.as_bytes())))
    }

    /// The fingerprint of a request body, by its compact JSON (fields in
    /// declaration order): the canonical form of staff writes.
    pub fn of_json(request: &impl serde::Serialize) -> Fingerprint {
        Fingerprint::of(&serde_json::to_string(request).unwrap_or_default())
    }

    /// A digest as stored.
    pub fn stored(digest: String) -> Fingerprint {
        Fingerprint(digest)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whether a client-chosen identifier is 1–64 characters of
/// `[A-Za-z0-9._:-]`: short, and nothing a log line or header could be
/// forged with.
pub fn is_plain_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

/// A guest device's identity: 1–64 characters of `[A-Za-z0-9._:-]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientId(String);

impl ClientId {
    pub fn parse(header: Option<&str>) -> Result<ClientId, ErrorCode> {
        match header {
            Some(id) if is_plain_id(id) => Ok(ClientId(id.to_owned())),
            _ => Err(ErrorCode::ClientIdInvalid),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "3f2b8c1e-9d4a-4c7b-8e6f-1a2b3c4d5e6f";

    #[test]
    fn fingerprints_are_the_digests_already_stored() {
        // Records written by earlier versions are matched by these: a change
        // would refuse every retry across an upgrade as a reused key.
        #[derive(serde::Serialize)]
        struct Restock {
            quantity: i64,
        }
        assert_eq!(
            Fingerprint::of_json(&Restock { quantity: 3 }).as_str(),
            "71507bbef8d1c7aa3d3d86cf1cf1931cfd0d27339b38a46f8eccd6dba177f296"
        );
        assert_eq!(
            Fingerprint::of_json(&()).as_str(),
            "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b",
            "a body-less write (checkout)"
        );
        let order = Fingerprint::stored(
            "cab37b70f659302ff0fe1d6cfc0b08ef45d2fc6f86684e16c490aaa732ce1426".into(),
        );
        assert_eq!(
            Fingerprint::of_json(&order).as_str(),
            "3aada015cd6d4c2ffc231526984e4eb32d3f45d67bb51f876532886096340497",
            "a staff order: its order fingerprint as a JSON string"
        );
    }

    #[test]
    fn scopes_keep_their_stored_forms() {
        let id: Uuid = "6f9619ff-8b86-d011-b42d-00c04fc964ff".parse().unwrap();
        assert_eq!(
            Scope::session(id).as_str(),
            "session:6f9619ff-8b86-d011-b42d-00c04fc964ff"
        );
        assert_eq!(
            Scope::service_requests(id).as_str(),
            "session:6f9619ff-8b86-d011-b42d-00c04fc964ff service-requests"
        );
        assert_eq!(
            Scope::staff_post("/api/v1/shops").as_str(),
            "staff POST /api/v1/shops"
        );
        let key = IdempotencyKey::parse(Some(KEY)).unwrap();
        assert_eq!(
            Scope::session(id).with_key(&key),
            format!("session:6f9619ff-8b86-d011-b42d-00c04fc964ff\n{KEY}")
        );
    }

    #[test]
    fn bare_quoted_and_uppercase_keys_are_the_same_key() {
        let expected = IdempotencyKey::parse(Some(KEY)).unwrap();
        for form in [
            format!("\"{KEY}\""),
            KEY.to_uppercase(),
            format!("\"{}\"", KEY.to_uppercase()),
            format!(" {KEY} "),
        ] {
            assert_eq!(
                IdempotencyKey::parse(Some(&form)),
                Ok(expected.clone()),
                "{form}"
            );
        }
        assert_eq!(expected.as_str(), KEY);
    }

    #[test]
    fn anything_but_a_uuid_v4_is_refused() {
        assert_eq!(
            IdempotencyKey::parse(None),
            Err(ErrorCode::IdempotencyKeyMissing)
        );
        for bad in [
            "",
            "\"\"",
            "not-a-uuid",
            "3f2b8c1e9d4a4c7b8e6f1a2b3c4d5e6f",
            "{3f2b8c1e-9d4a-4c7b-8e6f-1a2b3c4d5e6f}",
            "urn:uuid:3f2b8c1e-9d4a-4c7b-8e6f-1a2b3c4d5e6f",
            "3f2b8c1e-9d4a-1c7b-8e6f-1a2b3c4d5e6f",
            "3f2b8c1e-9d4a-7c7b-8e6f-1a2b3c4d5e6f",
            "\"3f2b8c1e-9d4a-4c7b-8e6f-1a2b3c4d5e6f",
            "3f2b8c1e-9d4a-4c7b-8e6f-1a2b3c4d5e6f\n",
        ] {
            assert_eq!(
                IdempotencyKey::parse(Some(bad)),
                Err(ErrorCode::IdempotencyKeyInvalid),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn client_ids_are_short_and_plain() {
        for good in ["a", "phone-1", "dev:42.x_Y", &"x".repeat(64)] {
            assert!(ClientId::parse(Some(good)).is_ok(), "{good}");
        }
        for bad in [
            None,
            Some(""),
            Some("has space"),
            Some("new\nline"),
            Some("é"),
        ] {
            assert_eq!(
                ClientId::parse(bad),
                Err(ErrorCode::ClientIdInvalid),
                "{bad:?}"
            );
        }
        assert!(ClientId::parse(Some(&"x".repeat(65))).is_err());
    }
}
