//! A shop's orders that arrive together are placed together (one
//! transaction for many tables), and every rule holds for each of them as
//! if it had been placed alone.

mod support;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use ordergate_domain::Rejection;
use ordergate_domain::events::EventType;
use ordergate_domain::paging::Limit;
use ordergate_domain::session::Session;
use ordergate_store::{Claim, PlaceOrder, Store};
use sqlx::{Connection, PgConnection};
use support::{Schema, curry_shop, guest_order, open_table};
use tokio::task::JoinSet;
use uuid::Uuid;

/// `count` tables of the shop, each known to the store by its route, as
/// the server's first call for an order (`new_order_id`) makes it.
async fn seated_tables(store: &dyn Store, shop_id: Uuid, count: usize) -> Vec<Session> {
    let mut tables = Vec::with_capacity(count);
    for i in 0..count {
        let table = open_table(store, shop_id, &format!("T{i}")).await;
        store.new_order_id(table.session_id).await.expect("a route");
        tables.push(table);
    }
    tables
}

/// Places every order at once and returns the outcomes in their order.
async fn place_at_once(
    store: &Arc<dyn Store>,
    orders: Vec<PlaceOrder>,
) -> Vec<Result<ordergate_store::Placed, Rejection>> {
    let mut set = JoinSet::new();
    for (i, order) in orders.into_iter().enumerate() {
        let store = Arc::clone(store);
        set.spawn(async move { (i, store.place_order(order).await) });
    }
    let mut outcomes: Vec<_> = set
        .join_all()
        .await
        .into_iter()
        .map(|(i, ordered)| (i, ordered.expect("an answer").outcome))
        .collect();
    outcomes.sort_by_key(|(i, _)| *i);
    outcomes.into_iter().map(|(_, outcome)| outcome).collect()
}

/// `order` with its one line `quantity` times over: another cart.
fn with_quantity(mut order: PlaceOrder, quantity: i64) -> PlaceOrder {
    let cart = support::cart(order.order.lines[0].menu_item_id, quantity);
    let claim = order.claim.take().expect("a guest order has a key");
    order.claim = Some(Claim {
        fingerprint: cart.fingerprint.clone(),
        ..claim
    });
    order.order = cart;
    order
}

async fn connect(schema: &Schema) -> PgConnection {
    PgConnection::connect_with(&schema.options())
        .await
        .expect("connect a second client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rush_at_one_shop_shares_transactions_and_keeps_every_rule() {
    let Some(url) = support::database_url() else {
        return;
    };
    let schema = Schema::create(&url).await;
    let store: Arc<dyn Store> = Arc::new(schema.store().await);
    let (shop_id, curry) = curry_shop(&*store, 100).await;
    let tables = seated_tables(&*store, shop_id, 64).await;

    // Three waves of an order at every table, and in each wave eight
    // requests sent twice (a double tap): 100 units for 192 orders.
    let mut placed = HashSet::new();
    let (mut short, mut replayed) = (0, 0);
    for wave in 0..3 {
        let mut orders: Vec<PlaceOrder> = tables
            .iter()
            .map(|t| {
                guest_order(
                    t.session_id,
                    &format!("phone-{wave}"),
                    curry,
                    Duration::from_secs(10),
                )
            })
            .collect();
        orders.extend(orders[..8].to_vec());
        let outcomes = place_at_once(&store, orders).await;
        for (i, outcome) in outcomes.iter().enumerate() {
            match outcome {
                Ok(p) if !p.replayed => assert!(placed.insert(p.order_id), "placed twice"),
                Ok(p) => {
                    let first = match &outcomes[i % 64] {
                        Ok(first) => first.order_id,
                        other => panic!("a replay of a request that failed: {other:?}"),
                    };
                    assert_eq!(p.order_id, first, "a double tap replays its first answer");
                }
                Err(Rejection::OutOfStock { .. }) => short += 1,
                other => panic!("unexpected outcome {other:?}"),
            }
        }
        let taps = outcomes[64..]
            .iter()
            .zip(&outcomes[..8])
            .filter(|(second, first)| second.is_ok() && first.is_ok())
            .count();
        let replays = outcomes.iter().flatten().filter(|p| p.replayed).count();
        assert_eq!(
            replays, taps,
            "wave {wave}: each double tap of a placed order replays"
        );
        replayed += replays;
    }
    assert_eq!(placed.len(), 100, "every unit sold, none twice");
    assert_eq!(
        placed.len() + replayed + short,
        3 * (64 + 8),
        "the rest refused as out of stock"
    );

    let orders = store
        .shop_orders(shop_id, vec![], Limit::MAX_PAGE)
        .await
        .expect("orders");
    assert_eq!(orders.len(), 100);
    let mut tickets: Vec<i64> = orders.iter().map(|o| o.ticket_number).collect();
    tickets.sort_unstable();
    assert_eq!(
        tickets,
        (1..=100).collect::<Vec<_>>(),
        "tickets 1..=100, each once"
    );
    let stock = store
        .list_inventory(shop_id)
        .await
        .expect("inventory")
        .into_iter()
        .find(|i| i.item_id == curry)
        .and_then(|i| i.level.stock);
    assert_eq!(stock, Some(0));
    let log = store
        .inventory_log(shop_id, Limit::MAX_PAGE)
        .await
        .expect("log");
    assert_eq!(
        log.iter().map(|e| e.delta).sum::<i64>(),
        0,
        "set 100, took 100"
    );

    // Every placed order once in the kitchen's log, ids without a gap, and
    // the stock the events report falling with every id: ids follow the
    // order the writes were made in.
    let events = store
        .events_after(shop_id, 0, Limit::MAX_PAGE)
        .await
        .expect("events");
    let ids: Vec<i64> = events.iter().map(|e| e.event_id).collect();
    assert_eq!(ids, (1..=ids.len() as i64).collect::<Vec<_>>());
    let mut kitchen = HashMap::new();
    for event in events
        .iter()
        .filter(|e| e.event_type == EventType::OrderPlaced)
    {
        let data: serde_json::Value = serde_json::from_str(&event.data).expect("JSON");
        let order_id: Uuid = data["orderId"]
            .as_str()
            .expect("an id")
            .parse()
            .expect("a UUID");
        *kitchen.entry(order_id).or_insert(0) += 1;
    }
    assert_eq!(kitchen.len(), 100);
    assert!(kitchen.iter().all(|(id, n)| *n == 1 && placed.contains(id)));
    let stocks: Vec<i64> = events
        .iter()
        .filter(|e| e.event_type == EventType::StockChanged)
        .map(|e| {
            let data: serde_json::Value = serde_json::from_str(&e.data).expect("JSON");
            data["stock"].as_i64().expect("tracked")
        })
        .collect();
    assert_eq!(stocks, (0..=100).rev().collect::<Vec<_>>());

    // One audit row for each request.
    let audit = store
        .audit_log(shop_id, Limit::MAX_PAGE)
        .await
        .expect("audit");
    assert_eq!(audit.len(), 3 * (64 + 8));

    // And the orders did share transactions: rows a transaction wrote carry
    // its id (xmin).
    let mut conn = connect(&schema).await;
    let (rows, transactions): (i64, i64) = sqlx::query_as(
        "select count(*), count(distinct xmin::text) from orders where shop_id = $1",
    )
    .bind(shop_id)
    .fetch_one(&mut conn)
    .await
    .expect("count the orders' transactions");
    assert_eq!(rows, 100);
    assert!(
        transactions < rows / 2,
        "{rows} orders in {transactions} transactions: placed one by one"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_order_whose_table_is_held_elsewhere_waits_alone_and_its_shop_goes_on() {
    let Some(url) = support::database_url() else {
        return;
    };
    let schema = Schema::create(&url).await;
    let store: Arc<dyn Store> = Arc::new(schema.store().await);
    let (shop_id, curry) = curry_shop(&*store, 1000).await;
    let tables = seated_tables(&*store, shop_id, 21).await;

    // Another client holds the first table (as a checkout on another node
    // would, for as long as it takes).
    let mut other = connect(&schema).await;
    let mut held = other.begin().await.expect("begin");
    sqlx::query("select 1 from table_sessions where session_id = $1 for update")
        .bind(tables[0].session_id)
        .execute(&mut *held)
        .await
        .expect("lock the session");

    let waiting = {
        let store = Arc::clone(&store);
        let cmd = guest_order(
            tables[0].session_id,
            "phone-0",
            curry,
            Duration::from_secs(20),
        );
        tokio::spawn(async move { store.place_order(cmd).await })
    };
    for _ in 0..3 {
        let orders = tables[1..]
            .iter()
            .map(|t| guest_order(t.session_id, "phone", curry, Duration::from_secs(20)))
            .collect();
        let others = tokio::time::timeout(Duration::from_secs(10), place_at_once(&store, orders))
            .await
            .expect("the other tables' orders do not wait for the held one");
        assert!(others.iter().all(|o| matches!(o, Ok(p) if !p.replayed)));
    }
    assert!(
        !waiting.is_finished(),
        "the held table's order waits for it"
    );

    held.rollback().await.expect("release the table");
    let ordered = waiting.await.expect("task").expect("an answer");
    assert!(matches!(ordered.outcome, Ok(p) if !p.replayed));
    let orders = store
        .shop_orders(shop_id, vec![], Limit::MAX_PAGE)
        .await
        .expect("orders");
    assert_eq!(orders.len(), 61);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_guest_rules_judge_each_order_of_a_turn_by_its_own_table() {
    let Some(url) = support::database_url() else {
        return;
    };
    let schema = Schema::create(&url).await;
    let store: Arc<dyn Store> = Arc::new(schema.store().await);
    let (shop_id, curry) = curry_shop(&*store, 1000).await;
    let tables = seated_tables(&*store, shop_id, 40).await;
    let with_rules = |mut order: PlaceOrder| {
        order.rules.duplicate_window = chrono::Duration::seconds(30);
        order.rules.cooldown = chrono::Duration::seconds(60);
        order
    };

    // A first order at every table, then at once: the same cart again
    // from the same phone at even tables (a duplicate), another cart at odd
    // ones (too soon after the first), and at the last eight tables the
    // same cart from another phone (neither).
    let first = tables
        .iter()
        .map(|t| {
            with_rules(guest_order(
                t.session_id,
                "phone-a",
                curry,
                Duration::from_secs(10),
            ))
        })
        .collect();
    let first = place_at_once(&store, first).await;
    let first: Vec<Uuid> = first
        .into_iter()
        .map(|o| o.expect("the first orders are placed").order_id)
        .collect();
    let second = tables
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let order = match i {
                32.. => guest_order(t.session_id, "phone-b", curry, Duration::from_secs(10)),
                _ if i % 2 == 0 => {
                    guest_order(t.session_id, "phone-a", curry, Duration::from_secs(10))
                }
                _ => with_quantity(
                    guest_order(t.session_id, "phone-a", curry, Duration::from_secs(10)),
                    2,
                ),
            };
            with_rules(order)
        })
        .collect();
    let second = place_at_once(&store, second).await;
    for (i, outcome) in second.iter().enumerate() {
        match (i, outcome) {
            (32.., Ok(p)) => assert!(!p.replayed),
            (_, Err(Rejection::DuplicatePayload { original })) if i % 2 == 0 => {
                assert_eq!(original.order_id, first[i], "table {i}'s own first order");
            }
            (_, Err(Rejection::CooldownActive { .. })) if i % 2 == 1 && i < 32 => {}
            other => panic!("table {i}: unexpected {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn orders_either_side_of_midnight_are_numbered_in_their_own_days() {
    let Some(url) = support::database_url() else {
        return;
    };
    let schema = Schema::create(&url).await;
    let store: Arc<dyn Store> = Arc::new(schema.store().await);
    // The shop is in Tokyo: its day turns at 15:00 UTC.
    let (shop_id, curry) = curry_shop(&*store, 1000).await;
    let tables = seated_tables(&*store, shop_id, 32).await;
    let before: ordergate_domain::Timestamp = "2026-12-01T14:59:59.900Z".parse().unwrap();
    let after: ordergate_domain::Timestamp = "2026-12-01T15:00:00.100Z".parse().unwrap();
    let orders = tables
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut order = guest_order(t.session_id, "phone", curry, Duration::from_secs(10));
            // Runs of days, so that a turn holds both.
            order.now = if (i / 3) % 2 == 0 { before } else { after };
            order
        })
        .collect();
    let outcomes = place_at_once(&store, orders).await;
    assert!(outcomes.iter().all(|o| matches!(o, Ok(p) if !p.replayed)));
    let mut days: HashMap<bool, Vec<i64>> = HashMap::new();
    for order in store
        .shop_orders(shop_id, vec![], Limit::MAX_PAGE)
        .await
        .expect("orders")
    {
        days.entry(order.created_at < after)
            .or_default()
            .push(order.ticket_number);
    }
    for (day_before, mut tickets) in days {
        tickets.sort_unstable();
        let count = tickets.len() as i64;
        assert_eq!(
            tickets,
            (1..=count).collect::<Vec<_>>(),
            "the day {} midnight counts from 1",
            if day_before { "before" } else { "after" }
        );
    }
}
