//! Each order's op-log rows against its lines: the `order` rows take what
//! the lines name, a cancellation's `cancel` rows give it back.

use std::collections::HashMap;

use anyhow::{Context, Result};
use ordergate_domain::inventory::Operation;
use ordergate_domain::order::OrderStatus;
use uuid::Uuid;

use super::Check;
use crate::db::{Db, Val};
use crate::report::counted;

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

/// Every order that has op-log rows, by (shop, order).
type LoggedOrders = HashMap<(Uuid, Uuid), Logged>;

/// (shop, order, item): what a problem is about, and sorted by.
type OrderItem = (Uuid, Uuid, Uuid);

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
    key: OrderItem,
    problem: String,
}

/// Each order's `order` rows take exactly the units its lines name, per
/// item (each line's menu item, and each of its toppings and options,
/// times the line's quantity: what `stock_needed` counts), and name no item the lines don't;
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
    let (mut logged, rows) = logged_orders(db).await?;
    add_named_units(db, &mut logged).await?;
    let names = item_names(db).await?;
    let mut breaches = Breaches::default();
    let orders = judge_orders(db, &mut logged, &names, &mut breaches).await?;
    breaches.judge_rows_without_order(logged, &names);
    let mut problems = stayed_tracked(db, breaches).await?;
    problems.sort();
    Ok(Check {
        name: "order/cancel rows = lines",
        checked: format!(
            "{}, {}",
            counted(orders, "order"),
            counted(rows, "order/cancel row")
        ),
        problems: problems.into_iter().map(|(_, problem)| problem).collect(),
    })
}

/// What the `order` and `cancel` rows of each order did, per item, and how
/// many such rows there are.
async fn logged_orders(db: &mut Db<'_>) -> Result<(LoggedOrders, u64)> {
    let (order_op, cancel_op) = (Operation::Order.as_str(), Operation::Cancel.as_str());
    let mut logged: LoggedOrders = HashMap::new();
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
    Ok((logged, rows))
}

/// Adds to each logged order the units its lines name, per item.
async fn add_named_units(db: &mut Db<'_>, logged: &mut LoggedOrders) -> Result<()> {
    let lines = db.json_elements("o.lines", None);
    let toppings = db.json_elements("l.value", Some("toppings"));
    let options = db.json_elements("l.value", Some("options"));
    let (menu_item, topping, option) = (
        db.json_text("l.value", "menuItemId"),
        db.json_text("t.value", "toppingId"),
        db.json_text("c.value", "optionId"),
    );
    let quantity = format!("cast({} as bigint)", db.json_text("l.value", "quantity"));
    // The lines are taken apart once for all three parts: most of the cost.
    db.each(
        &format!(
            "with l as materialized (
                 select o.shop_id, o.order_id, e.value from orders o, {lines} e)
             select l.shop_id, l.order_id, {menu_item}, {quantity} from l
             union all
             select l.shop_id, l.order_id, {topping}, {quantity} from l, {toppings} t
             union all
             select l.shop_id, l.order_id, {option}, {quantity} from l, {options} c"
        ),
        |row| {
            // An order without rows took nothing, which any lines allow.
            if let Some(order) = logged.get_mut(&(id(&row[0])?, id(&row[1])?)) {
                *slot(&mut order.named, id(&row[2])?) += row[3].int().unwrap_or(0);
            }
            Ok(())
        },
    )
    .await
}

/// Each inventory item as the problems name it: kind, id and name.
struct ItemNames(HashMap<(Uuid, Uuid), String>);

async fn item_names(db: &mut Db<'_>) -> Result<ItemNames> {
    let names = db
        .rows(
            "select i.shop_id, i.item_id, i.kind, coalesce(m.name, t.name, c.name), s.languages
             from inventory i
             join shops s on s.shop_id = i.shop_id
             left join menu_items m
                 on i.kind = 'menuItem' and m.shop_id = i.shop_id and m.menu_item_id = i.item_id
             left join toppings t
                 on i.kind = 'topping' and t.shop_id = i.shop_id and t.topping_id = i.item_id
             left join item_options c
                 on i.kind = 'option' and c.shop_id = i.shop_id and c.option_id = i.item_id",
        )
        .await?
        .iter()
        .map(|row| {
            let what = format!(
                "{} {} ({})",
                row[2],
                row[1],
                super::display_name(&row[3], &row[4])
            );
            Ok(((id(&row[0])?, id(&row[1])?), what))
        })
        .collect::<Result<_>>()?;
    Ok(ItemNames(names))
}

impl ItemNames {
    fn of(&self, shop: Uuid, item: Uuid) -> String {
        self.0
            .get(&(shop, item))
            .cloned()
            .unwrap_or_else(|| format!("item {item}"))
    }
}

/// Judges each order's rows against its lines and status, taking the
/// order out of `logged` (which keeps the rows naming no order); returns
/// how many orders there are.
async fn judge_orders(
    db: &mut Db<'_>,
    logged: &mut LoggedOrders,
    names: &ItemNames,
    breaches: &mut Breaches,
) -> Result<u64> {
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
                    names.of(shop, item)
                );
                breaches.judge_taken(key, &what, moved, &order.named);
                breaches.judge_given(key, &what, moved, status, cancelled);
            }
            Ok(())
        },
    )
    .await?;
    Ok(orders)
}

/// The breaches found, and the missing `cancel` rows that are breaches
/// only if their item stayed tracked.
#[derive(Default)]
struct Breaches {
    problems: Vec<(OrderItem, String)>,
    unreturned: Vec<Unreturned>,
}

impl Breaches {
    /// The order's `order` rows of the item take what its lines name.
    fn judge_taken(&mut self, key: OrderItem, what: &str, moved: &Moved, named: &[(Uuid, i64)]) {
        let order_op = Operation::Order.as_str();
        let (item, taken) = (key.2, moved.taken);
        if moved.order_rows > 0 {
            match named.iter().find(|(i, _)| *i == item) {
                None => self.problems.push((
                    key,
                    format!(
                        "{what}: its `{order_op}` rows sum to {taken}, but its lines do \
                         not name it (expected no row)"
                    ),
                )),
                Some(&(_, units)) if taken != -units => self.problems.push((
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
    }

    /// The order's `cancel` rows of the item give back what its `order`
    /// rows took, and only a cancelled order has any.
    fn judge_given(
        &mut self,
        key: OrderItem,
        what: &str,
        moved: &Moved,
        status: &str,
        cancelled: bool,
    ) {
        let (order_op, cancel_op) = (Operation::Order.as_str(), Operation::Cancel.as_str());
        let (taken, given) = (moved.taken, moved.given);
        if moved.cancel_rows > 0 && !cancelled {
            self.problems.push((
                key,
                format!(
                    "{what}: its `{cancel_op}` rows sum to {given}, but the order is \
                     {status}, not cancelled (expected no row)"
                ),
            ));
        } else if moved.cancel_rows > 0 && moved.order_rows == 0 {
            self.problems.push((
                key,
                format!(
                    "{what}: its `{cancel_op}` rows sum to {given}, but it has no \
                     `{order_op}` row for it (expected no row)"
                ),
            ));
        } else if moved.cancel_rows > 0 && given != -taken {
            self.problems.push((
                key,
                format!(
                    "{what}: its `{cancel_op}` rows sum to {given} (expected {}: what \
                     its `{order_op}` rows took)",
                    -taken
                ),
            ));
        } else if cancelled && moved.cancel_rows == 0 && taken != 0 {
            self.unreturned.push(Unreturned {
                shop: key.0,
                item: key.2,
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

    /// Rows naming an order that is not there: nothing may have moved.
    fn judge_rows_without_order(&mut self, logged: LoggedOrders, names: &ItemNames) {
        let (order_op, cancel_op) = (Operation::Order.as_str(), Operation::Cancel.as_str());
        for ((shop, order_id), order) in logged {
            for (item, moved) in order.moved {
                self.problems.push((
                    (shop, order_id, item),
                    format!(
                        "shop {shop}: order {order_id}, which the shop does not have: {}: its \
                         `{order_op}` rows sum to {} and its `{cancel_op}` rows to {} (expected no \
                         row)",
                        names.of(shop, item),
                        moved.taken,
                        moved.given
                    ),
                ));
            }
        }
    }
}

/// The problems found, with those unreturned items that stayed tracked
/// since their order took them.
async fn stayed_tracked(db: &mut Db<'_>, breaches: Breaches) -> Result<Vec<(OrderItem, String)>> {
    let Breaches {
        mut problems,
        unreturned,
    } = breaches;
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
    Ok(problems)
}

/// An id as the backends store it (SQLite's text, PostgreSQL's uuid).
fn id(val: &Val) -> Result<Uuid> {
    Uuid::parse_str(val.text()).with_context(|| format!("{val:?} is not a UUID"))
}
