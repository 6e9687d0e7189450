//! Shops: the unit of tenancy. Every row ordergate stores belongs to one.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::validation::FieldErrors;
use crate::{Rejection, Timestamp};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewShop {
    #[cfg_attr(feature = "openapi", schema(example = "Sakura Diner"))]
    pub name: String,
    /// ISO 4217 code; prices are integers in its minor unit.
    #[cfg_attr(feature = "openapi", schema(example = "JPY"))]
    pub currency: String,
    /// IANA time zone name; ticket numbers restart at the shop's midnight.
    #[cfg_attr(feature = "openapi", schema(example = "Asia/Tokyo"))]
    pub timezone: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Shop {
    pub shop_id: Uuid,
    pub name: String,
    pub currency: String,
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "Asia/Tokyo"))]
    pub timezone: ShopTimeZone,
    pub created_at: DateTime<Utc>,
}

/// A shop's IANA time zone, checked when the shop is created: its days
/// (ticket numbers restart at its midnight) are counted in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShopTimeZone(chrono_tz::Tz);

impl ShopTimeZone {
    pub const UTC: ShopTimeZone = ShopTimeZone(chrono_tz::UTC);

    /// `None` for a name that is not an IANA time zone.
    pub fn parse(name: &str) -> Option<ShopTimeZone> {
        name.parse().ok().map(ShopTimeZone)
    }

    pub fn name(self) -> &'static str {
        self.0.name()
    }

    /// The shop's local date at `at`, as `YYYY-MM-DD`.
    pub fn day_of(self, at: Timestamp) -> String {
        at.with_timezone(&self.0).format("%Y-%m-%d").to_string()
    }
}

impl Serialize for ShopTimeZone {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl NewShop {
    pub fn validate(self, shop_id: Uuid, created_at: Timestamp) -> Result<Shop, Rejection> {
        let mut errors = FieldErrors::default();
        errors.text("name", &self.name, 1, 100);
        if iso_currency::Currency::from_code(&self.currency).is_none() {
            errors.push(
                "currency",
                "must be an ISO 4217 currency code such as JPY or USD",
            );
        }
        let timezone = match self.timezone.as_deref() {
            None => ShopTimeZone::UTC,
            Some(name) => ShopTimeZone::parse(name).unwrap_or_else(|| {
                errors.push(
                    "timezone",
                    "must be an IANA time zone name such as Asia/Tokyo",
                );
                ShopTimeZone::UTC
            }),
        };
        errors.finish(Shop {
            shop_id,
            name: self.name.trim().to_owned(),
            currency: self.currency,
            timezone,
            created_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_shop(currency: &str, timezone: Option<&str>) -> NewShop {
        NewShop {
            name: " Sakura Diner ".into(),
            currency: currency.into(),
            timezone: timezone.map(Into::into),
        }
    }

    #[test]
    fn valid_shop_is_trimmed_and_defaults_to_utc() {
        let shop = new_shop("JPY", None)
            .validate(Uuid::nil(), crate::now())
            .unwrap();
        assert_eq!(shop.name, "Sakura Diner");
        assert_eq!(shop.timezone, ShopTimeZone::UTC);
        assert_eq!(
            serde_json::to_value(&shop).unwrap()["timezone"],
            "UTC",
            "sent as its name"
        );
    }

    #[test]
    fn a_shop_day_is_its_local_date() {
        let at: Timestamp = "2026-11-30T20:30:00Z".parse().unwrap();
        assert_eq!(ShopTimeZone::UTC.day_of(at), "2026-11-30");
        let tokyo = ShopTimeZone::parse("Asia/Tokyo").unwrap();
        assert_eq!(
            (tokyo.name(), tokyo.day_of(at).as_str()),
            ("Asia/Tokyo", "2026-12-01")
        );
        assert_eq!(ShopTimeZone::parse("Mars/Olympus"), None);
    }

    #[test]
    fn unknown_currency_and_timezone_are_field_errors() {
        let Err(Rejection::Validation(errors)) =
            new_shop("XYZ", Some("Mars/Olympus")).validate(Uuid::nil(), crate::now())
        else {
            panic!("expected validation errors");
        };
        let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["currency", "timezone"]);
        assert!(
            new_shop("jpy", None)
                .validate(Uuid::nil(), crate::now())
                .is_err()
        );
    }
}
