//! Photo renditions kept in memory. A photo never changes once stored, so
//! an entry is never stale: a guest's phone scrolling a menu asks the
//! database for each photo once per node, not once per guest.

use axum::body::Bytes;
use ordergate_store::Store;
use uuid::Uuid;

use crate::error::ApiError;

/// Rendition bytes kept at most: a few hundred photos of ~100 KiB.
const CAPACITY_BYTES: u64 = 64 * 1024 * 1024;

pub struct PhotoCache {
    renditions: moka::sync::Cache<Uuid, Bytes>,
}

impl Default for PhotoCache {
    fn default() -> Self {
        PhotoCache {
            renditions: moka::sync::Cache::builder()
                .max_capacity(CAPACITY_BYTES)
                .weigher(|_, bytes: &Bytes| u32::try_from(bytes.len()).unwrap_or(u32::MAX))
                .build(),
        }
    }
}

impl PhotoCache {
    /// The photo's rendition; `None` when there is no such photo.
    pub async fn get(&self, store: &dyn Store, image_id: Uuid) -> Result<Option<Bytes>, ApiError> {
        if let Some(bytes) = self.renditions.get(&image_id) {
            return Ok(Some(bytes));
        }
        let Some(rendition) = store.photo_rendition(image_id).await? else {
            return Ok(None);
        };
        let bytes = Bytes::from(rendition.bytes);
        self.renditions.insert(image_id, bytes.clone());
        Ok(Some(bytes))
    }
}
