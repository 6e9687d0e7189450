//! How much memory the server holds per idle subscriber.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};

use super::{CONNECT_PARALLEL, address, staff_stream};
use crate::Args;
use crate::report::{Report, Row};
use crate::server::{ChildServer, Shop, ShopSpec, metric, seed};
use crate::sse;
use crate::sys::{mib, open_files, rss_bytes};

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
