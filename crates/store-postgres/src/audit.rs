use ordergate_domain::Timestamp;
use ordergate_domain::audit::{AuditCode, AuditEntry};
use ordergate_domain::paging::Limit;
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgPool};
use uuid::Uuid;

use crate::codec::{name, status};
use crate::error::{PgError, cannot_connect};
use crate::grouped::Grouped;
use crate::shops;

pub(crate) async fn append(
    conn: &mut PgConnection,
    shop_id: Uuid,
    entry: &AuditEntry,
) -> Result<(), PgError> {
    sqlx::query(
        "insert into audit_log (shop_id, session_id, request_id, client_id, status, code,
                                idempotent_replay, order_id, created_at, actor)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(shop_id)
    .bind(entry.session_id)
    .bind(&entry.request_id)
    .bind(&entry.client_id)
    .bind(i64::from(entry.status))
    .bind(entry.code.as_str())
    .bind(entry.idempotent_replay)
    .bind(entry.order_id)
    .bind(entry.at)
    .bind(&entry.actor)
    .execute(conn)
    .await?;
    Ok(())
}

/// Files the audit rows of order POSTs answered outside an order's
/// transaction (replays answered from committed data, refusals before the
/// store), each under its session's shop, a group per statement (see
/// [`crate::grouped`]; on Citus, `distributed`, a statement per shop).
/// Each caller returns once its row has committed, so every `audit_log`
/// read that starts later, on any node, sees it.
pub(crate) type Filer = Grouped<(Uuid, AuditEntry), ()>;

pub(crate) fn filer(pool: PgPool, distributed: bool) -> Filer {
    let shop_of = |(shop_id, _): &(Uuid, AuditEntry)| *shop_id;
    Grouped::start_per_shop(distributed, shop_of, move |group| {
        let pool = pool.clone();
        async move {
            let mut conn = pool.acquire().await.map_err(cannot_connect)?;
            append_all(&mut conn, &group).await?;
            Ok(vec![(); group.len()])
        }
    })
}

/// Inserts `group`, each entry under its shop, in their order.
pub(crate) async fn append_all(
    conn: &mut PgConnection,
    group: &[(Uuid, AuditEntry)],
) -> Result<(), PgError> {
    if group.is_empty() {
        return Ok(());
    }
    let shops = group
        .iter()
        .map(|(shop_id, _)| *shop_id)
        .collect::<Vec<_>>();
    let group: Vec<&AuditEntry> = group.iter().map(|(_, entry)| entry).collect();
    sqlx::query(
        "insert into audit_log (shop_id, session_id, request_id, client_id, status, code,
                                idempotent_replay, order_id, created_at, actor)
         select e.shop_id, e.session_id, e.request_id, e.client_id, e.status, e.code,
                e.idempotent_replay, e.order_id, e.created_at, e.actor
         from unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::bigint[], $6::text[],
                     $7::boolean[], $8::uuid[], $9::timestamptz[], $10::text[])
                with ordinality
                as e(shop_id, session_id, request_id, client_id, status, code,
                     idempotent_replay, order_id, created_at, actor, queued)
         order by e.queued",
    )
    .bind(shops)
    .bind(group.iter().map(|e| e.session_id).collect::<Vec<_>>())
    .bind(
        group
            .iter()
            .map(|e| e.request_id.as_str())
            .collect::<Vec<_>>(),
    )
    .bind(
        group
            .iter()
            .map(|e| e.client_id.as_deref())
            .collect::<Vec<_>>(),
    )
    .bind(
        group
            .iter()
            .map(|e| i64::from(e.status))
            .collect::<Vec<_>>(),
    )
    .bind(group.iter().map(|e| e.code.as_str()).collect::<Vec<_>>())
    .bind(
        group
            .iter()
            .map(|e| e.idempotent_replay)
            .collect::<Vec<_>>(),
    )
    .bind(group.iter().map(|e| e.order_id).collect::<Vec<_>>())
    .bind(group.iter().map(|e| e.at).collect::<Vec<_>>())
    .bind(group.iter().map(|e| e.actor.as_deref()).collect::<Vec<_>>())
    .execute(conn)
    .await?;
    Ok(())
}

pub(crate) async fn list(
    conn: &mut PgConnection,
    shop_id: Uuid,
    limit: Limit,
) -> Result<Vec<AuditEntry>, PgError> {
    shops::require(conn, shop_id).await?;
    Ok(sqlx::query(
        "select created_at, session_id, request_id, client_id, status, code, idempotent_replay,
                order_id, actor
         from audit_log where shop_id = $1 order by audit_id desc limit $2",
    )
    .bind(shop_id)
    .bind(i64::from(limit.get()))
    .try_map(|row| {
        Ok(AuditEntry {
            at: row.try_get(0)?,
            session_id: row.try_get(1)?,
            request_id: row.try_get(2)?,
            client_id: row.try_get(3)?,
            status: status(&row, 4)?,
            code: name(&row, 5, AuditCode::parse)?,
            idempotent_replay: row.try_get(6)?,
            order_id: row.try_get(7)?,
            actor: row.try_get(8)?,
        })
    })
    .fetch_all(conn)
    .await?)
}

/// Deletes up to `batch` of the rows recorded before `before`.
pub(crate) async fn purge(
    conn: &mut PgConnection,
    before: Timestamp,
    batch: u32,
) -> Result<u64, PgError> {
    Ok(sqlx::query(
        "delete from audit_log where (shop_id, audit_id) in
             (select shop_id, audit_id from audit_log where created_at < $1 limit $2)",
    )
    .bind(before)
    .bind(i64::from(batch))
    .execute(conn)
    .await?
    .rows_affected())
}
