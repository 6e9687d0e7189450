//! What the data-tool tests share: a server in this process, a small HTTP
//! and SSE client, the `ordergate` binary as a child process, and a fresh
//! PostgreSQL schema per test.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use ordergate_server::{Settings, open_store, serve};
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::{Connection, PgConnection};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use uuid::Uuid;

pub const TOKEN: &str = "migrate-test-staff-token";
const URL_VAR: &str = "ORDERGATE_TEST_DATABASE_URL";

/// A server on `database` on a port of its own: in this process, or the
/// `ordergate` binary as a child process.
pub struct Server {
    pub base: String,
    client: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    child: Option<tokio::process::Child>,
}

impl Server {
    /// `ordergate serve` as a child process. (A server stopped inside a
    /// process may leave tasks behind that keep its database open; a
    /// process that exits leaves nothing.)
    pub async fn spawn(database: &str) -> Server {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_ordergate"))
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
            ])
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start ordergate serve");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let base = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(base) = line.strip_prefix("listening on ") {
                    return base.to_owned();
                }
            }
            panic!("ordergate serve exited before listening");
        })
        .await
        .expect("the server printed its `listening on` line");
        // Keep reading, so the server never writes into a closed pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Server {
            base,
            client: reqwest::Client::new(),
            stop: None,
            task: None,
            child: Some(child),
        }
    }

    pub async fn start(database: &str) -> Server {
        let mut settings = Settings::new(database);
        settings.staff_token = Some(TOKEN.into());
        // Guests order in quick succession here; the rules stay on otherwise.
        settings.client_cooldown_ms = 0;
        let store = open_store(&settings).await.expect("open the store");
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve(settings, store, listener, async {
            let _ = stopped.await;
        }));
        Server {
            base,
            client: reqwest::Client::new(),
            stop: Some(stop),
            task: Some(task),
            child: None,
        }
    }

    /// Stops gracefully and waits until the server is gone.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap().unwrap();
        }
        if let Some(mut child) = self.child.take() {
            let pid = child.id().expect("a running server").to_string();
            let sent = tokio::process::Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .await
                .unwrap();
            assert!(sent.success());
            let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
                .await
                .expect("the server stopped on SIGTERM")
                .unwrap();
            assert!(status.success(), "{status}");
        }
    }

    pub fn http(&self) -> Http {
        Http {
            base: self.base.clone(),
            client: self.client.clone(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A response, its body kept as the bytes that came.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub status: u16,
    pub text: String,
    pub location: Option<String>,
    pub replayed: Option<String>,
    pub etag: Option<String>,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    #[track_caller]
    pub fn ok(&self, status: u16) -> Value {
        assert_eq!(self.status, status, "unexpected reply: {}", self.text);
        self.json()
    }
}

/// A request as it can be sent again, to another server.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: Method,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Value>,
}

impl Request {
    pub fn new(method: Method, path: impl Into<String>) -> Request {
        Request {
            method,
            path: path.into(),
            headers: Vec::new(),
            body: None,
        }
    }

    pub fn staff(method: Method, path: impl Into<String>) -> Request {
        Request::new(method, path).header("Authorization", &format!("Bearer {TOKEN}"))
    }

    pub fn header(mut self, name: &str, value: &str) -> Request {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn json(mut self, body: Value) -> Request {
        self.body = Some(body);
        self
    }

    pub fn keyed(self) -> Request {
        self.header("Idempotency-Key", &Uuid::new_v4().to_string())
    }
}

#[derive(Clone)]
pub struct Http {
    pub base: String,
    client: reqwest::Client,
}

impl Http {
    pub async fn send(&self, request: &Request) -> Reply {
        let mut builder = self.client.request(
            request.method.clone(),
            format!("{}{}", self.base, request.path),
        );
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        if let Some(body) = &request.body {
            builder = builder.json(body);
        }
        let response = builder.send().await.expect("request failed");
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let (location, replayed, etag) = (
            header("location"),
            header("idempotent-replayed"),
            header("etag"),
        );
        Reply {
            status: response.status().as_u16(),
            location,
            replayed,
            etag,
            text: response.text().await.unwrap(),
        }
    }

    /// Uploads a photo to the shop; its id.
    pub async fn upload_photo(&self, shop: &str, png: Vec<u8>) -> String {
        let response = self
            .client
            .post(format!("{}/api/v1/shops/{shop}/images", self.base))
            .header("Authorization", format!("Bearer {TOKEN}"))
            .header("Content-Type", "image/png")
            .body(png)
            .send()
            .await
            .expect("upload failed");
        assert_eq!(response.status().as_u16(), 201);
        let body: Value = response.json().await.unwrap();
        body["imageId"].as_str().unwrap().to_owned()
    }

    /// A photo's rendition, as guests get it.
    pub async fn photo(&self, image_id: &str) -> Vec<u8> {
        let response = self
            .client
            .get(format!("{}/images/{image_id}", self.base))
            .send()
            .await
            .expect("request failed");
        assert_eq!(response.status().as_u16(), 200, "photo {image_id}");
        response.bytes().await.unwrap().to_vec()
    }

    pub async fn staff_get(&self, path: &str) -> Reply {
        self.send(&Request::staff(Method::GET, path)).await
    }

    pub async fn staff_put(&self, path: &str, body: Value) -> Reply {
        self.send(&Request::staff(Method::PUT, path).json(body))
            .await
    }

    /// Reads the shop's event stream, resuming after `last_event_id` (sent
    /// as `Last-Event-ID`): until `count` events came and no other follows
    /// soon, or, without a count, until the stream falls quiet.
    pub async fn events_after(
        &self,
        shop: &str,
        last_event_id: i64,
        count: Option<usize>,
    ) -> Vec<Frame> {
        let mut response = self
            .client
            .get(format!("{}/api/v1/shops/{shop}/events", self.base))
            .bearer_auth(TOKEN)
            .header("Last-Event-ID", last_event_id.to_string())
            .send()
            .await
            .expect("open the event stream");
        assert_eq!(response.status(), 200);
        let mut parser = SseParser::default();
        let mut frames = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        let quiet = Duration::from_millis(300);
        let mut last_chunk = Instant::now();
        loop {
            let until = match count {
                Some(count) if frames.len() < count => deadline,
                _ => deadline.min(last_chunk + quiet),
            };
            let wait = until.saturating_duration_since(Instant::now());
            match tokio::time::timeout(wait, response.chunk()).await {
                Ok(Ok(Some(bytes))) => {
                    last_chunk = Instant::now();
                    parser.buf.extend_from_slice(&bytes);
                    frames.extend(parser.frames());
                }
                Ok(Ok(None) | Err(_)) | Err(_) => break,
            }
        }
        frames
    }
}

/// One event as the stream carried it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub id: i64,
    pub event: String,
    pub data: String,
}

#[derive(Default)]
struct SseParser {
    buf: Vec<u8>,
    id: Option<i64>,
    event: Option<String>,
    data: Vec<String>,
}

impl SseParser {
    fn frames(&mut self) -> Vec<Frame> {
        let mut frames = Vec::new();
        while let Some(end) = self.buf.iter().position(|&b| b == b'\n') {
            let raw: Vec<u8> = self.buf.drain(..=end).collect();
            let line = String::from_utf8(raw).unwrap();
            let line = line.trim_end_matches('\n').trim_end_matches('\r');
            if line.is_empty() {
                if let (Some(id), Some(event)) = (self.id.take(), self.event.take()) {
                    frames.push(Frame {
                        id,
                        event,
                        data: std::mem::take(&mut self.data).join("\n"),
                    });
                }
                self.data.clear();
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "id" => self.id = value.parse().ok(),
                "event" => self.event = Some(value.to_owned()),
                "data" => self.data.push(value.to_owned()),
                _ => {}
            }
        }
        frames
    }
}

/// Runs the `ordergate` binary to its end.
pub async fn ordergate(args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_ordergate"))
        .args(args)
        .env("RUST_LOG", "warn")
        .env_remove("ORDERGATE_DATABASE_URL")
        .kill_on_drop(true)
        .output()
        .await
        .expect("run ordergate")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts the command succeeded, showing what it printed if not.
#[track_caller]
pub fn succeeded(output: &Output) -> String {
    assert!(
        output.status.success(),
        "ordergate failed ({}):\n{}\n{}",
        output.status,
        stdout(output),
        stderr(output)
    );
    stdout(output)
}

/// Asserts the command failed; returns stdout and stderr together.
#[track_caller]
pub fn failed(output: &Output) -> String {
    assert!(
        !output.status.success(),
        "ordergate should have failed:\n{}\n{}",
        stdout(output),
        stderr(output)
    );
    format!("{}{}", stdout(output), stderr(output))
}

/// A SQLite database file in a directory of its own.
pub struct SqliteFile {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl SqliteFile {
    pub fn new() -> SqliteFile {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ordergate.db");
        SqliteFile { dir, path }
    }

    pub fn url(&self) -> String {
        sqlite_url(&self.path)
    }
}

pub fn sqlite_url(path: &Path) -> String {
    format!("sqlite://{}", path.display())
}

/// Waits until nothing holds the SQLite file any more (a stopped server's
/// threads close their connections as they wind down).
pub async fn wait_released(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.pragma_update(None, "locking_mode", "exclusive")
            .unwrap();
        let free = conn
            .query_row("select count(*) from sqlite_master", [], |_| Ok(()))
            .is_ok();
        drop(conn);
        if free {
            return;
        }
        assert!(Instant::now() < deadline, "the database stayed in use");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The test database's URL, or `None` after telling stderr why the test
/// is skipped.
pub fn postgres_url() -> Option<String> {
    match std::env::var(URL_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            let test = std::thread::current()
                .name()
                .unwrap_or("a PostgreSQL test")
                .to_owned();
            // Straight to stderr: the harness captures `eprintln!` of
            // passing tests, and a skip must not pass silently.
            let _ = writeln!(
                std::io::stderr(),
                "{test}: skipped: set {URL_VAR}=postgres://postgres@127.0.0.1:5432/test \
                 to run the migration to PostgreSQL"
            );
            None
        }
    }
}

/// The Citus coordinator `ORDERGATE_TEST_CITUS_URL` names, or `None`
/// after telling stderr why the test is skipped.
pub fn citus_url() -> Option<String> {
    const CITUS_VAR: &str = "ORDERGATE_TEST_CITUS_URL";
    match std::env::var(CITUS_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            let test = std::thread::current()
                .name()
                .unwrap_or("a Citus test")
                .to_owned();
            let _ = writeln!(
                std::io::stderr(),
                "{test}: skipped: set {CITUS_VAR}=postgres://postgres@127.0.0.1:9700/postgres \
                 (../shared/citus/cluster.sh start) to run the migration to Citus"
            );
            None
        }
    }
}

/// A fresh schema in the test database, dropped with everything in it
/// when this goes; `url` opens connections inside it.
pub struct PgSchema {
    admin_url: String,
    pub name: String,
    pub url: String,
}

impl PgSchema {
    pub async fn create(admin_url: &str) -> PgSchema {
        let name = format!("og_migrate_{}", Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(admin_url).await.unwrap();
        // The name is ours: a prefix and a UUID's hex digits.
        sqlx::query(sqlx::AssertSqlSafe(format!("create schema {name}")))
            .execute(&mut admin)
            .await
            .unwrap();
        let _ = admin.close().await;
        let separator = if admin_url.contains('?') { '&' } else { '?' };
        PgSchema {
            admin_url: admin_url.to_owned(),
            url: format!("{admin_url}{separator}options[search_path]={name}"),
            name,
        }
    }

    pub async fn connect(&self) -> PgConnection {
        PgConnection::connect(&self.url).await.unwrap()
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        let (url, name) = (self.admin_url.clone(), self.name.clone());
        // Drop runs inside the test's runtime, which cannot be blocked on.
        let dropped = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(async {
                    let mut admin = PgConnection::connect(&url).await?;
                    sqlx::query(sqlx::AssertSqlSafe(format!(
                        "drop schema if exists {name} cascade"
                    )))
                    .execute(&mut admin)
                    .await
                    .map(drop)
                })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            let _ = writeln!(
                std::io::stderr(),
                "could not drop test schema {}",
                self.name
            );
        }
    }
}

/// A photo of curry: a PNG larger than its rendition.
fn curry_photo() -> Vec<u8> {
    let picture = image::RgbImage::from_fn(1000, 600, |x, y| {
        image::Rgb([(x % 200) as u8 + 40, (y % 120) as u8 + 60, 20])
    });
    let mut png = Vec::new();
    image::DynamicImage::ImageRgb8(picture)
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    png
}

/// A published shop, in English and Japanese: curry (its texts in both, a
/// photo; cheese and egg toppings), soup (in a size to choose: regular, or
/// large), beer.
pub struct Shop {
    pub id: String,
    pub curry: String,
    pub soup: String,
    pub beer: String,
    pub cheese: String,
    pub egg: String,
    pub regular: String,
    pub large: String,
    /// The curry's photo.
    pub photo: String,
}

impl Shop {
    /// Creates the shop (under `key` when given) and its catalog, and
    /// tracks stock of curry, beer, cheese, egg and large soups.
    pub async fn create(http: &Http, name: &str, create: Request) -> (Shop, Request, Reply) {
        let create = create.json(
            json!({"name": name, "currency": "JPY", "timezone": "Asia/Tokyo",
                               "languages": ["en", "ja"]}),
        );
        let created = http.send(&create).await;
        let id = created.ok(201)["shopId"].as_str().unwrap().to_owned();
        let new_id = || Uuid::new_v4().to_string();
        let photo = http.upload_photo(&id, curry_photo()).await;
        let shop = Shop {
            id,
            curry: new_id(),
            soup: new_id(),
            beer: new_id(),
            cheese: new_id(),
            egg: new_id(),
            regular: new_id(),
            large: new_id(),
            photo,
        };
        let catalog = json!({
            "toppings": [
                {"toppingId": shop.cheese, "name": "Cheese", "price": 100},
                {"toppingId": shop.egg, "name": "Egg", "price": 80}
            ],
            "items": [
                {"menuItemId": shop.curry, "name": {"en": "Curry", "ja": "カレー"},
                 "category": {"en": "Mains", "ja": "主菜"}, "price": 900, "imageId": shop.photo,
                 "toppingIds": [shop.cheese, shop.egg], "maxToppings": 2,
                 "allergens": ["wheat", "milk"], "tags": ["spicy"], "station": "stove"},
                {"menuItemId": shop.soup, "name": "Miso soup", "category": "Sides", "price": 300,
                 "optionGroups": [{"name": "Size", "minChoices": 1, "maxChoices": 1, "options": [
                     {"optionId": shop.regular, "name": "Regular"},
                     {"optionId": shop.large, "name": "Large", "price": 100}]}]},
                {"menuItemId": shop.beer, "name": "Beer", "category": "Drinks", "price": 600}
            ]
        });
        http.staff_put(&format!("/api/v1/shops/{}/catalog", shop.id), catalog)
            .await
            .ok(200);
        for (item, stock) in [
            (&shop.curry, 400),
            (&shop.beer, 300),
            (&shop.cheese, 300),
            (&shop.egg, 40),
            (&shop.large, 100),
        ] {
            shop.set(http, item, json!({"stock": stock})).await;
        }
        (shop, create, created)
    }

    pub async fn set(&self, http: &Http, item: &str, body: Value) -> Value {
        let path = format!("/api/v1/shops/{}/inventory/{item}", self.id);
        http.staff_put(&path, body).await.ok(200)
    }

    /// Opens a table: (session id, PIN, the request, its reply).
    pub async fn open(
        &self,
        http: &Http,
        label: &str,
        keyed: bool,
    ) -> (String, String, Request, Reply) {
        let mut request =
            Request::staff(Method::POST, format!("/api/v1/shops/{}/sessions", self.id))
                .json(json!({"tableLabel": label}));
        if keyed {
            request = request.keyed();
        }
        let reply = http.send(&request).await;
        let body = reply.ok(201);
        (
            body["sessionId"].as_str().unwrap().to_owned(),
            body["pin"].as_str().unwrap().to_owned(),
            request,
            reply,
        )
    }

    /// A guest's order request of `n`-th cart shape, under a fresh key.
    pub fn guest_order(&self, session: &str, pin: &str, client: &str, n: usize) -> Request {
        let cart = match n % 4 {
            0 => json!({"items": [{"menuItemId": self.curry, "quantity": 1,
                                   "toppingIds": [self.cheese]}], "allowRepeat": true}),
            1 => json!({"items": [{"menuItemId": self.beer, "quantity": 2},
                                  {"menuItemId": self.soup, "quantity": 1,
                                   "optionIds": [self.regular]}],
                        "note": "no ice", "allowRepeat": true}),
            2 => json!({"items": [{"menuItemId": self.curry, "quantity": 2,
                                   "toppingIds": [self.egg, self.cheese]}], "allowRepeat": true}),
            _ => json!({"items": [{"menuItemId": self.soup, "quantity": 3,
                                   "optionIds": [self.large], "note": "hot"}],
                        "allowRepeat": true}),
        };
        Request::new(Method::POST, format!("/api/v1/sessions/{session}/orders"))
            .header("X-Session-PIN", pin)
            .header("X-Client-Id", client)
            .keyed()
            .json(cart)
    }
}
