//! `ordergate-bench`: measures ordergate against references taken in the
//! same run on the same machine, and prints the ratios DESIGN.md sets
//! targets for ("Performance and scale").
//!
//! Figures:
//! - raw SQLite: single-row `BEGIN IMMEDIATE` insert transactions/s, WAL,
//!   `synchronous=FULL`, one connection, one transaction after another (what
//!   a server without group commit gets: one fsync per write);
//! - bare axum: requests/s of a tiny JSON endpoint in this process;
//! - new guest orders/s through the real server, each with a fresh key;
//! - replayed orders/s: each client repeats one key it already placed.
//!
//! The HTTP figures are driven by the same closed-loop generator: N workers,
//! each with its own keep-alive connection, sending the next request as soon
//! as the previous answer is read, for a fixed time after a warm-up.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use axum::Json;
use axum::routing::post;
use clap::Parser;
use hdrhistogram::Histogram;
use ordergate_server::{Settings, open_store, serve};
use reqwest::{Client, RequestBuilder, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use uuid::Uuid;

const STAFF_TOKEN: &str = "bench-staff-token";
/// Stock of each tracked item: the most the server allows, far more than a
/// run orders.
const TRACKED_STOCK: i64 = 1_000_000;

#[derive(Parser, Debug)]
#[command(name = "ordergate-bench", version, about)]
struct Args {
    /// Measured seconds per figure.
    #[arg(long, default_value_t = 5.0)]
    duration_secs: f64,

    /// Unmeasured seconds before each figure (connections, caches, JIT of the page cache).
    #[arg(long, default_value_t = 1.0)]
    warmup_secs: f64,

    /// Concurrent clients of the HTTP figures.
    #[arg(long, default_value_t = 64)]
    clients: usize,

    /// Table sessions the new orders are spread over.
    #[arg(long, default_value_t = 16)]
    sessions: usize,

    /// Menu items the new orders are spread over (half of them stock-tracked).
    #[arg(long, default_value_t = 8)]
    items: usize,

    /// Directory for the database files (a temporary directory is made inside
    /// it and removed after). Use a real disk: on tmpfs an fsync costs nothing
    /// and the durability figures mean little.
    #[arg(long)]
    dir: Option<PathBuf>,

    /// Exit with status 1 when a target is missed.
    #[arg(long)]
    strict: bool,
}

/// What one measurement produced.
struct Figure {
    /// Completed operations per second.
    rate: f64,
    /// Latency in microseconds.
    latency: Histogram<u64>,
    /// Operations that did not get the expected answer (excluded from `rate`).
    errors: u64,
    /// The first unexpected answer, to show.
    first_error: Option<String>,
}

impl Figure {
    fn p(&self, quantile: f64) -> String {
        if self.latency.is_empty() {
            return "-".into();
        }
        let micros = self.latency.value_at_quantile(quantile);
        format!("{:.2} ms", micros as f64 / 1000.0)
    }
}

fn histogram() -> Histogram<u64> {
    // 1 µs to 60 s at 3 significant digits.
    Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid histogram bounds")
}

fn main() -> ExitCode {
    let args = Args::parse();
    let strict = args.strict;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    match runtime.block_on(run(args)) {
        Ok(met) if met || !strict => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> anyhow::Result<bool> {
    ensure!(args.clients > 0, "--clients must be at least 1");
    ensure!(
        args.sessions > 0 && args.items > 0,
        "--sessions and --items must be at least 1"
    );
    ensure!(
        args.duration_secs > 0.0 && args.warmup_secs >= 0.0,
        "--duration-secs must be positive"
    );
    let parent = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let dir = tempfile::Builder::new()
        .prefix("ordergate-bench-")
        .tempdir_in(&parent)
        .with_context(|| format!("cannot make a directory in {}", parent.display()))?;
    let duration = Duration::from_secs_f64(args.duration_secs);
    let warmup = Duration::from_secs_f64(args.warmup_secs);

    print_machine(dir.path(), &args);

    eprintln!("[1/4] raw SQLite BEGIN IMMEDIATE single-row inserts, one connection …");
    let raw = {
        let path = dir.path().join("raw.db");
        tokio::task::spawn_blocking(move || raw_sqlite(&path, warmup, duration)).await??
    };

    eprintln!("[2/4] bare axum JSON endpoint, {} clients …", args.clients);
    let bare = bare_endpoint(&args, warmup, duration).await?;

    let server = BenchServer::start(&dir.path().join("ordergate.db")).await?;
    let shop = Arc::new(server.seed(&args).await?);
    eprintln!("[3/4] new guest orders, {} clients …", args.clients);
    let new_orders = new_orders(&args, &server.base, &shop, warmup, duration).await?;
    eprintln!("[4/4] replayed orders, {} clients …", args.clients);
    let replays = replays(&args, &server.base, &shop, warmup, duration).await?;
    server.stop().await?;

    Ok(report(&raw, &bare, &new_orders, &replays))
}

fn print_machine(dir: &Path, args: &Args) {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let fs = filesystem_of(dir).unwrap_or_else(|| "unknown".into());
    println!(
        "ordergate-bench: {cpus} CPUs ({model}); database files in {} ({fs})",
        dir.display()
    );
    println!(
        "  {} clients, {} sessions, {} items; {:.1} s warm-up + {:.1} s measured per figure",
        args.clients, args.sessions, args.items, args.warmup_secs, args.duration_secs
    );
    if fs == "tmpfs" || fs == "ramfs" {
        println!("  warning: {fs} makes fsync free; pass --dir on a real disk for durable figures");
    }
    println!();
}

/// The type of the filesystem mounted deepest above `path` (Linux only).
fn filesystem_of(path: &Path) -> Option<String> {
    let path = path.canonicalize().ok()?;
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let (_, point, kind) = (fields.next()?, fields.next()?, fields.next()?);
            path.starts_with(point)
                .then(|| (point.len(), kind.to_owned()))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, kind)| kind)
}

// ---------------------------------------------------------------------------
// Reference 1: raw SQLite.

/// Single-row insert transactions on one connection, one after another, at
/// the server's durability (WAL, `synchronous=FULL`): every commit waits for
/// its own fsync, which is what serving 64 clients costs a server that does
/// not group commits (SQLite has one writer; more connections only queue on
/// its lock).
fn raw_sqlite(path: &Path, warmup: Duration, duration: Duration) -> anyhow::Result<Figure> {
    let conn = rusqlite::Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "wal")?;
    conn.pragma_update(None, "synchronous", "full")?;
    conn.execute_batch(
        "create table orders (
             id integer primary key,
             idempotency_key text not null unique,
             body text not null
         )",
    )?;
    let body = json!({"items": [{"menuItemId": Uuid::new_v4(), "quantity": 1, "toppingIds": []}],
                      "note": "bench"})
    .to_string();
    let insert_one = || -> rusqlite::Result<()> {
        conn.execute_batch("begin immediate")?;
        conn.prepare_cached("insert into orders (idempotency_key, body) values (?1, ?2)")?
            .execute(rusqlite::params![Uuid::new_v4().to_string(), body])?;
        conn.execute_batch("commit")
    };
    let start = Instant::now();
    while start.elapsed() < warmup {
        insert_one()?;
    }
    let mut latency = histogram();
    let mut done = 0u64;
    let start = Instant::now();
    while start.elapsed() < duration {
        let began = Instant::now();
        insert_one()?;
        latency.saturating_record(micros(began.elapsed()));
        done += 1;
    }
    Ok(Figure {
        rate: done as f64 / start.elapsed().as_secs_f64(),
        latency,
        errors: 0,
        first_error: None,
    })
}

fn micros(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_micros())
        .unwrap_or(u64::MAX)
        .max(1)
}

// ---------------------------------------------------------------------------
// The load generator.

/// Builds worker `w`'s `n`th request.
type MakeRequest = Arc<dyn Fn(&Client, usize, u64) -> RequestBuilder + Send + Sync>;
/// Judges an answer: `Err` describes an unexpected one.
type Check = fn(StatusCode, &reqwest::header::HeaderMap, &[u8]) -> Result<(), String>;

/// Closed loop: `clients` workers, each with its own connection, each sending
/// its next request when the previous answer has been read in full. Counts
/// the answers that arrive within the measured window.
async fn drive(
    clients: usize,
    warmup: Duration,
    duration: Duration,
    make: MakeRequest,
    check: Check,
) -> anyhow::Result<Figure> {
    let measure_from = Instant::now() + warmup;
    let until = measure_from + duration;
    let mut workers = Vec::with_capacity(clients);
    for w in 0..clients {
        let make = Arc::clone(&make);
        let client = Client::builder()
            .pool_max_idle_per_host(1)
            .timeout(Duration::from_secs(30))
            .build()?;
        workers.push(tokio::spawn(async move {
            let mut latency = histogram();
            let (mut done, mut errors, mut first_error) = (0u64, 0u64, None);
            let mut n = 0u64;
            while Instant::now() < until {
                let request = make(&client, w, n);
                n += 1;
                let began = Instant::now();
                let outcome = match request.send().await {
                    Ok(response) => {
                        let status = response.status();
                        let headers = response.headers().clone();
                        match response.bytes().await {
                            Ok(body) => check(status, &headers, &body),
                            Err(e) => Err(format!("reading the body: {e}")),
                        }
                    }
                    Err(e) => Err(format!("sending: {e}")),
                };
                let ended = Instant::now();
                if began < measure_from || ended > until {
                    continue;
                }
                match outcome {
                    Ok(()) => {
                        latency.saturating_record(micros(ended - began));
                        done += 1;
                    }
                    Err(e) => {
                        errors += 1;
                        first_error.get_or_insert(e);
                    }
                }
            }
            (latency, done, errors, first_error)
        }));
    }
    let mut latency = histogram();
    let (mut done, mut errors, mut first_error) = (0u64, 0u64, None);
    for worker in workers {
        let (h, d, e, first) = worker.await?;
        latency.add(&h)?;
        done += d;
        errors += e;
        if first_error.is_none() {
            first_error = first;
        }
    }
    Ok(Figure {
        rate: done as f64 / duration.as_secs_f64(),
        latency,
        errors,
        first_error,
    })
}

// ---------------------------------------------------------------------------
// Reference 2: a bare axum JSON endpoint.

/// The same request shape as an order (POST, JSON body, the same headers),
/// answered by an axum handler that parses the body and returns a small JSON
/// object: the HTTP and JSON cost alone, with nothing behind it.
async fn bare_endpoint(
    args: &Args,
    warmup: Duration,
    duration: Duration,
) -> anyhow::Result<Figure> {
    let app = axum::Router::new().route(
        "/echo",
        post(|Json(body): Json<Value>| async move {
            Json(json!({"ok": true, "lines": body["items"].as_array().map_or(0, Vec::len)}))
        }),
    );
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let url = format!("http://{}/echo", listener.local_addr()?);
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
    });
    let body = json!({"items": [{"menuItemId": Uuid::new_v4(), "quantity": 1, "toppingIds": []}],
                      "note": ""});
    let make: MakeRequest = Arc::new(move |client, w, _| {
        client
            .post(&url)
            .header("Idempotency-Key", Uuid::new_v4().to_string())
            .header("X-Session-PIN", "123456")
            .header("X-Client-Id", format!("bench-{w}"))
            .json(&body)
    });
    let figure = drive(args.clients, warmup, duration, make, |status, _, body| {
        if status == StatusCode::OK && body.starts_with(b"{\"") {
            Ok(())
        } else {
            Err(format!("{status} {}", String::from_utf8_lossy(body)))
        }
    })
    .await;
    let _ = stop.send(());
    server.await??;
    figure
}

// ---------------------------------------------------------------------------
// The real server.

struct BenchServer {
    base: String,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

/// A seeded shop: its sessions (id, pin) and orderable items.
struct Shop {
    sessions: Vec<(String, String)>,
    items: Vec<String>,
    toppings: Vec<String>,
}

impl BenchServer {
    /// `ordergate serve` in this process: a fresh SQLite file at its default
    /// durability, the duplicate-payload and cooldown rules off (each bench
    /// client orders as fast as it can, which those rules exist to refuse).
    async fn start(database: &Path) -> anyhow::Result<BenchServer> {
        let mut settings = Settings::new(format!("sqlite://{}", database.display()));
        settings.staff_token = Some(STAFF_TOKEN.into());
        settings.client_cooldown_ms = 0;
        settings.duplicate_window_secs = 0;
        let store = open_store(&settings).await?;
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        let base = format!("http://{}", listener.local_addr()?);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve(settings, store, listener, async {
            let _ = stopped.await;
        }));
        Ok(BenchServer { base, stop, task })
    }

    async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.task.await?
    }

    /// A shop with `items` items (every other one stock-tracked), two
    /// toppings (one tracked) and `sessions` open tables.
    async fn seed(&self, args: &Args) -> anyhow::Result<Shop> {
        let client = Client::new();
        let base = &self.base;
        let shop = staff(
            client.post(format!("{base}/api/v1/shops")),
            json!({"name": "Bench Diner", "currency": "JPY", "timezone": "UTC"}),
            StatusCode::CREATED,
        )
        .await?;
        let shop_id = shop["shopId"].as_str().context("shopId")?.to_owned();
        let toppings: Vec<String> = (0..2).map(|_| Uuid::new_v4().to_string()).collect();
        let items: Vec<String> = (0..args.items)
            .map(|_| Uuid::new_v4().to_string())
            .collect();
        let catalog = json!({
            "toppings": toppings.iter().enumerate().map(|(i, id)| json!({
                "toppingId": id, "name": format!("Topping {i}"), "price": 100
            })).collect::<Vec<_>>(),
            "items": items.iter().enumerate().map(|(i, id)| json!({
                "menuItemId": id, "name": format!("Item {i}"), "category": "Mains",
                "price": 500 + 10 * i, "toppingIds": toppings, "maxToppings": 2
            })).collect::<Vec<_>>(),
        });
        staff(
            client.put(format!("{base}/api/v1/shops/{shop_id}/catalog")),
            catalog,
            StatusCode::OK,
        )
        .await?;
        let tracked = items.iter().step_by(2).chain(toppings.first());
        for id in tracked {
            staff(
                client.put(format!("{base}/api/v1/shops/{shop_id}/inventory/{id}")),
                json!({"stock": TRACKED_STOCK}),
                StatusCode::OK,
            )
            .await?;
        }
        let mut sessions = Vec::new();
        for t in 0..args.sessions {
            let session = staff(
                client.post(format!("{base}/api/v1/shops/{shop_id}/sessions")),
                json!({"tableLabel": format!("B{t}")}),
                StatusCode::CREATED,
            )
            .await?;
            sessions.push((
                session["sessionId"]
                    .as_str()
                    .context("sessionId")?
                    .to_owned(),
                session["pin"].as_str().context("pin")?.to_owned(),
            ));
        }
        Ok(Shop {
            sessions,
            items,
            toppings,
        })
    }
}

async fn staff(request: RequestBuilder, body: Value, expect: StatusCode) -> anyhow::Result<Value> {
    let response = request.bearer_auth(STAFF_TOKEN).json(&body).send().await?;
    let status = response.status();
    let text = response.text().await?;
    if status != expect {
        bail!("seeding: expected {expect}, got {status}: {text}");
    }
    Ok(serde_json::from_str(&text)?)
}

/// Worker `w`'s table and the `n`th cart it orders: one or two lines, items
/// rotating through the menu, every third line with a topping.
fn cart(shop: &Shop, w: usize, n: u64) -> (String, String, Value) {
    let (session, pin) = shop.sessions[w % shop.sessions.len()].clone();
    let pick = w + n as usize;
    let first = &shop.items[pick % shop.items.len()];
    let toppings: Vec<&String> = if pick.is_multiple_of(3) {
        vec![&shop.toppings[pick % shop.toppings.len()]]
    } else {
        vec![]
    };
    let mut lines = vec![json!({"menuItemId": first, "quantity": 1, "toppingIds": toppings})];
    if pick.is_multiple_of(2) {
        let second = &shop.items[(pick + 1) % shop.items.len()];
        lines.push(json!({"menuItemId": second, "quantity": 2}));
    }
    (session, pin, json!({"items": lines, "note": ""}))
}

fn order_request(
    client: &Client,
    base: &str,
    session: &str,
    pin: &str,
    w: usize,
    key: Uuid,
    body: &Value,
) -> RequestBuilder {
    client
        .post(format!("{base}/api/v1/sessions/{session}/orders"))
        .header("Idempotency-Key", key.to_string())
        .header("X-Session-PIN", pin)
        .header("X-Client-Id", format!("bench-{w}"))
        .json(body)
}

fn placed(
    status: StatusCode,
    headers: &reqwest::header::HeaderMap,
    body: &[u8],
    replay: bool,
) -> Result<(), String> {
    let replayed = headers
        .get("idempotent-replayed")
        .is_some_and(|v| v == "true");
    if status == StatusCode::CREATED && replayed == replay {
        Ok(())
    } else {
        Err(format!(
            "{status} (replayed: {replayed}) {}",
            String::from_utf8_lossy(body)
        ))
    }
}

/// (c) Every request a new order with a fresh key.
async fn new_orders(
    args: &Args,
    base: &str,
    shop: &Arc<Shop>,
    warmup: Duration,
    duration: Duration,
) -> anyhow::Result<Figure> {
    let (base, shop) = (base.to_owned(), Arc::clone(shop));
    let make: MakeRequest = Arc::new(move |client, w, n| {
        let (session, pin, body) = cart(&shop, w, n);
        order_request(client, &base, &session, &pin, w, Uuid::new_v4(), &body)
    });
    drive(
        args.clients,
        warmup,
        duration,
        make,
        |status, headers, body| placed(status, headers, body, false),
    )
    .await
}

/// (d) Each client places one order, then sends the same request again and
/// again: every answer is a replay.
async fn replays(
    args: &Args,
    base: &str,
    shop: &Arc<Shop>,
    warmup: Duration,
    duration: Duration,
) -> anyhow::Result<Figure> {
    let client = Client::new();
    let mut placed_once = Vec::with_capacity(args.clients);
    for w in 0..args.clients {
        let (session, pin, body) = cart(shop, w, u64::MAX / 2);
        let key = Uuid::new_v4();
        let response = order_request(&client, base, &session, &pin, w, key, &body)
            .send()
            .await?;
        ensure!(
            response.status() == StatusCode::CREATED,
            "placing the order to replay: {}",
            response.status()
        );
        placed_once.push((session, pin, key, body));
    }
    let base = base.to_owned();
    let make: MakeRequest = Arc::new(move |client, w, _| {
        let (session, pin, key, body) = &placed_once[w];
        order_request(client, &base, session, pin, w, *key, body)
    });
    drive(
        args.clients,
        warmup,
        duration,
        make,
        |status, headers, body| placed(status, headers, body, true),
    )
    .await
}

// ---------------------------------------------------------------------------
// The report.

/// Prints the table; true when every target is met and nothing failed.
fn report(raw: &Figure, bare: &Figure, new_orders: &Figure, replays: &Figure) -> bool {
    println!();
    println!(
        "{:<44} {:>10} {:>9} {:>9} {:>7}  {:<32} {:>6} {:>7}  result",
        "figure", "per s", "p50", "p99", "errors", "reference", "ratio", "target"
    );
    let line = |name: &str, figure: &Figure, reference: Option<(&str, &Figure, f64)>| -> bool {
        let (reference_text, ratio_text, target_text, met) = match reference {
            Some((reference_name, reference, target)) => {
                let ratio = figure.rate / reference.rate;
                let met = ratio >= target && figure.errors == 0;
                (
                    format!("{reference_name} {:.0}/s", reference.rate),
                    format!("{ratio:.2}"),
                    format!(">= {target}"),
                    met,
                )
            }
            None => ("-".into(), "-".into(), "-".into(), figure.errors == 0),
        };
        let result = match (reference.is_some(), met) {
            (true, true) => "PASS",
            (true, false) => "FAIL",
            (false, true) => "reference",
            (false, false) => "ERRORS",
        };
        println!(
            "{:<44} {:>10.0} {:>9} {:>9} {:>7}  {:<32} {:>6} {:>7}  {result}",
            name,
            figure.rate,
            figure.p(0.5),
            figure.p(0.99),
            figure.errors,
            reference_text,
            ratio_text,
            target_text,
        );
        if let Some(e) = &figure.first_error {
            println!("    first error: {e}");
        }
        met
    };
    let mut ok = true;
    ok &= line("raw SQLite BEGIN IMMEDIATE 1-row tx (FULL)", raw, None);
    ok &= line("bare axum JSON endpoint", bare, None);
    ok &= line(
        "new guest orders (SQLite FULL)",
        new_orders,
        Some(("raw SQLite", raw, 0.5)),
    );
    ok &= line(
        "replayed orders (same key)",
        replays,
        Some(("bare axum", bare, 0.5)),
    );
    println!();
    println!(
        "targets from DESIGN.md \"Performance and scale\"; ratios are this run's figure over \
         this run's reference"
    );
    ok
}
