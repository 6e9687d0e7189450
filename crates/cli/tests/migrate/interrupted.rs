//! A migration killed midway (SIGKILL, no chance to clean up) leaves a
//! half-filled target that a new run refuses to start over, and that
//! `--resume` completes to a verified copy, without a row lost or doubled.

use std::process::Stdio;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use reqwest::Method;
use serde_json::json;
use sqlx::PgConnection;

use crate::support::{
    Http, PgSchema, Request, Server, Shop, SqliteFile, failed, ordergate, postgres_url, sqlite_url,
    succeeded, wait_released,
};

const ORDERS: usize = 240;
const IN_FLIGHT: usize = 12;

/// Many guests ordering at once, at several tables.
async fn rush(http: &Http, shop: &Shop) {
    let mut tables = Vec::new();
    for t in 0..IN_FLIGHT {
        let (session, pin, _, _) = shop.open(http, &format!("R{t}"), false).await;
        tables.push((session, pin));
    }
    let workers = tables.into_iter().enumerate().map(|(t, (session, pin))| {
        let http = http.clone();
        let (curry, soup, regular) = (shop.curry.clone(), shop.soup.clone(), shop.regular.clone());
        async move {
            for n in 0..ORDERS / IN_FLIGHT {
                let request =
                    Request::new(Method::POST, format!("/api/v1/sessions/{session}/orders"))
                        .header("X-Session-PIN", &pin)
                        .header("X-Client-Id", "rusher")
                        .keyed()
                        .json(json!({
                            "items": [{"menuItemId": curry, "quantity": 1},
                                      {"menuItemId": soup, "quantity": 1 + (n + t) % 3,
                                       "optionIds": [regular]}],
                            "allowRepeat": true
                        }));
                let reply = http.send(&request).await;
                assert_eq!(reply.status, 201, "{}", reply.text);
            }
        }
    });
    join_all(workers).await;
}

async fn progress(conn: &mut PgConnection) -> Option<(i64, i64)> {
    sqlx::query_as(
        "select coalesce(sum(rows_copied), 0)::bigint, count(*) filter (where done)
         from ordergate_migration",
    )
    .fetch_one(conn)
    .await
    .ok()
}

async fn row_counts(conn: &mut PgConnection) -> Vec<i64> {
    let mut counts = Vec::new();
    for table in [
        "shops",
        "inventory_log",
        "table_sessions",
        "orders",
        "events",
        "audit_log",
    ] {
        let count: i64 =
            sqlx::query_scalar(sqlx::AssertSqlSafe(format!("select count(*) from {table}")))
                .fetch_one(&mut *conn)
                .await
                .unwrap();
        counts.push(count);
    }
    counts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_migration_resumes_to_a_verified_copy() {
    let Some(admin_url) = postgres_url() else {
        return;
    };
    let file = SqliteFile::new();
    let server = Server::start(&file.url()).await;
    let http = server.http();
    let create = Request::staff(Method::POST, "/api/v1/shops");
    let (shop, _, _) = Shop::create(&http, "Rush Diner", create).await;
    rush(&http, &shop).await;
    server.stop().await;
    wait_released(&file.path).await;

    let schema = PgSchema::create(&admin_url).await;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_ordergate"))
        .args([
            "migrate",
            "--from",
            &file.url(),
            "--to",
            &schema.url,
            "--batch-rows",
            "20",
            "--batch-pause-ms",
            "5",
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Killed once a good part of the rows is in, well before the end.
    let mut conn = schema.connect().await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some((copied, _)) = progress(&mut conn).await
            && copied >= 600
        {
            break;
        }
        assert!(Instant::now() < deadline, "the migration made no progress");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the migration ended early"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    child.start_kill().unwrap();
    let status = child.wait().await.unwrap();
    assert!(!status.success());
    let (copied, done) = progress(&mut conn)
        .await
        .expect("progress survives the kill");
    // Thirteen tables up to and including `events`, the long one.
    assert!(
        done < 13,
        "killed midway, not after the copy ({done} tables done)"
    );
    let half = row_counts(&mut conn).await;
    assert_eq!(half.iter().sum::<i64>() > 0, copied > 0);

    // Without --resume: refused, and nothing changes.
    let refused =
        failed(&ordergate(&["migrate", "--from", &file.url(), "--to", &schema.url]).await);
    assert!(refused.contains("interrupted migration"), "{refused}");
    assert!(refused.contains("--resume"), "{refused}");
    assert_eq!(row_counts(&mut conn).await, half);

    // A source that changed since cannot be resumed from.
    let changed = file.dir.path().join("changed.db");
    std::fs::copy(&file.path, &changed).unwrap();
    rusqlite::Connection::open(&changed)
        .unwrap()
        .execute("update shops set name = 'Renamed Diner'", [])
        .unwrap();
    let refused = failed(
        &ordergate(&[
            "migrate",
            "--from",
            &sqlite_url(&changed),
            "--to",
            &schema.url,
            "--resume",
        ])
        .await,
    );
    assert!(
        refused.contains("changed since the interrupted migration"),
        "{refused}"
    );
    assert_eq!(row_counts(&mut conn).await, half);

    let resumed = ordergate(&[
        "migrate",
        "--from",
        &file.url(),
        "--to",
        &schema.url,
        "--resume",
        "--batch-rows",
        "50",
    ])
    .await;
    let report = succeeded(&resumed);
    assert!(report.contains("verification passed"), "{report}");
    assert!(!report.contains("MISMATCH"), "{report}");
    let stderr = crate::support::stderr(&resumed);
    assert!(
        stderr.contains(&format!("resuming after {copied} rows")),
        "{stderr}"
    );

    // The whole copy, each row once: the counts are the source's.
    let source = rusqlite::Connection::open(&file.path).unwrap();
    let mut expected = Vec::new();
    for table in [
        "shops",
        "inventory_log",
        "table_sessions",
        "orders",
        "events",
        "audit_log",
    ] {
        let count: i64 = source
            .query_row(&format!("select count(*) from {table}"), [], |row| {
                row.get(0)
            })
            .unwrap();
        expected.push(count);
    }
    assert_eq!(row_counts(&mut conn).await, expected);
    assert!(expected[3] >= ORDERS as i64);
    succeeded(&ordergate(&["verify", "--database", &schema.url]).await);
}
