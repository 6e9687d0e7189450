//! Concurrency checks.

use std::sync::Arc;

use ordergate_domain::Rejection;
use ordergate_domain::inventory::{LogEntry, Operation};
use ordergate_domain::order::Shortage;
use tokio::sync::Barrier;
use tokio::task::JoinSet;

use crate::{Placed, Store, StoreError};
use ordergate_domain::session::PinOutcome;

use super::helpers::*;

/// Runs `n` copies of `task` on the runtime's worker threads, released
/// together by a barrier, and collects their results in task order.
pub(super) async fn all_at_once<T, F, Fut>(n: usize, task: F) -> Vec<T>
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
    let mut results: Vec<(usize, T)> = Vec::with_capacity(n);
    while let Some(joined) = set.join_next().await {
        results.push(joined.expect("task panicked"));
    }
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

pub async fn concurrent_opens_of_one_table_admit_exactly_one(store: Arc<dyn Store>) {
    let shop = new_shop(&*store).await;
    let opened_at = instant();
    let results = all_at_once(20, |i| {
        let store = Arc::clone(&store);
        let session = session_at(shop.shop_id, "T1", &format!("{i:06}"), opened_at);
        async move { store.open_session(session).await }
    })
    .await;

    let mut winners = Vec::new();
    let mut occupied = 0;
    for result in results {
        match result {
            Ok(session) => winners.push(session),
            Err(StoreError::Rejected(Rejection::TableOccupied { table_label })) => {
                assert_eq!(table_label, "T1");
                occupied += 1;
            }
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one open wins");
    assert_eq!(occupied, 19);
    assert_eq!(
        ok(store.list_sessions(shop.shop_id, None, limit(100)).await),
        winners,
        "only the winner was stored"
    );
}

pub async fn concurrent_wrong_pins_lock_after_exactly_max_failures(store: Arc<dyn Store>) {
    let session = pin_session(&*store).await;
    let rule = policy(5, secs(300));
    let now = instant();
    let results = all_at_once(20, |_| {
        let store = Arc::clone(&store);
        async move {
            store
                .verify_pin(session.session_id, Some(WRONG_PIN), rule, now)
                .await
        }
    })
    .await;

    let until = now + secs(300);
    let mut invalid = 0;
    let mut locked = 0;
    for result in results {
        match ok(result) {
            PinOutcome::Invalid => invalid += 1,
            PinOutcome::Locked { until: at } => {
                assert_eq!(at, until);
                locked += 1;
            }
            other => panic!("a wrong PIN gave {other:?}"),
        }
    }
    assert_eq!((invalid, locked), (5, 15), "(invalid, locked)");
    assert_eq!(
        ok(store
            .verify_pin(session.session_id, Some(PIN), rule, now)
            .await),
        PinOutcome::Locked { until }
    );
}

pub async fn concurrent_restocks_are_all_counted(store: Arc<dyn Store>) {
    let p = published(&*store).await;
    let now = instant();
    let start = ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(Some(0), now), STAFF, now)
        .await);
    assert_eq!(start.version, 2);

    let results = all_at_once(50, |i| {
        let store = Arc::clone(&store);
        let shop_id = p.shop_id;
        let curry = p.curry;
        async move {
            store
                .restock(shop_id, curry, 1, &format!("staff:{i}"), now)
                .await
        }
    })
    .await;
    let mut seen: Vec<i64> = results
        .into_iter()
        .map(|r| ok(r).level.stock.expect("tracked"))
        .collect();
    seen.sort_unstable();
    assert_eq!(
        seen,
        (1..=50).collect::<Vec<_>>(),
        "every restock saw a different stock"
    );

    let curry = inventory_of(&*store, p.shop_id, p.curry).await;
    assert_eq!(curry.level.stock, Some(50));
    assert_eq!(curry.version, 52, "one version per change");

    let log = ok(store.inventory_log(p.shop_id, limit(500)).await);
    assert_eq!(log.len(), 51, "one set row and fifty restock rows");
    let restocks: Vec<&LogEntry> = log
        .iter()
        .filter(|e| e.operation == Operation::Restock)
        .collect();
    assert_eq!(restocks.len(), 50);
    let mut afters: Vec<i64> = restocks
        .iter()
        .map(|e| {
            assert_eq!(e.delta, 1);
            assert_eq!(e.stock_before.map(|s| s + 1), e.stock_after);
            e.stock_after.expect("tracked")
        })
        .collect();
    // Newest first: the stock after each row falls as we read down.
    assert!(afters.windows(2).all(|w| w[0] > w[1]), "{afters:?}");
    afters.sort_unstable();
    assert_eq!(afters, (1..=50).collect::<Vec<_>>());
    let mut actors: Vec<&str> = restocks.iter().map(|e| e.actor.as_str()).collect();
    actors.sort_unstable();
    actors.dedup();
    assert_eq!(actors.len(), 50, "each restock logged under its own actor");
}

pub async fn concurrent_requests_with_one_key_place_one_order(store: Arc<dyn Store>) {
    let Table { menu: p, session } = table(&*store).await;
    let t = instant();
    ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(Some(10), t), STAFF, t)
        .await);
    let request = guest_order(
        session.session_id,
        CLIENT,
        simple_order(p.curry, 1),
        t + secs(1),
    );
    let results = all_at_once(30, |_| {
        let store = Arc::clone(&store);
        let cmd = retry(&request, request.now);
        async move { store.place(cmd).await }
    })
    .await;

    let answers: Vec<Placed> = results
        .into_iter()
        .enumerate()
        .map(|(i, result)| match result {
            Ok(answer) => answer,
            Err(e) => panic!("request {i} failed: {e:?}"),
        })
        .collect();
    let fresh: Vec<&Placed> = answers.iter().filter(|a| !a.replayed).collect();
    assert_eq!(fresh.len(), 1, "exactly one request placed the order");
    let winner = fresh[0].clone();
    for answer in &answers {
        assert_eq!(answer.order_id, winner.order_id);
        if answer.replayed {
            assert_eq!(answer.response, winner.response.clone().replayed());
        }
    }
    assert_eq!(
        order_ids(&ok(store
            .session_orders(session.session_id, limit(100))
            .await)),
        [winner.order_id]
    );
    assert_eq!(stock_of(&*store, p.shop_id, p.curry).await, Some(9));
    let audit = ok(store.audit_log(p.shop_id, limit(100)).await);
    let count = |code: &str| audit.iter().filter(|e| e.code.as_str() == code).count();
    assert_eq!(
        (audit.len(), count("ACCEPTED"), count("REPLAYED")),
        (30, 1, 29)
    );
}

pub async fn concurrent_orders_for_scarce_stock_never_oversell(store: Arc<dyn Store>) {
    let Table { menu: p, session } = table(&*store).await;
    let t = instant();
    ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(Some(10), t), STAFF, t)
        .await);
    let results = all_at_once(25, |i| {
        let store = Arc::clone(&store);
        let cmd = guest_order(
            session.session_id,
            &format!("phone-{i}"),
            simple_order(p.curry, 1),
            t + secs(1),
        );
        async move { store.place(cmd).await }
    })
    .await;

    let sold_out = Rejection::OutOfStock {
        shortages: vec![Shortage {
            item_id: p.curry,
            requested: 1,
            available: 0,
        }],
    };
    let mut placed = Vec::new();
    let mut refused = 0;
    for result in results {
        match result {
            Ok(answer) => {
                assert!(!answer.replayed);
                placed.push(answer.order_id);
            }
            Err(StoreError::Rejected(rejection)) => {
                assert_eq!(rejection, sold_out);
                refused += 1;
            }
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    assert_eq!((placed.len(), refused), (10, 15), "(placed, out of stock)");
    assert_eq!(stock_of(&*store, p.shop_id, p.curry).await, Some(0));

    let orders = ok(store.session_orders(session.session_id, limit(100)).await);
    let mut stored = order_ids(&orders);
    stored.sort_unstable();
    placed.sort_unstable();
    assert_eq!(stored, placed);
    let mut tickets: Vec<i64> = orders.iter().map(|o| o.ticket_number).collect();
    tickets.sort_unstable();
    assert_eq!(tickets, (1..=10).collect::<Vec<_>>());

    let log = ok(store.inventory_log(p.shop_id, limit(100)).await);
    let taken: Vec<&LogEntry> = log
        .iter()
        .filter(|e| e.operation == Operation::Order)
        .collect();
    assert_eq!(taken.len(), 10);
    let mut afters: Vec<i64> = taken
        .iter()
        .map(|e| {
            assert_eq!(e.delta, -1);
            e.stock_after.expect("tracked")
        })
        .collect();
    afters.sort_unstable();
    assert_eq!(afters, (0..10).collect::<Vec<_>>());
    assert_eq!(log.iter().map(|e| e.delta).sum::<i64>(), 0);
}

pub async fn concurrent_duplicates_from_one_client_place_one_order(store: Arc<dyn Store>) {
    let Table { menu: p, session } = table(&*store).await;
    let t = instant() + secs(1);
    let results = all_at_once(20, |_| {
        let store = Arc::clone(&store);
        // A fresh key on every tap: only the duplicate rule stops them.
        let cmd = guest_order(session.session_id, CLIENT, simple_order(p.curry, 1), t);
        async move { store.place(cmd).await }
    })
    .await;

    let mut winners = Vec::new();
    let mut originals = Vec::new();
    for result in results {
        match result {
            Ok(answer) => winners.push(answer),
            Err(StoreError::Rejected(Rejection::DuplicatePayload { original })) => {
                originals.push(*original)
            }
            Err(other) => panic!("unexpected failure: {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one order passes the rule");
    assert_eq!(originals.len(), 19);
    let order = ok(store.get_order(winners[0].order_id).await).expect("placed");
    assert!(originals.iter().all(|o| *o == order));
    assert_eq!(
        order_ids(&ok(store
            .session_orders(session.session_id, limit(100))
            .await)),
        [order.order_id]
    );
}
