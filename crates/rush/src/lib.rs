//! `ordergate rush`: the lunch peak on demand, with its faults, and a
//! verdict.
//!
//! Tables of guests browse the menu and order realistic carts for a while,
//! misbehaving as real phones do (double taps with one key, buggy clients
//! that send a fresh key per tap, responses lost to a short timeout and
//! retried, a burst at one table, everyone wanting one hot item), while a
//! kitchen display follows the live events and staff restock and cancel.
//! Optionally a server is SIGKILLed mid-run and restarted, and requests are
//! spread over several servers. At the end every invariant of the promise is
//! checked from the outside: nothing acknowledged lost, nothing duplicated,
//! stock conserved and never oversold, the kitchen stream complete and in
//! order. The exit status says whether they held.

mod check;
pub mod client;
mod guests;
mod kitchen;
mod nodes;
mod report;
mod setup;
mod staff;
mod tally;

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;

use crate::client::Client;

#[derive(Debug, Clone, Args)]
pub struct RushArgs {
    /// Drive these running servers (repeat for several nodes of one
    /// database); without it, rush starts its own. Rush writes its own shop
    /// ("Rush Diner") and every order of the run into their database: it
    /// refuses a server that already has shops, unless --allow-existing.
    #[arg(long = "url")]
    pub urls: Vec<String>,

    /// Rush a server given with --url even though it already has shops
    /// (a test database you do not mind adding a "Rush Diner" to).
    #[arg(long, requires = "urls")]
    pub allow_existing: bool,

    /// Staff token of the servers given with --url (rush's own servers get a fresh one).
    #[arg(long, env = "ORDERGATE_STAFF_TOKEN", hide_env_values = true)]
    pub staff_token: Option<String>,

    /// Database of the servers rush starts [default: a new temporary SQLite file].
    #[arg(long)]
    pub database: Option<String>,

    /// How many servers rush starts on that database (PostgreSQL for more than one).
    #[arg(long, default_value_t = 1)]
    pub nodes: usize,

    /// SIGKILL one of rush's own servers halfway through and restart it.
    #[arg(long)]
    pub kill: bool,

    #[arg(long, default_value_t = 8)]
    pub tables: usize,

    /// Guests per table, each a device with its own client id.
    #[arg(long, default_value_t = 4)]
    pub guests: usize,

    /// How long guests keep ordering.
    #[arg(long, default_value_t = 10)]
    pub duration_secs: u64,

    /// Share of orders tapped twice at once with the same key.
    #[arg(long, default_value_t = 0.2)]
    pub double_tap: f64,

    /// Share of orders a buggy client taps again with a fresh key.
    #[arg(long, default_value_t = 0.1)]
    pub fresh_key_tap: f64,

    /// Share of orders whose first answer the client gives up on (a 1 ms
    /// timeout) before retrying with the same key.
    #[arg(long, default_value_t = 0.1)]
    pub drop: f64,

    /// Every guest of table 1 orders at the same instant, again and again.
    #[arg(long)]
    pub burst: bool,

    /// Every order includes one hot item whose stock runs out (and is restocked).
    #[arg(long)]
    pub hot_item: bool,

    /// The servers' duplicate window (`serve --duplicate-window-secs`):
    /// rush's own servers get it, and the check of duplicates goes by it.
    #[arg(long, env = "ORDERGATE_DUPLICATE_WINDOW_SECS", default_value_t = 30)]
    pub duplicate_window_secs: u64,

    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// How long after the rush pending requests keep retrying before they give up.
const SETTLE: Duration = Duration::from_secs(30);

/// Everything a run produced, for the checks and the report.
pub struct Outcome {
    pub setup: setup::Shop,
    pub guests: tally::Tally,
    pub kitchen: kitchen::Seen,
    pub staff: staff::StaffTally,
    pub elapsed: Duration,
}

/// Refuses a server that already has shops: rush would add its own shop
/// and a lunch peak of orders to a database someone uses.
async fn refuse_a_used_server(client: &Client) -> anyhow::Result<()> {
    let reply = client
        .staff_get("/api/v1/shops")
        .await
        .map_err(|e| anyhow::anyhow!("cannot reach {}: {e:?}", client.base()))?;
    if reply.status != 200 {
        bail!(
            "{} answered {} to GET /api/v1/shops: is --staff-token its administrator's token?",
            client.base(),
            reply.status
        );
    }
    let shops = reply.body["shops"].as_array().map_or(0, Vec::len);
    if shops > 0 {
        bail!(
            "{} already has {shops} shop{}: rush would add its \"Rush Diner\" and a lunch peak \
             of orders to that database. Point rush at a server on a database of its own, \
             or pass --allow-existing",
            client.base(),
            if shops == 1 { "" } else { "s" }
        );
    }
    Ok(())
}

pub async fn run(args: RushArgs) -> anyhow::Result<()> {
    if !args.urls.is_empty() && (args.kill || args.database.is_some()) {
        bail!("--kill and --database are for the servers rush starts itself; drop --url");
    }
    if args.tables == 0 || args.guests == 0 {
        bail!("a rush needs at least one table and one guest");
    }
    let mut cluster = if args.urls.is_empty() {
        nodes::Cluster::start(
            args.database.clone(),
            args.nodes,
            args.duplicate_window_secs,
        )
        .await?
    } else {
        let token = args
            .staff_token
            .clone()
            .context("--url needs the servers' staff token (--staff-token)")?;
        nodes::Cluster::remote(args.urls.clone(), token)
    };
    let clients: Arc<Vec<Client>> = Arc::new(cluster.clients());
    if !args.urls.is_empty() && !args.allow_existing {
        refuse_a_used_server(&clients[0]).await?;
    }
    let shop = setup::prepare(&clients[0], &args).await?;

    let started = Instant::now();
    let deadline = started + Duration::from_secs(args.duration_secs);
    let acknowledged = Arc::new(AtomicUsize::new(0));
    let progress = progress_bar(&args, Arc::clone(&acknowledged));
    let kitchen = kitchen::follow(Arc::clone(&clients), shop.shop_id.clone());
    let staff = tokio::spawn(staff::run(Arc::clone(&clients), shop.clone(), deadline));
    let guests = tokio::spawn(guests::run(
        Arc::clone(&clients),
        shop.clone(),
        args.clone(),
        deadline,
        Arc::clone(&acknowledged),
    ));
    if args.kill {
        tokio::time::sleep(Duration::from_secs(args.duration_secs) / 2).await;
        cluster.kill_and_restart(0).await?;
    }
    let guests = guests.await.context("the guests' task failed")?;
    progress.abort();
    let staff = staff.await.context("the staff task failed")?;
    let elapsed = started.elapsed();
    let kitchen = kitchen.finish(&guests).await;

    let outcome = Outcome {
        setup: shop,
        guests,
        kitchen,
        staff,
        elapsed,
    };
    let window = Duration::from_secs(args.duplicate_window_secs);
    let verdict = check::verify(&clients, &outcome, window).await?;
    cluster.stop();
    report::print(&args, &outcome, &verdict);
    if verdict.holds() {
        Ok(())
    } else {
        bail!("the rush broke an invariant (see the report)")
    }
}

/// A progress bar on a terminal (not with `--json`): time spent, and orders
/// acknowledged so far. The returned task drives it until aborted.
fn progress_bar(args: &RushArgs, acknowledged: Arc<AtomicUsize>) -> tokio::task::JoinHandle<()> {
    let bar = if args.json || !std::io::stderr().is_terminal() {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(args.duration_secs * 10)
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed:>3} [{bar:40}] {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        loop {
            tick.tick().await;
            bar.inc(1);
            bar.set_message(format!(
                "{} orders acknowledged",
                acknowledged.load(Ordering::Relaxed)
            ));
            if bar.position() >= bar.length().unwrap_or(0) {
                bar.finish_and_clear();
                return;
            }
        }
    })
}
