//! Guests' retries of placed orders, answered from memory.
//!
//! A retry after a lost answer is the commonest request a flaky connection
//! makes, and answering it from the database took a read transaction whose
//! page cache every commit had emptied: two fifths of a replay's server time
//! (profile in the commit that added this). Its answer rests on two things:
//!
//! - the key's stored response, which never changes once committed: it only
//!   expires (a record is replaced only after it expired), so an entry is
//!   used until the record's own expiry and never after;
//! - the session's PIN state (failures, lock) and status, which any wrong
//!   PIN, lapsed lock, unlock or checkout changes. Entries keep the session as read, stamped with
//!   the *generation* of session writes current before the read began. The
//!   writer moves the generation on after every commit that wrote
//!   `table_sessions`, before it answers anyone, and an entry of an older
//!   generation is not used. A read that raced such a commit carries the
//!   older stamp, so a snapshot from before the commit is never used after
//!   it.
//!
//! Only this store writes the file (SQLite is the one-node engine, its
//! writer thread the only writer, and `ServingLock` keeps a second server
//! off the file), so nothing changes behind the writer's back.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use moka::sync::Cache;
use ordergate_domain::Timestamp;
use ordergate_domain::idempotency::{Fingerprint, IdempotencyKey, Scope};
use ordergate_domain::session::{GuestProof, PinPolicy, Session};
use ordergate_store::{Claim, Replay};
use rusqlite::Connection;
use rusqlite::hooks::Action;
use uuid::Uuid;

/// Bytes of stored responses kept: a few thousand retried orders.
const CAPACITY_BYTES: u64 = 8 * 1024 * 1024;
/// What an entry costs besides its response body.
const ENTRY_OVERHEAD: u32 = 256;

/// A completed order request as committed (its claim's fingerprint
/// matched), and the session it was read with.
pub(crate) struct Committed {
    pub(crate) replay: Replay,
    pub(crate) fingerprint: Fingerprint,
    pub(crate) expires_at: Timestamp,
    pub(crate) session: Session,
}

struct Entry {
    committed: Committed,
    generation: u64,
}

pub(crate) struct ReplayCache {
    entries: Cache<(Scope, IdempotencyKey), Arc<Entry>>,
    generation: AtomicU64,
    /// Set by the writer connection's update hook, cleared after the commit.
    sessions_written: Arc<AtomicBool>,
}

impl ReplayCache {
    pub(crate) fn new() -> ReplayCache {
        ReplayCache {
            entries: Cache::builder()
                .max_capacity(CAPACITY_BYTES)
                .weigher(|_, entry: &Arc<Entry>| {
                    let body = entry.committed.replay.response.body.len();
                    u32::try_from(body)
                        .unwrap_or(u32::MAX)
                        .saturating_add(ENTRY_OVERHEAD)
                })
                .build(),
            generation: AtomicU64::new(0),
            sessions_written: Arc::default(),
        }
    }

    /// Watches the writer connection for writes to sessions. Every write of
    /// the store goes through this connection.
    pub(crate) fn watch(&self, writer: &Connection) {
        let written = Arc::clone(&self.sessions_written);
        writer.update_hook(Some(move |_: Action, _: &str, table: &str, _: i64| {
            if table == "table_sessions" {
                written.store(true, Ordering::Relaxed);
            }
        }));
    }

    /// Called by the writer after each group's transaction ended (committed
    /// or not) and before it answers anyone.
    pub(crate) fn group_settled(&self) {
        if self.sessions_written.swap(false, Ordering::Relaxed) {
            self.generation.fetch_add(1, Ordering::Release);
        }
    }

    /// The stamp for a read about to begin.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The replay of `claim`, when what is remembered decides it: the
    /// session admits the proof as is, and the key's record matches and is
    /// live.
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
        let committed = &entry.committed;
        let usable = entry.generation == self.generation()
            && committed.session.session_id == session_id
            && claim.answered_by(&committed.fingerprint, committed.expires_at, now)
            && committed.session.admits_as_is(proof, policy, now);
        usable.then(|| committed.replay.clone())
    }

    /// Remembers a replay found by a read that began at `generation`.
    pub(crate) fn remember(&self, claim: &Claim, committed: Committed, generation: u64) {
        self.entries.insert(
            (claim.scope.clone(), claim.key.clone()),
            Arc::new(Entry {
                committed,
                generation,
            }),
        );
    }
}
