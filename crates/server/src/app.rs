//! Wiring: the shared state, the router with its layers, and the serve loop.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, MatchedPath};
use axum::http::{HeaderName, HeaderValue, Request};
use axum::response::Response;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use ordergate_domain::Timestamp;
use ordergate_domain::clock::{Clock, SystemClock};
use ordergate_domain::idempotency::is_plain_id;
use ordergate_domain::session::PinPolicy;
use ordergate_store::{Change, ChangeListener, Store};
use ordergate_store_postgres::PgStore;
use ordergate_store_sqlite::SqliteStore;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower::ServiceExt;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

use crate::auth::{MetricsAccess, Secret, StaffToken};
use crate::config::Settings;
use crate::error::{ApiError, ErrorCode};
use crate::extract::MAX_BODY_BYTES;
use crate::hub::Hub;
use crate::idempotency::InFlight;
use crate::limits::{Limits, PARSER_MAX_HEADER_FIELDS, client_address};
use crate::menu_cache::MenuCache;
use crate::metrics::Metrics;
use crate::photo_cache::PhotoCache;
use crate::printing::Printing;
use crate::{openapi, routes};

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Longest a client may take to send a request's headers, on a new
/// connection or between requests on a kept-alive one: a client that
/// trickles them in (slowloris) or idles is disconnected instead of holding
/// a connection forever. Bodies are bounded by the request timeout.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// What every handler can reach; cheap to clone.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

struct Inner {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    staff_token: StaffToken,
    metrics_access: MetricsAccess,
    public_url: String,
    settings: Settings,
    in_flight: Arc<InFlight>,
    menu_cache: Arc<MenuCache>,
    photo_cache: PhotoCache,
    hub: Arc<Hub>,
    printing: Arc<Printing>,
    metrics: Metrics,
    limits: Limits,
    revocations: watch::Sender<u64>,
    openapi_json: String,
}

impl AppState {
    pub fn store(&self) -> &dyn Store {
        self.0.store.as_ref()
    }

    /// Now, by the server's clock: the one source of the current time for
    /// every rule a request is judged by.
    pub fn now(&self) -> Timestamp {
        self.0.clock.now()
    }

    pub fn staff_token(&self) -> &StaffToken {
        &self.0.staff_token
    }

    pub fn metrics_access(&self) -> &MetricsAccess {
        &self.0.metrics_access
    }

    pub fn public_url(&self) -> &str {
        &self.0.public_url
    }

    pub fn pin_policy(&self) -> PinPolicy {
        self.0.settings.pin_policy()
    }

    pub fn settings(&self) -> &Settings {
        &self.0.settings
    }

    pub fn in_flight(&self) -> &Arc<InFlight> {
        &self.0.in_flight
    }

    pub fn menu_cache(&self) -> &MenuCache {
        &self.0.menu_cache
    }

    pub fn photo_cache(&self) -> &PhotoCache {
        &self.0.photo_cache
    }

    pub fn hub(&self) -> &Hub {
        &self.0.hub
    }

    pub fn printing(&self) -> &Printing {
        &self.0.printing
    }

    pub fn metrics(&self) -> &Metrics {
        &self.0.metrics
    }

    pub fn limits(&self) -> &Limits {
        &self.0.limits
    }

    pub fn openapi_json(&self) -> &str {
        &self.0.openapi_json
    }

    /// Tells this node's open streams that a credential was revoked (a
    /// device, a membership, a sign-out), so each checks its own at once.
    pub fn revoked(&self) {
        self.0.revocations.send_modify(|count| *count += 1);
    }

    /// What [`AppState::revoked`] signals.
    pub fn revocations(&self) -> watch::Receiver<u64> {
        self.0.revocations.subscribe()
    }
}

/// Opens the backend the database URL names (`sqlite://FILE` embedded,
/// `postgres://…` for several nodes), applying its migrations.
pub async fn open_store(settings: &Settings) -> anyhow::Result<Arc<dyn Store>> {
    let url = settings.database.as_str();
    if let Some(path) = ordergate_store_sqlite::path_from_url(url) {
        let store = SqliteStore::open(&path)
            .with_context(|| format!("cannot open SQLite database {}", path.display()))?;
        return Ok(Arc::new(store));
    }
    if ordergate_store_postgres::is_postgres_url(url) {
        // The URL may carry a password: it stays out of the message.
        let store = PgStore::connect(url)
            .await
            .context("cannot open the PostgreSQL database")?
            .with_in_flight_wait(settings.inflight_wait());
        return Ok(Arc::new(store));
    }
    bail!("unsupported database URL: expected sqlite://FILE or postgres://…")
}

/// The complete HTTP application for a server reachable at `bound`, its
/// live-event hub (closed at shutdown) and its printers (started once
/// serving).
fn build(
    settings: &Settings,
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    bound: SocketAddr,
) -> (Router, Arc<Hub>, Arc<Printing>) {
    let (api, document) = routes::api().split_for_parts();
    let menu_cache = Arc::new(MenuCache::default());
    let hub = Arc::new(Hub::new(Arc::clone(&store)));
    let printing = Printing::new(Arc::clone(&store), Arc::clone(&clock));
    store.set_change_listener(listener(&menu_cache, &hub, &printing));
    let closing = Arc::clone(&hub);
    let printers = Arc::clone(&printing);
    let trusted_proxies = settings.trusted_proxies.clone();
    let state = AppState(Arc::new(Inner {
        store,
        clock,
        staff_token: StaffToken::new(settings.staff_token.as_deref()),
        metrics_access: if settings.metrics_public {
            MetricsAccess::Public
        } else {
            MetricsAccess::Tokens(settings.metrics_token.as_deref().map(Secret::new))
        },
        public_url: settings.public_url(bound),
        settings: settings.clone(),
        in_flight: Arc::default(),
        menu_cache,
        photo_cache: PhotoCache::default(),
        hub,
        printing,
        metrics: Metrics::default(),
        limits: Limits::default(),
        revocations: watch::Sender::new(0),
        openapi_json: openapi::render(document),
    }));
    let router = api
        .fallback(|| async { ApiError::new(ErrorCode::NotFound, "no such endpoint") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                ErrorCode::MethodNotAllowed,
                "this endpoint does not take that method",
            )
        })
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::error::retry_after_by_clock,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::limits::bound_requests,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::metrics::track,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(move |request: &Request<_>| {
                    let request_id = request
                        .headers()
                        .get(REQUEST_ID)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default();
                    // The path only: query strings carry secrets (`pin`,
                    // `access_token` of the event streams) that logs must not keep.
                    let path = request.uri().path();
                    let route = request
                        .extensions()
                        .get::<MatchedPath>()
                        .map_or("unmatched", MatchedPath::as_str);
                    // The address limits go by: behind a trusted proxy, the
                    // one its X-Forwarded-For names.
                    let client = request.extensions().get::<ConnectInfo<SocketAddr>>().map(
                        |ConnectInfo(peer)| {
                            client_address(peer.ip(), request.headers(), &trusted_proxies)
                        },
                    );
                    let span = tracing::info_span!(
                        "request",
                        method = %request.method(),
                        route,
                        path,
                        request_id,
                        client = client.map(tracing::field::display),
                        shop = tracing::field::Empty,
                        session = tracing::field::Empty,
                    );
                    for name in ["shop", "session"] {
                        if let Some(id) = path_parameter(route, path, name) {
                            span.record(name, id);
                        }
                    }
                    span
                })
                // One access line per request, when its answer's head goes out.
                .on_response(
                    |response: &Response, latency: Duration, _: &tracing::Span| {
                        let latency_ms = latency.as_secs_f64() * 1000.0;
                        tracing::info!(status = response.status().as_u16(), latency_ms, "answered");
                    },
                )
                // Refusals are answers, not failures; real failures are logged where
                // they happen, with their cause.
                .on_failure(()),
        )
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .layer(axum::middleware::map_request(drop_unplain_request_id))
        .with_state(state);
    (router, closing, printers)
}

/// The id of the shop or session (`name`) in `path`, by the place of
/// `{shopId}` or `{sessionId}` in the matched `route`, for the logs.
fn path_parameter<'p>(route: &str, path: &'p str, name: &str) -> Option<&'p str> {
    let parameter = format!("{{{name}Id}}");
    route
        .split('/')
        .zip(path.split('/'))
        .find_map(|(template, value)| (template == parameter).then_some(value))
}

/// A client's `x-request-id` is logged and echoed, so it is kept only when
/// plain (see [`is_plain_id`]); otherwise the request gets a fresh one.
async fn drop_unplain_request_id<B>(mut request: Request<B>) -> Request<B> {
    let plain = |id: &HeaderValue| id.to_str().is_ok_and(is_plain_id);
    if request
        .headers()
        .get(REQUEST_ID)
        .is_some_and(|id| !plain(id))
    {
        request.headers_mut().remove(REQUEST_ID);
    }
    request
}

/// Tells the menu cache, the live streams and the printers about committed
/// changes. Holds them weakly: the store outlives them, and must not keep
/// them alive.
fn listener(
    menu_cache: &Arc<MenuCache>,
    hub: &Arc<Hub>,
    printing: &Arc<Printing>,
) -> ChangeListener {
    let menu_cache = Arc::downgrade(menu_cache);
    let hub = Arc::downgrade(hub);
    let printing = Arc::downgrade(printing);
    Arc::new(move |change| match change {
        Change::Events(shop_id) => {
            if let Some(hub) = hub.upgrade() {
                hub.announce(shop_id);
            }
            if let Some(printing) = printing.upgrade() {
                printing.announce(shop_id);
            }
        }
        Change::Stock(shop_id) | Change::Catalog(shop_id) => {
            if let Some(menu_cache) = menu_cache.upgrade() {
                menu_cache.changed(shop_id);
            }
        }
        Change::Everything => {
            if let Some(menu_cache) = menu_cache.upgrade() {
                menu_cache.changed_all();
            }
            if let Some(hub) = hub.upgrade() {
                hub.announce_all();
            }
            if let Some(printing) = printing.upgrade() {
                printing.announce_all();
            }
        }
    })
}

/// Serves on `listener` until `shutdown` resolves, then lets in-flight
/// requests finish.
pub async fn serve(
    settings: Settings,
    store: Arc<dyn Store>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    serve_with_clock(settings, store, Arc::new(SystemClock), listener, shutdown).await
}

/// [`serve`], telling time by `clock` (tests move one instead of waiting).
pub async fn serve_with_clock(
    settings: Settings,
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    settings.check()?;
    let bound = listener.local_addr()?;
    if settings.staff_token.is_none() {
        tracing::warn!(
            "no staff token configured: only signed-in accounts and devices can use staff endpoints"
        );
    }
    let purge = tokio::spawn(purge_expired(
        Arc::clone(&store),
        Arc::clone(&clock),
        settings.clone(),
    ));
    let (app, hub, printing) = build(&settings, store, clock, bound);
    let printing = printing.start();
    println!("listening on http://{bound}");
    let shutdown = async move {
        shutdown.await;
        // Open event streams would otherwise hold the graceful shutdown forever.
        hub.close();
    };
    accept(listener, app, shutdown).await;
    drop(printing);
    purge.abort();
    Ok(())
}

/// Serves each connection as HTTP/1.1 until `shutdown` resolves, then stops
/// accepting and lets every connection finish its request in flight.
/// (`axum::serve` sets no header read timeout; this loop does.)
async fn accept(listener: TcpListener, app: Router, shutdown: impl Future<Output = ()>) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_headers(PARSER_MAX_HEADER_FIELDS);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait for some to
                    // close instead of spinning.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Small responses and event frames go out at once.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "could not disable Nagle's algorithm");
        }
        let app = app.clone();
        // Limits per client address need the peer's address.
        let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            app.clone().oneshot(request)
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, %peer, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// Audit rows one purge transaction deletes at most: short enough not to
/// hold up orders on SQLite's single writer.
const AUDIT_PURGE_BATCH: u32 = 5_000;

/// Every minute: forgets expired idempotency records and guest tokens, so
/// the tables hold one lifetime's worth however long the server runs, and
/// deletes audit rows past `--audit-retention-days`.
async fn purge_expired(store: Arc<dyn Store>, clock: Arc<dyn Clock>, settings: Settings) {
    let mut every_minute = tokio::time::interval(std::time::Duration::from_secs(60));
    loop {
        every_minute.tick().await;
        let now = clock.now();
        match store.purge_expired(now).await {
            Ok(0) => {}
            Ok(purged) => tracing::info!(
                purged,
                "expired idempotency records and guest tokens purged"
            ),
            Err(e) => tracing::warn!(error = %e, "purging expired idempotency records failed"),
        }
        let cutoff = settings.audit_cutoff(now);
        let mut purged = 0;
        loop {
            match store.purge_audit(cutoff, AUDIT_PURGE_BATCH).await {
                Ok(batch) => {
                    purged += batch;
                    if batch < u64::from(AUDIT_PURGE_BATCH) {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "purging old audit rows failed");
                    break;
                }
            }
        }
        if purged > 0 {
            tracing::info!(purged, %cutoff, "audit rows past their retention purged");
        }
    }
}
