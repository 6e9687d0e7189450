//! The data tools through the `ordergate` binary: `migrate` from SQLite to
//! PostgreSQL (verified, resumable, refusing a source in use or a target
//! in use), `verify` on a corrupted database, and `backup` of a database
//! taking orders. The PostgreSQL tests need `ORDERGATE_TEST_DATABASE_URL`
//! and say on stderr that they were skipped without it.

mod backup;
mod interrupted;
mod lunch;
mod migration;
mod support;
mod verify;
