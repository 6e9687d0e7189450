//! Where a test server keeps its data: a temporary SQLite file; with
//! `ORDERGATE_TEST_BACKEND=postgres`, a fresh schema of the PostgreSQL
//! database `ORDERGATE_TEST_DATABASE_URL` names; with
//! `ORDERGATE_TEST_BACKEND=citus`, a fresh schema of the Citus coordinator
//! `ORDERGATE_TEST_CITUS_URL` names, which the server's migrations spread
//! over the cluster's workers. `.ci/run` runs the suite all three ways.

use sqlx::{Connection, PgConnection};
use tempfile::TempDir;

pub struct TestDatabase {
    /// The URL a server opens.
    pub url: String,
    _dir: TempDir,
    /// Dropped with the test.
    _schema: Option<Schema>,
}

struct Schema {
    admin_url: String,
    name: String,
}

impl TestDatabase {
    pub async fn create() -> TestDatabase {
        match std::env::var("ORDERGATE_TEST_BACKEND").as_deref() {
            Ok("postgres") => Self::postgres().await.expect(
                "ORDERGATE_TEST_BACKEND=postgres needs ORDERGATE_TEST_DATABASE_URL=postgres://…",
            ),
            Ok("citus") => {
                let url = std::env::var("ORDERGATE_TEST_CITUS_URL").expect(
                    "ORDERGATE_TEST_BACKEND=citus needs ORDERGATE_TEST_CITUS_URL=postgres://…",
                );
                Self::schema_in(url).await
            }
            _ => {
                let dir = tempfile::tempdir().unwrap();
                let url = format!("sqlite://{}", dir.path().join("ordergate.db").display());
                TestDatabase {
                    url,
                    _dir: dir,
                    _schema: None,
                }
            }
        }
    }

    /// The same database reached at another URL (through a proxy, say).
    pub fn with_url(self, url: String) -> TestDatabase {
        TestDatabase { url, ..self }
    }

    /// A fresh PostgreSQL schema, when `ORDERGATE_TEST_DATABASE_URL` names a
    /// database to make it in.
    pub async fn postgres() -> Option<TestDatabase> {
        let admin_url = std::env::var("ORDERGATE_TEST_DATABASE_URL").ok()?;
        Some(Self::schema_in(admin_url).await)
    }

    /// A fresh schema in the database `admin_url` names.
    pub async fn schema_in(admin_url: String) -> TestDatabase {
        let dir = tempfile::tempdir().unwrap();
        let name = format!("og_api_{}", uuid::Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(&admin_url).await.unwrap();
        // The name is ours: "og_api_" and a UUID's hex digits.
        sqlx::query(sqlx::AssertSqlSafe(format!("create schema {name}")))
            .execute(&mut admin)
            .await
            .unwrap();
        let separator = if admin_url.contains('?') { '&' } else { '?' };
        // Its connections carry the schema's name, so that its drop finds
        // them.
        TestDatabase {
            url: format!(
                "{admin_url}{separator}options[search_path]={name}&application_name={name}"
            ),
            _dir: dir,
            _schema: Some(Schema { admin_url, name }),
        }
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        let (url, name) = (self.admin_url.clone(), self.name.clone());
        // Drop runs inside the test's runtime, which cannot be blocked on:
        // the schema goes away from a thread with its own. That blocks the
        // test's runtime, and with it any of the server's tasks still
        // inside a transaction (a menu reload after the test's last
        // change, say), whose locks the drop would wait for forever: the
        // server's connections are ended first, and a connection named
        // otherwise (a test's own) is waited for only so long.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let mut admin = PgConnection::connect(&url).await?;
                sqlx::query(
                    "select pg_terminate_backend(pid) from pg_stat_activity
                     where application_name = $1 and pid <> pg_backend_pid()",
                )
                .bind(&name)
                .execute(&mut admin)
                .await?;
                sqlx::query("set lock_timeout = '30s'")
                    .execute(&mut admin)
                    .await?;
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "drop schema if exists {name} cascade"
                )))
                .execute(&mut admin)
                .await
                .map(drop)
            })
        });
        if let Ok(Err(e)) = dropped.join() {
            eprintln!("could not drop test schema {}: {e}", self.name);
        }
    }
}
