//! Copying the tables in committed batches, each with its progress row.

use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use chrono::{DateTime, Utc};
use indicatif::{ProgressBar, ProgressStyle};
use rusqlite::Connection;
use sqlx::Connection as _;
use sqlx::postgres::PgConnection;
use uuid::Uuid;

use super::progress::Run;
use super::{MigrateOptions, PROGRESS, say};
use crate::db::{Val, sqlite_each};
use crate::tables::{Layout, PgKind};

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
pub(super) async fn copy_tables(
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
        let (last, rows, done) = run
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
        let statements = statements(layout, run.cutoff_ms);
        let added = copy_table(
            source,
            target,
            layout,
            &statements,
            last,
            options,
            bar.as_ref(),
        )
        .await?;
        copied += added;
        let rows = rows + added as i64;
        say(bar.as_ref(), &format!("  {table:<18} {rows:>9} rows"));
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(copied)
}

/// What copying a table runs, batch after batch.
struct Statements {
    /// The next batch of source rows, after a rowid.
    select: String,
    /// A batch into the target.
    insert: String,
    /// The table's progress row, in the batch's transaction.
    update: String,
}

fn statements(layout: &Layout, cutoff_ms: i64) -> Statements {
    let condition = layout
        .table
        .source_condition(cutoff_ms)
        .map(|c| format!(" and {c}"))
        .unwrap_or_default();
    let table = layout.table.name;
    Statements {
        select: format!(
            "select rowid, {} from {table} where rowid > ?1{condition} order by rowid limit ?2",
            layout.source_columns()
        ),
        insert: insert_sql(layout),
        update: format!(
            "update {PROGRESS} set last_rowid = $2, rows_copied = rows_copied + $3, done = $4
             where table_name = $1"
        ),
    }
}

/// Copies a table's rows after rowid `last`, each batch committed with its
/// progress row; returns the rows copied.
async fn copy_table(
    source: &Connection,
    target: &mut PgConnection,
    layout: &Layout,
    statements: &Statements,
    mut last: i64,
    options: &MigrateOptions,
    bar: Option<&ProgressBar>,
) -> Result<u64> {
    let table = layout.table.name;
    let batch_rows = layout.table.batch_rows(options.batch_rows);
    let mut copied = 0;
    loop {
        let mut batch = Batch::new(layout);
        sqlite_each(source, &statements.select, (last, batch_rows), |row| {
            batch.push(row)
        })?;
        let count = batch.len();
        let end = count < batch_rows as usize;
        let mut tx = target.begin().await?;
        if count > 0 {
            let batch_last = batch.last_rowid;
            batch
                .insert(&statements.insert)
                .execute(&mut *tx)
                .await
                .with_context(|| format!("copying {table} after rowid {last}"))?;
            last = batch_last;
        }
        sqlx::query(sqlx::AssertSqlSafe(statements.update.clone()))
            .bind(table)
            .bind(last)
            .bind(count as i64)
            .bind(end)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        copied += count as u64;
        if let Some(bar) = bar {
            bar.inc(count as u64);
        }
        if end {
            return Ok(copied);
        }
        if !options.batch_pause.is_zero() {
            tokio::time::sleep(options.batch_pause).await;
        }
    }
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
    Bytes(Vec<Option<Vec<u8>>>),
}

impl Buffer {
    fn new(kind: PgKind) -> Buffer {
        match kind {
            PgKind::Uuid => Buffer::Uuid(Vec::new()),
            PgKind::Text => Buffer::Text(Vec::new()),
            PgKind::BigInt => Buffer::BigInt(Vec::new()),
            PgKind::Bool => Buffer::Bool(Vec::new()),
            PgKind::Time => Buffer::Time(Vec::new()),
            PgKind::Bytes => Buffer::Bytes(Vec::new()),
        }
    }

    /// Converts a SQLite value (UUID text, 0/1, unix milliseconds) to
    /// this column's type.
    fn push(&mut self, val: Val) -> std::result::Result<(), String> {
        let wrong = |val: &Val, expected: &str| format!("expected {expected}, found {val}");
        match (self, val) {
            (Buffer::Uuid(v), Val::Null) => v.push(None),
            (Buffer::Text(v), Val::Null) => v.push(None),
            (Buffer::BigInt(v), Val::Null) => v.push(None),
            (Buffer::Bool(v), Val::Null) => v.push(None),
            (Buffer::Time(v), Val::Null) => v.push(None),
            (Buffer::Bytes(v), Val::Null) => v.push(None),
            (Buffer::Bytes(v), Val::Bytes(bytes)) => v.push(Some(bytes)),
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
            (Buffer::Bytes(_), val) => return Err(wrong(&val, "a blob")),
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
                Buffer::Bytes(v) => query.bind(v),
                Buffer::Time(v) => query.bind(v),
            };
        }
        query
    }
}
