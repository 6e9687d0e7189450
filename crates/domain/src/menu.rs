//! The guest menu: the active catalog with live stock merged in.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::Timestamp;
use crate::catalog::{Catalog, MenuItem, OptionGroup, Topping};
use crate::inventory::StockLevel;
use crate::language::{Language, Languages, Text};
use crate::shop::Shop;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Menu {
    pub shop_id: Uuid,
    pub catalog_version: i64,
    pub currency: String,
    /// The language every text of this menu is in (as far as the catalog
    /// has it): the one asked for, if the shop serves it, else the default.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "ja"))]
    pub language: Language,
    /// The languages the shop serves its menu in, the default first.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, example = json!(["ja", "en"])))]
    pub languages: Languages,
    pub items: Vec<MenuEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MenuEntry {
    pub menu_item_id: Uuid,
    pub name: String,
    pub description: String,
    pub category: String,
    pub price: i64,
    /// `null` when untracked (unlimited).
    pub stock: Option<i64>,
    pub sold_out: bool,
    /// When a manual 86 in force lapses by itself, if it does.
    pub sold_out_until: Option<DateTime<Utc>>,
    pub max_toppings: i64,
    pub toppings: Vec<MenuTopping>,
    /// Choices to make for the item; a group with `minChoices` ≥ 1 must be
    /// chosen from (and when too few of its options are left, the item is
    /// sold out).
    pub option_groups: Vec<MenuOptionGroup>,
    /// Allergen codes (docs/api.md has the list).
    pub allergens: Vec<String>,
    pub tags: Vec<String>,
    pub image_id: Option<Uuid>,
    /// Where its photo is: the phone-sized rendition, `/images/{imageId}`.
    pub image_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MenuOptionGroup {
    pub group_id: Uuid,
    pub name: String,
    pub min_choices: i64,
    pub max_choices: i64,
    pub options: Vec<MenuOption>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MenuOption {
    pub option_id: Uuid,
    pub name: String,
    pub price: i64,
    pub stock: Option<i64>,
    pub sold_out: bool,
    /// When a manual 86 in force lapses by itself, if it does.
    pub sold_out_until: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MenuTopping {
    pub topping_id: Uuid,
    pub name: String,
    pub price: i64,
    pub stock: Option<i64>,
    pub sold_out: bool,
    /// When a manual 86 in force lapses by itself, if it does.
    pub sold_out_until: Option<DateTime<Utc>>,
}

impl Menu {
    /// Merges stock into the catalog as of `now` (86 marks may have lapsed),
    /// every text in `language` (or its fallbacks, [`Text::render`]). Ids
    /// without a stock row are treated as untracked.
    pub fn build(
        shop: &Shop,
        catalog: &Catalog,
        levels: &HashMap<Uuid, StockLevel>,
        now: Timestamp,
        language: &Language,
    ) -> Menu {
        let untracked = StockLevel::default();
        let pen = Pen {
            language,
            default: shop.languages.default_language(),
            levels,
            untracked: &untracked,
            now,
        };
        let toppings: HashMap<Uuid, MenuTopping> = catalog
            .toppings
            .iter()
            .map(|t| (t.topping_id, pen.topping(t)))
            .collect();
        Menu {
            shop_id: shop.shop_id,
            catalog_version: catalog.version,
            currency: shop.currency.clone(),
            language: language.clone(),
            languages: shop.languages.clone(),
            items: catalog
                .items
                .iter()
                .map(|item| pen.item(item, &toppings))
                .collect(),
        }
    }
}

/// Where a photo's rendition is served, from the server's root.
pub fn image_path(image_id: Uuid) -> String {
    format!("/images/{image_id}")
}

/// What a menu is drawn with: its language, and the stock as of a moment.
struct Pen<'a> {
    language: &'a Language,
    default: &'a Language,
    levels: &'a HashMap<Uuid, StockLevel>,
    untracked: &'a StockLevel,
    now: Timestamp,
}

impl Pen<'_> {
    fn text(&self, text: &Text) -> String {
        text.render(self.language, self.default).to_owned()
    }

    fn level(&self, id: &Uuid) -> &StockLevel {
        self.levels.get(id).unwrap_or(self.untracked)
    }

    fn topping(&self, topping: &Topping) -> MenuTopping {
        let level = self.level(&topping.topping_id);
        MenuTopping {
            topping_id: topping.topping_id,
            name: self.text(&topping.name),
            price: topping.price,
            stock: level.stock,
            sold_out: level.sold_out(self.now),
            sold_out_until: level.active_sold_out_until(self.now),
        }
    }

    fn item(&self, item: &MenuItem, toppings: &HashMap<Uuid, MenuTopping>) -> MenuEntry {
        let own = self.level(&item.menu_item_id);
        let option_groups: Vec<MenuOptionGroup> =
            item.option_groups.iter().map(|g| self.group(g)).collect();
        let unchoosable = option_groups.iter().any(|group| {
            let left = group.options.iter().filter(|o| !o.sold_out).count();
            (left as i64) < group.min_choices
        });
        MenuEntry {
            menu_item_id: item.menu_item_id,
            name: self.text(&item.name),
            description: self.text(&item.description),
            category: self.text(&item.category),
            price: item.price,
            stock: own.stock,
            sold_out: own.sold_out(self.now) || unchoosable,
            sold_out_until: own.active_sold_out_until(self.now),
            max_toppings: item.max_toppings,
            toppings: item
                .topping_ids
                .iter()
                .filter_map(|id| toppings.get(id).cloned())
                .collect(),
            option_groups,
            allergens: item.details.allergens.clone(),
            tags: item.details.tags.clone(),
            image_id: item.details.image_id,
            image_url: item.details.image_id.map(image_path),
        }
    }

    /// A group of the menu, each option with its stock.
    fn group(&self, group: &OptionGroup) -> MenuOptionGroup {
        MenuOptionGroup {
            group_id: group.group_id,
            name: self.text(&group.name),
            min_choices: group.min_choices,
            max_choices: group.max_choices,
            options: group
                .options
                .iter()
                .map(|option| {
                    let level = self.level(&option.option_id);
                    MenuOption {
                        option_id: option.option_id,
                        name: self.text(&option.name),
                        price: option.price,
                        stock: level.stock,
                        sold_out: level.sold_out(self.now),
                        sold_out_until: level.active_sold_out_until(self.now),
                    }
                })
                .collect(),
        }
    }
}

/// The next moment the menu changes by itself: the earliest 86 still to
/// lapse. Until then a menu built now stays true.
pub fn next_lapse<'a>(
    levels: impl IntoIterator<Item = &'a StockLevel>,
    now: Timestamp,
) -> Option<Timestamp> {
    levels
        .into_iter()
        .filter_map(|level| level.active_sold_out_until(now))
        .min()
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::*;
    use crate::catalog::{MenuItem, Topping};

    #[test]
    fn stock_and_86_marks_are_merged_per_item_and_topping() {
        let now = crate::now();
        let shop = Shop {
            shop_id: Uuid::new_v4(),
            name: "Diner".into(),
            currency: "USD".into(),
            timezone: crate::shop::ShopTimeZone::UTC,
            languages: Languages::default(),
            kitchen_warn_minutes: crate::shop::KITCHEN_WARN_MINUTES,
            kitchen_late_minutes: crate::shop::KITCHEN_LATE_MINUTES,
            created_at: now,
        };
        let (curry, soup, cheese) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let catalog = Catalog {
            shop_id: shop.shop_id,
            version: 2,
            toppings: vec![Topping {
                topping_id: cheese,
                name: "Cheese".into(),
                price: 100,
            }],
            items: [curry, soup]
                .into_iter()
                .map(|id| MenuItem {
                    menu_item_id: id,
                    name: "x".into(),
                    description: Default::default(),
                    category: "Mains".into(),
                    price: 900,
                    topping_ids: vec![cheese],
                    max_toppings: 1,
                    details: Default::default(),
                    option_groups: vec![],
                })
                .collect(),
        };
        let levels = HashMap::from([
            (
                curry,
                StockLevel {
                    stock: Some(0),
                    ..Default::default()
                },
            ),
            (
                cheese,
                StockLevel {
                    stock: Some(4),
                    marked_sold_out: true,
                    sold_out_until: Some(now + Duration::seconds(5)),
                },
            ),
        ]);
        let menu = Menu::build(&shop, &catalog, &levels, now, &Language::english());
        assert!(menu.items[0].sold_out, "tracked stock 0");
        assert!(!menu.items[1].sold_out, "no stock row: untracked");
        assert_eq!(menu.items[1].stock, None);
        assert!(menu.items[1].toppings[0].sold_out, "86 in force");
        let later = Menu::build(
            &shop,
            &catalog,
            &levels,
            now + Duration::seconds(5),
            &Language::english(),
        );
        assert!(!later.items[1].toppings[0].sold_out, "86 lapsed");
        assert_eq!(
            next_lapse(levels.values(), now),
            Some(now + Duration::seconds(5))
        );
        assert_eq!(
            next_lapse(levels.values(), now + Duration::seconds(5)),
            None
        );
    }

    #[test]
    fn an_item_whose_required_group_has_too_little_left_is_sold_out() {
        use crate::catalog::ItemOption;
        let now = crate::now();
        let shop = Shop {
            shop_id: Uuid::new_v4(),
            name: "Diner".into(),
            currency: "JPY".into(),
            timezone: crate::shop::ShopTimeZone::UTC,
            languages: Languages::default(),
            kitchen_warn_minutes: crate::shop::KITCHEN_WARN_MINUTES,
            kitchen_late_minutes: crate::shop::KITCHEN_LATE_MINUTES,
            created_at: now,
        };
        let (steak, rare, fries) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let group = |name: &str, min, option_id| OptionGroup {
            group_id: Uuid::new_v4(),
            name: name.into(),
            min_choices: min,
            max_choices: 1,
            options: vec![ItemOption {
                option_id,
                name: "x".into(),
                price: 0,
            }],
        };
        let catalog = Catalog {
            shop_id: shop.shop_id,
            version: 1,
            toppings: vec![],
            items: vec![MenuItem {
                menu_item_id: steak,
                name: "Steak".into(),
                description: Default::default(),
                category: "Mains".into(),
                price: 2000,
                topping_ids: vec![],
                max_toppings: 0,
                details: Default::default(),
                option_groups: vec![group("Doneness", 1, rare), group("Sides", 0, fries)],
            }],
        };
        let out = |stock| StockLevel {
            stock: Some(stock),
            ..Default::default()
        };
        let sides_out = HashMap::from([(fries, out(0))]);
        let menu = Menu::build(&shop, &catalog, &sides_out, now, &Language::english());
        assert!(!menu.items[0].sold_out, "an optional group may run out");
        assert!(menu.items[0].option_groups[1].options[0].sold_out);
        let doneness_out = HashMap::from([(rare, out(0))]);
        let menu = Menu::build(&shop, &catalog, &doneness_out, now, &Language::english());
        assert!(menu.items[0].sold_out, "nothing left to choose");
        assert_eq!(menu.items[0].option_groups[0].options[0].stock, Some(0));
    }

    #[test]
    fn every_text_is_rendered_in_the_menus_language() {
        let now = crate::now();
        let mut errors = crate::validation::FieldErrors::default();
        let languages = Languages::validate(vec!["ja".into(), "en".into()], "l", &mut errors);
        let shop = Shop {
            shop_id: Uuid::new_v4(),
            name: "Sakura".into(),
            currency: "JPY".into(),
            timezone: crate::shop::ShopTimeZone::UTC,
            languages,
            kitchen_warn_minutes: crate::shop::KITCHEN_WARN_MINUTES,
            kitchen_late_minutes: crate::shop::KITCHEN_LATE_MINUTES,
            created_at: now,
        };
        let both = |ja: &str, en: &str| {
            Text::Localized(
                [("ja", ja), ("en", en)]
                    .into_iter()
                    .map(|(l, t)| (l.to_owned(), t.to_owned()))
                    .collect(),
            )
        };
        let cheese = Uuid::new_v4();
        let catalog = Catalog {
            shop_id: shop.shop_id,
            version: 1,
            toppings: vec![Topping {
                topping_id: cheese,
                name: both("チーズ", "Cheese"),
                price: 100,
            }],
            items: vec![MenuItem {
                menu_item_id: Uuid::new_v4(),
                name: both("カレー", "Curry"),
                description: "".into(),
                category: both("主菜", "Mains"),
                price: 900,
                topping_ids: vec![cheese],
                max_toppings: 1,
                details: Default::default(),
                option_groups: vec![],
            }],
        };
        let texts = |menu: Menu| {
            let item = &menu.items[0];
            (
                menu.language.to_string(),
                item.name.clone(),
                item.category.clone(),
                item.toppings[0].name.clone(),
            )
        };
        let english = Menu::build(&shop, &catalog, &HashMap::new(), now, &Language::english());
        assert_eq!(
            texts(english),
            ("en".into(), "Curry".into(), "Mains".into(), "Cheese".into())
        );
        let ja = shop.languages.default_language().clone();
        let japanese = Menu::build(&shop, &catalog, &HashMap::new(), now, &ja);
        assert_eq!(
            texts(japanese),
            ("ja".into(), "カレー".into(), "主菜".into(), "チーズ".into())
        );
    }
}
