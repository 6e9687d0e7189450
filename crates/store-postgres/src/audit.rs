use ordergate_domain::Timestamp;
use ordergate_domain::audit::{AuditCode, AuditEntry};
use ordergate_domain::paging::Limit;
use sqlx::Row;
use sqlx::postgres::PgConnection;
use uuid::Uuid;

use crate::codec::{name, status};
use crate::error::PgError;
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

/// Files `entry` under its session's shop in one statement; a session
/// nobody knows files nothing.
pub(crate) async fn append_for_session(
    conn: &mut PgConnection,
    entry: &AuditEntry,
) -> Result<(), PgError> {
    sqlx::query(
        "insert into audit_log (shop_id, session_id, request_id, client_id, status, code,
                                idempotent_replay, order_id, created_at, actor)
         select s.shop_id, s.session_id, $2, $3, $4, $5, $6, $7, $8, $9
         from table_sessions s where s.session_id = $1",
    )
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
