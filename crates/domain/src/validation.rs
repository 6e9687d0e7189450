//! Field-level validation errors, collected rather than failing on the first
//! one, so a client fixing a catalog sees every problem at once.

use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
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
    /// not bytes, so Japanese menus get the same limits) and no control
    /// characters, which have no business on a ticket or a receipt.
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
        } else if value.chars().any(char::is_control) {
            self.push(field, "must not contain control characters");
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
    fn text_limits_count_characters_not_bytes() {
        let mut errors = FieldErrors::default();
        errors.text("name", "カレーライス", 1, 6);
        assert!(errors.is_empty());
        errors.text("name", "カレーライス!", 1, 6);
        errors.text("name", "   ", 1, 6);
        errors.text("name", "a\u{7}b", 1, 6);
        let Err(crate::Rejection::Validation(found)) = errors.finish(()) else {
            panic!("expected validation errors");
        };
        let messages: Vec<_> = found.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "must be at most 6 characters",
                "must not be empty",
                "must not contain control characters"
            ]
        );
    }
}
