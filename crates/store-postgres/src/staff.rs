//! Staff writes, one dispatch with or without an `Idempotency-Key`: the
//! key taken, looked up, the write performed and recorded, in one
//! transaction.

use std::time::Duration;

use ordergate_domain::order::admission::KeyLookup;
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::{Answer, Claim, StaffWrite};

use crate::error::{PgError, is_lock_timeout};
use crate::idempotency;
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
    claim: Option<&Claim>,
    write: StaffWrite,
    now: Timestamp,
) -> Result<Answer, PgError> {
    if let Some(claim) = claim {
        match claim.judge(idempotency::record(tx.conn(), claim, now).await?, now) {
            KeyLookup::Absent => {}
            KeyLookup::Replay(response) => return Ok(Answer::Replayed(response)),
            KeyLookup::Mismatch => return Err(Rejection::IdempotencyKeyReused.into()),
        }
    }
    let (shop_id, response) = match write {
        StaffWrite::CreateShop(shop, render) => {
            shops::insert(tx.conn(), &shop).await?;
            (shop.shop_id, render(&shop))
        }
        StaffWrite::CreateTable(table, render) => {
            tables::insert(tx.conn(), &table).await?;
            (table.shop_id, render(&table))
        }
        StaffWrite::CreatePrinter(printer, render) => {
            printers::insert(tx.conn(), &printer).await?;
            (printer.shop_id, render(&printer))
        }
        StaffWrite::OpenSession(session, render) => {
            sessions::open(tx, &session).await?;
            (session.shop_id, render(&session))
        }
        StaffWrite::Restock {
            shop_id,
            item_id,
            quantity,
            actor,
            now,
            render,
        } => {
            let item = inventory::restock(tx, shop_id, item_id, quantity, &actor, now).await?;
            (shop_id, render(&item))
        }
        StaffWrite::Checkout {
            session_id,
            now,
            render,
        } => {
            let (bill, shop_id) = sessions::checkout(tx, session_id, now).await?;
            (shop_id, render(&bill))
        }
        StaffWrite::SetOrderStatus {
            order_id,
            change,
            now,
            render,
        } => {
            let order = orders::set_status(tx, order_id, &change, now).await?;
            (order.shop_id, render(&order))
        }
        StaffWrite::RecallOrder {
            order_id,
            recall,
            now,
            render,
        } => {
            let order = orders::recall(tx, order_id, &recall, now).await?;
            (order.shop_id, render(&order))
        }
    };
    if let Some(claim) = claim {
        idempotency::complete(tx, claim, shop_id, &response, now).await?;
    }
    Ok(Answer::Fresh(response))
}
