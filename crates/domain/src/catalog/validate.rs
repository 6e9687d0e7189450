//! Validating a whole catalog: every problem reported with its path, ids
//! assigned where missing, and each id kept to one kind for life.

use std::collections::HashSet;

use uuid::Uuid;

use super::options::check_groups;
use super::{
    CatalogInput, Existing, ItemDetails, ItemKind, MAX_ITEMS, MAX_PRICE, MAX_TAGS, MAX_TOPPINGS,
    MAX_TOPPINGS_PER_ITEM, MenuItem, MenuItemInput, Topping, ToppingInput, ValidCatalog,
};
use crate::Rejection;
use crate::allergens::is_allergen;
use crate::validation::FieldErrors;

/// The ids a catalog gives, claimed one by one: each once in the catalog,
/// and of the kind it already has in the shop.
pub(super) struct Ids<'a> {
    seen: HashSet<Uuid>,
    existing: &'a Existing,
}

impl Ids<'_> {
    pub(super) fn claim(
        &mut self,
        errors: &mut FieldErrors,
        field: String,
        id: Uuid,
        kind: ItemKind,
    ) {
        if !self.seen.insert(id) {
            errors.push(field, "id appears more than once in this catalog");
        } else if let Some(known) = self.existing.kinds.get(&id).filter(|known| **known != kind) {
            errors.push(
                field,
                format!("id already belongs to {}", known.with_article()),
            );
        }
    }
}

impl CatalogInput {
    /// Validates the whole catalog against what the shop already has, and
    /// assigns missing ids.
    pub fn validate(self, existing: &Existing) -> Result<ValidCatalog, Rejection> {
        let mut errors = FieldErrors::default();
        if self.toppings.len() > MAX_TOPPINGS {
            errors.push("toppings", format!("at most {MAX_TOPPINGS} toppings"));
        }
        if self.items.len() > MAX_ITEMS {
            errors.push("items", format!("at most {MAX_ITEMS} items"));
        }
        let mut ids = Ids {
            seen: HashSet::new(),
            existing,
        };
        let toppings: Vec<Topping> = self
            .toppings
            .into_iter()
            .enumerate()
            .map(|(i, topping)| check_topping(&mut errors, &mut ids, i, topping))
            .collect();
        let topping_ids: HashSet<Uuid> = toppings.iter().map(|t| t.topping_id).collect();
        let mut groups_seen = HashSet::new();
        let items = self
            .items
            .into_iter()
            .enumerate()
            .map(|(i, item)| {
                let checking = ItemCheck {
                    errors: &mut errors,
                    ids: &mut ids,
                    groups_seen: &mut groups_seen,
                    toppings: &topping_ids,
                    images: &existing.images,
                };
                checking.item(i, item)
            })
            .collect();
        errors.finish(ValidCatalog { toppings, items })
    }
}

fn check_topping(
    errors: &mut FieldErrors,
    ids: &mut Ids<'_>,
    i: usize,
    t: ToppingInput,
) -> Topping {
    let at = |f: &str| format!("toppings[{i}].{f}");
    let topping_id = t.topping_id.unwrap_or_else(Uuid::new_v4);
    if t.topping_id.is_some() {
        ids.claim(errors, at("toppingId"), topping_id, ItemKind::Topping);
    }
    let name = errors.localized(&at("name"), t.name, 1, 80);
    errors.range(at("price"), t.price, 0, MAX_PRICE);
    Topping {
        topping_id,
        name,
        price: t.price,
    }
}

/// What checking one item needs of the whole catalog's check.
struct ItemCheck<'c, 'k> {
    errors: &'c mut FieldErrors,
    ids: &'c mut Ids<'k>,
    groups_seen: &'c mut HashSet<Uuid>,
    /// The catalog's toppings.
    toppings: &'c HashSet<Uuid>,
    /// The shop's photos.
    images: &'c HashSet<Uuid>,
}

impl ItemCheck<'_, '_> {
    fn item(self, i: usize, item: MenuItemInput) -> MenuItem {
        let errors = self.errors;
        let at = |f: &str| format!("items[{i}].{f}");
        let menu_item_id = item.menu_item_id.unwrap_or_else(Uuid::new_v4);
        if item.menu_item_id.is_some() {
            self.ids
                .claim(errors, at("menuItemId"), menu_item_id, ItemKind::MenuItem);
        }
        let name = errors.localized(&at("name"), item.name, 1, 80);
        let description = errors.localized(&at("description"), item.description, 0, 500);
        let category = errors.localized(&at("category"), item.category, 1, 40);
        errors.range(at("price"), item.price, 0, MAX_PRICE);
        check_offered_toppings(errors, i, &item.topping_ids, self.toppings);
        let details = check_details(
            errors,
            i,
            ItemDetails {
                allergens: item.allergens,
                tags: item.tags,
                station: item.station,
                image_id: item.image_id,
            },
        );
        if let Some(image) = item.image_id
            && !self.images.contains(&image)
        {
            errors.push(at("imageId"), "not a photo of this shop");
        }
        let allowed = item.topping_ids.len() as i64;
        let max_toppings = item.max_toppings.unwrap_or(allowed);
        errors.range(at("maxToppings"), max_toppings, 0, allowed);
        let option_groups = check_groups(errors, self.ids, self.groups_seen, i, item.option_groups);
        MenuItem {
            menu_item_id,
            name,
            description,
            category,
            price: item.price,
            topping_ids: item.topping_ids,
            max_toppings,
            details,
            option_groups,
        }
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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

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
            description: Default::default(),
            category: "Mains".into(),
            price: 900,
            topping_ids,
            max_toppings: None,
            allergens: vec![],
            tags: vec![],
            station: None,
            option_groups: vec![],
            image_id: None,
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
        let valid = input.validate(&Existing::default()).unwrap();
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
            fields(input.validate(&Existing::default()).unwrap_err()),
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
        .validate(&Existing::default())
        .unwrap();
        assert_eq!(
            valid.items[0].details,
            ItemDetails {
                allergens: vec!["wheat".into(), "milk".into()],
                tags: vec!["spicy".into(), "gluten_free".into()],
                station: Some("grill".into()),
                image_id: None,
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
            fields(input.validate(&Existing::default()).unwrap_err()),
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
            fields(input.validate(&Existing::default()).unwrap_err()),
            ["items[0].tags"]
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
        let err = input.validate(&Existing {
            kinds: HashMap::from([(id, ItemKind::Topping)]),
            ..Existing::default()
        });
        assert_eq!(fields(err.unwrap_err()), ["items[0].menuItemId"]);
    }

    #[test]
    fn an_item_may_show_only_a_photo_of_its_own_shop() {
        let (ours, theirs) = (Uuid::new_v4(), Uuid::new_v4());
        let existing = Existing {
            images: HashSet::from([ours]),
            ..Existing::default()
        };
        let with_photo = |image| CatalogInput {
            toppings: vec![],
            items: vec![MenuItemInput {
                image_id: Some(image),
                ..item("Curry", vec![])
            }],
        };
        let valid = with_photo(ours).validate(&existing).unwrap();
        assert_eq!(valid.items[0].details.image_id, Some(ours));
        assert_eq!(
            fields(with_photo(theirs).validate(&existing).unwrap_err()),
            ["items[0].imageId"]
        );
    }
}
