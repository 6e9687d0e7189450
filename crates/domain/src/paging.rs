//! The `limit` query parameter shared by every list endpoint.

use crate::Rejection;

/// A validated page size: 1–500.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit(u32);

impl Limit {
    pub const MAX: u32 = 500;
    pub const DEFAULT: Limit = Limit(100);
    /// The largest page.
    pub const MAX_PAGE: Limit = Limit(Self::MAX);
    /// Order history pages are shorter: a phone polls them to reconcile.
    pub const ORDER_HISTORY: Limit = Limit(20);

    /// Parses the raw query value; an absent value takes `default`.
    pub fn parse(raw: Option<&str>, default: Limit) -> Result<Limit, Rejection> {
        let Some(raw) = raw else {
            return Ok(default);
        };
        match raw.parse::<u32>() {
            Ok(n) if (1..=Self::MAX).contains(&n) => Ok(Limit(n)),
            _ => Err(Rejection::field(
                "limit",
                format!("must be an integer between 1 and {}", Self::MAX),
            )),
        }
    }

    pub fn get(self) -> u32 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_accepts_one_to_five_hundred_only() {
        assert_eq!(Limit::parse(None, Limit::DEFAULT), Ok(Limit(100)));
        assert_eq!(Limit::parse(Some("1"), Limit::DEFAULT), Ok(Limit(1)));
        assert_eq!(Limit::parse(Some("500"), Limit::DEFAULT), Ok(Limit(500)));
        for bad in ["0", "501", "-1", "ten", "", "1.5"] {
            assert!(Limit::parse(Some(bad), Limit::DEFAULT).is_err(), "{bad}");
        }
    }
}
