//! The exactly-once order path: every rule decided and every row written in
//! one job on the writer thread, which is also the session lock (SQLite has
//! one writer; same-table orders queue behind each other in order).

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use ordergate_domain::catalog::Topping;
use ordergate_domain::events::ORDER_PLACED;
use ordergate_domain::inventory::{Operation, StockLevel};
use ordergate_domain::order::{
    ItemLookup, Order, OrderReceipt, OrderSource, OrderStatus, Shortage, price_lines, stock_needed,
    ticket_day,
};
use ordergate_domain::session::{
    GuestProof, PinPolicy, SESSION_ORDER_WINDOW, Session, SessionStatus,
};
use ordergate_domain::{Rejection, Timestamp};
use ordergate_store::{
    Caller, Claim, Decided, Ordered, PinOutcome, PlaceOrder, Placed, Replay, StoredResponse,
};
use rusqlite::{Connection, OptionalExtension, params};
use uuid::Uuid;

use crate::codec::millis;
use crate::error::SqliteError;
use crate::idempotency::{self, Lookup};
use crate::orders::{COLUMNS, FROM, from_row};
use crate::replays::Committed;
use crate::{audit, catalog, events, inventory, sessions, shops};

/// Places an order or refuses it, and files the audit row either way: a
/// refusal is an `Ok` outcome, so its audit row (and PIN count) commit.
pub(crate) fn place(conn: &Connection, cmd: &PlaceOrder) -> Result<Ordered, SqliteError> {
    let Some(session) = sessions::find(conn, cmd.session_id)? else {
        return Err(Rejection::NotFound("session").into());
    };
    let (outcome, audited) = decide(conn, cmd, &session)?.outcome();
    if audited {
        audit::append(conn, &[cmd.audit_entry(&outcome)])?;
    }
    Ok(Ordered {
        shop_id: session.shop_id,
        outcome,
        audited,
    })
}

/// A replay answered from committed data, when nothing else could change
/// the answer: the PIN is right with no failures to reset, and the key's
/// record matches. Anything else goes down the full path.
pub(crate) fn committed_replay(
    conn: &Connection,
    session_id: Uuid,
    proof: &GuestProof,
    claim: &Claim,
    policy: PinPolicy,
    now: Timestamp,
) -> Result<Option<Committed>, SqliteError> {
    let Some(session) = sessions::find(conn, session_id)? else {
        return Ok(None);
    };
    if !session.admits_as_is(proof, policy, now) {
        return Ok(None);
    }
    let Lookup::Replay {
        response,
        expires_at,
    } = idempotency::lookup(conn, claim, now)?
    else {
        return Ok(None);
    };
    Ok(Some(Committed {
        replay: Replay {
            shop_id: session.shop_id,
            order_id: receipt_order_id(&response)?,
            response,
        },
        fingerprint: claim.fingerprint.clone(),
        expires_at,
        session,
    }))
}

/// Steps 1–8 of the contract, in its order. Nothing is written before the
/// last check passes, except a wrong PIN's count.
fn decide(conn: &Connection, cmd: &PlaceOrder, session: &Session) -> Result<Decided, SqliteError> {
    if let Caller::Guest {
        proof: GuestProof::Pin(pin),
        ..
    } = &cmd.caller
    {
        match sessions::judge_pin(conn, session, pin.as_deref(), cmd.rules.pin_policy, cmd.now)? {
            PinOutcome::Accepted(_) => {}
            PinOutcome::Invalid => return Ok(Err(Rejection::PinInvalid).into()),
            PinOutcome::Locked { until } => {
                return Ok(Decided::Unjudged(Rejection::PinLocked { until }));
            }
            PinOutcome::Gone => return Ok(Decided::Unjudged(Rejection::SessionClosed)),
        }
    }
    if let Some(claim) = &cmd.claim {
        match idempotency::lookup(conn, claim, cmd.now)? {
            Lookup::Absent => {}
            Lookup::Mismatch => return Ok(Err(Rejection::IdempotencyKeyReused).into()),
            Lookup::Replay { response, .. } => {
                let order_id = receipt_order_id(&response)?;
                return Ok(Ok(Placed {
                    order_id,
                    response,
                    replayed: true,
                })
                .into());
            }
        }
    }
    if session.status == SessionStatus::Closed {
        return Ok(Err(Rejection::SessionClosed).into());
    }
    if let Caller::Guest { client_id, .. } = &cmd.caller {
        let window = cmd.rules.duplicate_window;
        if !cmd.order.allow_repeat && window > chrono::Duration::zero() {
            let mut stmt = conn.prepare_cached(&format!(
                "select {COLUMNS} {FROM}
                 where o.session_id = ?1 and o.client_id = ?2 and o.payload_hash = ?3
                   and o.created_at > ?4 and o.status != 'cancelled'
                 order by o.created_at desc limit 1"
            ))?;
            let original = stmt
                .query_row(
                    params![
                        session.session_id.to_string(),
                        client_id.as_str(),
                        cmd.order.payload_hash,
                        millis(cmd.now - window)
                    ],
                    from_row,
                )
                .optional()?;
            if let Some(original) = original {
                return Ok(Err(Rejection::DuplicatePayload {
                    original: Box::new(original),
                })
                .into());
            }
        }
        let cooldown = cmd.rules.cooldown;
        if cooldown > chrono::Duration::zero() {
            let last: Option<i64> = conn
                .prepare_cached(
                    "select max(created_at) from orders where session_id = ?1 and client_id = ?2",
                )?
                .query_row(
                    params![session.session_id.to_string(), client_id.as_str()],
                    |row| row.get(0),
                )?;
            let until = last
                .and_then(Timestamp::from_timestamp_millis)
                .map(|last| last + cooldown)
                .filter(|until| *until > cmd.now);
            if let Some(until) = until {
                return Ok(Err(Rejection::CooldownActive { until }).into());
            }
        }
        let limit = cmd.rules.session_order_limit;
        if limit > 0 {
            // The limit-th newest guest order in the window: while there is
            // one, the window is full until it leaves.
            let nth: Option<i64> = conn
                .prepare_cached(
                    "select created_at from orders
                     where session_id = ?1 and source = 'guest' and created_at > ?2
                     order by created_at desc limit 1 offset ?3",
                )?
                .query_row(
                    params![
                        session.session_id.to_string(),
                        millis(cmd.now - SESSION_ORDER_WINDOW),
                        limit - 1
                    ],
                    |row| row.get(0),
                )
                .optional()?;
            if let Some(until) = nth
                .and_then(Timestamp::from_timestamp_millis)
                .map(|nth| nth + SESSION_ORDER_WINDOW)
            {
                return Ok(Err(Rejection::SessionRateLimited { until }).into());
            }
        }
    }
    if Instant::now() > cmd.rules.busy_deadline {
        return Ok(Err(Rejection::SessionBusy).into());
    }
    Ok(commit(conn, cmd, session)?.into())
}

fn receipt_order_id(response: &StoredResponse) -> Result<Uuid, SqliteError> {
    /// Only the id: building the whole receipt as a JSON value was a
    /// sixth of a replay's read.
    #[derive(serde::Deserialize)]
    struct Receipt {
        #[serde(rename = "orderId")]
        order_id: Uuid,
    }
    let receipt: Receipt = serde_json::from_str(&response.body)?;
    Ok(receipt.order_id)
}

/// Step 8: catalog, prices, stock, ticket, order, event, idempotency record.
fn commit(
    conn: &Connection,
    cmd: &PlaceOrder,
    session: &Session,
) -> Result<Result<Placed, Rejection>, SqliteError> {
    let shop = shops::require(conn, session.shop_id)?;
    let catalog_version: i64 = conn
        .prepare_cached("select catalog_version from shops where shop_id = ?1")?
        .query_row([shop.shop_id.to_string()], |row| row.get(0))?;
    if catalog_version == 0 {
        return Ok(Err(Rejection::CatalogNotReady));
    }
    let referenced = referenced_catalog(conn, cmd, shop.shop_id)?;
    let lines = match price_lines(
        &cmd.order,
        |id| {
            referenced
                .items
                .get(&id)
                .cloned()
                .unwrap_or(ItemLookup::Unknown)
        },
        |id| referenced.toppings.get(&id).cloned(),
    ) {
        Ok(lines) => lines,
        Err(rejection) => return Ok(Err(rejection)),
    };

    let needed = stock_needed(&lines);
    let levels = stock_levels(conn, shop.shop_id, &needed)?;
    let shortages: Vec<Shortage> = needed
        .iter()
        .filter_map(|(&item_id, &requested)| {
            let available = levels.get(&item_id)?.available(cmd.now)?;
            (available < requested).then_some(Shortage {
                item_id,
                requested,
                available,
            })
        })
        .collect();
    if !shortages.is_empty() {
        return Ok(Err(Rejection::OutOfStock { shortages }));
    }

    let (source, client_id, actor) = match &cmd.caller {
        Caller::Guest { client_id, .. } => (
            OrderSource::Guest,
            Some(client_id.as_str().to_owned()),
            format!("guest:{}", client_id.as_str()),
        ),
        Caller::Staff => (OrderSource::Staff, None, "staff".to_owned()),
    };
    // Ascending id order, as the rule for every backend says: concurrent
    // orders lock stock rows in the same order and cannot deadlock.
    for (&item_id, &quantity) in &needed {
        let Some(before) = levels.get(&item_id).filter(|l| l.stock.is_some()) else {
            continue;
        };
        let after = StockLevel {
            stock: before.stock.map(|s| s - quantity),
            ..before.clone()
        };
        let order_id = Some(cmd.order_id);
        inventory::change_level(
            conn,
            shop.shop_id,
            item_id,
            before,
            &after,
            Operation::Order,
            &actor,
            order_id,
            cmd.now,
        )?;
    }

    let day = ticket_day(cmd.now, &shop.timezone);
    let ticket_number: i64 = conn
        .prepare_cached(
            "insert into ticket_counters (shop_id, ticket_day, last_number) values (?1, ?2, 1)
             on conflict (shop_id, ticket_day) do update set last_number = last_number + 1
             returning last_number",
        )?
        .query_row(params![shop.shop_id.to_string(), day], |row| row.get(0))?;
    let order = Order {
        order_id: cmd.order_id,
        shop_id: shop.shop_id,
        session_id: session.session_id,
        table_label: session.table_label.clone(),
        ticket_number,
        status: OrderStatus::Placed,
        source,
        client_id,
        total: lines.iter().map(|l| l.line_total).sum(),
        items: lines,
        note: cmd.order.note.clone(),
        created_at: cmd.now,
        version: 1,
    };
    conn.prepare_cached(
        "insert into orders (order_id, shop_id, session_id, ticket_day, ticket_number, status,
                             source, client_id, payload_hash, lines, note, total, version,
                             created_at, updated_at)
         values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?14)",
    )?
    .execute(params![
        order.order_id.to_string(),
        order.shop_id.to_string(),
        order.session_id.to_string(),
        day,
        order.ticket_number,
        order.status.as_str(),
        order.source.as_str(),
        order.client_id,
        cmd.order.payload_hash,
        serde_json::to_string(&order.items)?,
        order.note,
        order.total,
        order.version,
        millis(order.created_at)
    ])?;
    events::append(
        conn,
        shop.shop_id,
        ORDER_PLACED,
        Some(session.session_id),
        &order,
        cmd.now,
    )?;
    let response = StoredResponse {
        status: 201,
        body: serde_json::to_string(&OrderReceipt {
            order: &order,
            idempotent_replay: false,
        })?,
        location: Some(format!("/api/v1/orders/{}", order.order_id)),
    };
    if let Some(claim) = &cmd.claim {
        idempotency::complete(conn, claim, Some(shop.shop_id), &response, cmd.now)?;
    }
    Ok(Ok(Placed {
        order_id: order.order_id,
        response,
        replayed: false,
    }))
}

/// The catalog entries an order names.
struct Referenced {
    items: HashMap<Uuid, ItemLookup>,
    /// Active toppings only.
    toppings: HashMap<Uuid, Topping>,
}

fn referenced_catalog(
    conn: &Connection,
    cmd: &PlaceOrder,
    shop_id: Uuid,
) -> Result<Referenced, SqliteError> {
    let shop = shop_id.to_string();
    let mut referenced = Referenced {
        items: HashMap::new(),
        toppings: HashMap::new(),
    };
    for line in &cmd.order.lines {
        if let Entry::Vacant(slot) = referenced.items.entry(line.menu_item_id) {
            let lookup = match catalog::menu_item(conn, &shop, line.menu_item_id)? {
                None => ItemLookup::Unknown,
                Some((_, true)) => ItemLookup::Retired,
                Some((item, false)) => ItemLookup::Active(item),
            };
            slot.insert(lookup);
        }
        for &topping_id in &line.topping_ids {
            if let Entry::Vacant(slot) = referenced.toppings.entry(topping_id)
                && let Some(topping) = catalog::active_topping(conn, &shop, topping_id)?
            {
                slot.insert(topping);
            }
        }
    }
    Ok(referenced)
}

fn stock_levels(
    conn: &Connection,
    shop_id: Uuid,
    needed: &BTreeMap<Uuid, i64>,
) -> Result<HashMap<Uuid, StockLevel>, SqliteError> {
    let mut levels = HashMap::new();
    for &item_id in needed.keys() {
        if let Some(level) = inventory::level(conn, shop_id, item_id)? {
            levels.insert(item_id, level);
        }
    }
    Ok(levels)
}
