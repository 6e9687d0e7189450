//! The Citus figures (`--only citus`, on the coordinator `--citus`
//! names): new orders spread over many shops, through one ordergate node
//! and through two, against raw single-row insert transactions into a
//! table distributed over the same cluster at the same client concurrency,
//! measured in the same run; and what a raw client writing only an order's
//! rows, one order a transaction, gets from the same cluster.

use std::sync::Arc;

use anyhow::Context;
use sqlx::Connection;
use sqlx::postgres::PgConnection;
use uuid::Uuid;

use crate::Args;
use crate::postgres::{Item, one_line_orders, raw_inserts, raw_order_transactions};
use crate::report::{Report, Row};
use crate::server::{self, BenchServer, ShopSpec};

/// Issue 21: orders spread over many shops reach half the raw transactions.
const SPREAD_TARGET: f64 = 0.5;

/// A schema of its own in the coordinator's database (Citus works in the
/// database its extension is in), dropped at the end.
struct BenchSchema {
    admin_url: String,
    name: String,
    url: String,
}

impl BenchSchema {
    async fn create(admin_url: &str) -> anyhow::Result<BenchSchema> {
        let name = format!("ordergate_bench_{}", Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(admin_url)
            .await
            .with_context(|| format!("connecting to {admin_url}"))?;
        let citus: bool =
            sqlx::query_scalar("select exists (select from pg_extension where extname = 'citus')")
                .fetch_one(&mut admin)
                .await?;
        anyhow::ensure!(
            citus,
            "--citus names a database without the citus extension"
        );
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("create schema {name}")))
            .execute(&mut admin)
            .await?;
        let separator = if admin_url.contains('?') { '&' } else { '?' };
        Ok(BenchSchema {
            url: format!("{admin_url}{separator}options[search_path]={name}"),
            admin_url: admin_url.to_owned(),
            name,
        })
    }

    async fn drop(self) -> anyhow::Result<()> {
        let mut admin = PgConnection::connect(&self.admin_url).await?;
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "drop schema {} cascade",
            self.name
        )))
        .execute(&mut admin)
        .await?;
        Ok(())
    }
}

pub async fn run(args: &Args, report: &mut Report) -> anyhow::Result<()> {
    let admin_url = args
        .citus
        .as_deref()
        .context("the citus part needs --citus URL (or ORDERGATE_BENCH_CITUS)")?;
    let schema = BenchSchema::create(admin_url).await?;
    let measured = measure(args, &schema, report).await;
    schema.drop().await?;
    measured
}

async fn measure(args: &Args, schema: &BenchSchema, report: &mut Report) -> anyhow::Result<()> {
    eprintln!(
        "[citus] raw single-row insert transactions into a distributed table, {} connections …",
        args.clients
    );
    let raw = raw_inserts(&schema.url, args, true).await?;
    report.push(Row::reference(
        &format!("raw Citus 1-row insert tx x {}", args.clients),
        &raw,
    ));

    let nodes = [
        BenchServer::start_url(schema.url.clone()).await?,
        BenchServer::start_url(schema.url.clone()).await?,
    ];
    let bases: Vec<String> = nodes.iter().map(|node| node.base.clone()).collect();
    let mut shops = Vec::new();
    for _ in 0..args.clients {
        shops.push(server::seed(&bases[0], &ShopSpec::small()).await?);
    }
    let shops = Arc::new(shops);
    let mut figures = Vec::new();
    for used in [1, 2] {
        eprintln!(
            "[citus] new orders over {} shops of one table, through {used} node(s) …",
            shops.len()
        );
        figures.push(
            one_line_orders(args, &bases[..used], Arc::clone(&shops), Item::Untracked).await?,
        );
    }
    for node in nodes {
        node.stop().await?;
    }
    eprintln!("[citus] raw order transactions over the same shops …");
    let raw_orders = raw_order_transactions(&schema.url, args, &shops, true).await?;
    for (used, figure) in (1..).zip(figures) {
        report.push(
            Row::ratio(
                &format!(
                    "Citus orders, {} shops x 1 table, {used} node(s)",
                    args.clients
                ),
                &figure,
                ("raw Citus", &raw),
                SPREAD_TARGET,
            )
            .note(format!(
                "{:.2}x the raw order transactions below",
                figure.rate / raw_orders.rate
            )),
        );
    }
    report.push(Row::reference(
        &format!(
            "raw Citus order tx (an order's rows, a statement each) x {}",
            args.clients
        ),
        &raw_orders,
    ));
    Ok(())
}
