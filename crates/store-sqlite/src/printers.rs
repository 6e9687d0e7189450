//! Kitchen printers and their progress through the shop's event log.

use ordergate_domain::events::EventType;
use ordergate_domain::printing::{Printer, PrinterProgress, ReprintRequested};
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::{PrintStep, PrinterState};
use rusqlite::{Connection, OptionalExtension, Row, params};
use uuid::Uuid;

use crate::codec::{millis, opt_time, time, uuid};
use crate::error::SqliteError;
use crate::{events, orders, shops};

const COLUMNS: &str = "printer_id, shop_id, name, address, station, created_at, \
                       cursor_event_id, sending_event_id, printed, last_printed_at, \
                       last_error, last_error_at";

fn from_row(row: &Row) -> rusqlite::Result<PrinterState> {
    Ok(PrinterState {
        printer: Printer {
            printer_id: uuid(row, 0)?,
            shop_id: uuid(row, 1)?,
            name: row.get(2)?,
            address: row.get(3)?,
            station: row.get(4)?,
            created_at: time(row, 5)?,
        },
        progress: PrinterProgress {
            cursor: row.get(6)?,
            sending: row.get(7)?,
            printed: row.get(8)?,
            last_printed_at: opt_time(row, 9)?,
            last_error: row.get(10)?,
            last_error_at: opt_time(row, 11)?,
        },
    })
}

pub(crate) fn insert(conn: &Connection, printer: &Printer) -> Result<(), SqliteError> {
    shops::require(conn, printer.shop_id)?;
    let taken: bool = conn
        .prepare_cached("select exists (select 1 from printers where shop_id = ?1 and name = ?2)")?
        .query_row(params![printer.shop_id.to_string(), printer.name], |row| {
            row.get(0)
        })?;
    if taken {
        return Err(Rejection::PrinterNameTaken {
            name: printer.name.clone(),
        }
        .into());
    }
    conn.prepare_cached(
        "insert into printers (shop_id, printer_id, name, address, station, created_at,
                               cursor_event_id)
         values (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        printer.shop_id.to_string(),
        printer.printer_id.to_string(),
        printer.name,
        printer.address,
        printer.station,
        millis(printer.created_at),
        events::last_id(conn, printer.shop_id)?
    ])?;
    Ok(())
}

pub(crate) fn of_shop(conn: &Connection, shop_id: Uuid) -> Result<Vec<PrinterState>, SqliteError> {
    shops::require(conn, shop_id)?;
    let mut stmt = conn.prepare_cached(&format!(
        "select {COLUMNS} from printers where shop_id = ?1 order by name"
    ))?;
    let printers = stmt
        .query_map([shop_id.to_string()], from_row)?
        .collect::<Result<_, _>>()?;
    Ok(printers)
}

pub(crate) fn all(conn: &Connection) -> Result<Vec<Printer>, SqliteError> {
    let mut stmt = conn.prepare_cached(&format!("select {COLUMNS} from printers"))?;
    let printers = stmt
        .query_map([], |row| from_row(row).map(|state| state.printer))?
        .collect::<Result<_, _>>()?;
    Ok(printers)
}

pub(crate) fn find(
    conn: &Connection,
    printer_id: Uuid,
) -> Result<Option<PrinterState>, SqliteError> {
    Ok(conn
        .prepare_cached(&format!(
            "select {COLUMNS} from printers where printer_id = ?1"
        ))?
        .query_row([printer_id.to_string()], from_row)
        .optional()?)
}

pub(crate) fn delete(conn: &Connection, printer_id: Uuid) -> Result<(), SqliteError> {
    let deleted = conn
        .prepare_cached("delete from printers where printer_id = ?1")?
        .execute([printer_id.to_string()])?;
    if deleted == 0 {
        return Err(Rejection::NotFound("printer").into());
    }
    Ok(())
}

pub(crate) fn request_reprint(
    conn: &Connection,
    printer_id: Uuid,
    order_id: Uuid,
    now: Timestamp,
) -> Result<i64, SqliteError> {
    let printer = find(conn, printer_id)?
        .ok_or(Rejection::NotFound("printer"))?
        .printer;
    orders::find(conn, order_id)?
        .filter(|order| order.shop_id == printer.shop_id)
        .ok_or(Rejection::NotFound("order"))?;
    events::append(
        conn,
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
}

pub(crate) fn record(
    conn: &Connection,
    printer_id: Uuid,
    step: &PrintStep,
    now: Timestamp,
) -> Result<(), SqliteError> {
    let id = printer_id.to_string();
    let statement = |sql: &str, values: &[&dyn rusqlite::ToSql]| -> Result<(), SqliteError> {
        conn.prepare_cached(sql)?.execute(values)?;
        Ok(())
    };
    match step {
        PrintStep::Passed(event_id) => statement(
            "update printers set cursor_event_id = max(cursor_event_id, ?2)
             where printer_id = ?1",
            params![id, event_id],
        ),
        PrintStep::Sending(event_id) => statement(
            "update printers set sending_event_id = ?2 where printer_id = ?1",
            params![id, event_id],
        ),
        PrintStep::Printed(event_id) => statement(
            "update printers set cursor_event_id = max(cursor_event_id, ?2),
                 sending_event_id = null, printed = printed + 1, last_printed_at = ?3,
                 last_error = null, last_error_at = null
             where printer_id = ?1",
            params![id, event_id, millis(now)],
        ),
        PrintStep::Failed {
            error,
            nothing_sent,
        } => statement(
            "update printers set last_error = ?2, last_error_at = ?3,
                 sending_event_id = case when ?4 then null else sending_event_id end
             where printer_id = ?1",
            params![id, error, millis(now), nothing_sent],
        ),
    }
}
