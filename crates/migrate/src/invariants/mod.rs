//! The invariants every ordergate database keeps, checked on one database
//! of either backend: what `ordergate verify` reports, and what a migration
//! checks on both sides. One module per family of checks: [`stock`] (stock
//! against its op log), [`stock_deltas`] (each order's op-log rows against
//! its lines), [`events`], [`tickets`] and [`photos`].

mod events;
mod photos;
mod stock;
mod stock_deltas;
mod tickets;

use anyhow::Result;
use ordergate_domain::language::{Languages, Text};

use crate::db::{Db, Val};
use crate::report;

pub(crate) use stock::stock_matches_log;

/// An item's name as a report gives it: its catalog text (JSON) in its
/// shop's default language (`languages`, JSON), or as stored when either
/// does not read (a report on a damaged database still names the item).
fn display_name(text: &Val, languages: &Val) -> String {
    let text = text.text();
    match (
        serde_json::from_str::<Text>(text),
        serde_json::from_str::<Languages>(languages.text()),
    ) {
        (Ok(name), Ok(languages)) => name.in_default(&languages).to_owned(),
        _ => text.to_owned(),
    }
}

/// One invariant, what it looked at, and every breach found, each naming
/// its shop and item or order with the expected and the actual value.
#[derive(Debug, Clone)]
pub struct Check {
    pub name: &'static str,
    pub checked: String,
    pub problems: Vec<String>,
}

/// The outcome of every check on one database.
#[derive(Debug, Clone)]
pub struct Findings {
    pub checks: Vec<Check>,
}

impl Findings {
    pub fn problems(&self) -> impl Iterator<Item = &String> {
        self.checks.iter().flat_map(|c| &c.problems)
    }

    pub fn is_clean(&self) -> bool {
        self.problems().next().is_none()
    }

    /// The checks as a table, then every problem on a line of its own.
    pub fn render(&self) -> String {
        let rows: Vec<Vec<String>> = self
            .checks
            .iter()
            .map(|c| {
                let result = match c.problems.len() {
                    0 => "ok".to_owned(),
                    1 => "1 PROBLEM".to_owned(),
                    n => format!("{n} PROBLEMS"),
                };
                vec![c.name.to_owned(), c.checked.clone(), result]
            })
            .collect();
        let mut out = report::table(&["check", "checked", "result"], &rows);
        if !self.is_clean() {
            out.push_str("\nproblems:\n");
            for problem in self.problems() {
                out.push_str("  ");
                out.push_str(problem);
                out.push('\n');
            }
        }
        out
    }
}

/// Runs every check on `db` (which the caller holds in one snapshot).
pub(crate) async fn check(db: &mut Db<'_>) -> Result<Findings> {
    Ok(Findings {
        checks: vec![
            stock_matches_log(db).await?,
            stock_deltas::stock_deltas_match_lines(db).await?,
            events::orders_have_events(db).await?,
            events::events_are_consecutive(db).await?,
            tickets::tickets_are_unique(db).await?,
            photos::photos_are_whole_and_their_own_shops(db).await?,
        ],
    })
}
