//! A line's choices judged against its item's option groups.

use std::collections::HashMap;

use serde::Serialize;
use uuid::Uuid;

use super::LineOption;
use crate::catalog::{MenuItem, OptionGroup};
use crate::language::Languages;

/// A choice that breaks an item's option groups: an option the item does
/// not offer (`groupId` null), or a group chosen too few or too many times.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct OptionError {
    /// `items[2].optionIds`, or `items[2].optionIds[1]` for one option.
    pub field: String,
    pub group_id: Option<Uuid>,
    pub message: String,
}

/// The options line `line` chose for `item`, in the menu's order and
/// named in the shop's default language, when each is an option of one of
/// the item's groups and every group is chosen from within its bounds;
/// otherwise every problem goes to `errors`.
pub fn choose_options(
    item: &MenuItem,
    line: usize,
    chosen: &[Uuid],
    languages: &Languages,
    errors: &mut Vec<OptionError>,
) -> Vec<LineOption> {
    let offered: HashMap<Uuid, (usize, usize)> = item
        .option_groups
        .iter()
        .enumerate()
        .flat_map(|(g, group)| {
            group
                .options
                .iter()
                .enumerate()
                .map(move |(o, option)| (option.option_id, (g, o)))
        })
        .collect();
    let mut picked: Vec<(usize, usize)> = Vec::with_capacity(chosen.len());
    for (j, option_id) in chosen.iter().enumerate() {
        match offered.get(option_id) {
            Some(&at) => picked.push(at),
            None => errors.push(OptionError {
                field: format!("items[{line}].optionIds[{j}]"),
                group_id: None,
                message: format!("not an option of {}", item.name.in_default(languages)),
            }),
        }
    }
    for (g, group) in item.option_groups.iter().enumerate() {
        let count = picked.iter().filter(|(of, _)| *of == g).count() as i64;
        if let Some(message) = bounds_broken(group, count, languages) {
            errors.push(OptionError {
                field: format!("items[{line}].optionIds"),
                group_id: Some(group.group_id),
                message,
            });
        }
    }
    picked.sort_unstable();
    picked
        .into_iter()
        .map(|(g, o)| {
            let group = &item.option_groups[g];
            let option = &group.options[o];
            LineOption {
                option_id: option.option_id,
                group_id: group.group_id,
                name: option.name.in_default(languages).to_owned(),
                price: option.price,
            }
        })
        .collect()
}

/// What a guest is told when `count` choices break the group's bounds.
fn bounds_broken(group: &OptionGroup, count: i64, languages: &Languages) -> Option<String> {
    let name = group.name.in_default(languages);
    if count < group.min_choices {
        Some(match (group.min_choices, group.max_choices) {
            (1, 1) => format!("choose one {name}"),
            (min, _) => format!("choose at least {min} of {name}"),
        })
    } else if count > group.max_choices {
        Some(match group.max_choices {
            1 => format!("choose only one {name}"),
            max => format!("choose at most {max} of {name}"),
        })
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ItemOption;

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    fn group(n: u128, name: &str, min: i64, max: i64, options: &[u128]) -> OptionGroup {
        OptionGroup {
            group_id: id(n),
            name: name.into(),
            min_choices: min,
            max_choices: max,
            options: options
                .iter()
                .map(|&o| ItemOption {
                    option_id: id(o),
                    name: format!("option {o}").into(),
                    price: o as i64 * 10,
                })
                .collect(),
        }
    }

    fn steak() -> MenuItem {
        MenuItem {
            menu_item_id: id(1),
            name: "Steak".into(),
            description: Default::default(),
            category: "Mains".into(),
            price: 2000,
            topping_ids: vec![],
            max_toppings: 0,
            details: Default::default(),
            option_groups: vec![
                group(10, "doneness", 1, 1, &[11, 12, 13]),
                group(20, "sides", 0, 2, &[21, 22, 23]),
            ],
        }
    }

    /// What an error says: its field, its group and its message.
    type Said = (String, Option<Uuid>, String);

    fn judge(chosen: &[u128]) -> (Vec<Uuid>, Vec<Said>) {
        let chosen: Vec<Uuid> = chosen.iter().map(|&n| id(n)).collect();
        let mut errors = Vec::new();
        let options = choose_options(&steak(), 0, &chosen, &Languages::default(), &mut errors);
        (
            options.iter().map(|o| o.option_id).collect(),
            errors
                .into_iter()
                .map(|e| (e.field, e.group_id, e.message))
                .collect(),
        )
    }

    #[test]
    fn choices_within_every_group_come_back_in_menu_order() {
        assert_eq!(judge(&[23, 12, 21]), (vec![id(12), id(21), id(23)], vec![]));
        let mut errors = Vec::new();
        let options = choose_options(
            &steak(),
            0,
            &[id(22), id(11)],
            &Languages::default(),
            &mut errors,
        );
        assert_eq!(
            options[1],
            LineOption {
                option_id: id(22),
                group_id: id(20),
                name: "option 22".into(),
                price: 220
            }
        );
    }

    #[test]
    fn a_required_group_left_out_is_named() {
        let (_, errors) = judge(&[21]);
        assert_eq!(
            errors,
            [(
                "items[0].optionIds".into(),
                Some(id(10)),
                "choose one doneness".into()
            )]
        );
    }

    #[test]
    fn too_many_choices_and_strangers_are_each_named() {
        let (_, errors) = judge(&[11, 12, 21, 22, 23, 99]);
        assert_eq!(
            errors,
            [
                (
                    "items[0].optionIds[5]".into(),
                    None,
                    "not an option of Steak".into()
                ),
                (
                    "items[0].optionIds".into(),
                    Some(id(10)),
                    "choose only one doneness".into()
                ),
                (
                    "items[0].optionIds".into(),
                    Some(id(20)),
                    "choose at most 2 of sides".into()
                ),
            ]
        );
    }
}
