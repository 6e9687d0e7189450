//! The guest menu, served from memory.
//!
//! Each shop's menu source (catalog and stock) is cached with the body and
//! ETag rendered in each of its languages once asked for. Every committed stock or catalog change bumps the
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
use ordergate_domain::language::Language;
use ordergate_domain::menu::{Menu, next_lapse};
use ordergate_store::{MenuSource, Store};
use uuid::Uuid;

use crate::error::ApiError;
use crate::etag::entity_tag;
use crate::metrics::Metrics;

/// Shops whose menus stay in memory at once.
const CAPACITY: u64 = 10_000;

/// A menu as sent: body, language, entity tag, and until when it stays true.
#[derive(Clone)]
pub struct RenderedMenu {
    pub body: Bytes,
    /// Its `Content-Language`.
    pub language: HeaderValue,
    pub etag: HeaderValue,
    valid_until: Option<Timestamp>,
}

struct Cached {
    generation: u64,
    source: MenuSource,
    /// The menu in each language asked for, rendered on first asking (and
    /// again once an 86 in it lapsed).
    rendered: Mutex<HashMap<Language, RenderedMenu>>,
}

impl Cached {
    fn new(generation: u64, source: MenuSource) -> Cached {
        Cached {
            generation,
            source,
            rendered: Mutex::default(),
        }
    }

    /// The menu in the language of the shop's that `wanted` (most wanted
    /// first) is served best by, rendered anew if an 86 in it lapsed.
    fn in_language(&self, wanted: &[String], now: Timestamp) -> Result<RenderedMenu, ApiError> {
        let languages = &self.source.shop.languages;
        let language = languages.negotiate(wanted.iter().map(String::as_str));
        let mut rendered = self.rendered.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(menu) = rendered.get(language)
            && menu.valid_until.is_none_or(|until| now < until)
        {
            return Ok(menu.clone());
        }
        let menu = render(&self.source, language, now)?;
        rendered.insert(language.clone(), menu.clone());
        Ok(menu)
    }
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

    /// The shop's menu in the language of its that `wanted` (the tags a
    /// guest asked for, most wanted first; none: the shop's default) is
    /// served best by.
    pub async fn get(
        &self,
        store: &dyn Store,
        metrics: &Metrics,
        shop_id: Uuid,
        wanted: &[String],
        now: Timestamp,
    ) -> Result<RenderedMenu, ApiError> {
        // Read before loading: a change landing during the load leaves the
        // entry behind this generation, and the next read reloads.
        let generation = self.generation(shop_id);
        if let Some(cached) = self.cached(shop_id, generation) {
            return cached.in_language(wanted, now);
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
        if let Some(cached) = self.cached(shop_id, generation) {
            return cached.in_language(wanted, now);
        }
        metrics.menu_cache_miss(shop_id);
        let source = store.menu_source(shop_id).await?;
        let cached = Arc::new(Cached::new(generation, source));
        self.menus.insert(shop_id, Arc::clone(&cached));
        cached.in_language(wanted, now)
    }

    /// The cached menu source when it is of `generation`.
    fn cached(&self, shop_id: Uuid, generation: u64) -> Option<Arc<Cached>> {
        self.menus
            .get(&shop_id)
            .filter(|cached| cached.generation == generation)
    }
}

fn render(
    source: &MenuSource,
    language: &Language,
    now: Timestamp,
) -> Result<RenderedMenu, ApiError> {
    let levels = source
        .inventory
        .iter()
        .map(|item| (item.item_id, item.level.clone()))
        .collect();
    let menu = Menu::build(&source.shop, &source.catalog, &levels, now, language);
    let body = serde_json::to_vec(&menu).map_err(|e| {
        tracing::error!(error = %e, "menu serialisation failed");
        ApiError::new(
            crate::error::ErrorCode::Internal,
            "an internal error occurred",
        )
    })?;
    Ok(RenderedMenu {
        language: HeaderValue::from_str(language.as_str()).map_err(|e| {
            tracing::error!(error = %e, "a language tag that is no header value");
            ApiError::new(
                crate::error::ErrorCode::Internal,
                "an internal error occurred",
            )
        })?,
        etag: entity_tag(&body),
        valid_until: next_lapse(source.inventory.iter().map(|item| &item.level), now),
        body: Bytes::from(body),
    })
}
