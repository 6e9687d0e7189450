//! The database going away and coming back, a graceful stop under load, and
//! a slow client: refusals are 503 `UNAVAILABLE` with `Retry-After`, nothing
//! is half written, nothing acknowledged is lost, and the server recovers
//! without a restart.

use std::collections::HashMap;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use reqwest::Url;
use serde_json::{Value, json};
use sqlx::Connection as _;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::time::{Instant, sleep, timeout};

use crate::database::TestDatabase;
use crate::helpers::{OrderBody, TestApp, key};

/// What a shop looks like from outside: what an outage must leave alone.
async fn snapshot(app: &TestApp, shop: &str, session: &str) -> Value {
    json!({
        "orders": app.orders_of(session).await,
        "inventory": app.inventory(shop).await.assert_status(200).clone(),
        "stockLog": app.stock_log(shop).await,
        "audit": app.audit_entries(shop).await,
    })
}

/// Asserts `reply` is the refusal of a database that is away.
#[track_caller]
fn assert_unavailable(reply: &crate::helpers::Reply) {
    reply.assert_problem(503, "UNAVAILABLE");
    let retry_after: u64 = reply
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!(retry_after > 0);
    assert!(
        !reply.text.to_lowercase().contains("sqlite") && !reply.text.contains("os error"),
        "internal detail leaked: {}",
        reply.text
    );
}

/// Sets or clears the immutable attribute: even this process's open file
/// descriptors can then no longer write the file, as on a failed disk.
fn set_immutable(files: &[PathBuf], immutable: bool) {
    let flag = if immutable { "+i" } else { "-i" };
    for file in files {
        let status = Command::new("chattr").arg(flag).arg(file).status();
        assert!(
            status.is_ok_and(|s| s.success()),
            "chattr {flag} {} failed (the test needs root and a file system with attributes)",
            file.display()
        );
    }
}

/// Clears the attribute even when the test fails, so the directory can go.
struct Unwritable(Vec<PathBuf>);

impl Unwritable {
    fn make(database: &Path) -> Unwritable {
        let mut wal = database.as_os_str().to_owned();
        wal.push("-wal");
        let files = vec![database.to_owned(), PathBuf::from(wal)];
        set_immutable(&files, true);
        Unwritable(files)
    }
}

impl Drop for Unwritable {
    fn drop(&mut self) {
        set_immutable(&self.0, false);
    }
}

#[tokio::test]
async fn an_unwritable_sqlite_file_is_503_until_it_is_writable_again() {
    let app = TestApp::spawn().await;
    let Some(file) = app.sqlite_file() else {
        let _ = writeln!(
            std::io::stderr(),
            "an_unwritable_sqlite_file_…: skipped: the suite runs on PostgreSQL"
        );
        return;
    };
    let (shop, menu) = app.shop_with_menu().await;
    app.set_inventory(&shop, &menu.soup, json!({"stock": 10}))
        .await
        .assert_status(200);
    let (session, pin) = app.table(&shop, "T1").await;
    app.get("/readyz").await.assert_status(200);
    let before = snapshot(&app, &shop, &session).await;

    let order = OrderBody::new().line(&menu.soup, 2).json();
    let order_key = key();
    let unwritable = Unwritable::make(&file);
    assert_unavailable(&app.get("/readyz").await);
    let refused = app
        .place_order(&session, &pin, "phone", &order_key, &order)
        .await;
    assert_unavailable(&refused);
    assert_unavailable(&app.restock(&shop, &menu.soup, 5).await);
    assert_unavailable(&app.open_session(&shop, "T2").await);
    // Reads go on: guests still see the menu.
    app.menu(&shop).await.assert_status(200);
    assert_eq!(snapshot(&app, &shop, &session).await, before);

    drop(unwritable);
    app.get("/readyz").await.assert_status(200);
    assert_eq!(snapshot(&app, &shop, &session).await, before);
    // The guest's retry with the same key is the order, placed once.
    let placed = app
        .place_order(&session, &pin, "phone", &order_key, &order)
        .await;
    placed.assert_order(false);
    assert_eq!(app.orders_of(&session).await.len(), 1);
    assert_eq!(app.stock_entry(&shop, &menu.soup).await["stock"], 8);
}

/// A TCP proxy in front of PostgreSQL that can cut every connection and
/// refuse new ones, as a stopped or unreachable database server does.
struct Proxy {
    address: SocketAddr,
    up: watch::Sender<bool>,
}

impl Proxy {
    async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (up, _) = watch::channel(true);
        let watching = up.clone();
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let mut down = watching.subscribe();
                if !*down.borrow_and_update() {
                    continue; // dropped: the connection is closed at once
                }
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = down.wait_for(|up| !*up) => {}
                    }
                });
            }
        });
        Proxy { address, up }
    }

    fn set_up(&self, up: bool) {
        self.up.send_replace(up);
    }
}

#[tokio::test]
async fn postgres_going_away_is_503_and_the_server_recovers_when_it_returns() {
    let Some(database) = TestDatabase::postgres().await else {
        let _ = writeln!(
            std::io::stderr(),
            "postgres_going_away_…: skipped: set \
             ORDERGATE_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run it"
        );
        return;
    };
    let mut url = Url::parse(&database.url).unwrap();
    let upstream = SocketAddr::new(
        url.host_str().unwrap().parse().expect("an IP address"),
        url.port().unwrap_or(5432),
    );
    let proxy = Proxy::start(upstream).await;
    url.set_port(Some(proxy.address.port())).unwrap();
    let proxied = database.with_url(url.to_string());
    let app = TestApp::spawn_node(&proxied).await;
    let (shop, menu) = app.shop_with_menu().await;
    app.set_inventory(&shop, &menu.soup, json!({"stock": 10}))
        .await
        .assert_status(200);
    let (session, pin) = app.table(&shop, "T1").await;
    let before = snapshot(&app, &shop, &session).await;

    let order = OrderBody::new().line(&menu.soup, 2).json();
    let order_key = key();
    proxy.set_up(false);
    let started = Instant::now();
    assert_unavailable(&app.get("/readyz").await);
    assert_unavailable(
        &app.place_order(&session, &pin, "phone", &order_key, &order)
            .await,
    );
    assert_unavailable(&app.restock(&shop, &menu.soup, 5).await);
    // Refused within the wait for a connection, not held until the client gives up.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );

    proxy.set_up(true);
    ready_again(&app, "the database returned").await;
    assert_eq!(snapshot(&app, &shop, &session).await, before);
    app.place_order(&session, &pin, "phone", &order_key, &order)
        .await
        .assert_order(false);
    assert_eq!(app.orders_of(&session).await.len(), 1);
    assert_eq!(app.stock_entry(&shop, &menu.soup).await["stock"], 8);
}

/// A database of its own on the test server, owned by a role of its own
/// (not a superuser, whom connection limits do not bind), both dropped
/// with it.
struct OwnDatabase {
    admin_url: String,
    name: String,
}

impl OwnDatabase {
    async fn create(admin_url: &str) -> OwnDatabase {
        let name = format!("og_refusing_{}", uuid::Uuid::new_v4().simple());
        let own = OwnDatabase {
            admin_url: admin_url.to_owned(),
            name,
        };
        let name = &own.name;
        own.admin(&format!("create role {name} login")).await;
        own.admin(&format!("create database {name} owner {name}"))
            .await;
        own
    }

    /// The URL a server opens: this database, as its own role.
    fn url(&self) -> String {
        let mut url = Url::parse(&self.admin_url).unwrap();
        url.set_username(&self.name).unwrap();
        url.set_path(&format!("/{}", self.name));
        url.to_string()
    }

    async fn admin(&self, sql: &str) {
        let mut admin = sqlx::PgConnection::connect(&self.admin_url).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()))
            .execute(&mut admin)
            .await
            .unwrap();
    }

    /// Ends every session on the database: the server's pool must connect
    /// again, and meets whatever was just set.
    async fn cut_sessions(&self) {
        let mut admin = sqlx::PgConnection::connect(&self.admin_url).await.unwrap();
        sqlx::query(
            "select pg_terminate_backend(pid) from pg_stat_activity
             where datname = $1 and pid <> pg_backend_pid()",
        )
        .bind(&self.name)
        .execute(&mut admin)
        .await
        .unwrap();
    }

    async fn drop(self) {
        let name = &self.name;
        self.admin(&format!("drop database if exists {name} with (force)"))
            .await;
        self.admin(&format!("drop role if exists {name}")).await;
    }
}

/// Waits until the server is ready again.
async fn ready_again(app: &TestApp, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while app.get("/readyz").await.status != 200 {
        assert!(Instant::now() < deadline, "not ready again after {what}");
        sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn postgres_refusing_connections_or_writes_is_503_and_the_server_recovers() {
    let Ok(admin_url) = std::env::var("ORDERGATE_TEST_DATABASE_URL") else {
        let _ = writeln!(
            std::io::stderr(),
            "postgres_refusing_…: skipped: set \
             ORDERGATE_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run it"
        );
        return;
    };
    let own = OwnDatabase::create(&admin_url).await;
    let database = TestDatabase::postgres().await.unwrap().with_url(own.url());
    let app = TestApp::spawn_node(&database).await;
    let (shop, menu) = app.shop_with_menu().await;
    app.set_inventory(&shop, &menu.soup, json!({"stock": 10}))
        .await
        .assert_status(200);
    let (session, pin) = app.table(&shop, "T1").await;
    let before = snapshot(&app, &shop, &session).await;
    let order = OrderBody::new().line(&menu.soup, 2).json();
    let order_key = key();
    let name = own.name.clone();

    // No connection at all: the database takes none (SQLSTATE 55000), or
    // the role is past its connection limit (53300).
    for (refuse, allow) in [
        (
            format!("alter database {name} allow_connections false"),
            format!("alter database {name} allow_connections true"),
        ),
        (
            format!("alter role {name} connection limit 0"),
            format!("alter role {name} connection limit -1"),
        ),
    ] {
        own.admin(&refuse).await;
        own.cut_sessions().await;
        assert_unavailable(&app.list_shops().await);
        assert_unavailable(&app.inventory(&shop).await);
        assert_unavailable(
            &app.place_order(&session, &pin, "phone", &order_key, &order)
                .await,
        );
        assert_unavailable(&app.get("/readyz").await);
        own.admin(&allow).await;
        ready_again(&app, &allow).await;
    }

    // Read-only (a standby, or maintenance): reads go on, writes are 503
    // (SQLSTATE 25006).
    own.admin(&format!(
        "alter database {name} set default_transaction_read_only = on"
    ))
    .await;
    own.cut_sessions().await;
    app.list_shops().await.assert_status(200);
    app.inventory(&shop).await.assert_status(200);
    assert_unavailable(
        &app.place_order(&session, &pin, "phone", &order_key, &order)
            .await,
    );
    assert_unavailable(&app.restock(&shop, &menu.soup, 5).await);
    own.admin(&format!(
        "alter database {name} reset default_transaction_read_only"
    ))
    .await;
    own.cut_sessions().await;
    ready_again(&app, "read-only ended").await;

    // Nothing of the refused requests was kept; the same key places once.
    assert_eq!(snapshot(&app, &shop, &session).await, before);
    app.place_order(&session, &pin, "phone", &order_key, &order)
        .await
        .assert_order(false);
    assert_eq!(app.stock_entry(&shop, &menu.soup).await["stock"], 8);
    drop(app);
    own.drop().await;
}

#[tokio::test]
async fn a_graceful_stop_under_load_loses_no_acknowledged_order() {
    const TABLES: usize = 16;
    const PER_TABLE: usize = 20;
    let app = TestApp::spawn().await;
    let (shop, menu) = app.shop_with_menu().await;
    app.set_inventory(&shop, &menu.soup, json!({"stock": 10_000}))
        .await
        .assert_status(200);
    let mut tables = Vec::new();
    for n in 0..TABLES {
        tables.push(app.table(&shop, &format!("T{n}")).await);
    }
    let order = OrderBody::new().line(&menu.soup, 1).json();
    // Each order has its own key and client (no cooldown between them).
    let attempts: Vec<(usize, String, String)> = (0..TABLES * PER_TABLE)
        .map(|n| (n % TABLES, key(), format!("phone-{n}")))
        .collect();

    let acknowledged = Arc::new(std::sync::Mutex::new(Vec::<(String, String)>::new()));
    let enough_sent = Arc::new(tokio::sync::Notify::new());
    let in_flight = Arc::new(Semaphore::new(32));
    let sending = attempts.iter().cloned().map(|(table, order_key, client)| {
        let (base, http) = (app.base.clone(), app.client.clone());
        let (session, pin) = tables[table].clone();
        let (order, acknowledged, enough_sent, in_flight) = (
            order.clone(),
            acknowledged.clone(),
            enough_sent.clone(),
            in_flight.clone(),
        );
        async move {
            let _slot = in_flight.acquire().await.unwrap();
            let sent = http
                .post(format!("{base}/api/v1/sessions/{session}/orders"))
                .header("x-session-pin", pin)
                .header("idempotency-key", &order_key)
                .header("x-client-id", client)
                .json(&order)
                .send()
                .await;
            let Ok(response) = sent else { return 0 };
            let status = response.status().as_u16();
            let Ok(body) = response.json::<Value>().await else {
                return status;
            };
            if status == 201 {
                let mut acknowledged = acknowledged.lock().unwrap();
                acknowledged.push((order_key, body["orderId"].as_str().unwrap().to_owned()));
                if acknowledged.len() == TABLES * PER_TABLE / 4 {
                    enough_sent.notify_one();
                }
            }
            status
        }
    });
    // One order is surely in flight when the stop comes: half its body sent.
    let (straggler_session, straggler_pin) = app.table(&shop, "Straggler").await;
    let body = order.to_string();
    let half = body.len() / 2;
    let mut straggler = app
        .partial_order(
            (&straggler_session, &straggler_pin),
            "straggler",
            &body,
            half,
        )
        .await;
    let second_half = body[half..].to_owned();

    let load = tokio::spawn(join_all(sending));
    enough_sent.notified().await;
    let straggler_answer = tokio::spawn(async move {
        // Sent after the stop began.
        sleep(Duration::from_millis(300)).await;
        straggler.write_all(second_half.as_bytes()).await.unwrap();
        let mut answer = String::new();
        straggler.read_to_string(&mut answer).await.unwrap();
        answer
    });
    let app = app.restart().await;
    let statuses = load.await.unwrap();
    let straggler_answer = straggler_answer.await.unwrap();
    assert!(
        straggler_answer.starts_with("HTTP/1.1 201"),
        "{straggler_answer}"
    );
    assert_eq!(app.orders_of(&straggler_session).await.len(), 1);
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(
        acknowledged.len() < attempts.len(),
        "the stop came after the load: nothing was in flight"
    );
    for status in &statuses {
        // 0: refused or closed before the request was taken, to be retried.
        assert!(
            [0, 201].contains(status),
            "a request cut by the stop was answered {status}"
        );
    }

    // Every acknowledged order is there, and every client retries whatever it
    // did not hear back about: each key makes exactly one order.
    let placed: Vec<Value> = join_all(tables.iter().map(|(session, _)| app.orders_of(session)))
        .await
        .concat();
    for (_, order_id) in &acknowledged {
        assert!(
            placed.iter().any(|o| o["orderId"] == order_id.as_str()),
            "acknowledged order {order_id} was lost"
        );
    }
    // A table busy with its other retries is answered SESSION_BUSY, "retry
    // shortly": the client does.
    let retries = attempts.iter().map(|(table, order_key, client)| {
        let (session, pin) = &tables[*table];
        let order = &order;
        let app = &app;
        async move {
            loop {
                let reply = app
                    .place_order(session, pin, client, order_key, order)
                    .await;
                if reply.status != 409 || !reply.text.contains("SESSION_BUSY") {
                    return reply;
                }
                sleep(Duration::from_millis(50)).await;
            }
        }
    });
    let retried = join_all(retries).await;
    let acknowledged: HashMap<String, String> = acknowledged.into_iter().collect();
    for ((_, order_key, _), reply) in attempts.iter().zip(&retried) {
        assert_eq!(reply.status, 201, "{}", reply.text);
        if let Some(order_id) = acknowledged.get(order_key) {
            assert!(reply.replayed(), "{order_id} was placed again");
            assert_eq!(&reply.order_id(), order_id);
        }
    }
    let all: usize = join_all(tables.iter().map(|(session, _)| app.orders_of(session)))
        .await
        .iter()
        .map(Vec::len)
        .sum();
    assert_eq!(all, attempts.len(), "one order per key");
    assert_eq!(
        app.stock_entry(&shop, &menu.soup).await["stock"],
        10_000 - attempts.len() as i64 - 1
    );
}

#[tokio::test]
async fn a_client_sending_its_order_slowly_holds_up_no_one_else() {
    let app = TestApp::spawn_with(|s| s.request_timeout_secs = 3).await;
    let (shop, menu) = app.shop_with_menu().await;
    let (slow_session, slow_pin) = app.table(&shop, "T1").await;
    let (session, pin) = app.table(&shop, "T2").await;

    // Headers and half a body, then silence.
    let body = OrderBody::new().line(&menu.soup, 1).json().to_string();
    let slow = app
        .partial_order((&slow_session, &slow_pin), "slow-phone", &body, 10)
        .await;

    // Everyone else's orders commit meanwhile, well inside the slow one's timeout.
    let orders = (0..20).map(|n| {
        let body = OrderBody::new().line(&menu.soup, 1).json();
        let (session, pin) = (session.clone(), pin.clone());
        let app = &app;
        async move {
            app.place_order(&session, &pin, &format!("phone-{n}"), &key(), &body)
                .await
        }
    });
    let placed = timeout(Duration::from_secs(2), join_all(orders))
        .await
        .expect("orders waited for the slow client");
    for reply in placed {
        reply.assert_order(false);
    }
    assert_eq!(app.orders_of(&session).await.len(), 20);
    assert!(app.orders_of(&slow_session).await.is_empty());
    drop(slow);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_order_whose_client_hung_up_still_completes_and_leaves_its_connection_clean() {
    // Where a client hangs up matters on PostgreSQL, whose connections a
    // dropped request could leave inside a transaction; SQLite's writer
    // runs every job it was given anyway.
    let Some(database) = TestDatabase::postgres().await else {
        eprintln!("skipped: set ORDERGATE_TEST_DATABASE_URL to run it on PostgreSQL");
        return;
    };
    let application = format!("og_hangup_{}", uuid::Uuid::new_v4().simple());
    let url = format!("{}&application_name={application}", database.url);
    let database = database.with_url(url.clone());
    let app = TestApp::spawn_node(&database).await;
    let (shop, menu) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;

    // Someone holds the table: the order waits for it (up to 5 s).
    use sqlx::Connection;
    let mut holder = sqlx::PgConnection::connect(&url).await.unwrap();
    let mut held = holder.begin().await.unwrap();
    sqlx::query("select 1 from table_sessions where session_id = $1::uuid for update")
        .bind(&session)
        .execute(&mut *held)
        .await
        .unwrap();
    let body = OrderBody::new().line(&menu.curry, 1).json().to_string();
    let mut phone = app
        .partial_order((&session, &pin), "phone-1", &body, body.len())
        .await;
    sleep(Duration::from_millis(300)).await;
    phone.shutdown().await.unwrap();
    drop(phone);
    sleep(Duration::from_millis(300)).await;
    held.commit().await.unwrap();

    // The order went on without its client, and committed whole.
    let deadline = Instant::now() + crate::sse::WAIT;
    while app.orders_of(&session).await.is_empty() {
        assert!(
            Instant::now() < deadline,
            "the order was dropped with its client"
        );
        sleep(Duration::from_millis(50)).await;
    }
    sleep(Duration::from_millis(200)).await;
    let stuck: i64 = sqlx::query_scalar(
        "select count(*) from pg_stat_activity
         where application_name = $1 and state like 'idle in transaction%'",
    )
    .bind(&application)
    .fetch_one(&mut holder)
    .await
    .unwrap();
    assert_eq!(stuck, 0, "a connection was left inside a transaction");
    assert_eq!(app.orders_of(&session).await.len(), 1);
    app.place_order(
        &session,
        &pin,
        "phone-2",
        &key(),
        &OrderBody::new().line(&menu.soup, 1).json(),
    )
    .await
    .assert_order(false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cut_off_refused_and_joined_orders_all_give_their_connections_back_idle() {
    // Every way an order ends early at once: the server's request timeout
    // cutting the handler off, clients hanging up, a second tap joining the
    // first one's key, a wait for the key running out, refusals. None of
    // them may leave a pooled connection inside a transaction, where the
    // next borrower's BEGIN would land in it.
    let Some(database) = TestDatabase::postgres().await else {
        eprintln!("skipped: set ORDERGATE_TEST_DATABASE_URL to run it on PostgreSQL");
        return;
    };
    let application = format!("og_storm_{}", uuid::Uuid::new_v4().simple());
    let url = format!("{}&application_name={application}", database.url);
    let database = database.with_url(url.clone());
    let app = TestApp::spawn_node_with(&database, |s| {
        s.request_timeout_secs = 1;
        s.inflight_wait_ms = 300;
    })
    .await;
    let (shop, menu) = app.shop_with_menu().await;
    app.set_inventory(&shop, &menu.beer, json!({"stock": 3}))
        .await
        .assert_status(200);
    let mut tables = Vec::new();
    for label in ["T1", "T2", "T3", "T4"] {
        tables.push(app.table(&shop, label).await);
    }

    // T1 is held for 2 s: its orders wait past the request timeout, past
    // their clients' patience and past the wait for a key in flight.
    let mut holder = sqlx::PgConnection::connect(&url).await.unwrap();
    let mut held = holder.begin().await.unwrap();
    sqlx::query("select 1 from table_sessions where session_id = $1::uuid for update")
        .bind(&tables[0].0)
        .execute(&mut *held)
        .await
        .unwrap();
    let keys: Vec<String> = (0..12).map(|_| key()).collect();
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    let orders = (0..64).map(|n| {
        let (session, pin) = tables[n % tables.len()].clone();
        // Pairs of taps share a key; beer runs out after three.
        let key = keys.get(n / 2).cloned().unwrap_or_else(key);
        let item = if n % 5 == 0 { &menu.beer } else { &menu.soup };
        let body = OrderBody::new().line(item, 1).allow_repeat().json();
        let client = if n % 4 == 3 {
            impatient.clone()
        } else {
            app.client.clone()
        };
        let url = format!("{}/api/v1/sessions/{session}/orders", app.base);
        async move {
            client
                .post(url)
                .header("X-Session-PIN", pin)
                .header("X-Client-Id", format!("phone-{n}"))
                .header("Idempotency-Key", key)
                .json(&body)
                .send()
                .await
                .map(|response| response.status().as_u16())
                .ok()
        }
    });
    let storm = tokio::spawn(join_all(orders));
    sleep(Duration::from_secs(2)).await;
    held.commit().await.unwrap();
    let answers = storm.await.unwrap();
    let answered: Vec<u16> = answers.iter().flatten().copied().collect();
    for expected in [201, 408, 409] {
        assert!(
            answered.contains(&expected),
            "no {expected} among the answers {answered:?}: the storm missed a path"
        );
    }
    assert!(answers.iter().any(Option::is_none), "no client hung up");

    // Once the work left running without its clients is done, every
    // connection of the server's pool is idle, outside any transaction (one
    // left inside stays "idle in transaction" for good).
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let states: Vec<String> = sqlx::query_scalar(
            "select coalesce(state, '') from pg_stat_activity
             where application_name = $1 and pid <> pg_backend_pid()",
        )
        .bind(&application)
        .fetch_all(&mut holder)
        .await
        .unwrap();
        if states.iter().all(|s| s == "idle") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "a connection was not given back idle: {states:?}"
        );
        sleep(Duration::from_millis(100)).await;
    }
    // And the server goes on: every table takes an order.
    for (n, (session, pin)) in tables.iter().enumerate() {
        let body = OrderBody::new().line(&menu.curry, 1).allow_repeat().json();
        app.place_order(session, pin, &format!("after-{n}"), &key(), &body)
            .await
            .assert_order(false);
    }
}
