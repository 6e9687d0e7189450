//! Catalog checks.

use std::collections::BTreeMap;

use ordergate_domain::Rejection;
use ordergate_domain::catalog::{
    Catalog, CatalogInput, ItemDetails, ItemKind, MenuItem, MenuItemInput, Topping,
};
use uuid::Uuid;

use crate::{MenuSource, Store};

use super::helpers::*;

pub async fn catalog_first_put_is_version_one_keeping_given_ids_and_assigning_missing_ones(
    store: &dyn Store,
) {
    let shop = new_shop(store).await;
    let cheese = Uuid::new_v4();
    let curry = Uuid::new_v4();
    let input = CatalogInput {
        toppings: vec![
            topping(Some(cheese), "Cheese", 100),
            topping(None, "Egg", 80),
        ],
        items: vec![
            item(Some(curry), "Curry", 900, vec![cheese]),
            MenuItemInput {
                max_toppings: Some(1),
                ..item(None, "Ramen", 850, vec![cheese])
            },
        ],
    };
    let catalog = ok(store
        .put_catalog(shop.shop_id, input, None, instant())
        .await);

    let egg = catalog.toppings[1].topping_id;
    let ramen = catalog.items[1].menu_item_id;
    let assigned = [egg, ramen];
    for id in assigned {
        assert_ne!(id, Uuid::nil(), "missing ids are assigned");
        assert!(![cheese, curry].contains(&id), "assigned ids are fresh");
    }
    assert_ne!(egg, ramen, "assigned ids are distinct");

    let expected = Catalog {
        shop_id: shop.shop_id,
        version: 1,
        toppings: vec![
            Topping {
                topping_id: cheese,
                name: "Cheese".into(),
                price: 100,
            },
            Topping {
                topping_id: egg,
                name: "Egg".into(),
                price: 80,
            },
        ],
        items: vec![
            MenuItem {
                menu_item_id: curry,
                name: "Curry".into(),
                description: "Curry, made fresh".into(),
                category: "Mains".into(),
                price: 900,
                topping_ids: vec![cheese],
                max_toppings: 1,
                details: Default::default(),
                option_groups: vec![],
            },
            MenuItem {
                menu_item_id: ramen,
                name: "Ramen".into(),
                description: "Ramen, made fresh".into(),
                category: "Mains".into(),
                price: 850,
                topping_ids: vec![cheese],
                max_toppings: 1,
                details: Default::default(),
                option_groups: vec![],
            },
        ],
    };
    assert_eq!(catalog, expected);
    assert_eq!(ok(store.get_catalog(shop.shop_id).await), expected);

    let kinds: BTreeMap<Uuid, (ItemKind, String)> = ok(store.list_inventory(shop.shop_id).await)
        .into_iter()
        .map(|i| (i.item_id, (i.kind, i.name)))
        .collect();
    let expected_kinds: BTreeMap<Uuid, (ItemKind, String)> = [
        (cheese, (ItemKind::Topping, "Cheese".to_owned())),
        (egg, (ItemKind::Topping, "Egg".to_owned())),
        (curry, (ItemKind::MenuItem, "Curry".to_owned())),
        (ramen, (ItemKind::MenuItem, "Ramen".to_owned())),
    ]
    .into_iter()
    .collect();
    assert_eq!(kinds, expected_kinds);
}

pub async fn catalog_put_retires_items_left_out(store: &dyn Store) {
    let p = published(store).await;
    let second = CatalogInput {
        toppings: vec![topping(Some(p.cheese), "Mozzarella", 120)],
        items: vec![item(Some(p.curry), "Curry", 950, vec![p.cheese])],
    };
    let catalog = ok(store.put_catalog(p.shop_id, second, None, instant()).await);
    assert_eq!(catalog.version, 2);
    assert_eq!(ok(store.get_catalog(p.shop_id).await), catalog);
    let item_ids: Vec<Uuid> = catalog.items.iter().map(|i| i.menu_item_id).collect();
    assert_eq!(item_ids, [p.curry], "ramen is retired");
    assert_eq!(catalog.items[0].price, 950);

    let inventory = by_id(ok(store.list_inventory(p.shop_id).await));
    assert_eq!(
        inventory.keys().copied().collect::<Vec<_>>(),
        {
            let mut ids = vec![p.curry, p.cheese];
            ids.sort();
            ids
        },
        "a retired item leaves the inventory"
    );
    assert_eq!(
        inventory[&p.cheese].name, "Mozzarella",
        "inventory names follow the catalog"
    );

    // Retiring the last topping and item leaves an empty, published catalog.
    let empty = ok(store
        .put_catalog(
            p.shop_id,
            CatalogInput {
                toppings: vec![],
                items: vec![],
            },
            None,
            instant(),
        )
        .await);
    assert_eq!(
        empty,
        Catalog {
            shop_id: p.shop_id,
            version: 3,
            toppings: vec![],
            items: vec![],
        }
    );
    assert_eq!(ok(store.get_catalog(p.shop_id).await), empty);
    assert_eq!(ok(store.list_inventory(p.shop_id).await), []);
}

pub async fn catalog_put_restores_a_retired_item_with_its_stock(store: &dyn Store) {
    let p = published(store).await;
    let now = instant();
    let stocked = ok(store
        .update_inventory(p.shop_id, p.ramen, set_stock(Some(7), now), STAFF, now)
        .await);
    assert_eq!(stocked.level.stock, Some(7));

    let without_ramen = CatalogInput {
        toppings: vec![topping(Some(p.cheese), "Cheese", 100)],
        items: vec![item(Some(p.curry), "Curry", 900, vec![p.cheese])],
    };
    assert_eq!(
        ok(store
            .put_catalog(p.shop_id, without_ramen, None, instant())
            .await)
        .version,
        2
    );
    assert!(
        !ok(store.list_inventory(p.shop_id).await)
            .iter()
            .any(|i| i.item_id == p.ramen)
    );

    let again = ok(store
        .put_catalog(p.shop_id, p.input(), None, instant())
        .await);
    assert_eq!(again.version, 3);
    assert_eq!(
        again
            .items
            .iter()
            .map(|i| i.menu_item_id)
            .collect::<Vec<_>>(),
        [p.curry, p.ramen]
    );
    assert_eq!(ok(store.get_catalog(p.shop_id).await), again);
    let ramen = inventory_of(store, p.shop_id, p.ramen).await;
    assert_eq!(ramen.level.stock, Some(7), "stock survives retirement");
    assert_eq!(ramen.kind, ItemKind::MenuItem);
    assert_eq!(ramen.version, stocked.version);
}

pub async fn catalog_put_cannot_change_the_kind_of_an_id(store: &dyn Store) {
    let p = published(store).await;
    let before = ok(store.get_catalog(p.shop_id).await);

    // A live menu item's id offered as a topping.
    let as_topping = CatalogInput {
        toppings: vec![topping(Some(p.curry), "Curry sauce", 50)],
        items: vec![item(Some(p.ramen), "Ramen", 850, vec![])],
    };
    assert_eq!(
        validation_fields(
            store
                .put_catalog(p.shop_id, as_topping, None, instant())
                .await
        ),
        ["toppings[0].toppingId"]
    );
    assert_eq!(
        ok(store.get_catalog(p.shop_id).await),
        before,
        "a rejected put changes nothing"
    );

    // Retire the topping; its id still may not come back as a menu item.
    let without_cheese = CatalogInput {
        toppings: vec![],
        items: vec![item(Some(p.curry), "Curry", 900, vec![])],
    };
    assert_eq!(
        ok(store
            .put_catalog(p.shop_id, without_cheese, None, instant())
            .await)
        .version,
        2
    );
    let cheese_as_item = CatalogInput {
        toppings: vec![],
        items: vec![item(Some(p.cheese), "Cheese plate", 400, vec![])],
    };
    assert_eq!(
        validation_fields(
            store
                .put_catalog(p.shop_id, cheese_as_item, None, instant())
                .await
        ),
        ["items[0].menuItemId"]
    );
    assert_eq!(ok(store.get_catalog(p.shop_id).await).version, 2);
}

pub async fn catalog_items_keep_their_details_and_the_menu_shows_them(store: &dyn Store) {
    let p = published(store).await;
    let declared = ItemDetails {
        allergens: vec!["wheat".into(), "egg".into()],
        tags: vec!["spicy".into()],
        station: Some("grill".into()),
        image_id: None,
    };
    let second = CatalogInput {
        toppings: vec![topping(Some(p.cheese), "Cheese", 100)],
        items: vec![
            MenuItemInput {
                allergens: declared.allergens.clone(),
                tags: declared.tags.clone(),
                station: declared.station.clone(),
                ..item(Some(p.curry), "Curry", 900, vec![p.cheese])
            },
            item(Some(p.ramen), "Ramen", 850, vec![]),
        ],
    };
    let catalog = ok(store.put_catalog(p.shop_id, second, None, instant()).await);
    assert_eq!(catalog.items[0].details, declared);
    assert_eq!(catalog.items[1].details, ItemDetails::default());
    assert_eq!(ok(store.get_catalog(p.shop_id).await), catalog);
    let source = ok(store.menu_source(p.shop_id).await);
    assert_eq!(source.catalog, catalog, "what the menu is built from");

    // A later catalog that declares nothing clears them.
    let plain = CatalogInput {
        toppings: vec![],
        items: vec![item(Some(p.curry), "Curry", 900, vec![])],
    };
    let catalog = ok(store.put_catalog(p.shop_id, plain, None, instant()).await);
    assert_eq!(catalog.items[0].details, ItemDetails::default());
    assert_eq!(ok(store.get_catalog(p.shop_id).await), catalog);
}

pub async fn catalog_put_against_a_stale_version_is_refused_and_changes_nothing(store: &dyn Store) {
    let p = published(store).await;
    let edit = |price| CatalogInput {
        toppings: vec![],
        items: vec![item(Some(p.curry), "Curry", price, vec![])],
    };
    let second = ok(store
        .put_catalog(p.shop_id, edit(950), Some(1), instant())
        .await);
    assert_eq!(second.version, 2, "an edit of the current version is saved");
    assert!(matches!(
        rejected(
            store
                .put_catalog(p.shop_id, edit(990), Some(1), instant())
                .await
        ),
        Rejection::CatalogVersionConflict { current: 2 }
    ));
    assert_eq!(
        ok(store.get_catalog(p.shop_id).await),
        second,
        "nothing changed"
    );
    let third = ok(store
        .put_catalog(p.shop_id, edit(990), None, instant())
        .await);
    assert_eq!(third.version, 3, "without a version, the edit is saved");
}

pub async fn catalog_put_for_an_unknown_shop_is_not_found(store: &dyn Store) {
    new_shop(store).await;
    let input = CatalogInput {
        toppings: vec![],
        items: vec![item(None, "Curry", 900, vec![])],
    };
    assert_eq!(
        rejected(
            store
                .put_catalog(Uuid::new_v4(), input, None, instant())
                .await
        ),
        Rejection::NotFound("shop")
    );
}

pub async fn catalog_never_published_is_version_zero_and_empty(store: &dyn Store) {
    let shop = new_shop(store).await;
    assert_eq!(
        ok(store.get_catalog(shop.shop_id).await),
        Catalog {
            shop_id: shop.shop_id,
            version: 0,
            toppings: vec![],
            items: vec![],
        }
    );
    assert_eq!(ok(store.list_inventory(shop.shop_id).await), []);
    assert_eq!(ok(store.inventory_log(shop.shop_id, limit(100)).await), []);
}

pub async fn menu_source_is_not_ready_until_a_catalog_is_published(store: &dyn Store) {
    let shop = new_shop(store).await;
    assert_eq!(
        rejected(store.menu_source(shop.shop_id).await),
        Rejection::CatalogNotReady
    );

    let catalog = ok(store
        .put_catalog(
            shop.shop_id,
            CatalogInput {
                toppings: vec![topping(None, "Cheese", 100)],
                items: vec![item(None, "Curry", 900, vec![])],
            },
            None,
            instant(),
        )
        .await);
    let source = ok(store.menu_source(shop.shop_id).await);
    assert_eq!(
        by_id(source.inventory.clone()),
        by_id(ok(store.list_inventory(shop.shop_id).await))
    );
    assert_eq!(source.inventory.len(), 2);
    assert_eq!(
        source,
        MenuSource {
            shop,
            catalog,
            inventory: source.inventory.clone(),
        }
    );
}

pub async fn reads_of_an_unknown_shop_are_not_found(store: &dyn Store) {
    new_shop(store).await;
    let unknown = Uuid::new_v4();
    let not_found = Rejection::NotFound("shop");
    assert_eq!(rejected(store.get_catalog(unknown).await), not_found);
    assert_eq!(rejected(store.menu_source(unknown).await), not_found);
    assert_eq!(rejected(store.list_inventory(unknown).await), not_found);
    assert_eq!(
        rejected(store.inventory_log(unknown, limit(10)).await),
        not_found
    );
    assert_eq!(
        rejected(store.list_sessions(unknown, None, limit(10)).await),
        not_found
    );
}
