//! Pricing lines from the catalog and counting the stock they need.

use std::collections::BTreeMap;

use serde::Serialize;
use uuid::Uuid;

use super::{LineRequest, LineTopping, OptionError, OrderLine, ValidOrder, choose_options};
use crate::Rejection;
use crate::catalog::{MenuItem, Topping};
use crate::language::Languages;

/// What the catalog says about a menu item an order names.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemLookup {
    Active(Box<MenuItem>),
    Retired,
    Unknown,
}

impl ItemLookup {
    /// A menu item the shop has, orderable unless retired.
    pub fn found(item: MenuItem, retired: bool) -> ItemLookup {
        if retired {
            ItemLookup::Retired
        } else {
            ItemLookup::Active(Box::new(item))
        }
    }
}

/// Prices every line from the catalog; the client's idea of a price is
/// never asked. `topping` answers for active toppings only. Every line's
/// choices of options are judged before any is refused for them, so one
/// answer names every group a guest still has to fix.
pub fn price_lines(
    order: &ValidOrder,
    item: impl Fn(Uuid) -> ItemLookup,
    topping: impl Fn(Uuid) -> Option<Topping>,
    languages: &Languages,
) -> Result<Vec<OrderLine>, Rejection> {
    let mut option_errors = Vec::new();
    let catalog = Lookups {
        item: &item,
        topping: &topping,
        languages,
    };
    let lines = order
        .lines
        .iter()
        .enumerate()
        .map(|(line, request)| catalog.price_line(line, request, &mut option_errors))
        .collect::<Result<Vec<_>, _>>()?;
    if !option_errors.is_empty() {
        return Err(Rejection::InvalidOptions {
            errors: option_errors,
        });
    }
    Ok(lines)
}

/// Where the lines' items and toppings are looked up, and the languages
/// their names are kept in (the shop's default).
struct Lookups<'a> {
    item: &'a dyn Fn(Uuid) -> ItemLookup,
    topping: &'a dyn Fn(Uuid) -> Option<Topping>,
    languages: &'a Languages,
}

impl Lookups<'_> {
    fn price_line(
        &self,
        line: usize,
        request: &LineRequest,
        option_errors: &mut Vec<OptionError>,
    ) -> Result<OrderLine, Rejection> {
        let menu_item_id = request.menu_item_id;
        let menu_item = match (self.item)(menu_item_id) {
            ItemLookup::Active(menu_item) => *menu_item,
            ItemLookup::Retired => {
                return Err(Rejection::ItemUnavailable { line, menu_item_id });
            }
            ItemLookup::Unknown => {
                return Err(Rejection::UnknownMenuItem { line, menu_item_id });
            }
        };
        let name = menu_item.name.in_default(self.languages).to_owned();
        if request.topping_ids.len() as i64 > menu_item.max_toppings {
            return Err(Rejection::InvalidTopping {
                line,
                topping_id: None,
                reason: format!("{name} allows at most {} toppings", menu_item.max_toppings),
            });
        }
        let toppings = request
            .topping_ids
            .iter()
            .map(|&topping_id| {
                let allowed = menu_item.topping_ids.contains(&topping_id);
                match (self.topping)(topping_id).filter(|_| allowed) {
                    Some(t) => Ok(LineTopping {
                        topping_id,
                        name: t.name.in_default(self.languages).to_owned(),
                        price: t.price,
                    }),
                    None => Err(Rejection::InvalidTopping {
                        line,
                        topping_id: Some(topping_id),
                        reason: format!("not a topping offered with {name}"),
                    }),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let options = choose_options(
            &menu_item,
            line,
            &request.option_ids,
            self.languages,
            option_errors,
        );
        let unit_price = menu_item.price
            + toppings.iter().map(|t| t.price).sum::<i64>()
            + options.iter().map(|o| o.price).sum::<i64>();
        Ok(OrderLine {
            menu_item_id,
            name,
            unit_price,
            quantity: request.quantity,
            toppings,
            options,
            line_total: unit_price * request.quantity,
            note: request.note.clone(),
        })
    }
}

/// Units each item, topping and option must give up, in ascending id
/// order: the order in which stock rows are locked, so concurrent orders
/// never deadlock.
pub fn stock_needed(lines: &[OrderLine]) -> BTreeMap<Uuid, i64> {
    let mut needed = BTreeMap::new();
    for line in lines {
        let ids = std::iter::once(line.menu_item_id)
            .chain(line.toppings.iter().map(|t| t.topping_id))
            .chain(line.options.iter().map(|o| o.option_id));
        for id in ids {
            *needed.entry(id).or_default() += line.quantity;
        }
    }
    needed
}

/// An item an order wanted more of than there is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Shortage {
    pub item_id: Uuid,
    pub requested: i64,
    pub available: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order::{LineRequest, OrderRequest};

    fn line(item: Uuid, quantity: i64, toppings: &[Uuid]) -> LineRequest {
        LineRequest {
            menu_item_id: item,
            quantity,
            topping_ids: toppings.to_vec(),
            note: None,
            option_ids: vec![],
        }
    }

    fn request(items: Vec<LineRequest>, note: &str, allow_repeat: bool) -> ValidOrder {
        OrderRequest {
            items,
            note: Some(note.to_owned()),
            allow_repeat,
        }
        .validate()
        .unwrap()
    }

    #[test]
    fn lines_are_priced_from_the_catalog_with_their_toppings() {
        let (curry, cheese, egg) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let menu_item = MenuItem {
            menu_item_id: curry,
            name: "Curry".into(),
            description: Default::default(),
            category: "Mains".into(),
            price: 900,
            topping_ids: vec![cheese, egg],
            max_toppings: 1,
            details: Default::default(),
            option_groups: vec![],
        };
        let lookup = |id| {
            if id == curry {
                ItemLookup::Active(Box::new(menu_item.clone()))
            } else {
                ItemLookup::Unknown
            }
        };
        let toppings = |id| {
            (id == cheese || id == egg).then(|| Topping {
                topping_id: id,
                name: "T".into(),
                price: 100,
            })
        };
        let order = request(vec![line(curry, 2, &[cheese])], "", false);
        let lines = price_lines(&order, lookup, toppings, &Languages::default()).unwrap();
        assert_eq!((lines[0].unit_price, lines[0].line_total), (1000, 2000));
        assert_eq!(
            stock_needed(&lines),
            BTreeMap::from([(curry, 2), (cheese, 2)])
        );

        let two_toppings = request(vec![line(curry, 1, &[cheese, egg])], "", false);
        assert!(matches!(
            price_lines(&two_toppings, lookup, toppings, &Languages::default()),
            Err(Rejection::InvalidTopping {
                line: 0,
                topping_id: None,
                ..
            })
        ));
        let stranger = Uuid::new_v4();
        let unknown = request(vec![line(curry, 1, &[]), line(stranger, 1, &[])], "", false);
        assert_eq!(
            price_lines(&unknown, lookup, toppings, &Languages::default()),
            Err(Rejection::UnknownMenuItem {
                line: 1,
                menu_item_id: stranger
            })
        );
    }

    #[test]
    fn options_add_their_prices_and_stock_and_every_line_is_judged() {
        use crate::catalog::{ItemOption, OptionGroup};
        let (steak, doneness, rare, egg) = (
            Uuid::from_u128(1),
            Uuid::from_u128(2),
            Uuid::from_u128(3),
            Uuid::from_u128(4),
        );
        let menu_item = MenuItem {
            menu_item_id: steak,
            name: "Steak".into(),
            description: Default::default(),
            category: "Mains".into(),
            price: 2000,
            topping_ids: vec![],
            max_toppings: 0,
            details: Default::default(),
            option_groups: vec![OptionGroup {
                group_id: doneness,
                name: "Doneness".into(),
                min_choices: 1,
                max_choices: 1,
                options: vec![ItemOption {
                    option_id: rare,
                    name: "Rare".into(),
                    price: 150,
                }],
            }],
        };
        let lookup = |id| {
            if id == steak {
                ItemLookup::Active(Box::new(menu_item.clone()))
            } else {
                ItemLookup::Unknown
            }
        };
        let chosen = |options: &[Uuid]| LineRequest {
            option_ids: options.to_vec(),
            ..line(steak, 2, &[])
        };
        let order = request(vec![chosen(&[rare])], "", false);
        let lines = price_lines(&order, lookup, |_| None, &Languages::default()).unwrap();
        assert_eq!((lines[0].unit_price, lines[0].line_total), (2150, 4300));
        assert_eq!(lines[0].options[0].group_id, doneness);
        assert_eq!(
            stock_needed(&lines),
            BTreeMap::from([(steak, 2), (rare, 2)])
        );

        let twice_wrong = request(vec![chosen(&[]), chosen(&[egg])], "", false);
        let Err(Rejection::InvalidOptions { errors }) =
            price_lines(&twice_wrong, lookup, |_| None, &Languages::default())
        else {
            panic!("expected invalid options");
        };
        let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "items[0].optionIds",
                "items[1].optionIds[0]",
                "items[1].optionIds"
            ]
        );
    }
}
