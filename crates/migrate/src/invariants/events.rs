//! The event log: one `order.placed` per order, ids without gaps.

use std::collections::{BTreeMap, HashMap};

use anyhow::Result;
use ordergate_domain::events::EventType;

use super::Check;
use crate::db::Db;
use crate::report::counted;

/// As the event log stores it, for the SQL and the messages below.
const ORDER_PLACED: &str = EventType::OrderPlaced.as_str();

/// Every order has exactly one `order.placed` event, and every such event
/// names an order of its shop.
pub(crate) async fn orders_have_events(db: &mut Db<'_>) -> Result<Check> {
    let order_id = db.json_text("data", "orderId");
    let mut placed: HashMap<(String, String), Vec<i64>> = HashMap::new();
    db.each(
        &format!(
            "select shop_id, event_id, {order_id} from events where event_type = '{ORDER_PLACED}'"
        ),
        |row| {
            let key = (row[0].to_string(), row[2].to_string());
            placed
                .entry(key)
                .or_default()
                .push(row[1].int().unwrap_or(0));
            Ok(())
        },
    )
    .await?;
    let mut problems = Vec::new();
    let mut orders = 0u64;
    let mut sorted: BTreeMap<(String, String), Vec<i64>> = BTreeMap::new();
    db.each(
        "select shop_id, order_id, ticket_day, ticket_number from orders",
        |row| {
            orders += 1;
            let (shop, order) = (row[0].to_string(), row[1].to_string());
            let events = placed
                .remove(&(shop.clone(), order.clone()))
                .unwrap_or_default();
            if events.len() != 1 {
                sorted.insert(
                    (shop, format!("{order} (ticket #{} of {})", row[3], row[2])),
                    events,
                );
            }
            Ok(())
        },
    )
    .await?;
    for ((shop, order), mut events) in sorted {
        events.sort_unstable();
        problems.push(match events.len() {
            0 => format!(
                "shop {shop}: order {order} has no {ORDER_PLACED} event (expected 1, found 0)"
            ),
            n => format!(
                "shop {shop}: order {order} has {n} {ORDER_PLACED} events (expected 1): ids {events:?}"
            ),
        });
    }
    let strays: BTreeMap<_, _> = placed.into_iter().collect();
    for ((shop, order), events) in strays {
        problems.push(format!(
            "shop {shop}: {ORDER_PLACED} event(s) {events:?} name order {order}, which the shop \
             does not have"
        ));
    }
    Ok(Check {
        name: "one order.placed per order",
        checked: counted(orders, "order"),
        problems,
    })
}

/// Event ids of each shop run 1, 2, 3, … without a gap (ids are unique by
/// the primary key, so they strictly increase in id order); on PostgreSQL
/// each shop's counter stands at its last event.
pub(crate) async fn events_are_consecutive(db: &mut Db<'_>) -> Result<Check> {
    let rows = db
        .rows(
            "select shop_id, event_id, previous from (
                 select shop_id, event_id,
                        lag(event_id) over (partition by shop_id order by event_id) as previous
                 from events) e
             where previous is null or event_id <> previous + 1
             order by shop_id, event_id",
        )
        .await?;
    let mut problems = Vec::new();
    for row in &rows {
        let (shop, id) = (&row[0], row[1].int().unwrap_or(0));
        match row[2].int() {
            None if id != 1 => problems.push(format!(
                "shop {shop}: the first event id is {id} (expected 1): events 1 to {} are missing",
                id - 1
            )),
            None => {}
            Some(previous) => problems.push(format!(
                "shop {shop}: event ids jump from {previous} to {id} (expected {}): {} missing",
                previous + 1,
                id - previous - 1
            )),
        }
    }
    let last = db
        .rows("select shop_id, max(event_id), count(*) from events group by shop_id")
        .await?;
    let events: i64 = last.iter().filter_map(|row| row[2].int()).sum();
    if db.is_postgres() {
        let counters: BTreeMap<String, i64> = db
            .rows("select shop_id, last_event_id from event_counters")
            .await?
            .into_iter()
            .map(|row| (row[0].to_string(), row[1].int().unwrap_or(0)))
            .collect();
        for row in &last {
            let (shop, max) = (row[0].to_string(), row[1].int().unwrap_or(0));
            match counters.get(&shop) {
                Some(&counter) if counter == max => {}
                Some(&counter) => problems.push(format!(
                    "shop {shop}: the event counter stands at {counter}, but the last event is \
                     {max} (expected {max})"
                )),
                None => problems.push(format!(
                    "shop {shop}: no event counter, but events up to {max} exist (the next \
                     event would take id 1 again)"
                )),
            }
        }
    }
    Ok(Check {
        name: "event ids per shop",
        checked: format!(
            "{} in {}",
            counted(events, "event"),
            counted(last.len(), "shop")
        ),
        problems,
    })
}
