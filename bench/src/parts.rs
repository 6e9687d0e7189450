//! What each part of a run measures, in turn: the references first, then
//! the parts that share a server in this process and its seeded shop.

use std::path::Path;
use std::sync::Arc;

use crate::load::Figure;
use crate::report::{Report, Row};
use crate::server::{self, BenchServer, Shop, ShopSpec};
use crate::{Args, Part, live, menu, orders, references};

/// DESIGN.md: new orders at 1.5x raw SQLite commits (group commit).
const NEW_ORDERS_TARGET: f64 = 1.5;
/// DESIGN.md: replays at 0.8x a bare endpoint.
const REPLAY_TARGET: f64 = 0.8;

/// The figures the others are divided by.
pub struct References {
    /// Raw SQLite single-row transactions (`orders`).
    raw: Option<Figure>,
    /// A bare axum JSON endpoint (`orders`).
    bare: Option<Figure>,
}

pub async fn measure_references(
    args: &Args,
    dir: &Path,
    report: &mut Report,
) -> anyhow::Result<References> {
    let (warmup, duration) = (args.warmup(), args.duration());
    let mut raw = None;
    let mut bare: Option<Figure> = None;
    if args.runs(Part::Orders) {
        eprintln!("[orders] raw SQLite BEGIN IMMEDIATE single-row inserts, one connection …");
        let path = dir.join("raw.db");
        raw = Some(
            tokio::task::spawn_blocking(move || references::raw_sqlite(&path, warmup, duration))
                .await??,
        );
    }
    if args.runs(Part::Orders) {
        eprintln!(
            "[orders] bare axum JSON endpoint, {} clients …",
            args.clients
        );
        bare = Some(references::bare_endpoint(args, warmup, duration).await?);
    }
    if let Some(raw) = &raw {
        report.push(Row::reference(
            "raw SQLite BEGIN IMMEDIATE 1-row tx (FULL)",
            raw,
        ));
    }
    if let Some(bare) = &bare {
        report.push(Row::reference("bare axum JSON endpoint", bare));
    }
    Ok(References { raw, bare })
}

/// The parts measured against a server in this process, on one database
/// and one seeded shop.
pub async fn run_in_process(
    args: &Args,
    dir: &Path,
    references: &References,
    report: &mut Report,
) -> anyhow::Result<()> {
    let server = BenchServer::start(&dir.join("ordergate.db")).await?;
    let shop = Arc::new(server::seed(&server.base, &ShopSpec::main(args)).await?);

    let mut peak = None;
    if args.runs(Part::Orders) {
        peak = Some(run_orders(args, &server.base, &shop, references, report).await?);
    }

    if args.runs(Part::Menu) {
        menu::run(args, &server.base, report).await?;
    }

    if args.runs(Part::Hot) {
        run_hot(args, &server.base, report).await?;
    }

    if args.runs(Part::Latency) {
        run_latency(args, &server.base, &shop, peak, report).await?;
    }

    if args.runs(Part::Fanout) {
        eprintln!(
            "[fanout] {} staff-stream subscribers, {:.0} orders/s …",
            args.fanout_subscribers, args.fanout_rate
        );
        live::fanout(args, &server.base, &shop, report).await?;
    }
    server.stop().await
}

/// New and replayed guest orders; returns the new orders' rate, the peak
/// the latency part sends at half of.
async fn run_orders(
    args: &Args,
    base: &str,
    shop: &Arc<Shop>,
    references: &References,
    report: &mut Report,
) -> anyhow::Result<f64> {
    eprintln!("[orders] new guest orders, {} clients …", args.clients);
    let new_orders = orders::new_orders(args, base, shop).await?;
    eprintln!("[orders] replayed orders, {} clients …", args.clients);
    let replays = orders::replays(args, base, shop).await?;
    if let Some(raw) = &references.raw {
        report.push(Row::ratio(
            "new guest orders (SQLite FULL)",
            &new_orders,
            ("raw SQLite", raw),
            NEW_ORDERS_TARGET,
        ));
    }
    if let Some(bare) = &references.bare {
        report.push(Row::ratio(
            "replayed orders (same key)",
            &replays,
            ("bare axum", bare),
            REPLAY_TARGET,
        ));
    }
    Ok(new_orders.rate)
}

/// One item ordered by every client at once, against every client ordering
/// its own item, in a shop of its own.
async fn run_hot(args: &Args, base: &str, report: &mut Report) -> anyhow::Result<()> {
    let hot_shop = server::seed(base, &ShopSpec::hot(args)).await?;
    eprintln!(
        "[hot] {} clients, each ordering its own item …",
        args.clients
    );
    let items = hot_shop.items.len();
    let hot_shop = Arc::new(vec![hot_shop]);
    let bases = [base.to_owned()];
    let spread = orders::one_line_orders(
        args,
        &bases,
        Arc::clone(&hot_shop),
        Box::new(move |w| (0, w % items)),
    )
    .await?;
    eprintln!("[hot] {} clients, all ordering one item …", args.clients);
    let hot = orders::one_line_orders(args, &bases, hot_shop, Box::new(|_| (0, 0))).await?;
    report.push(Row::reference(
        &format!("orders, {} different items", args.clients),
        &spread,
    ));
    report.push(Row::ratio(
        &format!("orders, one hot item x {} clients", args.clients),
        &hot,
        ("different items", &spread),
        0.5,
    ));
    Ok(())
}

/// New orders open-loop at `--latency-rate`, or else at half the peak: the
/// orders part's, or one measured here.
async fn run_latency(
    args: &Args,
    base: &str,
    shop: &Arc<Shop>,
    peak: Option<f64>,
    report: &mut Report,
) -> anyhow::Result<()> {
    let peak = match peak {
        Some(peak) => peak,
        None if args.latency_rate.is_some() => 0.0,
        None => {
            eprintln!(
                "[latency] new guest orders (closed loop, for the peak), {} clients …",
                args.clients
            );
            let peak = orders::new_orders(args, base, shop).await?;
            report.push(Row::reference(
                "new guest orders (peak, closed loop)",
                &peak,
            ));
            peak.rate
        }
    };
    let rate = args.latency_rate.unwrap_or(peak / 2.0);
    eprintln!("[latency] new guest orders open-loop at {rate:.0}/s …");
    orders::latency_at_rate(
        args,
        base,
        shop,
        rate,
        (orders::LATENCY_TARGET_MS, "new orders"),
        report,
    )
    .await
}
