//! The restaurant's tables, each with its active session if any.

use ordergate_domain::Rejection;
use ordergate_domain::table::{Table, TableState};
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgRow};
use uuid::Uuid;

use crate::error::PgError;
use crate::shops;

/// A table and the session active at it (by its name).
macro_rules! with_session {
    () => {
        "select t.table_id, t.shop_id, t.name, t.code, t.created_at, s.session_id
         from tables t
         left join table_sessions s
             on s.shop_id = t.shop_id and s.table_label = t.name and s.status = 'active'"
    };
}

fn from_row(row: PgRow) -> sqlx::Result<TableState> {
    Ok(TableState {
        table: Table {
            table_id: row.try_get(0)?,
            shop_id: row.try_get(1)?,
            name: row.try_get(2)?,
            code: row.try_get(3)?,
            created_at: row.try_get(4)?,
        },
        session_id: row.try_get(5)?,
    })
}

pub(crate) async fn insert(conn: &mut PgConnection, table: &Table) -> Result<(), PgError> {
    shops::require(&mut *conn, table.shop_id).await?;
    // Two staff naming a table at once: the unique constraint decides.
    let inserted = sqlx::query(
        "insert into tables (shop_id, table_id, name, code, created_at)
         values ($1, $2, $3, $4, $5)
         on conflict on constraint tables_name_key do nothing",
    )
    .bind(table.shop_id)
    .bind(table.table_id)
    .bind(&table.name)
    .bind(&table.code)
    .bind(table.created_at)
    .execute(conn)
    .await?;
    if inserted.rows_affected() == 0 {
        return Err(Rejection::TableNameTaken {
            name: table.name.clone(),
        }
        .into());
    }
    Ok(())
}

/// The shop's tables, by name.
pub(crate) async fn list(
    conn: &mut PgConnection,
    shop_id: Uuid,
) -> Result<Vec<TableState>, PgError> {
    shops::require(&mut *conn, shop_id).await?;
    Ok(sqlx::query(concat!(
        with_session!(),
        " where t.shop_id = $1 order by t.name"
    ))
    .bind(shop_id)
    .try_map(from_row)
    .fetch_all(conn)
    .await?)
}

pub(crate) async fn by_code(
    conn: &mut PgConnection,
    code: &str,
) -> Result<Option<TableState>, PgError> {
    Ok(sqlx::query(concat!(with_session!(), " where t.code = $1"))
        .bind(code)
        .try_map(from_row)
        .fetch_optional(conn)
        .await?)
}
