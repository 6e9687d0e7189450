//! The order figures: new orders and replays (closed loop), one hot item
//! against many different ones, and the latency of new orders sent open-loop
//! at a fixed rate.

use std::sync::Arc;

use reqwest::{Client, RequestBuilder, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::Args;
use crate::load::{Figure, MakeRequest, drive, open_loop, quantile_ms};
use crate::report::{Report, Row, ms};
use crate::server::Shop;

/// DESIGN.md: p99 of new orders at half the peak rate.
pub const LATENCY_TARGET_MS: f64 = 10.0;

/// Worker `w`'s table and the `n`th cart it orders: one or two lines, items
/// rotating through the menu, every third line with a topping.
pub fn cart(shop: &Shop, w: usize, n: u64) -> (String, String, Value) {
    let (session, pin) = shop.sessions[w % shop.sessions.len()].clone();
    let pick = w + n as usize;
    let first = &shop.items[pick % shop.items.len()];
    let toppings: Vec<&String> = if pick.is_multiple_of(3) && !shop.toppings.is_empty() {
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

pub fn order_request(
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

pub fn placed(
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

pub fn new_order(
    status: StatusCode,
    headers: &reqwest::header::HeaderMap,
    body: &[u8],
) -> Result<(), String> {
    placed(status, headers, body, false)
}

/// Every request a new order with a fresh key, from [`cart`].
fn new_order_requests(base: &str, shop: &Arc<Shop>) -> MakeRequest {
    let (base, shop) = (base.to_owned(), Arc::clone(shop));
    Arc::new(move |client, w, n| {
        let (session, pin, body) = cart(&shop, w, n);
        order_request(client, &base, &session, &pin, w, Uuid::new_v4(), &body)
    })
}

/// New orders, closed loop.
pub async fn new_orders(args: &Args, base: &str, shop: &Arc<Shop>) -> anyhow::Result<Figure> {
    drive(
        args.clients,
        args.warmup(),
        args.duration(),
        new_order_requests(base, shop),
        new_order,
    )
    .await
}

/// Each client places one order, then sends the same request again and
/// again: every answer is a replay.
pub async fn replays(args: &Args, base: &str, shop: &Arc<Shop>) -> anyhow::Result<Figure> {
    let client = Client::new();
    let mut placed_once = Vec::with_capacity(args.clients);
    for w in 0..args.clients {
        let (session, pin, body) = cart(shop, w, u64::MAX / 2);
        let key = Uuid::new_v4();
        let response = order_request(&client, base, &session, &pin, w, key, &body)
            .send()
            .await?;
        anyhow::ensure!(
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
        args.warmup(),
        args.duration(),
        make,
        |status, headers, body| placed(status, headers, body, true),
    )
    .await
}

/// Who orders what in [`one_line_orders`]: worker `w`'s shop, and the index
/// of its item in that shop.
pub type Pick = Box<dyn Fn(usize) -> (usize, usize) + Send + Sync>;

/// New one-line orders (quantity 1), closed loop: worker `w` sits at table
/// `w` (modulo the tables) of the shop `pick` gives it and orders the item
/// it gives, through server `w` (modulo the servers) of `bases`.
pub async fn one_line_orders(
    args: &Args,
    bases: &[String],
    shops: Arc<Vec<Shop>>,
    pick: Pick,
) -> anyhow::Result<Figure> {
    let bases = bases.to_vec();
    let make: MakeRequest = Arc::new(move |client, w, _| {
        let (shop, item) = pick(w);
        let shop = &shops[shop];
        let (session, pin) = &shop.sessions[w % shop.sessions.len()];
        let item = &shop.items[item];
        let body = json!({"items": [{"menuItemId": item, "quantity": 1}], "note": ""});
        let base = &bases[w % bases.len()];
        order_request(client, base, session, pin, w, Uuid::new_v4(), &body)
    });
    drive(
        args.clients,
        args.warmup(),
        args.duration(),
        make,
        new_order,
    )
    .await
}

/// New orders sent open-loop at `rate`, latency from each one's scheduled
/// send time; the p99 must stay within `target_ms`. The row is `what`'s.
pub async fn latency_at_rate(
    args: &Args,
    base: &str,
    shop: &Arc<Shop>,
    rate: f64,
    (target_ms, what): (f64, &str),
    report: &mut Report,
) -> anyhow::Result<()> {
    let measured = open_loop(
        rate,
        args.clients,
        args.warmup(),
        args.duration(),
        new_order_requests(base, shop),
        new_order,
    )
    .await?;
    let figure = &measured.figure;
    let p99 = figure.ms(0.99);
    let met = figure.errors == 0 && p99.is_some_and(|p99| p99 <= target_ms);
    let name = match args.latency_rate {
        Some(_) => format!("{what}, open loop at {rate:.0}/s"),
        None => format!("{what}, open loop at {rate:.0}/s (1/2 peak)"),
    };
    let mut row = Row::info(&name, format!("{:.0}/s", figure.rate))
        .latency(figure.ms(0.5), p99)
        .errors(figure.errors)
        .target(&format!("p99 <= {target_ms} ms"), met)
        .note(format!(
            "latency from the scheduled send time (coordinated omission corrected), \
                 {} requests; from the actual send: p50 {}, p99 {}; p99.9 {}, max {}",
            measured.scheduled,
            ms(quantile_ms(&measured.from_send, 0.5)),
            ms(quantile_ms(&measured.from_send, 0.99)),
            ms(figure.ms(0.999)),
            ms(figure.ms(1.0)),
        ))
        .note(format!(
            "generator lag (actual minus scheduled send): p50 {}, p99 {}, max {}",
            ms(quantile_ms(&measured.lag, 0.5)),
            ms(quantile_ms(&measured.lag, 0.99)),
            ms(quantile_ms(&measured.lag, 1.0)),
        ));
    if let Some(e) = &figure.first_error {
        row = row.note(format!("first error: {e}"));
    }
    report.push(row);
    Ok(())
}
