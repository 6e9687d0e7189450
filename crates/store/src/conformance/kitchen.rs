//! The kitchen's side: the order status machine, the shop's ticket list,
//! and the per-shop event log every write appends to in its own
//! transaction, with consecutive ids.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ordergate_domain::Rejection;
use ordergate_domain::events::{Event, EventType, SessionChanged, StockChanged};
use ordergate_domain::inventory::{LogEntry, Operation};
use ordergate_domain::order::{Order, OrderStatus, Recall, StatusChange};
use ordergate_domain::session::{Session, SessionStatus};
use tokio::sync::Barrier;
use tokio::task::JoinSet;
use uuid::Uuid;

use crate::{Answer, Claim, StaffWrite, Store, StoreError, StoredResponse};

use super::helpers::*;

use OrderStatus::{Accepted, Cancelled, Placed, Preparing, Ready, Served};

const ALL: [OrderStatus; 6] = [Placed, Accepted, Preparing, Ready, Served, Cancelled];

fn to(status: OrderStatus) -> StatusChange {
    StatusChange {
        status,
        expected_version: None,
        actor: STAFF.into(),
    }
}

fn to_at(status: OrderStatus, version: i64) -> StatusChange {
    StatusChange {
        status,
        expected_version: Some(version),
        actor: STAFF.into(),
    }
}

/// The status machine of the contract, spelled out: `Some(true)` changes
/// the order, `Some(false)` is the current status again, `None` is refused.
fn allowed(from: OrderStatus, to: OrderStatus) -> Option<bool> {
    let path = [Placed, Accepted, Preparing, Ready, Served];
    let step = |s| path.iter().position(|p| *p == s);
    if from == to {
        return Some(false);
    }
    match (step(from), step(to)) {
        (Some(from), None) if from <= 2 => Some(true),
        (Some(from), Some(to)) if to > from => Some(true),
        _ => None,
    }
}

/// A staff order of `quantity` ramen at the table, placed at `now`.
async fn ramen_order(
    store: &dyn Store,
    t: &Table,
    quantity: i64,
    now: ordergate_domain::Timestamp,
) -> Order {
    let cmd = staff_order(
        t.session.session_id,
        simple_order(t.menu.ramen, quantity),
        now,
    );
    placed(store.place(cmd.clone()).await);
    ok(store.get_order(cmd.order_id).await).expect("the placed order")
}

/// The order as stored after the change: same order, new status and version.
fn moved(order: &Order, status: OrderStatus, version: i64) -> Order {
    Order {
        status,
        version,
        ..order.clone()
    }
}

async fn cancel_rows(store: &dyn Store, shop_id: Uuid) -> Vec<LogEntry> {
    ok(store.inventory_log(shop_id, limit(500)).await)
        .into_iter()
        .filter(|e| e.operation == Operation::Cancel)
        .collect()
}

pub async fn status_moves_forward_skipping_steps_and_bumps_the_version_per_change(
    store: &dyn Store,
) {
    let t = table(store).await;
    let now = instant() + secs(1);
    let order = ramen_order(store, &t, 1, now).await;
    assert_eq!((order.status, order.version), (Placed, 1));

    let accepted = ok(store
        .set_order_status(order.order_id, to(Accepted), now)
        .await);
    assert_eq!(accepted, moved(&order, Accepted, 2));
    // Skipping `preparing`.
    let ready = ok(store.set_order_status(order.order_id, to(Ready), now).await);
    assert_eq!(ready, moved(&order, Ready, 3));
    assert_stored(store, &ready).await;
    // The current status again: answered as is, version unchanged.
    let again = ok(store.set_order_status(order.order_id, to(Ready), now).await);
    assert_eq!(again, ready);
    assert_stored(store, &ready).await;

    for back in [Placed, Accepted, Preparing, Cancelled] {
        assert_eq!(
            rejected(store.set_order_status(order.order_id, to(back), now).await),
            Rejection::InvalidTransition {
                from: "ready",
                to: back.as_str()
            }
        );
    }
    assert_stored(store, &ready).await;
    let served = ok(store
        .set_order_status(order.order_id, to(Served), now)
        .await);
    assert_eq!(served, moved(&order, Served, 4));
    for next in [Placed, Accepted, Preparing, Ready, Cancelled] {
        assert!(matches!(
            rejected(store.set_order_status(order.order_id, to(next), now).await),
            Rejection::InvalidTransition { from: "served", .. }
        ));
    }
    assert_stored(store, &served).await;
}

pub async fn status_transitions_follow_the_contracts_table_for_every_pair(store: &dyn Store) {
    let t = table(store).await;
    let now = instant() + secs(1);
    for from in ALL {
        for target in ALL {
            let order = ramen_order(store, &t, 1, now).await;
            let start = if from == Placed {
                order.clone()
            } else {
                ok(store.set_order_status(order.order_id, to(from), now).await)
            };
            let outcome = store
                .set_order_status(order.order_id, to(target), now)
                .await;
            let context = format!("{from:?} → {target:?}");
            match allowed(from, target) {
                Some(true) => {
                    let changed = ok(outcome);
                    assert_eq!(
                        changed,
                        moved(&start, target, start.version + 1),
                        "{context}"
                    );
                    assert_stored(store, &changed).await;
                }
                Some(false) => {
                    assert_eq!(ok(outcome), start, "{context}");
                    assert_stored(store, &start).await;
                }
                None => {
                    assert_eq!(
                        rejected(outcome),
                        Rejection::InvalidTransition {
                            from: from.as_str(),
                            to: target.as_str()
                        },
                        "{context}"
                    );
                    assert_stored(store, &start).await;
                }
            }
        }
    }
}

pub async fn status_cancel_restores_every_item_and_topping_exactly_once(store: &dyn Store) {
    let t = table(store).await;
    let p = &t.menu;
    let now = instant();
    for id in [p.curry, p.cheese] {
        ok(store
            .update_inventory(p.shop_id, id, set_stock(Some(10), now), STAFF, now)
            .await);
    }
    let cmd = guest_order(
        t.session.session_id,
        CLIENT,
        order_of(
            vec![
                line(p.curry, 2, &[p.cheese]),
                line(p.curry, 1, &[]),
                line(p.ramen, 4, &[]),
            ],
            "",
            false,
        ),
        now + secs(1),
    );
    placed(store.place(cmd.clone()).await);
    assert_eq!(stock_of(store, p.shop_id, p.curry).await, Some(7));
    assert_eq!(stock_of(store, p.shop_id, p.cheese).await, Some(8));
    let order = ok(store.get_order(cmd.order_id).await).expect("placed");
    let preparing = ok(store
        .set_order_status(order.order_id, to(Preparing), now + secs(2))
        .await);

    let at = now + secs(3);
    let cancelled = ok(store
        .set_order_status(order.order_id, to(Cancelled), at)
        .await);
    assert_eq!(cancelled, moved(&preparing, Cancelled, 3));
    assert_eq!(stock_of(store, p.shop_id, p.curry).await, Some(10));
    assert_eq!(stock_of(store, p.shop_id, p.cheese).await, Some(10));
    assert_eq!(
        stock_of(store, p.shop_id, p.ramen).await,
        None,
        "untracked stays so"
    );
    let mut rows = cancel_rows(store, p.shop_id).await;
    rows.sort_by_key(|r| r.item_id);
    let mut expected = vec![
        LogEntry {
            at,
            item_id: p.curry,
            operation: Operation::Cancel,
            delta: 3,
            stock_before: Some(7),
            stock_after: Some(10),
            order_id: Some(order.order_id),
            actor: STAFF.to_owned(),
        },
        LogEntry {
            at,
            item_id: p.cheese,
            operation: Operation::Cancel,
            delta: 2,
            stock_before: Some(8),
            stock_after: Some(10),
            order_id: Some(order.order_id),
            actor: STAFF.to_owned(),
        },
    ];
    expected.sort_by_key(|r| r.item_id);
    assert_eq!(rows, expected);

    // Cancelling again is the current status again: nothing moves.
    for _ in 0..3 {
        let again = ok(store
            .set_order_status(order.order_id, to(Cancelled), at + secs(1))
            .await);
        assert_eq!(again, cancelled);
    }
    assert_eq!(stock_of(store, p.shop_id, p.curry).await, Some(10));
    assert_eq!(stock_of(store, p.shop_id, p.cheese).await, Some(10));
    assert_eq!(cancel_rows(store, p.shop_id).await.len(), 2);
    for next in [Placed, Accepted, Preparing, Ready, Served] {
        assert!(matches!(
            rejected(store.set_order_status(order.order_id, to(next), at).await),
            Rejection::InvalidTransition {
                from: "cancelled",
                ..
            }
        ));
    }
    assert_stored(store, &cancelled).await;
}

pub async fn status_stale_expected_version_is_a_version_conflict_and_changes_nothing(
    store: &dyn Store,
) {
    let t = table(store).await;
    let p = &t.menu;
    let now = instant();
    ok(store
        .update_inventory(p.shop_id, p.ramen, set_stock(Some(5), now), STAFF, now)
        .await);
    let order = ramen_order(store, &t, 2, now + secs(1)).await;
    let accepted = ok(store
        .set_order_status(order.order_id, to_at(Accepted, 1), now)
        .await);
    assert_eq!(accepted.version, 2);
    for stale in [0, 1, 3] {
        for target in [Preparing, Served, Cancelled] {
            assert_eq!(
                rejected(
                    store
                        .set_order_status(order.order_id, to_at(target, stale), now)
                        .await
                ),
                Rejection::VersionConflict { current: 2 },
                "{target:?} expecting {stale}"
            );
        }
    }
    assert_stored(store, &accepted).await;
    assert_eq!(
        stock_of(store, p.shop_id, p.ramen).await,
        Some(3),
        "no stock back"
    );
    assert!(cancel_rows(store, p.shop_id).await.is_empty());

    let cancelled = ok(store
        .set_order_status(order.order_id, to_at(Cancelled, 2), now)
        .await);
    assert_eq!(cancelled, moved(&accepted, Cancelled, 3));
    assert_eq!(stock_of(store, p.shop_id, p.ramen).await, Some(5));
}

pub async fn status_of_an_unknown_order_is_not_found(store: &dyn Store) {
    table(store).await;
    assert!(matches!(
        rejected(
            store
                .set_order_status(Uuid::now_v7(), to(Accepted), instant())
                .await
        ),
        Rejection::NotFound(_)
    ));
}

pub async fn shop_orders_filter_by_status_oldest_first_within_the_limit(store: &dyn Store) {
    let t = table(store).await;
    let second_table = open_table(store, t.menu.shop_id, "T5").await;
    let base = instant();
    let mut orders = Vec::new();
    for i in 0..6 {
        let session = if i % 2 == 0 {
            &t.session
        } else {
            &second_table
        };
        let cmd = staff_order(
            session.session_id,
            simple_order(t.menu.ramen, i + 1),
            base + secs(i),
        );
        placed(store.place(cmd.clone()).await);
        orders.push(ok(store.get_order(cmd.order_id).await).expect("placed"));
    }
    // Another shop's orders never show.
    let other = table(store).await;
    ramen_order(store, &other, 1, base).await;

    let moves = [Accepted, Placed, Preparing, Accepted, Cancelled, Served];
    for (order, status) in orders.iter_mut().zip(moves) {
        if status != Placed {
            *order = ok(store
                .set_order_status(order.order_id, to(status), base)
                .await);
        }
    }
    let pick =
        |indexes: &[usize]| -> Vec<Order> { indexes.iter().map(|&i| orders[i].clone()).collect() };
    let shop = t.menu.shop_id;
    let list = |statuses: Vec<OrderStatus>, n: u32| store.shop_orders(shop, statuses, limit(n));

    assert_eq!(
        ok(list(vec![], 100).await),
        pick(&[0, 1, 2, 3, 4, 5]),
        "oldest first"
    );
    assert_eq!(
        ok(list(vec![Placed, Accepted], 100).await),
        pick(&[0, 1, 3])
    );
    assert_eq!(ok(list(vec![Accepted, Placed], 2).await), pick(&[0, 1]));
    assert_eq!(ok(list(vec![Cancelled], 100).await), pick(&[4]));
    assert_eq!(ok(list(vec![Served, Preparing], 100).await), pick(&[2, 5]));
    assert_eq!(ok(list(vec![Ready], 100).await), vec![]);
    assert_eq!(ok(list(vec![], 1).await), pick(&[0]));
    assert_eq!(
        ok(store
            .shop_orders(other.menu.shop_id, vec![], limit(100))
            .await)
        .len(),
        1
    );
    assert!(matches!(
        rejected(store.shop_orders(Uuid::new_v4(), vec![], limit(100)).await),
        Rejection::NotFound(_)
    ));
}

/// Asserts that the shop's log grew by exactly `types` (in any order
/// within the write), with ids right after `last`; moves `last` on.
async fn appended(
    store: &dyn Store,
    shop_id: Uuid,
    last: &mut i64,
    types: &[EventType],
) -> Vec<Event> {
    let events = ok(store.events_after(shop_id, *last, limit(500)).await);
    let ids: Vec<i64> = events.iter().map(|e| e.event_id).collect();
    let expected_ids: Vec<i64> = (*last + 1..=*last + types.len() as i64).collect();
    assert_eq!(ids, expected_ids, "ids right after {last}: {events:?}");
    let mut got: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    let mut want: Vec<&str> = types.iter().map(|t| t.as_str()).collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "{events:?}");
    *last += types.len() as i64;
    assert_eq!(ok(store.last_event_id(shop_id).await), *last);
    events
}

fn data(event: &Event) -> serde_json::Value {
    serde_json::from_str(&event.data).expect("event data is JSON")
}

/// A value as JSON (the crate has `serde_json` but not `serde` to name
/// the trait with).
macro_rules! json_of {
    ($value:expr) => {
        serde_json::to_value($value).expect("serialisable")
    };
}

fn stock_event(item_id: Uuid, stock: Option<i64>, sold_out: bool) -> serde_json::Value {
    json_of!(&StockChanged {
        item_id,
        stock,
        sold_out,
        sold_out_until: None,
    })
}

/// The `stock.changed` data of `events`, by item.
fn stock_data(events: &[Event]) -> BTreeMap<Uuid, serde_json::Value> {
    events
        .iter()
        .filter(|e| e.event_type == EventType::StockChanged)
        .map(|e| {
            assert_eq!(e.session_id, None, "stock changes belong to no session");
            let data = data(e);
            let item = data["itemId"].as_str().and_then(|s| s.parse().ok());
            (item.expect("itemId"), data)
        })
        .collect()
}

fn only(events: &[Event], event_type: EventType) -> &Event {
    let matching: Vec<&Event> = events
        .iter()
        .filter(|e| e.event_type == event_type)
        .collect();
    assert_eq!(matching.len(), 1, "one {event_type:?} in {events:?}");
    matching[0]
}

pub async fn events_every_write_appends_its_events_with_consecutive_ids(store: &dyn Store) {
    let p = published(store).await;
    let shop = p.shop_id;
    let now = instant();
    // Publishing the catalog told every table the menu changed.
    let published_events = ok(store.events_after(shop, 0, limit(500)).await);
    assert_eq!(
        published_events
            .iter()
            .map(|e| (e.event_id, e.event_type, e.session_id, data(e)))
            .collect::<Vec<_>>(),
        [(
            1,
            EventType::MenuChanged,
            None,
            serde_json::json!({"catalogVersion": 1})
        )]
    );
    let mut last = 1;

    let session = open_table(store, shop, "T4").await;
    let events = appended(store, shop, &mut last, &[EventType::SessionOpened]).await;
    assert_eq!(events[0].session_id, Some(session.session_id));
    let opened = data(&events[0]);
    assert_eq!(opened, json_of!(&SessionChanged::from(&session)));
    assert!(
        opened.get("pin").is_none() && !events[0].data.contains(PIN),
        "never the PIN"
    );

    for (item, stock) in [(p.curry, 10), (p.cheese, 10)] {
        ok(store
            .update_inventory(shop, item, set_stock(Some(stock), now), STAFF, now)
            .await);
        let events = appended(store, shop, &mut last, &[EventType::StockChanged]).await;
        assert_eq!(data(&events[0]), stock_event(item, Some(stock), false));
    }
    ok(store
        .update_inventory(shop, p.ramen, mark_sold_out(true, None, now), STAFF, now)
        .await);
    let events = appended(store, shop, &mut last, &[EventType::StockChanged]).await;
    assert_eq!(data(&events[0]), stock_event(p.ramen, None, true));
    let until = now + secs(600);
    ok(store
        .update_inventory(
            shop,
            p.ramen,
            mark_sold_out(true, Some(until), now),
            STAFF,
            now,
        )
        .await);
    let events = appended(store, shop, &mut last, &[EventType::StockChanged]).await;
    assert_eq!(
        data(&events[0]),
        json_of!(&StockChanged {
            item_id: p.ramen,
            stock: None,
            sold_out: true,
            sold_out_until: Some(until),
        })
    );
    ok(store.restock(shop, p.curry, 5, STAFF, now).await);
    let events = appended(store, shop, &mut last, &[EventType::StockChanged]).await;
    assert_eq!(data(&events[0]), stock_event(p.curry, Some(15), false));

    // An order: its stock changes and the order, together.
    let cmd = guest_order(
        session.session_id,
        CLIENT,
        order_of(vec![line(p.curry, 2, &[p.cheese])], "", false),
        now + secs(1),
    );
    placed(store.place(cmd.clone()).await);
    let order = ok(store.get_order(cmd.order_id).await).expect("placed");
    let events = appended(
        store,
        shop,
        &mut last,
        &[
            EventType::StockChanged,
            EventType::StockChanged,
            EventType::OrderPlaced,
        ],
    )
    .await;
    let placed_event = only(&events, EventType::OrderPlaced);
    assert_eq!(placed_event.session_id, Some(session.session_id));
    assert_eq!(data(placed_event), json_of!(&order), "the full order");
    assert_eq!(
        stock_data(&events),
        BTreeMap::from([
            (p.curry, stock_event(p.curry, Some(13), false)),
            (p.cheese, stock_event(p.cheese, Some(8), false)),
        ])
    );

    let accepted = ok(store
        .set_order_status(order.order_id, to(Accepted), now)
        .await);
    let events = appended(store, shop, &mut last, &[EventType::OrderUpdated]).await;
    assert_eq!(events[0].session_id, Some(session.session_id));
    assert_eq!(data(&events[0]), json_of!(&accepted));

    let cancelled = ok(store
        .set_order_status(order.order_id, to(Cancelled), now)
        .await);
    let events = appended(
        store,
        shop,
        &mut last,
        &[
            EventType::StockChanged,
            EventType::StockChanged,
            EventType::OrderUpdated,
        ],
    )
    .await;
    assert_eq!(
        data(only(&events, EventType::OrderUpdated)),
        json_of!(&cancelled)
    );
    assert_eq!(
        stock_data(&events),
        BTreeMap::from([
            (p.curry, stock_event(p.curry, Some(15), false)),
            (p.cheese, stock_event(p.cheese, Some(10), false)),
        ])
    );

    let at = now + secs(5);
    ok(store.checkout(session.session_id, at).await);
    let events = appended(store, shop, &mut last, &[EventType::SessionClosed]).await;
    let closed = Session {
        status: SessionStatus::Closed,
        closed_at: Some(at),
        ..session.clone()
    };
    assert_eq!(events[0].session_id, Some(session.session_id));
    assert_eq!(data(&events[0]), json_of!(&SessionChanged::from(&closed)));
    assert!(!events[0].data.contains(PIN), "never the PIN");

    // Reading back: in id order, from any point, within the limit.
    let all = ok(store.events_after(shop, 0, limit(500)).await);
    assert_eq!(all.len() as i64, last);
    assert_eq!(ok(store.events_after(shop, 0, limit(3)).await), all[..3]);
    assert_eq!(ok(store.events_after(shop, 3, limit(2)).await), all[3..5]);
    assert_eq!(
        ok(store.events_after(shop, last - 1, limit(500)).await),
        all[all.len() - 1..]
    );
    assert_eq!(ok(store.events_after(shop, last, limit(500)).await), vec![]);
    assert_eq!(
        ok(store.events_after(shop, last + 100, limit(500)).await),
        vec![]
    );
}

pub async fn events_refused_and_unchanged_writes_append_nothing(store: &dyn Store) {
    let t = table(store).await;
    let p = &t.menu;
    let shop = p.shop_id;
    let now = instant();
    ok(store
        .update_inventory(shop, p.curry, set_stock(Some(1), now), STAFF, now)
        .await);
    let first = guest_order(
        t.session.session_id,
        CLIENT,
        simple_order(p.ramen, 1),
        now + secs(1),
    );
    placed(store.place(first.clone()).await);
    let order = ok(store.get_order(first.order_id).await).expect("placed");
    let last = ok(store.last_event_id(shop).await);
    let all = ok(store.events_after(shop, 0, limit(500)).await);
    assert_eq!(all.len() as i64, last);

    let later = now + secs(60);
    // Refused orders: short of stock, an unknown item, a duplicate, a
    // cooldown, a wrong PIN; and a replay of the first.
    let short = guest_order(
        t.session.session_id,
        OTHER_CLIENT,
        simple_order(p.curry, 2),
        later,
    );
    assert!(matches!(
        rejected(store.place(short).await),
        Rejection::OutOfStock { .. }
    ));
    let unknown = guest_order(
        t.session.session_id,
        "phone-3",
        simple_order(Uuid::new_v4(), 1),
        later,
    );
    assert!(matches!(
        rejected(store.place(unknown).await),
        Rejection::UnknownMenuItem { .. }
    ));
    let duplicate = guest_order(
        t.session.session_id,
        CLIENT,
        simple_order(p.ramen, 1),
        now + secs(2),
    );
    assert!(matches!(
        rejected(store.place(duplicate).await),
        Rejection::DuplicatePayload { .. }
    ));
    let cooldown = guest_order(
        t.session.session_id,
        CLIENT,
        simple_order(p.ramen, 3),
        now + secs(2),
    );
    assert!(matches!(
        rejected(store.place(cooldown).await),
        Rejection::CooldownActive { .. }
    ));
    let wrong_pin = crate::PlaceOrder {
        caller: guest_with_pin("phone-4", Some(WRONG_PIN)),
        ..guest_order(
            t.session.session_id,
            "phone-4",
            simple_order(p.ramen, 1),
            later,
        )
    };
    assert_eq!(
        rejected(store.place(wrong_pin).await),
        Rejection::PinInvalid
    );
    replayed(store.place(retry(&first, later)).await);

    // Refused or unchanged status changes.
    ok(store
        .set_order_status(order.order_id, to(Placed), later)
        .await);
    assert!(matches!(
        rejected(
            store
                .set_order_status(order.order_id, to_at(Accepted, 7), later)
                .await
        ),
        Rejection::VersionConflict { .. }
    ));
    ok(store
        .set_order_status(order.order_id, to(Ready), later)
        .await);
    let after_ready = ok(store.last_event_id(shop).await);
    assert_eq!(after_ready, last + 1);
    assert!(matches!(
        rejected(
            store
                .set_order_status(order.order_id, to(Cancelled), later)
                .await
        ),
        Rejection::InvalidTransition { .. }
    ));
    ok(store
        .set_order_status(order.order_id, to(Ready), later)
        .await);

    // Refused or unchanged inventory writes and sessions.
    assert!(matches!(
        rejected(store.restock(shop, p.ramen, 1, STAFF, later).await),
        Rejection::StockNotTracked { .. }
    ));
    assert!(matches!(
        rejected(store.restock(shop, p.curry, 0, STAFF, later).await),
        Rejection::Validation(_)
    ));
    assert!(matches!(
        rejected(
            store
                .update_inventory(
                    shop,
                    Uuid::new_v4(),
                    set_stock(Some(1), later),
                    STAFF,
                    later
                )
                .await
        ),
        Rejection::NotFound(_)
    ));
    ok(store
        .update_inventory(shop, p.curry, set_stock(Some(1), later), STAFF, later)
        .await);
    assert!(matches!(
        rejected(store.open_session(session_at(shop, "T4", PIN, later)).await),
        Rejection::TableOccupied { .. }
    ));

    let mut expected = all;
    expected.extend(ok(store.events_after(shop, last, limit(1)).await));
    assert_eq!(
        ok(store.events_after(shop, 0, limit(500)).await),
        expected,
        "only the one real change (to ready) was logged"
    );
    assert_eq!(
        expected.last().map(|e| e.event_type),
        Some(EventType::OrderUpdated)
    );
    assert_eq!(ok(store.last_event_id(shop).await), after_ready);
}

pub async fn events_are_numbered_and_kept_per_shop(store: &dyn Store) {
    let a = table(store).await;
    let b = table(store).await;
    let idle = published(store).await;
    let now = instant();
    for i in 0..3 {
        ramen_order(store, &a, 1, now + secs(i)).await;
        ramen_order(store, &b, 1, now + secs(i)).await;
        ok(store
            .update_inventory(
                b.menu.shop_id,
                b.menu.curry,
                set_stock(Some(i), now),
                STAFF,
                now,
            )
            .await);
    }
    // Each shop's log opens with its catalog's menu.changed.
    for (t, count) in [(&a, 5), (&b, 8)] {
        let shop = t.menu.shop_id;
        let events = ok(store.events_after(shop, 0, limit(500)).await);
        let ids: Vec<i64> = events.iter().map(|e| e.event_id).collect();
        assert_eq!(
            ids,
            (1..=count).collect::<Vec<i64>>(),
            "ids of {shop} count from 1"
        );
        assert_eq!(ok(store.last_event_id(shop).await), count);
        for event in &events {
            let data = data(event);
            match event.event_type {
                EventType::StockChanged => assert_eq!(data["itemId"], t.menu.curry.to_string()),
                EventType::MenuChanged => assert_eq!(data["catalogVersion"], 1),
                _ => {
                    assert_eq!(data["shopId"], shop.to_string(), "{event:?}");
                    assert_eq!(event.session_id, Some(t.session.session_id));
                }
            }
        }
    }
    // The idle shop has only its catalog's.
    assert_eq!(ok(store.last_event_id(idle.shop_id).await), 1);
    let idle_events = ok(store.events_after(idle.shop_id, 0, limit(500)).await);
    assert_eq!(idle_events.len(), 1);
    assert_eq!(idle_events[0].event_type, EventType::MenuChanged);
}

fn order_body(order: &Order) -> StoredResponse {
    StoredResponse {
        status: 200,
        body: format!(
            r#"{{"orderId":"{}","status":"{}","version":{}}}"#,
            order.order_id,
            order.status.as_str(),
            order.version
        ),
        location: None,
    }
}

pub async fn idempotent_status_change_runs_once_and_replays_its_response(store: &dyn Store) {
    let t = table(store).await;
    let p = &t.menu;
    let now = instant();
    ok(store
        .update_inventory(p.shop_id, p.ramen, set_stock(Some(4), now), STAFF, now)
        .await);
    let order = ramen_order(store, &t, 3, now).await;
    let path = format!("/api/v1/orders/{}/status", order.order_id);
    let claim: Claim = staff_claim(&path, "cancelled");
    let calls = Arc::new(AtomicUsize::new(0));
    let write = || {
        let calls = Arc::clone(&calls);
        StaffWrite::SetOrderStatus {
            order_id: order.order_id,
            change: to(Cancelled),
            now,
            render: Box::new(move |order: &Order| {
                calls.fetch_add(1, Ordering::SeqCst);
                order_body(order)
            }),
        }
    };
    let before = ok(store.last_event_id(p.shop_id).await);
    let first = ok(store
        .staff_write(write(), Some(claim.clone()), ordergate_domain::now())
        .await);
    let expected = order_body(&moved(&order, Cancelled, 2));
    assert_eq!(first, Answer::Fresh(expected.clone()));
    for _ in 0..2 {
        assert_eq!(
            ok(store
                .staff_write(write(), Some(claim.clone()), ordergate_domain::now())
                .await),
            Answer::Replayed(expected.clone())
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(stock_of(store, p.shop_id, p.ramen).await, Some(4));
    assert_eq!(cancel_rows(store, p.shop_id).await.len(), 1);
    assert_eq!(
        ok(store.last_event_id(p.shop_id).await),
        before + 2,
        "one stock change and one update, once"
    );

    // A refused change is not stored against its key.
    let other = ramen_order(store, &t, 1, now).await;
    let path = format!("/api/v1/orders/{}/status", other.order_id);
    let claim = staff_claim(&path, "served@9");
    let stale = StaffWrite::SetOrderStatus {
        order_id: other.order_id,
        change: to_at(Served, 9),
        now,
        render: Box::new(order_body),
    };
    assert_eq!(
        rejected(
            store
                .staff_write(stale, Some(claim.clone()), ordergate_domain::now())
                .await
        ),
        Rejection::VersionConflict { current: 1 }
    );
    let corrected = StaffWrite::SetOrderStatus {
        order_id: other.order_id,
        change: to_at(Served, 1),
        now,
        render: Box::new(order_body),
    };
    assert_eq!(
        ok(store
            .staff_write(corrected, Some(claim), ordergate_domain::now())
            .await),
        Answer::Fresh(order_body(&moved(&other, Served, 2)))
    );
}

async fn recall(
    store: &dyn Store,
    order: &Order,
    expected_version: i64,
    now: ordergate_domain::Timestamp,
) -> Result<Order, StoreError> {
    let write = StaffWrite::RecallOrder {
        order_id: order.order_id,
        recall: Recall {
            expected_version,
            window: chrono::Duration::minutes(5),
        },
        now,
        render: Box::new(order_body),
    };
    let answer = store.staff_write(write, None, now).await?;
    let stored = ok(store.get_order(order.order_id).await).expect("the order");
    assert_eq!(
        answer,
        Answer::Fresh(order_body(&stored)),
        "the order as stored"
    );
    Ok(stored)
}

/// A recall undoes the last advance, once, within its window, and only
/// the move its caller saw; a cancel stays cancelled (its stock is back on
/// sale). Each recall is an `order.updated` like any move.
pub async fn recall_undoes_the_last_advance_once_within_the_window(store: &dyn Store) {
    let t = table(store).await;
    let start = instant();
    let at = |s| start + secs(s);
    let order = ramen_order(store, &t, 1, at(0)).await;
    assert_eq!(
        rejected(recall(store, &order, 1, at(1)).await),
        Rejection::NothingToRecall { status: "placed" },
        "never moved"
    );
    ok(store
        .set_order_status(order.order_id, to(Accepted), at(2))
        .await);
    let ready = ok(store
        .set_order_status(order.order_id, to(Ready), at(3))
        .await);
    assert_eq!(
        rejected(recall(store, &order, 2, at(4)).await),
        Rejection::VersionConflict { current: 3 },
        "the bump to ready came after the caller looked"
    );
    let before = ok(store.last_event_id(t.menu.shop_id).await);
    let back = ok(recall(store, &ready, 3, at(4)).await);
    assert_eq!(
        back,
        moved(&order, Accepted, 4),
        "ready goes back to accepted"
    );
    assert_stored(store, &back).await;
    let told = ok(store.events_after(t.menu.shop_id, before, limit(10)).await);
    assert_eq!(
        told.iter().map(|e| e.event_type).collect::<Vec<_>>(),
        [EventType::OrderUpdated]
    );
    assert_eq!(
        rejected(recall(store, &back, 4, at(5)).await),
        Rejection::NothingToRecall { status: "accepted" },
        "a recall is not recalled, nor the move before it"
    );
    // A move made again can be recalled again, within the window only.
    let served = ok(store
        .set_order_status(order.order_id, to(Served), at(10))
        .await);
    assert_eq!(
        rejected(recall(store, &served, 5, at(10 + 301)).await),
        Rejection::RecallExpired { window_secs: 300 }
    );
    assert_eq!(
        ok(recall(store, &served, 5, at(10 + 300)).await),
        moved(&order, Accepted, 6)
    );

    let cancelled = ramen_order(store, &t, 1, at(20)).await;
    let cancelled = ok(store
        .set_order_status(cancelled.order_id, to(Cancelled), at(21))
        .await);
    assert_eq!(
        rejected(recall(store, &cancelled, 2, at(22)).await),
        Rejection::NothingToRecall {
            status: "cancelled"
        }
    );
    assert_stored(store, &cancelled).await;
    let unknown = Order {
        order_id: Uuid::new_v4(),
        ..order
    };
    assert_eq!(
        rejected(recall(store, &unknown, 1, at(23)).await),
        Rejection::NotFound("order")
    );
}

/// The estimated wait reads, for each order ready since a moment, when the
/// kitchen took it (its placing, if never accepted) and when it was ready:
/// later moves keep the first times, a recall or cancel takes them back.
pub async fn kitchen_pace_reads_when_each_recent_order_was_taken_and_ready(store: &dyn Store) {
    let t = table(store).await;
    let shop = t.menu.shop_id;
    let at = |s| instant() + secs(s);
    let mut orders = Vec::new();
    for placed in [0, 1, 2, 3] {
        orders.push(ramen_order(store, &t, 1, at(placed)).await);
    }
    let (taken, straight, recalled, old) = (&orders[0], &orders[1], &orders[2], &orders[3]);
    for (order, moves) in [
        (
            taken,
            vec![(Accepted, 10), (Preparing, 20), (Ready, 300), (Served, 400)],
        ),
        (straight, vec![(Served, 200)]),
        (recalled, vec![(Accepted, 10), (Ready, 100)]),
        (old, vec![(Accepted, 4), (Ready, 5)]),
    ] {
        for (status, second) in moves {
            ok(store
                .set_order_status(order.order_id, to(status), at(second))
                .await);
        }
    }
    let write = StaffWrite::RecallOrder {
        order_id: recalled.order_id,
        recall: Recall {
            expected_version: 3,
            window: chrono::Duration::minutes(5),
        },
        now: at(101),
        render: Box::new(order_body),
    };
    ok(store.staff_write(write, None, at(101)).await);

    let mut pace = ok(store.kitchen_pace(shop, at(6)).await);
    pace.sort();
    assert_eq!(
        pace,
        [(at(1), at(200)), (at(10), at(300))],
        "the old one left the window, the recalled one is not ready"
    );
    assert_eq!(
        ok(store.kitchen_pace(shop, at(5)).await).len(),
        3,
        "ready at the moment counts"
    );
    assert_eq!(
        rejected(store.kitchen_pace(Uuid::new_v4(), at(0)).await),
        Rejection::NotFound("shop")
    );
}

/// Runs `n` copies of `task` at once (released together by a barrier) and
/// collects their results in task order.
async fn at_once<T, F, Fut>(n: usize, task: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
{
    let barrier = Arc::new(Barrier::new(n));
    let mut set = JoinSet::new();
    for i in 0..n {
        let barrier = Arc::clone(&barrier);
        let fut = task(i);
        set.spawn(async move {
            barrier.wait().await;
            (i, fut.await)
        });
    }
    let mut results = Vec::with_capacity(n);
    while let Some(joined) = set.join_next().await {
        results.push(joined.expect("task panicked"));
    }
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

pub async fn concurrent_cancels_of_one_order_restore_its_stock_once(store: Arc<dyn Store>) {
    let t = table(&*store).await;
    let p = &t.menu;
    let now = instant();
    for id in [p.curry, p.cheese] {
        ok(store
            .update_inventory(p.shop_id, id, set_stock(Some(6), now), STAFF, now)
            .await);
    }
    let cmd = staff_order(
        t.session.session_id,
        order_of(vec![line(p.curry, 2, &[p.cheese])], "", false),
        now,
    );
    placed(store.place(cmd.clone()).await);
    let before = ok(store.last_event_id(p.shop_id).await);

    let results = at_once(20, |_| {
        let store = Arc::clone(&store);
        async move {
            store
                .set_order_status(cmd.order_id, to(Cancelled), now)
                .await
        }
    })
    .await;
    for result in results {
        let order = ok(result);
        assert_eq!((order.status, order.version), (Cancelled, 2));
    }
    assert_eq!(stock_of(&*store, p.shop_id, p.curry).await, Some(6));
    assert_eq!(stock_of(&*store, p.shop_id, p.cheese).await, Some(6));
    assert_eq!(cancel_rows(&*store, p.shop_id).await.len(), 2);
    assert_eq!(
        ok(store.last_event_id(p.shop_id).await),
        before + 3,
        "two stock changes and one update"
    );
}

pub async fn concurrent_writes_get_consecutive_event_ids_per_shop(store: Arc<dyn Store>) {
    let a = table(&*store).await;
    let b = table(&*store).await;
    let now = instant();
    for t in [&a, &b] {
        ok(store
            .update_inventory(
                t.menu.shop_id,
                t.menu.ramen,
                set_stock(Some(1000), now),
                STAFF,
                now,
            )
            .await);
    }
    let shops = [
        (a.menu.shop_id, a.session.session_id, a.menu.ramen),
        (b.menu.shop_id, b.session.session_id, b.menu.ramen),
    ];
    let base = [
        ok(store.last_event_id(a.menu.shop_id).await),
        ok(store.last_event_id(b.menu.shop_id).await),
    ];
    // Per shop: 20 orders (a stock change and an order each) and 20 restocks.
    let results = at_once(80, |i| {
        let store = Arc::clone(&store);
        let (shop, session, ramen) = shops[i % 2];
        async move {
            if i % 4 < 2 {
                let cmd = staff_order(session, simple_order(ramen, 1), now);
                store.place(cmd).await.map(|_| ())
            } else {
                store.restock(shop, ramen, 2, STAFF, now).await.map(|_| ())
            }
        }
    })
    .await;
    for result in results {
        match result {
            Ok(()) => {}
            Err(StoreError::Rejected(r)) => panic!("refused: {r:?}"),
            Err(e) => panic!("failed: {e:?}"),
        }
    }
    for (k, (shop, _, ramen)) in shops.into_iter().enumerate() {
        let events = ok(store.events_after(shop, base[k], limit(500)).await);
        let ids: Vec<i64> = events.iter().map(|e| e.event_id).collect();
        assert_eq!(
            ids,
            (base[k] + 1..=base[k] + 60).collect::<Vec<i64>>(),
            "no gap, no reuse"
        );
        // In id order the stock walks from 1000 to its final level, each
        // order's stock change right before the order itself.
        let mut stock = 1000;
        for (i, event) in events.iter().enumerate() {
            if event.event_type == EventType::StockChanged {
                let now = data(event)["stock"].as_i64().expect("tracked");
                let for_order = events
                    .get(i + 1)
                    .is_some_and(|e| e.event_type == EventType::OrderPlaced);
                assert_eq!(
                    now,
                    if for_order { stock - 1 } else { stock + 2 },
                    "{event:?}"
                );
                stock = now;
            } else {
                assert_eq!(event.event_type, EventType::OrderPlaced);
                assert_eq!(events[i - 1].event_type, EventType::StockChanged);
            }
        }
        assert_eq!(stock, 1000 - 20 + 40);
        assert_eq!(stock_of(&*store, shop, ramen).await, Some(stock));
    }
}
