//! The restaurant's tables: each created once, with a permanent code for
//! the QR card printed for it. A party seated at a table gets a session
//! (with a PIN from staff); the card's page finds the table's session by
//! the code and asks for that PIN.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::validation::FieldErrors;
use crate::{Rejection, Timestamp};

/// Body of `POST /shops/{shopId}/tables`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewTable {
    /// 1–32 characters, unique in the shop; sessions opened for the table
    /// carry it as their `tableLabel`.
    #[cfg_attr(feature = "openapi", schema(example = "T4"))]
    pub name: String,
}

/// A table as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub table_id: Uuid,
    pub shop_id: Uuid,
    pub name: String,
    /// The permanent code of its QR card: `/q/{code}`. 80 random bits,
    /// so nobody finds a table by guessing.
    pub code: String,
    pub created_at: DateTime<Utc>,
}

/// A table with the session seated at it now, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableState {
    pub table: Table,
    pub session_id: Option<Uuid>,
}

/// A fresh table code: 20 hex digits of 80 random bits.
pub fn generate_table_code() -> String {
    hex::encode(rand::random::<[u8; 10]>())
}

/// Whether `code` is shaped like a table code (so a lookup of anything
/// else can be refused without asking the database).
pub fn is_table_code(code: &str) -> bool {
    code.len() == 20
        && code
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl NewTable {
    pub fn validate(self, shop_id: Uuid, now: Timestamp) -> Result<Table, Rejection> {
        let mut errors = FieldErrors::default();
        errors.text("name", &self.name, 1, 32);
        errors.finish(Table {
            table_id: Uuid::new_v4(),
            shop_id,
            name: self.name.trim().to_owned(),
            code: generate_table_code(),
            created_at: now,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_is_named_once_and_gets_an_unguessable_code() {
        let table = NewTable {
            name: " T4 ".into(),
        }
        .validate(Uuid::nil(), crate::now())
        .unwrap();
        assert_eq!(table.name, "T4");
        assert!(is_table_code(&table.code), "{}", table.code);
        let other = NewTable { name: "T4".into() }
            .validate(Uuid::nil(), crate::now())
            .unwrap();
        assert_ne!(table.code, other.code);
        assert!(!is_table_code("../etc/passwd"));
        assert!(!is_table_code(&table.code.to_uppercase()));
        for bad in ["", "   ", "T\u{202e}4"] {
            let refused = NewTable { name: bad.into() }.validate(Uuid::nil(), crate::now());
            assert!(refused.is_err(), "{bad:?}");
        }
    }
}
