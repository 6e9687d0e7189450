//! Staff writes, one dispatch with or without an `Idempotency-Key`: the
//! key taken, looked up, the write performed and recorded, in one
//! transaction.

use std::time::Duration;

use ordergate_domain::order::admission::KeyLookup;
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::{Answer, Claim, StaffWrite};

use crate::error::{PgError, is_lock_timeout};
use crate::idempotency;
use crate::routes::Routes;
use crate::tx::{LOCK_TIMEOUT, Tx};
use crate::{inventory, orders, printers, sessions, shops, tables};

/// Takes the claim's key, waiting at most `wait` for a request (on any node)
/// that holds it: past that, `RequestInProgress`.
pub(crate) async fn take_key(tx: &mut Tx, claim: &Claim, wait: Duration) -> Result<(), PgError> {
    tx.lock_timeout(wait).await?;
    // The write itself may wait as long as any other (a checkout behind an
    // order at the table, say).
    match idempotency::lock(tx, claim, LOCK_TIMEOUT).await {
        Err(e) if is_lock_timeout(&e) => Err(Rejection::RequestInProgress.into()),
        other => other,
    }
}

/// A staff write, under its claim when it has one (whose key this
/// transaction holds): replayed, refused, or written with its response.
pub(crate) async fn write(
    tx: &mut Tx,
    routes: &Routes,
    claim: Option<&Claim>,
    write: StaffWrite,
    now: Timestamp,
) -> Result<Answer, PgError> {
    let shop_id = match &write {
        StaffWrite::CreateShop(shop, _) => shop.shop_id,
        StaffWrite::CreateTable(table, _) => table.shop_id,
        StaffWrite::CreatePrinter(printer, _) => printer.shop_id,
        StaffWrite::OpenSession(session, _) => session.shop_id,
        StaffWrite::Restock { shop_id, .. } => *shop_id,
        StaffWrite::Checkout { session_id, .. } => {
            routes.require(tx.conn(), *session_id, "session").await?
        }
        StaffWrite::SetOrderStatus { order_id, .. } | StaffWrite::RecallOrder { order_id, .. } => {
            routes.require(tx.conn(), *order_id, "order").await?
        }
    };
    if let Some(claim) = claim {
        // A new shop's id is drawn anew by each attempt: its key's record
        // is looked for under every shop.
        let filed_under = (!matches!(write, StaffWrite::CreateShop(..))).then_some(shop_id);
        let record = idempotency::record(tx.conn(), claim, filed_under, now).await?;
        match claim.judge(record, now) {
            KeyLookup::Absent => {}
            KeyLookup::Replay(response) => return Ok(Answer::Replayed(response)),
            KeyLookup::Mismatch => return Err(Rejection::IdempotencyKeyReused.into()),
        }
    }
    let response = match write {
        StaffWrite::CreateShop(shop, render) => {
            shops::insert(tx.conn(), &shop).await?;
            render(&shop)
        }
        StaffWrite::CreateTable(table, render) => {
            tables::insert(tx.conn(), &table).await?;
            render(&table)
        }
        StaffWrite::CreatePrinter(printer, render) => {
            printers::insert(tx.conn(), &printer).await?;
            render(&printer)
        }
        StaffWrite::OpenSession(session, render) => {
            sessions::open(tx, &session).await?;
            render(&session)
        }
        StaffWrite::Restock {
            item_id,
            quantity,
            actor,
            now,
            render,
            ..
        } => {
            let item = inventory::restock(tx, shop_id, item_id, quantity, &actor, now).await?;
            render(&item)
        }
        StaffWrite::Checkout {
            session_id,
            now,
            render,
        } => {
            let bill = sessions::checkout(tx, shop_id, session_id, now).await?;
            render(&bill)
        }
        StaffWrite::SetOrderStatus {
            order_id,
            change,
            now,
            render,
        } => {
            let order = orders::set_status(tx, shop_id, order_id, &change, now).await?;
            render(&order)
        }
        StaffWrite::RecallOrder {
            order_id,
            recall,
            now,
            render,
        } => {
            let order = orders::recall(tx, shop_id, order_id, &recall, now).await?;
            render(&order)
        }
    };
    if let Some(claim) = claim {
        idempotency::complete(tx, claim, shop_id, &response, now).await?;
    }
    Ok(Answer::Fresh(response))
}
