//! `ordergate rush` as CI runs it: a short lunch peak with every fault on
//! (double taps, fresh-key taps, dropped answers, a burst at one table, a
//! hot item running out, a server SIGKILLed mid-run), on SQLite, on two
//! nodes sharing PostgreSQL, and on two nodes on a Citus cluster. Zero duplicates, zero acknowledged-but-lost,
//! and every other invariant the rush checks.

use std::io::Write;
use std::process::Command;

use serde_json::Value;
use sqlx::{Connection, PgConnection};

fn rush(extra: &[&str]) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_ordergate"))
        .args([
            "rush",
            "--duration-secs",
            "4",
            "--tables",
            "3",
            "--guests",
            "3",
            "--kill",
            "--hot-item",
            "--burst",
            "--json",
        ])
        .args(extra)
        .env("RUST_LOG", "error")
        .output()
        .expect("run ordergate rush");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| {
        panic!(
            "no JSON report; stdout: {stdout}\nstderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert!(output.status.success(), "rush failed: {report:#}");
    report
}

fn assert_promise_kept(report: &Value) {
    assert_eq!(report["passed"], true, "{report:#}");
    assert_eq!(report["duplicates"], 0, "{report:#}");
    assert_eq!(report["acknowledgedButLost"], 0, "{report:#}");
    let acknowledged = report["acknowledged"].as_u64().unwrap();
    assert!(acknowledged > 0, "{report:#}");
    // Every order in the history is one a 201 told a guest of: an intent's,
    // or a fresh-key tap's that the contract lets through (after a refusal,
    // a cancellation, or with allowRepeat).
    assert_eq!(
        acknowledged + report["freshKeyTapsPlaced"].as_u64().unwrap(),
        report["inHistory"].as_u64().unwrap(),
        "{report:#}"
    );
    let checks = report["checks"].as_array().unwrap();
    assert!(checks.len() >= 6, "{report:#}");
    assert!(checks.iter().all(|c| c["passed"] == true), "{report:#}");
    assert!(
        checks.iter().all(|c| c.get("evidence").is_none()),
        "{report:#}"
    );
}

#[test]
fn a_short_rush_with_faults_on_sqlite_keeps_every_promise() {
    let report = rush(&[]);
    assert_promise_kept(&report);
    assert!(
        report["freshKeyTaps"].as_u64().unwrap() > 0 || report["doubleTaps"].as_u64().unwrap() > 0
    );
}

#[test]
fn a_short_rush_over_two_postgresql_nodes_keeps_every_promise() {
    rush_over_two_nodes(
        "ORDERGATE_TEST_DATABASE_URL",
        "postgres://postgres@127.0.0.1:5432/test",
    );
}

/// The same rush on a Citus cluster, whose workers the migrations spread
/// the shops over.
#[test]
fn a_short_rush_over_two_nodes_on_citus_keeps_every_promise() {
    rush_over_two_nodes(
        "ORDERGATE_TEST_CITUS_URL",
        "postgres://postgres@127.0.0.1:9700/postgres",
    );
}

/// A rush with two nodes on a fresh schema of the database `url_var`
/// names (skipped, saying so, without it).
fn rush_over_two_nodes(url_var: &str, example: &str) {
    let Ok(admin_url) = std::env::var(url_var) else {
        let test = std::thread::current().name().unwrap_or("rush").to_owned();
        let _ = writeln!(
            std::io::stderr(),
            "{test}: skipped: set {url_var}={example} to run it"
        );
        return;
    };
    let schema = format!("og_rush_{}", uuid::Uuid::new_v4().simple());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let admin = |sql: String| {
        runtime.block_on(async {
            let mut conn = PgConnection::connect(&admin_url).await.unwrap();
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .execute(&mut conn)
                .await
                .unwrap();
        })
    };
    // The name is ours: "og_rush_" and a UUID's hex digits.
    admin(format!("create schema {schema}"));
    let separator = if admin_url.contains('?') { '&' } else { '?' };
    let database = format!("{admin_url}{separator}options[search_path]={schema}");
    let report = std::panic::catch_unwind(|| rush(&["--database", &database, "--nodes", "2"]));
    admin(format!("drop schema {schema} cascade"));
    assert_promise_kept(&report.unwrap_or_else(|e| std::panic::resume_unwind(e)));
}
