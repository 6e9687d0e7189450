//! ordergate's data tools, for operators rather than guests:
//!
//! - `ordergate migrate --from sqlite://… --to postgres://…` moves a
//!   restaurant from the embedded SQLite default to PostgreSQL: every table
//!   in dependency order, in committed batches that a killed run resumes
//!   from (`--resume`), then a verification of the copy against its source
//!   that fails the command on any mismatch ([`migrate`]).
//! - `ordergate verify --database …` checks the invariants of one database
//!   of either backend: stock equals its op log, each order's op-log rows
//!   take (and a cancellation gives back) what its lines name, every order
//!   has its kitchen event, event ids run without gaps, ticket numbers are
//!   unique ([`verify`]).
//! - `ordergate backup --database sqlite://… --to FILE` takes a consistent
//!   snapshot of a SQLite database while a server keeps writing to it
//!   ([`backup`]).
//! - `ordergate distribute --database postgres://…` spreads a PostgreSQL
//!   database that got the Citus extension after it was migrated over the
//!   cluster's workers, by shop.
//!
//! This crate reads and writes the two backends' tables directly (rusqlite
//! and sqlx): it moves data, it decides nothing. The schemas stay the
//! backends' own; the PostgreSQL one is created by the PostgreSQL backend's
//! migrations.

mod backup;
mod compare;
mod copy;
mod db;
mod invariants;
mod report;
mod sqlite;
mod tables;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use sqlx::Connection as _;

pub use backup::{BackupSummary, backup};
pub use copy::{MigrateOptions, migrate};
pub use invariants::{Check, Findings};
pub use tables::SQLITE_SCHEMA_VERSION;

/// Checks the invariants of the database `url` names (`sqlite://FILE` or
/// `postgres://…`), read in one consistent snapshot; a running server may
/// keep using it meanwhile. Nothing is written.
pub async fn verify(url: &str) -> Result<Findings> {
    if ordergate_store_postgres::is_postgres_url(url) {
        let options: ordergate_store_postgres::ConnectOptions =
            url.parse().context("cannot parse the PostgreSQL URL")?;
        let mut conn = sqlx::PgConnection::connect_with(&options)
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot connect to the PostgreSQL database: {}",
                    ordergate_store_postgres::describe(&e)
                )
            })?;
        sqlx::query("begin isolation level repeatable read read only")
            .execute(&mut conn)
            .await?;
        let findings = invariants::check(&mut db::Db::Pg(&mut conn))
            .await
            .context("checking the database (is it an ordergate database?)")?;
        sqlx::query("commit").execute(&mut conn).await?;
        let _ = conn.close().await;
        return Ok(findings);
    }
    let path =
        sqlite::path_of(url, "--database").context("expected sqlite://FILE or postgres://…")?;
    let conn = sqlite::open_shared(&path)?;
    conn.execute_batch("begin")?;
    let findings = invariants::check(&mut db::Db::Sqlite(&conn))
        .await
        .context("checking the database")?;
    conn.execute_batch("commit")?;
    Ok(findings)
}

/// The data tools as `ordergate` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum DataCommand {
    /// Copy a SQLite database into an empty PostgreSQL database, then verify the copy.
    Migrate(MigrateArgs),
    /// Check a database's invariants (stock = op log, one kitchen event per order, …).
    Verify(VerifyArgs),
    /// Write a consistent snapshot of a (running) SQLite database to a new file.
    Backup(BackupArgs),
    /// Spread a PostgreSQL database that got Citus after it was set up over the cluster's workers.
    Distribute(DistributeArgs),
}

#[derive(Debug, Clone, clap::Args)]
pub struct MigrateArgs {
    /// The SQLite database to copy (`sqlite://FILE`); no server may be running on it.
    #[arg(long)]
    pub from: String,

    /// The PostgreSQL database to copy into (`postgres://…`); it must be empty.
    #[arg(long)]
    pub to: String,

    /// Continue an interrupted migration into the half-filled target.
    #[arg(long)]
    pub resume: bool,

    /// Rows per committed batch.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=50_000))]
    pub batch_rows: u32,

    /// Idempotency records whose stored responses are compared byte for byte afterwards.
    #[arg(long, default_value_t = 1000)]
    pub sample: u32,

    /// Pause after each batch, in milliseconds (for tests that interrupt a migration).
    #[arg(long, default_value_t = 0, hide = true)]
    pub batch_pause_ms: u64,
}

#[derive(Debug, Clone, clap::Args)]
pub struct VerifyArgs {
    /// `sqlite://FILE` or `postgres://…`.
    #[arg(long, env = "ORDERGATE_DATABASE_URL")]
    pub database: String,
}

#[derive(Debug, Clone, clap::Args)]
pub struct BackupArgs {
    /// The SQLite database to back up (`sqlite://FILE`), running or not.
    #[arg(long, env = "ORDERGATE_DATABASE_URL")]
    pub database: String,

    /// The snapshot file to write; it must not exist yet.
    #[arg(long)]
    pub to: PathBuf,
}

#[derive(Debug, Clone, clap::Args)]
pub struct DistributeArgs {
    /// The Citus coordinator's database (`postgres://…`); stop every server on it first.
    #[arg(long, env = "ORDERGATE_DATABASE_URL")]
    pub database: String,
}

impl DataCommand {
    /// Runs the command; an `Err` is its failure (exit status non-zero).
    pub async fn run(self) -> Result<()> {
        match self {
            DataCommand::Migrate(args) => {
                migrate(&MigrateOptions {
                    from: args.from,
                    to: args.to,
                    resume: args.resume,
                    batch_rows: args.batch_rows,
                    sample: args.sample,
                    batch_pause: Duration::from_millis(args.batch_pause_ms),
                })
                .await
            }
            DataCommand::Verify(args) => {
                let findings = verify(&args.database).await?;
                print!("{}", findings.render());
                let problems = findings.problems().count();
                if problems > 0 {
                    bail!("verify found {problems} problem(s)");
                }
                println!("verify: every invariant holds");
                Ok(())
            }
            DataCommand::Backup(args) => {
                let summary =
                    tokio::task::spawn_blocking(move || backup(&args.database, &args.to)).await??;
                println!(
                    "backup written to {} ({}; integrity ok; {}, {}, {})",
                    summary.path.display(),
                    report::counted(summary.bytes, "byte"),
                    report::counted(summary.shops, "shop"),
                    report::counted(summary.orders, "order"),
                    report::counted(summary.events, "event")
                );
                Ok(())
            }
            DataCommand::Distribute(args) => {
                if !ordergate_store_postgres::is_postgres_url(&args.database) {
                    bail!("--database must be the Citus coordinator's postgres://… URL");
                }
                let options = args
                    .database
                    .parse()
                    .context("cannot parse the PostgreSQL URL")?;
                match ordergate_store_postgres::distribute(options).await? {
                    0 => println!("distribute: every table was already spread by shop"),
                    tables => println!(
                        "distribute: {} spread over the cluster by shop",
                        report::counted(tables as u64, "table")
                    ),
                }
                Ok(())
            }
        }
    }
}
