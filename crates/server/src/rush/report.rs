//! The rush's report: what was asked, what happened, and the verdict.

use std::collections::BTreeMap;

use serde_json::json;

use super::check::Verdict;
use super::guests::Ending;
use super::{Outcome, RushArgs};

pub fn print(args: &RushArgs, outcome: &Outcome, verdict: &Verdict) {
    let guests = &outcome.guests;
    let intended = guests.intents.len();
    let acknowledged = guests
        .intents
        .iter()
        .filter(|i| i.order_id().is_some())
        .count();
    let mut refused: BTreeMap<&str, usize> = BTreeMap::new();
    for intent in &guests.intents {
        if let Ending::Refused(code) = &intent.ending {
            *refused.entry(code.as_str()).or_default() += 1;
        }
    }
    let double_taps = guests.intents.iter().filter(|i| i.double_tapped).count();
    let caught = guests
        .fresh_taps
        .iter()
        .filter(|t| t.duplicate_refused)
        .count();
    let secs = outcome.elapsed.as_secs_f64().max(f64::EPSILON);
    let latency_ms = |q: f64| guests.latency.value_at_quantile(q) as f64 / 1000.0;
    let figures = json!({
        "tables": args.tables,
        "guests": args.tables * args.guests,
        "seconds": secs,
        "intended": intended,
        "acknowledged": acknowledged,
        "inHistory": verdict.in_history,
        "duplicates": verdict.duplicates,
        "acknowledgedButLost": verdict.lost,
        "refused": refused,
        "doubleTaps": double_taps,
        "freshKeyTaps": guests.fresh_taps.len(),
        "freshKeyTapsCaught": caught,
        "attempts": guests.attempts,
        "answersLost": guests.lost_answers,
        "retriedOn": guests.retries_by_code,
        "restocks": outcome.staff.restocked,
        "cancelled": outcome.staff.cancelled.len(),
        "kitchenEvents": outcome.kitchen.events.len(),
        "kitchenReconnects": outcome.kitchen.reconnects,
        "ordersPerSecond": acknowledged as f64 / secs,
        "latencyMs": {
            "p50": latency_ms(0.5), "p90": latency_ms(0.9), "p99": latency_ms(0.99),
            "max": guests.latency.max() as f64 / 1000.0,
            "note": "tap to final answer, retries included; corrected for coordinated omission at a 2 s think time"
        },
        "checks": verdict.checks,
        "passed": verdict.holds(),
    });
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&figures).unwrap_or_default()
        );
        return;
    }
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
        "  fresh-key taps           {} ({caught} refused as DUPLICATE_PAYLOAD)",
        guests.fresh_taps.len()
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
        acknowledged as f64 / secs
    );
    println!(
        "  latency (tap → answer)   p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        latency_ms(0.5),
        latency_ms(0.9),
        latency_ms(0.99),
        guests.latency.max() as f64 / 1000.0
    );
    println!();
    for check in &verdict.checks {
        let mark = if check.passed { "ok  " } else { "FAIL" };
        println!("  {mark} {}: {}", check.name, check.detail);
    }
}
