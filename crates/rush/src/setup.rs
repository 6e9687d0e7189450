//! The rush's restaurant: a shop with a realistic menu, tracked stock and
//! open tables, set up through the staff API like any restaurant's.

use std::collections::BTreeMap;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use uuid::Uuid;

use super::RushArgs;
use crate::client::{Client, Reply};

#[derive(Debug, Clone)]
pub struct Shop {
    pub shop_id: String,
    pub tables: Vec<Table>,
    pub items: Vec<Item>,
    /// The item every order wants with `--hot-item`.
    pub hot: Option<String>,
    /// Stock of every tracked item and topping when the rush began.
    pub initial_stock: BTreeMap<String, i64>,
}

#[derive(Debug, Clone)]
pub struct Table {
    pub label: String,
    pub session_id: String,
    pub pin: String,
}

#[derive(Debug, Clone)]
pub struct Item {
    pub id: String,
    pub topping_ids: Vec<String>,
    pub max_toppings: usize,
}

const ITEMS: [(&str, &str, i64); 10] = [
    ("Burgers", "Cheeseburger", 1290),
    ("Burgers", "Veggie Burger", 1190),
    ("Mains", "Katsu Curry", 1350),
    ("Mains", "Fish & Chips", 1400),
    ("Sides", "Fries", 450),
    ("Sides", "Onion Rings", 500),
    ("Desserts", "Apple Pie", 600),
    ("Drinks", "Cola", 300),
    ("Drinks", "Coffee", 350),
    ("Drinks", "Craft Beer", 700),
];
const TOPPINGS: [(&str, i64); 4] = [
    ("Cheese", 150),
    ("Bacon", 200),
    ("Egg", 120),
    ("Avocado", 180),
];

pub async fn prepare(client: &Client, args: &RushArgs) -> anyhow::Result<Shop> {
    let shop = expect(
        client
            .create_shop(&json!({"name": "Rush Diner", "currency": "USD", "timezone": "UTC"}))
            .await?,
        201,
        "create the shop",
    )?;
    let shop_id = shop.str("shopId").context("shopId")?.to_owned();
    let (items, topping_ids) = publish_catalog(client, &shop_id).await?;
    let hot = args.hot_item.then(|| items[6].id.clone());
    let initial_stock = track_stock(client, &shop_id, args, &items, &topping_ids, &hot).await?;
    let tables = open_tables(client, &shop_id, args.tables).await?;
    Ok(Shop {
        shop_id,
        tables,
        items,
        hot,
        initial_stock,
    })
}

/// Publishes [`ITEMS`] and [`TOPPINGS`]; returns the items and the
/// toppings' ids.
async fn publish_catalog(
    client: &Client,
    shop_id: &str,
) -> anyhow::Result<(Vec<Item>, Vec<String>)> {
    let topping_ids: Vec<String> = TOPPINGS
        .iter()
        .map(|_| Uuid::new_v4().to_string())
        .collect();
    let toppings: Vec<Value> = TOPPINGS
        .iter()
        .zip(&topping_ids)
        .map(|((name, price), id)| json!({"toppingId": id, "name": name, "price": price}))
        .collect();
    let items: Vec<Item> = ITEMS
        .iter()
        .enumerate()
        .map(|(i, _)| Item {
            id: Uuid::new_v4().to_string(),
            // Burgers and mains take toppings; the rest do not.
            topping_ids: if i < 4 {
                topping_ids.clone()
            } else {
                Vec::new()
            },
            max_toppings: if i < 4 { 2 } else { 0 },
        })
        .collect();
    let catalog_items: Vec<Value> = ITEMS
        .iter()
        .zip(&items)
        .map(|((category, name, price), item)| {
            json!({"menuItemId": item.id, "name": name, "category": category, "price": price,
                   "toppingIds": item.topping_ids, "maxToppings": item.max_toppings})
        })
        .collect();
    expect(
        client
            .put_catalog(
                shop_id,
                &json!({"toppings": toppings, "items": catalog_items}),
            )
            .await?,
        200,
        "publish the catalog",
    )?;
    Ok((items, topping_ids))
}

/// Sets the stock of the tracked items and toppings; returns it.
async fn track_stock(
    client: &Client,
    shop_id: &str,
    args: &RushArgs,
    items: &[Item],
    topping_ids: &[String],
    hot: &Option<String>,
) -> anyhow::Result<BTreeMap<String, i64>> {
    // Half the items and two toppings are counted; plenty for the rush,
    // except the hot item, which is meant to run out (staff restock it).
    let guests = (args.tables * args.guests) as i64;
    let mut initial_stock = BTreeMap::new();
    let tracked = items
        .iter()
        .step_by(2)
        .map(|item| (item.id.clone(), 1_000 * guests))
        .chain(
            topping_ids
                .iter()
                .take(2)
                .map(|id| (id.clone(), 1_000 * guests)),
        )
        .chain(hot.iter().map(|id| (id.clone(), guests)));
    for (id, stock) in tracked {
        expect(
            client
                .set_inventory(shop_id, &id, &json!({"stock": stock}))
                .await?,
            200,
            "set stock",
        )?;
        initial_stock.insert(id, stock);
    }
    Ok(initial_stock)
}

async fn open_tables(client: &Client, shop_id: &str, count: usize) -> anyhow::Result<Vec<Table>> {
    let mut tables = Vec::with_capacity(count);
    for n in 1..=count {
        let label = format!("T{n}");
        let session = expect(
            client.open_session(shop_id, &label).await?,
            201,
            "open a table",
        )?;
        tables.push(Table {
            label,
            session_id: session.str("sessionId").context("sessionId")?.to_owned(),
            pin: session.str("pin").context("pin")?.to_owned(),
        });
    }
    Ok(tables)
}

fn expect(reply: Reply, status: u16, what: &str) -> anyhow::Result<Reply> {
    if reply.status != status {
        bail!("could not {what}: {} {}", reply.status, reply.body);
    }
    Ok(reply)
}
