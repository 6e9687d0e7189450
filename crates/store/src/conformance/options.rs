//! Option groups: stored with their items, options as inventory entries,
//! choices judged and priced in the order's transaction, tracked options
//! taken and given back like toppings.

use ordergate_domain::Rejection;
use ordergate_domain::catalog::{
    CatalogInput, ItemKind, ItemOption, MenuItemInput, OptionGroup, OptionGroupInput, OptionInput,
};
use ordergate_domain::order::{LineOption, LineRequest, OptionError, OrderStatus, StatusChange};
use ordergate_domain::order::{OrderLine, Shortage};
use uuid::Uuid;

use super::helpers::*;
use crate::{Claim, PlaceOrder, Store};

/// A steak with a required single choice of doneness (medium rare costs
/// 100 more) and up to two sides (fries tracked), and a salad with a
/// dressing to choose.
struct Grill {
    shop_id: Uuid,
    steak: Uuid,
    salad: Uuid,
    doneness: Uuid,
    rare: Uuid,
    medium_rare: Uuid,
    sides: Uuid,
    fries: Uuid,
    beans: Uuid,
    rice: Uuid,
    dressing: Uuid,
    sesame: Uuid,
}

impl Grill {
    fn new(shop_id: Uuid) -> Grill {
        Grill {
            shop_id,
            steak: Uuid::new_v4(),
            salad: Uuid::new_v4(),
            doneness: Uuid::new_v4(),
            rare: Uuid::new_v4(),
            medium_rare: Uuid::new_v4(),
            sides: Uuid::new_v4(),
            fries: Uuid::new_v4(),
            beans: Uuid::new_v4(),
            rice: Uuid::new_v4(),
            dressing: Uuid::new_v4(),
            sesame: Uuid::new_v4(),
        }
    }

    fn input(&self, with_sides: bool) -> CatalogInput {
        let option = |id, name: &str, price| OptionInput {
            option_id: Some(id),
            name: name.into(),
            price,
        };
        let mut groups = vec![OptionGroupInput {
            group_id: Some(self.doneness),
            name: "Doneness".into(),
            min_choices: 1,
            max_choices: Some(1),
            options: vec![
                option(self.rare, "Rare", 0),
                option(self.medium_rare, "Medium rare", 100),
            ],
        }];
        if with_sides {
            groups.push(OptionGroupInput {
                group_id: Some(self.sides),
                name: "Sides".into(),
                min_choices: 0,
                max_choices: Some(2),
                options: vec![
                    option(self.fries, "Fries", 300),
                    option(self.beans, "Beans", 200),
                    option(self.rice, "Rice", 0),
                ],
            });
        }
        CatalogInput {
            toppings: vec![],
            items: vec![
                MenuItemInput {
                    option_groups: groups,
                    ..item(Some(self.steak), "Steak", 2000, vec![])
                },
                MenuItemInput {
                    option_groups: vec![OptionGroupInput {
                        group_id: Some(self.dressing),
                        name: "Dressing".into(),
                        min_choices: 0,
                        max_choices: None,
                        options: vec![option(self.sesame, "Sesame", 0)],
                    }],
                    ..item(Some(self.salad), "Salad", 700, vec![])
                },
            ],
        }
    }

    fn steak_line(&self, quantity: i64, options: &[Uuid]) -> LineRequest {
        LineRequest {
            option_ids: options.to_vec(),
            ..line(self.steak, quantity, &[])
        }
    }
}

async fn grill(store: &dyn Store) -> Grill {
    let shop = new_shop(store).await;
    let grill = Grill::new(shop.shop_id);
    ok(store
        .put_catalog(shop.shop_id, grill.input(true), None, instant())
        .await);
    grill
}

fn option_errors(rejection: Rejection) -> Vec<(String, Option<Uuid>)> {
    match rejection {
        Rejection::InvalidOptions { errors } => errors
            .into_iter()
            .map(|e: OptionError| (e.field, e.group_id))
            .collect(),
        other => panic!("expected INVALID_OPTIONS, got {other:?}"),
    }
}

/// Option groups: the catalog keeps them as given, in order, with every id;
/// each option is an inventory entry named after its item; an option left
/// out of a new catalog is retired and comes back with its stock.
pub async fn catalog_option_groups_round_trip_and_options_are_inventory_entries(store: &dyn Store) {
    let g = grill(store).await;
    let catalog = ok(store.get_catalog(g.shop_id).await);
    let steak = &catalog.items[0];
    let option = |option_id, name: &str, price| ItemOption {
        option_id,
        name: name.into(),
        price,
    };
    assert_eq!(
        steak.option_groups,
        [
            OptionGroup {
                group_id: g.doneness,
                name: "Doneness".into(),
                min_choices: 1,
                max_choices: 1,
                options: vec![
                    option(g.rare, "Rare", 0),
                    option(g.medium_rare, "Medium rare", 100)
                ],
            },
            OptionGroup {
                group_id: g.sides,
                name: "Sides".into(),
                min_choices: 0,
                max_choices: 2,
                options: vec![
                    option(g.fries, "Fries", 300),
                    option(g.beans, "Beans", 200),
                    option(g.rice, "Rice", 0)
                ],
            },
        ]
    );
    assert_eq!(
        catalog.items[1].option_groups[0].max_choices, 1,
        "defaults to all of its options"
    );

    let inventory = ok(store.list_inventory(g.shop_id).await);
    let options: Vec<(Uuid, ItemKind, &str)> = inventory
        .iter()
        .filter(|i| i.kind == ItemKind::Option)
        .map(|i| (i.item_id, i.kind, i.name.as_str()))
        .collect();
    assert_eq!(
        options,
        [
            (g.rare, ItemKind::Option, "Steak · Rare"),
            (g.medium_rare, ItemKind::Option, "Steak · Medium rare"),
            (g.fries, ItemKind::Option, "Steak · Fries"),
            (g.beans, ItemKind::Option, "Steak · Beans"),
            (g.rice, ItemKind::Option, "Steak · Rice"),
            (g.sesame, ItemKind::Option, "Salad · Sesame"),
        ],
        "after the items, in the menu's order"
    );

    let t = instant();
    ok(store
        .update_inventory(g.shop_id, g.fries, set_stock(Some(4), t), STAFF, t)
        .await);
    ok(store
        .put_catalog(g.shop_id, g.input(false), None, t + secs(1))
        .await);
    let ids: Vec<Uuid> = ok(store.list_inventory(g.shop_id).await)
        .iter()
        .map(|i| i.item_id)
        .collect();
    assert!(!ids.contains(&g.fries), "retired with its group");
    assert_eq!(
        ok(store.get_catalog(g.shop_id).await).items[0]
            .option_groups
            .len(),
        1
    );
    ok(store
        .put_catalog(g.shop_id, g.input(true), None, t + secs(2))
        .await);
    assert_eq!(stock_of(store, g.shop_id, g.fries).await, Some(4));
}

/// Step 8 judges the choices with the other catalog checks: a required
/// group left out, too many choices, and an option of another item are
/// each named, and nothing is placed; the right choices are priced in and
/// kept with the line.
pub async fn order_choices_are_judged_priced_and_kept_with_the_line(store: &dyn Store) {
    let g = grill(store).await;
    let session = open_table(store, g.shop_id, "T1").await;
    let id = session.session_id;
    let t = instant();
    let attempt = |lines, n: i64| PlaceOrder {
        rules: lenient_rules(),
        ..guest_order(id, CLIENT, order_of(lines, "", false), t + secs(n))
    };
    let cases = [
        (
            vec![g.steak_line(1, &[g.fries])],
            vec![("items[0].optionIds".to_owned(), Some(g.doneness))],
        ),
        (
            vec![g.steak_line(1, &[g.rare, g.medium_rare, g.fries, g.beans, g.rice])],
            vec![
                ("items[0].optionIds".to_owned(), Some(g.doneness)),
                ("items[0].optionIds".to_owned(), Some(g.sides)),
            ],
        ),
        (
            vec![
                g.steak_line(1, &[g.rare]),
                g.steak_line(1, &[g.rare, g.sesame]),
            ],
            vec![("items[1].optionIds[1]".to_owned(), None)],
        ),
    ];
    for (n, (lines, expected)) in cases.into_iter().enumerate() {
        assert_eq!(
            option_errors(rejected(store.place(attempt(lines, n as i64)).await)),
            expected,
            "attempt {n}"
        );
    }
    assert_eq!(session_order_ids(store, id).await, Vec::<Uuid>::new());

    let fine = attempt(vec![g.steak_line(2, &[g.beans, g.medium_rare])], 5);
    placed(store.place(fine.clone()).await);
    let chosen = |option_id, group_id, name: &str, price| LineOption {
        option_id,
        group_id,
        name: name.into(),
        price,
    };
    let line = OrderLine {
        menu_item_id: g.steak,
        name: "Steak".into(),
        unit_price: 2300,
        quantity: 2,
        toppings: vec![],
        options: vec![
            chosen(g.medium_rare, g.doneness, "Medium rare", 100),
            chosen(g.beans, g.sides, "Beans", 200),
        ],
        line_total: 4600,
        note: None,
    };
    let expected = placed_order(&fine, &session, 1, vec![line]);
    assert_stored(store, &expected).await;
}

/// A tracked option is taken per unit with the order, refused as a
/// shortage naming it when too few are left, and given back by a cancel.
pub async fn order_tracked_options_are_taken_short_named_and_given_back(store: &dyn Store) {
    let g = grill(store).await;
    let session = open_table(store, g.shop_id, "T1").await;
    let t = instant();
    ok(store
        .update_inventory(g.shop_id, g.fries, set_stock(Some(2), t), STAFF, t)
        .await);
    let order = |quantity, n| PlaceOrder {
        rules: lenient_rules(),
        ..guest_order(
            session.session_id,
            CLIENT,
            order_of(vec![g.steak_line(quantity, &[g.rare, g.fries])], "", false),
            t + secs(n),
        )
    };
    assert_eq!(
        rejected(store.place(order(3, 1)).await),
        Rejection::OutOfStock {
            shortages: vec![Shortage {
                item_id: g.fries,
                requested: 3,
                available: 2
            }]
        }
    );
    assert_eq!(stock_of(store, g.shop_id, g.fries).await, Some(2));
    let two = order(2, 2);
    placed(store.place(two.clone()).await);
    assert_eq!(stock_of(store, g.shop_id, g.fries).await, Some(0));
    let sold_out = ok(store.menu_source(g.shop_id).await);
    assert_eq!(
        sold_out
            .inventory
            .iter()
            .find(|i| i.item_id == g.fries)
            .map(|i| i.level.stock),
        Some(Some(0))
    );
    ok(store
        .set_order_status(
            two.order_id,
            StatusChange {
                status: OrderStatus::Cancelled,
                expected_version: None,
                actor: STAFF.into(),
            },
            t + secs(3),
        )
        .await);
    assert_eq!(stock_of(store, g.shop_id, g.fries).await, Some(2));
    assert_eq!(
        stock_of(store, g.shop_id, g.rare).await,
        None,
        "untracked stays so"
    );
}

/// Options are part of what a request is: the same key with other
/// choices is another request, and the same cart with other choices from
/// the same guest moments later is no duplicate.
pub async fn order_options_are_part_of_the_fingerprint(store: &dyn Store) {
    let g = grill(store).await;
    let session = open_table(store, g.shop_id, "T1").await;
    let t = instant();
    let rare = guest_order(
        session.session_id,
        CLIENT,
        order_of(vec![g.steak_line(1, &[g.rare])], "", false),
        t,
    );
    placed(store.place(rare.clone()).await);
    let other_choice = order_of(vec![g.steak_line(1, &[g.medium_rare])], "", false);
    let same_key = PlaceOrder {
        claim: Some(Claim {
            fingerprint: other_choice.fingerprint.clone(),
            ..rare.claim.clone().expect("a guest claim")
        }),
        order: other_choice.clone(),
        ..retry(&rare, t + secs(3))
    };
    assert_eq!(
        rejected(store.place(same_key).await),
        Rejection::IdempotencyKeyReused
    );
    let again = guest_order(
        session.session_id,
        CLIENT,
        order_of(vec![g.steak_line(1, &[g.rare])], "", false),
        t + secs(4),
    );
    assert!(matches!(
        rejected(store.place(again).await),
        Rejection::DuplicatePayload { .. }
    ));
    let medium_rare = guest_order(session.session_id, CLIENT, other_choice, t + secs(5));
    placed(store.place(medium_rare.clone()).await);
    assert_eq!(
        session_order_ids(store, session.session_id).await,
        [medium_rare.order_id, rare.order_id]
    );
}
