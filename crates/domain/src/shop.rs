//! Shops: the unit of tenancy. Every row ordergate stores belongs to one.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::validation::FieldErrors;
use crate::{Rejection, Timestamp};

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewShop {
    #[schema(example = "Sakura Diner")]
    pub name: String,
    /// ISO 4217 code; prices are integers in its minor unit.
    #[schema(example = "JPY")]
    pub currency: String,
    /// IANA time zone name; ticket numbers restart at the shop's midnight.
    #[schema(example = "Asia/Tokyo")]
    pub timezone: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Shop {
    pub shop_id: Uuid,
    pub name: String,
    pub currency: String,
    pub timezone: String,
    pub created_at: DateTime<Utc>,
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
        let timezone = self.timezone.unwrap_or_else(|| "UTC".to_owned());
        if timezone.parse::<chrono_tz::Tz>().is_err() {
            errors.push(
                "timezone",
                "must be an IANA time zone name such as Asia/Tokyo",
            );
        }
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
        assert_eq!(shop.timezone, "UTC");
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
