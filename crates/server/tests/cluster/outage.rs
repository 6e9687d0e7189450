//! A worker dies in the middle of a rush, and comes back.

use std::time::Duration;

use futures_util::future::join_all;
use sqlx::{Connection, PgConnection};
use tokio::time::sleep;

use crate::cluster::OwnCluster;
use crate::helpers::{Menu, OrderBody, Reply, TestApp, key};

/// A table of one of the test's shops.
struct Table {
    shop: usize,
    session: String,
    pin: String,
}

/// One guest's order: sent during the outage, retried with the same key
/// after it.
struct Attempt {
    table: usize,
    key: String,
    client: String,
}

/// Orders for shops on the worker that died are refused 503 `UNAVAILABLE`
/// with `Retry-After`, and nothing else; shops on the other worker go on
/// taking every order; when the worker is back, each guest's retry with
/// the same key places its order, or replays the one placed, exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dead_worker_stops_only_its_shops_and_their_retries_place_once_when_it_returns() {
    let Some(cluster) = OwnCluster::start(9740) else {
        return;
    };
    let database = cluster.database().await;
    let app = TestApp::spawn_node(&database).await;
    let mut conn = PgConnection::connect(&database.url).await.expect("connect");
    let (alive, dying) = (cluster.workers[0], cluster.workers[1]);

    // Shops on both workers, two each at least.
    let mut shops: Vec<(String, Menu, u16)> = Vec::new();
    let on = |shops: &[(String, Menu, u16)], worker| shops.iter().filter(|s| s.2 == worker).count();
    while on(&shops, alive) < 2 || on(&shops, dying) < 2 {
        assert!(shops.len() < 40, "4 shards, yet no shop on one worker");
        let (shop, menu) = app.shop_with_menu().await;
        let worker = cluster.worker_of(&mut conn, &shop).await;
        shops.push((shop, menu, worker));
    }
    let _ = conn.close().await;
    let mut tables = Vec::new();
    for (n, (shop_id, _, _)) in shops.iter().enumerate() {
        for label in ["T1", "T2"] {
            let (session, pin) = app.table(shop_id, label).await;
            tables.push(Table {
                shop: n,
                session,
                pin,
            });
        }
    }
    let (app, tables, shops) = (&app, &tables, &shops);
    let send = |attempt: &Attempt| {
        let table = &tables[attempt.table];
        let body = OrderBody::new().line(&shops[table.shop].1.soup, 1).json();
        let (key, client) = (attempt.key.clone(), attempt.client.clone());
        async move {
            app.place_order(&table.session, &table.pin, &client, &key, &body)
                .await
        }
    };
    // Every table has ordered once: the node knows where each one is.
    let first: Vec<Attempt> = (0..tables.len())
        .map(|table| Attempt {
            table,
            key: key(),
            client: format!("first-{table}"),
        })
        .collect();
    for reply in join_all(first.iter().map(send)).await {
        reply.assert_order(false);
    }

    cluster.kill(dying);
    // Three guests at every table at once, while the worker is down.
    let attempts: Vec<Attempt> = (0..tables.len() * 3)
        .map(|n| Attempt {
            table: n % tables.len(),
            key: key(),
            client: format!("guest-{n}"),
        })
        .collect();
    let during = join_all(attempts.iter().map(send)).await;
    let on_dead_worker = |attempt: &Attempt| shops[tables[attempt.table].shop].2 == dying;
    let (mut live_placed, mut live_sent, mut refused) = (0, 0, 0);
    for (attempt, reply) in attempts.iter().zip(&during) {
        if !on_dead_worker(attempt) {
            live_sent += 1;
            live_placed += usize::from(reply.status == 201);
        } else if reply.status != 201 {
            assert_unavailable(reply);
            refused += 1;
        }
    }
    eprintln!(
        "during the outage: {live_placed} of {live_sent} orders placed at shops on the live \
         worker; {refused} refused 503 at shops on the dead one"
    );
    assert_eq!(
        live_placed, live_sent,
        "every shop on the live worker took every order"
    );
    assert!(refused > 0, "the outage was felt");

    cluster.revive(dying);
    let mut retried: Vec<Reply> = Vec::new();
    for attempt in &attempts {
        let mut tries = 0;
        let reply = loop {
            let reply = send(attempt).await;
            tries += 1;
            if reply.status != 503 || tries == 60 {
                break reply;
            }
            sleep(Duration::from_millis(500)).await;
        };
        retried.push(reply);
    }
    for ((attempt, before), after) in attempts.iter().zip(&during).zip(&retried) {
        assert_eq!(after.status, 201, "{}: {}", attempt.key, after.text);
        if before.status == 201 {
            assert!(after.replayed(), "placed again: {}", after.text);
            assert_eq!(after.order_id(), before.order_id());
        }
    }
    // Each key made one order: the first round's and three more a table.
    for table in tables {
        assert_eq!(app.orders_of(&table.session).await.len(), 4);
    }
}

/// The refusal of a shop whose worker is away.
#[track_caller]
fn assert_unavailable(reply: &Reply) {
    reply.assert_problem(503, "UNAVAILABLE");
    let retry_after: u64 = reply
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!(retry_after > 0);
}
