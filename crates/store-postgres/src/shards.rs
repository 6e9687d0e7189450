//! Where a shop's rows live on Citus, and ids drawn to live there too.
//!
//! Citus spreads each distributed table over shards by the 32-bit hash of
//! its distribution column: every table of a shop's by `shop_id`, so a
//! shop's rows share one shard index and one worker. A guest's request
//! names only its session, and a staff member's status change only its
//! order, so the node finds their shop in `shop_routes`, distributed by
//! the id itself. For that lookup, and the route row written with the
//! session or order, to land on the shop's worker, new session and order
//! ids are drawn until their hash falls in the shop's shard interval
//! ([`Shards::align`]). An id that misses (one drawn before a shard split,
//! or by an older release) costs only a transaction over two shards.
//!
//! On plain PostgreSQL there are no shards and ids stay as drawn.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use sqlx::postgres::{PgConnection, PgPool};
use uuid::Uuid;

use crate::error::PgError;

/// How often a node reads the shard intervals again: they change only
/// when an operator splits shards, and an id drawn against stale ones is
/// still correct.
const REFRESH: Duration = Duration::from_secs(60);

/// Draws at most this many ids for one alignment: with Citus's default of
/// 32 shards, 32 on average; the bound only matters for thousands of shards.
const MOST_DRAWS: usize = 100_000;

/// The shard intervals of the `shops` colocation group, as this node last
/// read them; empty when the database is not distributed.
#[derive(Clone, Default)]
pub(crate) struct Shards {
    distributed: bool,
    intervals: Arc<RwLock<Arc<Vec<Interval>>>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Interval {
    min: i32,
    max: i32,
}

impl Interval {
    fn holds(&self, hash: i32) -> bool {
        (self.min..=self.max).contains(&hash)
    }
}

impl Shards {
    /// On Citus (`distributed`), reads the intervals ids are aligned to
    /// when `aligning`, and reads them again every [`REFRESH`] for as long
    /// as this (or a clone) lives.
    pub(crate) async fn load(
        pool: &PgPool,
        distributed: bool,
        aligning: bool,
    ) -> Result<Shards, PgError> {
        let shards = Shards {
            distributed,
            ..Shards::default()
        };
        if !aligning {
            return Ok(shards);
        }
        let mut conn = pool.acquire().await?;
        set(&shards.intervals, read_intervals(&mut conn).await?);
        let (kept, pool) = (Arc::downgrade(&shards.intervals), pool.clone());
        tokio::spawn(async move {
            let mut every = tokio::time::interval(REFRESH);
            every.tick().await;
            loop {
                every.tick().await;
                let Some(intervals) = kept.upgrade() else {
                    return;
                };
                let read = async { read_intervals(&mut *pool.acquire().await?).await };
                match read.await {
                    Ok(read) => set(&intervals, read),
                    Err(e) => tracing::debug!(error = ?e, "reading Citus's shard intervals failed"),
                }
            }
        });
        Ok(shards)
    }

    fn current(&self) -> Arc<Vec<Interval>> {
        Arc::clone(&self.intervals.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Whether the shops are spread over the shards of a Citus cluster.
    pub(crate) fn distributed(&self) -> bool {
        self.distributed
    }

    /// `id`, or an id of its kind with other random bits whose shard is
    /// `shop_id`'s. A UUIDv7 keeps its time and its sub-millisecond part,
    /// so ids drawn later still sort later.
    pub(crate) fn align(&self, id: Uuid, shop_id: Uuid) -> Uuid {
        let intervals = self.current();
        let shop_hash = citus_hash(shop_id);
        let Some(target) = intervals.iter().find(|i| i.holds(shop_hash)) else {
            return id;
        };
        let mut candidate = id;
        for _ in 0..MOST_DRAWS {
            if target.holds(citus_hash(candidate)) {
                return candidate;
            }
            candidate = redraw(candidate);
        }
        candidate
    }
}

fn set(intervals: &RwLock<Arc<Vec<Interval>>>, read: Vec<Interval>) {
    *intervals.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(read);
}

/// The intervals of the shards of `shops` (in the schema the connection
/// works in), which every shop table is colocated with.
async fn read_intervals(conn: &mut PgConnection) -> Result<Vec<Interval>, PgError> {
    let rows: Vec<(i32, i32)> = sqlx::query_as(
        "select shardminvalue::int4, shardmaxvalue::int4 from pg_dist_shard
         where logicalrelid = 'shops'::regclass order by 1",
    )
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(min, max)| Interval { min, max })
        .collect())
}

/// `id` with fresh random bits: all of them for a UUIDv4, those after the
/// sub-millisecond counter for a UUIDv7.
fn redraw(id: Uuid) -> Uuid {
    let fresh = Uuid::new_v4().into_bytes();
    if id.get_version_num() != 7 {
        return Uuid::from_bytes(fresh);
    }
    let mut bytes = id.into_bytes();
    // Byte 8 carries the variant bits, the same in both versions.
    bytes[8..].copy_from_slice(&fresh[8..]);
    Uuid::from_bytes(bytes)
}

/// The hash Citus places a `uuid` by: PostgreSQL's `uuid_hash`, Bob
/// Jenkins's lookup3 over the 16 bytes (`hash_bytes` in PostgreSQL's
/// `src/common/hashfn.c`), as the server computes it on a little-endian
/// machine. [`crate::PgStore`] checks it against the server's own
/// `uuid_hash` before it aligns anything.
pub(crate) fn citus_hash(id: Uuid) -> i32 {
    let bytes = id.as_bytes();
    let word =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let seed = 0x9e37_79b9_u32.wrapping_add(16).wrapping_add(3_923_095);
    let (mut a, mut b, mut c) = (seed, seed, seed);
    a = a.wrapping_add(word(0));
    b = b.wrapping_add(word(4));
    c = c.wrapping_add(word(8));
    mix(&mut a, &mut b, &mut c);
    a = a.wrapping_add(word(12));
    finish(&mut a, &mut b, &mut c);
    c as i32
}

fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    for (shift_a, shift_b, shift_c) in [(4, 6, 8), (16, 19, 4)] {
        *a = a.wrapping_sub(*c) ^ c.rotate_left(shift_a);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a) ^ a.rotate_left(shift_b);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b) ^ b.rotate_left(shift_c);
        *b = b.wrapping_add(*a);
    }
}

fn finish(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(14));
    *a = (*a ^ *c).wrapping_sub(c.rotate_left(11));
    *b = (*b ^ *a).wrapping_sub(a.rotate_left(25));
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(16));
    *a = (*a ^ *c).wrapping_sub(c.rotate_left(4));
    *b = (*b ^ *a).wrapping_sub(a.rotate_left(14));
    *c = (*c ^ *b).wrapping_sub(b.rotate_left(24));
}

/// Whether [`citus_hash`] agrees with the server's `uuid_hash` (it would
/// not on a big-endian server); a node that finds it does not leaves ids
/// as drawn.
pub(crate) async fn hash_agrees(conn: &mut PgConnection) -> Result<bool, PgError> {
    let probes: Vec<Uuid> = (0..8).map(|_| Uuid::new_v4()).collect();
    let theirs: Vec<i32> = sqlx::query_scalar("select uuid_hash(id) from unnest($1::uuid[]) as id")
        .bind(&probes)
        .fetch_all(conn)
        .await?;
    let ours: Vec<i32> = probes.iter().map(|id| citus_hash(*id)).collect();
    Ok(ours == theirs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shards(intervals: &[(i32, i32)]) -> Shards {
        let shards = Shards::default();
        let read = intervals
            .iter()
            .map(|&(min, max)| Interval { min, max })
            .collect();
        set(&shards.intervals, read);
        shards
    }

    /// Citus's split of the hash range into 32 equal shards.
    fn thirty_two() -> Shards {
        let step = (1_i64 << 32) / 32;
        let intervals: Vec<(i32, i32)> = (0..32)
            .map(|i| {
                let min = i32::MIN as i64 + i * step;
                (min as i32, (min + step - 1) as i32)
            })
            .collect();
        shards(&intervals)
    }

    #[test]
    fn the_hash_of_a_known_uuid_is_postgresqls() {
        // `select uuid_hash(id)` on PostgreSQL 15 (x86_64) for these ids.
        let known = [
            ("00000000-0000-0000-0000-000000000000", 1_353_656_403),
            ("11111111-1111-1111-1111-111111111111", -276_850_746),
            ("6f9619ff-8b86-d011-b42d-00c04fc964ff", 96_631_315),
        ];
        for (id, hash) in known {
            assert_eq!(citus_hash(id.parse().unwrap()), hash, "{id}");
        }
    }

    #[test]
    fn an_aligned_id_hashes_into_the_shops_shard_and_keeps_its_kind() {
        let shards = thirty_two();
        let intervals = shards.current();
        let shard_of = |id: Uuid| {
            intervals
                .iter()
                .position(|i| i.holds(citus_hash(id)))
                .unwrap()
        };
        for _ in 0..200 {
            let shop = Uuid::new_v4();
            let session = shards.align(Uuid::new_v4(), shop);
            assert_eq!(shard_of(session), shard_of(shop));
            assert_eq!(session.get_version_num(), 4);

            let drawn = Uuid::now_v7();
            let order = shards.align(drawn, shop);
            assert_eq!(shard_of(order), shard_of(shop));
            assert_eq!(order.get_version_num(), 7);
            assert_eq!(order.get_variant(), uuid::Variant::RFC4122);
            assert_eq!(order.as_bytes()[..8], drawn.as_bytes()[..8], "time kept");
        }
    }

    #[test]
    fn without_shards_ids_stay_as_drawn() {
        let id = Uuid::new_v4();
        assert_eq!(Shards::default().align(id, Uuid::new_v4()), id);
    }
}
