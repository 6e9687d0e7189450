//! The canonical form of an order's items and note, and so its two digests:
//! equal orders are equal texts, whatever their line order, topping order,
//! splits and padding.

use std::collections::BTreeMap;

use serde::Serialize;
use uuid::Uuid;

use super::LineRequest;

/// Items and note in a form where equal orders are equal values: lines of
/// the same item with the same toppings, options and note merged, toppings
/// and options sorted, lines sorted.
pub(super) fn canonical_payload(lines: &[LineRequest], note: &str) -> String {
    /// `[item, quantity, [toppings]]`, with its note fourth when it has one,
    /// and its options fifth (the note `null` when none) when it has any: a
    /// line without them keeps the form stored before they existed.
    #[derive(Serialize)]
    #[serde(untagged)]
    enum Line {
        Plain(Uuid, i64, Vec<Uuid>),
        Noted(Uuid, i64, Vec<Uuid>, String),
        Chosen(Uuid, i64, Vec<Uuid>, Option<String>, Vec<Uuid>),
    }
    #[derive(Serialize)]
    struct Canonical<'a> {
        lines: Vec<Line>,
        note: &'a str,
    }
    type Merged = BTreeMap<(Uuid, Vec<Uuid>, Option<String>, Vec<Uuid>), i64>;
    let mut merged = Merged::new();
    for line in lines {
        let mut toppings = line.topping_ids.clone();
        toppings.sort_unstable();
        let mut options = line.option_ids.clone();
        options.sort_unstable();
        *merged
            .entry((line.menu_item_id, toppings, line.note.clone(), options))
            .or_default() += line.quantity;
    }
    let lines = merged
        .into_iter()
        .map(
            |((item, toppings, note, options), quantity)| match (note, options) {
                (None, options) if options.is_empty() => Line::Plain(item, quantity, toppings),
                (Some(note), options) if options.is_empty() => {
                    Line::Noted(item, quantity, toppings, note)
                }
                (note, options) => Line::Chosen(item, quantity, toppings, note, options),
            },
        )
        .collect();
    serde_json::to_string(&Canonical { lines, note }).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rejection;
    use crate::idempotency::Fingerprint;
    use crate::order::{OrderRequest, ValidOrder};

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

    fn noted(item: Uuid, quantity: i64, note: &str) -> LineRequest {
        LineRequest {
            note: Some(note.to_owned()),
            ..line(item, quantity, &[])
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

    #[test]
    fn options_tell_lines_and_requests_apart() {
        let (steak, rare, done, fries) = (
            Uuid::from_u128(1),
            Uuid::from_u128(2),
            Uuid::from_u128(3),
            Uuid::from_u128(4),
        );
        let rare_one = request(vec![chosen(steak, 1, &[rare, fries])], "", false);
        let done_one = request(vec![chosen(steak, 1, &[done, fries])], "", false);
        assert_ne!(rare_one.fingerprint, done_one.fingerprint);
        assert_ne!(
            rare_one.payload_hash, done_one.payload_hash,
            "another choice is not a duplicate"
        );
        let reordered = request(vec![chosen(steak, 1, &[fries, rare])], "", false);
        assert_eq!(
            rare_one.fingerprint, reordered.fingerprint,
            "options sorted"
        );
        let merged = request(
            vec![chosen(steak, 1, &[rare]), chosen(steak, 1, &[rare])],
            "",
            false,
        );
        let two = request(vec![chosen(steak, 2, &[rare])], "", false);
        assert_eq!(merged.payload_hash, two.payload_hash, "same choices merge");
        let plain = request(vec![line(steak, 2, &[])], "", false);
        assert_ne!(plain.payload_hash, two.payload_hash);
        // Pinned: stored with records and compared with every retry to come.
        assert_eq!(
            two.payload_hash.as_str(),
            Fingerprint::of(&format!(
                r#"{{"lines":[["{steak}",2,[],null,["{rare}"]]],"note":""}}"#
            ))
            .as_str()
        );
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
}
