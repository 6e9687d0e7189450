//! Kitchen printers and their progress through the shop's event log. Whoever
//! prints to a printer holds a session advisory lock on it, on a connection
//! of its own that also records every step: exactly one node prints to a
//! printer, and a node whose connection went away (and with it the lock)
//! cannot record another step.

use async_trait::async_trait;
use ordergate_domain::events::EventType;
use ordergate_domain::printing::{Printer, PrinterProgress, ReprintRequested};
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::{PrintStep, PrinterLease, PrinterState, StoreResult};
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgPool, PgRow};
use uuid::Uuid;

use crate::error::{PgError, cannot_connect, classify};
use crate::tx::Tx;
use crate::{events, orders, shops};

macro_rules! select {
    () => {
        "select printer_id, shop_id, name, address, station, created_at,
                cursor_event_id, sending_event_id, printed, last_printed_at,
                last_error, last_error_at
         from printers"
    };
}

fn from_row(row: PgRow) -> sqlx::Result<PrinterState> {
    Ok(PrinterState {
        printer: Printer {
            printer_id: row.try_get(0)?,
            shop_id: row.try_get(1)?,
            name: row.try_get(2)?,
            address: row.try_get(3)?,
            station: row.try_get(4)?,
            created_at: row.try_get(5)?,
        },
        progress: PrinterProgress {
            cursor: row.try_get(6)?,
            sending: row.try_get(7)?,
            printed: row.try_get(8)?,
            last_printed_at: row.try_get(9)?,
            last_error: row.try_get(10)?,
            last_error_at: row.try_get(11)?,
        },
    })
}

pub(crate) async fn insert(conn: &mut PgConnection, printer: &Printer) -> Result<(), PgError> {
    shops::require(&mut *conn, printer.shop_id).await?;
    // It starts after the newest committed event: events still in flight
    // commit with higher ids (a shop's ids commit in order), so they print.
    let cursor = events::last_id(&mut *conn, printer.shop_id).await?;
    let inserted = sqlx::query(
        "insert into printers (shop_id, printer_id, name, address, station, created_at,
                               cursor_event_id)
         values ($1, $2, $3, $4, $5, $6, $7)
         on conflict on constraint printers_name_key do nothing",
    )
    .bind(printer.shop_id)
    .bind(printer.printer_id)
    .bind(&printer.name)
    .bind(&printer.address)
    .bind(&printer.station)
    .bind(printer.created_at)
    .bind(cursor)
    .execute(conn)
    .await?;
    if inserted.rows_affected() == 0 {
        return Err(Rejection::PrinterNameTaken {
            name: printer.name.clone(),
        }
        .into());
    }
    Ok(())
}

pub(crate) async fn of_shop(
    conn: &mut PgConnection,
    shop_id: Uuid,
) -> Result<Vec<PrinterState>, PgError> {
    shops::require(&mut *conn, shop_id).await?;
    Ok(
        sqlx::query(concat!(select!(), " where shop_id = $1 order by name"))
            .bind(shop_id)
            .try_map(from_row)
            .fetch_all(conn)
            .await?,
    )
}

pub(crate) async fn all(conn: &mut PgConnection) -> Result<Vec<Printer>, PgError> {
    Ok(sqlx::query(select!())
        .try_map(|row| from_row(row).map(|state| state.printer))
        .fetch_all(conn)
        .await?)
}

pub(crate) async fn find(
    conn: &mut PgConnection,
    printer_id: Uuid,
) -> Result<Option<PrinterState>, PgError> {
    Ok(sqlx::query(concat!(select!(), " where printer_id = $1"))
        .bind(printer_id)
        .try_map(from_row)
        .fetch_optional(conn)
        .await?)
}

pub(crate) async fn delete(conn: &mut PgConnection, printer_id: Uuid) -> Result<(), PgError> {
    let deleted = sqlx::query("delete from printers where printer_id = $1")
        .bind(printer_id)
        .execute(conn)
        .await?;
    if deleted.rows_affected() == 0 {
        return Err(Rejection::NotFound("printer").into());
    }
    Ok(())
}

pub(crate) async fn request_reprint(
    tx: &mut Tx,
    printer_id: Uuid,
    order_id: Uuid,
    now: Timestamp,
) -> Result<i64, PgError> {
    let printer = find(tx.conn(), printer_id)
        .await?
        .ok_or(Rejection::NotFound("printer"))?
        .printer;
    orders::find(tx.conn(), printer.shop_id, order_id)
        .await?
        .filter(|order| order.shop_id == printer.shop_id)
        .ok_or(Rejection::NotFound("order"))?;
    events::append(
        tx,
        printer.shop_id,
        EventType::TicketReprint,
        // For the staff's streams only: the table's guests have no use for it.
        None,
        &ReprintRequested {
            printer_id,
            order_id,
        },
        now,
    )
    .await
}

/// The printer's lease, if no other session holds it.
pub(crate) async fn lease(
    pool: &PgPool,
    printer_id: Uuid,
) -> StoreResult<Option<Box<dyn PrinterLease>>> {
    // Out of the pool for good: the lock lives as long as this session, and
    // a pooled connection would carry it to whoever borrows it next.
    let mut conn = pool.acquire().await.map_err(cannot_connect)?.detach();
    let held: bool = sqlx::query_scalar("select pg_try_advisory_lock(hashtextextended($1, 0))")
        .bind(format!("ordergate printer {printer_id}"))
        .fetch_one(&mut conn)
        .await
        .map_err(classify)?;
    if !held {
        return Ok(None);
    }
    // Every later statement names the shop: on Citus, its worker alone.
    let shop_id = find(&mut conn, printer_id)
        .await?
        .map(|state| state.printer.shop_id);
    Ok(Some(Box::new(PgLease {
        conn,
        printer_id,
        shop_id,
    })))
}

struct PgLease {
    conn: PgConnection,
    printer_id: Uuid,
    /// `None` when the printer was gone when it was leased.
    shop_id: Option<Uuid>,
}

#[async_trait]
impl PrinterLease for PgLease {
    async fn progress(&mut self) -> StoreResult<Option<PrinterProgress>> {
        let Some(shop_id) = self.shop_id else {
            return Ok(None);
        };
        Ok(sqlx::query(concat!(
            select!(),
            " where shop_id = $1 and printer_id = $2"
        ))
        .bind(shop_id)
        .bind(self.printer_id)
        .try_map(from_row)
        .fetch_optional(&mut self.conn)
        .await
        .map_err(classify)?
        .map(|state| state.progress))
    }

    async fn record(&mut self, step: PrintStep, now: Timestamp) -> StoreResult<()> {
        let Some(shop_id) = self.shop_id else {
            return Ok(());
        };
        let query = match &step {
            PrintStep::Passed(event_id) => sqlx::query(
                "update printers set cursor_event_id = greatest(cursor_event_id, $3)
                 where shop_id = $1 and printer_id = $2",
            )
            .bind(shop_id)
            .bind(self.printer_id)
            .bind(event_id),
            PrintStep::Sending(event_id) => sqlx::query(
                "update printers set sending_event_id = $3
                     where shop_id = $1 and printer_id = $2",
            )
            .bind(shop_id)
            .bind(self.printer_id)
            .bind(event_id),
            PrintStep::Printed(event_id) => sqlx::query(
                "update printers set cursor_event_id = greatest(cursor_event_id, $3),
                     sending_event_id = null, printed = printed + 1, last_printed_at = $4,
                     last_error = null, last_error_at = null
                 where shop_id = $1 and printer_id = $2",
            )
            .bind(shop_id)
            .bind(self.printer_id)
            .bind(event_id)
            .bind(now),
            PrintStep::Failed {
                error,
                nothing_sent,
            } => sqlx::query(
                "update printers set last_error = $3, last_error_at = $4,
                     sending_event_id = case when $5 then null else sending_event_id end
                 where shop_id = $1 and printer_id = $2",
            )
            .bind(shop_id)
            .bind(self.printer_id)
            .bind(error)
            .bind(now)
            .bind(nothing_sent),
        };
        query.execute(&mut self.conn).await.map_err(classify)?;
        Ok(())
    }
}
