//! The invariants every ordergate database keeps, checked on one database
//! of either backend: what `ordergate verify` reports, and what a migration
//! checks on both sides.

use std::collections::{BTreeMap, HashMap};

use anyhow::{Context, Result};
use ordergate_domain::events::EventType;
use ordergate_domain::inventory::Operation;
use ordergate_domain::order::OrderStatus;
use uuid::Uuid;

/// As the event log stores it, for the SQL and the messages below.
const ORDER_PLACED: &str = EventType::OrderPlaced.as_str();

use crate::db::{Db, Val};
use crate::report;

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
            stock_deltas_match_lines(db).await?,
            orders_have_events(db).await?,
            events_are_consecutive(db).await?,
            tickets_are_unique(db).await?,
        ],
    })
}

/// Stock equals the sum of its op log's deltas, untracked counting as 0.
pub(crate) async fn stock_matches_log(db: &mut Db<'_>) -> Result<Check> {
    let rows = db
        .rows(
            "select i.shop_id, i.item_id, i.kind, coalesce(m.name, t.name), i.stock,
                    cast(coalesce(l.total, 0) as bigint), coalesce(l.entries, 0)
             from inventory i
             left join (select shop_id, item_id, sum(delta) as total, count(*) as entries
                        from inventory_log group by shop_id, item_id) l
                 on l.shop_id = i.shop_id and l.item_id = i.item_id
             left join menu_items m
                 on i.kind = 'menuItem' and m.shop_id = i.shop_id and m.menu_item_id = i.item_id
             left join toppings t
                 on i.kind = 'topping' and t.shop_id = i.shop_id and t.topping_id = i.item_id",
        )
        .await?;
    let mut problems = Vec::new();
    let mut shops = std::collections::BTreeSet::new();
    for row in &rows {
        let [shop, item, kind, name, stock, sum, entries] = &row[..] else {
            unreachable!("seven columns")
        };
        shops.insert(shop.clone());
        let counted = stock.int().unwrap_or(0);
        let logged = sum.int().unwrap_or(0);
        if counted != logged {
            let stock = match stock {
                Val::Null => "untracked (counts as 0)".to_owned(),
                stock => stock.to_string(),
            };
            problems.push(format!(
                "shop {shop}: {kind} {item} ({name}): stock is {stock}, but its op log \
                 ({entries} entries) sums to {logged}"
            ));
        }
    }
    Ok(Check {
        name: "stock = op-log sum",
        checked: format!("{} items in {} shops", rows.len(), shops.len()),
        problems,
    })
}

/// What one order's op-log rows did to one item.
#[derive(Debug, Default)]
struct Moved {
    /// The `order` rows: their delta sum, and the id of the last.
    taken: i64,
    order_rows: u32,
    last_order_row: i64,
    /// The `cancel` rows' delta sum.
    given: i64,
    cancel_rows: u32,
}

/// An order that has op-log rows: what they did, and what its lines name,
/// per item. An order names few items: vectors searched end to end cost
/// less than maps, over hundreds of thousands of orders.
#[derive(Debug, Default)]
struct Logged {
    moved: Vec<(Uuid, Moved)>,
    named: Vec<(Uuid, i64)>,
}

/// The entry of `item` in `items`, added if missing.
fn slot<T: Default>(items: &mut Vec<(Uuid, T)>, item: Uuid) -> &mut T {
    let at = match items.iter().position(|(i, _)| *i == item) {
        Some(at) => at,
        None => {
            items.push((item, T::default()));
            items.len() - 1
        }
    };
    &mut items[at].1
}

/// A cancelled order that took an item and gave none of it back: no
/// breach if the item was untracked when it was cancelled.
struct Unreturned {
    shop: Uuid,
    item: Uuid,
    /// The log id of the order's last `order` row of the item.
    after: i64,
    key: (Uuid, Uuid, Uuid),
    problem: String,
}

/// Each order's `order` rows take exactly the units its lines name, per
/// item (each line's menu item, and each of its toppings, times the line's
/// quantity: what `stock_needed` counts), and name no item the lines don't;
/// a cancelled order's `cancel` rows give back exactly what its `order`
/// rows took, and no other order has any.
///
/// The server writes rows only for items tracked at that moment, so an
/// item without an `order` row was untracked when the order was placed (no
/// breach), and a cancelled order may give nothing back to an item that
/// was untracked when it was cancelled. There is no row to place that
/// moment by, and clocks of several nodes cannot be compared, so a missing
/// `cancel` row is reported only when the item has stayed tracked since the
/// order took it: no op-log row of the item made it untracked after the
/// order's (log ids of one item follow its row lock, on either backend).
pub(crate) async fn stock_deltas_match_lines(db: &mut Db<'_>) -> Result<Check> {
    let (order_op, cancel_op) = (Operation::Order.as_str(), Operation::Cancel.as_str());
    let mut logged: HashMap<(Uuid, Uuid), Logged> = HashMap::new();
    let mut rows = 0u64;
    db.each(
        &format!(
            "select shop_id, order_id, item_id, operation, delta, log_id from inventory_log
             where order_id is not null and operation in ('{order_op}', '{cancel_op}')"
        ),
        |row| {
            rows += 1;
            let order = logged.entry((id(&row[0])?, id(&row[1])?)).or_default();
            let moved = slot(&mut order.moved, id(&row[2])?);
            let delta = row[4].int().unwrap_or(0);
            if row[3].text() == order_op {
                moved.taken += delta;
                moved.order_rows += 1;
                moved.last_order_row = moved.last_order_row.max(row[5].int().unwrap_or(0));
            } else {
                moved.given += delta;
                moved.cancel_rows += 1;
            }
            Ok(())
        },
    )
    .await?;

    let lines = db.json_elements("o.lines", None);
    let toppings = db.json_elements("l.value", Some("toppings"));
    let (menu_item, topping) = (
        db.json_text("l.value", "menuItemId"),
        db.json_text("t.value", "toppingId"),
    );
    let quantity = format!("cast({} as bigint)", db.json_text("l.value", "quantity"));
    // The lines are taken apart once for both halves: most of the cost.
    db.each(
        &format!(
            "with l as materialized (
                 select o.shop_id, o.order_id, e.value from orders o, {lines} e)
             select l.shop_id, l.order_id, {menu_item}, {quantity} from l
             union all
             select l.shop_id, l.order_id, {topping}, {quantity} from l, {toppings} t"
        ),
        |row| {
            // An order without rows took nothing, which any lines allow.
            if let Some(order) = logged.get_mut(&(id(&row[0])?, id(&row[1])?)) {
                *slot(&mut order.named, id(&row[2])?) += row[3].int().unwrap_or(0);
            }
            Ok(())
        },
    )
    .await?;

    let names: HashMap<(Uuid, Uuid), String> = db
        .rows(
            "select i.shop_id, i.item_id, i.kind, coalesce(m.name, t.name) from inventory i
             left join menu_items m
                 on i.kind = 'menuItem' and m.shop_id = i.shop_id and m.menu_item_id = i.item_id
             left join toppings t
                 on i.kind = 'topping' and t.shop_id = i.shop_id and t.topping_id = i.item_id",
        )
        .await?
        .iter()
        .map(|row| {
            let what = format!("{} {} ({})", row[2], row[1], row[3]);
            Ok(((id(&row[0])?, id(&row[1])?), what))
        })
        .collect::<Result<_>>()?;
    let name = |shop: Uuid, item: Uuid| {
        names
            .get(&(shop, item))
            .cloned()
            .unwrap_or_else(|| format!("item {item}"))
    };

    let mut problems: Vec<((Uuid, Uuid, Uuid), String)> = Vec::new();
    let mut unreturned = Vec::new();
    let mut orders = 0u64;
    db.each(
        "select shop_id, order_id, ticket_day, ticket_number, status from orders",
        |row| {
            orders += 1;
            let (shop, order_id) = (id(&row[0])?, id(&row[1])?);
            let Some(order) = logged.remove(&(shop, order_id)) else {
                return Ok(());
            };
            let status = row[4].text();
            let cancelled = status == OrderStatus::Cancelled.as_str();
            for (item, moved) in &order.moved {
                let item = *item;
                let key = (shop, order_id, item);
                let what = format!(
                    "shop {shop}: order {order_id} (ticket #{} of {}): {}",
                    row[3],
                    row[2],
                    name(shop, item)
                );
                let taken = moved.taken;
                if moved.order_rows > 0 {
                    match order.named.iter().find(|(i, _)| *i == item) {
                        None => problems.push((
                            key,
                            format!(
                                "{what}: its `{order_op}` rows sum to {taken}, but its lines do \
                                 not name it (expected no row)"
                            ),
                        )),
                        Some(&(_, units)) if taken != -units => problems.push((
                            key,
                            format!(
                                "{what}: its `{order_op}` rows sum to {taken} (expected {}: its \
                                 lines name {units})",
                                -units
                            ),
                        )),
                        Some(_) => {}
                    }
                }
                let given = moved.given;
                if moved.cancel_rows > 0 && !cancelled {
                    problems.push((
                        key,
                        format!(
                            "{what}: its `{cancel_op}` rows sum to {given}, but the order is \
                             {status}, not cancelled (expected no row)"
                        ),
                    ));
                } else if moved.cancel_rows > 0 && moved.order_rows == 0 {
                    problems.push((
                        key,
                        format!(
                            "{what}: its `{cancel_op}` rows sum to {given}, but it has no \
                             `{order_op}` row for it (expected no row)"
                        ),
                    ));
                } else if moved.cancel_rows > 0 && given != -taken {
                    problems.push((
                        key,
                        format!(
                            "{what}: its `{cancel_op}` rows sum to {given} (expected {}: what \
                             its `{order_op}` rows took)",
                            -taken
                        ),
                    ));
                } else if cancelled && moved.cancel_rows == 0 && taken != 0 {
                    unreturned.push(Unreturned {
                        shop,
                        item,
                        after: moved.last_order_row,
                        key,
                        problem: format!(
                            "{what}: the order is cancelled but has no `{cancel_op}` row \
                             (expected {}: what its `{order_op}` rows took; the item has stayed \
                             tracked since)",
                            -taken
                        ),
                    });
                }
            }
            Ok(())
        },
    )
    .await?;

    // Rows naming an order that is not there: nothing may have moved.
    for ((shop, order_id), order) in logged {
        for (item, moved) in order.moved {
            problems.push((
                (shop, order_id, item),
                format!(
                    "shop {shop}: order {order_id}, which the shop does not have: {}: its \
                     `{order_op}` rows sum to {} and its `{cancel_op}` rows to {} (expected no \
                     row)",
                    name(shop, item),
                    moved.taken,
                    moved.given
                ),
            ));
        }
    }

    if !unreturned.is_empty() {
        let mut untracked = HashMap::new();
        db.each(
            "select shop_id, item_id, max(log_id) from inventory_log
             where stock_after is null group by shop_id, item_id",
            |row| {
                untracked.insert((id(&row[0])?, id(&row[1])?), row[2].int().unwrap_or(0));
                Ok(())
            },
        )
        .await?;
        problems.extend(
            unreturned
                .into_iter()
                .filter(|u| {
                    untracked
                        .get(&(u.shop, u.item))
                        .is_none_or(|&at| at < u.after)
                })
                .map(|u| (u.key, u.problem)),
        );
    }
    problems.sort();
    Ok(Check {
        name: "order/cancel rows = lines",
        checked: format!("{orders} orders, {rows} order/cancel rows"),
        problems: problems.into_iter().map(|(_, problem)| problem).collect(),
    })
}

/// An id as the backends store it (SQLite's text, PostgreSQL's uuid).
fn id(val: &Val) -> Result<Uuid> {
    Uuid::parse_str(val.text()).with_context(|| format!("{val:?} is not a UUID"))
}

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
        checked: format!("{orders} orders"),
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
        checked: format!("{events} events in {} shops", last.len()),
        problems,
    })
}

/// Ticket numbers are unique per shop and day, and each day's counter is
/// at least its highest number (or the next order would reuse one).
pub(crate) async fn tickets_are_unique(db: &mut Db<'_>) -> Result<Check> {
    let mut problems = Vec::new();
    let duplicates = db
        .rows(
            "select shop_id, ticket_day, ticket_number, count(*) from orders
             group by shop_id, ticket_day, ticket_number having count(*) > 1
             order by shop_id, ticket_day, ticket_number",
        )
        .await?;
    for row in &duplicates {
        problems.push(format!(
            "shop {}, day {}: ticket #{} is used by {} orders (expected 1)",
            row[0], row[1], row[2], row[3]
        ));
    }
    let days = db
        .rows(
            "select o.shop_id, o.ticket_day, max(o.ticket_number), count(*), max(c.last_number)
             from orders o
             left join ticket_counters c on c.shop_id = o.shop_id and c.ticket_day = o.ticket_day
             group by o.shop_id, o.ticket_day
             order by o.shop_id, o.ticket_day",
        )
        .await?;
    let mut orders = 0;
    for row in &days {
        let highest = row[2].int().unwrap_or(0);
        orders += row[3].int().unwrap_or(0);
        match row[4].int() {
            Some(counter) if counter >= highest => {}
            counter => problems.push(format!(
                "shop {}, day {}: the ticket counter stands at {} but ticket #{highest} exists \
                 (expected at least {highest}): the next order would reuse a number",
                row[0],
                row[1],
                counter.map_or("nothing".to_owned(), |c| c.to_string())
            )),
        }
    }
    Ok(Check {
        name: "ticket numbers per shop/day",
        checked: format!("{orders} orders on {} shop-days", days.len()),
        problems,
    })
}
