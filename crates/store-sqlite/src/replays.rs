//! Guests' retries of placed orders, answered from memory.
//!
//! A retry after a lost answer is the commonest request a flaky connection
//! makes. Its answer rests on two things:
//!
//! - the key's stored response, which never changes once committed: it only
//!   expires (a record is replaced only after it expired), so an entry is
//!   used until the record's own expiry and never after;
//! - the session's PIN state (failures, lock) and status, which any wrong
//!   PIN, lapsed lock, unlock or checkout changes.
//!
//! The writer remembers each guest order it places or replays, with the
//! session as it stood at the end of that order's job and a *stamp*: how
//! many writes to `table_sessions` the writer connection had made by then.
//! Every such write moves the count on as it happens, before its commit,
//! and an entry whose stamp is not the current count is not used: whatever
//! wrote a session after the order (in its own group or a later one, or in
//! a group that then failed) sends the retry down the full path, which
//! decides it from the database and remembers it again.
//!
//! Nothing is read for a retry that is not remembered: the full path reads
//! its key anyway, and every new order would otherwise pay a read that
//! finds nothing (measurements in the commit that made it so).
//!
//! Only this store writes the file (SQLite is the one-node engine, its
//! writer thread the only writer, and `ServingLock` keeps a second server
//! off the file), so nothing changes behind the writer's back.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use moka::sync::Cache;
use ordergate_domain::Timestamp;
use ordergate_domain::idempotency::{Fingerprint, IdempotencyKey, Scope};
use ordergate_domain::session::{GuestProof, PinPolicy, Session};
use ordergate_store::{Claim, Placed, Replay};
use rusqlite::Connection;
use rusqlite::hooks::Action;
use uuid::Uuid;

/// Bytes of stored responses kept: a few thousand orders.
const CAPACITY_BYTES: u64 = 8 * 1024 * 1024;
/// What an entry costs besides its response body.
const ENTRY_OVERHEAD: u32 = 256;

/// What the writer saw of a guest order it placed or replayed, at the end
/// of the order's job.
pub(crate) struct Seen {
    pub(crate) session: Session,
    /// The expiry of the key's record, as stored.
    pub(crate) expires_at: Timestamp,
    /// [`ReplayCache::stamp`] at that moment.
    pub(crate) stamp: u64,
}

struct Entry {
    replay: Replay,
    fingerprint: Fingerprint,
    seen: Seen,
}

pub(crate) struct ReplayCache {
    entries: Cache<(Scope, IdempotencyKey), Arc<Entry>>,
    /// Writes to `table_sessions` made on the writer connection, counted by
    /// its update hook as each happens.
    session_writes: Arc<AtomicU64>,
}

impl ReplayCache {
    pub(crate) fn new() -> ReplayCache {
        ReplayCache {
            entries: Cache::builder()
                .max_capacity(CAPACITY_BYTES)
                .weigher(|_, entry: &Arc<Entry>| {
                    let body = entry.replay.response.body.len();
                    u32::try_from(body)
                        .unwrap_or(u32::MAX)
                        .saturating_add(ENTRY_OVERHEAD)
                })
                .build(),
            session_writes: Arc::default(),
        }
    }

    /// Counts the writer connection's writes to sessions. Every write of the
    /// store goes through this connection.
    pub(crate) fn watch(&self, writer: &Connection) {
        let writes = Arc::clone(&self.session_writes);
        writer.update_hook(Some(move |_: Action, _: &str, table: &str, _: i64| {
            if table == "table_sessions" {
                writes.fetch_add(1, Ordering::Release);
            }
        }));
    }

    /// How many writes to sessions the writer has made so far; on the
    /// writer thread, exact between two of its statements.
    pub(crate) fn stamp(&self) -> u64 {
        self.session_writes.load(Ordering::Acquire)
    }

    /// The replay of `claim`, when what is remembered decides it: no session
    /// was written since, the session admits the proof as is, and the key's
    /// record matches and is live.
    pub(crate) fn find(
        &self,
        session_id: Uuid,
        proof: &GuestProof,
        claim: &Claim,
        policy: PinPolicy,
        now: Timestamp,
    ) -> Option<Replay> {
        let entry = self
            .entries
            .get(&(claim.scope.clone(), claim.key.clone()))?;
        let seen = &entry.seen;
        let usable = seen.stamp == self.stamp()
            && seen.session.session_id == session_id
            && claim.answered_by(&entry.fingerprint, seen.expires_at, now)
            && seen.session.admits_as_is(proof, policy, now);
        usable.then(|| entry.replay.clone())
    }

    /// Remembers the answer `placed` to the guest order request `claim`,
    /// committed at the shop `shop_id`, as the writer `seen` it.
    pub(crate) fn remember(&self, claim: &Claim, shop_id: Uuid, placed: &Placed, seen: Seen) {
        let replay = Replay {
            shop_id,
            order_id: placed.order_id,
            response: placed.response.clone().replayed(),
        };
        self.entries.insert(
            (claim.scope.clone(), claim.key.clone()),
            Arc::new(Entry {
                replay,
                fingerprint: claim.fingerprint.clone(),
                seen,
            }),
        );
    }
}
