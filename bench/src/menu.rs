//! Warm menu reads: `GET /api/v1/shops/{shopId}/menu` from every client,
//! closed loop, against the bare endpoint; and the server's own count of
//! menu cache misses (reads that went to the database), which must not grow
//! while the menu is warm (DESIGN.md: "steady-state menu reads make no
//! database query").

use std::sync::Arc;

use reqwest::StatusCode;

use crate::Args;
use crate::load::{Figure, MakeRequest, drive};
use crate::report::{Report, Row, Verdict};
use crate::server::{Shop, metric};

const MISSES: &str = "ordergate_menu_cache_misses_total";

pub async fn run(
    args: &Args,
    base: &str,
    shop: &Shop,
    bare: &Figure,
    report: &mut Report,
) -> anyhow::Result<()> {
    let url = format!("{base}/api/v1/shops/{}/menu", shop.shop_id);
    // Warm the cache: the orders before may have changed stock.
    let first = reqwest::get(&url).await?;
    anyhow::ensure!(first.status() == StatusCode::OK, "menu: {}", first.status());
    let before = metric(base, MISSES, &shop.shop_id).await?;
    let make: MakeRequest = Arc::new(move |client, _, _| client.get(&url));
    let figure = drive(
        args.clients,
        args.warmup(),
        args.duration(),
        make,
        |status, _, body| {
            if status == StatusCode::OK && body.starts_with(b"{") {
                Ok(())
            } else {
                Err(format!("{status} {}", String::from_utf8_lossy(body)))
            }
        },
    )
    .await?;
    let after = metric(base, MISSES, &shop.shop_id).await?;
    report.push(Row::ratio(
        "warm menu GETs",
        &figure,
        ("bare axum", bare),
        0.5,
    ));
    let grew = after - before;
    report.push(
        Row::info(
            "  menu cache misses during warm GETs",
            format!("+{grew:.0}"),
        )
        .target("+0", grew == 0.0)
        .verdict(Verdict::pass_if(grew == 0.0))
        .note(format!(
            "{MISSES} for the shop: {before:.0} after one priming GET, {after:.0} after the \
             warm-up and measured window"
        )),
    );
    Ok(())
}
