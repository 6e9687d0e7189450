//! Menu photos: each item shows a photo its own shop has, and each photo
//! is what it says it is.

use anyhow::Result;

use super::Check;
use crate::db::{Db, Val};
use crate::report::counted;

/// Every active item's `imageId` names a photo of its shop; every photo's
/// upload is of its content type and its rendition is a whole JPEG.
pub(crate) async fn photos_are_whole_and_their_own_shops(db: &mut Db<'_>) -> Result<Check> {
    let image_id = db.json_text("m.details", "imageId");
    let cast = if db.is_postgres() { "::uuid" } else { "" };
    let missing = db
        .rows(&format!(
            "select m.shop_id, m.menu_item_id, {image_id} from menu_items m
             where {image_id} is not null and not m.retired
               and not exists (select 1 from images i
                               where i.shop_id = m.shop_id and i.image_id = ({image_id}){cast})
             order by m.shop_id, m.menu_item_id"
        ))
        .await?;
    let mut problems: Vec<String> = missing
        .iter()
        .map(|row| {
            format!(
                "shop {}: menu item {} shows photo {}, which the shop does not have",
                row[0], row[1], row[2]
            )
        })
        .collect();
    let mut photos = 0;
    db.each(
        "select shop_id, image_id, content_type, original, rendition from images
         order by shop_id, image_id",
        |row| {
            photos += 1;
            let [shop, image, content_type, original, rendition] = &row[..] else {
                unreachable!("five columns")
            };
            if !is_of_type(original, content_type.text()) {
                problems.push(format!(
                    "shop {shop}: photo {image}: its upload is not the {content_type} it is \
                     stored as"
                ));
            }
            if !is_of_type(rendition, "image/jpeg") || !ends_a_jpeg(rendition) {
                problems.push(format!(
                    "shop {shop}: photo {image}: its rendition is not a whole JPEG"
                ));
            }
            Ok(())
        },
    )
    .await?;
    Ok(Check {
        name: "photos",
        checked: counted(photos, "photo"),
        problems,
    })
}

/// Whether `bytes` open as a file of `content_type` does.
fn is_of_type(bytes: &Val, content_type: &str) -> bool {
    let Val::Bytes(bytes) = bytes else {
        return false;
    };
    match content_type {
        "image/jpeg" => bytes.starts_with(&[0xFF, 0xD8, 0xFF]),
        "image/png" => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/webp" => bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP",
        _ => false,
    }
}

fn ends_a_jpeg(bytes: &Val) -> bool {
    matches!(bytes, Val::Bytes(bytes) if bytes.ends_with(&[0xFF, 0xD9]))
}
