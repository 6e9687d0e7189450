use std::collections::HashMap;

use ordergate_domain::Timestamp;
use ordergate_domain::catalog::{
    Catalog, CatalogInput, Existing, GroupShape, ItemKind, ItemOption, MenuItem, OptionGroup,
    Topping, check_edit_base,
};
use ordergate_domain::events::{EventType, MenuChanged};
use ordergate_store::Change;
use rusqlite::{Connection, OptionalExtension, Row, params};
use uuid::Uuid;

use crate::codec::{json, millis, name, uuid};
use crate::error::SqliteError;
use crate::{events, photos, shops};

pub(crate) fn put(
    conn: &Connection,
    shop_id: Uuid,
    input: CatalogInput,
    expected_version: Option<i64>,
    now: Timestamp,
) -> Result<Catalog, SqliteError> {
    shops::require(conn, shop_id)?;
    let shop = shop_id.to_string();
    check_edit_base(expected_version, version(conn, &shop)?)?;
    let existing = Existing {
        kinds: known_kinds(conn, shop_id)?,
        images: photos::ids(conn, &shop)?,
    };
    let valid = input.validate(&existing)?;

    // Everything not in the new catalog ends up retired.
    conn.execute(
        "update menu_items set retired = 1 where shop_id = ?1",
        [&shop],
    )?;
    conn.execute(
        "update toppings set retired = 1 where shop_id = ?1",
        [&shop],
    )?;
    conn.execute(
        "update item_options set retired = 1 where shop_id = ?1",
        [&shop],
    )?;
    let mut upsert_topping = conn.prepare_cached(
        "insert into toppings (shop_id, topping_id, name, price, position, retired)
         values (?1, ?2, ?3, ?4, ?5, 0)
         on conflict (shop_id, topping_id) do update set
             name = excluded.name, price = excluded.price,
             position = excluded.position, retired = 0",
    )?;
    for (position, t) in valid.toppings.iter().enumerate() {
        upsert_topping.execute(params![
            shop,
            t.topping_id.to_string(),
            serde_json::to_string(&t.name)?,
            t.price,
            position as i64
        ])?;
    }
    upsert_items(conn, &shop, &valid.items)?;
    // New ids start untracked; existing ids keep their stock.
    let mut add_inventory = conn.prepare_cached(
        "insert into inventory (shop_id, item_id, kind, stock, version, updated_at)
         values (?1, ?2, ?3, null, 1, ?4)
         on conflict (shop_id, item_id) do nothing",
    )?;
    for (id, kind) in valid.kinds() {
        add_inventory.execute(params![shop, id.to_string(), kind.as_str(), millis(now)])?;
    }
    let version: i64 = conn.query_row(
        "update shops set catalog_version = catalog_version + 1 where shop_id = ?1
         returning catalog_version",
        [&shop],
        |row| row.get(0),
    )?;
    events::note(Change::Catalog(shop_id));
    let changed = MenuChanged {
        catalog_version: version,
    };
    events::append(conn, shop_id, EventType::MenuChanged, None, &changed, now)?;
    Ok(Catalog {
        shop_id,
        version,
        toppings: valid.toppings,
        items: valid.items,
    })
}

/// Writes each menu item and its options (active again, in their positions).
fn upsert_items(conn: &Connection, shop: &str, items: &[MenuItem]) -> Result<(), SqliteError> {
    let mut upsert_item = conn.prepare_cached(
        "insert into menu_items (shop_id, menu_item_id, name, description, category, price,
                                 topping_ids, max_toppings, details, option_groups, position,
                                 retired)
         values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 0)
         on conflict (shop_id, menu_item_id) do update set
             name = excluded.name, description = excluded.description,
             category = excluded.category, price = excluded.price,
             topping_ids = excluded.topping_ids, max_toppings = excluded.max_toppings,
             details = excluded.details, option_groups = excluded.option_groups,
             position = excluded.position, retired = 0",
    )?;
    let mut upsert_option = conn.prepare_cached(
        "insert into item_options (shop_id, option_id, menu_item_id, name, price, position,
                                   retired)
         values (?1, ?2, ?3, ?4, ?5, ?6, 0)
         on conflict (shop_id, option_id) do update set
             menu_item_id = excluded.menu_item_id, name = excluded.name,
             price = excluded.price, position = excluded.position, retired = 0",
    )?;
    for (position, item) in items.iter().enumerate() {
        let shapes: Vec<GroupShape> = item.option_groups.iter().map(OptionGroup::shape).collect();
        upsert_item.execute(params![
            shop,
            item.menu_item_id.to_string(),
            serde_json::to_string(&item.name)?,
            serde_json::to_string(&item.description)?,
            serde_json::to_string(&item.category)?,
            item.price,
            serde_json::to_string(&item.topping_ids)?,
            item.max_toppings,
            serde_json::to_string(&item.details)?,
            serde_json::to_string(&shapes)?,
            position as i64
        ])?;
        for (position, option) in item.options().enumerate() {
            upsert_option.execute(params![
                shop,
                option.option_id.to_string(),
                item.menu_item_id.to_string(),
                serde_json::to_string(&option.name)?,
                option.price,
                position as i64
            ])?;
        }
    }
    Ok(())
}

/// The kind of every id this shop has ever used, retired ones included.
fn known_kinds(conn: &Connection, shop_id: Uuid) -> Result<HashMap<Uuid, ItemKind>, SqliteError> {
    let mut stmt = conn.prepare_cached("select item_id, kind from inventory where shop_id = ?1")?;
    let kinds = stmt
        .query_map([shop_id.to_string()], |row| {
            Ok((uuid(row, 0)?, name(row, 1, ItemKind::parse)?))
        })?
        .collect::<Result<_, _>>()?;
    Ok(kinds)
}

/// The shop's catalog version; callers check the shop exists.
fn version(conn: &Connection, shop: &str) -> Result<i64, SqliteError> {
    Ok(conn
        .prepare_cached("select catalog_version from shops where shop_id = ?1")?
        .query_row([shop], |row| row.get(0))?)
}

/// The active catalog; callers check the shop exists.
pub(crate) fn get(conn: &Connection, shop_id: Uuid) -> Result<Catalog, SqliteError> {
    let shop = shop_id.to_string();
    let version = version(conn, &shop)?;
    let mut stmt = conn.prepare_cached(
        "select topping_id, name, price from toppings
         where shop_id = ?1 and retired = 0 order by position",
    )?;
    let toppings = stmt
        .query_map([&shop], topping_from_row)?
        .collect::<Result<_, _>>()?;
    let mut stmt = conn.prepare_cached(
        "select option_id, name, price from item_options where shop_id = ?1 and retired = 0",
    )?;
    let options: HashMap<Uuid, ItemOption> = stmt
        .query_map([&shop], option_from_row)?
        .map(|option| option.map(|o| (o.option_id, o)))
        .collect::<Result<_, _>>()?;
    let mut stmt = conn.prepare_cached(
        "select menu_item_id, name, description, category, price, topping_ids, max_toppings,
                details, option_groups
         from menu_items where shop_id = ?1 and retired = 0 order by position",
    )?;
    let items = stmt
        .query_map([&shop], menu_item_from_row)?
        .map(|row| {
            let (item, shapes) = row?;
            item.with_groups(shapes, &options)
                .map_err(SqliteError::Corrupt)
        })
        .collect::<Result<_, _>>()?;
    Ok(Catalog {
        shop_id,
        version,
        toppings,
        items,
    })
}

/// A menu item of the shop, with whether it is retired.
pub(crate) fn menu_item(
    conn: &Connection,
    shop: &str,
    menu_item_id: Uuid,
) -> Result<Option<(MenuItem, bool)>, SqliteError> {
    let mut stmt = conn.prepare_cached(
        "select menu_item_id, name, description, category, price, topping_ids, max_toppings,
                details, option_groups, retired
         from menu_items where shop_id = ?1 and menu_item_id = ?2",
    )?;
    let found = stmt
        .query_row(params![shop, menu_item_id.to_string()], |row| {
            Ok((menu_item_from_row(row)?, row.get::<_, bool>(9)?))
        })
        .optional()?;
    let Some(((item, shapes), retired)) = found else {
        return Ok(None);
    };
    if retired {
        // Not orderable, so its choices do not matter (and its options
        // may belong to other items by now).
        return Ok(Some((item, true)));
    }
    let mut stmt = conn.prepare_cached(
        "select option_id, name, price from item_options
         where shop_id = ?1 and menu_item_id = ?2 and retired = 0",
    )?;
    let options: HashMap<Uuid, ItemOption> = stmt
        .query_map(params![shop, menu_item_id.to_string()], option_from_row)?
        .map(|option| option.map(|o| (o.option_id, o)))
        .collect::<Result<_, _>>()?;
    Ok(Some((
        item.with_groups(shapes, &options)
            .map_err(SqliteError::Corrupt)?,
        false,
    )))
}

pub(crate) fn active_topping(
    conn: &Connection,
    shop: &str,
    topping_id: Uuid,
) -> Result<Option<Topping>, SqliteError> {
    let mut stmt = conn.prepare_cached(
        "select topping_id, name, price from toppings
         where shop_id = ?1 and topping_id = ?2 and retired = 0",
    )?;
    Ok(stmt
        .query_row(params![shop, topping_id.to_string()], topping_from_row)
        .optional()?)
}

fn topping_from_row(row: &Row) -> rusqlite::Result<Topping> {
    Ok(Topping {
        topping_id: uuid(row, 0)?,
        name: json(row, 1)?,
        price: row.get(2)?,
    })
}

fn option_from_row(row: &Row) -> rusqlite::Result<ItemOption> {
    Ok(ItemOption {
        option_id: uuid(row, 0)?,
        name: json(row, 1)?,
        price: row.get(2)?,
    })
}

/// A menu item from its row, and its option groups' shapes (the groups
/// themselves come with [`MenuItem::with_groups`]).
fn menu_item_from_row(row: &Row) -> rusqlite::Result<(MenuItem, Vec<GroupShape>)> {
    let item = MenuItem {
        menu_item_id: uuid(row, 0)?,
        name: json(row, 1)?,
        description: json(row, 2)?,
        category: json(row, 3)?,
        price: row.get(4)?,
        topping_ids: json(row, 5)?,
        max_toppings: row.get(6)?,
        details: json(row, 7)?,
        option_groups: vec![],
    };
    Ok((item, json(row, 8)?))
}
