//! Menu photos: written once, read by id.

use std::collections::HashSet;

use ordergate_store::{Photo, Rendition};
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgRow};
use uuid::Uuid;

use crate::error::PgError;
use crate::shops;

pub(crate) async fn insert(conn: &mut PgConnection, photo: &Photo) -> Result<(), PgError> {
    shops::require(&mut *conn, photo.shop_id).await?;
    sqlx::query(
        "insert into images (shop_id, image_id, content_type, width, height, original,
                             rendition, rendition_width, rendition_height, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(photo.shop_id)
    .bind(photo.image_id)
    .bind(&photo.content_type)
    .bind(photo.width)
    .bind(photo.height)
    .bind(&photo.original)
    .bind(&photo.rendition.bytes)
    .bind(photo.rendition.width)
    .bind(photo.rendition.height)
    .bind(photo.created_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub(crate) async fn rendition(
    conn: &mut PgConnection,
    image_id: Uuid,
) -> Result<Option<Rendition>, PgError> {
    Ok(sqlx::query(
        "select rendition, rendition_width, rendition_height from images where image_id = $1",
    )
    .bind(image_id)
    .try_map(|row: PgRow| {
        Ok(Rendition {
            bytes: row.try_get(0)?,
            width: row.try_get(1)?,
            height: row.try_get(2)?,
        })
    })
    .fetch_optional(conn)
    .await?)
}

/// The ids of the shop's photos: what its catalog may name.
pub(crate) async fn ids(conn: &mut PgConnection, shop_id: Uuid) -> Result<HashSet<Uuid>, PgError> {
    let ids: Vec<Uuid> = sqlx::query_scalar("select image_id from images where shop_id = $1")
        .bind(shop_id)
        .fetch_all(conn)
        .await?;
    Ok(ids.into_iter().collect())
}
