//! The exactly-once order path, decided and committed in one transaction.
//!
//! The transaction first takes the request's idempotency key (an advisory
//! lock: the same key on any node waits its turn, then replays), then the
//! session row (`for update`: orders, PIN attempts and checkout at one
//! table take turns), and only then decides every rule in the contract's
//! order, from what is committed at that moment. Both waits are bounded by
//! `lock_timeout`; one that runs out ends the attempt as `SessionBusy`,
//! audited in a fresh transaction (the first one is aborted).

use std::time::{Duration, Instant};

use ordergate_domain::Rejection;
use ordergate_domain::inventory::{Cause, Operation};
use ordergate_domain::language::Languages;
use ordergate_domain::order::admission::{GuestHistory, GuestReads};
use ordergate_domain::order::placement::{Referenced, referenced_ids};
use ordergate_domain::session::Session;
use ordergate_domain::shop::ShopTimeZone;
use ordergate_store::{Decided, KeyRecord, Ordered, PlaceOrder, Placed};
use sqlx::Row;
use sqlx::postgres::{PgConnection, PgRow};
use uuid::Uuid;

use crate::codec::{json, name};
use crate::error::{PgError, is_lock_timeout};
use crate::filing::{self, Filing};
use crate::idempotency;
use crate::inventory;
use crate::orders::{self, select};
use crate::tx::Tx;
use crate::{audit, catalog, sessions};

/// How long the transaction of `cmd` may wait for its first lock: the
/// claim's key for `in_flight_wait`, or else its table until the order
/// gives up on it. [`place`] expects its transaction begun with this bound.
pub(crate) fn first_wait(cmd: &PlaceOrder, in_flight_wait: Duration) -> Duration {
    match cmd.claim {
        Some(_) => in_flight_wait,
        None => table_wait(cmd),
    }
}

/// The rest waits no longer than the order is willing to wait for its table.
fn table_wait(cmd: &PlaceOrder) -> Duration {
    cmd.rules
        .busy_deadline
        .saturating_duration_since(Instant::now())
}

/// Places an order or refuses it, and files the audit row either way: a
/// refusal is an `Ok` outcome, so its audit row (and PIN count) commit.
/// A request still holding the claim's key past the transaction's first
/// wait ([`first_wait`]; on any node) ends this one as `RequestInProgress`.
/// `shop_id` is the session's, from its route.
pub(crate) async fn place(
    tx: &mut Tx,
    shop_id: Uuid,
    cmd: &PlaceOrder,
) -> Result<Ordered, PgError> {
    if let Some(claim) = &cmd.claim {
        match idempotency::lock(tx, claim, table_wait(cmd)).await {
            Err(e) if is_lock_timeout(&e) => return Err(Rejection::RequestInProgress.into()),
            other => other?,
        }
    }
    let Some(locked) = lock_session(tx, shop_id, cmd).await? else {
        return Err(Rejection::NotFound("session").into());
    };
    let session = &locked.session;
    let (outcome, audited) = decide(tx, cmd, &locked).await?.outcome();
    // An order placed now filed its row with its ticket (see `filing`).
    let filed = matches!(&outcome, Ok(placed) if !placed.replayed);
    if audited && !filed {
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
    shop_id: Uuid,
    cmd: &PlaceOrder,
    rejection: Rejection,
) -> Result<Ordered, PgError> {
    let session = sessions::find(tx.conn(), shop_id, cmd.session_id)
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

/// The order's session, locked, with what the decision reads of its key and
/// its shop.
struct Locked {
    session: Session,
    /// The key's live record (read once the key was taken).
    record: Option<KeyRecord>,
    /// `None` when the shop is gone.
    shop: Option<ShopFacts>,
}

struct ShopFacts {
    timezone: ShopTimeZone,
    catalog_version: i64,
    languages: Languages,
}

/// Locks the session (`for update`) and reads the key's record and the
/// shop in the same round trip. The statement starts after the key was
/// taken, so it sees the record of any request that held the key before;
/// nobody else writes that record while this transaction holds the key.
async fn lock_session(
    tx: &mut Tx,
    shop_id: Uuid,
    cmd: &PlaceOrder,
) -> Result<Option<Locked>, PgError> {
    const RECORD_AT: usize = sessions::COLUMN_COUNT;
    const SHOP_AT: usize = RECORD_AT + idempotency::RECORD_COLUMN_COUNT;
    let claim = cmd.claim.as_ref();
    Ok(sqlx::query(concat!(
        "select s.*, k.*, shop.timezone, shop.catalog_version, shop.languages
         from (select ",
        sessions::columns!(),
        " from table_sessions where shop_id = $5 and session_id = $1 for update) as s
         left join shops shop on shop.shop_id = $5
         left join (select ",
        idempotency::record_columns!(),
        " from idempotency_keys
                    where shop_id = $5 and scope = $2 and idempotency_key = $3
                      and expires_at > $4) as k
             on true"
    ))
    .bind(cmd.session_id)
    .bind(claim.map(|claim| claim.scope.as_str()))
    .bind(claim.map(|claim| claim.key.as_str()))
    .bind(cmd.now)
    .bind(shop_id)
    .try_map(|row: PgRow| {
        let keyed = row.try_get::<Option<String>, _>(RECORD_AT)?.is_some();
        let record = keyed
            .then(|| idempotency::record_at(&row, RECORD_AT))
            .transpose()?;
        let shop = match row.try_get::<Option<String>, _>(SHOP_AT)? {
            Some(_) => Some(ShopFacts {
                timezone: name(&row, SHOP_AT, ShopTimeZone::parse)?,
                catalog_version: row.try_get(SHOP_AT + 1)?,
                languages: json(&row, SHOP_AT + 2)?,
            }),
            None => None,
        };
        Ok(Locked {
            session: sessions::from_row(row)?,
            record,
            shop,
        })
    })
    .fetch_optional(tx.conn())
    .await?)
}

/// Steps 1–8 of the contract, in its order, under the session lock.
/// Nothing is written before the last check passes, except a wrong PIN's
/// count.
async fn decide(tx: &mut Tx, cmd: &PlaceOrder, locked: &Locked) -> Result<Decided, PgError> {
    let session = &locked.session;
    let pin = match cmd.caller.pin_to_judge() {
        Some(pin) => {
            let policy = cmd.rules.pin_policy;
            Some(sessions::judge_pin(tx, session, pin, policy, cmd.now).await?)
        }
        None => None,
    };
    let key = cmd
        .claim
        .as_ref()
        .map(|claim| claim.judge(locked.record.clone(), cmd.now));
    let history = match cmd.rules.guest_reads(&cmd.caller, &cmd.order, cmd.now) {
        Some(reads) => {
            guest_history(tx.conn(), session, cmd.order.payload_hash.as_str(), &reads).await?
        }
        None => GuestHistory::default(),
    };
    match cmd.admit(session, pin, key, history)? {
        Some(decided) => Ok(decided),
        None => {
            let shop = locked.shop.as_ref().ok_or(Rejection::NotFound("shop"))?;
            Ok(commit(tx, cmd, session, shop).await?.into())
        }
    }
}

/// The session's earlier orders the guest rules asked for.
async fn guest_history(
    conn: &mut PgConnection,
    session: &Session,
    payload_hash: &str,
    reads: &GuestReads<'_>,
) -> Result<GuestHistory, PgError> {
    let mut history = GuestHistory::default();
    if let Some(since) = reads.same_payload_since {
        history.same_payload = sqlx::query(concat!(
            select!(),
            " where o.shop_id = $5 and o.session_id = $1 and o.client_id = $2
                and o.payload_hash = $3 and o.created_at > $4 and o.status != 'cancelled'
              order by o.created_at desc limit 1"
        ))
        .bind(session.session_id)
        .bind(reads.client_id)
        .bind(payload_hash)
        .bind(since)
        .bind(session.shop_id)
        .try_map(orders::from_row)
        .fetch_optional(&mut *conn)
        .await?;
    }
    if let Some(since) = reads.last_order_since {
        history.last_order_at = sqlx::query_scalar(
            "select max(created_at) from orders
             where shop_id = $3 and session_id = $1 and client_id = $2 and created_at > $4",
        )
        .bind(session.session_id)
        .bind(reads.client_id)
        .bind(session.shop_id)
        .bind(since)
        .fetch_one(&mut *conn)
        .await?;
    }
    if let Some(recent) = reads.recent_guest_orders {
        history.nth_recent_at = sqlx::query_scalar(
            "select created_at from orders
             where shop_id = $4 and session_id = $1 and source = 'guest' and created_at > $2
             order by created_at desc limit 1 offset $3",
        )
        .bind(session.session_id)
        .bind(recent.since)
        .bind(i64::from(recent.nth))
        .bind(session.shop_id)
        .fetch_optional(conn)
        .await?;
    }
    Ok(history)
}

/// Step 8: catalog, prices, stock, ticket, order, event, idempotency record.
async fn commit(
    tx: &mut Tx,
    cmd: &PlaceOrder,
    session: &Session,
    shop: &ShopFacts,
) -> Result<Result<Placed, Rejection>, PgError> {
    let shop_id = session.shop_id;
    let referenced = Referenced {
        catalog_version: shop.catalog_version,
        languages: shop.languages.clone(),
        ..referenced_catalog(tx.conn(), cmd, shop_id).await?
    };
    let priced = match referenced.price(&cmd.order) {
        Ok(priced) => priced,
        Err(rejection) => return Ok(Err(rejection)),
    };
    // Every stock row the order touches, locked in ascending id order.
    let levels = inventory::lock_levels(tx, shop_id, &priced.stock_ids()).await?;
    let moves = match priced.take_stock(&levels, cmd.now) {
        Ok(moves) => moves,
        Err(rejection) => return Ok(Err(rejection)),
    };

    let actor = cmd.caller.actor();
    let cause = Cause {
        order_id: Some(cmd.order_id),
        ..Cause::new(Operation::Order, &actor, cmd.now)
    };
    // Rendered before the database draws its ticket (see `filing`).
    let order = priced.into_order(cmd.placing(session), filing::UNNUMBERED);
    let unnumbered = Placed::fresh(&order, cmd.receipt);
    let response = filing::file(
        tx,
        &Filing {
            order: &order,
            ticket_day: &shop.timezone.day_of(cmd.now),
            payload_hash: cmd.order.payload_hash.as_str(),
            audit: &cmd.accepted_entry(cmd.order_id, false),
            moves: &moves,
            cause: &cause,
            response: &unnumbered.response,
            claim: cmd.claim.as_ref(),
            now: cmd.now,
        },
    )
    .await?;
    let placed = Placed {
        response,
        ..unnumbered
    };
    Ok(Ok(placed))
}

/// The catalog entries an order names, read in two queries.
async fn referenced_catalog(
    conn: &mut PgConnection,
    cmd: &PlaceOrder,
    shop_id: Uuid,
) -> Result<Referenced, PgError> {
    let (item_ids, topping_ids) = referenced_ids(&cmd.order);
    Ok(Referenced {
        items: catalog::menu_items(&mut *conn, shop_id, &item_ids).await?,
        toppings: catalog::active_toppings(conn, shop_id, &topping_ids).await?,
        ..Referenced::default()
    })
}
