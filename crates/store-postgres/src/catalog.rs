//! The catalog: menu items and toppings, replaced whole by each put.

use std::collections::HashMap;

use ordergate_domain::Timestamp;
use ordergate_domain::catalog::{
    Catalog, CatalogInput, Existing, GroupShape, ItemKind, ItemOption, MenuItem, OptionGroup,
    Topping, ValidCatalog, check_edit_base,
};
use ordergate_domain::events::{EventType, MenuChanged};
use ordergate_domain::order::ItemLookup;
use ordergate_store::Change;
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgRow};
use uuid::Uuid;

use crate::codec::{json, name};
use crate::error::PgError;
use crate::tx::Tx;
use crate::{events, photos, shops};

pub(crate) async fn put(
    tx: &mut Tx,
    shop_id: Uuid,
    input: CatalogInput,
    expected_version: Option<i64>,
    now: Timestamp,
) -> Result<Catalog, PgError> {
    // Catalog writers of one shop take turns: the version checked and the
    // kinds validated against stay true until this one commits.
    let current = shops::lock_for_catalog(tx.conn(), shop_id).await?;
    check_edit_base(expected_version, current)?;
    let existing = Existing {
        kinds: known_kinds(tx.conn(), shop_id).await?,
        images: photos::ids(tx.conn(), shop_id).await?,
    };
    let valid = input.validate(&existing)?;

    // Everything not in the new catalog ends up retired.
    sqlx::query("update menu_items set retired = true where shop_id = $1")
        .bind(shop_id)
        .execute(tx.conn())
        .await?;
    sqlx::query("update toppings set retired = true where shop_id = $1")
        .bind(shop_id)
        .execute(tx.conn())
        .await?;
    sqlx::query("update item_options set retired = true where shop_id = $1")
        .bind(shop_id)
        .execute(tx.conn())
        .await?;

    upsert_toppings(tx, shop_id, &valid.toppings).await?;
    upsert_items(tx, shop_id, &valid.items).await?;
    upsert_options(tx, shop_id, &valid.items).await?;
    add_inventory_rows(tx, shop_id, &valid, now).await?;

    let version: i64 = sqlx::query_scalar(
        "update shops set catalog_version = catalog_version + 1 where shop_id = $1
         returning catalog_version",
    )
    .bind(shop_id)
    .fetch_one(tx.conn())
    .await?;
    tx.note(Change::Catalog(shop_id));
    let changed = MenuChanged {
        catalog_version: version,
    };
    events::append(tx, shop_id, EventType::MenuChanged, None, &changed, now).await?;
    Ok(Catalog {
        shop_id,
        version,
        toppings: valid.toppings,
        items: valid.items,
    })
}

/// Positions 0, 1, … in catalog order.
fn positions(n: usize) -> Vec<i64> {
    (0..n as i64).collect()
}

/// Each value as the JSON text its column keeps.
fn encoded<T: serde::Serialize>(
    values: impl Iterator<Item = T>,
) -> Result<Vec<String>, serde_json::Error> {
    values.map(|value| serde_json::to_string(&value)).collect()
}

/// Writes each topping (active again, in its position).
async fn upsert_toppings(tx: &mut Tx, shop_id: Uuid, toppings: &[Topping]) -> Result<(), PgError> {
    sqlx::query(
        "insert into toppings (shop_id, topping_id, name, price, position, retired)
         select $1, t.topping_id, t.name, t.price, t.position, false
         from unnest($2::uuid[], $3::text[], $4::bigint[], $5::bigint[])
             as t (topping_id, name, price, position)
         on conflict (shop_id, topping_id) do update set
             name = excluded.name, price = excluded.price,
             position = excluded.position, retired = false",
    )
    .bind(shop_id)
    .bind(toppings.iter().map(|t| t.topping_id).collect::<Vec<_>>())
    .bind(encoded(toppings.iter().map(|t| &t.name))?)
    .bind(toppings.iter().map(|t| t.price).collect::<Vec<_>>())
    .bind(positions(toppings.len()))
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// Writes each menu item (active again, in its position).
async fn upsert_items(tx: &mut Tx, shop_id: Uuid, items: &[MenuItem]) -> Result<(), PgError> {
    let groups = encoded(items.iter().map(|i| {
        let shapes: Vec<GroupShape> = i.option_groups.iter().map(OptionGroup::shape).collect();
        shapes
    }))?;
    sqlx::query(
        "insert into menu_items (shop_id, menu_item_id, name, description, category, price,
                                 topping_ids, max_toppings, details, option_groups, position,
                                 retired)
         select $1, m.menu_item_id, m.name, m.description, m.category, m.price,
                m.topping_ids, m.max_toppings, m.details, m.option_groups, m.position, false
         from unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::bigint[],
                     $7::text[], $8::bigint[], $9::text[], $10::text[], $11::bigint[])
             as m (menu_item_id, name, description, category, price, topping_ids,
                   max_toppings, details, option_groups, position)
         on conflict (shop_id, menu_item_id) do update set
             name = excluded.name, description = excluded.description,
             category = excluded.category, price = excluded.price,
             topping_ids = excluded.topping_ids, max_toppings = excluded.max_toppings,
             details = excluded.details, option_groups = excluded.option_groups,
             position = excluded.position, retired = false",
    )
    .bind(shop_id)
    .bind(items.iter().map(|i| i.menu_item_id).collect::<Vec<_>>())
    .bind(encoded(items.iter().map(|i| &i.name))?)
    .bind(encoded(items.iter().map(|i| &i.description))?)
    .bind(encoded(items.iter().map(|i| &i.category))?)
    .bind(items.iter().map(|i| i.price).collect::<Vec<_>>())
    .bind(encoded(items.iter().map(|i| &i.topping_ids))?)
    .bind(items.iter().map(|i| i.max_toppings).collect::<Vec<_>>())
    .bind(encoded(items.iter().map(|i| &i.details))?)
    .bind(groups)
    .bind(positions(items.len()))
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// Writes each item's options (active again, in their positions within it).
async fn upsert_options(tx: &mut Tx, shop_id: Uuid, items: &[MenuItem]) -> Result<(), PgError> {
    let options: Vec<(Uuid, i64, &ItemOption)> = items
        .iter()
        .flat_map(|item| {
            item.options()
                .enumerate()
                .map(move |(position, option)| (item.menu_item_id, position as i64, option))
        })
        .collect();
    if options.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "insert into item_options (shop_id, option_id, menu_item_id, name, price, position,
                                   retired)
         select $1, o.option_id, o.menu_item_id, o.name, o.price, o.position, false
         from unnest($2::uuid[], $3::uuid[], $4::text[], $5::bigint[], $6::bigint[])
             as o (option_id, menu_item_id, name, price, position)
         on conflict (shop_id, option_id) do update set
             menu_item_id = excluded.menu_item_id, name = excluded.name,
             price = excluded.price, position = excluded.position, retired = false",
    )
    .bind(shop_id)
    .bind(
        options
            .iter()
            .map(|(_, _, o)| o.option_id)
            .collect::<Vec<_>>(),
    )
    .bind(options.iter().map(|(item, _, _)| *item).collect::<Vec<_>>())
    .bind(encoded(options.iter().map(|(_, _, o)| &o.name))?)
    .bind(options.iter().map(|(_, _, o)| o.price).collect::<Vec<_>>())
    .bind(options.iter().map(|(_, p, _)| *p).collect::<Vec<_>>())
    .execute(tx.conn())
    .await?;
    Ok(())
}

async fn add_inventory_rows(
    tx: &mut Tx,
    shop_id: Uuid,
    valid: &ValidCatalog,
    now: Timestamp,
) -> Result<(), PgError> {
    // New ids start untracked; existing ids keep their stock. Sorted, so
    // the rows are written in one order whoever writes them.
    let mut kinds: Vec<(Uuid, ItemKind)> = valid.kinds().into_iter().collect();
    kinds.sort_unstable_by_key(|(id, _)| *id);
    sqlx::query(
        "insert into inventory (shop_id, item_id, kind, stock, version, updated_at)
         select $1, k.item_id, k.kind, null, 1, $4
         from unnest($2::uuid[], $3::text[]) as k (item_id, kind)
         on conflict (shop_id, item_id) do nothing",
    )
    .bind(shop_id)
    .bind(kinds.iter().map(|(id, _)| *id).collect::<Vec<_>>())
    .bind(
        kinds
            .iter()
            .map(|(_, kind)| kind.as_str())
            .collect::<Vec<_>>(),
    )
    .bind(now)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// The kind of every id this shop has ever used, retired ones included.
async fn known_kinds(
    conn: &mut PgConnection,
    shop_id: Uuid,
) -> Result<HashMap<Uuid, ItemKind>, PgError> {
    let kinds = sqlx::query("select item_id, kind from inventory where shop_id = $1")
        .bind(shop_id)
        .try_map(|row: PgRow| Ok((row.try_get::<Uuid, _>(0)?, name(&row, 1, ItemKind::parse)?)))
        .fetch_all(conn)
        .await?;
    Ok(kinds.into_iter().collect())
}

/// The active catalog; callers check the shop exists.
pub(crate) async fn get(conn: &mut PgConnection, shop_id: Uuid) -> Result<Catalog, PgError> {
    let version: i64 = sqlx::query_scalar("select catalog_version from shops where shop_id = $1")
        .bind(shop_id)
        .fetch_one(&mut *conn)
        .await?;
    let toppings = sqlx::query(
        "select topping_id, name, price from toppings
         where shop_id = $1 and not retired order by position",
    )
    .bind(shop_id)
    .try_map(topping_from_row)
    .fetch_all(&mut *conn)
    .await?;
    let options = active_options(&mut *conn, shop_id, None).await?;
    let items = sqlx::query(
        "select menu_item_id, name, description, category, price, topping_ids, max_toppings,
                details, option_groups
         from menu_items where shop_id = $1 and not retired order by position",
    )
    .bind(shop_id)
    .try_map(menu_item_from_row)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|(item, shapes)| item.with_groups(shapes, &options).map_err(PgError::Corrupt))
    .collect::<Result<_, _>>()?;
    Ok(Catalog {
        shop_id,
        version,
        toppings,
        items,
    })
}

/// The shop's menu items among `ids`, each with whether it is retired.
pub(crate) async fn menu_items(
    conn: &mut PgConnection,
    shop_id: Uuid,
    ids: &[Uuid],
) -> Result<HashMap<Uuid, ItemLookup>, PgError> {
    let rows = sqlx::query(
        "select menu_item_id, name, description, category, price, topping_ids, max_toppings,
                details, option_groups, retired
         from menu_items where shop_id = $1 and menu_item_id = any($2)",
    )
    .bind(shop_id)
    .bind(ids)
    .try_map(|row: PgRow| {
        let retired: bool = row.try_get(9)?;
        Ok((menu_item_from_row(row)?, retired))
    })
    .fetch_all(&mut *conn)
    .await?;
    // A retired item is not orderable, so its choices do not matter (and
    // its options may belong to other items by now).
    let offering: Vec<Uuid> = rows
        .iter()
        .filter(|((_, shapes), retired)| !retired && !shapes.is_empty())
        .map(|((item, _), _)| item.menu_item_id)
        .collect();
    let options = if offering.is_empty() {
        HashMap::new()
    } else {
        active_options(conn, shop_id, Some(&offering)).await?
    };
    rows.into_iter()
        .map(|((item, shapes), retired)| {
            let item = if retired {
                item
            } else {
                item.with_groups(shapes, &options)
                    .map_err(PgError::Corrupt)?
            };
            Ok((item.menu_item_id, ItemLookup::found(item, retired)))
        })
        .collect()
}

/// The shop's active options, or only those of the items `of`.
async fn active_options(
    conn: &mut PgConnection,
    shop_id: Uuid,
    of: Option<&[Uuid]>,
) -> Result<HashMap<Uuid, ItemOption>, PgError> {
    let options = sqlx::query(
        "select option_id, name, price from item_options
         where shop_id = $1 and not retired and ($2::uuid[] is null or menu_item_id = any($2))",
    )
    .bind(shop_id)
    .bind(of)
    .try_map(|row: PgRow| {
        Ok(ItemOption {
            option_id: row.try_get(0)?,
            name: json(&row, 1)?,
            price: row.try_get(2)?,
        })
    })
    .fetch_all(conn)
    .await?;
    Ok(options.into_iter().map(|o| (o.option_id, o)).collect())
}

/// The shop's active toppings among `ids`.
pub(crate) async fn active_toppings(
    conn: &mut PgConnection,
    shop_id: Uuid,
    ids: &[Uuid],
) -> Result<HashMap<Uuid, Topping>, PgError> {
    // Most orders name none: no round trip for them.
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let toppings = sqlx::query(
        "select topping_id, name, price from toppings
         where shop_id = $1 and topping_id = any($2) and not retired",
    )
    .bind(shop_id)
    .bind(ids)
    .try_map(topping_from_row)
    .fetch_all(conn)
    .await?;
    Ok(toppings.into_iter().map(|t| (t.topping_id, t)).collect())
}

fn topping_from_row(row: PgRow) -> sqlx::Result<Topping> {
    Ok(Topping {
        topping_id: row.try_get(0)?,
        name: json(&row, 1)?,
        price: row.try_get(2)?,
    })
}

/// A menu item from its row, and its option groups' shapes (the groups
/// themselves come with [`MenuItem::with_groups`]).
fn menu_item_from_row(row: PgRow) -> sqlx::Result<(MenuItem, Vec<GroupShape>)> {
    let item = MenuItem {
        menu_item_id: row.try_get(0)?,
        name: json(&row, 1)?,
        description: json(&row, 2)?,
        category: json(&row, 3)?,
        price: row.try_get(4)?,
        topping_ids: json(&row, 5)?,
        max_toppings: row.try_get(6)?,
        details: json(&row, 7)?,
        option_groups: vec![],
    };
    Ok((item, json(&row, 8)?))
}
