//! Prometheus metrics, held per server instance (no global registry), so
//! several servers in one test process never mix their counts.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

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

type DurationFamily = Family<RouteLabels, Histogram, fn() -> Histogram>;

pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    durations: DurationFamily,
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
        Metrics {
            registry,
            requests,
            durations,
        }
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
