//! Stock against its op log.

use anyhow::Result;

use super::Check;
use crate::db::{Db, Val};
use crate::report::counted;

/// Stock equals the sum of its op log's deltas, untracked counting as 0.
pub(crate) async fn stock_matches_log(db: &mut Db<'_>) -> Result<Check> {
    let rows = db
        .rows(
            "select i.shop_id, i.item_id, i.kind, coalesce(m.name, t.name, c.name), i.stock,
                    cast(coalesce(l.total, 0) as bigint), coalesce(l.entries, 0), s.languages
             from inventory i
             join shops s on s.shop_id = i.shop_id
             left join (select shop_id, item_id, sum(delta) as total, count(*) as entries
                        from inventory_log group by shop_id, item_id) l
                 on l.shop_id = i.shop_id and l.item_id = i.item_id
             left join menu_items m
                 on i.kind = 'menuItem' and m.shop_id = i.shop_id and m.menu_item_id = i.item_id
             left join toppings t
                 on i.kind = 'topping' and t.shop_id = i.shop_id and t.topping_id = i.item_id
             left join item_options c
                 on i.kind = 'option' and c.shop_id = i.shop_id and c.option_id = i.item_id",
        )
        .await?;
    let mut problems = Vec::new();
    let mut shops = std::collections::BTreeSet::new();
    for row in &rows {
        let [shop, item, kind, name, stock, sum, entries, languages] = &row[..] else {
            unreachable!("eight columns")
        };
        let name = super::display_name(name, languages);
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
        checked: format!(
            "{} in {}",
            counted(rows.len(), "item"),
            counted(shops.len(), "shop")
        ),
        problems,
    })
}
