//! Crash safety with real processes and real concurrency: the `ordergate`
//! binary is SIGKILLed while 32 guests are ordering, restarted on the same
//! SQLite file, and every order is retried with its original key until it is
//! acknowledged. Afterwards nothing acknowledged is lost, nothing is
//! duplicated, and stock, its op log and the audit trail agree with the
//! orders.
//!
//! The orders are spread over several shops so that each shop's inventory
//! log and audit trail fit in one page (the list endpoints return at most
//! 500 rows and have no cursor): every row can then be checked, not just the
//! newest ones.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use ordergate_rush::client::{Client, ClientError, OrderAttempt};
use serde_json::{Value, json};
use uuid::Uuid;

const TOKEN: &str = "crash-test-staff-token";
const SHOPS: usize = 4;
const TABLES_PER_SHOP: usize = 3;
/// Guests per table; each has its own `X-Client-Id`.
const GUESTS_PER_TABLE: usize = 4;
const ORDERS: usize = 400;
const IN_FLIGHT: usize = 32;
/// The server is killed once this many orders were acknowledged (40%).
const KILL_AFTER_ACKS: usize = 160;
const INITIAL_STOCK: i64 = 100_000;
/// Each list endpoint answers at most this many rows.
const PAGE: usize = 500;

/// An `ordergate serve` child process.
struct Server {
    child: Child,
    base: String,
}

impl Server {
    /// Starts the binary on `database` and waits for its `listening on` line.
    fn start(database: &str) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ordergate"))
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--database",
                database,
                "--staff-token",
                TOKEN,
                "--client-cooldown-ms",
                "0",
                "--duplicate-window-secs",
                "0",
            ])
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start ordergate");
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (found, listening) = mpsc::channel();
        // Reads stdout to its end, so the server never writes to a closed pipe.
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if let Some(base) = line.strip_prefix("listening on ") {
                    let _ = found.send(base.to_owned());
                }
            }
        });
        let base = listening
            .recv_timeout(Duration::from_secs(10))
            .expect("the server printed its `listening on` line");
        Server { child, base }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL (what `kill -KILL <pid>` sends), straight from this thread so
    /// that it lands while the load is still running: no graceful shutdown,
    /// no flushing, the process just ends.
    fn sigkill(&mut self) {
        self.child.kill().expect("SIGKILL the server");
    }

    /// Waits for the killed process to be gone.
    fn reap(mut self) {
        let status = self.child.wait().unwrap();
        assert!(!status.success(), "a SIGKILLed server cannot exit cleanly");
    }

    fn terminate(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status();
        for _ in 0..100 {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // A failed assertion must not leave a server behind.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

struct Shop {
    shop_id: String,
    curry: String,
    soup: String,
    beer: String,
    cheese: String,
    egg: String,
    /// (session id, pin) per table.
    tables: Vec<(String, String)>,
}

/// One order a guest means to place, with everything a retry must repeat.
struct Intended {
    shop: usize,
    session_id: String,
    pin: String,
    client_id: String,
    key: Uuid,
    body: Value,
    /// Units of the tracked item and of the tracked topping it takes.
    curry_units: i64,
    cheese_units: i64,
}

/// A 201 after the restart: whether it was a replay, and the order.
type Answered = (bool, Value);

/// What the client knows of an order when the server is killed.
#[derive(Clone, Debug)]
enum Known {
    /// Never sent.
    Unsent,
    /// Sent, no answer: it may or may not have committed.
    Unanswered,
    /// 201 received, with this body.
    Acknowledged(Value),
}

async fn staff_get(client: &Client, path: &str) -> Value {
    let reply = client.staff_get(path).await.expect("staff request");
    assert_eq!(reply.status, 200, "GET {path}: {}", reply.body);
    reply.body
}

async fn setup_shop(client: &Client, n: usize) -> Shop {
    let shop = client
        .create_shop(
            &json!({"name": format!("Crash Diner {n}"), "currency": "JPY", "timezone": "UTC"}),
        )
        .await
        .expect("create a shop");
    assert_eq!(shop.status, 201, "{}", shop.body);
    let shop_id = shop.body["shopId"].as_str().unwrap().to_owned();
    let id = || Uuid::new_v4().to_string();
    let (curry, soup, beer, cheese, egg) = (id(), id(), id(), id(), id());
    let catalog = json!({
        "toppings": [
            {"toppingId": cheese, "name": "Cheese", "price": 100},
            {"toppingId": egg, "name": "Egg", "price": 80}
        ],
        "items": [
            {"menuItemId": curry, "name": "Curry", "category": "Mains", "price": 900,
             "toppingIds": [cheese, egg], "maxToppings": 2},
            {"menuItemId": soup, "name": "Miso soup", "category": "Sides", "price": 300},
            {"menuItemId": beer, "name": "Beer", "category": "Drinks", "price": 600}
        ]
    });
    let reply = client
        .put_catalog(&shop_id, &catalog)
        .await
        .expect("catalog");
    assert_eq!(reply.status, 200, "{}", reply.body);
    for tracked in [&curry, &cheese] {
        let reply = client
            .set_inventory(&shop_id, tracked, &json!({"stock": INITIAL_STOCK}))
            .await
            .expect("stock");
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    let mut tables = Vec::new();
    for t in 0..TABLES_PER_SHOP {
        let session = client
            .open_session(&shop_id, &format!("T{t}"))
            .await
            .expect("open a table");
        assert_eq!(session.status, 201, "{}", session.body);
        tables.push((
            session.body["sessionId"].as_str().unwrap().to_owned(),
            session.body["pin"].as_str().unwrap().to_owned(),
        ));
    }
    Shop {
        shop_id,
        curry,
        soup,
        beer,
        cheese,
        egg,
        tables,
    }
}

/// The `i`th order: a fixed guest at a fixed table, a mix of tracked and
/// untracked items and toppings.
fn intended(i: usize, shops: &[Shop]) -> Intended {
    let guest = i % (SHOPS * TABLES_PER_SHOP * GUESTS_PER_TABLE);
    let shop_index = guest % SHOPS;
    let table = (guest / SHOPS) % TABLES_PER_SHOP;
    let shop = &shops[shop_index];
    let (session_id, pin) = shop.tables[table].clone();
    let curry_units = (i % 3) as i64 + 1;
    let mut toppings = Vec::new();
    if i.is_multiple_of(2) {
        toppings.push(shop.cheese.clone());
    }
    if i.is_multiple_of(5) {
        toppings.push(shop.egg.clone());
    }
    let cheese_units = if i.is_multiple_of(2) { curry_units } else { 0 };
    let mut items =
        vec![json!({"menuItemId": shop.curry, "quantity": curry_units, "toppingIds": toppings})];
    if i.is_multiple_of(3) {
        items.push(json!({"menuItemId": shop.soup, "quantity": 1}));
    }
    if i.is_multiple_of(7) {
        items.push(json!({"menuItemId": shop.beer, "quantity": 2}));
    }
    Intended {
        shop: shop_index,
        session_id,
        pin,
        client_id: format!("crash-guest-{guest}"),
        key: Uuid::new_v4(),
        body: json!({"items": items, "note": format!("order {i}")}),
        curry_units,
        cheese_units,
    }
}

/// One attempt at placing `order`: `Ok` with the status, replay header and
/// body of an answer, `Err` when no answer came (connection refused or cut).
async fn attempt(client: &Client, order: &Intended) -> Result<(u16, bool, Value), ClientError> {
    let attempt = OrderAttempt {
        session_id: order.session_id.clone(),
        pin: order.pin.clone(),
        client_id: order.client_id.clone(),
        key: order.key.to_string(),
        body: order.body.clone(),
    };
    let reply = client
        .place_order(&attempt, Some(Duration::from_secs(10)))
        .await?;
    Ok((reply.status, reply.replayed(), reply.body))
}

/// An order as a comparable value: the replay marker removed.
fn comparable(order: &Value) -> Value {
    let mut order = order.clone();
    if let Some(fields) = order.as_object_mut() {
        fields.remove("idempotentReplay");
    }
    order
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_mid_load_loses_no_acknowledged_order_and_duplicates_none() {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("og.db").display());
    let server = Server::start(&database);
    let client = Client::new(server.base.clone(), Some(TOKEN.into()));
    let mut shops = Vec::new();
    for n in 0..SHOPS {
        shops.push(setup_shop(&client, n).await);
    }
    let orders: Arc<Vec<Intended>> = Arc::new((0..ORDERS).map(|i| intended(i, &shops)).collect());

    // --- Phase 1: 32 guests in flight; SIGKILL after 40% were acknowledged.
    let known = Arc::new(Mutex::new(vec![Known::Unsent; ORDERS]));
    let next = Arc::new(AtomicUsize::new(0));
    let acked = Arc::new(AtomicUsize::new(0));
    let killed = Arc::new(AtomicBool::new(false));
    let unexpected = Arc::new(Mutex::new(Vec::new()));
    // The worker whose acknowledgement reaches the threshold kills the
    // server at once, while the other 31 requests are in the air (queued,
    // mid-transaction, mid-fsync or being answered).
    let server = Arc::new(Mutex::new(Some(server)));
    let mut workers = Vec::new();
    for _ in 0..IN_FLIGHT {
        let (orders, known, next, acked, killed, server, unexpected, client) = (
            Arc::clone(&orders),
            Arc::clone(&known),
            Arc::clone(&next),
            Arc::clone(&acked),
            Arc::clone(&killed),
            Arc::clone(&server),
            Arc::clone(&unexpected),
            client.clone(),
        );
        workers.push(tokio::spawn(async move {
            while !killed.load(Ordering::SeqCst) {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= ORDERS {
                    break;
                }
                known.lock().unwrap()[i] = Known::Unanswered;
                match attempt(&client, &orders[i]).await {
                    Ok((201, replayed, body)) => {
                        assert!(!replayed, "a first attempt cannot be a replay: {body}");
                        known.lock().unwrap()[i] = Known::Acknowledged(body);
                        if acked.fetch_add(1, Ordering::SeqCst) + 1 == KILL_AFTER_ACKS {
                            if let Some(server) = server.lock().unwrap().as_mut() {
                                server.sigkill();
                            }
                            killed.store(true, Ordering::SeqCst);
                        }
                    }
                    Ok((status, _, body)) => {
                        unexpected
                            .lock()
                            .unwrap()
                            .push(format!("order {i}: {status} {body}"));
                    }
                    // The server died under this request (or before it).
                    Err(_) => {}
                }
            }
        }));
    }
    for worker in workers {
        worker.await.unwrap();
    }
    // Every worker stops only once the kill flag is set or the orders ran
    // out; the latter would mean the kill came too late to test anything.
    assert!(
        killed.load(Ordering::SeqCst),
        "all {ORDERS} orders finished before {KILL_AFTER_ACKS} acknowledgements?"
    );
    server.lock().unwrap().take().unwrap().reap();
    let unexpected = unexpected.lock().unwrap().clone();
    assert!(
        unexpected.is_empty(),
        "refusals before the crash: {unexpected:?}"
    );
    let known = known.lock().unwrap().clone();
    let acknowledged = known
        .iter()
        .filter(|k| matches!(k, Known::Acknowledged(_)))
        .count();
    let unanswered = known
        .iter()
        .filter(|k| matches!(k, Known::Unanswered))
        .count();
    let unsent = known.iter().filter(|k| matches!(k, Known::Unsent)).count();
    assert!(
        acknowledged >= KILL_AFTER_ACKS,
        "{acknowledged} acknowledged"
    );
    assert!(
        unanswered + unsent > 0,
        "every order was acknowledged before the kill"
    );

    // --- Phase 2: restart on the same file; retry every order until 201.
    let server = Server::start(&database);
    let client = Client::new(server.base.clone(), Some(TOKEN.into()));
    let finals: Arc<Mutex<Vec<Option<Answered>>>> = Arc::new(Mutex::new(vec![None; ORDERS]));
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..IN_FLIGHT {
        let (orders, finals, next, client) = (
            Arc::clone(&orders),
            Arc::clone(&finals),
            Arc::clone(&next),
            client.clone(),
        );
        workers.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= ORDERS {
                    break;
                }
                let mut tries = 0;
                let answer = loop {
                    tries += 1;
                    match attempt(&client, &orders[i]).await {
                        Ok((201, replayed, body)) => {
                            assert_eq!(
                                replayed,
                                body["idempotentReplay"] == true,
                                "replay header and body disagree: {body}"
                            );
                            break (replayed, body);
                        }
                        Ok((status, _, body)) => {
                            assert!(tries < 20, "order {i} still refused: {status} {body}");
                        }
                        Err(e) => assert!(tries < 20, "order {i} still failing: {e}"),
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                };
                finals.lock().unwrap()[i] = Some(answer);
            }
        }));
    }
    for worker in workers {
        worker.await.unwrap();
    }
    let finals: Vec<Answered> = finals
        .lock()
        .unwrap()
        .iter()
        .map(|f| f.clone().expect("every order was answered"))
        .collect();

    // Acknowledged before the kill: replayed, byte for byte the same order.
    // Never sent: new. Unanswered: either, but one order all the same.
    let mut replays_after_restart = [0usize; SHOPS];
    for (i, ((replayed, body), before)) in finals.iter().zip(&known).enumerate() {
        match before {
            Known::Acknowledged(first) => {
                assert!(
                    replayed,
                    "order {i} acknowledged before the kill was not replayed: {body}"
                );
                assert_eq!(
                    comparable(body),
                    comparable(first),
                    "order {i} changed across the crash"
                );
            }
            Known::Unsent => assert!(!replayed, "order {i} was never sent, yet replayed"),
            Known::Unanswered => {}
        }
        if *replayed {
            replays_after_restart[orders[i].shop] += 1;
        }
        assert_eq!(body["status"], "placed", "order {i}: {body}");
        assert_eq!(body["sessionId"], orders[i].session_id.as_str());
        assert_eq!(body["clientId"], orders[i].client_id.as_str());
    }
    let final_ids: BTreeSet<String> = finals
        .iter()
        .map(|(_, body)| body["orderId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        final_ids.len(),
        ORDERS,
        "two intended orders share an orderId"
    );

    // --- The kitchen's view: every intended order exactly once.
    let mut history: Vec<Value> = Vec::new();
    for shop in &shops {
        for (session_id, _) in &shop.tables {
            let orders = staff_get(
                &client,
                &format!("/api/v1/sessions/{session_id}/orders?limit={PAGE}"),
            )
            .await;
            let orders = orders["orders"].as_array().unwrap();
            assert!(orders.len() < PAGE, "history fits in one page");
            history.extend(orders.iter().cloned());
        }
    }
    assert_eq!(history.len(), ORDERS, "orders in history = intended orders");
    let by_id: HashMap<&str, &Value> = history
        .iter()
        .map(|o| (o["orderId"].as_str().unwrap(), o))
        .collect();
    assert_eq!(by_id.len(), ORDERS, "no order is in history twice");
    let history_ids: BTreeSet<String> = by_id.keys().map(|id| (*id).to_owned()).collect();
    assert_eq!(
        history_ids, final_ids,
        "history holds exactly the acknowledged orders"
    );
    for (_, body) in &finals {
        let stored = by_id[body["orderId"].as_str().unwrap()];
        for field in [
            "orderId",
            "shopId",
            "sessionId",
            "ticketNumber",
            "clientId",
            "items",
            "note",
            "total",
            "createdAt",
            "tableLabel",
        ] {
            assert_eq!(stored[field], body[field], "{field} of {stored}");
        }
    }

    // Ticket numbers: unique per shop and day; with one day, 1..=n exactly
    // (a crash must not burn or reuse numbers).
    for (s, shop) in shops.iter().enumerate() {
        let mut tickets: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for order in history
            .iter()
            .filter(|o| o["shopId"] == shop.shop_id.as_str())
        {
            let day = order["createdAt"].as_str().unwrap()[..10].to_owned();
            tickets
                .entry(day)
                .or_default()
                .push(order["ticketNumber"].as_i64().unwrap());
        }
        for numbers in tickets.values_mut() {
            numbers.sort_unstable();
            let distinct: BTreeSet<_> = numbers.iter().collect();
            assert_eq!(
                distinct.len(),
                numbers.len(),
                "shop {s}: a ticket number was reused"
            );
        }
        if tickets.len() == 1 {
            let numbers = tickets.values().next().unwrap();
            let expected: Vec<i64> = (1..=numbers.len() as i64).collect();
            assert_eq!(numbers, &expected, "shop {s}: tickets are not 1..=n");
        }
    }

    // --- Stock = initial − ordered units; the op log accounts for every unit.
    for (s, shop) in shops.iter().enumerate() {
        let ours = || orders.iter().filter(move |o| o.shop == s);
        let curry_units: i64 = ours().map(|o| o.curry_units).sum();
        let cheese_units: i64 = ours().map(|o| o.cheese_units).sum();
        let ordered_in_shop = ours().count();
        let inventory = staff_get(
            &client,
            &format!("/api/v1/shops/{}/inventory", shop.shop_id),
        )
        .await;
        let stock_of = |id: &str| -> Value {
            inventory["entries"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["itemId"] == id)
                .map_or(Value::Null, |e| e["stock"].clone())
        };
        assert_eq!(
            stock_of(&shop.curry),
            INITIAL_STOCK - curry_units,
            "shop {s} curry"
        );
        assert_eq!(
            stock_of(&shop.cheese),
            INITIAL_STOCK - cheese_units,
            "shop {s} cheese"
        );
        for untracked in [&shop.soup, &shop.beer, &shop.egg] {
            assert_eq!(
                stock_of(untracked),
                Value::Null,
                "untracked stays untracked"
            );
        }

        let log = staff_get(
            &client,
            &format!("/api/v1/shops/{}/inventory/log?limit={PAGE}", shop.shop_id),
        )
        .await;
        let log = log["entries"].as_array().unwrap();
        assert!(log.len() < PAGE, "shop {s}: the whole log fits in one page");
        for (item, units, orders_with_it) in [
            (&shop.curry, curry_units, ordered_in_shop),
            (
                &shop.cheese,
                cheese_units,
                ours().filter(|o| o.cheese_units > 0).count(),
            ),
        ] {
            let rows: Vec<&Value> = log
                .iter()
                .filter(|e| e["itemId"] == item.as_str())
                .collect();
            let delta: i64 = rows.iter().map(|e| e["delta"].as_i64().unwrap()).sum();
            assert_eq!(
                delta,
                INITIAL_STOCK - units,
                "shop {s}: log deltas = stock change"
            );
            let order_rows: Vec<&&Value> =
                rows.iter().filter(|e| e["operation"] == "order").collect();
            assert_eq!(
                order_rows.len(),
                orders_with_it,
                "shop {s}: one log row per order"
            );
            let logged: BTreeSet<&str> = order_rows
                .iter()
                .map(|e| e["orderId"].as_str().expect("an order row names its order"))
                .collect();
            assert_eq!(
                logged.len(),
                orders_with_it,
                "shop {s}: an order logged twice"
            );
            assert!(logged.iter().all(|id| final_ids.contains(*id)));
            for row in &rows {
                assert_eq!(
                    row["stockAfter"].as_i64().unwrap() - row["stockBefore"].as_i64().unwrap_or(0),
                    row["delta"].as_i64().unwrap(),
                    "shop {s}: {row}"
                );
            }
            // Newest first: the newest row ends at the current stock.
            assert_eq!(rows[0]["stockAfter"], INITIAL_STOCK - units, "shop {s}");
        }

        // --- Audit: one ACCEPTED row per order, one REPLAYED row per replay.
        let audit = staff_get(
            &client,
            &format!("/api/v1/shops/{}/audit?limit={PAGE}", shop.shop_id),
        )
        .await;
        let audit = audit["entries"].as_array().unwrap();
        assert!(
            audit.len() < PAGE,
            "shop {s}: the whole audit fits in one page"
        );
        let mut accepted: BTreeMap<&str, usize> = BTreeMap::new();
        let mut replayed = 0;
        for entry in audit {
            match entry["code"].as_str().unwrap() {
                "ACCEPTED" => {
                    *accepted
                        .entry(entry["orderId"].as_str().unwrap())
                        .or_default() += 1;
                }
                "REPLAYED" => {
                    assert!(final_ids.contains(entry["orderId"].as_str().unwrap()));
                    replayed += 1;
                }
                other => panic!("shop {s}: unexpected audit row {other}: {entry}"),
            }
        }
        let shop_ids: BTreeSet<&str> = history
            .iter()
            .filter(|o| o["shopId"] == shop.shop_id.as_str())
            .map(|o| o["orderId"].as_str().unwrap())
            .collect();
        assert_eq!(
            accepted.keys().copied().collect::<BTreeSet<_>>(),
            shop_ids,
            "shop {s}: an ACCEPTED audit row for exactly each order"
        );
        assert!(
            accepted.values().all(|&n| n == 1),
            "shop {s}: an order accepted twice"
        );
        assert_eq!(
            replayed, replays_after_restart[s],
            "shop {s}: one REPLAYED row per replay"
        );
    }

    server.terminate();
    let replayed_total: usize = replays_after_restart.iter().sum();
    eprintln!(
        "crash test: at the kill {acknowledged} acknowledged, {unanswered} unanswered, {unsent} \
         unsent; after the restart {replayed_total} replayed ({} committed but never answered); \
         {:.1} s",
        replayed_total - acknowledged,
        started.elapsed().as_secs_f64()
    );
}

/// A kitchen printer that takes a ticket's bytes and answers the status
/// request after them only once told to: until then it holds the
/// connection, as one that jammed mid-ticket would.
struct StallingPrinter {
    address: String,
    received: Arc<Mutex<Vec<u8>>>,
    answering: Arc<AtomicBool>,
}

impl StallingPrinter {
    async fn start() -> StallingPrinter {
        use ordergate_server::printing::escpos::{STATUS_ONLINE, STATUS_REQUEST};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let received: Arc<Mutex<Vec<u8>>> = Arc::default();
        let answering = Arc::new(AtomicBool::new(false));
        let (sink, answer) = (Arc::clone(&received), Arc::clone(&answering));
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let (sink, answer) = (Arc::clone(&sink), Arc::clone(&answer));
                tokio::spawn(async move {
                    let mut bytes = Vec::new();
                    let mut buffer = [0u8; 4096];
                    while !bytes.ends_with(&STATUS_REQUEST) {
                        match stream.read(&mut buffer).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => bytes.extend_from_slice(&buffer[..n]),
                        }
                    }
                    sink.lock().unwrap().extend_from_slice(&bytes);
                    if answer.load(Ordering::SeqCst) {
                        let _ = stream.write_all(&[STATUS_ONLINE]).await;
                    } else {
                        // Held until the server goes away.
                        let _ = stream.read(&mut buffer).await;
                    }
                });
            }
        });
        StallingPrinter {
            address,
            received,
            answering,
        }
    }

    /// The tickets once `count` have come out, within 30 s.
    async fn tickets(&self, count: usize) -> Vec<Vec<String>> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let bytes = self.received.lock().unwrap().clone();
            let printout = ordergate_server::printing::escpos::decode(&bytes);
            if printout.tickets.len() >= count {
                return printout.tickets;
            }
            assert!(Instant::now() < deadline, "{count} tickets: {printout:#?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// SIGKILLed after a ticket's bytes reached the printer and before the
/// printer confirmed them: the restarted server cannot know whether it
/// printed, so it prints it again headed as a possible repeat — and then
/// nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_print_prints_the_ticket_again_marked_as_a_possible_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("og.db").display());
    let printer = StallingPrinter::start().await;
    let mut server = Server::start(&database);
    let client = Client::new(server.base.clone(), Some(TOKEN.into()));
    let shop = setup_shop(&client, 0).await;
    let added = client
        .staff_send(
            reqwest::Method::POST,
            &format!("/api/v1/shops/{}/printers", shop.shop_id),
            &json!({"name": "Pass", "address": printer.address}),
            None,
        )
        .await
        .expect("add a printer");
    assert_eq!(added.status, 201, "{}", added.body);
    let (session_id, _) = &shop.tables[0];
    let ordered = client
        .staff_send(
            reqwest::Method::POST,
            &format!("/api/v1/sessions/{session_id}/staff-orders"),
            &json!({"items": [{"menuItemId": shop.soup, "quantity": 2}]}),
            Some(&Uuid::new_v4().to_string()),
        )
        .await
        .expect("a staff order");
    assert_eq!(ordered.status, 201, "{}", ordered.body);
    let heading = format!("#{}  T0", ordered.body["ticketNumber"]);

    let first = printer.tickets(1).await;
    server.sigkill();
    server.reap();
    printer.answering.store(true, Ordering::SeqCst);
    let server = Server::start(&database);
    let printed = printer.tickets(2).await;
    assert!(first[0].contains(&heading), "{first:?}");
    assert!(!first[0].iter().any(|line| line.contains("REPRINT")));
    assert_eq!(
        printed[1][0], "*** REPRINT - may be a repeat ***",
        "{printed:?}"
    );
    assert!(printed[1].contains(&heading));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(printer.tickets(2).await.len(), 2, "and nothing more");
    server.terminate();
}
