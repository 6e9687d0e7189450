//! `ordergate backup`: a consistent snapshot of a SQLite database that a
//! server may be writing to at that very moment.
//!
//! SQLite's online backup API copies the database page by page; asked for
//! every page in one step, it copies them all inside one read transaction,
//! which in WAL mode sees one committed state and does not block the
//! server's writer. The copy goes to a temporary file beside the target,
//! is checked, and only then renamed into place, so a backup file that
//! exists is always a whole one.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rusqlite::Connection;
use rusqlite::backup::{Backup, StepResult};

use crate::sqlite;

/// How long a backup waits for a database that is locked for it (only a
/// WAL recovery or another program's exclusive lock does that).
const BUSY_WAIT: Duration = Duration::from_secs(30);

/// What a backup wrote.
#[derive(Debug, Clone)]
pub struct BackupSummary {
    pub path: PathBuf,
    pub bytes: u64,
    pub shops: i64,
    pub orders: i64,
    pub events: i64,
}

/// Writes a snapshot of the `sqlite://` database to `to`, which must not
/// exist yet.
pub fn backup(database_url: &str, to: &Path) -> Result<BackupSummary> {
    if ordergate_store_postgres::is_postgres_url(database_url) {
        bail!(
            "backup copies SQLite databases: back up PostgreSQL with pg_dump or pg_basebackup \
             (see the README's section on backups)"
        );
    }
    let path = sqlite::path_of(database_url, "--database")?;
    if to.exists() {
        bail!(
            "{} exists already: a backup never overwrites a file",
            to.display()
        );
    }
    let dir = match to.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let source = sqlite::open_shared(&path)?;
    let partial = tempfile::Builder::new()
        .prefix(".ordergate-backup-")
        .suffix(".partial")
        .tempfile_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    let mut copy = Connection::open(partial.path())?;
    {
        let backup = Backup::new(&source, &mut copy)?;
        let started = Instant::now();
        loop {
            // -1: every page in one step, so in one read transaction.
            match backup.step(-1)? {
                StepResult::Done => break,
                StepResult::More => {}
                StepResult::Busy | StepResult::Locked => {
                    if started.elapsed() > BUSY_WAIT {
                        bail!("{} stayed locked for {BUSY_WAIT:?}", path.display());
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                other => bail!("unexpected backup step result {other:?}"),
            }
        }
    }
    let check: String = copy.query_row("pragma quick_check", [], |row| row.get(0))?;
    if check != "ok" {
        bail!("the snapshot failed SQLite's integrity check: {check}");
    }
    let count = |table: &str| -> Result<i64> {
        Ok(
            copy.query_row(&format!("select count(*) from {table}"), [], |row| {
                row.get(0)
            })?,
        )
    };
    let (shops, orders, events) = (count("shops")?, count("orders")?, count("events")?);
    copy.close().map_err(|(_, e)| e)?;
    drop(source);
    partial.as_file().sync_all()?;
    partial
        .persist_noclobber(to)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot create {}", to.display()))?;
    // The rename is durable once the directory is.
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(BackupSummary {
        path: to.to_owned(),
        bytes: std::fs::metadata(to)?.len(),
        shops,
        orders,
        events,
    })
}
