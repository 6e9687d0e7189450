//! The per-shop event log the kitchen streams from.

use ordergate_domain::Timestamp;
use ordergate_domain::events::{Event, EventType};
use ordergate_domain::paging::Limit;
use sqlx::Row;
use sqlx::postgres::PgConnection;
use uuid::Uuid;

use crate::codec::name;
use crate::error::PgError;
use crate::tx::Tx;

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
    // One round trip: the shop's counter row is bumped (and stays locked to
    // the commit, which keeps ids in commit order) and its value is the new
    // event's id.
    let event_id: i64 = sqlx::query_scalar(
        "with counter as (
             insert into event_counters (shop_id, last_event_id) values ($1, 1)
             on conflict (shop_id) do update set last_event_id = event_counters.last_event_id + 1
             returning last_event_id
         )
         insert into events (shop_id, event_id, event_type, session_id, data, created_at)
         select $1, last_event_id, $2, $3, $4, $5 from counter
         returning event_id",
    )
    .bind(shop_id)
    .bind(event_type.as_str())
    .bind(session_id)
    .bind(data)
    .bind(now)
    .fetch_one(tx.conn())
    .await?;
    tx.note_event(shop_id, event_id);
    Ok(event_id)
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
