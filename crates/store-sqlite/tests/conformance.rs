//! The backend conformance suite of `ordergate-store`, run against SQLite:
//! every test gets its own database file in a fresh temporary directory.

use ordergate_store_sqlite::SqliteStore;
use tempfile::TempDir;

async fn sqlite_store() -> (SqliteStore, TempDir) {
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let store = SqliteStore::open(&dir.path().join("conformance.db")).expect("open SQLite store");
    (store, dir)
}

ordergate_store::conformance_tests!(sqlite_store());
