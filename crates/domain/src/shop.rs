//! Shops: the unit of tenancy. Every row ordergate stores belongs to one.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::language::Languages;
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
    /// BCP 47 tags of the languages the menu is written in, the default
    /// (the kitchen's) first; `["en"]` when left out.
    #[cfg_attr(feature = "openapi", schema(example = json!(["ja", "en"])))]
    // Staff keys fingerprint the parsed body: a request without languages
    // must digest as it did before they existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub languages: Option<Vec<String>>,
}

/// Body of `PATCH /shops/{shopId}`: what a shop may change about itself.
/// Its currency and time zone stay: prices and ticket days are counted in
/// them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShopPatch {
    pub name: Option<String>,
    #[cfg_attr(feature = "openapi", schema(example = json!(["ja", "en"])))]
    pub languages: Option<Vec<String>>,
    /// Minutes after which a ticket shows amber on the kitchen display.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 240, example = 6))]
    pub kitchen_warn_minutes: Option<i64>,
    /// Minutes after which a ticket shows red; more than the warning.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 240, example = 12))]
    pub kitchen_late_minutes: Option<i64>,
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
    /// The menu's languages, the default first.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, example = json!(["ja", "en"])))]
    pub languages: Languages,
    /// Minutes after which a ticket shows amber on the kitchen display.
    pub kitchen_warn_minutes: i64,
    /// Minutes after which it shows red.
    pub kitchen_late_minutes: i64,
    pub created_at: DateTime<Utc>,
}

/// A ticket's age colours, until the shop sets its own: amber at 5
/// minutes, red at 10.
pub const KITCHEN_WARN_MINUTES: i64 = 5;
pub const KITCHEN_LATE_MINUTES: i64 = 10;
/// The longest threshold: four hours.
const MAX_KITCHEN_MINUTES: i64 = 240;

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

    /// The shop's wall clock at `at`, as `HH:MM`.
    pub fn clock_of(self, at: Timestamp) -> String {
        at.with_timezone(&self.0).format("%H:%M").to_string()
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
        let languages = match self.languages {
            None => Languages::default(),
            Some(tags) => Languages::validate(tags, "languages", &mut errors),
        };
        errors.finish(Shop {
            shop_id,
            name: self.name.trim().to_owned(),
            currency: self.currency,
            timezone,
            languages,
            kitchen_warn_minutes: KITCHEN_WARN_MINUTES,
            kitchen_late_minutes: KITCHEN_LATE_MINUTES,
            created_at,
        })
    }
}

impl ShopPatch {
    /// The shop with this patch applied; a field left out stays as it is.
    pub fn apply(self, shop: Shop) -> Result<Shop, Rejection> {
        let mut errors = FieldErrors::default();
        if let Some(name) = &self.name {
            errors.text("name", name, 1, 100);
        }
        let languages = match self.languages {
            None => shop.languages.clone(),
            Some(tags) => Languages::validate(tags, "languages", &mut errors),
        };
        let warn = self
            .kitchen_warn_minutes
            .unwrap_or(shop.kitchen_warn_minutes);
        let late = self
            .kitchen_late_minutes
            .unwrap_or(shop.kitchen_late_minutes);
        let mut in_range = true;
        for (field, given) in [
            ("kitchenWarnMinutes", self.kitchen_warn_minutes),
            ("kitchenLateMinutes", self.kitchen_late_minutes),
        ] {
            if given.is_some_and(|m| !(1..=MAX_KITCHEN_MINUTES).contains(&m)) {
                errors.push(field, format!("must be 1–{MAX_KITCHEN_MINUTES} minutes"));
                in_range = false;
            }
        }
        if in_range && warn >= late {
            // Named where the change came from: the field the patch gave.
            let field = if self.kitchen_late_minutes.is_some() {
                "kitchenLateMinutes"
            } else {
                "kitchenWarnMinutes"
            };
            errors.push(
                field,
                format!("the red threshold ({late}) must come after the amber one ({warn})"),
            );
        }
        errors.finish(Shop {
            name: self.name.map_or(shop.name, |name| name.trim().to_owned()),
            languages,
            kitchen_warn_minutes: warn,
            kitchen_late_minutes: late,
            ..shop
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
            languages: None,
        }
    }

    #[test]
    fn a_shop_serves_english_unless_told_and_a_patch_changes_only_what_it_names() {
        let shop = new_shop("JPY", None)
            .validate(Uuid::nil(), crate::now())
            .unwrap();
        assert_eq!(
            serde_json::to_value(&shop).unwrap()["languages"],
            serde_json::json!(["en"])
        );
        let patched = ShopPatch {
            languages: Some(vec!["JA".into(), "en".into()]),
            ..ShopPatch::default()
        }
        .apply(shop.clone())
        .unwrap();
        assert_eq!(
            (
                patched.name.as_str(),
                patched.languages.default_language().as_str()
            ),
            ("Sakura Diner", "ja")
        );
        let refused = ShopPatch {
            name: Some(" ".into()),
            languages: Some(vec![]),
            ..ShopPatch::default()
        }
        .apply(shop);
        let Err(Rejection::Validation(errors)) = refused else {
            panic!("expected validation errors");
        };
        let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["name", "languages"]);
    }

    #[test]
    fn kitchen_thresholds_stay_in_range_and_red_comes_after_amber() {
        let shop = new_shop("JPY", None)
            .validate(Uuid::nil(), crate::now())
            .unwrap();
        assert_eq!(
            (shop.kitchen_warn_minutes, shop.kitchen_late_minutes),
            (5, 10)
        );
        let patch = |warn, late| ShopPatch {
            kitchen_warn_minutes: warn,
            kitchen_late_minutes: late,
            ..ShopPatch::default()
        };
        let fields = |patch: ShopPatch| match patch.apply(shop.clone()) {
            Ok(shop) => Ok((shop.kitchen_warn_minutes, shop.kitchen_late_minutes)),
            Err(Rejection::Validation(errors)) => {
                Err(errors.into_iter().map(|e| e.field).collect::<Vec<_>>())
            }
            Err(other) => panic!("{other:?}"),
        };
        assert_eq!(fields(patch(Some(6), Some(12))), Ok((6, 12)));
        assert_eq!(fields(patch(Some(8), None)), Ok((8, 10)), "the other stays");
        assert_eq!(
            fields(patch(None, Some(5))),
            Err(vec!["kitchenLateMinutes".to_owned()]),
            "red at amber's minute"
        );
        assert_eq!(
            fields(patch(Some(10), None)),
            Err(vec!["kitchenWarnMinutes".to_owned()])
        );
        assert_eq!(
            fields(patch(Some(0), Some(241))),
            Err(vec![
                "kitchenWarnMinutes".to_owned(),
                "kitchenLateMinutes".to_owned()
            ])
        );
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
