//! How long an order's `order.placed` event takes to reach each of many
//! connected subscribers.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use hdrhistogram::Histogram;
use reqwest::{Client, StatusCode};
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinSet;
use uuid::Uuid;

use super::{CONNECT_PARALLEL, address, staff_stream};
use crate::Args;
use crate::load::{histogram, micros, quantile_ms};
use crate::orders::{cart, order_request};
use crate::report::{Report, Row, ms};
use crate::server::Shop;
use crate::sse::{self, Subscriber};

/// How long the deliveries of the last order may take before the missing
/// ones count as lost.
const DELIVERY_GRACE: Duration = Duration::from_secs(10);

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

    let deliveries = tally(readers, &orders).await?;
    report.push(deliveries.row(args, count, orders.len(), expected));
    Ok(())
}

/// The deliveries of the measured orders to every subscriber.
struct Deliveries {
    /// From the order's 201 to each delivery.
    from_ack: Histogram<u64>,
    /// From the order's send to each delivery.
    from_send: Histogram<u64>,
    /// From the order's 201 to its last delivery.
    last: Histogram<u64>,
    /// Deliveries of a measured order.
    matched: u64,
    /// Deliveries read before their order's 201 (counted as 0).
    before_ack: u64,
}

/// Waits for every reader and times what each received against the order
/// it names; the warm-up order is left out.
async fn tally(
    mut readers: JoinSet<Vec<(Uuid, Instant)>>,
    orders: &HashMap<Uuid, Placed>,
) -> anyhow::Result<Deliveries> {
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
    Ok(Deliveries {
        from_ack,
        from_send,
        last,
        matched,
        before_ack,
    })
}

impl Deliveries {
    /// The figure of `orders` orders to `count` subscribers, `expected`
    /// deliveries in all.
    fn row(self, args: &Args, count: u64, orders: usize, expected: u64) -> Row {
        let Deliveries {
            from_ack,
            from_send,
            last,
            matched,
            before_ack,
        } = self;
        let missing = expected.saturating_sub(matched);
        Row::info(
            &format!("event fan-out to {count} subscribers (201 -> event)"),
            format!("{}x{count}", orders),
        )
        .latency(quantile_ms(&from_ack, 0.5), quantile_ms(&from_ack, 0.99))
        .errors(missing)
        .note(format!(
            "{} orders at {:.0}/s, {matched} of {expected} deliveries matched by orderId; \
             latency = subscriber's read time minus the order's 201 read time \
             ({before_ack} arrived before the 201 and count as 0); max {}",
            orders,
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
        ))
    }
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
