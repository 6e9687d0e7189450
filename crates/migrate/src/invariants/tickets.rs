//! Ticket numbers and their counters.

use anyhow::Result;

use super::Check;
use crate::db::Db;
use crate::report::counted;

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
        checked: format!(
            "{} on {}",
            counted(orders, "order"),
            counted(days.len(), "shop-day")
        ),
        problems,
    })
}
