//! The guest menu, served from memory.
//!
//! Each shop's menu source (catalog and stock) is cached with the rendered
//! body and its ETag. Every committed stock or catalog change bumps the
//! shop's generation before its writer answers anyone, so the first menu
//! read after a change (from anyone, on this node) reloads; every other read
//! is served without touching the database. A manual 86 lapsing is not a
//! write: an entry is re-rendered from memory once its earliest lapse passes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::HeaderValue;
use ordergate_domain::Timestamp;
use ordergate_domain::menu::{Menu, next_lapse};
use ordergate_store::{MenuSource, Store};
use uuid::Uuid;

use crate::error::ApiError;
use crate::etag::entity_tag;
use crate::metrics::Metrics;

/// Shops whose menus stay in memory at once.
const CAPACITY: u64 = 10_000;

/// A menu as sent: body, entity tag, and until when it stays true.
#[derive(Clone)]
pub struct RenderedMenu {
    pub body: Bytes,
    pub etag: HeaderValue,
    valid_until: Option<Timestamp>,
}

struct Cached {
    generation: u64,
    source: MenuSource,
    rendered: RenderedMenu,
}

pub struct MenuCache {
    menus: moka::sync::Cache<Uuid, Arc<Cached>>,
    generations: Mutex<HashMap<Uuid, u64>>,
    /// Bumped when every shop's menu may be stale.
    epoch: AtomicU64,
    /// One load at a time per shop: the reads that find a stale menu
    /// together (a rush of phones right after a change) wait for one load
    /// instead of each reading the database.
    loading: Mutex<HashMap<Uuid, Arc<tokio::sync::Mutex<()>>>>,
}

impl Default for MenuCache {
    fn default() -> Self {
        MenuCache {
            menus: moka::sync::Cache::new(CAPACITY),
            generations: Mutex::default(),
            epoch: AtomicU64::new(0),
            loading: Mutex::default(),
        }
    }
}

impl MenuCache {
    /// Marks the shop's menu stale; called on the committing thread.
    pub fn changed(&self, shop_id: Uuid) {
        let mut generations = self.generations.lock().unwrap_or_else(|e| e.into_inner());
        *generations.entry(shop_id).or_default() += 1;
    }

    /// Marks every shop's menu stale (the store may have missed changes),
    /// loads under way included.
    pub fn changed_all(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// The shop's changes plus every shop's, so either makes a cached menu stale.
    fn generation(&self, shop_id: Uuid) -> u64 {
        let generations = self.generations.lock().unwrap_or_else(|e| e.into_inner());
        let own = generations.get(&shop_id).copied().unwrap_or_default();
        own.wrapping_add(self.epoch.load(Ordering::SeqCst))
    }

    pub async fn get(
        &self,
        store: &dyn Store,
        metrics: &Metrics,
        shop_id: Uuid,
        now: Timestamp,
    ) -> Result<RenderedMenu, ApiError> {
        // Read before loading: a change landing during the load leaves the
        // entry behind this generation, and the next read reloads.
        let generation = self.generation(shop_id);
        if let Some(rendered) = self.cached(shop_id, generation, now) {
            return rendered;
        }
        let gate = Arc::clone(
            self.loading
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(shop_id)
                .or_default(),
        );
        let _loading = gate.lock().await;
        // Whoever held the gate may have loaded this very generation.
        let generation = self.generation(shop_id);
        if let Some(rendered) = self.cached(shop_id, generation, now) {
            return rendered;
        }
        metrics.menu_cache_miss(shop_id);
        let source = store.menu_source(shop_id).await?;
        let rendered = render(&source, now)?;
        self.menus.insert(
            shop_id,
            Arc::new(Cached {
                generation,
                source,
                rendered: rendered.clone(),
            }),
        );
        Ok(rendered)
    }

    /// The cached menu when it is of `generation`, re-rendered from memory
    /// if an 86 in it lapsed.
    fn cached(
        &self,
        shop_id: Uuid,
        generation: u64,
        now: Timestamp,
    ) -> Option<Result<RenderedMenu, ApiError>> {
        let cached = self
            .menus
            .get(&shop_id)
            .filter(|cached| cached.generation == generation)?;
        if cached.rendered.valid_until.is_none_or(|until| now < until) {
            return Some(Ok(cached.rendered.clone()));
        }
        let rendered = match render(&cached.source, now) {
            Ok(rendered) => rendered,
            Err(e) => return Some(Err(e)),
        };
        self.menus.insert(
            shop_id,
            Arc::new(Cached {
                generation,
                source: cached.source.clone(),
                rendered: rendered.clone(),
            }),
        );
        Some(Ok(rendered))
    }
}

fn render(source: &MenuSource, now: Timestamp) -> Result<RenderedMenu, ApiError> {
    let levels = source
        .inventory
        .iter()
        .map(|item| (item.item_id, item.level.clone()))
        .collect();
    let menu = Menu::build(&source.shop, &source.catalog, &levels, now);
    let body = serde_json::to_vec(&menu).map_err(|e| {
        tracing::error!(error = %e, "menu serialisation failed");
        ApiError::new(
            crate::error::ErrorCode::Internal,
            "an internal error occurred",
        )
    })?;
    Ok(RenderedMenu {
        etag: entity_tag(&body),
        valid_until: next_lapse(source.inventory.iter().map(|item| &item.level), now),
        body: Bytes::from(body),
    })
}
