//! `TestApp`: one running server per test, with one method per endpoint.

use std::net::SocketAddr;

use ordergate_server::{Settings, open_store, serve};
use reqwest::header::HeaderMap;
use reqwest::{Method, RequestBuilder};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use uuid::Uuid;

pub const STAFF_TOKEN: &str = "test-staff-token";

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    settings: Settings,
    shutdown: Option<oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    dir: TempDir,
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
}

impl TestApp {
    pub async fn spawn() -> TestApp {
        Self::spawn_with(|_| {}).await
    }

    /// Starts a server whose settings `configure` may change first.
    pub async fn spawn_with(configure: impl FnOnce(&mut Settings)) -> TestApp {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("ordergate.db").display());
        let mut settings = Settings::new(url);
        settings.staff_token = Some(STAFF_TOKEN.into());
        configure(&mut settings);
        Self::start(settings, dir).await
    }

    /// Stops this server gracefully and starts a new one on the same database.
    pub async fn restart(mut self) -> TestApp {
        let settings = self.settings.clone();
        let dir = tempfile::tempdir().unwrap();
        let dir = std::mem::replace(&mut self.dir, dir);
        self.stop().await;
        Self::start(settings, dir).await
    }

    async fn start(settings: Settings, dir: TempDir) -> TestApp {
        let store = open_store(&settings.database).unwrap();
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (shutdown, stop) = oneshot::channel::<()>();
        let server = tokio::spawn(serve(settings.clone(), store, listener, async {
            let _ = stop.await;
        }));
        TestApp {
            base,
            client: reqwest::Client::new(),
            settings,
            shutdown: Some(shutdown),
            server: Some(server),
            dir,
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
