//! The exactly-once order path: every rule decided and every row written in
//! one job on the writer thread, which is also the session lock (SQLite has
//! one writer; same-table orders queue behind each other in order). The
//! rules are `ordergate_domain`'s ([`admit`], [`Referenced::price`],
//! [`Priced::take_stock`]); this module reads what they need and writes
//! what they decide.

use std::collections::HashMap;

use ordergate_domain::events::EventType;
use ordergate_domain::inventory::{Cause, Operation};
use ordergate_domain::order::ItemLookup;
use ordergate_domain::order::admission::{Caller, GuestHistory, GuestReads};
use ordergate_domain::order::placement::{Referenced, referenced_ids};
use ordergate_domain::session::Session;
use ordergate_domain::shop::Shop;
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::{Decided, KeyRecord, Ordered, PlaceOrder, Placed};
use rusqlite::{Connection, OptionalExtension, params};
use uuid::Uuid;

use crate::codec::{millis, stored_time};
use crate::error::SqliteError;
use crate::idempotency;
use crate::orders::{self, COLUMNS, FROM, from_row};
use crate::replays::{ReplayCache, Seen};
use crate::{audit, catalog, events, inventory, sessions, shops};

/// Places an order or refuses it, and files the audit row either way: a
/// refusal is an `Ok` outcome, so its audit row (and PIN count) commit.
/// For a guest order placed or replayed, also what [`ReplayCache`]
/// remembers of it.
pub(crate) fn place(
    conn: &Connection,
    cmd: &PlaceOrder,
    replays: &ReplayCache,
) -> Result<(Ordered, Option<Seen>), SqliteError> {
    let stamp = replays.stamp();
    let Some(session) = sessions::find(conn, cmd.session_id)? else {
        return Err(Rejection::NotFound("session").into());
    };
    let shop_id = session.shop_id;
    let record = match &cmd.claim {
        Some(claim) => idempotency::record(conn, claim, cmd.now)?,
        None => None,
    };
    let replayed_expiry = record.as_ref().map(|record| record.expires_at);
    let (outcome, audited) = decide(conn, cmd, &session, record)?.outcome();
    if audited {
        audit::append_at(conn, shop_id, &cmd.audit_entry(&outcome))?;
    }
    let seen = match (&outcome, &cmd.claim, &cmd.caller) {
        (Ok(placed), Some(claim), Caller::Guest { .. }) => {
            let expires_at = match (placed.replayed, replayed_expiry) {
                (true, Some(expires_at)) => expires_at,
                _ => stored_time(claim.expires_at),
            };
            let ended = replays.stamp();
            // A PIN judged on the way wrote the session: a retry is judged
            // by the session as this job left it.
            let session = match ended == stamp {
                true => session,
                false => {
                    sessions::find(conn, cmd.session_id)?.ok_or(Rejection::NotFound("session"))?
                }
            };
            Some(Seen {
                session,
                expires_at,
                stamp: ended,
            })
        }
        _ => None,
    };
    Ok((
        Ordered {
            shop_id,
            outcome,
            audited,
        },
        seen,
    ))
}

/// Steps 1–8 of the contract, in its order. Nothing is written before the
/// last check passes, except a wrong PIN's count.
fn decide(
    conn: &Connection,
    cmd: &PlaceOrder,
    session: &Session,
    record: Option<KeyRecord>,
) -> Result<Decided, SqliteError> {
    let pin = match cmd.caller.pin_to_judge() {
        Some(pin) => Some(sessions::judge_pin(
            conn,
            session,
            pin,
            cmd.rules.pin_policy,
            cmd.now,
        )?),
        None => None,
    };
    let key = cmd.claim.as_ref().map(|claim| claim.judge(record, cmd.now));
    let history = match cmd.rules.guest_reads(&cmd.caller, &cmd.order, cmd.now) {
        Some(reads) => guest_history(conn, session, cmd.order.payload_hash.as_str(), &reads)?,
        None => GuestHistory::default(),
    };
    match cmd.admit(session, pin, key, history)? {
        Some(decided) => Ok(decided),
        None => Ok(commit(conn, cmd, session)?.into()),
    }
}

/// The session's earlier orders the guest rules asked for.
fn guest_history(
    conn: &Connection,
    session: &Session,
    payload_hash: &str,
    reads: &GuestReads<'_>,
) -> Result<GuestHistory, SqliteError> {
    let session_id = session.session_id.to_string();
    let mut history = GuestHistory::default();
    if let Some(since) = reads.same_payload_since {
        history.same_payload = conn
            .prepare_cached(&format!(
                "select {COLUMNS} {FROM}
                 where o.session_id = ?1 and o.client_id = ?2 and o.payload_hash = ?3
                   and o.created_at > ?4 and o.status != 'cancelled'
                 order by o.created_at desc limit 1"
            ))?
            .query_row(
                params![session_id, reads.client_id, payload_hash, millis(since)],
                from_row,
            )
            .optional()?;
    }
    if let Some(since) = reads.last_order_since {
        let last: Option<i64> = conn
            .prepare_cached(
                "select max(created_at) from orders
                 where session_id = ?1 and client_id = ?2 and created_at > ?3",
            )?
            .query_row(params![session_id, reads.client_id, millis(since)], |row| {
                row.get(0)
            })?;
        history.last_order_at = last.and_then(Timestamp::from_timestamp_millis);
    }
    if let Some(recent) = reads.recent_guest_orders {
        let nth: Option<i64> = conn
            .prepare_cached(
                "select created_at from orders
                 where session_id = ?1 and source = 'guest' and created_at > ?2
                 order by created_at desc limit 1 offset ?3",
            )?
            .query_row(
                params![session_id, millis(recent.since), recent.nth],
                |row| row.get(0),
            )
            .optional()?;
        history.nth_recent_at = nth.and_then(Timestamp::from_timestamp_millis);
    }
    Ok(history)
}

/// Step 8: catalog, prices, stock, ticket, order, event, idempotency record.
fn commit(
    conn: &Connection,
    cmd: &PlaceOrder,
    session: &Session,
) -> Result<Result<Placed, Rejection>, SqliteError> {
    let shop = shops::require(conn, session.shop_id)?;
    let referenced = referenced_catalog(conn, cmd, &shop)?;
    let priced = match referenced.price(&cmd.order) {
        Ok(priced) => priced,
        Err(rejection) => return Ok(Err(rejection)),
    };
    let levels = inventory::levels(conn, shop.shop_id, &priced.stock_ids())?;
    let moves = match priced.take_stock(&levels, cmd.now) {
        Ok(moves) => moves,
        Err(rejection) => return Ok(Err(rejection)),
    };
    let actor = cmd.caller.actor();
    let cause = Cause {
        order_id: Some(cmd.order_id),
        ..Cause::new(Operation::Order, &actor, cmd.now)
    };
    inventory::apply_moves(conn, shop.shop_id, &moves, &cause)?;

    let day = shop.timezone.day_of(cmd.now);
    let ticket_number = next_ticket(conn, shop.shop_id, &day)?;
    let order = priced.into_order(cmd.placing(session), ticket_number);
    orders::insert(conn, &order, &day, cmd.order.payload_hash.as_str())?;
    events::append(
        conn,
        shop.shop_id,
        EventType::OrderPlaced,
        Some(session.session_id),
        &order,
        cmd.now,
    )?;
    let placed = Placed::fresh(&order, cmd.receipt);
    if let Some(claim) = &cmd.claim {
        idempotency::complete(conn, claim, Some(shop.shop_id), &placed.response, cmd.now)?;
    }
    Ok(Ok(placed))
}

/// Draws the shop's next ticket number of `day`. Read, then written, by
/// the only writer: an upsert `returning` the number cost a journal of
/// its own for each order (SQLite runs `returning` as a trigger, and gives
/// a statement with triggers that may fail one); these two do not.
fn next_ticket(conn: &Connection, shop_id: Uuid, day: &str) -> Result<i64, SqliteError> {
    let shop = shop_id.to_string();
    let last: Option<i64> = conn
        .prepare_cached(
            "select last_number from ticket_counters where shop_id = ?1 and ticket_day = ?2",
        )?
        .query_row(params![shop, day], |row| row.get(0))
        .optional()?;
    let next = last.unwrap_or(0) + 1;
    match last {
        Some(_) => conn.prepare_cached(
            "update ticket_counters set last_number = ?3 where shop_id = ?1 and ticket_day = ?2",
        )?,
        None => conn.prepare_cached(
            "insert into ticket_counters (shop_id, ticket_day, last_number) values (?1, ?2, ?3)",
        )?,
    }
    .execute(params![shop, day, next])?;
    Ok(next)
}

/// The catalog entries an order names.
fn referenced_catalog(
    conn: &Connection,
    cmd: &PlaceOrder,
    shop: &Shop,
) -> Result<Referenced, SqliteError> {
    let languages = shop.languages.clone();
    let shop = shop.shop_id.to_string();
    let catalog_version: i64 = conn
        .prepare_cached("select catalog_version from shops where shop_id = ?1")?
        .query_row([&shop], |row| row.get(0))?;
    let (item_ids, topping_ids) = referenced_ids(&cmd.order);
    let mut items = HashMap::new();
    for item_id in item_ids {
        if let Some((item, retired)) = catalog::menu_item(conn, &shop, item_id)? {
            items.insert(item_id, ItemLookup::found(item, retired));
        }
    }
    let mut toppings = HashMap::new();
    for topping_id in topping_ids {
        if let Some(topping) = catalog::active_topping(conn, &shop, topping_id)? {
            toppings.insert(topping_id, topping);
        }
    }
    Ok(Referenced {
        catalog_version,
        items,
        toppings,
        languages,
    })
}
