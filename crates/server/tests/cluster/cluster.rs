//! A Citus cluster of a test's own: `../shared/citus/cluster.sh` with its
//! own ports and data directory, stopped and removed when the test ends.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use sqlx::PgConnection;

use crate::database::TestDatabase;

pub struct OwnCluster {
    dir: PathBuf,
    coordinator: u16,
    /// The ports of its workers, in the order they joined.
    pub workers: Vec<u16>,
}

impl OwnCluster {
    /// A coordinator on `port` and workers on the next two; `None` after
    /// telling stderr why the test is skipped.
    pub fn start(port: u16) -> Option<OwnCluster> {
        let test = std::thread::current()
            .name()
            .unwrap_or("cluster")
            .to_owned();
        if std::env::var("ORDERGATE_TEST_CITUS_URL").is_err() {
            let _ = writeln!(
                std::io::stderr(),
                "{test}: skipped: set ORDERGATE_TEST_CITUS_URL (../shared/citus/install.sh and \
                 cluster.sh start) to run it"
            );
            return None;
        }
        assert!(
            script().exists(),
            "{test}: Citus is here but {} is not",
            script().display()
        );
        let dir = std::env::temp_dir().join(format!("og-cluster-{port}"));
        let _ = std::fs::remove_dir_all(&dir);
        let cluster = OwnCluster {
            dir,
            coordinator: port,
            workers: vec![port + 1, port + 2],
        };
        cluster.script(&["start"]);
        Some(cluster)
    }

    fn script(&self, args: &[&str]) -> String {
        let output = Command::new(script())
            .args(args)
            .env("CITUS_PORT", self.coordinator.to_string())
            .env("CITUS_DIR", &self.dir)
            .output()
            .expect("run cluster.sh");
        assert!(
            output.status.success(),
            "cluster.sh {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// The coordinator's database.
    pub fn url(&self) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/postgres",
            self.coordinator
        )
    }

    /// A fresh schema on the cluster, its tables in 4 shards each.
    pub async fn database(&self) -> TestDatabase {
        TestDatabase::schema_in(format!("{}?options[citus.shard_count]=4", self.url())).await
    }

    /// Stops the worker at once, as a crash would.
    pub fn kill(&self, worker: u16) {
        self.pg_ctl(worker, "stop -m immediate");
    }

    /// Starts a stopped worker again.
    pub fn revive(&self, worker: u16) {
        let dir = self.dir.join(worker.to_string());
        self.pg_ctl(
            worker,
            &format!("-o '-p {worker}' -l {}/log start -w", dir.display()),
        );
    }

    fn pg_ctl(&self, worker: u16, command: &str) {
        let dir = self.dir.join(worker.to_string());
        let line = format!("{} -D {} {command}", pg_ctl().display(), dir.display());
        let status = Command::new("su")
            .args(["postgres", "-s", "/bin/bash", "-c", &line])
            .stdout(std::process::Stdio::null())
            .status()
            .expect("run pg_ctl");
        assert!(status.success(), "{line}");
    }

    /// Starts one more worker and adds it to the cluster.
    pub fn add_worker(&mut self) -> u16 {
        let port = self.workers.last().expect("a worker") + 1;
        self.script(&["add-worker", &port.to_string()]);
        self.workers.push(port);
        port
    }

    /// The port of the worker that holds `shop_id`'s rows.
    pub async fn worker_of(&self, conn: &mut PgConnection, shop_id: &str) -> u16 {
        let port: i32 = sqlx::query_scalar(
            "select n.nodeport from pg_dist_placement p
             join pg_dist_node n on n.groupid = p.groupid
             where p.shardid = get_shard_id_for_distribution_column('shops', $1::uuid)",
        )
        .bind(shop_id)
        .fetch_one(conn)
        .await
        .expect("ask Citus where the shop is");
        u16::try_from(port).expect("a port")
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        let _ = Command::new(script())
            .arg("stop")
            .env("CITUS_PORT", self.coordinator.to_string())
            .env("CITUS_DIR", &self.dir)
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `../shared/citus/cluster.sh`, beside the workspace.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/citus/cluster.sh")
}

/// The newest PostgreSQL's `pg_ctl`, as cluster.sh picks it.
fn pg_ctl() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is installed")
        .filter_map(|entry| Some(entry.ok()?.path().join("bin/pg_ctl")))
        .filter(|path| path.exists())
        .collect();
    found.sort_by_key(|path| {
        path.components()
            .nth(4)
            .and_then(|version| version.as_os_str().to_str()?.parse::<u32>().ok())
    });
    found.pop().expect("a pg_ctl")
}
