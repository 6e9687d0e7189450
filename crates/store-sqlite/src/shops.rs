use ordergate_domain::events::{EventType, MenuChanged};
use ordergate_domain::shop::{Shop, ShopPatch, ShopTimeZone};
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::Change;
use rusqlite::{Connection, OptionalExtension, Row, params};
use uuid::Uuid;

use crate::codec::{json, millis, name, time, uuid};
use crate::error::SqliteError;
use crate::events;

const COLUMNS: &str = "shop_id, name, currency, timezone, created_at, languages, \
                       kitchen_warn_minutes, kitchen_late_minutes";

fn from_row(row: &Row) -> rusqlite::Result<Shop> {
    Ok(Shop {
        shop_id: uuid(row, 0)?,
        name: row.get(1)?,
        currency: row.get(2)?,
        timezone: name(row, 3, ShopTimeZone::parse)?,
        created_at: time(row, 4)?,
        languages: json(row, 5)?,
        kitchen_warn_minutes: row.get(6)?,
        kitchen_late_minutes: row.get(7)?,
    })
}

pub(crate) fn insert(conn: &Connection, shop: &Shop) -> Result<(), SqliteError> {
    conn.execute(
        "insert into shops (shop_id, name, currency, timezone, created_at, languages,
                            kitchen_warn_minutes, kitchen_late_minutes)
         values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            shop.shop_id.to_string(),
            shop.name,
            shop.currency,
            shop.timezone.name(),
            millis(shop.created_at),
            serde_json::to_string(&shop.languages)?,
            shop.kitchen_warn_minutes,
            shop.kitchen_late_minutes
        ],
    )?;
    Ok(())
}

/// Applies a staff patch; the shop's menus are rendered anew.
pub(crate) fn update(
    conn: &Connection,
    shop_id: Uuid,
    patch: ShopPatch,
    now: Timestamp,
) -> Result<Shop, SqliteError> {
    let shop = patch.apply(require(conn, shop_id)?)?;
    let catalog_version: i64 = conn
        .prepare_cached(
            "update shops set name = ?2, languages = ?3, kitchen_warn_minutes = ?4,
                              kitchen_late_minutes = ?5
             where shop_id = ?1
             returning catalog_version",
        )?
        .query_row(
            params![
                shop_id.to_string(),
                shop.name,
                serde_json::to_string(&shop.languages)?,
                shop.kitchen_warn_minutes,
                shop.kitchen_late_minutes
            ],
            |row| row.get(0),
        )?;
    events::note(Change::Catalog(shop_id));
    let changed = MenuChanged { catalog_version };
    events::append(conn, shop_id, EventType::MenuChanged, None, &changed, now)?;
    Ok(shop)
}

pub(crate) fn list(conn: &Connection) -> Result<Vec<Shop>, SqliteError> {
    let mut stmt = conn.prepare_cached(&format!(
        "select {COLUMNS} from shops order by created_at, shop_id"
    ))?;
    let shops = stmt.query_map([], from_row)?.collect::<Result<_, _>>()?;
    Ok(shops)
}

pub(crate) fn find(conn: &Connection, shop_id: Uuid) -> Result<Option<Shop>, SqliteError> {
    let mut stmt =
        conn.prepare_cached(&format!("select {COLUMNS} from shops where shop_id = ?1"))?;
    Ok(stmt.query_row([shop_id.to_string()], from_row).optional()?)
}

pub(crate) fn require(conn: &Connection, shop_id: Uuid) -> Result<Shop, SqliteError> {
    find(conn, shop_id)?.ok_or_else(|| Rejection::NotFound("shop").into())
}
