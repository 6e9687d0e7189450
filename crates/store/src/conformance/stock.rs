//! Stock checks on the order path: what an order takes, all or nothing, and
//! the log rows that explain it.

use std::collections::BTreeMap;

use chrono::Duration;
use ordergate_domain::Rejection;
use ordergate_domain::inventory::{LogEntry, Operation};
use ordergate_domain::order::Shortage;
use uuid::Uuid;

use crate::Store;

use super::helpers::*;

/// Every item's log deltas add up to its stock (untracked counting as 0).
async fn assert_log_adds_up(store: &dyn Store, shop_id: Uuid) {
    let mut sums: BTreeMap<Uuid, i64> = BTreeMap::new();
    for entry in ok(store.inventory_log(shop_id, limit(500)).await) {
        *sums.entry(entry.item_id).or_default() += entry.delta;
    }
    for item in ok(store.list_inventory(shop_id).await) {
        assert_eq!(
            sums.get(&item.item_id).copied().unwrap_or(0),
            item.level.stock.unwrap_or(0),
            "log of {} ({})",
            item.item_id,
            item.name
        );
    }
}

pub async fn order_takes_stock_per_unit_of_items_and_toppings(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let t = instant();
    for id in [p.curry, p.cheese] {
        ok(store
            .update_inventory(p.shop_id, id, set_stock(Some(10), t), STAFF, t)
            .await);
    }
    let before = by_id(ok(store.list_inventory(p.shop_id).await));

    let now = t + secs(1);
    let cmd = guest_order(
        session.session_id,
        CLIENT,
        order_of(
            vec![
                line(p.curry, 3, &[p.cheese]),
                line(p.curry, 1, &[]),
                line(p.ramen, 2, &[]),
            ],
            "",
            false,
        ),
        now,
    );
    placed(store.place(cmd.clone()).await);
    let order = placed_order(
        &cmd,
        &session,
        1,
        vec![
            priced(p.curry, "Curry", 900, 3, &[(p.cheese, "Cheese", 100)]),
            priced(p.curry, "Curry", 900, 1, &[]),
            priced(p.ramen, "Ramen", 850, 2, &[]),
        ],
    );
    assert_eq!(order.total, 3000 + 900 + 1700);
    assert_stored(store, &order).await;

    let after = by_id(ok(store.list_inventory(p.shop_id).await));
    assert_eq!(after[&p.curry].level.stock, Some(6), "3 + 1 curries");
    assert_eq!(
        after[&p.cheese].level.stock,
        Some(7),
        "one cheese per unit of its line"
    );
    for id in [p.curry, p.cheese] {
        assert_eq!(after[&id].version, before[&id].version + 1);
        assert_eq!(after[&id].updated_at, now);
    }
    assert_eq!(
        after[&p.ramen], before[&p.ramen],
        "untracked ramen is not touched"
    );

    let log = ok(store.inventory_log(p.shop_id, limit(100)).await);
    assert_eq!(log.len(), 4, "two set rows, two order rows: {log:?}");
    let mut rows: Vec<LogEntry> = log[..2].to_vec();
    rows.sort_by_key(|e| e.item_id);
    let row = |item_id, delta, before: i64| LogEntry {
        at: now,
        item_id,
        operation: Operation::Order,
        delta,
        stock_before: Some(before),
        stock_after: Some(before + delta),
        order_id: Some(cmd.order_id),
        actor: format!("guest:{CLIENT}"),
    };
    let mut expected = vec![row(p.curry, -4, 10), row(p.cheese, -3, 10)];
    expected.sort_by_key(|e| e.item_id);
    assert_eq!(rows, expected, "the newest rows are the order's");
    assert!(log.iter().all(|e| e.item_id != p.ramen));
    assert_log_adds_up(store, p.shop_id).await;
}

pub async fn staff_order_stock_is_logged_under_staff(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let t = instant();
    ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(Some(5), t), STAFF, t)
        .await);
    let cmd = staff_order(session.session_id, simple_order(p.curry, 2), t + secs(1));
    placed(store.place(cmd.clone()).await);
    assert_eq!(stock_of(store, p.shop_id, p.curry).await, Some(3));
    let log = ok(store.inventory_log(p.shop_id, limit(1)).await);
    assert_eq!(
        log,
        [LogEntry {
            at: t + secs(1),
            item_id: p.curry,
            operation: Operation::Order,
            delta: -2,
            stock_before: Some(5),
            stock_after: Some(3),
            order_id: Some(cmd.order_id),
            actor: "staff".into(),
        }]
    );
    assert_log_adds_up(store, p.shop_id).await;
}

pub async fn order_short_of_stock_names_every_shortage_and_changes_nothing(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let t = instant();
    for (id, stock) in [(p.curry, 1), (p.cheese, 0), (p.ramen, 5)] {
        ok(store
            .update_inventory(p.shop_id, id, set_stock(Some(stock), t), STAFF, t)
            .await);
    }
    let inventory = ok(store.list_inventory(p.shop_id).await);
    let log = ok(store.inventory_log(p.shop_id, limit(100)).await);

    let cmd = guest_order(
        session.session_id,
        CLIENT,
        order_of(
            vec![
                line(p.curry, 2, &[p.cheese]),
                line(p.ramen, 1, &[]),
                line(p.curry, 1, &[]),
            ],
            "",
            false,
        ),
        t + secs(1),
    );
    let mut shortages = vec![
        Shortage {
            item_id: p.curry,
            requested: 3,
            available: 1,
        },
        Shortage {
            item_id: p.cheese,
            requested: 2,
            available: 0,
        },
    ];
    shortages.sort_by_key(|s| s.item_id);
    assert_eq!(
        rejected(store.place(cmd.clone()).await),
        Rejection::OutOfStock { shortages },
        "every short item, sorted by id; ramen has enough"
    );
    assert_eq!(
        ok(store.list_inventory(p.shop_id).await),
        inventory,
        "nothing taken"
    );
    assert_eq!(ok(store.inventory_log(p.shop_id, limit(100)).await), log);
    assert_eq!(
        session_order_ids(store, session.session_id).await,
        Vec::<Uuid>::new()
    );
    assert_eq!(ok(store.get_order(cmd.order_id).await), None);

    // Restocked, the same request under the same key is a fresh order, and
    // the refusal took no ticket number.
    let restocked = t + secs(2);
    ok(store.restock(p.shop_id, p.curry, 2, STAFF, restocked).await);
    ok(store
        .restock(p.shop_id, p.cheese, 2, STAFF, restocked)
        .await);
    let again = retry(&cmd, t + secs(3));
    placed(store.place(again.clone()).await);
    assert_eq!(
        ok(store.get_order(again.order_id).await)
            .expect("placed")
            .ticket_number,
        1
    );
    for (id, stock) in [(p.curry, 0), (p.cheese, 0), (p.ramen, 4)] {
        assert_eq!(stock_of(store, p.shop_id, id).await, Some(stock));
    }
    assert_log_adds_up(store, p.shop_id).await;
}

pub async fn order_of_an_86ed_item_is_out_of_stock_even_when_untracked(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let t = instant();
    let lapses = t + Duration::hours(1);
    ok(store
        .update_inventory(
            p.shop_id,
            p.ramen,
            mark_sold_out(true, Some(lapses), t),
            STAFF,
            t,
        )
        .await);
    ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(Some(5), t), STAFF, t)
        .await);
    for id in [p.curry, p.cheese] {
        ok(store
            .update_inventory(p.shop_id, id, mark_sold_out(true, None, t), STAFF, t)
            .await);
    }

    let ramen = guest_order(
        session.session_id,
        CLIENT,
        simple_order(p.ramen, 1),
        t + secs(1),
    );
    assert_eq!(
        rejected(store.place(ramen.clone()).await),
        Rejection::OutOfStock {
            shortages: vec![Shortage {
                item_id: p.ramen,
                requested: 1,
                available: 0
            }]
        },
        "an 86 makes even unlimited ramen unavailable"
    );
    let curry = guest_order(
        session.session_id,
        OTHER_CLIENT,
        order_of(vec![line(p.curry, 1, &[p.cheese])], "", false),
        t + secs(1),
    );
    let mut shortages = vec![
        Shortage {
            item_id: p.curry,
            requested: 1,
            available: 0,
        },
        Shortage {
            item_id: p.cheese,
            requested: 1,
            available: 0,
        },
    ];
    shortages.sort_by_key(|s| s.item_id);
    assert_eq!(
        rejected(store.place(curry.clone()).await),
        Rejection::OutOfStock { shortages },
        "tracked curry with 5 left, and cheese, are 86ed"
    );
    assert_eq!(stock_of(store, p.shop_id, p.curry).await, Some(5));

    // Cleared by hand, or lapsed by itself, they are orderable again.
    let cleared = t + secs(2);
    for id in [p.curry, p.cheese] {
        ok(store
            .update_inventory(
                p.shop_id,
                id,
                mark_sold_out(false, None, cleared),
                STAFF,
                cleared,
            )
            .await);
    }
    placed(store.place(retry(&curry, t + secs(3))).await);
    placed(store.place(retry(&ramen, lapses)).await);
    assert_eq!(stock_of(store, p.shop_id, p.curry).await, Some(4));
    assert_eq!(stock_of(store, p.shop_id, p.cheese).await, None);
    assert_eq!(stock_of(store, p.shop_id, p.ramen).await, None);
    let log = ok(store.inventory_log(p.shop_id, limit(100)).await);
    assert_eq!(log.len(), 2, "curry's set row and its order row: {log:?}");
    assert!(
        log.iter().all(|e| e.item_id == p.curry),
        "untracked items are never logged"
    );
    assert_log_adds_up(store, p.shop_id).await;
}
