//! Menu photos: written once, read by id.

use std::collections::HashSet;

use ordergate_store::{Photo, Rendition};
use rusqlite::{Connection, OptionalExtension, params};
use uuid::Uuid;

use crate::codec::{millis, uuid};
use crate::error::SqliteError;
use crate::shops;

pub(crate) fn insert(conn: &Connection, photo: &Photo) -> Result<(), SqliteError> {
    shops::require(conn, photo.shop_id)?;
    conn.prepare_cached(
        "insert into images (shop_id, image_id, content_type, width, height, original,
                             rendition, rendition_width, rendition_height, created_at)
         values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        photo.shop_id.to_string(),
        photo.image_id.to_string(),
        photo.content_type,
        photo.width,
        photo.height,
        photo.original,
        photo.rendition.bytes,
        photo.rendition.width,
        photo.rendition.height,
        millis(photo.created_at)
    ])?;
    Ok(())
}

pub(crate) fn rendition(
    conn: &Connection,
    image_id: Uuid,
) -> Result<Option<Rendition>, SqliteError> {
    Ok(conn
        .prepare_cached(
            "select rendition, rendition_width, rendition_height from images where image_id = ?1",
        )?
        .query_row([image_id.to_string()], |row| {
            Ok(Rendition {
                bytes: row.get(0)?,
                width: row.get(1)?,
                height: row.get(2)?,
            })
        })
        .optional()?)
}

/// The ids of the shop's photos: what its catalog may name.
pub(crate) fn ids(conn: &Connection, shop: &str) -> Result<HashSet<Uuid>, SqliteError> {
    let mut stmt = conn.prepare_cached("select image_id from images where shop_id = ?1")?;
    let ids = stmt
        .query_map([shop], |row| uuid(row, 0))?
        .collect::<Result<_, _>>()?;
    Ok(ids)
}
