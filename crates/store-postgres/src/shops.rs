use ordergate_domain::events::{EventType, MenuChanged};
use ordergate_domain::shop::{Shop, ShopPatch, ShopTimeZone};
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::Change;
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgRow};
use uuid::Uuid;

use crate::codec::{json, name};
use crate::error::PgError;
use crate::events;
use crate::tx::Tx;

fn from_row(row: PgRow) -> sqlx::Result<Shop> {
    Ok(Shop {
        shop_id: row.try_get(0)?,
        name: row.try_get(1)?,
        currency: row.try_get(2)?,
        timezone: name(&row, 3, ShopTimeZone::parse)?,
        created_at: row.try_get(4)?,
        languages: json(&row, 5)?,
        kitchen_warn_minutes: row.try_get(6)?,
        kitchen_late_minutes: row.try_get(7)?,
    })
}

pub(crate) async fn insert(conn: &mut PgConnection, shop: &Shop) -> Result<(), PgError> {
    sqlx::query(
        "insert into shops (shop_id, name, currency, timezone, created_at, languages,
                            kitchen_warn_minutes, kitchen_late_minutes)
         values ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(shop.shop_id)
    .bind(&shop.name)
    .bind(&shop.currency)
    .bind(shop.timezone.name())
    .bind(shop.created_at)
    .bind(serde_json::to_string(&shop.languages)?)
    .bind(shop.kitchen_warn_minutes)
    .bind(shop.kitchen_late_minutes)
    .execute(conn)
    .await?;
    Ok(())
}

/// Applies a staff patch to the shop, its row locked as catalog writers
/// lock it (menus are built from both); its menus are rendered anew.
pub(crate) async fn update(
    tx: &mut Tx,
    shop_id: Uuid,
    patch: ShopPatch,
    now: Timestamp,
) -> Result<Shop, PgError> {
    let catalog_version = lock_for_catalog(tx.conn(), shop_id).await?;
    let shop = patch.apply(require(tx.conn(), shop_id).await?)?;
    sqlx::query(
        "update shops set name = $2, languages = $3, kitchen_warn_minutes = $4,
                          kitchen_late_minutes = $5
         where shop_id = $1",
    )
    .bind(shop_id)
    .bind(&shop.name)
    .bind(serde_json::to_string(&shop.languages)?)
    .bind(shop.kitchen_warn_minutes)
    .bind(shop.kitchen_late_minutes)
    .execute(tx.conn())
    .await?;
    tx.note(Change::Catalog(shop_id));
    let changed = MenuChanged { catalog_version };
    events::append(tx, shop_id, EventType::MenuChanged, None, &changed, now).await?;
    Ok(shop)
}

pub(crate) async fn list(conn: &mut PgConnection) -> Result<Vec<Shop>, PgError> {
    Ok(sqlx::query(
        "select shop_id, name, currency, timezone, created_at, languages,
                kitchen_warn_minutes, kitchen_late_minutes
         from shops order by created_at, shop_id",
    )
    .try_map(from_row)
    .fetch_all(conn)
    .await?)
}

pub(crate) async fn find(conn: &mut PgConnection, shop_id: Uuid) -> Result<Option<Shop>, PgError> {
    Ok(sqlx::query(
        "select shop_id, name, currency, timezone, created_at, languages,
                kitchen_warn_minutes, kitchen_late_minutes
         from shops where shop_id = $1",
    )
    .bind(shop_id)
    .try_map(from_row)
    .fetch_optional(conn)
    .await?)
}

pub(crate) async fn require(conn: &mut PgConnection, shop_id: Uuid) -> Result<Shop, PgError> {
    find(conn, shop_id)
        .await?
        .ok_or_else(|| Rejection::NotFound("shop").into())
}

/// Locks the shop row against other catalog writers (`for no key update`:
/// rows that merely reference the shop are still inserted meanwhile).
pub(crate) async fn lock_for_catalog(
    conn: &mut PgConnection,
    shop_id: Uuid,
) -> Result<i64, PgError> {
    let version = sqlx::query_scalar(
        "select catalog_version from shops where shop_id = $1 for no key update",
    )
    .bind(shop_id)
    .fetch_optional(conn)
    .await?
    .ok_or(Rejection::NotFound("shop"))?;
    Ok(version)
}
