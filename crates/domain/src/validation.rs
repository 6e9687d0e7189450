//! Field-level validation errors, collected rather than failing on the first
//! one, so a client fixing a catalog sees every problem at once.

use serde::Serialize;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// What a field holding hidden characters is told.
pub const HIDDEN_CHARACTERS: &str = "must not contain control or invisible formatting characters (such as bidi overrides or zero-width spaces)";

/// Characters that have no business on a ticket, a menu or a receipt:
/// controls, and the invisible formatting characters (bidi overrides and
/// isolates, zero-width spaces and joiners, the byte order mark, line and
/// paragraph separators) that make text read otherwise than it says —
/// "no nuts" shown as "stun on".
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c.general_category(),
            GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
        )
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FieldError {
    /// Path of the offending field, e.g. `items[2].price`.
    pub field: String,
    pub message: String,
}

#[derive(Debug, Default)]
pub struct FieldErrors(Vec<FieldError>);

impl FieldErrors {
    pub fn push(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError {
            field: field.into(),
            message: message.into(),
        });
    }

    /// Checks a free-text field: trimmed length within bounds (in characters,
    /// not bytes, so Japanese menus get the same limits) and nothing
    /// [hidden](is_hidden).
    pub fn text(&mut self, field: &str, value: &str, min: usize, max: usize) {
        let len = value.trim().chars().count();
        if len < min {
            if min == 1 {
                self.push(field, "must not be empty");
            } else {
                self.push(field, format!("must be at least {min} characters"));
            }
        } else if value.chars().count() > max {
            self.push(field, format!("must be at most {max} characters"));
        } else if value.chars().any(is_hidden) {
            self.push(field, HIDDEN_CHARACTERS);
        }
    }

    /// `field` is only written out for an error (pass `format_args!`): the
    /// name of every line's field formatted for nothing was a tenth of an
    /// order's validation.
    pub fn range(&mut self, field: impl std::fmt::Display, value: i64, min: i64, max: i64) {
        if !(min..=max).contains(&value) {
            self.push(
                field.to_string(),
                format!("must be between {min} and {max}"),
            );
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `Ok(value)` when nothing was recorded, otherwise the validation rejection.
    pub fn finish<T>(self, value: T) -> Result<T, crate::Rejection> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(crate::Rejection::Validation(self.0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_are_controls_and_invisible_formatting() {
        for c in [
            '\u{0}',
            '\n',
            '\u{7f}',
            '\u{202a}',
            '\u{202e}',
            '\u{2066}',
            '\u{2069}',
            '\u{200b}',
            '\u{200d}',
            '\u{200e}',
            '\u{feff}',
            '\u{2028}',
            '\u{2029}',
            '\u{ad}',
            '\u{e0041}',
        ] {
            assert!(is_hidden(c), "{:04x}", c as u32);
        }
        for c in ['a', 'カ', '　', ' ', '🍛', 'é', '\u{301}', '！'] {
            assert!(!is_hidden(c), "{:04x}", c as u32);
        }
    }

    #[test]
    fn text_limits_count_characters_not_bytes() {
        let mut errors = FieldErrors::default();
        errors.text("name", "カレーライス", 1, 6);
        assert!(errors.is_empty());
        errors.text("name", "カレーライス!", 1, 6);
        errors.text("name", "   ", 1, 6);
        errors.text("name", "a\u{7}b", 1, 6);
        errors.text("name", "no\u{202e}stun", 1, 10);
        let Err(crate::Rejection::Validation(found)) = errors.finish(()) else {
            panic!("expected validation errors");
        };
        let messages: Vec<_> = found.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "must be at most 6 characters",
                "must not be empty",
                HIDDEN_CHARACTERS,
                HIDDEN_CHARACTERS,
            ]
        );
    }
}
