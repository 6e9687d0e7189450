//! Request identity: the `Idempotency-Key` a client sends with an order and
//! the `X-Client-Id` of the guest's device. Both are validated before they
//! touch a log or a database, so neither can smuggle anything in.

use std::fmt;

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

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
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
