//! Menu photos: kept with every byte, found by id, and nameable only by
//! their own shop's catalog.

use ordergate_domain::Rejection;
use ordergate_domain::catalog::{CatalogInput, MenuItemInput};
use uuid::Uuid;

use super::helpers::*;
use crate::{Photo, Rendition, Store};

fn photo(shop_id: Uuid, seed: u8) -> Photo {
    Photo {
        image_id: Uuid::new_v4(),
        shop_id,
        content_type: "image/png".into(),
        width: 1600,
        height: 1200,
        // Every byte value, so a store that mangles binary data is caught.
        original: (0..=255u8).cycle().skip(seed.into()).take(4096).collect(),
        rendition: Rendition {
            bytes: vec![0xFF, 0xD8, seed, 0x00, 0xFF, 0xD9],
            width: 800,
            height: 600,
        },
        created_at: instant(),
    }
}

/// A photo's rendition comes back byte for byte by its id; an unknown id
/// is none, and a photo of an unknown shop is refused.
pub async fn photos_are_kept_byte_for_byte_and_found_by_id(store: &dyn Store) {
    let shop = new_shop(store).await;
    let first = photo(shop.shop_id, 1);
    let second = photo(shop.shop_id, 2);
    ok(store.add_photo(first.clone()).await);
    ok(store.add_photo(second.clone()).await);
    assert_eq!(
        ok(store.photo_rendition(first.image_id).await),
        Some(first.rendition)
    );
    assert_eq!(
        ok(store.photo_rendition(second.image_id).await),
        Some(second.rendition)
    );
    assert_eq!(ok(store.photo_rendition(Uuid::new_v4()).await), None);
    assert_eq!(
        rejected(store.add_photo(photo(Uuid::new_v4(), 3)).await),
        Rejection::NotFound("shop")
    );
}

/// An item may show a photo of its own shop; another shop's, or one that
/// does not exist, is a field error and changes nothing.
pub async fn catalog_items_name_only_photos_of_their_shop(store: &dyn Store) {
    let p = published(store).await;
    let other = new_shop(store).await;
    let ours = photo(p.shop_id, 1);
    let theirs = photo(other.shop_id, 2);
    ok(store.add_photo(ours.clone()).await);
    ok(store.add_photo(theirs.clone()).await);
    let showing = |image_id| CatalogInput {
        items: vec![
            MenuItemInput {
                image_id: Some(image_id),
                ..item(Some(p.curry), "Curry", 900, vec![p.cheese])
            },
            item(Some(p.ramen), "Ramen", 850, vec![]),
        ],
        ..p.input()
    };
    let before = ok(store.get_catalog(p.shop_id).await);
    for stranger in [theirs.image_id, Uuid::new_v4()] {
        let refused = store
            .put_catalog(p.shop_id, showing(stranger), None, instant())
            .await;
        assert_eq!(validation_fields(refused), ["items[0].imageId"]);
    }
    assert_eq!(ok(store.get_catalog(p.shop_id).await), before);
    let catalog = ok(store
        .put_catalog(p.shop_id, showing(ours.image_id), None, instant())
        .await);
    assert_eq!(catalog.items[0].details.image_id, Some(ours.image_id));
    let source = ok(store.menu_source(p.shop_id).await);
    assert_eq!(
        source.catalog.items[0].details.image_id,
        Some(ours.image_id)
    );
}
