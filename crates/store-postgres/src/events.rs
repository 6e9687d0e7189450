//! The per-shop event log the kitchen streams from.

use ordergate_domain::Timestamp;
use ordergate_domain::events::{Event, EventType};
use ordergate_domain::paging::Limit;
use sqlx::Row;
use sqlx::postgres::PgConnection;
use uuid::Uuid;

use sqlx::{Postgres, QueryBuilder};

use crate::codec::name;
use crate::error::PgError;
use crate::tx::Tx;

/// The insert of events, as far as its rows.
macro_rules! insert_events {
    () => {
        "insert into events (shop_id, event_id, event_type, session_id, data, created_at)"
    };
}
pub(crate) use insert_events;

/// Appends an event with the shop's next id. The id comes from the shop's
/// row in `event_counters`, whose lock the transaction then holds until it
/// ends: a second writer of the same shop waits for the first to commit
/// before taking the next id, so ids are strictly increasing in commit
/// order and a reader never sees id n+1 before id n. Every transaction
/// takes its locks in one order (idempotency claim, session or order row,
/// stock rows by ascending id, ticket counter, then this counter), so
/// holding it to the end cannot deadlock.
pub(crate) async fn append(
    tx: &mut Tx,
    shop_id: Uuid,
    event_type: EventType,
    session_id: Option<Uuid>,
    data: &impl serde::Serialize,
    now: Timestamp,
) -> Result<i64, PgError> {
    let data = serde_json::to_string(data)?;
    let event_id = if tx.distributed() {
        append_on_the_shops_worker(tx, shop_id, event_type, session_id, &data, now).await?
    } else {
        append_in_one_statement(tx, shop_id, event_type, session_id, &data, now).await?
    };
    tx.note_event(shop_id, event_id);
    Ok(event_id)
}

/// One round trip: the shop's counter row is bumped (and stays locked to
/// the commit, which keeps ids in commit order) and its value is the new
/// event's id.
async fn append_in_one_statement(
    tx: &mut Tx,
    shop_id: Uuid,
    event_type: EventType,
    session_id: Option<Uuid>,
    data: &str,
    now: Timestamp,
) -> Result<i64, PgError> {
    Ok(sqlx::query_scalar(concat!(
        "with counter as (
             insert into event_counters (shop_id, last_event_id) values ($1, 1)
             on conflict (shop_id) do update set last_event_id = event_counters.last_event_id + 1
             returning last_event_id
         )
         ",
        insert_events!(),
        "
         select $1, last_event_id, $2, $3, $4, $5 from counter
         returning event_id"
    ))
    .bind(shop_id)
    .bind(event_type.as_str())
    .bind(session_id)
    .bind(data)
    .bind(now)
    .fetch_one(tx.conn())
    .await?)
}

/// On Citus, whose plan for a statement of two data-modifying parts runs
/// each on its own and passes results between nodes, two statements that
/// each run on the shop's worker alone (see `filing`).
async fn append_on_the_shops_worker(
    tx: &mut Tx,
    shop_id: Uuid,
    event_type: EventType,
    session_id: Option<Uuid>,
    data: &str,
    now: Timestamp,
) -> Result<i64, PgError> {
    let event_id = take_ids(tx, shop_id, 1).await?;
    insert_numbered(tx, shop_id, event_id, [(event_type, session_id, data)], now).await?;
    Ok(event_id)
}

/// Takes the shop's next `count` event ids (its counter row stays locked
/// to the commit); returns the last of them.
pub(crate) async fn take_ids(tx: &mut Tx, shop_id: Uuid, count: i64) -> Result<i64, PgError> {
    Ok(sqlx::query_scalar(
        "insert into event_counters (shop_id, last_event_id) values ($1, $2)
         on conflict (shop_id)
             do update set last_event_id = event_counters.last_event_id + excluded.last_event_id
         returning last_event_id",
    )
    .bind(shop_id)
    .bind(count)
    .fetch_one(tx.conn())
    .await?)
}

/// Inserts `events` (type, session, data) with ids from `first_id` on, in
/// one statement of plain rows, which Citus sends to the shop's worker.
pub(crate) async fn insert_numbered<'a>(
    tx: &mut Tx,
    shop_id: Uuid,
    first_id: i64,
    events: impl IntoIterator<Item = (EventType, Option<Uuid>, &'a str)>,
    now: Timestamp,
) -> Result<(), PgError> {
    let mut insert = QueryBuilder::<Postgres>::new(concat!(insert_events!(), " "));
    insert.push_values(
        events.into_iter().zip(first_id..),
        |mut row, ((event_type, session_id, data), event_id)| {
            row.push_bind(shop_id)
                .push_bind(event_id)
                .push_bind(event_type.as_str())
                .push_bind(session_id)
                .push_bind(data)
                .push_bind(now);
        },
    );
    insert.build().execute(tx.conn()).await?;
    Ok(())
}

pub(crate) async fn after(
    conn: &mut PgConnection,
    shop_id: Uuid,
    after: i64,
    limit: Limit,
) -> Result<Vec<Event>, PgError> {
    Ok(sqlx::query(
        "select event_id, event_type, session_id, data from events
         where shop_id = $1 and event_id > $2 order by event_id limit $3",
    )
    .bind(shop_id)
    .bind(after)
    .bind(i64::from(limit.get()))
    .try_map(|row| {
        Ok(Event {
            event_id: row.try_get(0)?,
            event_type: name(&row, 1, EventType::parse)?,
            session_id: row.try_get(2)?,
            data: row.try_get(3)?,
        })
    })
    .fetch_all(conn)
    .await?)
}

pub(crate) async fn last_id(conn: &mut PgConnection, shop_id: Uuid) -> Result<i64, PgError> {
    Ok(sqlx::query_scalar(
        "select coalesce(max(event_id), 0)::bigint from events where shop_id = $1",
    )
    .bind(shop_id)
    .fetch_one(conn)
    .await?)
}
