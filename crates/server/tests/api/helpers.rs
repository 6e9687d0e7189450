//! `TestApp`: one running server per test, with one method per endpoint.

use std::net::SocketAddr;
use std::sync::Arc;

use ordergate_domain::clock::SkippingClock;
use ordergate_server::{Settings, open_store, serve_with_clock};

use crate::database::TestDatabase;
use reqwest::header::HeaderMap;
use reqwest::{Method, RequestBuilder};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use uuid::Uuid;

pub const STAFF_TOKEN: &str = "test-staff-token";

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    /// The server's clock: skip it instead of sleeping through a window.
    pub clock: Arc<SkippingClock>,
    settings: Settings,
    shutdown: Option<oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    /// Kept until the test ends; `None` for a node of a database someone
    /// else keeps.
    database: Option<TestDatabase>,
}

/// A response with its body read: JSON when it parses, else `Value::Null`.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts a problem+json refusal with this status and code.
    #[track_caller]
    pub fn assert_problem(&self, status: u16, code: &str) {
        assert_eq!(
            (self.status, self.body["code"].as_str()),
            (status, Some(code)),
            "unexpected reply: {}",
            self.text
        );
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json")
        );
        assert_eq!(self.body["status"], status);
        let kebab = code.to_ascii_lowercase().replace('_', "-");
        assert_eq!(self.body["type"], format!("urn:ordergate:problem:{kebab}"));
        assert!(self.body["title"].as_str().is_some_and(|t| !t.is_empty()));
        assert!(self.body["detail"].as_str().is_some_and(|d| !d.is_empty()));
    }

    /// The fields named by a VALIDATION_FAILED problem.
    #[track_caller]
    pub fn invalid_fields(&self) -> Vec<String> {
        self.assert_problem(422, "VALIDATION_FAILED");
        self.body["errors"]
            .as_array()
            .expect("errors array")
            .iter()
            .map(|e| e["field"].as_str().unwrap().to_owned())
            .collect()
    }

    #[track_caller]
    pub fn assert_status(&self, status: u16) -> &Value {
        assert_eq!(self.status, status, "unexpected reply: {}", self.text);
        &self.body
    }

    /// Whether the reply says it replays an earlier answer.
    pub fn replayed(&self) -> bool {
        self.header("idempotent-replayed") == Some("true")
    }

    /// Asserts a 201 order receipt, first sent (`replayed: false`) or
    /// replayed, in body and header alike; returns the order without its
    /// `idempotentReplay` flag.
    #[track_caller]
    pub fn assert_order(&self, replayed: bool) -> Value {
        let body = self.assert_status(201);
        assert_eq!(body["idempotentReplay"], replayed, "{}", self.text);
        let header = self.header("idempotent-replayed");
        assert_eq!(header, replayed.then_some("true"), "{}", self.text);
        let id = body["orderId"].as_str().expect("orderId");
        assert_eq!(
            self.header("location"),
            Some(format!("/api/v1/orders/{id}").as_str())
        );
        without_replay_flag(body)
    }

    /// The `orderId` of a reply.
    #[track_caller]
    pub fn order_id(&self) -> String {
        self.body["orderId"]
            .as_str()
            .unwrap_or_else(|| panic!("no orderId in {}", self.text))
            .to_owned()
    }
}

/// An order receipt without its `idempotentReplay` flag: the order itself.
#[track_caller]
pub fn without_replay_flag(receipt: &Value) -> Value {
    let mut order = receipt.clone();
    order
        .as_object_mut()
        .expect("an object")
        .remove("idempotentReplay");
    order
}

/// A fresh `Idempotency-Key`.
pub fn key() -> String {
    Uuid::new_v4().to_string()
}

/// A PIN that is not `pin`.
pub fn wrong_pin(pin: &str) -> &'static str {
    if pin == "000000" { "000001" } else { "000000" }
}

/// An order body, built line by line.
#[derive(Debug, Clone, Default)]
pub struct OrderBody {
    items: Vec<Value>,
    note: Option<String>,
    allow_repeat: Option<bool>,
}

impl OrderBody {
    pub fn new() -> OrderBody {
        OrderBody::default()
    }

    /// A line without toppings.
    pub fn line(self, item: &str, quantity: i64) -> OrderBody {
        self.topped(item, quantity, &[])
    }

    pub fn topped(mut self, item: &str, quantity: i64, toppings: &[&str]) -> OrderBody {
        self.items.push(json!({
            "menuItemId": item, "quantity": quantity, "toppingIds": toppings
        }));
        self
    }

    /// A line with options chosen from the item's groups.
    pub fn chosen(mut self, item: &str, quantity: i64, options: &[&str]) -> OrderBody {
        self.items.push(json!({
            "menuItemId": item, "quantity": quantity, "optionIds": options
        }));
        self
    }

    pub fn note(mut self, note: &str) -> OrderBody {
        self.note = Some(note.to_owned());
        self
    }

    pub fn allow_repeat(mut self) -> OrderBody {
        self.allow_repeat = Some(true);
        self
    }

    pub fn json(&self) -> Value {
        let mut body = json!({ "items": self.items });
        if let Some(note) = &self.note {
            body["note"] = json!(note);
        }
        if let Some(allow_repeat) = self.allow_repeat {
            body["allowRepeat"] = json!(allow_repeat);
        }
        body
    }
}

impl TestApp {
    pub async fn spawn() -> TestApp {
        Self::spawn_with(|_| {}).await
    }

    /// Starts a server whose settings `configure` may change first.
    pub async fn spawn_with(configure: impl FnOnce(&mut Settings)) -> TestApp {
        let database = TestDatabase::create().await;
        let mut settings = Settings::new(database.url.clone());
        settings.staff_token = Some(STAFF_TOKEN.into());
        configure(&mut settings);
        Self::start(settings, Some(database), Arc::default()).await
    }

    /// Stops this server gracefully and starts a new one on the same database.
    pub async fn restart(mut self) -> TestApp {
        let settings = self.settings.clone();
        let database = self.database.take();
        let clock = Arc::clone(&self.clock);
        self.stop().await;
        Self::start(settings, database, clock).await
    }

    /// Another node on `database`, which the caller keeps.
    pub async fn spawn_node(database: &TestDatabase) -> TestApp {
        Self::spawn_node_with(database, |_| {}).await
    }

    /// [`TestApp::spawn_node`] with its settings changed by `configure`.
    pub async fn spawn_node_with(
        database: &TestDatabase,
        configure: impl FnOnce(&mut Settings),
    ) -> TestApp {
        let mut settings = Settings::new(database.url.clone());
        settings.staff_token = Some(STAFF_TOKEN.into());
        configure(&mut settings);
        Self::start(settings, None, Arc::default()).await
    }

    async fn start(
        settings: Settings,
        database: Option<TestDatabase>,
        clock: Arc<SkippingClock>,
    ) -> TestApp {
        let store = open_store(&settings).await.unwrap();
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (shutdown, stop) = oneshot::channel::<()>();
        let server = tokio::spawn(serve_with_clock(
            settings.clone(),
            store,
            Arc::clone(&clock) as _,
            listener,
            async {
                let _ = stop.await;
            },
        ));
        TestApp {
            base,
            // The server closes a kept-alive connection that has been idle
            // for HEADER_READ_TIMEOUT; a request sent on it at that moment
            // fails with IncompleteMessage. A test that waits out a 10 s
            // printer retry and then polls did exactly that, now and then.
            client: reqwest::Client::builder()
                .pool_idle_timeout(ordergate_server::HEADER_READ_TIMEOUT / 2)
                .build()
                .unwrap(),
            clock,
            settings,
            shutdown: Some(shutdown),
            server: Some(server),
            database,
        }
    }

    /// Stops the server and waits for it to finish its in-flight requests.
    async fn stop(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(server) = self.server.take() {
            server.await.unwrap().unwrap();
        }
    }

    /// The database file, when the server runs on SQLite.
    pub fn sqlite_file(&self) -> Option<std::path::PathBuf> {
        let path = self.settings.database.strip_prefix("sqlite://")?;
        Some(path.into())
    }

    /// A connection that has sent a guest order's headers and the first
    /// `sent` bytes of `body`, as a slow phone would; the rest is the caller's.
    pub async fn partial_order(
        &self,
        (session, pin): (&str, &str),
        client: &str,
        body: &str,
        sent: usize,
    ) -> tokio::net::TcpStream {
        use tokio::io::AsyncWriteExt;
        let address = self.base.trim_start_matches("http://");
        let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
        let head = format!(
            "POST /api/v1/sessions/{session}/orders HTTP/1.1\r\nHost: {address}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nX-Session-PIN: {pin}\r\n\
             Idempotency-Key: {}\r\nX-Client-Id: {client}\r\n\r\n{}",
            body.len(),
            key(),
            &body[..sent]
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        socket
    }

    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.client.request(method, format!("{}{path}", self.base))
    }

    pub fn staff(&self, method: Method, path: &str) -> RequestBuilder {
        self.request(method, path).bearer_auth(STAFF_TOKEN)
    }

    pub fn guest(&self, method: Method, path: &str, pin: &str) -> RequestBuilder {
        self.request(method, path).header("X-Session-PIN", pin)
    }

    pub async fn send(request: RequestBuilder) -> Reply {
        let response = request.send().await.expect("request failed");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply {
            status,
            headers,
            body,
            text,
        }
    }

    // --- one method per endpoint ---

    pub async fn get(&self, path: &str) -> Reply {
        Self::send(self.request(Method::GET, path)).await
    }

    pub async fn create_shop(&self, body: Value) -> Reply {
        Self::send(self.staff(Method::POST, "/api/v1/shops").json(&body)).await
    }

    pub async fn list_shops(&self) -> Reply {
        Self::send(self.staff(Method::GET, "/api/v1/shops")).await
    }

    pub async fn get_shop(&self, shop: &str) -> Reply {
        self.get(&format!("/api/v1/shops/{shop}")).await
    }

    pub async fn put_catalog(&self, shop: &str, body: Value) -> Reply {
        Self::send(
            self.staff(Method::PUT, &format!("/api/v1/shops/{shop}/catalog"))
                .json(&body),
        )
        .await
    }

    /// A catalog PUT made against the version `etag` names.
    pub async fn put_catalog_if_match(&self, shop: &str, etag: &str, body: Value) -> Reply {
        Self::send(
            self.staff(Method::PUT, &format!("/api/v1/shops/{shop}/catalog"))
                .header("if-match", etag)
                .json(&body),
        )
        .await
    }

    pub async fn get_catalog(&self, shop: &str) -> Reply {
        Self::send(self.staff(Method::GET, &format!("/api/v1/shops/{shop}/catalog"))).await
    }

    pub async fn menu(&self, shop: &str) -> Reply {
        self.get(&format!("/api/v1/shops/{shop}/menu")).await
    }

    pub async fn menu_if_none_match(&self, shop: &str, etag: &str) -> Reply {
        let path = format!("/api/v1/shops/{shop}/menu");
        Self::send(
            self.request(Method::GET, &path)
                .header("If-None-Match", etag),
        )
        .await
    }

    pub async fn inventory(&self, shop: &str) -> Reply {
        Self::send(self.staff(Method::GET, &format!("/api/v1/shops/{shop}/inventory"))).await
    }

    pub async fn set_inventory(&self, shop: &str, item: &str, body: Value) -> Reply {
        let path = format!("/api/v1/shops/{shop}/inventory/{item}");
        Self::send(self.staff(Method::PUT, &path).json(&body)).await
    }

    pub async fn restock(&self, shop: &str, item: &str, quantity: i64) -> Reply {
        let path = format!("/api/v1/shops/{shop}/inventory/{item}/restock");
        Self::send(
            self.staff(Method::POST, &path)
                .json(&json!({ "quantity": quantity })),
        )
        .await
    }

    pub async fn inventory_log(&self, shop: &str, query: &str) -> Reply {
        let path = format!("/api/v1/shops/{shop}/inventory/log{query}");
        Self::send(self.staff(Method::GET, &path)).await
    }

    pub async fn open_session(&self, shop: &str, table: &str) -> Reply {
        let path = format!("/api/v1/shops/{shop}/sessions");
        Self::send(
            self.staff(Method::POST, &path)
                .json(&json!({ "tableLabel": table })),
        )
        .await
    }

    pub async fn list_sessions(&self, shop: &str, query: &str) -> Reply {
        let path = format!("/api/v1/shops/{shop}/sessions{query}");
        Self::send(self.staff(Method::GET, &path)).await
    }

    pub async fn guest_session(&self, session: &str, pin: &str) -> Reply {
        Self::send(self.guest(Method::GET, &format!("/api/v1/sessions/{session}"), pin)).await
    }

    pub async fn staff_session(&self, session: &str) -> Reply {
        Self::send(self.staff(Method::GET, &format!("/api/v1/sessions/{session}"))).await
    }

    pub async fn checkout(&self, session: &str) -> Reply {
        let path = format!("/api/v1/sessions/{session}/checkout");
        Self::send(self.staff(Method::POST, &path)).await
    }

    // --- orders ---

    /// A guest order POST with whichever of its headers are given.
    pub fn order_request(
        &self,
        session: &str,
        pin: Option<&str>,
        client: Option<&str>,
        key: Option<&str>,
    ) -> RequestBuilder {
        let path = format!("/api/v1/sessions/{session}/orders");
        let mut request = self.request(Method::POST, &path);
        if let Some(pin) = pin {
            request = request.header("X-Session-PIN", pin);
        }
        if let Some(client) = client {
            request = request.header("X-Client-Id", client);
        }
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        request
    }

    /// A guest order with every header.
    pub async fn place_order(
        &self,
        session: &str,
        pin: &str,
        client: &str,
        key: &str,
        body: &Value,
    ) -> Reply {
        Self::send(
            self.order_request(session, Some(pin), Some(client), Some(key))
                .json(body),
        )
        .await
    }

    pub async fn staff_order(&self, session: &str, key: Option<&str>, body: &Value) -> Reply {
        let path = format!("/api/v1/sessions/{session}/staff-orders");
        self.staff_post(&path, key, Some(body)).await
    }

    /// A staff POST, with an `Idempotency-Key` when given one.
    pub async fn staff_post(&self, path: &str, key: Option<&str>, body: Option<&Value>) -> Reply {
        let mut request = self.staff(Method::POST, path);
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        Self::send(request).await
    }

    /// The session's order history, read by staff.
    pub async fn session_orders(&self, session: &str, query: &str) -> Reply {
        let path = format!("/api/v1/sessions/{session}/orders{query}");
        Self::send(self.staff(Method::GET, &path)).await
    }

    /// The session's order history, read by a guest with `pin`.
    pub async fn guest_orders(&self, session: &str, pin: &str, query: &str) -> Reply {
        let path = format!("/api/v1/sessions/{session}/orders{query}");
        Self::send(self.guest(Method::GET, &path, pin)).await
    }

    pub async fn get_order(&self, order: &str) -> Reply {
        Self::send(self.staff(Method::GET, &format!("/api/v1/orders/{order}"))).await
    }

    /// `POST /orders/{order}/status` with `body`, keyed when given a key.
    pub async fn set_status_with(&self, order: &str, key: Option<&str>, body: &Value) -> Reply {
        let path = format!("/api/v1/orders/{order}/status");
        self.staff_post(&path, key, Some(body)).await
    }

    /// Moves `order` to `status`, without an expected version or a key.
    pub async fn set_status(&self, order: &str, status: &str) -> Reply {
        self.set_status_with(order, None, &json!({ "status": status }))
            .await
    }

    /// `GET /shops/{shop}/orders{query}` (staff).
    pub async fn shop_orders(&self, shop: &str, query: &str) -> Reply {
        let path = format!("/api/v1/shops/{shop}/orders{query}");
        Self::send(self.staff(Method::GET, &path)).await
    }

    /// The value of the sample `name` with exactly `labels` in `/metrics`
    /// (0 when there is no such sample yet).
    pub async fn metric(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let reply = Self::send(self.staff(Method::GET, "/metrics")).await;
        assert_eq!(reply.status, 200);
        let mut wanted: Vec<String> = labels
            .iter()
            .map(|(label, value)| format!("{label}=\"{value}\""))
            .collect();
        wanted.sort();
        reply
            .text
            .lines()
            .filter(|line| !line.starts_with('#'))
            .find_map(|line| {
                let (series, value) = line.rsplit_once(' ')?;
                let (metric, labels) = match series.split_once('{') {
                    Some((metric, labels)) => (metric, labels.trim_end_matches('}')),
                    None => (series, ""),
                };
                let mut have: Vec<String> = labels
                    .split(',')
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned)
                    .collect();
                have.sort();
                (metric == name && have == wanted).then(|| value.parse::<f64>().unwrap())
            })
            .unwrap_or(0.0)
    }

    pub async fn audit(&self, shop: &str, query: &str) -> Reply {
        let path = format!("/api/v1/shops/{shop}/audit{query}");
        Self::send(self.staff(Method::GET, &path)).await
    }

    /// The order history's entries, newest first (staff, up to 500).
    pub async fn orders_of(&self, session: &str) -> Vec<Value> {
        let reply = self.session_orders(session, "?limit=500").await;
        reply.assert_status(200)["orders"]
            .as_array()
            .expect("orders")
            .clone()
    }

    /// The inventory entry of one item.
    pub async fn stock_entry(&self, shop: &str, item: &str) -> Value {
        let reply = self.inventory(shop).await;
        find(&reply.assert_status(200)["entries"], "itemId", item).clone()
    }

    /// The whole inventory log, newest first.
    pub async fn stock_log(&self, shop: &str) -> Vec<Value> {
        let reply = self.inventory_log(shop, "?limit=500").await;
        reply.assert_status(200)["entries"]
            .as_array()
            .expect("entries")
            .clone()
    }

    /// The whole audit trail, newest first.
    pub async fn audit_entries(&self, shop: &str) -> Vec<Value> {
        let reply = self.audit(shop, "?limit=500").await;
        reply.assert_status(200)["entries"]
            .as_array()
            .expect("entries")
            .clone()
    }

    // --- fixtures ---

    /// A new shop's id.
    pub async fn shop(&self) -> String {
        let reply = self
            .create_shop(json!({"name": "Test Diner", "currency": "JPY", "timezone": "Asia/Tokyo"}))
            .await;
        reply.assert_status(201)["shopId"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// A shop with a published catalog: curry (cheese, egg toppings), soup, beer.
    pub async fn shop_with_menu(&self) -> (String, Menu) {
        let shop = self.shop().await;
        let ids = Menu::default();
        let reply = self.put_catalog(&shop, ids.catalog()).await;
        reply.assert_status(200);
        (shop, ids)
    }

    /// Exchanges the table's PIN for a guest token.
    pub async fn guest_token(&self, session: &str, pin: &str) -> String {
        let path = format!("/api/v1/sessions/{session}/access");
        let reply = Self::send(self.guest(Method::POST, &path, pin)).await;
        let body = reply.assert_status(200);
        assert_eq!(body["sessionId"], session);
        body["guestToken"].as_str().unwrap().to_owned()
    }

    /// Runs one statement on the server's database, behind its back: the
    /// SQLite form on SQLite, the PostgreSQL form on PostgreSQL.
    pub async fn execute_sql(&self, sqlite: &str, postgres: &str) {
        match self.sqlite_file() {
            Some(file) => {
                let conn = rusqlite::Connection::open(file).unwrap();
                conn.busy_timeout(std::time::Duration::from_secs(5))
                    .unwrap();
                conn.execute_batch(sqlite).unwrap();
            }
            None => {
                use sqlx::Connection;
                let mut conn = sqlx::PgConnection::connect(&self.settings.database)
                    .await
                    .unwrap();
                sqlx::raw_sql(sqlx::AssertSqlSafe(postgres.to_owned()))
                    .execute(&mut conn)
                    .await
                    .unwrap();
            }
        }
    }

    /// How many rows `table` of the server's database has, read behind its back.
    pub async fn count_rows(&self, table: &str) -> i64 {
        let sql = format!("select count(*) from {table}");
        match self.sqlite_file() {
            Some(file) => {
                let conn = rusqlite::Connection::open(file).unwrap();
                conn.query_row(&sql, [], |row| row.get(0)).unwrap()
            }
            None => {
                use sqlx::Connection;
                let mut conn = sqlx::PgConnection::connect(&self.settings.database)
                    .await
                    .unwrap();
                sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                    .fetch_one(&mut conn)
                    .await
                    .unwrap()
            }
        }
    }

    /// A GET whose body is bytes (a photo): status, headers, body.
    pub async fn get_bytes(
        &self,
        path: &str,
        if_none_match: Option<&str>,
    ) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
        let mut request = self.request(Method::GET, path);
        if let Some(etag) = if_none_match {
            request = request.header("If-None-Match", etag);
        }
        let response = request.send().await.expect("request failed");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        (status, headers, response.bytes().await.unwrap().to_vec())
    }

    /// A staff upload of a photo's bytes.
    pub async fn upload_photo(&self, shop: &str, content_type: &str, bytes: Vec<u8>) -> Reply {
        let path = format!("/api/v1/shops/{shop}/images");
        Self::send(
            self.staff(Method::POST, &path)
                .header("Content-Type", content_type)
                .body(bytes),
        )
        .await
    }

    /// Opens a table; returns (session id, pin).
    pub async fn table(&self, shop: &str, label: &str) -> (String, String) {
        let reply = self.open_session(shop, label).await;
        let body = reply.assert_status(201);
        (
            body["sessionId"].as_str().unwrap().to_owned(),
            body["pin"].as_str().unwrap().to_owned(),
        )
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// The ids of the test catalog.
pub struct Menu {
    pub curry: String,
    pub soup: String,
    pub beer: String,
    pub cheese: String,
    pub egg: String,
}

impl Default for Menu {
    fn default() -> Self {
        let id = || Uuid::new_v4().to_string();
        Menu {
            curry: id(),
            soup: id(),
            beer: id(),
            cheese: id(),
            egg: id(),
        }
    }
}

impl Menu {
    pub fn catalog(&self) -> Value {
        json!({
            "toppings": [
                {"toppingId": self.cheese, "name": "Cheese", "price": 100},
                {"toppingId": self.egg, "name": "Egg", "price": 80}
            ],
            "items": [
                {"menuItemId": self.curry, "name": "Curry", "description": "Mild",
                 "category": "Mains", "price": 900, "toppingIds": [self.cheese, self.egg],
                 "maxToppings": 2},
                {"menuItemId": self.soup, "name": "Miso soup", "category": "Sides", "price": 300},
                {"menuItemId": self.beer, "name": "Beer", "category": "Drinks", "price": 600}
            ]
        })
    }
}

/// The entry for `id` in a list of objects keyed by `key`.
#[track_caller]
pub fn find<'a>(list: &'a Value, key: &str, id: &str) -> &'a Value {
    list.as_array()
        .expect("a list")
        .iter()
        .find(|entry| entry[key] == id)
        .unwrap_or_else(|| panic!("{id} not in {list}"))
}
