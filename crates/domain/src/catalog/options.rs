//! Option groups: the choices a guest makes for an item. A doneness to pick
//! (required, one of), sides (up to two), a size. Each option has a price
//! (0 for most), and may be tracked in inventory like a topping: its id is
//! an inventory item id. A group belongs to its item and an option to its
//! group, so an option of another item is never a valid choice.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::validate::Ids;
use super::{ItemKind, MAX_PRICE, MenuItem};
use crate::language::Text;
use crate::validation::FieldErrors;

pub const MAX_OPTION_GROUPS_PER_ITEM: usize = 20;
pub const MAX_OPTIONS_PER_GROUP: usize = 50;

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OptionGroupInput {
    /// Kept when given; assigned when absent.
    pub group_id: Option<Uuid>,
    pub name: Text,
    /// How many options a line must choose: 1 makes the choice required.
    /// Defaults to 0.
    #[serde(default)]
    pub min_choices: i64,
    /// How many it may choose: 1 makes it a single choice. Defaults to all
    /// of its options.
    pub max_choices: Option<i64>,
    /// 1–50 options.
    pub options: Vec<OptionInput>,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OptionInput {
    /// Kept when given; assigned when absent. An inventory item id.
    pub option_id: Option<Uuid>,
    pub name: Text,
    /// Added to the item's price for each unit ordered with this option.
    #[serde(default)]
    pub price: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct OptionGroup {
    pub group_id: Uuid,
    pub name: Text,
    pub min_choices: i64,
    pub max_choices: i64,
    pub options: Vec<ItemOption>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ItemOption {
    pub option_id: Uuid,
    pub name: Text,
    pub price: i64,
}

/// An option group as the stores keep it with its item: its options by
/// id, because an option's name and price live in a row of its own (one
/// per inventory entry, as a topping's do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupShape {
    pub group_id: Uuid,
    pub name: Text,
    pub min_choices: i64,
    pub max_choices: i64,
    pub option_ids: Vec<Uuid>,
}

impl OptionGroup {
    pub fn shape(&self) -> GroupShape {
        GroupShape {
            group_id: self.group_id,
            name: self.name.clone(),
            min_choices: self.min_choices,
            max_choices: self.max_choices,
            option_ids: self.options.iter().map(|o| o.option_id).collect(),
        }
    }
}

impl MenuItem {
    /// The item with its option groups again, from their shapes and the
    /// item's options; an error naming the item when a shape names an
    /// option that is not there (corrupt data, not an empty group).
    pub fn with_groups(
        self,
        shapes: Vec<GroupShape>,
        options: &HashMap<Uuid, ItemOption>,
    ) -> Result<MenuItem, String> {
        let option_groups = shapes
            .into_iter()
            .map(|shape| {
                Some(OptionGroup {
                    options: shape
                        .option_ids
                        .iter()
                        .map(|id| options.get(id).cloned())
                        .collect::<Option<_>>()?,
                    group_id: shape.group_id,
                    name: shape.name,
                    min_choices: shape.min_choices,
                    max_choices: shape.max_choices,
                })
            })
            .collect::<Option<_>>()
            .ok_or_else(|| {
                format!(
                    "menu item {}: an option group names an option that is not active",
                    self.menu_item_id
                )
            })?;
        Ok(MenuItem {
            option_groups,
            ..self
        })
    }
}

/// An item's option groups (of `items[i]`): at most
/// [`MAX_OPTION_GROUPS_PER_ITEM`], each named, with 1–[`MAX_OPTIONS_PER_GROUP`]
/// options and choice bounds its options can meet; group ids unique in
/// the catalog, option ids unique and of no other kind.
pub(super) fn check_groups(
    errors: &mut FieldErrors,
    ids: &mut Ids<'_>,
    groups_seen: &mut HashSet<Uuid>,
    i: usize,
    groups: Vec<OptionGroupInput>,
) -> Vec<OptionGroup> {
    if groups.len() > MAX_OPTION_GROUPS_PER_ITEM {
        errors.push(
            format!("items[{i}].optionGroups"),
            format!("at most {MAX_OPTION_GROUPS_PER_ITEM} option groups per item"),
        );
    }
    groups
        .into_iter()
        .enumerate()
        .map(|(g, group)| {
            let at = |f: &str| format!("items[{i}].optionGroups[{g}].{f}");
            let group_id = group.group_id.unwrap_or_else(Uuid::new_v4);
            if !groups_seen.insert(group_id) {
                errors.push(at("groupId"), "id appears more than once in this catalog");
            }
            let name = errors.localized(&at("name"), group.name, 1, 80);
            let count = group.options.len() as i64;
            if group.options.is_empty() || group.options.len() > MAX_OPTIONS_PER_GROUP {
                errors.push(
                    at("options"),
                    format!("must have 1 to {MAX_OPTIONS_PER_GROUP} options"),
                );
            }
            errors.range(at("minChoices"), group.min_choices, 0, count);
            let max_choices = group.max_choices.unwrap_or(count);
            // With no options, or a minimum they cannot meet, the maximum
            // has nothing to be checked against.
            if count > 0 && (0..=count).contains(&group.min_choices) {
                errors.range(
                    at("maxChoices"),
                    max_choices,
                    group.min_choices.max(1),
                    count,
                );
            }
            let options = group
                .options
                .into_iter()
                .enumerate()
                .map(|(o, option)| {
                    let at = |f: &str| format!("items[{i}].optionGroups[{g}].options[{o}].{f}");
                    let option_id = option.option_id.unwrap_or_else(Uuid::new_v4);
                    if option.option_id.is_some() {
                        ids.claim(errors, at("optionId"), option_id, ItemKind::Option);
                    }
                    let name = errors.localized(&at("name"), option.name, 1, 80);
                    errors.range(at("price"), option.price, 0, MAX_PRICE);
                    ItemOption {
                        option_id,
                        name,
                        price: option.price,
                    }
                })
                .collect();
            OptionGroup {
                group_id,
                name,
                min_choices: group.min_choices,
                max_choices,
                options,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rejection;
    use crate::catalog::{CatalogInput, Existing, MenuItemInput};

    fn item(name: &str) -> MenuItemInput {
        MenuItemInput {
            menu_item_id: None,
            name: name.into(),
            description: Default::default(),
            category: "Mains".into(),
            price: 2000,
            topping_ids: vec![],
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

    fn option(id: u128, price: i64) -> ItemOption {
        ItemOption {
            option_id: Uuid::from_u128(id),
            name: format!("option {id}").into(),
            price,
        }
    }

    #[test]
    fn a_group_comes_back_from_its_shape_and_its_options() {
        let group = OptionGroup {
            group_id: Uuid::from_u128(9),
            name: "Doneness".into(),
            min_choices: 1,
            max_choices: 1,
            options: vec![option(2, 0), option(1, 100)],
        };
        let shape = group.shape();
        assert_eq!(
            shape.option_ids,
            [Uuid::from_u128(2), Uuid::from_u128(1)],
            "in display order"
        );
        let options: HashMap<Uuid, ItemOption> = group
            .options
            .iter()
            .map(|o| (o.option_id, o.clone()))
            .collect();
        let bare = MenuItem {
            menu_item_id: Uuid::from_u128(7),
            name: "Steak".into(),
            description: Default::default(),
            category: "Mains".into(),
            price: 2000,
            topping_ids: vec![],
            max_toppings: 0,
            details: Default::default(),
            option_groups: vec![],
        };
        let whole = bare.clone().with_groups(vec![shape.clone()], &options);
        assert_eq!(whole.map(|item| item.option_groups), Ok(vec![group]));
        assert!(
            bare.with_groups(vec![shape], &HashMap::new()).is_err(),
            "an option missing is corrupt data, not an empty group"
        );
    }

    fn group(
        name: &str,
        min: i64,
        max: Option<i64>,
        options: Vec<OptionInput>,
    ) -> OptionGroupInput {
        OptionGroupInput {
            group_id: None,
            name: name.into(),
            min_choices: min,
            max_choices: max,
            options,
        }
    }

    fn input_option(id: Option<Uuid>, name: &str, price: i64) -> OptionInput {
        OptionInput {
            option_id: id,
            name: name.into(),
            price,
        }
    }

    #[test]
    fn option_groups_default_to_optional_choices_of_any_number() {
        let rare = Uuid::new_v4();
        let mut steak = item("Steak");
        steak.option_groups = vec![
            group(
                " Doneness ",
                1,
                Some(1),
                vec![
                    input_option(Some(rare), "Rare", 0),
                    input_option(None, "Well done", 0),
                ],
            ),
            group("Sides", 0, None, vec![input_option(None, "Fries", 300)]),
        ];
        let valid = CatalogInput {
            toppings: vec![],
            items: vec![steak],
        }
        .validate(&Existing::default())
        .unwrap();
        let groups = &valid.items[0].option_groups;
        assert_eq!(
            (
                &groups[0].name,
                groups[0].min_choices,
                groups[0].max_choices
            ),
            (&Text::from("Doneness"), 1, 1)
        );
        assert_eq!((groups[1].min_choices, groups[1].max_choices), (0, 1));
        assert_eq!(groups[0].options[0].option_id, rare, "given ids kept");
        assert_eq!(
            valid
                .kinds()
                .values()
                .filter(|k| **k == ItemKind::Option)
                .count(),
            3,
            "every option is an inventory entry"
        );
        assert_eq!(
            groups[1].options[0],
            ItemOption {
                option_id: groups[1].options[0].option_id,
                name: "Fries".into(),
                price: 300
            }
        );
    }

    #[test]
    fn option_groups_need_options_bounds_they_can_meet_and_ids_of_their_own() {
        let (shared, topping_id) = (Uuid::new_v4(), Uuid::new_v4());
        let mut steak = item("Steak");
        steak.option_groups = vec![
            group("", 3, Some(1), vec![input_option(Some(shared), "Rare", -1)]),
            group("Sides", 0, Some(0), vec![input_option(Some(shared), "", 0)]),
            group("Sauce", 0, None, vec![]),
            group(
                "Size",
                0,
                None,
                vec![input_option(Some(topping_id), "Large", 0)],
            ),
        ];
        let input = CatalogInput {
            toppings: vec![],
            items: vec![steak],
        };
        let known = Existing {
            kinds: HashMap::from([(topping_id, ItemKind::Topping)]),
            ..Existing::default()
        };
        assert_eq!(
            fields(input.validate(&known).unwrap_err()),
            [
                "items[0].optionGroups[0].name",
                "items[0].optionGroups[0].minChoices",
                "items[0].optionGroups[0].options[0].price",
                "items[0].optionGroups[1].maxChoices",
                "items[0].optionGroups[1].options[0].optionId",
                "items[0].optionGroups[1].options[0].name",
                "items[0].optionGroups[2].options",
                "items[0].optionGroups[3].options[0].optionId",
            ]
        );
    }
}
