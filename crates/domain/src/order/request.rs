//! What a client asks for, within the contract's limits, and the two digests
//! that recognise it again: the request's fingerprint (idempotency) and its
//! payload's (the duplicate-payload rule).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::Rejection;
use crate::idempotency::Fingerprint;
use crate::validation::{FieldErrors, HIDDEN_CHARACTERS, is_hidden};

pub const MAX_LINES: usize = 50;
pub const MAX_QUANTITY: i64 = 99;
pub const MAX_NOTE_CHARS: usize = 200;
pub const MAX_LINE_NOTE_CHARS: usize = 140;

/// Body of an order POST (guest or staff).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OrderRequest {
    /// 1–50 lines.
    pub items: Vec<LineRequest>,
    /// At most 200 characters.
    #[serde(default)]
    pub note: Option<String>,
    /// Place this order even if the same client just placed an identical one.
    #[serde(default)]
    pub allow_repeat: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LineRequest {
    pub menu_item_id: Uuid,
    /// 1–99.
    pub quantity: i64,
    /// From the item's allowed toppings, at most its `maxToppings`, none twice.
    #[serde(default)]
    pub topping_ids: Vec<Uuid>,
    /// For the kitchen, about this line only ("no onions"): at most 140
    /// characters on one line.
    #[serde(default)]
    pub note: Option<String>,
}

/// An order request within the contract's limits, with its two digests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidOrder {
    pub lines: Vec<LineRequest>,
    pub note: String,
    pub allow_repeat: bool,
    /// Identifies the request for idempotency: same key, other fingerprint → 422.
    pub fingerprint: Fingerprint,
    /// Identifies the items and note alone, for the duplicate-payload rule.
    pub payload_hash: Fingerprint,
}

impl OrderRequest {
    pub fn validate(self) -> Result<ValidOrder, Rejection> {
        let mut errors = FieldErrors::default();
        if self.items.is_empty() || self.items.len() > MAX_LINES {
            errors.push("items", format!("must have 1 to {MAX_LINES} lines"));
        }
        for (i, line) in self.items.iter().enumerate() {
            errors.range(
                format_args!("items[{i}].quantity"),
                line.quantity,
                1,
                MAX_QUANTITY,
            );
            let mut seen = BTreeSet::new();
            for (j, topping) in line.topping_ids.iter().enumerate() {
                if !seen.insert(topping) {
                    errors.push(format!("items[{i}].toppingIds[{j}]"), "listed twice");
                }
            }
            if let Some(note) = &line.note {
                let field = format!("items[{i}].note");
                if note.chars().count() > MAX_LINE_NOTE_CHARS {
                    errors.push(
                        field,
                        format!("must be at most {MAX_LINE_NOTE_CHARS} characters"),
                    );
                } else if note.chars().any(is_hidden) {
                    errors.push(field, HIDDEN_CHARACTERS);
                }
            }
        }
        let items: Vec<LineRequest> = self
            .items
            .into_iter()
            .map(|line| LineRequest {
                note: line
                    .note
                    .map(|note| note.trim().to_owned())
                    .filter(|note| !note.is_empty()),
                ..line
            })
            .collect();
        let note = self.note.unwrap_or_default();
        if note.chars().count() > MAX_NOTE_CHARS {
            errors.push(
                "note",
                format!("must be at most {MAX_NOTE_CHARS} characters"),
            );
        } else if note.chars().any(|c| c != '\n' && is_hidden(c)) {
            errors.push("note", HIDDEN_CHARACTERS);
        }
        let note = note.trim().to_owned();
        let payload = canonical_payload(&items, &note);
        // Both digests are stored (with idempotency records and orders) and
        // compared with requests to come, so these bytes must never change:
        // they are what `serde_json::Value` printed for
        // `{"allowRepeat": …, "payload": {"lines": …, "note": …}}` (keys
        // sorted, compact), written out without building the values.
        let fingerprint = Fingerprint::of(&format!(
            r#"{{"allowRepeat":{},"payload":{payload}}}"#,
            self.allow_repeat
        ));
        errors.finish(ValidOrder {
            payload_hash: Fingerprint::of(&payload),
            fingerprint,
            lines: items,
            note,
            allow_repeat: self.allow_repeat,
        })
    }
}

/// Items and note in a form where equal orders are equal values: lines of
/// the same item with the same toppings merged, toppings sorted, lines sorted.
fn canonical_payload(lines: &[LineRequest], note: &str) -> String {
    /// `[item, quantity, [toppings]]`, or with its note last when it has
    /// one: a line without a note keeps the form stored before line notes.
    #[derive(Serialize)]
    #[serde(untagged)]
    enum Line {
        Plain(Uuid, i64, Vec<Uuid>),
        Noted(Uuid, i64, Vec<Uuid>, String),
    }
    #[derive(Serialize)]
    struct Canonical<'a> {
        lines: Vec<Line>,
        note: &'a str,
    }
    let mut merged: BTreeMap<(Uuid, Vec<Uuid>, Option<String>), i64> = BTreeMap::new();
    for line in lines {
        let mut toppings = line.topping_ids.clone();
        toppings.sort_unstable();
        *merged
            .entry((line.menu_item_id, toppings, line.note.clone()))
            .or_default() += line.quantity;
    }
    let lines = merged
        .into_iter()
        .map(|((item, toppings, note), quantity)| match note {
            None => Line::Plain(item, quantity, toppings),
            Some(note) => Line::Noted(item, quantity, toppings, note),
        })
        .collect();
    serde_json::to_string(&Canonical { lines, note }).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(item: Uuid, quantity: i64, toppings: &[Uuid]) -> LineRequest {
        LineRequest {
            menu_item_id: item,
            quantity,
            topping_ids: toppings.to_vec(),
            note: None,
        }
    }

    fn request(items: Vec<LineRequest>, note: &str, allow_repeat: bool) -> ValidOrder {
        OrderRequest {
            items,
            note: Some(note.to_owned()),
            allow_repeat,
        }
        .validate()
        .unwrap()
    }

    fn noted(item: Uuid, quantity: i64, note: &str) -> LineRequest {
        LineRequest {
            note: Some(note.to_owned()),
            ..line(item, quantity, &[])
        }
    }

    #[test]
    fn line_notes_tell_lines_and_requests_apart() {
        let ramen = Uuid::from_u128(1);
        let plain = request(vec![line(ramen, 2, &[])], "", false);
        let blank = request(vec![noted(ramen, 2, "  ")], "", false);
        assert_eq!(
            plain.fingerprint, blank.fingerprint,
            "a blank note is no note"
        );
        assert_eq!(blank.lines[0].note, None);

        let split = request(
            vec![noted(ramen, 1, " no egg "), line(ramen, 1, &[])],
            "",
            false,
        );
        assert_ne!(split.fingerprint, plain.fingerprint);
        assert_ne!(split.payload_hash, plain.payload_hash, "not a duplicate");
        assert_eq!(split.lines[0].note.as_deref(), Some("no egg"));
        let swapped = request(
            vec![line(ramen, 1, &[]), noted(ramen, 1, "no egg")],
            "",
            false,
        );
        assert_eq!(split.fingerprint, swapped.fingerprint, "line order aside");
        // Pinned like the digests of plain lines: stored with records and
        // compared with every retry to come.
        assert_eq!(
            split.payload_hash.as_str(),
            Fingerprint::of(&format!(
                r#"{{"lines":[["{ramen}",1,[]],["{ramen}",1,[],"no egg"]],"note":""}}"#
            ))
            .as_str()
        );

        let refused = OrderRequest {
            items: vec![
                noted(ramen, 1, &"x".repeat(141)),
                noted(ramen, 1, "no\negg"),
            ],
            note: None,
            allow_repeat: false,
        }
        .validate();
        let Err(Rejection::Validation(errors)) = refused else {
            panic!("expected validation errors");
        };
        let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["items[0].note", "items[1].note"]);
    }

    #[test]
    fn fingerprint_ignores_line_order_topping_order_splits_and_note_padding() {
        let (a, b, x, y) = (
            Uuid::new_v4(),
            Uuid::new_v4(),
            Uuid::new_v4(),
            Uuid::new_v4(),
        );
        let one = request(
            vec![line(a, 2, &[x, y]), line(b, 1, &[])],
            "no onions",
            false,
        );
        let other = request(
            vec![line(b, 1, &[]), line(a, 1, &[y, x]), line(a, 1, &[x, y])],
            "  no onions ",
            false,
        );
        assert_eq!(one.fingerprint, other.fingerprint);
        assert_eq!(one.payload_hash, other.payload_hash);

        let repeat = request(
            vec![line(a, 2, &[x, y]), line(b, 1, &[])],
            "no onions",
            true,
        );
        assert_ne!(
            one.fingerprint, repeat.fingerprint,
            "allowRepeat is part of the request"
        );
        assert_eq!(
            one.payload_hash, repeat.payload_hash,
            "but not of the payload"
        );
        let more = request(
            vec![line(a, 3, &[x, y]), line(b, 1, &[])],
            "no onions",
            false,
        );
        assert_ne!(one.payload_hash, more.payload_hash);
        let other_note = request(
            vec![line(a, 2, &[x, y]), line(b, 1, &[])],
            "extra spicy",
            false,
        );
        assert_ne!(one.payload_hash, other_note.payload_hash);
    }

    /// Stored digests must match requests to come, across versions: these
    /// were printed by the first release's code.
    #[test]
    fn digests_are_those_already_stored() {
        let id = |text| Uuid::parse_str(text).unwrap();
        let (a, b, x) = (
            id("0b6f0d4e-8f4a-4c59-9d3e-2f1f7f3c1a01"),
            id("5d1c3a7e-0e2b-4b7a-8c0d-6a9e4f2b3c02"),
            id("9a8b7c6d-5e4f-4a3b-9c2d-1e0f2a3b4c03"),
        );
        let order = request(
            vec![line(b, 1, &[]), line(a, 2, &[x, b])],
            "  no \"onions\"\nplease ✓ ",
            true,
        );
        assert_eq!(
            order.fingerprint.as_str(),
            "cab37b70f659302ff0fe1d6cfc0b08ef45d2fc6f86684e16c490aaa732ce1426"
        );
        assert_eq!(
            order.payload_hash.as_str(),
            "15870e2b93234c3d2fa78a8be14f31e4de4f6d29923a86691c1a85c6342f5095"
        );
    }

    #[test]
    fn limits_are_field_errors() {
        let a = Uuid::new_v4();
        let bad = OrderRequest {
            items: vec![line(a, 0, &[]), line(a, 100, &[a, a])],
            note: Some("x".repeat(201)),
            allow_repeat: false,
        };
        let Err(Rejection::Validation(errors)) = bad.validate() else {
            panic!("expected validation errors")
        };
        let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "items[0].quantity",
                "items[1].quantity",
                "items[1].toppingIds[1]",
                "note"
            ]
        );
        let empty = OrderRequest {
            items: vec![],
            note: None,
            allow_repeat: false,
        };
        assert!(empty.validate().is_err());
        let too_many = OrderRequest {
            items: (0..51).map(|_| line(a, 1, &[])).collect(),
            note: None,
            allow_repeat: false,
        };
        assert!(too_many.validate().is_err());
    }
}
