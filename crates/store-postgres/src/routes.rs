//! The shop a session or an order belongs to, found by its id alone.
//!
//! Guest URLs name a session and staff status changes an order, without
//! their shop, while every statement of the order path names the shop so
//! that Citus runs it on the shop's worker alone (see [`crate::shards`]).
//! On Citus, `shop_routes` keeps each session's and order's shop, hashed by
//! the id itself and written in the transaction that creates the row. On
//! PostgreSQL the session or order is found through its own id's index, and
//! no route is written: a row more for every order would cost every order
//! (10-15 % in the bench), for nothing a single database needs. A node
//! keeps what it looked up, since a row's shop never changes.

use moka::sync::Cache;
use ordergate_domain::Rejection;
use sqlx::postgres::PgConnection;
use uuid::Uuid;

use crate::error::PgError;
use crate::tx::Tx;

/// Routes a node remembers, about 100 bytes each: every table seated for
/// hours, and the orders staff have moved lately.
const MOST_KNOWN: u64 = 100_000;

#[derive(Clone)]
pub(crate) struct Routes {
    known: Cache<Uuid, Uuid>,
    /// Whether the routes are `shop_routes`' (Citus).
    distributed: bool,
}

impl Routes {
    pub(crate) fn new(distributed: bool) -> Routes {
        Routes {
            known: Cache::new(MOST_KNOWN),
            distributed,
        }
    }

    /// The shop of `id` when this node has looked it up before.
    pub(crate) fn known(&self, id: Uuid) -> Option<Uuid> {
        self.known.get(&id)
    }

    /// The shop of the session or order `id`; `None` when there is none.
    /// An id not found is not remembered: its row may be created later.
    pub(crate) async fn shop_of(
        &self,
        conn: &mut PgConnection,
        id: Uuid,
    ) -> Result<Option<Uuid>, PgError> {
        if let Some(shop_id) = self.known(id) {
            return Ok(Some(shop_id));
        }
        let query = if self.distributed {
            sqlx::query_scalar("select shop_id from shop_routes where id = $1")
        } else {
            sqlx::query_scalar(
                "select shop_id from table_sessions where session_id = $1
                 union all select shop_id from orders where order_id = $1
                 limit 1",
            )
        };
        let shop_id: Option<Uuid> = query.bind(id).fetch_optional(conn).await?;
        if let Some(shop_id) = shop_id {
            self.known.insert(id, shop_id);
        }
        Ok(shop_id)
    }

    /// [`Routes::shop_of`], `NotFound(noun)` when there is none.
    pub(crate) async fn require(
        &self,
        conn: &mut PgConnection,
        id: Uuid,
        noun: &'static str,
    ) -> Result<Uuid, PgError> {
        self.shop_of(conn, id)
            .await?
            .ok_or_else(|| Rejection::NotFound(noun).into())
    }
}

/// Files the route of a new session (or order) `id` of `shop_id` on Citus,
/// in the transaction that creates it.
pub(crate) async fn insert(tx: &mut Tx, id: Uuid, shop_id: Uuid) -> Result<(), PgError> {
    if !tx.distributed() {
        return Ok(());
    }
    sqlx::query("insert into shop_routes (id, shop_id) values ($1, $2)")
        .bind(id)
        .bind(shop_id)
        .execute(tx.conn())
        .await?;
    Ok(())
}
