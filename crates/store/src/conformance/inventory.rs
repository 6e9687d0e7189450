//! Inventory checks.

use std::collections::HashMap;

use chrono::Duration;
use ordergate_domain::Rejection;
use ordergate_domain::catalog::{CatalogInput, ItemKind};
use ordergate_domain::inventory::{LogEntry, MAX_RESTOCK, MAX_STOCK, Operation, StockLevel};
use uuid::Uuid;

use crate::Store;

use super::helpers::*;

pub async fn inventory_of_new_ids_starts_untracked_at_version_one(store: &dyn Store) {
    let p = published(store).await;

    let inventory = by_id(ok(store.list_inventory(p.shop_id).await));
    let mut expected_ids = vec![p.curry, p.ramen, p.cheese];
    expected_ids.sort();
    assert_eq!(inventory.keys().copied().collect::<Vec<_>>(), expected_ids);
    for (id, kind, name) in [
        (p.curry, ItemKind::MenuItem, "Curry"),
        (p.ramen, ItemKind::MenuItem, "Ramen"),
        (p.cheese, ItemKind::Topping, "Cheese"),
    ] {
        let entry = &inventory[&id];
        assert_eq!(entry.kind, kind);
        assert_eq!(entry.name, name);
        assert_eq!(entry.level, StockLevel::default(), "untracked, no 86");
        assert_eq!(entry.version, 1);
        assert_eq!(entry.updated_at, instant());
    }

    // A later put adding an item gives only the new one a fresh entry.
    let now = instant();
    ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(Some(4), now), STAFF, now)
        .await);
    let udon = Uuid::new_v4();
    let mut input = p.input();
    input.items.push(item(Some(udon), "Udon", 700, vec![]));
    ok(store.put_catalog(p.shop_id, input, None, instant()).await);
    let inventory = by_id(ok(store.list_inventory(p.shop_id).await));
    assert_eq!(inventory[&udon].level, StockLevel::default());
    assert_eq!(inventory[&udon].version, 1);
    assert_eq!(inventory[&p.curry].level.stock, Some(4));
    assert_eq!(inventory[&p.curry].version, 2);
}

pub async fn inventory_set_stock_writes_one_set_log_row(store: &dyn Store) {
    let p = published(store).await;
    let t1 = instant();
    let t2 = t1 + secs(1);

    let first = ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(Some(20), t1), "staff", t1)
        .await);
    assert_eq!(first.item_id, p.curry);
    assert_eq!(first.kind, ItemKind::MenuItem);
    assert_eq!(first.name, "Curry");
    assert_eq!(
        first.level,
        StockLevel {
            stock: Some(20),
            ..StockLevel::default()
        }
    );
    assert_eq!(first.version, 2);
    assert_eq!(first.updated_at, t1);
    assert_eq!(inventory_of(store, p.shop_id, p.curry).await, first);
    assert_eq!(
        ok(store.inventory_log(p.shop_id, limit(100)).await),
        [LogEntry {
            at: t1,
            item_id: p.curry,
            operation: Operation::Set,
            delta: 20,
            stock_before: None,
            stock_after: Some(20),
            order_id: None,
            actor: "staff".into(),
        }]
    );

    let second = ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(Some(15), t2), "staff:kei", t2)
        .await);
    assert_eq!(second.level.stock, Some(15));
    assert_eq!(second.version, 3);
    assert_eq!(second.updated_at, t2);
    let log = ok(store.inventory_log(p.shop_id, limit(100)).await);
    assert_eq!(log.len(), 2);
    assert_eq!(
        log[0],
        LogEntry {
            at: t2,
            item_id: p.curry,
            operation: Operation::Set,
            delta: -5,
            stock_before: Some(20),
            stock_after: Some(15),
            order_id: None,
            actor: "staff:kei".into(),
        }
    );
}

pub async fn inventory_86_alone_bumps_the_version_without_a_log_row(store: &dyn Store) {
    let p = published(store).await;
    let t1 = instant();
    let until = t1 + Duration::hours(1) + ms(7);

    let marked = ok(store
        .update_inventory(
            p.shop_id,
            p.cheese,
            mark_sold_out(true, Some(until), t1),
            STAFF,
            t1,
        )
        .await);
    assert_eq!(
        marked.level,
        StockLevel {
            stock: None,
            marked_sold_out: true,
            sold_out_until: Some(until),
        }
    );
    assert_eq!(marked.kind, ItemKind::Topping);
    assert_eq!(marked.version, 2);
    assert_eq!(marked.updated_at, t1);
    assert_eq!(inventory_of(store, p.shop_id, p.cheese).await, marked);
    assert_eq!(ok(store.inventory_log(p.shop_id, limit(100)).await), []);

    let t2 = t1 + secs(10);
    let cleared = ok(store
        .update_inventory(
            p.shop_id,
            p.cheese,
            mark_sold_out(false, None, t2),
            STAFF,
            t2,
        )
        .await);
    assert_eq!(cleared.level, StockLevel::default());
    assert_eq!(cleared.version, 3);
    assert_eq!(cleared.updated_at, t2);
    assert_eq!(inventory_of(store, p.shop_id, p.cheese).await, cleared);
    assert_eq!(ok(store.inventory_log(p.shop_id, limit(100)).await), []);
}

pub async fn inventory_unchanged_update_keeps_the_version(store: &dyn Store) {
    let p = published(store).await;
    let t1 = instant();
    let t2 = t1 + secs(30);

    let set = ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(Some(5), t1), STAFF, t1)
        .await);
    assert_eq!(set.version, 2);

    let same = ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(Some(5), t2), STAFF, t2)
        .await);
    assert_eq!(same, set, "same stock: no new version, no new updated_at");
    let unmark = ok(store
        .update_inventory(
            p.shop_id,
            p.curry,
            mark_sold_out(false, None, t2),
            STAFF,
            t2,
        )
        .await);
    assert_eq!(
        unmark, set,
        "clearing an 86 that is not there changes nothing"
    );

    assert_eq!(inventory_of(store, p.shop_id, p.curry).await, set);
    assert_eq!(
        ok(store.inventory_log(p.shop_id, limit(100)).await).len(),
        1
    );

    // Untracked to untracked is no change either.
    let ramen = ok(store
        .update_inventory(p.shop_id, p.ramen, set_stock(None, t2), STAFF, t2)
        .await);
    assert_eq!(ramen.version, 1);
    assert_eq!(
        ok(store.inventory_log(p.shop_id, limit(100)).await).len(),
        1
    );
}

pub async fn inventory_restock_adds_and_logs_a_restock_row(store: &dyn Store) {
    let p = published(store).await;
    let t1 = instant();
    let t2 = t1 + secs(2);
    ok(store
        .update_inventory(p.shop_id, p.cheese, set_stock(Some(3), t1), STAFF, t1)
        .await);

    let restocked = ok(store
        .restock(p.shop_id, p.cheese, 4, "staff:alice", t2)
        .await);
    assert_eq!(restocked.level.stock, Some(7));
    assert_eq!(restocked.version, 3);
    assert_eq!(restocked.updated_at, t2);
    assert_eq!(inventory_of(store, p.shop_id, p.cheese).await, restocked);

    let log = ok(store.inventory_log(p.shop_id, limit(100)).await);
    assert_eq!(log.len(), 2);
    assert_eq!(
        log[0],
        LogEntry {
            at: t2,
            item_id: p.cheese,
            operation: Operation::Restock,
            delta: 4,
            stock_before: Some(3),
            stock_after: Some(7),
            order_id: None,
            actor: "staff:alice".into(),
        }
    );
    assert_eq!(log[1].operation, Operation::Set);
}

pub async fn inventory_restock_of_untracked_stock_is_rejected(store: &dyn Store) {
    let p = published(store).await;
    let now = instant();
    let before = inventory_of(store, p.shop_id, p.curry).await;
    assert_eq!(
        rejected(store.restock(p.shop_id, p.curry, 5, STAFF, now).await),
        Rejection::StockNotTracked { item_id: p.curry }
    );
    assert_eq!(inventory_of(store, p.shop_id, p.curry).await, before);
    assert_eq!(ok(store.inventory_log(p.shop_id, limit(100)).await), []);

    // Tracked, then untracked again: restock is refused once more.
    ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(Some(2), now), STAFF, now)
        .await);
    ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(None, now), STAFF, now)
        .await);
    assert_eq!(
        rejected(store.restock(p.shop_id, p.curry, 1, STAFF, now).await),
        Rejection::StockNotTracked { item_id: p.curry }
    );
    assert_eq!(
        ok(store.inventory_log(p.shop_id, limit(100)).await).len(),
        2
    );
}

pub async fn inventory_restock_outside_its_bounds_is_a_validation_error(store: &dyn Store) {
    let p = published(store).await;
    let now = instant();
    ok(store
        .update_inventory(
            p.shop_id,
            p.curry,
            set_stock(Some(MAX_STOCK - 1), now),
            STAFF,
            now,
        )
        .await);
    for quantity in [0, -3, MAX_RESTOCK + 1, 2] {
        assert_eq!(
            validation_fields(
                store
                    .restock(p.shop_id, p.curry, quantity, STAFF, now)
                    .await
            ),
            ["quantity"],
            "quantity {quantity}"
        );
    }
    let curry = inventory_of(store, p.shop_id, p.curry).await;
    assert_eq!(curry.level.stock, Some(MAX_STOCK - 1));
    assert_eq!(curry.version, 2);
    assert_eq!(
        ok(store.inventory_log(p.shop_id, limit(100)).await).len(),
        1
    );

    // Up to the cap is fine.
    let full = ok(store.restock(p.shop_id, p.curry, 1, STAFF, now).await);
    assert_eq!(full.level.stock, Some(MAX_STOCK));
}

pub async fn inventory_log_is_newest_first_and_respects_the_limit(store: &dyn Store) {
    let p = published(store).await;
    // One timestamp for every change: "newest" must mean the order of the
    // changes, not a tie broken by chance.
    let now = instant();
    ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(Some(1), now), STAFF, now)
        .await);
    ok(store
        .update_inventory(p.shop_id, p.cheese, set_stock(Some(2), now), STAFF, now)
        .await);
    ok(store.restock(p.shop_id, p.curry, 3, STAFF, now).await);
    ok(store
        .update_inventory(p.shop_id, p.cheese, set_stock(None, now), STAFF, now)
        .await);
    ok(store
        .update_inventory(p.shop_id, p.ramen, set_stock(Some(9), now), STAFF, now)
        .await);

    let entry = |item_id, operation, delta, stock_before, stock_after| LogEntry {
        at: now,
        item_id,
        operation,
        delta,
        stock_before,
        stock_after,
        order_id: None,
        actor: STAFF.into(),
    };
    let expected = vec![
        entry(p.ramen, Operation::Set, 9, None, Some(9)),
        entry(p.cheese, Operation::Set, -2, Some(2), None),
        entry(p.curry, Operation::Restock, 3, Some(1), Some(4)),
        entry(p.cheese, Operation::Set, 2, None, Some(2)),
        entry(p.curry, Operation::Set, 1, None, Some(1)),
    ];
    assert_eq!(
        ok(store.inventory_log(p.shop_id, limit(500)).await),
        expected
    );
    assert_eq!(ok(store.inventory_log(p.shop_id, limit(5)).await), expected);
    assert_eq!(
        ok(store.inventory_log(p.shop_id, limit(2)).await),
        expected[..2]
    );
    assert_eq!(
        ok(store.inventory_log(p.shop_id, limit(1)).await),
        expected[..1]
    );
}

pub async fn inventory_log_deltas_sum_to_the_stock_of_every_item(store: &dyn Store) {
    let p = published(store).await;
    let mut now = instant();
    let mut tick = || {
        now += ms(250);
        now
    };

    enum Step {
        Set(Uuid, Option<i64>),
        Restock(Uuid, i64),
    }
    use Step::{Restock, Set};
    let steps = [
        Set(p.curry, Some(10)),
        Restock(p.curry, 5),
        Set(p.cheese, Some(4)),
        Set(p.curry, None),
        Restock(p.cheese, 6),
        Set(p.curry, Some(3)),
        Set(p.cheese, Some(0)),
        Restock(p.curry, 2),
        Set(p.ramen, Some(8)),
        Set(p.ramen, None),
        Restock(p.cheese, 1),
        Set(p.curry, Some(0)),
        Set(p.curry, Some(12)),
    ];
    for step in steps {
        let at = tick();
        match step {
            Set(id, stock) => ok(store
                .update_inventory(p.shop_id, id, set_stock(stock, at), STAFF, at)
                .await),
            Restock(id, quantity) => ok(store.restock(p.shop_id, id, quantity, STAFF, at).await),
        };
    }

    let inventory = by_id(ok(store.list_inventory(p.shop_id).await));
    assert_eq!(inventory[&p.curry].level.stock, Some(12));
    assert_eq!(inventory[&p.cheese].level.stock, Some(1));
    assert_eq!(inventory[&p.ramen].level.stock, None);

    let mut log = ok(store.inventory_log(p.shop_id, limit(500)).await);
    assert_eq!(log.len(), 13, "every step changed the stock");
    log.reverse(); // oldest first
    let mut sums: HashMap<Uuid, i64> = HashMap::new();
    let mut last: HashMap<Uuid, Option<i64>> = HashMap::new();
    for entry in &log {
        assert_eq!(
            entry.delta,
            entry.stock_after.unwrap_or(0) - entry.stock_before.unwrap_or(0),
            "delta counts untracked as 0: {entry:?}"
        );
        let previous = last.get(&entry.item_id).copied().unwrap_or(None);
        assert_eq!(
            entry.stock_before, previous,
            "each row starts where the item's previous row ended: {entry:?}"
        );
        last.insert(entry.item_id, entry.stock_after);
        *sums.entry(entry.item_id).or_default() += entry.delta;
    }
    for (id, item) in &inventory {
        assert_eq!(
            sums.get(id).copied().unwrap_or(0),
            item.level.stock.unwrap_or(0),
            "log of {} adds up to its stock",
            item.name
        );
        assert_eq!(last.get(id).copied().unwrap_or(None), item.level.stock);
    }
}

pub async fn inventory_log_lists_only_its_own_shop(store: &dyn Store) {
    let a = published(store).await;
    let b = published(store).await;
    let now = instant();
    ok(store
        .update_inventory(b.shop_id, b.curry, set_stock(Some(6), now), STAFF, now)
        .await);
    assert_eq!(ok(store.inventory_log(a.shop_id, limit(100)).await), []);
    assert_eq!(
        ok(store.inventory_log(b.shop_id, limit(100)).await).len(),
        1
    );

    // Shop A cannot touch shop B's items through its own id.
    assert_eq!(
        rejected(
            store
                .update_inventory(a.shop_id, b.curry, set_stock(Some(1), now), STAFF, now)
                .await
        ),
        Rejection::NotFound("inventory item")
    );
    assert_eq!(
        rejected(store.restock(a.shop_id, b.curry, 1, STAFF, now).await),
        Rejection::NotFound("inventory item")
    );
    assert_eq!(
        inventory_of(store, b.shop_id, b.curry).await.level.stock,
        Some(6)
    );
}

pub async fn shops_sharing_an_item_id_keep_separate_catalogs_and_inventory(store: &dyn Store) {
    // Ids are the shop's own: another shop may use the same ones, even for
    // the other kind, and nothing done in one shop shows in the other.
    let a = published(store).await;
    let b = new_shop(store).await.shop_id;
    let b_input = CatalogInput {
        toppings: vec![topping(Some(a.curry), "Curry sauce", 50)],
        items: vec![item(Some(a.cheese), "Cheese plate", 400, vec![a.curry])],
    };
    let b_catalog = ok(store.put_catalog(b, b_input, None, instant()).await);
    assert_eq!(b_catalog.version, 1);

    let now = instant();
    ok(store
        .update_inventory(a.shop_id, a.curry, set_stock(Some(5), now), STAFF, now)
        .await);
    ok(store
        .update_inventory(b, a.curry, set_stock(Some(40), now), STAFF, now)
        .await);
    ok(store.restock(b, a.curry, 2, STAFF, now).await);
    ok(store
        .update_inventory(
            a.shop_id,
            a.cheese,
            mark_sold_out(true, None, now),
            STAFF,
            now,
        )
        .await);

    let in_a = inventory_of(store, a.shop_id, a.curry).await;
    assert_eq!(
        (in_a.kind, in_a.level.stock, in_a.version),
        (ItemKind::MenuItem, Some(5), 2)
    );
    let in_b = inventory_of(store, b, a.curry).await;
    assert_eq!(
        (in_b.kind, in_b.level.stock, in_b.version),
        (ItemKind::Topping, Some(42), 3)
    );
    assert_eq!(in_b.name, "Curry sauce");
    let plate = inventory_of(store, b, a.cheese).await;
    assert_eq!(
        (plate.level.clone(), plate.version),
        (StockLevel::default(), 1)
    );
    assert_eq!(
        ok(store.inventory_log(a.shop_id, limit(100)).await).len(),
        1
    );
    assert_eq!(ok(store.inventory_log(b, limit(100)).await).len(), 2);

    // Retiring everything in A leaves B's catalog and inventory alone.
    ok(store
        .put_catalog(
            a.shop_id,
            CatalogInput {
                toppings: vec![],
                items: vec![],
            },
            None,
            instant(),
        )
        .await);
    assert_eq!(ok(store.get_catalog(b).await), b_catalog);
    assert_eq!(ok(store.list_inventory(b).await).len(), 2);
}

pub async fn inventory_changes_to_an_unknown_item_are_not_found(store: &dyn Store) {
    let p = published(store).await;
    let now = instant();
    let unknown = Uuid::new_v4();
    let not_found = Rejection::NotFound("inventory item");
    assert_eq!(
        rejected(
            store
                .update_inventory(p.shop_id, unknown, set_stock(Some(1), now), STAFF, now)
                .await
        ),
        not_found
    );
    assert_eq!(
        rejected(store.restock(p.shop_id, unknown, 1, STAFF, now).await),
        not_found
    );

    // A retired item is no longer in the inventory either.
    ok(store
        .update_inventory(p.shop_id, p.ramen, set_stock(Some(2), now), STAFF, now)
        .await);
    let without_ramen = CatalogInput {
        toppings: vec![topping(Some(p.cheese), "Cheese", 100)],
        items: vec![item(Some(p.curry), "Curry", 900, vec![p.cheese])],
    };
    ok(store
        .put_catalog(p.shop_id, without_ramen, None, instant())
        .await);
    assert_eq!(
        rejected(
            store
                .update_inventory(p.shop_id, p.ramen, set_stock(Some(5), now), STAFF, now)
                .await
        ),
        not_found
    );
    assert_eq!(
        rejected(store.restock(p.shop_id, p.ramen, 1, STAFF, now).await),
        not_found
    );
    assert_eq!(
        ok(store.inventory_log(p.shop_id, limit(100)).await).len(),
        1
    );

    // An unknown shop is named as such.
    assert_eq!(
        rejected(
            store
                .update_inventory(Uuid::new_v4(), p.curry, set_stock(Some(1), now), STAFF, now)
                .await
        ),
        Rejection::NotFound("shop")
    );
    assert_eq!(
        rejected(store.restock(Uuid::new_v4(), p.curry, 1, STAFF, now).await),
        Rejection::NotFound("shop")
    );
}
