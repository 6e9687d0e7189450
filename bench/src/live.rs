//! The live-stream figures: how long an order's `order.placed` event takes
//! to reach each of many connected subscribers, and how much memory the
//! server holds per idle subscriber.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use reqwest::{Client, StatusCode};
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinSet;
use uuid::Uuid;

use crate::Args;
use crate::load::{histogram, micros, quantile_ms};
use crate::orders::{cart, order_request};
use crate::report::{Report, Row, ms};
use crate::server::{ChildServer, STAFF_TOKEN, Shop, ShopSpec, metric, seed};
use crate::sse::{self, Subscriber};
use crate::sys::{mib, open_files, rss_bytes};

/// Streams being opened at once.
const CONNECT_PARALLEL: usize = 128;
/// How long the deliveries of the last order may take before the missing
/// ones count as lost.
const DELIVERY_GRACE: Duration = Duration::from_secs(10);

fn address(base: &str) -> anyhow::Result<SocketAddr> {
    base.strip_prefix("http://")
        .unwrap_or(base)
        .parse()
        .with_context(|| format!("server address {base}"))
}

fn staff_stream(shop: &Shop) -> String {
    format!(
        "/api/v1/shops/{}/events?access_token={STAFF_TOKEN}",
        shop.shop_id
    )
}

/// `"orderId":"…"` at the start of an `order.placed` event's data.
fn order_id(data: &str) -> Option<Uuid> {
    let at = data.find("\"orderId\":\"")? + "\"orderId\":\"".len();
    data.get(at..at + 36)?.parse().ok()
}

/// One order of the fan-out: when it was sent and when its 201 arrived.
struct Placed {
    sent: Instant,
    acked: Instant,
}

/// `--fanout-subscribers` staff streams of the shop stay connected while
/// orders are placed open-loop at `--fanout-rate` for `--duration-secs`.
/// Every subscriber timestamps each `order.placed` when the read that
/// completed it returns; each delivery's latency is that minus the time the
/// order's 201 was read (commit acknowledged → event received), and, in a
/// note, minus the time the order was sent.
pub async fn fanout(
    args: &Args,
    base: &str,
    shop: &Arc<Shop>,
    report: &mut Report,
) -> anyhow::Result<()> {
    let addr = address(base)?;
    let wanted = args.fanout_subscribers;
    let (subscribers, failure) =
        sse::connect_many(addr, &staff_stream(shop), wanted, CONNECT_PARALLEL).await;
    if let Some(failure) = &failure {
        anyhow::bail!(
            "fan-out: opened {} of {wanted} streams: {failure}",
            subscribers.len()
        );
    }
    let count = subscribers.len() as u64;
    let received = Arc::new(AtomicU64::new(0));
    let (stop, stopped) = watch::channel(false);
    let mut readers = JoinSet::new();
    for subscriber in subscribers {
        readers.spawn(read_orders(
            subscriber,
            Arc::clone(&received),
            stopped.clone(),
        ));
    }

    // One unmeasured order first: every stream is live once it arrives everywhere.
    let client = Client::new();
    place(&client, base, shop, 0, 0).await?;
    wait_for(&received, count, Instant::now() + DELIVERY_GRACE).await;
    let warm_received = received.load(Ordering::Relaxed);
    ensure!(
        warm_received == count,
        "fan-out: the first order reached {warm_received} of {count} subscribers"
    );

    let orders = place_open_loop(args, base, shop).await?;
    let expected = count * orders.len() as u64;
    let delivered_by = Instant::now() + DELIVERY_GRACE;
    wait_for(&received, count + expected, delivered_by).await;
    let _ = stop.send(true);

    let mut from_ack = histogram();
    let mut from_send = histogram();
    let mut last_per_order: HashMap<Uuid, Instant> = HashMap::new();
    let (mut matched, mut before_ack) = (0u64, 0u64);
    while let Some(deliveries) = readers.join_next().await {
        for (id, at) in deliveries? {
            let Some(order) = orders.get(&id) else {
                continue; // the warm-up order
            };
            matched += 1;
            if at < order.acked {
                before_ack += 1;
            }
            from_ack.saturating_record(micros(at.saturating_duration_since(order.acked)));
            from_send.saturating_record(micros(at - order.sent));
            let last = last_per_order.entry(id).or_insert(at);
            *last = (*last).max(at);
        }
    }
    let mut last = histogram();
    for (id, at) in &last_per_order {
        last.saturating_record(micros(at.saturating_duration_since(orders[id].acked)));
    }
    let missing = expected.saturating_sub(matched);
    report.push(
        Row::info(
            &format!("event fan-out to {count} subscribers (201 -> event)"),
            format!("{}x{count}", orders.len()),
        )
        .latency(quantile_ms(&from_ack, 0.5), quantile_ms(&from_ack, 0.99))
        .errors(missing)
        .note(format!(
            "{} orders at {:.0}/s, {matched} of {expected} deliveries matched by orderId; \
             latency = subscriber's read time minus the order's 201 read time \
             ({before_ack} arrived before the 201 and count as 0); max {}",
            orders.len(),
            args.fanout_rate,
            ms(quantile_ms(&from_ack, 1.0)),
        ))
        .note(format!(
            "from the order's send instead: p50 {}, p99 {}, max {}; the last subscriber per \
             order (201 -> event): p50 {}, p99 {}",
            ms(quantile_ms(&from_send, 0.5)),
            ms(quantile_ms(&from_send, 0.99)),
            ms(quantile_ms(&from_send, 1.0)),
            ms(quantile_ms(&last, 0.5)),
            ms(quantile_ms(&last, 0.99)),
        )),
    );
    Ok(())
}

/// A subscriber's `order.placed` events: (orderId, when the read that
/// completed it returned), until told to stop or the stream ends.
async fn read_orders(
    mut subscriber: Subscriber,
    received: Arc<AtomicU64>,
    mut stop: watch::Receiver<bool>,
) -> Vec<(Uuid, Instant)> {
    let mut seen = Vec::new();
    let mut events = Vec::new();
    loop {
        tokio::select! {
            more = subscriber.read_events(&mut events) => {
                let at = Instant::now();
                for event in events.drain(..) {
                    if event.kind == "order.placed"
                        && let Some(id) = order_id(&event.data)
                    {
                        seen.push((id, at));
                        received.fetch_add(1, Ordering::Relaxed);
                    }
                }
                if !matches!(more, Ok(true)) {
                    break;
                }
            }
            _ = stop.changed() => break,
        }
    }
    seen
}

async fn wait_for(counter: &AtomicU64, target: u64, deadline: Instant) {
    while counter.load(Ordering::Relaxed) < target && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Places worker `w`'s `n`th cart; returns the order id and its times.
async fn place(
    client: &Client,
    base: &str,
    shop: &Shop,
    w: usize,
    n: u64,
) -> anyhow::Result<(Uuid, Placed)> {
    let (session, pin, body) = cart(shop, w, n);
    let sent = Instant::now();
    let response = order_request(client, base, &session, &pin, w, Uuid::new_v4(), &body)
        .send()
        .await?;
    let status = response.status();
    let bytes = response.bytes().await?;
    let acked = Instant::now();
    ensure!(
        status == StatusCode::CREATED,
        "fan-out order: {status} {}",
        String::from_utf8_lossy(&bytes)
    );
    let receipt: Value = serde_json::from_slice(&bytes)?;
    let id = receipt["orderId"]
        .as_str()
        .context("orderId in the receipt")?
        .parse()?;
    Ok((id, Placed { sent, acked }))
}

/// Orders at `--fanout-rate` for `--duration-secs`, each sent at its
/// scheduled time whether or not earlier ones were answered.
async fn place_open_loop(
    args: &Args,
    base: &str,
    shop: &Arc<Shop>,
) -> anyhow::Result<HashMap<Uuid, Placed>> {
    let client = Client::new();
    let start = Instant::now();
    let until = start + args.duration();
    let mut tasks = JoinSet::new();
    for n in 1u64.. {
        let scheduled = start + Duration::from_secs_f64((n - 1) as f64 / args.fanout_rate);
        if scheduled >= until {
            break;
        }
        tokio::time::sleep_until(scheduled.into()).await;
        let (client, base, shop) = (client.clone(), base.to_owned(), Arc::clone(shop));
        let w = n as usize % args.clients;
        tasks.spawn(async move { place(&client, &base, &shop, w, n).await });
    }
    let mut orders = HashMap::new();
    while let Some(done) = tasks.join_next().await {
        let (id, placed) = done??;
        orders.insert(id, placed);
    }
    Ok(orders)
}

/// A server in its own process (see [`ChildServer`]), its resident memory
/// (VmRSS) read from `/proc/PID/status`: with no connection, with
/// `--memory-subscribers` idle keep-alive HTTP connections (each has read one
/// `/healthz`), then with as many idle staff streams, for `--memory-rounds`
/// rounds of connect, idle `--idle-secs`, disconnect. Each figure is taken
/// against the no-connection baseline: freed memory the allocator keeps is
/// reused by the next round, so the largest need shows, not the sum.
pub async fn memory(args: &Args, dir: &Path, report: &mut Report) -> anyhow::Result<()> {
    let server = ChildServer::start(args, &dir.join("memory.db")).await?;
    let measured = measure_memory(args, &server, report).await;
    server.stop().await?;
    measured
}

/// What one round saw.
struct Round {
    opened: usize,
    failure: Option<String>,
    connect_time: Duration,
    rss: u64,
    files: usize,
    /// `ordergate_sse_subscribers` while connected.
    gauge: f64,
    /// After they disconnected and 1 s passed.
    rss_after: u64,
    files_after: usize,
    gauge_after: f64,
    /// This process's RSS while they were connected.
    client_rss: u64,
}

async fn round(
    server: &ChildServer,
    shop: &Shop,
    path: &str,
    count: usize,
    idle: Duration,
) -> anyhow::Result<Round> {
    let pid = server.pid.to_string();
    let rss = || rss_bytes(&pid).context("reading the server's /proc/PID/status");
    let addr = address(&server.base)?;
    let gauge = || metric(&server.base, "ordergate_sse_subscribers", &shop.shop_id);
    let started = Instant::now();
    let (open, failure) = sse::connect_many(addr, path, count, CONNECT_PARALLEL).await;
    let connect_time = started.elapsed();
    ensure!(!open.is_empty(), "no connection opened: {failure:?}");
    tokio::time::sleep(idle).await;
    let (rss_with, files, gauge_with) =
        (rss()?, open_files(&pid).unwrap_or_default(), gauge().await?);
    let client_rss = rss_bytes("self").unwrap_or_default();
    let opened = open.len();
    drop(open);
    tokio::time::sleep(Duration::from_secs(1)).await;
    Ok(Round {
        opened,
        failure,
        connect_time,
        rss: rss_with,
        files,
        gauge: gauge_with,
        rss_after: rss()?,
        files_after: open_files(&pid).unwrap_or_default(),
        gauge_after: gauge().await?,
        client_rss,
    })
}

async fn measure_memory(
    args: &Args,
    server: &ChildServer,
    report: &mut Report,
) -> anyhow::Result<()> {
    let pid = server.pid.to_string();
    let base = &server.base;
    let shop = seed(base, &ShopSpec::small()).await?;
    let stream = staff_stream(&shop);
    // Start the shop's feed (a one-off per shop), then let the server settle.
    drop(sse::connect(address(base)?, &stream).await?);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss_bytes(&pid).context("reading the server's /proc/PID/status")?;
    let files_before = open_files(&pid).unwrap_or_default();
    let client_before = rss_bytes("self").unwrap_or_default();
    let (wanted, idle) = (
        args.memory_subscribers,
        Duration::from_secs_f64(args.idle_secs),
    );
    let per =
        |rss: u64, count: usize| rss.saturating_sub(before) as f64 / count.max(1) as f64 / 1024.0;

    let plain = round(server, &shop, "/healthz", wanted, idle).await?;
    let mut rounds = Vec::new();
    for _ in 0..args.memory_rounds.max(1) {
        rounds.push(round(server, &shop, &stream, wanted, idle).await?);
    }
    let first = &rounds[0];

    report.push(
        Row::info("server RSS, no connections", mib(before))
            .note(format!("server process: {} (pid {pid})", server.what)),
    );
    report.push(
        Row::info(
            &format!("  + {} idle keep-alive connections", plain.opened),
            format!("{:.1} KiB each", per(plain.rss, plain.opened)),
        )
        .note(format!(
            "RSS {} (plain HTTP/1.1 connections that read one /healthz, for comparison)",
            mib(plain.rss)
        )),
    );
    let mut row = Row::info(
        &format!("  + {} idle subscribers (staff streams)", first.opened),
        format!("{:.1} KiB each", per(first.rss, first.opened)),
    )
    .note(format!(
        "RSS {} with them (+{}); {} after they disconnected (1 s); opened in {:.1} s",
        mib(first.rss),
        mib(first.rss.saturating_sub(before)),
        mib(first.rss_after),
        first.connect_time.as_secs_f64()
    ))
    .note(format!(
        "server open files {files_before} -> {} -> {}; ordergate_sse_subscribers {:.0} while \
         connected, {:.0} after",
        first.files, first.files_after, first.gauge, first.gauge_after
    ));
    for (n, again) in rounds.iter().enumerate().skip(1) {
        row = row.note(format!(
            "round {}: {} subscribers, RSS {} ({:+.1} MiB over round {n}), {} after they left",
            n + 1,
            again.opened,
            mib(again.rss),
            (again.rss as f64 - rounds[n - 1].rss as f64) / (1024.0 * 1024.0),
            mib(again.rss_after),
        ));
    }
    row = row.note(format!(
        "client side (this process, not in the figure): RSS {} -> {}",
        mib(client_before),
        mib(first.client_rss)
    ));
    for failure in [&plain.failure, &first.failure].into_iter().flatten() {
        row = row.note(format!("fewer than {wanted} connections opened: {failure}"));
    }
    report.push(row);
    Ok(())
}
