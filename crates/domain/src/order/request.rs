//! What a client asks for, within the contract's limits, and the two digests
//! that recognise it again: the request's fingerprint (idempotency) and its
//! payload's (the duplicate-payload rule).

use std::collections::BTreeSet;

use serde::Deserialize;
use uuid::Uuid;

use super::canonical::canonical_payload;
use crate::Rejection;
use crate::idempotency::Fingerprint;
use crate::validation::{FieldErrors, HIDDEN_CHARACTERS, is_hidden};

pub const MAX_LINES: usize = 50;
pub const MAX_QUANTITY: i64 = 99;
pub const MAX_NOTE_CHARS: usize = 200;
pub const MAX_LINE_NOTE_CHARS: usize = 140;
pub const MAX_OPTIONS_PER_LINE: usize = 50;

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
    /// Options chosen from the item's option groups, none twice, at most 50;
    /// each group's `minChoices` and `maxChoices` are kept.
    #[serde(default)]
    pub option_ids: Vec<Uuid>,
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
            check_line(&mut errors, i, line);
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

/// A line's limits: its quantity, no topping or option twice, at most
/// [`MAX_OPTIONS_PER_LINE`] options, and a short one-line note.
fn check_line(errors: &mut FieldErrors, i: usize, line: &LineRequest) {
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
    if line.option_ids.len() > MAX_OPTIONS_PER_LINE {
        errors.push(
            format!("items[{i}].optionIds"),
            format!("at most {MAX_OPTIONS_PER_LINE} options per line"),
        );
    }
    let mut seen = BTreeSet::new();
    for (j, option) in line.option_ids.iter().enumerate() {
        if !seen.insert(option) {
            errors.push(format!("items[{i}].optionIds[{j}]"), "listed twice");
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

#[cfg(test)]
mod tests {
    use super::*;

    fn line(item: Uuid, quantity: i64, toppings: &[Uuid]) -> LineRequest {
        LineRequest {
            menu_item_id: item,
            quantity,
            topping_ids: toppings.to_vec(),
            note: None,
            option_ids: vec![],
        }
    }

    fn chosen(item: Uuid, quantity: i64, options: &[Uuid]) -> LineRequest {
        LineRequest {
            option_ids: options.to_vec(),
            ..line(item, quantity, &[])
        }
    }

    #[test]
    fn limits_are_field_errors() {
        let a = Uuid::new_v4();
        let bad = OrderRequest {
            items: vec![
                line(a, 0, &[]),
                line(a, 100, &[a, a]),
                chosen(a, 1, &[a, a]),
                chosen(a, 1, &(0..51).map(Uuid::from_u128).collect::<Vec<_>>()),
            ],
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
                "items[2].optionIds[1]",
                "items[3].optionIds",
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
