//! The catalog: the shop's master list of menu items and toppings, replaced
//! as a whole by staff. Items dropped from a new catalog are retired, never
//! deleted, so past orders and their snapshots stay meaningful.

mod options;
mod validate;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::Rejection;
use crate::language::Text;

pub use options::{
    GroupShape, ItemOption, MAX_OPTION_GROUPS_PER_ITEM, MAX_OPTIONS_PER_GROUP, OptionGroup,
    OptionGroupInput, OptionInput,
};

pub const MAX_ITEMS: usize = 500;
pub const MAX_TOPPINGS: usize = 200;
pub const MAX_TOPPINGS_PER_ITEM: usize = 50;
pub const MAX_PRICE: i64 = 100_000_000;
pub const MAX_TAGS: usize = 16;

/// Whether an inventory entry (and its id) belongs to a menu item, a
/// topping or an option of an item's option group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum ItemKind {
    MenuItem,
    Topping,
    Option,
}

impl ItemKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::MenuItem => "menuItem",
            ItemKind::Topping => "topping",
            ItemKind::Option => "option",
        }
    }

    pub fn parse(s: &str) -> Option<ItemKind> {
        match s {
            "menuItem" => Some(ItemKind::MenuItem),
            "topping" => Some(ItemKind::Topping),
            "option" => Some(ItemKind::Option),
            _ => None,
        }
    }

    /// How a problem names something of this kind: "a topping".
    fn with_article(self) -> &'static str {
        match self {
            ItemKind::MenuItem => "a menu item",
            ItemKind::Topping => "a topping",
            ItemKind::Option => "an option",
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
    pub name: Text,
    pub price: i64,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MenuItemInput {
    /// Kept when given; assigned when absent.
    pub menu_item_id: Option<Uuid>,
    /// A string, or an object of language → string (as every display
    /// text of the catalog).
    pub name: Text,
    #[serde(default)]
    pub description: Text,
    pub category: Text,
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
    /// Choices a guest makes for this item (doneness, size, sides); a group
    /// with `minChoices` 1 must be chosen from.
    #[serde(default)]
    pub option_groups: Vec<OptionGroupInput>,
    /// A photo of this shop's, from `POST /shops/{shopId}/images`.
    pub image_id: Option<Uuid>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_id: Option<Uuid>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Topping {
    pub topping_id: Uuid,
    pub name: Text,
    pub price: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MenuItem {
    pub menu_item_id: Uuid,
    pub name: Text,
    pub description: Text,
    pub category: Text,
    pub price: i64,
    pub topping_ids: Vec<Uuid>,
    pub max_toppings: i64,
    #[serde(flatten)]
    pub details: ItemDetails,
    pub option_groups: Vec<OptionGroup>,
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

    /// The station that makes the item; `None` for an item without one, or
    /// one no longer listed.
    pub fn station_of(&self, menu_item_id: Uuid) -> Option<&str> {
        self.items
            .iter()
            .find(|item| item.menu_item_id == menu_item_id)
            .and_then(|item| item.details.station.as_deref())
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

/// What a shop already has that a new catalog may name: the kind of every
/// id it ever used (retired ones included: an id keeps its kind for life,
/// because inventory and past orders refer to it), and its photos.
#[derive(Debug, Clone, Default)]
pub struct Existing {
    pub kinds: HashMap<Uuid, ItemKind>,
    pub images: std::collections::HashSet<Uuid>,
}

/// A catalog that passed validation, with every id assigned.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidCatalog {
    pub toppings: Vec<Topping>,
    pub items: Vec<MenuItem>,
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
        let options = self
            .items
            .iter()
            .flat_map(MenuItem::options)
            .map(|o| (o.option_id, ItemKind::Option));
        toppings.chain(items).chain(options).collect()
    }
}

impl MenuItem {
    /// Every option of every group, in display order.
    pub fn options(&self) -> impl Iterator<Item = &ItemOption> {
        self.option_groups.iter().flat_map(|g| g.options.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_must_start_from_the_current_version_when_it_names_one() {
        assert_eq!(check_edit_base(None, 7), Ok(()));
        assert_eq!(check_edit_base(Some(7), 7), Ok(()));
        assert_eq!(
            check_edit_base(Some(6), 7),
            Err(Rejection::CatalogVersionConflict { current: 7 })
        );
    }
}
