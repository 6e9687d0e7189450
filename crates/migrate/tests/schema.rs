//! The schema version migrate reads is the SQLite backend's latest: a new
//! migration in the backend fails this test until migrate knows about it.

use ordergate_store_sqlite::SqliteStore;

#[test]
fn the_sqlite_schema_version_is_the_backends_latest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ordergate.db");
    drop(SqliteStore::open(&path).expect("open the store"));
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("pragma user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, ordergate_migrate::SQLITE_SCHEMA_VERSION);
}
