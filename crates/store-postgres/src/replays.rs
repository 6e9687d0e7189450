//! Guests' retries of completed orders, answered from committed data, with
//! no transaction: the checks of requests arriving together share one
//! statement (see [`crate::grouped`]).
//!
//! A node checks only keys of guest orders it placed or replayed itself
//! lately ([`Replays::answered`]): a new order's key has nothing to find,
//! and its check cost one shop's orders 15 % (measurements in the commit
//! that made this). Any other retry, one that comes to another node or
//! after a restart, takes the order's transaction, which replays it.

use moka::sync::Cache;
use ordergate_domain::Timestamp;
use ordergate_domain::session::{GuestProof, PinPolicy, Session};
use ordergate_store::{Claim, KeyRecord, Replay, StoreResult};
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgPool, PgRow};
use uuid::Uuid;

use crate::error::{PgError, cannot_connect};
use crate::grouped::Grouped;
use crate::{idempotency, sessions};

/// One request's question: its session, and its key's live record.
pub(crate) struct Lookup {
    shop_id: Uuid,
    session_id: Uuid,
    scope: String,
    key: String,
    now: Timestamp,
}

type Found = Option<(Session, KeyRecord)>;

type Lookups = Grouped<Lookup, Found>;

/// Keys a node remembers answering, about 150 bytes each: a busy node's
/// orders of the last few minutes, when a lost answer's retry comes.
const MOST_ANSWERED: u64 = 50_000;

pub(crate) struct Replays {
    lookups: Lookups,
    /// The scoped keys of guest orders this node placed or replayed.
    answered: Cache<String, ()>,
}

impl Replays {
    /// On Citus (`distributed`), a statement per shop (see
    /// [`crate::grouped`]).
    pub(crate) fn start(pool: PgPool, distributed: bool) -> Replays {
        Replays {
            lookups: lookups(pool, distributed),
            answered: Cache::new(MOST_ANSWERED),
        }
    }

    /// Notes that this node answered the guest order request `claim`.
    pub(crate) fn answered(&self, claim: &Claim) {
        self.answered.insert(claim.scoped_key(), ());
    }

    /// Whether this node answered the guest order request `claim` lately.
    pub(crate) fn knows(&self, claim: &Claim) -> bool {
        self.answered.contains_key(&claim.scoped_key())
    }
}

fn lookups(pool: PgPool, distributed: bool) -> Lookups {
    Grouped::start_per_shop(
        distributed,
        |q: &Lookup| q.shop_id,
        move |questions| {
            let pool = pool.clone();
            async move {
                let mut conn = pool.acquire().await.map_err(cannot_connect)?;
                Ok(look_up(&mut conn, &questions, distributed).await?)
            }
        },
    )
}

/// A replay answered from committed data, when nothing else could change
/// the answer: the PIN is right with no failures to reset, and the key's
/// record matches. Anything else goes down the full path.
pub(crate) async fn committed_replay(
    replays: &Replays,
    shop_id: Uuid,
    session_id: Uuid,
    proof: &GuestProof,
    claim: &Claim,
    policy: PinPolicy,
    now: Timestamp,
) -> StoreResult<Option<Replay>> {
    let found = replays
        .lookups
        .ask(Lookup {
            shop_id,
            session_id,
            scope: claim.scope.as_str().to_owned(),
            key: claim.key.as_str().to_owned(),
            now,
        })
        .await?;
    let Some((session, record)) = found else {
        return Ok(None);
    };
    if !claim.answered_by(&record.fingerprint, record.expires_at, now)
        || !session.admits_as_is(proof, policy, now)
    {
        return Ok(None);
    }
    let replay = Replay::of(session.shop_id, record.response).map_err(PgError::from)?;
    Ok(Some(replay))
}

/// The statement of [`look_up`]. On Citus, where every question of a group
/// is of one shop, `$shop` is `"shop_id = $5 and "`, which Citus routes to
/// that shop's worker; on PostgreSQL it is empty: a session is found by its
/// id and a key by its scope (which names the session) through their own
/// indexes, which the planner would not use for a join on `shop_id` (it
/// scanned every key of the shop, each time, under load).
macro_rules! look_up_sql {
    ($shop:literal) => {
        concat!(
            "select s.*, k.*, q.asked
             from unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[])
                    with ordinality as q(session_id, scope, idempotency_key, now, asked)
             cross join lateral (select ",
            sessions::columns!(),
            " from table_sessions
               where ",
            $shop,
            "session_id = q.session_id) as s
             cross join lateral (select ",
            idempotency::record_columns!(),
            " from idempotency_keys
               where ",
            $shop,
            "scope = q.scope and idempotency_key = q.idempotency_key
                 and expires_at > q.now) as k"
        )
    };
}

/// The answers to `questions`, in their order; most find nothing, since
/// most orders bring a new key. On Citus (`one_shop`) the questions are
/// all of one shop.
async fn look_up(
    conn: &mut PgConnection,
    questions: &[Lookup],
    one_shop: bool,
) -> Result<Vec<Found>, PgError> {
    const ASKED_AT: usize = sessions::COLUMN_COUNT + idempotency::RECORD_COLUMN_COUNT;
    let query = if one_shop {
        sqlx::query(look_up_sql!("shop_id = $5 and "))
    } else {
        sqlx::query(look_up_sql!(""))
    };
    let query = query
        .bind(questions.iter().map(|q| q.session_id).collect::<Vec<_>>())
        .bind(
            questions
                .iter()
                .map(|q| q.scope.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(questions.iter().map(|q| q.key.as_str()).collect::<Vec<_>>())
        .bind(questions.iter().map(|q| q.now).collect::<Vec<_>>());
    let query = match questions.first() {
        Some(first) if one_shop => query.bind(first.shop_id),
        _ => query,
    };
    let rows = query
        .try_map(|row: PgRow| {
            let asked: i64 = row.try_get(ASKED_AT)?;
            let record = idempotency::record_at(&row, sessions::COLUMN_COUNT)?;
            Ok((asked, sessions::from_row(row)?, record))
        })
        .fetch_all(conn)
        .await?;
    let mut answers: Vec<Found> = questions.iter().map(|_| None).collect();
    for (asked, session, record) in rows {
        let slot = usize::try_from(asked - 1)
            .ok()
            .and_then(|i| answers.get_mut(i))
            .ok_or_else(|| PgError::Corrupt(format!("an answer to question {asked}")))?;
        *slot = Some((session, record));
    }
    Ok(answers)
}
