//! The servers a rush drives: ones it was given, or `ordergate serve`
//! processes it starts itself (real processes, so one can be SIGKILLed).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, bail};
use tempfile::TempDir;

use crate::client::Client;

pub struct Cluster {
    nodes: Vec<Node>,
    token: String,
    _dir: Option<TempDir>,
}

struct Node {
    base: String,
    /// `None` for a server rush did not start.
    process: Option<Process>,
}

struct Process {
    child: Child,
    database: String,
    duplicate_window_secs: u64,
}

impl Cluster {
    /// Starts `count` servers on `database` (a new SQLite file by default),
    /// with the duplicate window the checks will assume.
    pub async fn start(
        database: Option<String>,
        count: usize,
        duplicate_window_secs: u64,
    ) -> anyhow::Result<Cluster> {
        let dir = tempfile::tempdir().context("cannot make a temporary directory")?;
        let database = database
            .unwrap_or_else(|| format!("sqlite://{}", dir.path().join("rush.db").display()));
        if count > 1 && !ordergate_store_postgres::is_postgres_url(&database) {
            bail!("several nodes must share a PostgreSQL database: give --database postgres://…");
        }
        let token = uuid::Uuid::new_v4().simple().to_string();
        let mut nodes = Vec::with_capacity(count);
        for _ in 0..count.max(1) {
            let (child, base) =
                spawn(&database, &token, duplicate_window_secs, "127.0.0.1:0").await?;
            nodes.push(Node {
                base,
                process: Some(Process {
                    child,
                    database: database.clone(),
                    duplicate_window_secs,
                }),
            });
        }
        Ok(Cluster {
            nodes,
            token,
            _dir: Some(dir),
        })
    }

    pub fn remote(urls: Vec<String>, token: String) -> Cluster {
        let nodes = urls
            .into_iter()
            .map(|base| Node {
                base: base.trim_end_matches('/').to_owned(),
                process: None,
            })
            .collect();
        Cluster {
            nodes,
            token,
            _dir: None,
        }
    }

    pub fn clients(&self) -> Vec<Client> {
        self.nodes
            .iter()
            .map(|node| Client::new(node.base.clone(), Some(self.token.clone())))
            .collect()
    }

    /// SIGKILLs node `index` mid-flight and starts it again on the same
    /// address and database, as a crashed and restarted server would be.
    pub async fn kill_and_restart(&mut self, index: usize) -> anyhow::Result<()> {
        let node = &mut self.nodes[index];
        let process = node
            .process
            .as_mut()
            .context("only servers rush started can be killed")?;
        process.child.kill().context("SIGKILL")?;
        let _ = process.child.wait();
        let listen = node.base.trim_start_matches("http://").to_owned();
        // The port may linger a moment after the kill.
        let mut last_error = None;
        for _ in 0..50 {
            let window = process.duplicate_window_secs;
            match spawn(&process.database, &self.token, window, &listen).await {
                Ok((child, _)) => {
                    process.child = child;
                    return Ok(());
                }
                Err(e) => last_error = Some(e),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(last_error.unwrap_or_else(|| anyhow::anyhow!("restart failed")))
    }

    pub fn stop(&mut self) {
        for process in self.nodes.iter_mut().filter_map(|n| n.process.as_mut()) {
            let _ = process.child.kill();
            let _ = process.child.wait();
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts `ordergate serve` (the running program: rush is a command of the
/// `ordergate` binary) and waits for its `listening on` line.
async fn spawn(
    database: &str,
    token: &str,
    duplicate_window_secs: u64,
    listen: &str,
) -> anyhow::Result<(Child, String)> {
    let mut child = Command::new(std::env::current_exe().context("cannot find this program")?)
        .args(["serve", "--listen", listen, "--database", database])
        .env("ORDERGATE_STAFF_TOKEN", token)
        .env(
            "ORDERGATE_DUPLICATE_WINDOW_SECS",
            duplicate_window_secs.to_string(),
        )
        // A rush's tables order far faster than real ones; the per-session
        // order limit (servers that have one) would turn it into a test of
        // that limit.
        .env("ORDERGATE_SESSION_ORDER_LIMIT", "100000")
        .env("RUST_LOG", "error")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start ordergate serve")?;
    let stdout = BufReader::new(child.stdout.take().context("no stdout")?);
    let (found, listening) = mpsc::channel();
    // Reads stdout to its end, so the server never writes to a closed pipe.
    std::thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { break };
            if let Some(base) = line.strip_prefix("listening on ") {
                let _ = found.send(base.to_owned());
            }
        }
    });
    let base = tokio::task::spawn_blocking(move || listening.recv_timeout(Duration::from_secs(20)))
        .await?;
    match base {
        Ok(base) => Ok((child, base)),
        Err(_) => {
            let _ = child.kill();
            let status = child.wait().ok();
            bail!("ordergate serve did not start (exit status {status:?})")
        }
    }
}
