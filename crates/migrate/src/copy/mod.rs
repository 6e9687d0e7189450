//! `ordergate migrate`: copies a SQLite database into an empty PostgreSQL
//! database in committed batches, resumably, then verifies the copy.
//!
//! Resuming: the target keeps the migration's own bookkeeping in two
//! tables, `ordergate_migration_run` (the source's content digest and the
//! idempotency cutoff) and `ordergate_migration` (per table: the highest
//! source rowid copied, the rows copied, whether it is done). Each batch
//! commits its rows together with its progress row, so a run killed at any
//! moment leaves a target whose progress says exactly which rows it holds;
//! `--resume` carries on from there, after checking the source is still
//! the one the copy started from. Both tables are dropped once the copy
//! is verified.
//!
//! [`progress`] records a new run in those tables or loads the interrupted
//! one; [`batches`] copies the rows.

mod batches;
mod progress;

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use indicatif::ProgressBar;
use ordergate_store_postgres::{ConnectOptions, PgStore, describe};
use sqlx::Connection as _;
use sqlx::postgres::PgConnection;

use crate::compare;
use crate::sqlite;
use crate::tables::{self, Layout};

const PROGRESS: &str = "ordergate_migration";
const RUN: &str = "ordergate_migration_run";

/// What `ordergate migrate` was asked to do.
#[derive(Debug, Clone)]
pub struct MigrateOptions {
    /// `sqlite://FILE`: the database to copy; no server may hold it.
    pub from: String,
    /// `postgres://…`: the database to fill; it must be empty.
    pub to: String,
    /// Continue an interrupted migration into a half-filled target.
    pub resume: bool,
    /// Rows per committed batch.
    pub batch_rows: u32,
    /// Idempotency records whose stored responses are compared byte for byte.
    pub sample: u32,
    /// A pause after each batch (lets tests interrupt a migration midway).
    pub batch_pause: Duration,
}

/// Prints a line to stderr without breaking a progress bar that is drawn.
fn say(bar: Option<&ProgressBar>, line: &str) {
    match bar {
        Some(bar) => bar.suspend(|| eprintln!("{line}")),
        None => eprintln!("{line}"),
    }
}

/// Copies, verifies (printing the verification table on stdout) and fails
/// on any mismatch.
pub async fn migrate(options: &MigrateOptions) -> Result<()> {
    let path = sqlite::path_of(&options.from, "--from")?;
    if !ordergate_store_postgres::is_postgres_url(&options.to) {
        bail!("--to must be a postgres://… URL");
    }
    let source = sqlite::open_exclusive(&path)?;
    say(
        None,
        &format!(
            "source {}: not in use; its exclusive lock is held until the migration ends",
            path.display()
        ),
    );

    // The target's schema is the PostgreSQL backend's own, made by its
    // migrations. (The URL may carry a password: it stays out of messages.)
    drop(
        PgStore::connect(&options.to)
            .await
            .context("cannot open the PostgreSQL database")?,
    );
    let connect: ConnectOptions = options
        .to
        .parse()
        .context("cannot parse the PostgreSQL URL")?;
    let mut target = PgConnection::connect_with(&connect).await.map_err(|e| {
        anyhow::anyhow!(
            "cannot connect to the PostgreSQL database: {}",
            describe(&e)
        )
    })?;
    take_target(&mut target).await?;
    let layouts = tables::layouts(&source, &mut target).await?;

    let run = progress::prepare(&source, &path, &mut target, &layouts, options).await?;
    let started = Instant::now();
    let copied = batches::copy_tables(&source, &mut target, &layouts, &run, options).await?;
    finish(&mut target, &layouts).await?;
    say(
        None,
        &format!(
            "copied {copied} rows in {:.1} s; verifying the copy…",
            started.elapsed().as_secs_f64()
        ),
    );

    let comparison = compare::compare(
        &source,
        &mut target,
        &layouts,
        run.cutoff_ms,
        options.sample,
    )
    .await?;
    println!("{}", comparison.render());
    if !comparison.is_clean() {
        bail!(
            "the copy does not match its source ({} problems): the target keeps its progress \
             tables; `--resume` verifies again",
            comparison.problems().count()
        );
    }
    let mut tx = target.begin().await?;
    sqlx::query(sqlx::AssertSqlSafe(format!("drop table {PROGRESS}, {RUN}")))
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    let _ = target.close().await;
    drop(source);
    println!(
        "migrated {} to PostgreSQL: verification passed",
        path.display()
    );
    Ok(())
}

/// Takes the target for this run: one migration at a time per schema.
async fn take_target(target: &mut PgConnection) -> Result<()> {
    let taken: bool = sqlx::query_scalar(
        "select pg_try_advisory_lock(hashtextextended('ordergate migrate ' || current_schema(), 0))",
    )
    .fetch_one(&mut *target)
    .await?;
    if !taken {
        bail!("another `ordergate migrate` is writing into this PostgreSQL database right now");
    }
    Ok(())
}

/// The PostgreSQL-only state that follows from the copied rows: each
/// shop's event counter at its last event, and every identity sequence
/// past the ids copied (so new rows sort after the old ones).
async fn finish(target: &mut PgConnection, layouts: &[Layout]) -> Result<()> {
    let mut tx = target.begin().await?;
    sqlx::query(
        "insert into event_counters (shop_id, last_event_id)
         select shop_id, max(event_id) from events group by shop_id
         on conflict (shop_id) do update set last_event_id = excluded.last_event_id",
    )
    .execute(&mut *tx)
    .await?;
    // On Citus, a session's or an order's shop is found by its route.
    let citus: bool =
        sqlx::query_scalar("select exists (select from pg_extension where extname = 'citus')")
            .fetch_one(&mut *tx)
            .await?;
    if citus {
        for owned in [
            "insert into shop_routes (id, shop_id) select session_id, shop_id from table_sessions
             on conflict (id) do nothing",
            "insert into shop_routes (id, shop_id) select order_id, shop_id from orders
             on conflict (id) do nothing",
        ] {
            sqlx::query(owned).execute(&mut *tx).await?;
        }
    }
    for layout in layouts {
        for column in layout.identity_columns() {
            let (table, column) = (layout.table.name, &column.name);
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "select setval(pg_get_serial_sequence('{table}', '{column}'),
                               coalesce((select max({column}) from {table}), 0) + 1, false)"
            )))
            .execute(&mut *tx)
            .await?;
        }
    }
    tx.commit().await?;
    Ok(())
}
