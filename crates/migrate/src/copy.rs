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

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use chrono::{DateTime, Utc};
use indicatif::{ProgressBar, ProgressStyle};
use ordergate_store_postgres::{ConnectOptions, PgStore};
use rusqlite::Connection;
use sha2::{Digest, Sha256};
use sqlx::Connection as _;
use sqlx::postgres::PgConnection;
use uuid::Uuid;

use crate::compare;
use crate::db::{RowDigest, Val, sqlite_each};
use crate::sqlite;
use crate::tables::{self, Layout, PG_TABLES, PgKind};

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
    let mut target = PgConnection::connect_with(&connect)
        .await
        .context("cannot connect to the PostgreSQL database")?;
    take_target(&mut target).await?;
    let layouts = tables::layouts(&source, &mut target).await?;

    let run = prepare(&source, &path, &mut target, &layouts, options).await?;
    let started = Instant::now();
    let copied = copy_tables(&source, &mut target, &layouts, &run, options).await?;
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

/// The run a copy belongs to: what the source looked like when it started.
struct Run {
    cutoff_ms: i64,
    /// Per table: (highest rowid copied, rows copied, done).
    progress: HashMap<String, (i64, i64, bool)>,
    /// Per table: rows to copy in all.
    totals: HashMap<String, u64>,
}

/// Checks the target is empty (or, with `--resume`, holds an interrupted
/// migration of this very source) and records or loads the run.
async fn prepare(
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
        return Ok(Run {
            cutoff_ms,
            progress,
            totals,
        });
    }

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
    if options.resume {
        say(
            None,
            "nothing to resume: the target is empty, starting afresh",
        );
    }
    let cutoff_ms = ordergate_domain::now().timestamp_millis();
    say(None, "reading the source…");
    let (digest, totals) = fingerprint(source, layouts, cutoff_ms)?;
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
    .bind(&digest)
    .bind(cutoff_ms)
    .execute(&mut *tx)
    .await?;
    let names: Vec<&str> = layouts.iter().map(|l| l.table.name).collect();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "insert into {PROGRESS} (table_name) select * from unnest($1::text[])"
    )))
    .bind(&names)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
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

fn bar(total: u64, done: u64) -> Option<ProgressBar> {
    let bar = ProgressBar::new(total);
    if bar.is_hidden() {
        return None;
    }
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} {msg:<16} [{bar:24}] {human_pos}/{human_len} rows, eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_position(done);
    bar.enable_steady_tick(Duration::from_millis(200));
    Some(bar)
}

/// Copies every table not yet done, batch by batch; returns the rows
/// copied by this run.
async fn copy_tables(
    source: &Connection,
    target: &mut PgConnection,
    layouts: &[Layout],
    run: &Run,
    options: &MigrateOptions,
) -> Result<u64> {
    let total: u64 = run.totals.values().sum();
    let before: u64 = run
        .progress
        .values()
        .map(|p| u64::try_from(p.1).unwrap_or(0))
        .sum();
    let bar = bar(total, before);
    let mut copied = 0;
    for layout in layouts {
        let table = layout.table.name;
        let (mut last, mut rows, done) = run
            .progress
            .get(table)
            .copied()
            .ok_or_else(|| anyhow!("the migration's progress has no row for {table}"))?;
        if done {
            continue;
        }
        if let Some(bar) = &bar {
            bar.set_message(table);
        }
        let condition = layout
            .table
            .source_condition(run.cutoff_ms)
            .map(|c| format!(" and {c}"))
            .unwrap_or_default();
        let select = format!(
            "select rowid, {} from {table} where rowid > ?1{condition} order by rowid limit ?2",
            layout.source_columns()
        );
        let insert = insert_sql(layout);
        let update = format!(
            "update {PROGRESS} set last_rowid = $2, rows_copied = rows_copied + $3, done = $4
             where table_name = $1"
        );
        loop {
            let mut batch = Batch::new(layout);
            sqlite_each(source, &select, (last, options.batch_rows), |row| {
                batch.push(row)
            })?;
            let count = batch.len();
            let end = count < options.batch_rows as usize;
            let mut tx = target.begin().await?;
            if count > 0 {
                let batch_last = batch.last_rowid;
                batch
                    .insert(&insert)
                    .execute(&mut *tx)
                    .await
                    .with_context(|| format!("copying {table} after rowid {last}"))?;
                last = batch_last;
            }
            sqlx::query(sqlx::AssertSqlSafe(update.clone()))
                .bind(table)
                .bind(last)
                .bind(count as i64)
                .bind(end)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            rows += count as i64;
            copied += count as u64;
            if let Some(bar) = &bar {
                bar.inc(count as u64);
            }
            if end {
                break;
            }
            if !options.batch_pause.is_zero() {
                tokio::time::sleep(options.batch_pause).await;
            }
        }
        say(bar.as_ref(), &format!("  {table:<18} {rows:>9} rows"));
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(copied)
}

fn insert_sql(layout: &Layout) -> String {
    let columns = layout.target_columns();
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    let arrays: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| format!("${}::{}", i + 1, c.kind.array()))
        .collect();
    let overriding = if layout.identity {
        " overriding system value"
    } else {
        ""
    };
    format!(
        "insert into {} ({}){overriding} select * from unnest({})",
        layout.table.name,
        names.join(", "),
        arrays.join(", ")
    )
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

/// One batch of rows, column by column, in PostgreSQL's types.
struct Batch {
    table: &'static str,
    columns: Vec<(String, Buffer)>,
    /// Whether the first buffer takes the rowid.
    rowid_column: bool,
    last_rowid: i64,
    len: usize,
}

enum Buffer {
    Uuid(Vec<Option<Uuid>>),
    Text(Vec<Option<String>>),
    BigInt(Vec<Option<i64>>),
    Bool(Vec<Option<bool>>),
    Time(Vec<Option<DateTime<Utc>>>),
}

impl Buffer {
    fn new(kind: PgKind) -> Buffer {
        match kind {
            PgKind::Uuid => Buffer::Uuid(Vec::new()),
            PgKind::Text => Buffer::Text(Vec::new()),
            PgKind::BigInt => Buffer::BigInt(Vec::new()),
            PgKind::Bool => Buffer::Bool(Vec::new()),
            PgKind::Time => Buffer::Time(Vec::new()),
        }
    }

    /// Converts a SQLite value (UUID text, 0/1, unix milliseconds) to
    /// this column's type.
    fn push(&mut self, val: Val) -> std::result::Result<(), String> {
        let wrong = |val: &Val, expected: &str| format!("expected {expected}, found {val:?}");
        match (self, val) {
            (Buffer::Uuid(v), Val::Null) => v.push(None),
            (Buffer::Text(v), Val::Null) => v.push(None),
            (Buffer::BigInt(v), Val::Null) => v.push(None),
            (Buffer::Bool(v), Val::Null) => v.push(None),
            (Buffer::Time(v), Val::Null) => v.push(None),
            (Buffer::Uuid(v), Val::Text(s)) => {
                v.push(Some(
                    Uuid::parse_str(&s).map_err(|e| format!("{s:?}: {e}"))?,
                ));
            }
            (Buffer::Text(v), Val::Text(s)) => v.push(Some(s)),
            (Buffer::BigInt(v), Val::Int(n)) => v.push(Some(n)),
            (Buffer::Bool(v), Val::Int(n @ (0 | 1))) => v.push(Some(n == 1)),
            (Buffer::Time(v), Val::Int(ms)) => v.push(Some(
                DateTime::from_timestamp_millis(ms).ok_or(format!("time {ms} out of range"))?,
            )),
            (Buffer::Uuid(_), val) => return Err(wrong(&val, "UUID text")),
            (Buffer::Text(_), val) => return Err(wrong(&val, "text")),
            (Buffer::BigInt(_), val) => return Err(wrong(&val, "an integer")),
            (Buffer::Bool(_), val) => return Err(wrong(&val, "0 or 1")),
            (Buffer::Time(_), val) => return Err(wrong(&val, "unix milliseconds")),
        }
        Ok(())
    }
}

impl Batch {
    fn new(layout: &Layout) -> Batch {
        Batch {
            table: layout.table.name,
            columns: layout
                .target_columns()
                .into_iter()
                .map(|c| (c.name.clone(), Buffer::new(c.kind)))
                .collect(),
            rowid_column: layout.rowid_column.is_some(),
            last_rowid: 0,
            len: 0,
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    /// Takes a source row: its rowid, then its columns.
    fn push(&mut self, row: Vec<Val>) -> Result<()> {
        let mut values = row.into_iter();
        let rowid = values
            .next()
            .and_then(|v| v.int())
            .ok_or_else(|| anyhow!("{}: a row without its rowid", self.table))?;
        let values = (self.rowid_column.then_some(Val::Int(rowid)))
            .into_iter()
            .chain(values);
        for ((name, buffer), value) in self.columns.iter_mut().zip(values) {
            buffer
                .push(value)
                .map_err(|e| anyhow!("{} row {rowid}, column {name}: {e}", self.table))?;
        }
        self.last_rowid = rowid;
        self.len += 1;
        Ok(())
    }

    fn insert(
        self,
        sql: &str,
    ) -> sqlx::query::Query<'static, sqlx::Postgres, sqlx::postgres::PgArguments> {
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()));
        for (_, buffer) in self.columns {
            query = match buffer {
                Buffer::Uuid(v) => query.bind(v),
                Buffer::Text(v) => query.bind(v),
                Buffer::BigInt(v) => query.bind(v),
                Buffer::Bool(v) => query.bind(v),
                Buffer::Time(v) => query.bind(v),
            };
        }
        query
    }
}
