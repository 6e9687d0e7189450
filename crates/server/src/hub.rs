//! Live event fan-out for SSE streams.
//!
//! The event log in the database is the truth; this hub only carries it to
//! subscribers. Per shop, one fetcher reads new events once per change
//! announcement and keeps the most recent ones in memory, pre-encoded as SSE
//! frames; every subscriber copies from there. A subscriber tracks its own
//! position (the last id it sent) and reads from the log itself when it is
//! further behind than memory reaches, so a resume from any id sends every
//! later event, in order, with no gap and no duplicate at the seam.
//!
//! Subscribers hold a bounded queue each. One that leaves a frame unread for
//! [`STALL`] with its queue full is cut off (its stream ends): it cannot slow
//! anyone else or grow memory, and its client reconnects with
//! `Last-Event-ID` and resumes from the log. A reader that is merely catching
//! up keeps draining its queue and is never cut.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use axum::body::Bytes;
use ordergate_domain::events::{Event, EventType};
use ordergate_domain::paging::Limit;
use ordergate_store::{Store, StoreResult};
use tokio::sync::{Notify, mpsc, watch};
use utoipa::ToSchema;
use uuid::Uuid;

/// Frames kept in memory per shop.
const RECENT: usize = 1024;
/// Frames queued per subscriber.
pub const QUEUE: usize = 256;
/// How long a subscriber with a full queue may take to accept one more frame.
pub const STALL: Duration = Duration::from_secs(2);
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);
const PAGE: Limit = Limit::MAX_PAGE;

/// An event ready to send.
#[derive(Debug)]
pub struct Frame {
    pub event_id: i64,
    pub session_id: Option<Uuid>,
    /// Heard by every table (the menu changed).
    shop_wide: bool,
    closes_session: bool,
    pub bytes: Bytes,
}

impl Frame {
    fn new(event: &Event) -> Frame {
        let wire = SseEvent {
            id: event.event_id,
            event: event.event_type.as_str(),
            data: &event.data,
        };
        Frame {
            event_id: event.event_id,
            session_id: event.session_id,
            shop_wide: event.event_type.is_shop_wide(),
            closes_session: event.event_type == EventType::SessionClosed,
            bytes: wire.encode(),
        }
    }
}

/// One event as it goes on the wire: its `id:`, `event:` and `data:` lines
/// (the data is one line of JSON).
#[derive(Debug, ToSchema)]
pub struct SseEvent<'a> {
    /// The event's id in the shop's log, strictly increasing.
    #[schema(value_type = String, example = "1842")]
    id: i64,
    /// `order.placed`, `order.updated`, `stock.changed`, `session.opened`,
    /// `session.closed` or `menu.changed`.
    #[schema(example = "order.placed")]
    event: &'a str,
    /// The full order for order events, `{itemId, stock, soldOut,
    /// soldOutUntil}` for stock, the session (never its PIN) for sessions,
    /// `{catalogVersion}` for the menu.
    data: &'a str,
}

impl SseEvent<'_> {
    fn encode(&self) -> Bytes {
        Bytes::from(format!(
            "id: {}\nevent: {}\ndata: {}\n\n",
            self.id, self.event, self.data
        ))
    }
}

/// Who a stream is for.
#[derive(Debug, Clone, Copy)]
pub enum Audience {
    Staff,
    /// The guests of one session: their own order and session events, and
    /// every change of the menu (stock included).
    Guests(Uuid),
}

impl Audience {
    fn sees(self, frame: &Frame) -> bool {
        match self {
            Audience::Staff => true,
            Audience::Guests(session_id) => frame.shop_wide || frame.session_id == Some(session_id),
        }
    }

    /// A table's stream ends with its checkout: nothing more can come.
    fn ends_with(self, frame: &Frame) -> bool {
        match self {
            Audience::Staff => false,
            Audience::Guests(session_id) => {
                frame.closes_session && frame.session_id == Some(session_id)
            }
        }
    }
}

struct Recent {
    /// Id of the last event read before the oldest one kept.
    before: i64,
    frames: VecDeque<Arc<Frame>>,
}

impl Recent {
    fn last_id(&self) -> i64 {
        self.frames.back().map_or(self.before, |f| f.event_id)
    }
}

/// One shop's live feed.
pub struct Feed {
    shop_id: Uuid,
    recent: RwLock<Recent>,
    /// The newest event id in memory; subscribers wait on its changes.
    latest: watch::Sender<i64>,
    /// Wakes the fetcher; a wake-up while it is busy is not lost.
    wake: Notify,
}

impl Feed {
    /// Frames after `cursor`, if memory still reaches back that far.
    fn after(&self, cursor: i64) -> Option<Vec<Arc<Frame>>> {
        let recent = self.recent.read().unwrap_or_else(|e| e.into_inner());
        if cursor < recent.before {
            return None;
        }
        let frames = recent
            .frames
            .iter()
            .skip_while(|f| f.event_id <= cursor)
            .cloned()
            .collect();
        Some(frames)
    }
}

pub struct Hub {
    store: Arc<dyn Store>,
    feeds: Mutex<HashMap<Uuid, Arc<Feed>>>,
    /// Set once the server shuts down: every stream ends.
    closing: watch::Sender<bool>,
}

impl Hub {
    pub fn new(store: Arc<dyn Store>) -> Hub {
        Hub {
            store,
            feeds: Mutex::default(),
            closing: watch::Sender::new(false),
        }
    }

    /// Ends every stream, so a graceful shutdown is not held open by them.
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Called when the shop's log grew; never blocks.
    pub fn announce(&self, shop_id: Uuid) {
        let feeds = self.feeds.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(feed) = feeds.get(&shop_id) {
            feed.wake.notify_one();
        }
    }

    /// Wakes every feed: the store may have missed announcing changes.
    pub fn announce_all(&self) {
        let feeds = self.feeds.lock().unwrap_or_else(|e| e.into_inner());
        feeds.values().for_each(|feed| feed.wake.notify_one());
    }

    /// The shop's feed, started on first use.
    async fn feed(&self, shop_id: Uuid) -> StoreResult<Arc<Feed>> {
        if let Some(feed) = self
            .feeds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&shop_id)
        {
            return Ok(Arc::clone(feed));
        }
        let last = self.store.last_event_id(shop_id).await?;
        let mut feeds = self.feeds.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(feed) = feeds.get(&shop_id) {
            return Ok(Arc::clone(feed));
        }
        let feed = Arc::new(Feed {
            shop_id,
            recent: RwLock::new(Recent {
                before: last,
                frames: VecDeque::new(),
            }),
            latest: watch::Sender::new(last),
            wake: Notify::new(),
        });
        feeds.insert(shop_id, Arc::clone(&feed));
        let closing = self.closing.subscribe();
        tokio::spawn(fetch(Arc::clone(&self.store), Arc::clone(&feed), closing));
        // Events committed between reading `last` and registering the feed
        // announced nothing here: look once.
        feed.wake.notify_one();
        Ok(feed)
    }

    /// Starts a stream for `audience` from just after `cursor` (the newest
    /// event when `None`). Frames arrive on the returned queue; it ends when
    /// the subscriber stalls or goes away.
    pub async fn subscribe(
        &self,
        shop_id: Uuid,
        audience: Audience,
        cursor: Option<i64>,
    ) -> StoreResult<mpsc::Receiver<Bytes>> {
        let feed = self.feed(shop_id).await?;
        let cursor = match cursor {
            Some(cursor) => cursor,
            None => self.store.last_event_id(shop_id).await?,
        };
        let (frames, queue) = mpsc::channel(QUEUE);
        let closing = self.closing.subscribe();
        let store = Arc::clone(&self.store);
        tokio::spawn(pump(store, feed, audience, cursor, frames, closing));
        Ok(queue)
    }
}

/// Reads each shop's new events once, however many are listening. Ends
/// with the server, so that nothing holds the store after it stopped.
async fn fetch(store: Arc<dyn Store>, feed: Arc<Feed>, mut closing: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            () = feed.wake.notified() => {}
            _ = closing.wait_for(|closed| *closed) => return,
        }
        loop {
            if *closing.borrow() {
                return;
            }
            let after = feed
                .recent
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .last_id();
            let events = match store.events_after(feed.shop_id, after, PAGE).await {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!(error = %e, shop_id = %feed.shop_id, "reading new events failed; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            let Some(last) = events.last().map(|e| e.event_id) else {
                break;
            };
            let full_page = events.len() == PAGE.get() as usize;
            {
                let mut recent = feed.recent.write().unwrap_or_else(|e| e.into_inner());
                recent
                    .frames
                    .extend(events.iter().map(|e| Arc::new(Frame::new(e))));
                while recent.frames.len() > RECENT {
                    if let Some(dropped) = recent.frames.pop_front() {
                        recent.before = dropped.event_id;
                    }
                }
            }
            feed.latest.send_replace(last);
            if !full_page {
                break;
            }
        }
    }
}

/// Feeds one subscriber: catches up from memory or the log, then follows.
async fn pump(
    store: Arc<dyn Store>,
    feed: Arc<Feed>,
    audience: Audience,
    mut cursor: i64,
    frames: mpsc::Sender<Bytes>,
    mut closing: watch::Receiver<bool>,
) {
    let mut latest = feed.latest.subscribe();
    loop {
        if *closing.borrow_and_update() {
            return;
        }
        latest.borrow_and_update();
        loop {
            let (batch, from_log) = match feed.after(cursor) {
                Some(batch) => (batch, false),
                None => match store.events_after(feed.shop_id, cursor, PAGE).await {
                    Ok(events) => (
                        events.iter().map(|e| Arc::new(Frame::new(e))).collect(),
                        true,
                    ),
                    // The client resumes from its last id when it reconnects.
                    Err(_) => return,
                },
            };
            let more = from_log && batch.len() == PAGE.get() as usize;
            for frame in batch {
                cursor = frame.event_id;
                if audience.sees(&frame)
                    && frames
                        .send_timeout(frame.bytes.clone(), STALL)
                        .await
                        .is_err()
                {
                    return;
                }
                if audience.ends_with(&frame) {
                    return;
                }
            }
            if !more {
                break;
            }
        }
        tokio::select! {
            changed = latest.changed() => if changed.is_err() { return },
            () = tokio::time::sleep(KEEP_ALIVE) => {
                let keep_alive = Bytes::from_static(b": keep-alive\n\n");
                if frames.send_timeout(keep_alive, STALL).await.is_err() {
                    return;
                }
            }
            () = frames.closed() => return,
            _ = closing.changed() => return,
        }
    }
}
