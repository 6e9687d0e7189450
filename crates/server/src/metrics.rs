//! Prometheus metrics, held per server instance (no global registry), so
//! several servers in one test process never mix their counts.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use uuid::Uuid;

use crate::app::AppState;

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RouteLabels {
    route: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ShopLabels {
    shop_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct CodeLabels {
    code: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RejectionLabels {
    shop_id: String,
    code: String,
}

type DurationFamily = Family<RouteLabels, Histogram, fn() -> Histogram>;

pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    durations: DurationFamily,
    orders_placed: Family<ShopLabels, Counter>,
    order_replays: Family<ShopLabels, Counter>,
    order_rejections: Family<RejectionLabels, Counter>,
    unaudited_refusals: Family<CodeLabels, Counter>,
    out_of_stock: Family<ShopLabels, Counter>,
    sse_subscribers: Family<ShopLabels, Gauge>,
    menu_cache_misses: Family<ShopLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("ordergate");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by route and status",
            requests.clone(),
        );
        // 0.5 ms to ~2 s: orders commit in milliseconds, a slow fsync shows up.
        let durations: DurationFamily =
            Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.0005, 2.0, 13)));
        registry.register(
            "http_request_duration_seconds",
            "Time to answer HTTP requests, by route",
            durations.clone(),
        );
        let shop_counter = |registry: &mut Registry, name: &str, help: &str| {
            let family = Family::<ShopLabels, Counter>::default();
            registry.register(name, help, family.clone());
            family
        };
        let orders_placed = shop_counter(&mut registry, "orders_placed", "Orders placed");
        let order_replays = shop_counter(
            &mut registry,
            "order_replays",
            "Order POSTs answered by replaying a stored response",
        );
        let out_of_stock = shop_counter(
            &mut registry,
            "out_of_stock",
            "Orders refused because stock ran short",
        );
        let menu_cache_misses = shop_counter(
            &mut registry,
            "menu_cache_misses",
            "Menu requests that had to read the database",
        );
        let order_rejections = Family::<RejectionLabels, Counter>::default();
        registry.register(
            "order_rejections",
            "Order POSTs refused, by error code",
            order_rejections.clone(),
        );
        let unaudited_refusals = Family::<CodeLabels, Counter>::default();
        registry.register(
            "order_refusals_unaudited",
            "Order POSTs refused before their credentials were judged (no PIN, a bad \
             token, a locked PIN, an unknown or long-closed session), which the audit \
             log does not keep, by error code",
            unaudited_refusals.clone(),
        );
        let sse_subscribers = Family::<ShopLabels, Gauge>::default();
        registry.register(
            "sse_subscribers",
            "Live event streams connected",
            sse_subscribers.clone(),
        );
        Metrics {
            registry,
            requests,
            durations,
            orders_placed,
            order_replays,
            order_rejections,
            unaudited_refusals,
            out_of_stock,
            sse_subscribers,
            menu_cache_misses,
        }
    }
}

fn shop(shop_id: Uuid) -> ShopLabels {
    ShopLabels {
        shop_id: shop_id.to_string(),
    }
}

impl Metrics {
    /// The OpenMetrics text exposition, which Prometheus scrapes as is.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    pub fn order_placed(&self, shop_id: Uuid, replayed: bool) {
        let family = if replayed {
            &self.order_replays
        } else {
            &self.orders_placed
        };
        family.get_or_create(&shop(shop_id)).inc();
    }

    pub fn order_rejected(&self, shop_id: Uuid, code: &str) {
        let labels = RejectionLabels {
            shop_id: shop_id.to_string(),
            code: code.to_owned(),
        };
        self.order_rejections.get_or_create(&labels).inc();
        if code == "OUT_OF_STOCK" {
            self.out_of_stock.get_or_create(&shop(shop_id)).inc();
        }
    }

    pub fn order_refused_unaudited(&self, code: &str) {
        let labels = CodeLabels {
            code: code.to_owned(),
        };
        self.unaudited_refusals.get_or_create(&labels).inc();
    }

    pub fn menu_cache_miss(&self, shop_id: Uuid) {
        self.menu_cache_misses.get_or_create(&shop(shop_id)).inc();
    }

    /// Counts a connected stream until the returned guard is dropped.
    pub fn sse_connected(&self, shop_id: Uuid) -> impl Drop + Send + use<> {
        let gauge = self.sse_subscribers.get_or_create(&shop(shop_id)).clone();
        gauge.inc();
        SubscriberGuard(gauge)
    }
}

struct SubscriberGuard(Gauge);

impl Drop for SubscriberGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// Counts and times every request by its route template (not the raw path,
/// which would make one series per session id).
pub async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().to_string();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_owned();
    let response = next.run(request).await;
    let metrics = state.metrics();
    metrics
        .requests
        .get_or_create(&RequestLabels {
            method,
            route: route.clone(),
            status: response.status().as_u16(),
        })
        .inc();
    metrics
        .durations
        .get_or_create(&RouteLabels { route })
        .observe(started.elapsed().as_secs_f64());
    response
}
