//! The verdict of a rush: the promise's invariants, checked from outside
//! through the API against what the guests, the staff and the kitchen saw.

mod accounting;
mod duplicates;
#[cfg(test)]
mod fixtures;
mod history;
mod kitchen;
mod stock;
mod timeline;

use std::time::{Duration, Instant};

use anyhow::bail;
use serde::Serialize;
use serde_json::Value;

use crate::Outcome;
use crate::client::{Answer as ClientAnswer, Client, Reply};
use crate::setup::Shop;
use crate::tally::says_retry;
use accounting::{Facts, account};
use history::Ordered;

/// Rows one list request returns at most.
const PAGE: u32 = 500;
/// Problems a failed check lists with their evidence; more are counted.
const EVIDENCE: usize = 50;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub name: &'static str,
    pub passed: bool,
    pub detail: String,
    /// A failed check's problems, each with the keys, answers and orders
    /// involved, so that the report alone can be diagnosed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Value>,
    #[serde(skip_serializing_if = "is_zero")]
    pub evidence_left_out: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Check {
    fn new(name: &'static str, passed: bool, detail: String, problems: Vec<Value>) -> Check {
        let (evidence, evidence_left_out) = if passed {
            (Vec::new(), 0)
        } else {
            let left_out = problems.len().saturating_sub(EVIDENCE);
            (problems.into_iter().take(EVIDENCE).collect(), left_out)
        };
        Check {
            name,
            passed,
            detail,
            evidence,
            evidence_left_out,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Verdict {
    pub checks: Vec<Check>,
    pub in_history: usize,
    pub duplicates: usize,
    pub lost: usize,
}

impl Verdict {
    pub fn holds(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }
}

/// How long a read the verdict is drawn from may keep failing.
const READ_PATIENCE: Duration = Duration::from_secs(30);

/// A read the verdict is drawn from. A failed read must never pass for an
/// empty one (a history read answered 500 looked like 27 lost orders): it
/// is retried, on each node in turn, through lost answers and what
/// [`says_retry`], each failure told on stderr; anything but 200 in the
/// end stops the rush without a verdict.
async fn read<'a, A>(
    clients: &'a [Client],
    what: &str,
    get: impl Fn(&'a Client) -> A,
) -> anyhow::Result<Reply>
where
    A: Future<Output = ClientAnswer>,
{
    let give_up = Instant::now() + READ_PATIENCE;
    let mut attempt = 0;
    loop {
        let client = &clients[attempt % clients.len()];
        attempt += 1;
        let answer = get(client).await;
        let said = match &answer {
            Ok(reply) if reply.status == 200 => return answer.map_err(Into::into),
            Ok(reply) => format!("{} {}", reply.status, reply.code().unwrap_or_default()),
            Err(e) => e.to_string(),
        };
        let retry = answer.as_ref().map_or(true, says_retry);
        if !retry || Instant::now() > give_up {
            bail!("could not read {what} from {}: {said}", client.base());
        }
        eprintln!(
            "rush: reading {what} from {}: {said}; retrying",
            client.base()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

pub async fn verify(
    clients: &[Client],
    outcome: &Outcome,
    duplicate_window: Duration,
) -> anyhow::Result<Verdict> {
    let shop = &outcome.setup;
    let (history, truncated) = read_history(clients, shop).await?;
    let accounting = account(&Facts {
        intents: &outcome.guests.intents,
        history: &history,
        events: &outcome.kitchen.events,
        duplicate_window,
        truncated,
    });
    let mut checks = accounting.checks;

    let inventory = read(clients, "the inventory", |c| c.inventory(&shop.shop_id)).await?;
    let stock = stock::levels(&inventory);
    checks.push(stock::conserved(outcome, &history, &stock, truncated));
    let log = read(clients, "the inventory log", |c| {
        c.inventory_log(&shop.shop_id, PAGE)
    })
    .await?;
    checks.push(stock::op_log(shop, &log, &stock));
    checks.push(kitchen::check(outcome, &history));

    Ok(Verdict {
        checks,
        in_history: history.len(),
        duplicates: accounting.duplicates,
        lost: accounting.lost,
    })
}

/// Every table's orders, and whether some table has more than one page.
async fn read_history(clients: &[Client], shop: &Shop) -> anyhow::Result<(Vec<Ordered>, bool)> {
    let mut history = Vec::new();
    let mut truncated = false;
    for table in &shop.tables {
        let what = format!("the history of {}", table.label);
        let reply = read(clients, &what, |c| {
            c.session_orders(&table.session_id, PAGE)
        })
        .await?;
        let orders = reply.body["orders"].as_array().cloned().unwrap_or_default();
        truncated |= orders.len() == PAGE as usize;
        history.extend(orders.iter().map(Ordered::from_json));
    }
    Ok((history, truncated))
}
