//! The real server: in this process (throughput and latency figures) or as a
//! child process (the memory figure, so that its resident memory is its
//! own), shops seeded over the API, and its metrics read back.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use anyhow::{Context, bail};
use ordergate_server::{Settings, open_store, serve};
use reqwest::{Client, RequestBuilder, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};
use tokio::sync::oneshot;
use uuid::Uuid;

use crate::Args;

pub const STAFF_TOKEN: &str = "bench-staff-token";
/// Stock of each tracked item: the most the server allows, far more than a
/// run orders.
const TRACKED_STOCK: i64 = 1_000_000;

/// The server's settings for the bench: a SQLite file at its default
/// durability, the duplicate-payload, cooldown and per-table order rate
/// rules off (each bench client orders as fast as it can, which those rules
/// exist to refuse).
fn settings(database_url: String) -> Settings {
    let mut settings = Settings::new(database_url);
    settings.staff_token = Some(STAFF_TOKEN.into());
    settings.client_cooldown_ms = 0;
    settings.duplicate_window_secs = 0;
    settings.session_order_limit = 0;
    settings
}

fn sqlite_url(database: &Path) -> String {
    format!("sqlite://{}", database.display())
}

/// `ordergate serve` in this process, on port 0.
pub struct BenchServer {
    pub base: String,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl BenchServer {
    pub async fn start(database: &Path) -> anyhow::Result<BenchServer> {
        Self::start_url(sqlite_url(database)).await
    }

    /// The server on the database `url` names.
    pub async fn start_url(url: String) -> anyhow::Result<BenchServer> {
        let settings = settings(url);
        let store = open_store(&settings).await?;
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        let base = format!("http://{}", listener.local_addr()?);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve(settings, store, listener, async {
            let _ = stopped.await;
        }));
        Ok(BenchServer { base, stop, task })
    }

    pub async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.task.await?
    }
}

/// The hidden `--serve-child` mode: the same `serve` the `ordergate` binary
/// runs, on port 0, until standard input closes (so it never outlives the
/// bench). `serve` prints the address it listens on.
pub async fn serve_child(database_url: String) -> anyhow::Result<()> {
    let settings = settings(database_url);
    let store = open_store(&settings).await?;
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    serve(settings, store, listener, async {
        let mut sink = Vec::new();
        let _ = tokio::io::stdin().read_to_end(&mut sink).await;
    })
    .await
}

/// A server in its own process.
pub struct ChildServer {
    pub base: String,
    pub pid: u32,
    /// What runs, for the report.
    pub what: String,
    child: Child,
}

impl ChildServer {
    /// Runs `--server-bin`, else `ordergate` beside this binary when it is
    /// newer than every source it was built from, else this binary in its
    /// server mode (the same server code as this build, always current).
    pub async fn start(args: &Args, database: &Path) -> anyhow::Result<ChildServer> {
        let url = sqlite_url(database);
        let this = std::env::current_exe().context("locating this binary")?;
        let sibling = this.with_file_name("ordergate");
        let (binary, why) = match &args.server_bin {
            Some(bin) => (Some(bin.clone()), "--server-bin".to_owned()),
            None => match up_to_date(&sibling) {
                Ok(()) => (Some(sibling.clone()), "up to date".to_owned()),
                Err(why) => (None, why),
            },
        };
        let mut command;
        let what;
        match binary {
            Some(bin) => {
                command = Command::new(&bin);
                command
                    .args(["serve", "--listen", "127.0.0.1:0", "--database", &url])
                    .args(["--staff-token", STAFF_TOKEN])
                    .args(["--client-cooldown-ms", "0", "--duplicate-window-secs", "0"])
                    .env("ORDERGATE_SESSION_ORDER_LIMIT", "0")
                    .env("RUST_LOG", "warn")
                    .stdin(Stdio::null());
                what = format!("{} serve ({why})", bin.display());
            }
            None => {
                command = Command::new(&this);
                command.args(["--serve-child", &url]).stdin(Stdio::piped());
                what = format!(
                    "{} --serve-child, the same ordergate_server::serve ({}: {why})",
                    this.display(),
                    sibling.display()
                );
            }
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {what}"))?;
        let pid = child.id().context("the child's pid")?;
        let stdout = child.stdout.take().context("the child's stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let base = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await? {
                if let Some(address) = line.trim().strip_prefix("listening on ") {
                    return Ok(address.to_owned());
                }
            }
            bail!("the server exited before listening")
        })
        .await
        .context("the server did not start listening in 30 s")??;
        // Keep its output flowing so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(ChildServer {
            base,
            pid,
            what,
            child,
        })
    }

    pub async fn stop(mut self) -> anyhow::Result<()> {
        self.child.kill().await?;
        Ok(())
    }
}

/// Whether `binary` exists and is newer than every file its dep-info
/// (`binary.d`, written by cargo) lists; else why not.
fn up_to_date(binary: &Path) -> Result<(), String> {
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified());
    let built = modified(binary).map_err(|_| "not built".to_owned())?;
    let dep_info = std::fs::read_to_string(binary.with_extension("d"))
        .map_err(|_| "no dep-info beside it".to_owned())?;
    let sources = dep_info
        .split_once(": ")
        .map_or("", |(_, deps)| deps)
        .split_whitespace()
        .map(PathBuf::from);
    for source in sources {
        let changed = modified(&source).unwrap_or(SystemTime::now());
        if changed > built {
            return Err(format!("older than {}", source.display()));
        }
    }
    Ok(())
}

/// What to seed.
pub struct ShopSpec {
    name: String,
    items: usize,
    tracked: Tracked,
    toppings: usize,
    sessions: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tracked {
    /// Every other item and the first topping.
    EveryOther,
    /// Every item but the first.
    AllButFirst,
    All,
    None,
}

impl ShopSpec {
    /// The orders, menu, latency and fan-out shop: `--items` items (every
    /// other one stock-tracked), two toppings (one tracked), `--sessions`
    /// open tables.
    pub fn main(args: &Args) -> ShopSpec {
        ShopSpec {
            name: "Bench Diner".into(),
            items: args.items,
            tracked: Tracked::EveryOther,
            toppings: 2,
            sessions: args.sessions,
        }
    }

    /// The hot-item shop: one item per client, every one tracked, no toppings.
    pub fn hot(args: &Args) -> ShopSpec {
        ShopSpec {
            name: "Bench Hot Items".into(),
            items: args.clients,
            tracked: Tracked::All,
            toppings: 0,
            sessions: args.sessions,
        }
    }

    /// The PostgreSQL one-shop figures' shop: an untracked item and a
    /// tracked one, one table per client.
    pub fn one_shop(args: &Args) -> ShopSpec {
        ShopSpec {
            name: "Bench One Shop".into(),
            items: 2,
            tracked: Tracked::AllButFirst,
            toppings: 0,
            sessions: args.clients,
        }
    }

    /// The memory figure's shop, and each of the PostgreSQL spread
    /// figure's: one untracked item, one table.
    pub fn small() -> ShopSpec {
        ShopSpec {
            name: "Bench Idle".into(),
            items: 1,
            tracked: Tracked::None,
            toppings: 0,
            sessions: 1,
        }
    }
}

/// A seeded shop: its sessions (id, pin) and orderable items.
#[derive(Clone)]
pub struct Shop {
    pub shop_id: String,
    pub sessions: Vec<(String, String)>,
    pub items: Vec<String>,
    pub toppings: Vec<String>,
}

pub async fn seed(base: &str, spec: &ShopSpec) -> anyhow::Result<Shop> {
    let client = Client::new();
    let shop = staff(
        client.post(format!("{base}/api/v1/shops")),
        json!({"name": spec.name, "currency": "JPY", "timezone": "UTC"}),
        StatusCode::CREATED,
    )
    .await?;
    let shop_id = shop["shopId"].as_str().context("shopId")?.to_owned();
    let toppings: Vec<String> = (0..spec.toppings)
        .map(|_| Uuid::new_v4().to_string())
        .collect();
    let items: Vec<String> = (0..spec.items)
        .map(|_| Uuid::new_v4().to_string())
        .collect();
    let catalog = json!({
        "toppings": toppings.iter().enumerate().map(|(i, id)| json!({
            "toppingId": id, "name": format!("Topping {i}"), "price": 100
        })).collect::<Vec<_>>(),
        "items": items.iter().enumerate().map(|(i, id)| json!({
            "menuItemId": id, "name": format!("Item {i}"), "category": "Mains",
            "price": 500 + 10 * i, "toppingIds": toppings, "maxToppings": toppings.len().min(2)
        })).collect::<Vec<_>>(),
    });
    staff(
        client.put(format!("{base}/api/v1/shops/{shop_id}/catalog")),
        catalog,
        StatusCode::OK,
    )
    .await?;
    let tracked: Vec<&String> = match spec.tracked {
        Tracked::EveryOther => items.iter().step_by(2).chain(toppings.first()).collect(),
        Tracked::All => items.iter().collect(),
        Tracked::AllButFirst => items.iter().skip(1).collect(),
        Tracked::None => Vec::new(),
    };
    for id in tracked {
        staff(
            client.put(format!("{base}/api/v1/shops/{shop_id}/inventory/{id}")),
            json!({"stock": TRACKED_STOCK}),
            StatusCode::OK,
        )
        .await?;
    }
    let mut sessions = Vec::new();
    for t in 0..spec.sessions {
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
        shop_id,
        sessions,
        items,
        toppings,
    })
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

/// The sum of the server's `name` samples labelled with `shop_id`, from its
/// `/metrics` (0 when there is none yet).
pub async fn metric(base: &str, name: &str, shop_id: &str) -> anyhow::Result<f64> {
    let text = Client::new()
        .get(format!("{base}/metrics"))
        .bearer_auth(STAFF_TOKEN)
        .send()
        .await?
        .error_for_status()?
        .text()
        .await?;
    let label = format!("shop_id=\"{shop_id}\"");
    let mut sum = 0.0;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(name) else {
            continue;
        };
        if !(rest.starts_with('{') && rest.contains(&label)) {
            continue;
        }
        let value = rest.rsplit_once(' ').map_or("", |(_, v)| v);
        sum += value
            .parse::<f64>()
            .with_context(|| format!("metric line {line:?}"))?;
    }
    Ok(sum)
}
