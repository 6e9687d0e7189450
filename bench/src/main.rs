//! `ordergate-bench`: measures ordergate against references taken in the
//! same run on the same machine, and prints the ratios DESIGN.md sets
//! targets for ("Performance and scale").
//!
//! Parts (select with `--only`):
//! - `orders`: raw SQLite single-row transactions/s and a bare axum JSON
//!   endpoint (the references), new guest orders/s and replayed orders/s;
//! - `menu`: warm menu GETs/s against the bare endpoint, and whether the
//!   menu cache missed (read the database) while they ran;
//! - `hot`: one item ordered by every client at once against every client
//!   ordering its own item;
//! - `latency`: p99 of new orders sent open-loop at half the peak rate;
//! - `fanout`: how long an `order.placed` event takes to reach each of 1 000
//!   live subscribers;
//! - `memory`: the resident memory of a server process holding 10 000 idle
//!   subscribers.
//! - `postgres` (not run unless named, with `--postgres`): new orders over
//!   64 shops and at one shop, their p99 and replays on PostgreSQL, against
//!   raw single-row insert transactions on the same server.
//! - `citus` (not run unless named, with `--citus`): new orders over 64
//!   shops on a Citus cluster through one node and through two, against
//!   raw single-row insert transactions into a table distributed there.
//!
//! The modules: [`load`] (closed- and open-loop generators), [`references`],
//! [`server`] (the server in this process or as a child, seeding, metrics),
//! [`orders`], [`menu`], [`sse`] (a raw event-stream client), [`live`]
//! (fan-out and memory), [`parts`] (each part's figures in turn),
//! [`postgres`], [`citus`], [`sys`]
//! (fd limit, `/proc`) and [`report`].

mod citus;
mod live;
mod load;
mod menu;
mod orders;
mod parts;
mod postgres;
mod references;
mod report;
mod server;
mod sse;
mod sys;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, ensure};
use clap::{Parser, ValueEnum};

use crate::report::Report;

/// mimalloc: the server is allocation-heavy (JSON, HTTP, small strings)
/// across many threads, where glibc malloc showed up at ~13% of a profile.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser, Debug)]
#[command(name = "ordergate-bench", version, about)]
pub struct Args {
    /// Parts to run, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "orders,menu,hot,latency,fanout,memory"
    )]
    only: Vec<Part>,

    /// Measured seconds per figure.
    #[arg(long, default_value_t = 5.0)]
    duration_secs: f64,

    /// Unmeasured seconds before each figure (connections, caches, JIT of the page cache).
    #[arg(long, default_value_t = 1.0)]
    warmup_secs: f64,

    /// Concurrent clients of the closed-loop HTTP figures.
    #[arg(long, default_value_t = 64)]
    clients: usize,

    /// Table sessions the new orders are spread over.
    #[arg(long, default_value_t = 16)]
    sessions: usize,

    /// Menu items the new orders are spread over (half of them stock-tracked).
    #[arg(long, default_value_t = 8)]
    items: usize,

    /// Arrival rate of the latency figure [default: half the new orders/s measured in this run].
    #[arg(long)]
    latency_rate: Option<f64>,

    /// Live subscribers of the fan-out figure.
    #[arg(long, default_value_t = 1000)]
    fanout_subscribers: usize,

    /// Orders per second placed while the fan-out is measured (for --duration-secs).
    #[arg(long, default_value_t = 20.0)]
    fanout_rate: f64,

    /// Idle subscribers of the memory figure.
    #[arg(long, default_value_t = 10_000)]
    memory_subscribers: usize,

    /// Rounds of connecting, idling and disconnecting the memory figure's subscribers.
    #[arg(long, default_value_t = 2)]
    memory_rounds: usize,

    /// Seconds the memory figure's subscribers stay idle before the server is measured.
    #[arg(long, default_value_t = 2.0)]
    idle_secs: f64,

    /// Server binary of the memory figure, run as `BIN serve …` [default:
    /// `ordergate` beside this binary if it is up to date with its sources,
    /// else this binary in its server mode].
    #[arg(long)]
    server_bin: Option<PathBuf>,

    /// Directory for the database files (a temporary directory is made inside
    /// it and removed after). Use a real disk: on tmpfs an fsync costs nothing
    /// and the durability figures mean little.
    #[arg(long)]
    dir: Option<PathBuf>,

    /// Exit with status 1 when a target is missed.
    #[arg(long)]
    strict: bool,

    /// The PostgreSQL server of the `postgres` part (a `postgres://` URL
    /// whose user may create databases): it runs on a database of its own
    /// there, dropped afterwards.
    #[arg(long, env = "ORDERGATE_BENCH_POSTGRES")]
    postgres: Option<String>,

    /// The Citus coordinator of the `citus` part (a `postgres://` URL of the
    /// database its extension is in): it runs in a schema of its own there,
    /// dropped afterwards.
    #[arg(long, env = "ORDERGATE_BENCH_CITUS")]
    citus: Option<String>,

    /// Internal: run only the server on this database URL (the memory
    /// figure's child process); it stops when its standard input closes.
    #[arg(long, hide = true)]
    serve_child: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Part {
    Orders,
    Menu,
    Hot,
    Latency,
    Fanout,
    Memory,
    Postgres,
    Citus,
}

impl Args {
    fn runs(&self, part: Part) -> bool {
        self.only.contains(&part)
    }

    pub fn warmup(&self) -> Duration {
        Duration::from_secs_f64(self.warmup_secs)
    }

    pub fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.duration_secs)
    }

    fn validate(&self) -> anyhow::Result<()> {
        ensure!(self.clients > 0, "--clients must be at least 1");
        ensure!(
            self.sessions > 0 && self.items > 0,
            "--sessions and --items must be at least 1"
        );
        ensure!(
            self.duration_secs > 0.0 && self.warmup_secs >= 0.0,
            "--duration-secs must be positive"
        );
        ensure!(
            self.fanout_rate > 0.0 && self.latency_rate.is_none_or(|r| r > 0.0),
            "rates must be positive"
        );
        ensure!(!self.only.is_empty(), "--only names no part");
        Ok(())
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let strict = args.strict;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    if let Some(database) = args.serve_child {
        return match runtime.block_on(server::serve_child(database)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("server child: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    match runtime.block_on(run(args)) {
        Ok(met) if met || !strict => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> anyhow::Result<bool> {
    args.validate()?;
    let parent = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let dir = tempfile::Builder::new()
        .prefix("ordergate-bench-")
        .tempdir_in(&parent)
        .with_context(|| format!("cannot make a directory in {}", parent.display()))?;

    let fds = sys::raise_fd_limit();
    print_machine(dir.path(), &args, fds);
    let mut report = Report::default();

    let references = parts::measure_references(&args, dir.path(), &mut report).await?;
    let in_process = [
        Part::Orders,
        Part::Menu,
        Part::Hot,
        Part::Latency,
        Part::Fanout,
    ];
    if in_process.iter().any(|&part| args.runs(part)) {
        parts::run_in_process(&args, dir.path(), &references, &mut report).await?;
    }

    if args.runs(Part::Postgres) {
        postgres::run(&args, &mut report).await?;
    }
    if args.runs(Part::Citus) {
        citus::run(&args, &mut report).await?;
    }

    if args.runs(Part::Memory) {
        eprintln!(
            "[memory] server process with {} idle subscribers …",
            args.memory_subscribers
        );
        live::memory(&args, dir.path(), &mut report).await?;
    }

    Ok(report.print())
}

fn print_machine(dir: &Path, args: &Args, fds: (u64, u64)) {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let fs = filesystem_of(dir).unwrap_or_else(|| "unknown".into());
    println!(
        "ordergate-bench: {cpus} CPUs ({model}); database files in {} ({fs})",
        dir.display()
    );
    println!(
        "  {} clients, {} sessions, {} items; {:.1} s warm-up + {:.1} s measured per figure; \
         open files: {} (hard limit {})",
        args.clients, args.sessions, args.items, args.warmup_secs, args.duration_secs, fds.0, fds.1
    );
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next()?.parse::<f64>().ok());
    if let Some(load) = load.filter(|&load| load > 0.5) {
        println!(
            "  warning: load average {load:.2} before the run: something else is using the \
             CPUs, and the figures will be noisy"
        );
    }
    if fs == "tmpfs" || fs == "ramfs" {
        println!("  warning: {fs} makes fsync free; pass --dir on a real disk for durable figures");
    }
    println!();
}

/// The type of the filesystem mounted deepest above `path` (Linux only).
fn filesystem_of(path: &Path) -> Option<String> {
    let path = path.canonicalize().ok()?;
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let (_, point, kind) = (fields.next()?, fields.next()?, fields.next()?);
            path.starts_with(point)
                .then(|| (point.len(), kind.to_owned()))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, kind)| kind)
}
