//! After a copy: the source and the target compared, check by check, read
//! with the same queries on both sides.

use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::Connection;
use sqlx::postgres::PgConnection;

use crate::db::{Db, RowDigest, Rows, Val, pg_each, pg_rows, pg_vals, sqlite_each, sqlite_rows};
use crate::invariants;
use crate::report;
use crate::report::counted;
use crate::tables::Layout;

/// One line of the verification table.
struct Line {
    check: String,
    source: String,
    target: String,
    problems: Vec<String>,
}

pub(crate) struct Comparison {
    lines: Vec<Line>,
}

impl Comparison {
    pub(crate) fn problems(&self) -> impl Iterator<Item = &String> {
        self.lines.iter().flat_map(|l| &l.problems)
    }

    pub(crate) fn is_clean(&self) -> bool {
        self.problems().next().is_none()
    }

    pub(crate) fn render(&self) -> String {
        let rows: Vec<Vec<String>> = self
            .lines
            .iter()
            .map(|l| {
                let result = if l.problems.is_empty() {
                    "ok"
                } else {
                    "MISMATCH"
                };
                vec![
                    l.check.clone(),
                    l.source.clone(),
                    l.target.clone(),
                    result.to_owned(),
                ]
            })
            .collect();
        let mut out = report::table(
            &["check", "SQLite (source)", "PostgreSQL (target)", "result"],
            &rows,
        );
        if !self.is_clean() {
            out.push_str("\nmismatches:\n");
            for problem in self.problems() {
                out.push_str("  ");
                out.push_str(problem);
                out.push('\n');
            }
        }
        out
    }
}

/// Compares the copy with its source. The target is read in one
/// repeatable-read snapshot; nobody writes the source (its lock is held).
pub(crate) async fn compare(
    source: &Connection,
    target: &mut PgConnection,
    layouts: &[Layout],
    cutoff_ms: i64,
    sample: u32,
) -> Result<Comparison> {
    sqlx::query("begin isolation level repeatable read read only")
        .execute(&mut *target)
        .await?;
    let result = compare_in_snapshot(source, target, layouts, cutoff_ms, sample).await;
    sqlx::query("commit").execute(&mut *target).await?;
    result
}

async fn compare_in_snapshot(
    source: &Connection,
    target: &mut PgConnection,
    layouts: &[Layout],
    cutoff_ms: i64,
    sample: u32,
) -> Result<Comparison> {
    let mut lines = Vec::new();
    for layout in layouts {
        lines.push(table_contents(source, target, layout, cutoff_ms).await?);
    }
    lines.push(event_counters(source, target).await?);
    lines.push(order_totals(source, target).await?);
    lines.push(stock_per_item(source, target).await?);
    lines.push(op_log_sums(source, target).await?);
    lines.push(last_event_ids(source, target).await?);
    lines.push(stored_responses(source, target, cutoff_ms, sample).await?);
    Ok(Comparison { lines })
}

/// Row counts, and a digest of every column of every row.
async fn table_contents(
    source: &Connection,
    target: &mut PgConnection,
    layout: &Layout,
    cutoff_ms: i64,
) -> Result<Line> {
    let (source_sql, target_sql) = layout.content_queries(cutoff_ms);
    let mut theirs = RowDigest::default();
    sqlite_each(source, &source_sql, [], |row| {
        theirs.add(&row);
        Ok(())
    })?;
    let mut ours = RowDigest::default();
    pg_each(target, &target_sql, |row| {
        ours.add(&row);
        Ok(())
    })
    .await?;
    let table = layout.table.name;
    let mut problems = Vec::new();
    if theirs.rows != ours.rows {
        problems.push(format!(
            "{table}: {} rows in SQLite, {} in PostgreSQL",
            theirs.rows, ours.rows
        ));
    } else if theirs != ours {
        problems.push(format!(
            "{table}: the same number of rows, but different contents (digest {} in SQLite, \
             {} in PostgreSQL)",
            theirs.short(),
            ours.short()
        ));
    }
    let describe = |d: &RowDigest| format!("{}, digest {}", counted(d.rows, "row"), d.short());
    let check = if layout.table.expiring {
        format!("rows: {table} (live)")
    } else {
        format!("rows: {table}")
    };
    Ok(Line {
        check,
        source: describe(&theirs),
        target: describe(&ours),
        problems,
    })
}

fn keyed(rows: Rows, key_columns: usize) -> BTreeMap<Vec<Val>, Vec<Val>> {
    rows.into_iter()
        .map(|mut row| {
            let rest = row.split_off(key_columns);
            (row, rest)
        })
        .collect()
}

fn join(vals: &[Val]) -> String {
    vals.iter()
        .map(Val::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Problems for every key whose values differ or that one side lacks.
fn differences(
    what: &str,
    names: &str,
    theirs: &BTreeMap<Vec<Val>, Vec<Val>>,
    ours: &BTreeMap<Vec<Val>, Vec<Val>>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for (key, value) in theirs {
        match ours.get(key) {
            Some(other) if other == value => {}
            Some(other) => problems.push(format!(
                "{what} {}: {names} {} in SQLite, {} in PostgreSQL",
                join(key),
                join(value),
                join(other)
            )),
            None => problems.push(format!(
                "{what} {}: {names} {} in SQLite, missing in PostgreSQL",
                join(key),
                join(value)
            )),
        }
    }
    for (key, value) in ours {
        if !theirs.contains_key(key) {
            problems.push(format!(
                "{what} {}: missing in SQLite, {names} {} in PostgreSQL",
                join(key),
                join(value)
            ));
        }
    }
    problems
}

/// PostgreSQL's per-shop event counters, derived from the copied events.
async fn event_counters(source: &Connection, target: &mut PgConnection) -> Result<Line> {
    let theirs = keyed(
        sqlite_rows(
            source,
            "select shop_id, max(event_id) from events group by shop_id",
        )?,
        1,
    );
    let ours = keyed(
        pg_rows(target, "select shop_id, last_event_id from event_counters").await?,
        1,
    );
    Ok(Line {
        check: "rows: event_counters".into(),
        source: format!("{} with events", counted(theirs.len(), "shop")),
        target: counted(ours.len(), "counter"),
        problems: differences("shop", "last event id", &theirs, &ours),
    })
}

async fn order_totals(source: &Connection, target: &mut PgConnection) -> Result<Line> {
    let sql = "select shop_id, count(*), cast(coalesce(sum(total), 0) as bigint) from orders
               group by shop_id";
    let theirs = keyed(sqlite_rows(source, sql)?, 1);
    let ours = keyed(pg_rows(target, sql).await?, 1);
    let describe = |m: &BTreeMap<Vec<Val>, Vec<Val>>| {
        let orders: i64 = m.values().filter_map(|v| v[0].int()).sum();
        let total: i64 = m.values().filter_map(|v| v[1].int()).sum();
        format!(
            "{}, {}, total {total}",
            counted(m.len(), "shop"),
            counted(orders, "order")
        )
    };
    Ok(Line {
        check: "order totals per shop".into(),
        source: describe(&theirs),
        target: describe(&ours),
        problems: differences("shop", "orders/total", &theirs, &ours),
    })
}

async fn stock_per_item(source: &Connection, target: &mut PgConnection) -> Result<Line> {
    let sql = "select shop_id, item_id, stock, marked_sold_out, sold_out_until, version
               from inventory";
    let theirs = keyed(sqlite_rows(source, sql)?, 2);
    let ours = keyed(pg_rows(target, sql).await?, 2);
    let describe = |m: &BTreeMap<Vec<Val>, Vec<Val>>| {
        let tracked = m.values().filter(|v| v[0] != Val::Null).count();
        let units: i64 = m.values().filter_map(|v| v[0].int()).sum();
        format!(
            "{}, {tracked} tracked, {}",
            counted(m.len(), "item"),
            counted(units, "unit")
        )
    };
    Ok(Line {
        check: "stock per item".into(),
        source: describe(&theirs),
        target: describe(&ours),
        problems: differences("shop/item", "stock/86/until/version", &theirs, &ours),
    })
}

/// The invariant on both sides: a source that already breaks it fails the
/// migration too (it says so), since the copy would carry the breach over.
async fn op_log_sums(source: &Connection, target: &mut PgConnection) -> Result<Line> {
    let theirs = invariants::stock_matches_log(&mut Db::Sqlite(source)).await?;
    let ours = invariants::stock_matches_log(&mut Db::Pg(target)).await?;
    let describe = |c: &invariants::Check| match c.problems.len() {
        0 => format!("{}: all equal", c.checked),
        n => format!("{}: {n} differ", c.checked),
    };
    let problems = theirs
        .problems
        .iter()
        .map(|p| format!("in SQLite: {p}"))
        .chain(ours.problems.iter().map(|p| format!("in PostgreSQL: {p}")))
        .collect();
    Ok(Line {
        check: "op-log sums = stock".into(),
        source: describe(&theirs),
        target: describe(&ours),
        problems,
    })
}

async fn last_event_ids(source: &Connection, target: &mut PgConnection) -> Result<Line> {
    let sql = "select shop_id, max(event_id) from events group by shop_id";
    let theirs = keyed(sqlite_rows(source, sql)?, 1);
    let ours = keyed(pg_rows(target, sql).await?, 1);
    let describe = |m: &BTreeMap<Vec<Val>, Vec<Val>>| {
        let highest = m.values().filter_map(|v| v[0].int()).max().unwrap_or(0);
        format!("{}, highest {highest}", counted(m.len(), "shop"))
    };
    Ok(Line {
        check: "last event id per shop".into(),
        source: describe(&theirs),
        target: describe(&ours),
        problems: differences("shop", "last event id", &theirs, &ours),
    })
}

/// A random sample of live idempotency records, every field compared, the
/// stored response body byte for byte.
async fn stored_responses(
    source: &Connection,
    target: &mut PgConnection,
    cutoff_ms: i64,
    sample: u32,
) -> Result<Line> {
    let live: i64 = source.query_row(
        "select count(*) from idempotency_keys where expires_at > ?1",
        [cutoff_ms],
        |row| row.get(0),
    )?;
    let picked = sqlite_rows(
        source,
        &format!(
            "select scope, idempotency_key, shop_id, fingerprint, status, body, location,
                    created_at, expires_at
             from idempotency_keys where expires_at > {cutoff_ms}
             order by random() limit {sample}"
        ),
    )?;
    let scopes: Vec<String> = picked.iter().map(|r| r[0].to_string()).collect();
    let keys: Vec<String> = picked.iter().map(|r| r[1].to_string()).collect();
    let mut found = BTreeMap::new();
    {
        use futures_util::TryStreamExt;
        use sqlx::Row;
        let mut rows = sqlx::query(
            "select i.scope, i.idempotency_key, i.shop_id, i.fingerprint, i.status, i.body,
                    i.location, i.created_at, i.expires_at
             from idempotency_keys i
             join unnest($1::text[], $2::text[]) as k (scope, idempotency_key)
                 on k.scope = i.scope and k.idempotency_key = i.idempotency_key",
        )
        .bind(&scopes)
        .bind(&keys)
        .fetch(&mut *target);
        while let Some(row) = rows.try_next().await? {
            let scope: String = row.try_get(0)?;
            let key: String = row.try_get(1)?;
            let body: String = row.try_get(5)?;
            let rest = pg_vals(&row)?;
            found.insert((scope, key), (body, rest));
        }
    }
    let mut problems = Vec::new();
    let mut identical = 0;
    for row in &picked {
        let (scope, key, body) = (row[0].to_string(), row[1].to_string(), row[5].text());
        match found.get(&(scope.clone(), key.clone())) {
            None => problems.push(format!(
                "idempotency key {key} ({scope}): missing in PostgreSQL"
            )),
            Some((stored, _)) if stored.as_bytes() != body.as_bytes() => {
                let at = stored
                    .bytes()
                    .zip(body.bytes())
                    .position(|(a, b)| a != b)
                    .unwrap_or(stored.len().min(body.len()));
                problems.push(format!(
                    "idempotency key {key} ({scope}): the stored response differs from byte {at} \
                     ({} bytes in SQLite, {} in PostgreSQL)",
                    body.len(),
                    stored.len()
                ));
            }
            Some((_, rest)) if rest != row => problems.push(format!(
                "idempotency key {key} ({scope}): record {} in SQLite, {} in PostgreSQL",
                join(row),
                join(rest)
            )),
            Some(_) => identical += 1,
        }
    }
    Ok(Line {
        check: "stored responses (sample)".into(),
        source: format!("{} of {live} live records", picked.len()),
        target: format!("{identical} byte-identical"),
        problems,
    })
}
