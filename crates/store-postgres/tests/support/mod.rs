//! A throwaway schema per test, in the database `ORDERGATE_TEST_DATABASE_URL`
//! names; without that variable the PostgreSQL tests skip, saying so.

#![allow(dead_code)] // each test binary uses its own part of this module

use std::io::Write;

use ordergate_store_postgres::{ConnectOptions, PgStore};
use sqlx::{Connection, Executor, PgConnection};
use uuid::Uuid;

pub const URL_VAR: &str = "ORDERGATE_TEST_DATABASE_URL";

/// The test database's URL, or `None` after telling stderr the test is skipped.
pub fn database_url() -> Option<String> {
    match std::env::var(URL_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            let test = std::thread::current()
                .name()
                .unwrap_or("a PostgreSQL test")
                .to_owned();
            // Straight to stderr: the test harness captures `eprintln!` of
            // passing tests, and a skip must not pass silently.
            let _ = writeln!(
                std::io::stderr(),
                "{test}: skipped: set {URL_VAR}=postgres://postgres@127.0.0.1:5432/test \
                 to run the PostgreSQL conformance suite"
            );
            None
        }
    }
}

/// A schema of its own, dropped (with everything in it) when this goes.
pub struct Schema {
    url: String,
    pub name: String,
}

impl Schema {
    pub async fn create(url: &str) -> Schema {
        let name = format!("og_{}", Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(url)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {URL_VAR}: {e}"));
        admin
            .execute(sqlx::AssertSqlSafe(format!("create schema {name}")))
            .await
            .expect("create a test schema");
        let _ = admin.close().await;
        Schema {
            url: url.to_owned(),
            name,
        }
    }

    /// Options for connections that work inside this schema.
    pub fn options(&self) -> ConnectOptions {
        self.url
            .parse::<ConnectOptions>()
            .expect("a valid PostgreSQL URL")
            .options([("search_path", self.name.as_str())])
    }

    pub async fn store(&self) -> PgStore {
        PgStore::connect_with(self.options())
            .await
            .expect("connect the PostgreSQL store")
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        // Drop runs inside the test's runtime, where blocking on another
        // future is not allowed: a thread with a runtime of its own does it.
        let (url, name) = (self.url.clone(), self.name.clone());
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime to drop the test schema");
            runtime.block_on(async move {
                let mut admin = PgConnection::connect(&url).await?;
                admin
                    .execute(sqlx::AssertSqlSafe(format!(
                        "drop schema if exists {name} cascade"
                    )))
                    .await?;
                admin.close().await
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            let _ = writeln!(
                std::io::stderr(),
                "could not drop test schema {}",
                self.name
            );
        }
    }
}

/// A store in a fresh schema, or `None` (skipped) without a test database.
pub async fn fresh_store() -> Option<(PgStore, Schema)> {
    let url = database_url()?;
    let schema = Schema::create(&url).await;
    let store = schema.store().await;
    Some((store, schema))
}
