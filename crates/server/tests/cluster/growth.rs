//! A worker joins the cluster during a rush, and shops move onto it.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ordergate_server::Settings;
use sqlx::{Connection, PgConnection};
use tokio::time::{Instant, sleep};

use crate::cluster::OwnCluster;
use crate::helpers::{OrderBody, TestApp, key};
use crate::sse::{Next, WAIT};

/// A table of one of the test's shops.
#[derive(Clone)]
struct Table {
    shop: String,
    soup: String,
    session: String,
    pin: String,
}

/// What one guest sent: the key of each order, and the order it got.
type Sent = Vec<(String, String)>;

/// Guests at every table order through two nodes while a third worker is
/// added and `citus_rebalance_start` moves shards onto it (writes to a
/// moving shard wait for it). Guests retry whatever was not answered 201
/// with the same key. Every key makes exactly one order, and every
/// shop's kitchen stream, opened before, shows each order once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_joins_during_a_rush_and_shops_move_to_it_losing_and_doubling_nothing() {
    let Some(mut cluster) = OwnCluster::start(9750) else {
        return;
    };
    let database = cluster.database().await;
    // Guests here order as fast as they can, as no table would.
    let unlimited = |settings: &mut Settings| settings.session_order_limit = 0;
    let nodes = [
        Arc::new(TestApp::spawn_node_with(&database, unlimited).await),
        Arc::new(TestApp::spawn_node_with(&database, unlimited).await),
    ];
    let mut tables = Vec::new();
    let mut streams = HashMap::new();
    for _ in 0..6 {
        let (shop, menu) = nodes[0].shop_with_menu().await;
        for label in ["T1", "T2"] {
            let (session, pin) = nodes[0].table(&shop, label).await;
            tables.push(Table {
                shop: shop.clone(),
                soup: menu.soup.clone(),
                session,
                pin,
            });
        }
        streams.insert(shop.clone(), nodes[1].follow_shop(&shop, Some(0)).await);
    }

    let rushing = Arc::new(AtomicBool::new(true));
    let guests: Vec<_> = (0..tables.len() * 2)
        .map(|n| {
            let table = tables[n % tables.len()].clone();
            let (nodes, rushing) = (nodes.clone(), Arc::clone(&rushing));
            tokio::spawn(async move { guest(n, table, nodes, rushing).await })
        })
        .collect();

    sleep(Duration::from_secs(2)).await;
    let joined = cluster.add_worker();
    let mut conn = PgConnection::connect(&database.url).await.expect("connect");
    sqlx::query("select citus_rebalance_start(shard_transfer_mode := 'block_writes')")
        .execute(&mut conn)
        .await
        .expect("start rebalancing");
    sqlx::query("select citus_rebalance_wait()")
        .execute(&mut conn)
        .await
        .expect("rebalance");
    let moved: i64 = sqlx::query_scalar(
        "select count(*) from pg_dist_placement p join pg_dist_node n on n.groupid = p.groupid
         where n.nodeport = $1",
    )
    .bind(i32::from(joined))
    .fetch_one(&mut conn)
    .await
    .expect("count the new worker's shards");
    assert!(moved > 0, "shards moved onto the new worker");
    let _ = conn.close().await;
    sleep(Duration::from_secs(1)).await;
    rushing.store(false, Ordering::Relaxed);

    let mut placed: HashMap<String, Vec<String>> = HashMap::new();
    for (guest, table) in guests.into_iter().zip(tables.iter().cycle()) {
        let sent = guest.await.expect("a guest");
        assert!(!sent.is_empty(), "every guest ordered");
        let orders = placed.entry(table.session.clone()).or_default();
        orders.extend(sent.into_iter().map(|(_, order_id)| order_id));
    }
    let total: usize = placed.values().map(Vec::len).sum();
    eprintln!("{total} orders through the rebalance; {moved} shards moved to the new worker");
    for table in &tables {
        let mut stored: Vec<String> = nodes[0]
            .orders_of(&table.session)
            .await
            .iter()
            .map(|o| o["orderId"].as_str().expect("orderId").to_owned())
            .collect();
        let mut acknowledged = placed[&table.session].clone();
        stored.sort();
        acknowledged.sort();
        assert_eq!(
            stored, acknowledged,
            "each key made one order, and only those"
        );
    }

    // Each kitchen saw every one of its shop's orders, once.
    for (shop, stream) in &mut streams {
        let expected: Vec<&String> = tables
            .iter()
            .filter(|t| &t.shop == shop)
            .flat_map(|t| &placed[&t.session])
            .collect();
        let mut seen: HashMap<String, usize> = HashMap::new();
        let deadline = Instant::now() + WAIT;
        while seen.len() < expected.len() {
            match stream.next_by(deadline).await {
                Next::Event(event) if event.event == "order.placed" => {
                    let order_id = event.data["orderId"].as_str().expect("orderId");
                    *seen.entry(order_id.to_owned()).or_default() += 1;
                }
                Next::Event(_) => {}
                other => panic!("shop {shop}: {other:?} after {} orders", seen.len()),
            }
        }
        assert!(seen.values().all(|&n| n == 1), "shop {shop}: {seen:?}");
        assert!(expected.iter().all(|id| seen.contains_key(*id)));
    }
}

/// A guest at `table` ordering while the rush lasts, through either node
/// in turn; an order not answered 201 is sent again with its key until it
/// is. Returns each key with its order.
async fn guest(n: usize, table: Table, nodes: [Arc<TestApp>; 2], rushing: Arc<AtomicBool>) -> Sent {
    let body = OrderBody::new().line(&table.soup, 1).json();
    let mut sent = Sent::new();
    let mut turn = n;
    while rushing.load(Ordering::Relaxed) {
        let (key, client) = (key(), format!("guest-{n}-{}", sent.len()));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            turn += 1;
            let node = &nodes[turn % 2];
            let reply = node
                .place_order(&table.session, &table.pin, &client, &key, &body)
                .await;
            if reply.status == 201 {
                sent.push((key, reply.order_id()));
                break;
            }
            // Waiting out a moving shard: the table busy, the database away.
            assert!(
                [409, 503].contains(&reply.status),
                "unexpected answer: {}",
                reply.text
            );
            assert!(Instant::now() < deadline, "never placed: {}", reply.text);
            sleep(Duration::from_millis(100)).await;
        }
    }
    sent
}
