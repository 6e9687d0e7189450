//! Several nodes on one database: the rules hold across processes, and
//! changes committed on one node reach the others.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ordergate_domain::Rejection;
use ordergate_domain::audit::AuditEntry;
use ordergate_domain::code::ErrorCode;
use ordergate_domain::paging::Limit;
use ordergate_store::{Change, Store};
use sqlx::{Connection, PgConnection};
use support::{Schema, curry_shop, guest_order, open_table};
use tokio::task::JoinSet;

/// A listener that remembers what it heard.
fn recorder(store: &dyn Store) -> Arc<Mutex<Vec<Change>>> {
    let heard = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&heard);
    store.set_change_listener(Arc::new(move |change| into.lock().unwrap().push(change)));
    heard
}

async fn hears(heard: &Mutex<Vec<Change>>, change: Change) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if heard.lock().unwrap().contains(&change) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Two nodes on one fresh schema (kept while the schema lives), or `None`
/// (skipped) without a test database.
async fn two_nodes() -> Option<(Schema, Vec<Arc<dyn Store>>)> {
    let url = support::database_url()?;
    let schema = Schema::create(&url).await;
    let nodes: Vec<Arc<dyn Store>> = vec![
        Arc::new(schema.store().await),
        Arc::new(schema.store().await),
    ];
    Some((schema, nodes))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_place_one_order_per_key_and_never_oversell() {
    let Some((_schema, nodes)) = two_nodes().await else {
        return;
    };
    let (shop_id, curry) = curry_shop(&*nodes[0], 10).await;

    // One request sent to both nodes, many times: one order.
    let table = open_table(&*nodes[0], shop_id, "T0").await;
    let request = guest_order(table.session_id, "phone-0", curry, Duration::from_secs(5));
    let mut set = JoinSet::new();
    for i in 0..20 {
        let node = Arc::clone(&nodes[i % 2]);
        let cmd = ordergate_store::PlaceOrder {
            order_id: uuid::Uuid::now_v7(),
            ..request.clone()
        };
        set.spawn(async move { node.place_order(cmd).await });
    }
    let mut placed = Vec::new();
    while let Some(joined) = set.join_next().await {
        let outcome = joined.expect("task").expect("an answer").outcome;
        placed.push(outcome.expect("placed or replayed"));
    }
    assert_eq!(placed.iter().filter(|p| !p.replayed).count(), 1);
    let order_id = placed[0].order_id;
    assert!(placed.iter().all(|p| p.order_id == order_id));

    // Twenty tables, nine units left, orders on both nodes at once.
    let mut tables = Vec::new();
    for i in 1..=20 {
        tables.push(open_table(&*nodes[i % 2], shop_id, &format!("T{i}")).await);
    }
    let mut set = JoinSet::new();
    for (i, table) in tables.iter().enumerate() {
        let node = Arc::clone(&nodes[i % 2]);
        let cmd = guest_order(
            table.session_id,
            &format!("phone-{i}"),
            curry,
            Duration::from_secs(5),
        );
        set.spawn(async move { node.place_order(cmd).await });
    }
    let (mut fresh, mut short) = (0, 0);
    while let Some(joined) = set.join_next().await {
        match joined.expect("task").expect("an answer").outcome {
            Ok(p) if !p.replayed => fresh += 1,
            Err(Rejection::OutOfStock { .. }) => short += 1,
            other => panic!("unexpected outcome {other:?}"),
        }
    }
    assert_eq!((fresh, short), (9, 11));
    let stock = nodes[1]
        .list_inventory(shop_id)
        .await
        .expect("inventory")
        .into_iter()
        .find(|i| i.item_id == curry)
        .and_then(|i| i.level.stock);
    assert_eq!(stock, Some(0));
    let log = nodes[0]
        .inventory_log(shop_id, Limit::MAX_PAGE)
        .await
        .expect("log");
    assert_eq!(
        log.iter().map(|e| e.delta).sum::<i64>(),
        0,
        "set 10, took 10"
    );

    // Tickets 1..=10, each once.
    let mut tickets: Vec<i64> = nodes[0]
        .shop_orders(shop_id, vec![], Limit::MAX_PAGE)
        .await
        .expect("orders")
        .iter()
        .map(|o| o.ticket_number)
        .collect();
    tickets.sort_unstable();
    assert_eq!(tickets, (1..=10).collect::<Vec<_>>());

    // Event ids: 1, 2, 3, ... with no gap, and the stock they report falls
    // with every id: ids follow commit order.
    let events = nodes[1]
        .events_after(shop_id, 0, Limit::MAX_PAGE)
        .await
        .expect("events");
    let ids: Vec<i64> = events.iter().map(|e| e.event_id).collect();
    assert_eq!(ids, (1..=ids.len() as i64).collect::<Vec<_>>());
    let stocks: Vec<i64> = events
        .iter()
        .filter(|e| e.event_type == ordergate_domain::events::EventType::StockChanged)
        .map(|e| {
            let data: serde_json::Value = serde_json::from_str(&e.data).expect("JSON");
            data["stock"].as_i64().expect("tracked")
        })
        .collect();
    assert_eq!(stocks, (0..=10).rev().collect::<Vec<_>>());
    assert_eq!(
        nodes[0].last_event_id(shop_id).await.expect("last id"),
        ids.len() as i64
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_are_heard_here_before_the_write_returns_and_on_other_nodes_soon() {
    let Some(url) = support::database_url() else {
        return;
    };
    let schema = Schema::create(&url).await;
    let here = schema.store().await;
    let there = schema.store().await;
    let heard_here = recorder(&here);
    let heard_there = recorder(&there);

    let (shop_id, curry) = curry_shop(&here, 3).await;
    {
        let heard = heard_here.lock().unwrap();
        for change in [
            Change::Catalog(shop_id),
            Change::Stock(shop_id),
            Change::Events(shop_id),
        ] {
            assert!(heard.contains(&change), "{change:?} not heard in {heard:?}");
        }
    }
    for change in [
        Change::Catalog(shop_id),
        Change::Stock(shop_id),
        Change::Events(shop_id),
    ] {
        assert!(
            hears(&heard_there, change).await,
            "{change:?} never arrived"
        );
    }

    // A refused write announces nothing (in a shop nothing else announced).
    let quiet = ordergate_domain::shop::Shop {
        shop_id: uuid::Uuid::new_v4(),
        name: "Kissa".into(),
        currency: "JPY".into(),
        timezone: ordergate_domain::shop::ShopTimeZone::UTC,
        languages: Default::default(),
        kitchen_warn_minutes: ordergate_domain::shop::KITCHEN_WARN_MINUTES,
        kitchen_late_minutes: ordergate_domain::shop::KITCHEN_LATE_MINUTES,
        created_at: ordergate_domain::now(),
    };
    here.create_shop(quiet.clone()).await.expect("create");
    let now = ordergate_domain::now();
    let refused = here.restock(quiet.shop_id, uuid::Uuid::new_v4(), 1, "staff", now);
    assert!(refused.await.is_err());
    let of_quiet = |c: &Change| matches!(c, Change::Events(s) | Change::Stock(s) | Change::Catalog(s) if *s == quiet.shop_id);
    assert!(!heard_here.lock().unwrap().iter().any(of_quiet));

    // The other way round.
    let table = open_table(&there, shop_id, "T1").await;
    let cmd = guest_order(table.session_id, "phone-1", curry, Duration::from_secs(5));
    there.place_order(cmd).await.expect("placed");
    assert!(hears(&heard_here, Change::Events(shop_id)).await);
    assert!(hears(&heard_here, Change::Stock(shop_id)).await);
    assert!(
        !heard_here.lock().unwrap().contains(&Change::Everything),
        "no reconnect happened"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_that_lost_its_connection_reconnects_and_reloads_everything() {
    let Some(url) = support::database_url() else {
        return;
    };
    let schema = Schema::create(&url).await;
    let here = schema.store().await;
    let name = format!("listener-{}", schema.name);
    let there =
        ordergate_store_postgres::PgStore::connect_with(schema.options().application_name(&name))
            .await
            .expect("connect");
    let heard = recorder(&there);

    // Cut the listening connection, as a network fault or restart would.
    let mut admin = PgConnection::connect_with(&schema.options())
        .await
        .expect("connect");
    let cut: Vec<bool> = sqlx::query_scalar(
        "select pg_terminate_backend(pid) from pg_stat_activity
         where application_name = $1 and query ilike 'listen%'",
    )
    .bind(&name)
    .fetch_all(&mut admin)
    .await
    .expect("terminate the listener");
    let _ = admin.close().await;
    assert_eq!(cut, [true], "exactly one listening connection");

    assert!(
        hears(&heard, Change::Everything).await,
        "no reload after the reconnect"
    );
    // And it listens again.
    let (shop_id, _) = curry_shop(&here, 1).await;
    assert!(hears(&heard, Change::Catalog(shop_id)).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_whose_doorbell_never_rang_is_caught_up() {
    let Some(url) = support::database_url() else {
        return;
    };
    let schema = Schema::create(&url).await;
    let node = schema.store().await;
    let heard = recorder(&node);
    let (shop_id, _) = curry_shop(&node, 10).await;
    // Let the setup's own doorbells arrive, then forget them.
    tokio::time::sleep(Duration::from_millis(300)).await;
    heard.lock().unwrap().clear();

    // What another node leaves when it dies between a commit and its ring:
    // an event in the shop's log that no notification announced.
    let mut other = PgConnection::connect_with(&schema.options()).await.unwrap();
    sqlx::query(
        "with counter as (
             update event_counters set last_event_id = last_event_id + 1
             where shop_id = $1 returning last_event_id
         )
         insert into events (shop_id, event_id, event_type, session_id, data, created_at)
         select $1, last_event_id, 'stock.changed', null, '{}', now() from counter",
    )
    .bind(shop_id)
    .execute(&mut other)
    .await
    .unwrap();
    let committed = Instant::now();
    for change in [
        Change::Events(shop_id),
        Change::Stock(shop_id),
        Change::Catalog(shop_id),
    ] {
        assert!(
            hears(&heard, change).await,
            "{change:?} was never caught up"
        );
    }
    // Two catch-up reads of 400 ms; the rest is slack for a busy machine.
    assert!(
        committed.elapsed() < Duration::from_secs(3),
        "caught up only after {:?}",
        committed.elapsed()
    );

    // An event announced as usual is not announced a second time by the catch-up.
    tokio::time::sleep(Duration::from_millis(100)).await;
    heard.lock().unwrap().clear();
    let table = open_table(&node, shop_id, "T1").await;
    assert!(hears(&heard, Change::Events(shop_id)).await);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let heard = heard.lock().unwrap().clone();
    assert!(
        !heard.contains(&Change::Catalog(shop_id)),
        "the catch-up announced an event the doorbell had: {heard:?} (table {})",
        table.session_id
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn audit_rows_recorded_at_once_on_two_nodes_are_each_filed_once_in_order() {
    let Some((_schema, nodes)) = two_nodes().await else {
        return;
    };
    let (shop_id, _) = curry_shop(&*nodes[0], 1).await;
    let table = open_table(&*nodes[0], shop_id, "T1").await;
    const CALLERS: usize = 40;
    const ROWS_EACH: usize = 5;
    let mut set = JoinSet::new();
    for caller in 0..CALLERS {
        let node = Arc::clone(&nodes[caller % 2]);
        let session_id = table.session_id;
        set.spawn(async move {
            for row in 0..ROWS_EACH {
                // Every fifth caller names a session nobody knows: no row.
                let session = if caller % 5 == 4 {
                    uuid::Uuid::new_v4()
                } else {
                    session_id
                };
                let entry = AuditEntry::refused(
                    chrono::Utc::now(),
                    session,
                    &format!("{caller}-{row}"),
                    None,
                    ErrorCode::ValidationFailed,
                );
                node.record_audit(entry).await.expect("filed");
            }
        });
    }
    while let Some(joined) = set.join_next().await {
        joined.expect("caller");
    }
    let rows = nodes[1].audit_log(shop_id, Limit::MAX_PAGE).await.unwrap();
    let filed: Vec<&str> = rows.iter().map(|r| r.request_id.as_str()).collect();
    assert_eq!(filed.len(), CALLERS / 5 * 4 * ROWS_EACH, "{filed:?}");
    for caller in (0..CALLERS).filter(|c| c % 5 != 4) {
        // Newest first: each caller's rows appear in the reverse of the
        // order it recorded them, once each.
        let its: Vec<&str> = filed
            .iter()
            .copied()
            .filter(|id| id.split('-').next() == Some(&caller.to_string()))
            .collect();
        let expected: Vec<String> = (0..ROWS_EACH)
            .rev()
            .map(|r| format!("{caller}-{r}"))
            .collect();
        assert_eq!(its, expected, "caller {caller}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replay_checks_asked_at_once_are_each_answered_for_their_own_request() {
    let Some((_schema, nodes)) = two_nodes().await else {
        return;
    };
    let (shop_id, curry) = curry_shop(&*nodes[0], 100).await;
    let mut placed = Vec::new();
    for i in 0..12 {
        let node = &nodes[i % 2];
        let table = open_table(&**node, shop_id, &format!("T{i}")).await;
        let order = guest_order(table.session_id, "phone", curry, Duration::from_secs(5));
        let outcome = node.place_order(order.clone()).await.unwrap().outcome;
        placed.push((order, outcome.expect("placed").order_id));
    }
    // Each placed order asked three ways at once, on the node that placed
    // it (a node checks only keys it answered): as sent (its replay), for
    // a session nobody knows, and under a key nobody used.
    let mut set = JoinSet::new();
    for (i, (order, order_id)) in placed.iter().enumerate() {
        let claim = order.claim.clone().unwrap();
        let fresh = ordergate_store::Claim {
            key: ordergate_domain::idempotency::IdempotencyKey::generate(),
            ..claim.clone()
        };
        let asked = [
            (order.session_id, claim.clone(), Some(*order_id)),
            (uuid::Uuid::new_v4(), claim, None),
            (order.session_id, fresh, None),
        ];
        for (session_id, claim, expected) in asked {
            let node = Arc::clone(&nodes[i % 2]);
            let policy = order.rules.pin_policy;
            set.spawn(async move {
                let proof = ordergate_domain::session::GuestProof::Pin(Some(support::PIN.into()));
                let replay = node
                    .committed_replay(session_id, &proof, &claim, policy, chrono::Utc::now())
                    .await
                    .expect("an answer");
                (replay.map(|r| r.order_id), expected)
            });
        }
    }
    let mut answered = 0;
    while let Some(joined) = set.join_next().await {
        let (found, expected) = joined.expect("task");
        assert_eq!(found, expected);
        answered += 1;
    }
    assert_eq!(answered, 36);

    // The other node did not answer these keys: it checks nothing, and
    // the order's transaction replays them.
    for (i, (order, order_id)) in placed.iter().enumerate() {
        let other = &nodes[(i + 1) % 2];
        let proof = ordergate_domain::session::GuestProof::Pin(Some(support::PIN.into()));
        let claim = order.claim.clone().unwrap();
        let policy = order.rules.pin_policy;
        let checked = other
            .committed_replay(order.session_id, &proof, &claim, policy, chrono::Utc::now())
            .await
            .expect("an answer");
        assert_eq!(checked, None);
        let retried = other.place_order(order.clone()).await.unwrap().outcome;
        let replayed = retried.expect("replayed");
        assert!(replayed.replayed);
        assert_eq!(replayed.order_id, *order_id);
        let checked = other
            .committed_replay(order.session_id, &proof, &claim, policy, chrono::Utc::now())
            .await
            .expect("an answer");
        assert_eq!(
            checked.map(|r| r.order_id),
            Some(*order_id),
            "a node checks a key it replayed"
        );
    }
}
