//! Opening SQLite databases: exclusively for a migration (which refuses a
//! database in use), shared for a health check or a backup.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::tables::SQLITE_SCHEMA_VERSION;

/// The file a `sqlite://` URL names, or an error saying what was expected.
pub(crate) fn path_of(url: &str, flag: &str) -> Result<PathBuf> {
    ordergate_store_sqlite::path_from_url(url)
        .ok_or_else(|| anyhow!("{flag} must be a sqlite://FILE URL"))
}

fn open_existing(path: &Path) -> Result<Connection> {
    if !path.is_file() {
        bail!("{}: no such SQLite database file", path.display());
    }
    // Never create: a mistyped path must not become an empty database.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(path, flags)
        .with_context(|| format!("cannot open {}", path.display()))
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Opens the database for a migration, holding SQLite's exclusive lock
/// until the connection closes, and checks its schema.
///
/// How a database in use is detected: an ordergate server keeps its
/// connections open for as long as it runs, and in WAL mode every open
/// connection holds a shared lock on the database file (idle or not). This
/// connection sets `locking_mode = EXCLUSIVE` before its first read, which
/// makes that read take an exclusive lock on the file at once; SQLite
/// refuses it (busy) while any other connection, in this process or
/// another, has the database open. Once taken, the lock is held to the end
/// of the run: a server started meanwhile cannot open the database, so the
/// copy reads a database nobody changes. `BEGIN EXCLUSIVE` then takes the
/// write lock too, which also covers a database in rollback-journal mode.
pub(crate) fn open_exclusive(path: &Path) -> Result<Connection> {
    let conn = open_existing(path)?;
    conn.busy_timeout(Duration::ZERO)?;
    conn.pragma_update(None, "locking_mode", "exclusive")?;
    let locked = conn
        .query_row("select count(*) from sqlite_master", [], |_| Ok(()))
        .and_then(|()| conn.execute_batch("begin exclusive; commit"));
    match locked {
        Ok(()) => {}
        Err(e) if is_busy(&e) => bail!(
            "{} is in use: a server (or another program) has it open. Stop every \
             `ordergate serve` on it first: the copy must read a database nobody is changing \
             (detected through SQLite's file locks: an exclusive lock could not be taken)",
            path.display()
        ),
        Err(e) => {
            return Err(e).with_context(|| format!("cannot read {}", path.display()));
        }
    }
    check_schema(&conn, path)?;
    Ok(conn)
}

/// Opens the database to read it while a server may be using it: every
/// read then runs in a transaction of its own snapshot.
pub(crate) fn open_shared(path: &Path) -> Result<Connection> {
    let conn = open_existing(path)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "query_only", true)?;
    check_schema(&conn, path)?;
    Ok(conn)
}

fn check_schema(conn: &Connection, path: &Path) -> Result<()> {
    let version: i64 = conn.query_row("pragma user_version", [], |row| row.get(0))?;
    let tables: i64 = conn.query_row(
        "select count(*) from sqlite_master where type = 'table' and name = 'shops'",
        [],
        |row| row.get(0),
    )?;
    if tables == 0 {
        bail!(
            "{} is not an ordergate database (it has no shops table)",
            path.display()
        );
    }
    if version < SQLITE_SCHEMA_VERSION {
        bail!(
            "{} has an older ordergate schema (version {version}, this binary's is \
             {SQLITE_SCHEMA_VERSION}): start `ordergate serve` on it once to upgrade it, stop it, \
             then run this again",
            path.display()
        );
    }
    if version > SQLITE_SCHEMA_VERSION {
        bail!(
            "{} has a newer ordergate schema (version {version}) than this binary knows \
             ({SQLITE_SCHEMA_VERSION}): use the ordergate release that wrote it",
            path.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_held_open_elsewhere_is_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("og.db");
        let server = Connection::open(&path).unwrap();
        server.pragma_update(None, "journal_mode", "wal").unwrap();
        server
            .execute_batch(&format!(
                "create table shops (shop_id text primary key);
                 pragma user_version = {SQLITE_SCHEMA_VERSION};"
            ))
            .unwrap();
        // Idle, as a server between requests is.
        let refused = open_exclusive(&path).unwrap_err().to_string();
        assert!(refused.contains("is in use"), "{refused}");
        drop(server);

        let migrating = open_exclusive(&path).unwrap();
        // While the migration holds it, nobody else can open it.
        let other = Connection::open(&path).unwrap();
        other.busy_timeout(Duration::ZERO).unwrap();
        let read = other.query_row("select count(*) from shops", [], |row| row.get::<_, i64>(0));
        assert!(read.is_err_and(|e| is_busy(&e)));
        drop(migrating);
        let count: i64 = other
            .query_row("select count(*) from shops", [], |row| row.get(0))
            .unwrap();
        assert_eq!(count, 0);
    }

    #[test]
    fn only_ordergate_databases_of_this_schema_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.db");
        let error = open_exclusive(&missing).unwrap_err().to_string();
        assert!(error.contains("no such SQLite database"), "{error}");
        assert!(!missing.exists(), "a missing file is not created");

        let path = dir.path().join("other.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("create table t (x)")
            .unwrap();
        let error = open_exclusive(&path).unwrap_err().to_string();
        assert!(error.contains("not an ordergate database"), "{error}");

        let path = dir.path().join("old.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("create table shops (shop_id text); pragma user_version = 1;")
            .unwrap();
        let error = open_exclusive(&path).unwrap_err().to_string();
        assert!(error.contains("older ordergate schema"), "{error}");
    }
}
