//! The catalog: the shop's master list of menu items and toppings, replaced
//! as a whole by staff. Items dropped from a new catalog are retired, never
//! deleted, so past orders and their snapshots stay meaningful.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::Rejection;
use crate::allergens::is_allergen;
use crate::validation::FieldErrors;

pub const MAX_ITEMS: usize = 500;
pub const MAX_TOPPINGS: usize = 200;
pub const MAX_TOPPINGS_PER_ITEM: usize = 50;
pub const MAX_PRICE: i64 = 100_000_000;
pub const MAX_TAGS: usize = 16;

/// Whether an inventory entry (and its id) belongs to a menu item or a topping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum ItemKind {
    MenuItem,
    Topping,
}

impl ItemKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::MenuItem => "menuItem",
            ItemKind::Topping => "topping",
        }
    }

    pub fn parse(s: &str) -> Option<ItemKind> {
        match s {
            "menuItem" => Some(ItemKind::MenuItem),
            "topping" => Some(ItemKind::Topping),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CatalogInput {
    #[serde(default)]
    pub toppings: Vec<ToppingInput>,
    #[serde(default)]
    pub items: Vec<MenuItemInput>,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToppingInput {
    /// Kept when given; assigned when absent.
    pub topping_id: Option<Uuid>,
    pub name: String,
    pub price: i64,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MenuItemInput {
    /// Kept when given; assigned when absent.
    pub menu_item_id: Option<Uuid>,
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub category: String,
    pub price: i64,
    /// Toppings a guest may add to this item; must be toppings of this catalog.
    #[serde(default)]
    pub topping_ids: Vec<Uuid>,
    /// How many toppings one line may carry; defaults to all of `toppingIds`.
    pub max_toppings: Option<i64>,
    /// Codes from the fixed list in docs/api.md (the EU's 14 and Japan's 28).
    #[serde(default)]
    pub allergens: Vec<String>,
    /// Dietary and other tags such as `vegetarian`, `vegan`, `halal`,
    /// `gluten_free`, `spicy`: 1–32 of `[a-z0-9_]` each, at most 16.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Where the kitchen makes it (`bar`, `grill`), 1–32 characters.
    pub station: Option<String>,
}

/// What an item declares besides its name and price: for guests choosing
/// (allergens, dietary tags) and for the kitchen (its station).
// The stores keep it as one JSON value, so details to come need no column.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ItemDetails {
    #[serde(default)]
    pub allergens: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub station: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Topping {
    pub topping_id: Uuid,
    pub name: String,
    pub price: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MenuItem {
    pub menu_item_id: Uuid,
    pub name: String,
    pub description: String,
    pub category: String,
    pub price: i64,
    pub topping_ids: Vec<Uuid>,
    pub max_toppings: i64,
    #[serde(flatten)]
    pub details: ItemDetails,
}

/// The active catalog of a shop. `version` 0 means no catalog was ever published.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Catalog {
    pub shop_id: Uuid,
    pub version: i64,
    pub toppings: Vec<Topping>,
    pub items: Vec<MenuItem>,
}

impl Catalog {
    pub fn is_published(&self) -> bool {
        self.version > 0
    }
}

/// Whether an edit made against `expected` (the version its editor read;
/// `None`: whatever is there) may replace the catalog now at `current`.
pub fn check_edit_base(expected: Option<i64>, current: i64) -> Result<(), Rejection> {
    match expected {
        Some(expected) if expected != current => Err(Rejection::CatalogVersionConflict { current }),
        _ => Ok(()),
    }
}

/// A catalog that passed validation, with every id assigned.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidCatalog {
    pub toppings: Vec<Topping>,
    pub items: Vec<MenuItem>,
}

impl CatalogInput {
    /// Validates the whole catalog and assigns missing ids.
    ///
    /// `known_kind` tells what an id already names in this shop (including
    /// retired entries): an id keeps its kind for life, because inventory and
    /// past orders refer to it.
    pub fn validate(
        self,
        known_kind: impl Fn(Uuid) -> Option<ItemKind>,
    ) -> Result<ValidCatalog, Rejection> {
        let mut errors = FieldErrors::default();
        if self.toppings.len() > MAX_TOPPINGS {
            errors.push("toppings", format!("at most {MAX_TOPPINGS} toppings"));
        }
        if self.items.len() > MAX_ITEMS {
            errors.push("items", format!("at most {MAX_ITEMS} items"));
        }

        let mut seen_ids = HashSet::new();
        let mut claim_id = |errors: &mut FieldErrors, field: String, id: Uuid, kind: ItemKind| {
            if !seen_ids.insert(id) {
                errors.push(field, "id appears more than once in this catalog");
            } else if known_kind(id).is_some_and(|known| known != kind) {
                let other = match kind {
                    ItemKind::MenuItem => "a topping",
                    ItemKind::Topping => "a menu item",
                };
                errors.push(field, format!("id already belongs to {other}"));
            }
        };

        let mut toppings = Vec::with_capacity(self.toppings.len());
        for (i, t) in self.toppings.into_iter().enumerate() {
            let at = |f: &str| format!("toppings[{i}].{f}");
            let topping_id = t.topping_id.unwrap_or_else(Uuid::new_v4);
            if t.topping_id.is_some() {
                claim_id(&mut errors, at("toppingId"), topping_id, ItemKind::Topping);
            }
            errors.text(&at("name"), &t.name, 1, 80);
            errors.range(at("price"), t.price, 0, MAX_PRICE);
            toppings.push(Topping {
                topping_id,
                name: t.name.trim().to_owned(),
                price: t.price,
            });
        }
        let topping_ids: HashSet<Uuid> = toppings.iter().map(|t| t.topping_id).collect();

        let mut items = Vec::with_capacity(self.items.len());
        for (i, item) in self.items.into_iter().enumerate() {
            let at = |f: &str| format!("items[{i}].{f}");
            let menu_item_id = item.menu_item_id.unwrap_or_else(Uuid::new_v4);
            if item.menu_item_id.is_some() {
                claim_id(
                    &mut errors,
                    at("menuItemId"),
                    menu_item_id,
                    ItemKind::MenuItem,
                );
            }
            errors.text(&at("name"), &item.name, 1, 80);
            errors.text(&at("description"), &item.description, 0, 500);
            errors.text(&at("category"), &item.category, 1, 40);
            errors.range(at("price"), item.price, 0, MAX_PRICE);
            check_offered_toppings(&mut errors, i, &item.topping_ids, &topping_ids);
            let details = check_details(
                &mut errors,
                i,
                ItemDetails {
                    allergens: item.allergens,
                    tags: item.tags,
                    station: item.station,
                },
            );
            let allowed = item.topping_ids.len() as i64;
            let max_toppings = item.max_toppings.unwrap_or(allowed);
            errors.range(at("maxToppings"), max_toppings, 0, allowed);
            items.push(MenuItem {
                menu_item_id,
                name: item.name.trim().to_owned(),
                description: item.description.trim().to_owned(),
                category: item.category.trim().to_owned(),
                price: item.price,
                topping_ids: item.topping_ids,
                max_toppings,
                details,
            });
        }
        errors.finish(ValidCatalog { toppings, items })
    }
}

/// An item's details: known allergen codes and well-formed tags, none
/// twice, and a station of 1–32 characters; trimmed as stored.
fn check_details(errors: &mut FieldErrors, i: usize, details: ItemDetails) -> ItemDetails {
    let mut seen = HashSet::new();
    for (j, code) in details.allergens.iter().enumerate() {
        let field = format!("items[{i}].allergens[{j}]");
        if !is_allergen(code) {
            errors.push(field, "not an allergen code of the documented list");
        } else if !seen.insert(code) {
            errors.push(field, "listed twice");
        }
    }
    if details.tags.len() > MAX_TAGS {
        errors.push(
            format!("items[{i}].tags"),
            format!("at most {MAX_TAGS} tags"),
        );
    }
    let mut seen = HashSet::new();
    for (j, tag) in details.tags.iter().enumerate() {
        let field = format!("items[{i}].tags[{j}]");
        let well_formed = (1..=32).contains(&tag.len())
            && tag
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !well_formed {
            errors.push(field, "1-32 of lowercase letters, digits and _");
        } else if !seen.insert(tag) {
            errors.push(field, "listed twice");
        }
    }
    if let Some(station) = &details.station {
        errors.text(&format!("items[{i}].station"), station, 1, 32);
    }
    ItemDetails {
        station: details.station.map(|s| s.trim().to_owned()),
        ..details
    }
}

/// An item's toppings: at most [`MAX_TOPPINGS_PER_ITEM`], each a topping of
/// this catalog, none twice.
fn check_offered_toppings(
    errors: &mut FieldErrors,
    i: usize,
    offered: &[Uuid],
    catalog_toppings: &HashSet<Uuid>,
) {
    if offered.len() > MAX_TOPPINGS_PER_ITEM {
        errors.push(
            format!("items[{i}].toppingIds"),
            format!("at most {MAX_TOPPINGS_PER_ITEM} toppings per item"),
        );
    }
    let mut own = HashSet::new();
    for (j, id) in offered.iter().enumerate() {
        if !catalog_toppings.contains(id) {
            errors.push(
                format!("items[{i}].toppingIds[{j}]"),
                "not a topping of this catalog",
            );
        } else if !own.insert(*id) {
            errors.push(format!("items[{i}].toppingIds[{j}]"), "listed twice");
        }
    }
}

impl ValidCatalog {
    /// Every id in the catalog with its kind, for stores creating inventory entries.
    pub fn kinds(&self) -> HashMap<Uuid, ItemKind> {
        let toppings = self
            .toppings
            .iter()
            .map(|t| (t.topping_id, ItemKind::Topping));
        let items = self
            .items
            .iter()
            .map(|i| (i.menu_item_id, ItemKind::MenuItem));
        toppings.chain(items).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topping(id: Option<Uuid>, name: &str) -> ToppingInput {
        ToppingInput {
            topping_id: id,
            name: name.into(),
            price: 100,
        }
    }

    fn item(name: &str, topping_ids: Vec<Uuid>) -> MenuItemInput {
        MenuItemInput {
            menu_item_id: None,
            name: name.into(),
            description: String::new(),
            category: "Mains".into(),
            price: 900,
            topping_ids,
            max_toppings: None,
            allergens: vec![],
            tags: vec![],
            station: None,
        }
    }

    fn fields(rejection: Rejection) -> Vec<String> {
        match rejection {
            Rejection::Validation(errors) => errors.into_iter().map(|e| e.field).collect(),
            other => panic!("expected validation, got {other:?}"),
        }
    }

    #[test]
    fn missing_ids_are_assigned_and_given_ids_kept() {
        let cheese = Uuid::new_v4();
        let input = CatalogInput {
            toppings: vec![topping(Some(cheese), "Cheese"), topping(None, "Egg")],
            items: vec![item("Curry", vec![cheese])],
        };
        let valid = input.validate(|_| None).unwrap();
        assert_eq!(valid.toppings[0].topping_id, cheese);
        assert_ne!(valid.toppings[1].topping_id, Uuid::nil());
        assert_eq!(
            valid.items[0].max_toppings, 1,
            "defaults to all allowed toppings"
        );
        assert_eq!(valid.kinds().len(), 3);
    }

    #[test]
    fn every_problem_is_reported_with_its_path() {
        let dup = Uuid::new_v4();
        let mut bad_item = item("", vec![Uuid::new_v4(), dup, dup]);
        bad_item.price = -1;
        bad_item.max_toppings = Some(9);
        let input = CatalogInput {
            toppings: vec![topping(Some(dup), "Cheese"), topping(Some(dup), "Egg")],
            items: vec![bad_item],
        };
        assert_eq!(
            fields(input.validate(|_| None).unwrap_err()),
            [
                "toppings[1].toppingId",
                "items[0].name",
                "items[0].price",
                "items[0].toppingIds[0]",
                "items[0].toppingIds[2]",
                "items[0].maxToppings",
            ]
        );
    }

    #[test]
    fn details_take_known_allergens_plain_tags_and_a_short_station() {
        let mut curry = item("Curry", vec![]);
        curry.allergens = vec!["wheat".into(), "milk".into()];
        curry.tags = vec!["spicy".into(), "gluten_free".into()];
        curry.station = Some(" grill ".into());
        let valid = CatalogInput {
            toppings: vec![],
            items: vec![curry],
        }
        .validate(|_| None)
        .unwrap();
        assert_eq!(
            valid.items[0].details,
            ItemDetails {
                allergens: vec!["wheat".into(), "milk".into()],
                tags: vec!["spicy".into(), "gluten_free".into()],
                station: Some("grill".into()),
            },
            "kept in the order given; the station trimmed"
        );

        let mut bad = item("Curry", vec![]);
        bad.allergens = vec!["peanut".into(), "nuts".into(), "peanut".into()];
        bad.tags = vec![
            "Vegan".into(),
            "halal".into(),
            "halal".into(),
            String::new(),
        ];
        bad.station = Some("  ".into());
        let input = CatalogInput {
            toppings: vec![],
            items: vec![bad],
        };
        assert_eq!(
            fields(input.validate(|_| None).unwrap_err()),
            [
                "items[0].allergens[1]",
                "items[0].allergens[2]",
                "items[0].tags[0]",
                "items[0].tags[2]",
                "items[0].tags[3]",
                "items[0].station",
            ]
        );
        let mut many = item("Curry", vec![]);
        many.tags = (0..=MAX_TAGS).map(|n| format!("tag{n}")).collect();
        let input = CatalogInput {
            toppings: vec![],
            items: vec![many],
        };
        assert_eq!(
            fields(input.validate(|_| None).unwrap_err()),
            ["items[0].tags"]
        );
    }

    #[test]
    fn an_edit_must_start_from_the_current_version_when_it_names_one() {
        assert_eq!(check_edit_base(None, 7), Ok(()));
        assert_eq!(check_edit_base(Some(7), 7), Ok(()));
        assert_eq!(
            check_edit_base(Some(6), 7),
            Err(Rejection::CatalogVersionConflict { current: 7 })
        );
    }

    #[test]
    fn an_id_cannot_change_kind() {
        let id = Uuid::new_v4();
        let mut curry = item("Curry", vec![]);
        curry.menu_item_id = Some(id);
        let input = CatalogInput {
            toppings: vec![],
            items: vec![curry],
        };
        let err = input.validate(|known| (known == id).then_some(ItemKind::Topping));
        assert_eq!(fields(err.unwrap_err()), ["items[0].menuItemId"]);
    }
}
