//! The exactly-once order path, decided and committed in one transaction.
//!
//! The transaction first takes the request's idempotency key (an advisory
//! lock: the same key on any node waits its turn, then replays), then the
//! session row (`for update`: orders, PIN attempts and checkout at one
//! table take turns), and only then decides every rule in the contract's
//! order, from what is committed at that moment. Both waits are bounded by
//! `lock_timeout`; one that runs out ends the attempt as `SessionBusy`,
//! audited in a fresh transaction (the first one is aborted).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ordergate_domain::catalog::{MenuItem, Topping};
use ordergate_domain::events::ORDER_PLACED;
use ordergate_domain::inventory::Operation;
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
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgRow};
use uuid::Uuid;

use crate::error::PgError;
use crate::error::is_lock_timeout;
use crate::idempotency::{self, Lookup};
use crate::inventory::{self, Cause};
use crate::orders::{self, select};
use crate::tx::Tx;
use crate::{audit, catalog, events, sessions};

/// Places an order or refuses it, and files the audit row either way: a
/// refusal is an `Ok` outcome, so its audit row (and PIN count) commit.
/// A request still holding the claim's key after `in_flight_wait` (on any
/// node) ends this one as `RequestInProgress`.
pub(crate) async fn place(
    tx: &mut Tx,
    cmd: &PlaceOrder,
    in_flight_wait: Duration,
) -> Result<Ordered, PgError> {
    if let Some(claim) = &cmd.claim {
        tx.lock_timeout(in_flight_wait).await?;
        match idempotency::lock(tx, claim).await {
            Err(e) if is_lock_timeout(&e) => return Err(Rejection::RequestInProgress.into()),
            other => other?,
        }
    }
    // The rest waits no longer than the order is willing to wait for its table.
    let left = cmd
        .rules
        .busy_deadline
        .saturating_duration_since(Instant::now());
    tx.lock_timeout(left).await?;
    let Some(session) = sessions::lock(tx, cmd.session_id).await? else {
        return Err(Rejection::NotFound("session").into());
    };
    let (outcome, audited) = decide(tx, cmd, &session).await?.outcome();
    if audited {
        audit::append(tx.conn(), session.shop_id, &cmd.audit_entry(&outcome)).await?;
    }
    Ok(Ordered {
        shop_id: session.shop_id,
        outcome,
        audited,
    })
}

/// The outcome of an order whose wait for its key (`RequestInProgress`) or
/// its table (`SessionBusy`) ran out, with its audit row.
pub(crate) async fn gave_up(
    tx: &mut Tx,
    cmd: &PlaceOrder,
    rejection: Rejection,
) -> Result<Ordered, PgError> {
    let session = sessions::find(tx.conn(), cmd.session_id)
        .await?
        .ok_or(Rejection::NotFound("session"))?;
    let outcome = Err(rejection);
    audit::append(tx.conn(), session.shop_id, &cmd.audit_entry(&outcome)).await?;
    Ok(Ordered {
        shop_id: session.shop_id,
        outcome,
        audited: true,
    })
}

/// A replay answered from committed data, when nothing else could change
/// the answer: the PIN is right with no failures to reset, and the key's
/// record matches. Anything else goes down the full path.
pub(crate) async fn committed_replay(
    conn: &mut PgConnection,
    session_id: Uuid,
    proof: &GuestProof,
    claim: &Claim,
    policy: PinPolicy,
    now: Timestamp,
) -> Result<Option<Replay>, PgError> {
    let Some(session) = sessions::find(conn, session_id).await? else {
        return Ok(None);
    };
    if !session.admits_as_is(proof, policy, now) {
        return Ok(None);
    }
    let Lookup::Replay(response) = idempotency::lookup(conn, claim, now).await? else {
        return Ok(None);
    };
    Ok(Some(Replay {
        shop_id: session.shop_id,
        order_id: receipt_order_id(&response)?,
        response,
    }))
}

/// Steps 1–8 of the contract, in its order, under the session lock.
/// Nothing is written before the last check passes, except a wrong PIN's
/// count.
async fn decide(tx: &mut Tx, cmd: &PlaceOrder, session: &Session) -> Result<Decided, PgError> {
    if let Caller::Guest {
        proof: GuestProof::Pin(pin),
        ..
    } = &cmd.caller
    {
        let policy = cmd.rules.pin_policy;
        match sessions::judge_pin(tx, session, pin.as_deref(), policy, cmd.now).await? {
            PinOutcome::Accepted(_) => {}
            PinOutcome::Invalid => return Ok(Err(Rejection::PinInvalid).into()),
            PinOutcome::Locked { until } => {
                return Ok(Decided::Unjudged(Rejection::PinLocked { until }));
            }
            PinOutcome::Gone => return Ok(Decided::Unjudged(Rejection::SessionClosed)),
        }
    }
    if let Some(claim) = &cmd.claim {
        match idempotency::lookup(tx.conn(), claim, cmd.now).await? {
            Lookup::Absent => {}
            Lookup::Mismatch => return Ok(Err(Rejection::IdempotencyKeyReused).into()),
            Lookup::Replay(response) => {
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
            let original = sqlx::query(concat!(
                select!(),
                " where o.session_id = $1 and o.client_id = $2 and o.payload_hash = $3
                    and o.created_at > $4 and o.status != 'cancelled'
                  order by o.created_at desc limit 1"
            ))
            .bind(session.session_id)
            .bind(client_id.as_str())
            .bind(&cmd.order.payload_hash)
            .bind(cmd.now - window)
            .try_map(orders::from_row)
            .fetch_optional(tx.conn())
            .await?;
            if let Some(original) = original {
                return Ok(Err(Rejection::DuplicatePayload {
                    original: Box::new(original),
                })
                .into());
            }
        }
        let cooldown = cmd.rules.cooldown;
        if cooldown > chrono::Duration::zero() {
            let last: Option<Timestamp> = sqlx::query_scalar(
                "select max(created_at) from orders where session_id = $1 and client_id = $2",
            )
            .bind(session.session_id)
            .bind(client_id.as_str())
            .fetch_one(tx.conn())
            .await?;
            let until = last
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
            let nth: Option<Timestamp> = sqlx::query_scalar(
                "select created_at from orders
                 where session_id = $1 and source = 'guest' and created_at > $2
                 order by created_at desc limit 1 offset $3",
            )
            .bind(session.session_id)
            .bind(cmd.now - SESSION_ORDER_WINDOW)
            .bind(i64::from(limit - 1))
            .fetch_optional(tx.conn())
            .await?;
            if let Some(nth) = nth {
                let until = nth + SESSION_ORDER_WINDOW;
                return Ok(Err(Rejection::SessionRateLimited { until }).into());
            }
        }
    }
    if Instant::now() > cmd.rules.busy_deadline {
        return Ok(Err(Rejection::SessionBusy).into());
    }
    Ok(commit(tx, cmd, session).await?.into())
}

fn receipt_order_id(response: &StoredResponse) -> Result<Uuid, PgError> {
    let body: serde_json::Value = serde_json::from_str(&response.body)?;
    body["orderId"]
        .as_str()
        .and_then(|id| id.parse().ok())
        .ok_or_else(|| PgError::Corrupt("stored order response without orderId".into()))
}

/// Step 8: catalog, prices, stock, ticket, order, event, idempotency record.
async fn commit(
    tx: &mut Tx,
    cmd: &PlaceOrder,
    session: &Session,
) -> Result<Result<Placed, Rejection>, PgError> {
    let shop_id = session.shop_id;
    let (timezone, catalog_version): (String, i64) =
        sqlx::query("select timezone, catalog_version from shops where shop_id = $1")
            .bind(shop_id)
            .try_map(|row: PgRow| Ok((row.try_get(0)?, row.try_get(1)?)))
            .fetch_optional(tx.conn())
            .await?
            .ok_or(Rejection::NotFound("shop"))?;
    if catalog_version == 0 {
        return Ok(Err(Rejection::CatalogNotReady));
    }
    let referenced = Referenced::load(tx.conn(), cmd, shop_id).await?;
    let lines = match price_lines(
        &cmd.order,
        |id| referenced.item(id),
        |id| referenced.toppings.get(&id).cloned(),
    ) {
        Ok(lines) => lines,
        Err(rejection) => return Ok(Err(rejection)),
    };

    // Every stock row the order touches, locked in ascending id order.
    let needed = stock_needed(&lines);
    let ids: Vec<Uuid> = needed.keys().copied().collect();
    let levels = inventory::lock_levels(tx, shop_id, &ids).await?;
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

    // The ticket before the stock: its counter is locked before the event
    // counter, as in every transaction (see `events::append`).
    let day = ticket_day(cmd.now, &timezone);
    let ticket_number: i64 = sqlx::query_scalar(
        "insert into ticket_counters (shop_id, ticket_day, last_number) values ($1, $2, 1)
         on conflict (shop_id, ticket_day)
             do update set last_number = ticket_counters.last_number + 1
         returning last_number",
    )
    .bind(shop_id)
    .bind(&day)
    .fetch_one(tx.conn())
    .await?;

    let (source, client_id, actor) = match &cmd.caller {
        Caller::Guest { client_id, .. } => (
            OrderSource::Guest,
            Some(client_id.as_str().to_owned()),
            format!("guest:{}", client_id.as_str()),
        ),
        Caller::Staff => (OrderSource::Staff, None, "staff".to_owned()),
    };
    let cause = Cause {
        order_id: Some(cmd.order_id),
        ..Cause::new(Operation::Order, &actor, cmd.now)
    };
    for (item_id, &quantity) in &needed {
        let Some(before) = levels.get(item_id).filter(|l| l.stock.is_some()) else {
            continue;
        };
        inventory::take(tx, shop_id, *item_id, before, quantity, &cause).await?;
    }

    let order = Order {
        order_id: cmd.order_id,
        shop_id,
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
    sqlx::query(
        "insert into orders (order_id, shop_id, session_id, ticket_day, ticket_number, status,
                             source, client_id, payload_hash, lines, note, total, version,
                             created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)",
    )
    .bind(order.order_id)
    .bind(order.shop_id)
    .bind(order.session_id)
    .bind(&day)
    .bind(order.ticket_number)
    .bind(order.status.as_str())
    .bind(order.source.as_str())
    .bind(&order.client_id)
    .bind(&cmd.order.payload_hash)
    .bind(serde_json::to_string(&order.items)?)
    .bind(&order.note)
    .bind(order.total)
    .bind(order.version)
    .bind(order.created_at)
    .execute(tx.conn())
    .await?;
    events::append(
        tx,
        shop_id,
        ORDER_PLACED,
        Some(session.session_id),
        &order,
        cmd.now,
    )
    .await?;
    let response = StoredResponse {
        status: 201,
        body: serde_json::to_string(&OrderReceipt {
            order: &order,
            idempotent_replay: false,
        })?,
        location: Some(format!("/api/v1/orders/{}", order.order_id)),
    };
    if let Some(claim) = &cmd.claim {
        idempotency::complete(tx, claim, Some(shop_id), &response, cmd.now).await?;
    }
    Ok(Ok(Placed {
        order_id: order.order_id,
        response,
        replayed: false,
    }))
}

/// The catalog entries an order names, read in two queries.
struct Referenced {
    /// Every named menu item the shop has, with whether it is retired.
    items: HashMap<Uuid, (MenuItem, bool)>,
    /// Active toppings only.
    toppings: HashMap<Uuid, Topping>,
}

impl Referenced {
    async fn load(
        conn: &mut PgConnection,
        cmd: &PlaceOrder,
        shop_id: Uuid,
    ) -> Result<Referenced, PgError> {
        let mut item_ids: Vec<Uuid> = cmd.order.lines.iter().map(|l| l.menu_item_id).collect();
        item_ids.sort_unstable();
        item_ids.dedup();
        let mut topping_ids: Vec<Uuid> = cmd
            .order
            .lines
            .iter()
            .flat_map(|l| l.topping_ids.iter().copied())
            .collect();
        topping_ids.sort_unstable();
        topping_ids.dedup();
        Ok(Referenced {
            items: catalog::menu_items(&mut *conn, shop_id, &item_ids).await?,
            toppings: catalog::active_toppings(conn, shop_id, &topping_ids).await?,
        })
    }

    fn item(&self, id: Uuid) -> ItemLookup {
        match self.items.get(&id) {
            None => ItemLookup::Unknown,
            Some((_, true)) => ItemLookup::Retired,
            Some((item, false)) => ItemLookup::Active(item.clone()),
        }
    }
}
