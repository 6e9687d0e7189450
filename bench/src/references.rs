//! The references the targets are stated against, measured in the same run:
//! raw SQLite single-row transactions at the server's durability, and a bare
//! axum JSON endpoint driven like the order endpoint.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::routing::post;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use uuid::Uuid;

use crate::Args;
use crate::load::{Figure, MakeRequest, drive, histogram, micros};

/// Single-row insert transactions on one connection, one after another, at
/// the server's durability (WAL, `synchronous=FULL`): every commit waits for
/// its own fsync, which is what serving 64 clients costs a server that does
/// not group commits (SQLite has one writer; more connections only queue on
/// its lock).
pub fn raw_sqlite(path: &Path, warmup: Duration, duration: Duration) -> anyhow::Result<Figure> {
    let conn = rusqlite::Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "wal")?;
    conn.pragma_update(None, "synchronous", "full")?;
    conn.execute_batch(
        "create table orders (
             id integer primary key,
             idempotency_key text not null unique,
             body text not null
         )",
    )?;
    let body = json!({"items": [{"menuItemId": Uuid::new_v4(), "quantity": 1, "toppingIds": []}],
                      "note": "bench"})
    .to_string();
    let insert_one = || -> rusqlite::Result<()> {
        conn.execute_batch("begin immediate")?;
        conn.prepare_cached("insert into orders (idempotency_key, body) values (?1, ?2)")?
            .execute(rusqlite::params![Uuid::new_v4().to_string(), body])?;
        conn.execute_batch("commit")
    };
    let start = Instant::now();
    while start.elapsed() < warmup {
        insert_one()?;
    }
    let mut latency = histogram();
    let mut done = 0u64;
    let start = Instant::now();
    while start.elapsed() < duration {
        let began = Instant::now();
        insert_one()?;
        latency.saturating_record(micros(began.elapsed()));
        done += 1;
    }
    Ok(Figure {
        rate: done as f64 / start.elapsed().as_secs_f64(),
        latency,
        errors: 0,
        first_error: None,
    })
}

/// The same request shape as an order (POST, JSON body, the same headers),
/// answered by an axum handler that parses the body and returns a small JSON
/// object: the HTTP and JSON cost alone, with nothing behind it.
pub async fn bare_endpoint(
    args: &Args,
    warmup: Duration,
    duration: Duration,
) -> anyhow::Result<Figure> {
    let app = axum::Router::new().route(
        "/echo",
        post(|Json(body): Json<Value>| async move {
            Json(json!({"ok": true, "lines": body["items"].as_array().map_or(0, Vec::len)}))
        }),
    );
    let server = LocalApp::serve(app).await?;
    let url = format!("{}/echo", server.base);
    let body = json!({"items": [{"menuItemId": Uuid::new_v4(), "quantity": 1, "toppingIds": []}],
                      "note": ""});
    let make: MakeRequest = Arc::new(move |client, w, _| {
        client
            .post(&url)
            .header("Idempotency-Key", Uuid::new_v4().to_string())
            .header("X-Session-PIN", "123456")
            .header("X-Client-Id", format!("bench-{w}"))
            .json(&body)
    });
    let figure = drive(args.clients, warmup, duration, make, |status, _, body| {
        if status == StatusCode::OK && body.starts_with(b"{\"") {
            Ok(())
        } else {
            Err(format!("{status} {}", String::from_utf8_lossy(body)))
        }
    })
    .await;
    server.stop().await?;
    figure
}

/// A reference app served in this process on a port of its own.
pub struct LocalApp {
    pub base: String,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl LocalApp {
    pub async fn serve(app: axum::Router) -> anyhow::Result<LocalApp> {
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        let base = format!("http://{}", listener.local_addr()?);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
        });
        Ok(LocalApp { base, stop, task })
    }

    pub async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.task.await??;
        Ok(())
    }
}
