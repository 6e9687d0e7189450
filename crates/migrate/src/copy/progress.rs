//! The run a copy belongs to, in the target's bookkeeping tables: recorded
//! when a copy starts into an empty target, loaded when `--resume` carries
//! on an interrupted one.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Result, bail};
use rusqlite::Connection;
use sha2::{Digest, Sha256};
use sqlx::Connection as _;
use sqlx::postgres::PgConnection;

use super::{MigrateOptions, PROGRESS, RUN, say};
use crate::db::{RowDigest, sqlite_each};
use crate::tables::{Layout, PG_TABLES};

/// The run a copy belongs to: what the source looked like when it started.
pub(super) struct Run {
    pub(super) cutoff_ms: i64,
    /// Per table: (highest rowid copied, rows copied, done).
    pub(super) progress: HashMap<String, (i64, i64, bool)>,
    /// Per table: rows to copy in all.
    pub(super) totals: HashMap<String, u64>,
}

/// Checks the target is empty (or, with `--resume`, holds an interrupted
/// migration of this very source) and records or loads the run.
pub(super) async fn prepare(
    source: &Connection,
    path: &Path,
    target: &mut PgConnection,
    layouts: &[Layout],
    options: &MigrateOptions,
) -> Result<Run> {
    let in_progress: bool = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "select to_regclass('{PROGRESS}') is not null and to_regclass('{RUN}') is not null"
    )))
    .fetch_one(&mut *target)
    .await?;
    if in_progress {
        let progress = load_progress(target).await?;
        if !options.resume {
            let copied: i64 = progress.values().map(|p| p.1).sum();
            let done = progress.values().filter(|p| p.2).count();
            let state = if done == progress.len() {
                "its copy is complete but was not verified".to_owned()
            } else {
                format!(
                    "{copied} rows copied, {done} of {} tables done",
                    progress.len()
                )
            };
            bail!(
                "the PostgreSQL database holds an interrupted migration ({state}): run again \
                 with --resume to continue it, or empty the database to start over"
            );
        }
        return resume(source, path, target, layouts, progress).await;
    }

    refuse_filled(target).await?;
    if options.resume {
        say(
            None,
            "nothing to resume: the target is empty, starting afresh",
        );
    }
    let cutoff_ms = ordergate_domain::now().timestamp_millis();
    say(None, "reading the source…");
    let (digest, totals) = fingerprint(source, layouts, cutoff_ms)?;
    let names: Vec<&str> = layouts.iter().map(|l| l.table.name).collect();
    record_run(target, path, &digest, cutoff_ms, &names).await?;
    let progress = names
        .iter()
        .map(|name| ((*name).to_owned(), (0, 0, false)))
        .collect();
    Ok(Run {
        cutoff_ms,
        progress,
        totals,
    })
}

/// The interrupted run whose `progress` the target holds, once the source
/// is checked to be the one it started from.
async fn resume(
    source: &Connection,
    path: &Path,
    target: &mut PgConnection,
    layouts: &[Layout],
    progress: HashMap<String, (i64, i64, bool)>,
) -> Result<Run> {
    let (digest, cutoff_ms): (String, i64) = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "select source_digest, cutoff_ms from {RUN}"
    )))
    .fetch_one(&mut *target)
    .await?;
    say(
        None,
        "resuming: checking the source is the one the copy started from…",
    );
    let (now, totals) = fingerprint(source, layouts, cutoff_ms)?;
    if now != digest {
        bail!(
            "{} changed since the interrupted migration started (was a server run on it?): \
             the copy cannot be resumed; empty the PostgreSQL database and start over",
            path.display()
        );
    }
    let copied: i64 = progress.values().map(|p| p.1).sum();
    say(
        None,
        &format!("resuming after {copied} rows already copied"),
    );
    Ok(Run {
        cutoff_ms,
        progress,
        totals,
    })
}

/// Fails if any of the target's tables holds rows.
async fn refuse_filled(target: &mut PgConnection) -> Result<()> {
    let mut filled = Vec::new();
    for table in PG_TABLES {
        let rows: bool = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "select exists (select 1 from {table})"
        )))
        .fetch_one(&mut *target)
        .await?;
        if rows {
            filled.push(table);
        }
    }
    if !filled.is_empty() {
        bail!(
            "the PostgreSQL database is not empty ({} hold rows) and holds no interrupted \
             migration: migrate copies into an empty database only",
            filled.join(", ")
        );
    }
    Ok(())
}

/// Creates the bookkeeping tables and records the run in them, with a
/// progress row per table, in one transaction.
async fn record_run(
    target: &mut PgConnection,
    path: &Path,
    digest: &str,
    cutoff_ms: i64,
    names: &[&str],
) -> Result<()> {
    let mut tx = target.begin().await?;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "create table {RUN} (
             source text not null,
             source_digest text not null, -- content and rowids of every table copied
             cutoff_ms bigint not null, -- idempotency records expiring after it are copied
             started_at timestamptz not null
         )"
    )))
    .execute(&mut *tx)
    .await?;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "create table {PROGRESS} (
             table_name text primary key,
             last_rowid bigint not null default 0, -- the highest source rowid copied
             rows_copied bigint not null default 0,
             done boolean not null default false
         )"
    )))
    .execute(&mut *tx)
    .await?;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "insert into {RUN} (source, source_digest, cutoff_ms, started_at) values ($1, $2, $3, now())"
    )))
    .bind(path.display().to_string())
    .bind(digest)
    .bind(cutoff_ms)
    .execute(&mut *tx)
    .await?;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "insert into {PROGRESS} (table_name) select * from unnest($1::text[])"
    )))
    .bind(names)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

async fn load_progress(target: &mut PgConnection) -> Result<HashMap<String, (i64, i64, bool)>> {
    let rows: Vec<(String, i64, i64, bool)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "select table_name, last_rowid, rows_copied, done from {PROGRESS}"
    )))
    .fetch_all(&mut *target)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(table, last, copied, done)| (table, (last, copied, done)))
        .collect())
}

/// A digest of everything the migration copies, rowids included (they
/// decide which rows a resumed copy still has to do), and each table's
/// count of rows to copy.
fn fingerprint(
    source: &Connection,
    layouts: &[Layout],
    cutoff_ms: i64,
) -> Result<(String, HashMap<String, u64>)> {
    let mut all = Sha256::new();
    let mut totals = HashMap::new();
    for layout in layouts {
        let table = layout.table.name;
        let condition = layout
            .table
            .source_condition(cutoff_ms)
            .map(|c| format!(" where {c}"))
            .unwrap_or_default();
        let mut digest = RowDigest::default();
        sqlite_each(
            source,
            &format!(
                "select rowid, {} from {table}{condition}",
                layout.source_columns()
            ),
            [],
            |row| {
                digest.add(&row);
                Ok(())
            },
        )?;
        all.update(format!("{table}:{}:{};", digest.rows, digest.hex()));
        totals.insert(table.to_owned(), digest.rows);
    }
    Ok((hex::encode(all.finalize()), totals))
}
