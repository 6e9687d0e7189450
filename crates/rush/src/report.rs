//! The rush's report: what was asked, what happened, and the verdict.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::check::Verdict;
use super::tally::{Answer, Ending};
use super::{Outcome, RushArgs};

/// Problems of a failed check the text report shows (`--json` has them all).
const SHOWN: usize = 3;

pub fn print(args: &RushArgs, outcome: &Outcome, verdict: &Verdict) {
    let summary = Summary::of(outcome);
    if args.json {
        let figures = figures(args, outcome, verdict, &summary);
        println!(
            "{}",
            serde_json::to_string_pretty(&figures).unwrap_or_default()
        );
        return;
    }
    print_figures(args, outcome, verdict, &summary);
    print_checks(args, verdict);
}

/// What the guests' intents came to, counted once for either form of the
/// report.
struct Summary {
    intended: usize,
    acknowledged: usize,
    refused: BTreeMap<String, usize>,
    double_taps: usize,
    fresh_taps: usize,
    /// Fresh-key taps refused as DUPLICATE_PAYLOAD.
    caught: usize,
    fresh_placed: usize,
    secs: f64,
}

impl Summary {
    fn of(outcome: &Outcome) -> Summary {
        let guests = &outcome.guests;
        let mut acknowledged = 0;
        let mut refused: BTreeMap<String, usize> = BTreeMap::new();
        for intent in &guests.intents {
            match intent.ending() {
                Ending::Placed => acknowledged += 1,
                Ending::Refused(code) => *refused.entry(code).or_default() += 1,
                Ending::GaveUp => {}
            }
        }
        let fresh_taps: Vec<_> = guests
            .intents
            .iter()
            .filter_map(|i| i.fresh_tap.as_ref())
            .collect();
        Summary {
            intended: guests.intents.len(),
            acknowledged,
            refused,
            double_taps: guests.intents.iter().filter(|i| i.double_tapped()).count(),
            fresh_taps: fresh_taps.len(),
            caught: fresh_taps
                .iter()
                .filter(|t| t.answers().any(|a| matches!(a, Answer::Duplicate(_))))
                .count(),
            fresh_placed: fresh_taps.iter().filter(|t| !t.placed().is_empty()).count(),
            secs: outcome.elapsed.as_secs_f64().max(f64::EPSILON),
        }
    }
}

/// Tap-to-answer latency at quantile `q`, in milliseconds.
fn latency_ms(outcome: &Outcome, q: f64) -> f64 {
    outcome.guests.latency.value_at_quantile(q) as f64 / 1000.0
}

fn figures(args: &RushArgs, outcome: &Outcome, verdict: &Verdict, summary: &Summary) -> Value {
    let guests = &outcome.guests;
    let ms = |q: f64| latency_ms(outcome, q);
    json!({
        "tables": args.tables,
        "guests": args.tables * args.guests,
        "seconds": summary.secs,
        "intended": summary.intended,
        "acknowledged": summary.acknowledged,
        "inHistory": verdict.in_history,
        "duplicates": verdict.duplicates,
        "acknowledgedButLost": verdict.lost,
        "refused": summary.refused,
        "doubleTaps": summary.double_taps,
        "freshKeyTaps": summary.fresh_taps,
        "freshKeyTapsCaught": summary.caught,
        "freshKeyTapsPlaced": summary.fresh_placed,
        "attempts": guests.attempts,
        "answersLost": guests.lost_answers,
        "retriedOn": guests.retries_by_code,
        "restocks": outcome.staff.restocked,
        "restocksUnanswered": outcome.staff.unanswered_restocks,
        "cancelled": outcome.staff.cancelled.len(),
        "kitchenEvents": outcome.kitchen.events.len(),
        "kitchenReconnects": outcome.kitchen.reconnects,
        "ordersPerSecond": summary.acknowledged as f64 / summary.secs,
        "latencyMs": {
            "p50": ms(0.5), "p90": ms(0.9), "p99": ms(0.99),
            "max": guests.latency.max() as f64 / 1000.0,
            "note": "tap to final answer, retries included; corrected for coordinated omission at a 2 s think time"
        },
        "checks": verdict.checks,
        "passed": verdict.holds(),
    })
}

fn print_figures(args: &RushArgs, outcome: &Outcome, verdict: &Verdict, summary: &Summary) {
    let guests = &outcome.guests;
    let Summary {
        intended,
        acknowledged,
        refused,
        double_taps,
        caught,
        fresh_placed,
        secs,
        ..
    } = summary;
    println!();
    println!(
        "rush: {} tables × {} guests for {:.1} s",
        args.tables, args.guests, secs
    );
    println!("  orders intended          {intended}");
    println!("  acknowledged (201)       {acknowledged}");
    println!("  in the history           {}", verdict.in_history);
    println!("  duplicates               {}", verdict.duplicates);
    println!("  acknowledged but lost    {}", verdict.lost);
    println!("  refused                  {refused:?}");
    println!("  double taps              {double_taps}");
    println!(
        "  fresh-key taps           {} ({caught} refused as DUPLICATE_PAYLOAD, {fresh_placed} placed)",
        summary.fresh_taps
    );
    println!(
        "  requests / answers lost  {} / {}",
        guests.attempts, guests.lost_answers
    );
    println!("  retried on               {:?}", guests.retries_by_code);
    println!(
        "  staff                    restocked {:?}, cancelled {}",
        outcome.staff.restocked,
        outcome.staff.cancelled.len()
    );
    println!(
        "  kitchen                  {} events, {} reconnects",
        outcome.kitchen.events.len(),
        outcome.kitchen.reconnects
    );
    println!(
        "  throughput               {:.1} orders/s",
        *acknowledged as f64 / secs
    );
    println!(
        "  latency (tap → answer)   p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        latency_ms(outcome, 0.5),
        latency_ms(outcome, 0.9),
        latency_ms(outcome, 0.99),
        guests.latency.max() as f64 / 1000.0
    );
    println!();
}

fn print_checks(args: &RushArgs, verdict: &Verdict) {
    for check in &verdict.checks {
        let mark = if check.passed { "ok  " } else { "FAIL" };
        println!("  {mark} {}: {}", check.name, check.detail);
        let several_nodes = args.urls.len().max(args.nodes) > 1;
        for problem in check.evidence.iter().take(SHOWN) {
            print_problem(problem, several_nodes);
        }
        let more = check.evidence.len().saturating_sub(SHOWN) + check.evidence_left_out;
        if more > 0 {
            println!("         … and {more} more (--json lists them with their evidence)");
        }
    }
}

/// One problem of a failed check, a line for it and each order and key it
/// involves; with several nodes, each attempt says which one it went to.
fn print_problem(problem: &Value, several_nodes: bool) {
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    println!("       - {}", text(&problem["problem"]));
    for order in problem["orders"].as_array().into_iter().flatten() {
        let mut line = format!("order {}", text(&order["orderId"]));
        for (field, label) in [
            ("clientId", ""),
            ("status", ""),
            ("createdAt", "created "),
            ("placedEvent", "placed at event "),
            ("cancelledEvent", "cancelled at event "),
        ] {
            if !order[field].is_null() {
                line.push_str(&format!(", {label}{}", text(&order[field])));
            }
        }
        println!("           {line}");
    }
    for request in problem["requests"].as_array().into_iter().flatten() {
        let sends: Vec<String> = request["sends"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|attempts| {
                attempts
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|heard| {
                        let mut said = if several_nodes {
                            format!("node {}: ", heard["node"])
                        } else {
                            String::new()
                        };
                        match heard["status"].as_u64() {
                            Some(status) => said.push_str(&status.to_string()),
                            None => {
                                said.push_str(&format!("no answer ({})", text(&heard["error"])))
                            }
                        }
                        for field in ["code", "orderId"] {
                            if let Some(value) = heard[field].as_str() {
                                said.push(' ');
                                said.push_str(value);
                            }
                        }
                        if heard["replayed"] == true {
                            said.push_str(" (replay)");
                        }
                        said
                    })
                    .collect::<Vec<_>>()
                    .join(" → ")
            })
            .collect();
        println!(
            "           key {} (intent {}{}, {} {}{}): {}",
            text(&request["key"]),
            request["intent"],
            if request["freshKeyTap"] == true {
                ", fresh-key tap"
            } else {
                ""
            },
            text(&request["table"]),
            text(&request["clientId"]),
            if request["allowRepeat"] == true {
                ", allowRepeat"
            } else {
                ""
            },
            sends.join(" | ")
        );
    }
    for (field, value) in problem.as_object().into_iter().flatten() {
        if !["problem", "orders", "requests"].contains(&field.as_str()) {
            println!("           {field}: {}", text(value));
        }
    }
}
