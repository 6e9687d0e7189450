//! The exactly-once order path: orders of one shop decided and committed
//! in one transaction.
//!
//! The transaction first takes each order's idempotency key (an advisory
//! lock: the same key on any node waits its turn, then replays), then the
//! sessions' rows (`for update`: orders, PIN attempts and checkout at one
//! table take turns), and only then decides every rule in the contract's
//! order, from what is committed at that moment, one order after another.
//!
//! An order placed [alone](Locks::Wait) waits for its key and its table,
//! each wait bounded by `lock_timeout`; one that runs out ends the attempt
//! as `SessionBusy`, audited in a fresh transaction (the first one is
//! aborted). Orders placed [together](Locks::TakeFree) (see
//! [`crate::turns`]) wait for neither: one whose key or table another
//! transaction holds is left out, to be placed alone, so that no order of
//! the group waits for another transaction's table.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ordergate_domain::Rejection;
use ordergate_domain::inventory::StockLevel;
use ordergate_domain::language::Languages;
use ordergate_domain::order::admission::{GuestHistory, GuestReads};
use ordergate_domain::order::placement::{Priced, Referenced, referenced_ids};
use ordergate_domain::session::Session;
use ordergate_domain::shop::ShopTimeZone;
use ordergate_store::{Decided, KeyRecord, Ordered, PlaceOrder, Placed};
use sqlx::Row;
use sqlx::postgres::PgConnection;
use uuid::Uuid;

use crate::codec::{json, name};
use crate::error::{PgError, is_lock_timeout};
use crate::filing::{self, Filing};
use crate::idempotency;
use crate::inventory;
use crate::orders::{self, select};
use crate::tx::Tx;
use crate::{audit, catalog, sessions};

/// How a transaction takes its orders' keys and tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Locks {
    /// One order, waiting its turn for its key and then its table.
    Wait,
    /// Several orders, each at a table of its own, taking only the keys and
    /// tables nobody holds: the others are left out, unplaced.
    TakeFree,
}

/// How long the transaction of `cmd`, placed alone, may wait for its first
/// lock: the claim's key for `in_flight_wait`, or else its table until the
/// order gives up on it. [`place`] expects its transaction begun with this
/// bound.
pub(crate) fn first_wait(cmd: &PlaceOrder, in_flight_wait: Duration) -> Duration {
    match cmd.claim {
        Some(_) => in_flight_wait,
        None => table_wait(cmd),
    }
}

/// The rest waits no longer than the order is willing to wait for its table.
pub(crate) fn table_wait(cmd: &PlaceOrder) -> Duration {
    cmd.rules
        .busy_deadline
        .saturating_duration_since(Instant::now())
}

/// Places each of `cmds` or refuses it, and files the audit rows either
/// way: a refusal is an `Ok` outcome, so its audit row (and PIN count)
/// commit. Returns each order's outcome in their order; `None` for one
/// left out ([`Locks::TakeFree`]). With [`Locks::Wait`] (one order), a
/// request still holding the claim's key past the transaction's first
/// wait ([`first_wait`]; on any node) ends this one as
/// `RequestInProgress`, and a session that does not exist as `NotFound`.
pub(crate) async fn place(
    tx: &mut Tx,
    shop_id: Uuid,
    cmds: &[PlaceOrder],
    locks: Locks,
) -> Result<Vec<Option<Ordered>>, PgError> {
    let keys_taken = take_keys(tx, cmds, locks).await?;
    let (locked, shop) = lock_sessions(tx, shop_id, cmds, &keys_taken, locks).await?;
    if locks == Locks::Wait && locked.iter().any(Option::is_none) {
        return Err(Rejection::NotFound("session").into());
    }
    let decided = decide(tx, shop_id, cmds, &locked, shop.as_ref()).await?;
    let mut refusals = Vec::new();
    let mut outcomes = Vec::with_capacity(cmds.len());
    for (cmd, decided) in cmds.iter().zip(decided) {
        let Some(decided) = decided else {
            outcomes.push(None);
            continue;
        };
        let (outcome, audited) = decided.outcome();
        // An order placed now filed its row with its ticket (see `filing`).
        let filed = matches!(&outcome, Ok(placed) if !placed.replayed);
        if audited && !filed {
            refusals.push((shop_id, cmd.audit_entry(&outcome)));
        }
        outcomes.push(Some(Ordered {
            shop_id,
            outcome,
            audited,
        }));
    }
    audit::append_all(tx.conn(), &refusals).await?;
    Ok(outcomes)
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

/// Takes the orders' keys; whether each order may go on (an order without
/// a key always may). Alone, the order waits for its key; together, a key
/// another transaction holds leaves its order out.
async fn take_keys(tx: &mut Tx, cmds: &[PlaceOrder], locks: Locks) -> Result<Vec<bool>, PgError> {
    match locks {
        Locks::Wait => {
            for cmd in cmds {
                let Some(claim) = &cmd.claim else { continue };
                match idempotency::lock(tx, claim, table_wait(cmd)).await {
                    Err(e) if is_lock_timeout(&e) => {
                        return Err(Rejection::RequestInProgress.into());
                    }
                    other => other?,
                }
            }
            Ok(vec![true; cmds.len()])
        }
        Locks::TakeFree => {
            let keys: Vec<String> = cmds
                .iter()
                .filter_map(|cmd| cmd.claim.as_ref().map(|claim| claim.scoped_key()))
                .collect();
            let mut taken = idempotency::try_lock_all(tx, &keys).await?.into_iter();
            cmds.iter()
                .map(|cmd| match cmd.claim {
                    Some(_) => taken
                        .next()
                        .ok_or_else(|| PgError::Corrupt("a key lock went unanswered".into())),
                    None => Ok(true),
                })
                .collect()
        }
    }
}

/// An order's session, locked, with the key's live record (read once the
/// key was taken).
struct Locked {
    session: Session,
    record: Option<KeyRecord>,
}

/// What the orders' shop decides with.
struct ShopFacts {
    timezone: ShopTimeZone,
    catalog_version: i64,
    languages: Languages,
}

/// Locks the sessions of the orders that hold their keys (`taken`), and
/// reads each order's key record and the shop in the same round trip. The
/// statement starts after the keys were taken, so it sees the record of
/// any request that held a key before; nobody else writes that record
/// while this transaction holds the key. Together, a session another
/// transaction holds is skipped: its order is `None`, as is an order left
/// out before. The shop is `None` when it is gone.
async fn lock_sessions(
    tx: &mut Tx,
    shop_id: Uuid,
    cmds: &[PlaceOrder],
    taken: &[bool],
    locks: Locks,
) -> Result<(Vec<Option<Locked>>, Option<ShopFacts>), PgError> {
    const RECORD_AT: usize = sessions::COLUMN_COUNT;
    const SHOP_AT: usize = RECORD_AT + idempotency::RECORD_COLUMN_COUNT;
    const ORDER_AT: usize = SHOP_AT + 3;
    /// The statement, as far as how it locks the sessions.
    macro_rules! locking {
        () => {
            concat!(
                "select s.*, k.*, shop.timezone, shop.catalog_version, shop.languages, q.n
                 from unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[])
                          with ordinality as q(session_id, scope, idempotency_key, now, n)
                 join (select ",
                sessions::columns!(),
                " from table_sessions where shop_id = $5 and session_id = any($1)
                       order by session_id for update"
            )
        };
    }
    /// The rest of the statement.
    macro_rules! reading {
        () => {
            concat!(
                ") as s on s.session_id = q.session_id
                 left join shops shop on shop.shop_id = $5
                 left join lateral (select ",
                idempotency::record_columns!(),
                " from idempotency_keys
                       where shop_id = $5 and scope = q.scope
                         and idempotency_key = q.idempotency_key and expires_at > q.now) as k
                     on true"
            )
        };
    }
    let asked: Vec<usize> = (0..cmds.len()).filter(|&i| taken[i]).collect();
    let mut locked: Vec<Option<Locked>> = cmds.iter().map(|_| None).collect();
    if asked.is_empty() {
        return Ok((locked, None));
    }
    let query = match locks {
        Locks::Wait => sqlx::query(concat!(locking!(), reading!())),
        Locks::TakeFree => sqlx::query(concat!(locking!(), " skip locked", reading!())),
    };
    let claims = asked.iter().map(|&i| cmds[i].claim.as_ref());
    let rows = query
        .bind(
            asked
                .iter()
                .map(|&i| cmds[i].session_id)
                .collect::<Vec<_>>(),
        )
        .bind(
            claims
                .clone()
                .map(|claim| claim.map(|claim| claim.scope.as_str()))
                .collect::<Vec<_>>(),
        )
        .bind(
            claims
                .map(|claim| claim.map(|claim| claim.key.as_str()))
                .collect::<Vec<_>>(),
        )
        .bind(asked.iter().map(|&i| cmds[i].now).collect::<Vec<_>>())
        .bind(shop_id)
        .fetch_all(tx.conn())
        .await?;
    let mut shop = None;
    for row in rows {
        let n: i64 = row.try_get(ORDER_AT)?;
        let at = usize::try_from(n - 1)
            .ok()
            .and_then(|k| asked.get(k).copied())
            .ok_or_else(|| PgError::Corrupt(format!("a session row for order {n} of a group")))?;
        let keyed = row.try_get::<Option<String>, _>(RECORD_AT)?.is_some();
        let record = keyed
            .then(|| idempotency::record_at(&row, RECORD_AT))
            .transpose()?;
        if shop.is_none() && row.try_get::<Option<String>, _>(SHOP_AT)?.is_some() {
            shop = Some(ShopFacts {
                timezone: name(&row, SHOP_AT, ShopTimeZone::parse)?,
                catalog_version: row.try_get(SHOP_AT + 1)?,
                languages: json(&row, SHOP_AT + 2)?,
            });
        }
        locked[at] = Some(Locked {
            session: sessions::from_row(row)?,
            record,
        });
    }
    Ok((locked, shop))
}

/// Steps 1–8 of the contract, in its order, under the session locks, for
/// every locked order (the others are `None`). Nothing is written before
/// an order's last check passes, except a wrong PIN's count.
async fn decide(
    tx: &mut Tx,
    shop_id: Uuid,
    cmds: &[PlaceOrder],
    locked: &[Option<Locked>],
    shop: Option<&ShopFacts>,
) -> Result<Vec<Option<Decided>>, PgError> {
    let mut pins = Vec::with_capacity(cmds.len());
    for (cmd, locked) in cmds.iter().zip(locked) {
        pins.push(match (locked, cmd.caller.pin_to_judge()) {
            (Some(locked), Some(pin)) => {
                let policy = cmd.rules.pin_policy;
                Some(sessions::judge_pin(tx, &locked.session, pin, policy, cmd.now).await?)
            }
            _ => None,
        });
    }
    let mut histories = guest_histories(tx.conn(), shop_id, cmds, locked).await?;
    let mut decided: Vec<Option<Decided>> = Vec::with_capacity(cmds.len());
    let mut admitted = Vec::new();
    for (i, ((cmd, locked), pin)) in cmds.iter().zip(locked).zip(pins).enumerate() {
        let Some(locked) = locked else {
            decided.push(None);
            continue;
        };
        let key = cmd
            .claim
            .as_ref()
            .map(|claim| claim.judge(locked.record.clone(), cmd.now));
        let history = std::mem::take(&mut histories[i]);
        let verdict = cmd.admit(&locked.session, pin, key, history)?;
        if verdict.is_none() {
            admitted.push(i);
        }
        decided.push(verdict);
    }
    if !admitted.is_empty() {
        let shop = shop.ok_or(Rejection::NotFound("shop"))?;
        let placing = admitted.iter().map(|&i| {
            let session = &locked[i]
                .as_ref()
                .expect("admitted orders are locked")
                .session;
            (&cmds[i], session)
        });
        let outcomes = commit(tx, shop_id, shop, placing.collect()).await?;
        for (i, outcome) in admitted.into_iter().zip(outcomes) {
            decided[i] = Some(outcome.into());
        }
    }
    Ok(decided)
}

/// The sessions' earlier orders the guest rules ask for, one statement
/// for each rule some order asks about; an order not locked asks nothing.
async fn guest_histories(
    conn: &mut PgConnection,
    shop_id: Uuid,
    cmds: &[PlaceOrder],
    locked: &[Option<Locked>],
) -> Result<Vec<GuestHistory>, PgError> {
    let reads: Vec<Option<GuestReads<'_>>> = cmds
        .iter()
        .zip(locked)
        .map(|(cmd, locked)| {
            locked.as_ref()?;
            cmd.rules.guest_reads(&cmd.caller, &cmd.order, cmd.now)
        })
        .collect();
    let mut histories: Vec<GuestHistory> = cmds.iter().map(|_| GuestHistory::default()).collect();

    let same_payload: Vec<usize> = (0..cmds.len())
        .filter(|&i| {
            reads[i]
                .as_ref()
                .is_some_and(|r| r.same_payload_since.is_some())
        })
        .collect();
    if !same_payload.is_empty() {
        let read = |i: usize| reads[i].as_ref().expect("asked");
        let rows = sqlx::query(concat!(
            "select o.*, q.n
             from unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[])
                      with ordinality as q(session_id, client_id, payload_hash, since, n)
             cross join lateral (",
            select!(),
            " where o.shop_id = $5 and o.session_id = q.session_id
                and o.client_id = q.client_id and o.payload_hash = q.payload_hash
                and o.created_at > q.since and o.status != 'cancelled'
              order by o.created_at desc limit 1) as o"
        ))
        .bind(
            same_payload
                .iter()
                .map(|&i| cmds[i].session_id)
                .collect::<Vec<_>>(),
        )
        .bind(
            same_payload
                .iter()
                .map(|&i| read(i).client_id)
                .collect::<Vec<_>>(),
        )
        .bind(
            same_payload
                .iter()
                .map(|&i| cmds[i].order.payload_hash.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(
            same_payload
                .iter()
                .map(|&i| read(i).same_payload_since)
                .collect::<Vec<_>>(),
        )
        .bind(shop_id)
        .fetch_all(&mut *conn)
        .await?;
        for row in rows {
            let at = asked_at(&same_payload, row.try_get("n")?)?;
            histories[at].same_payload = Some(orders::from_row(row)?);
        }
    }

    let cooling: Vec<usize> = (0..cmds.len())
        .filter(|&i| {
            reads[i]
                .as_ref()
                .is_some_and(|r| r.last_order_since.is_some())
        })
        .collect();
    if !cooling.is_empty() {
        let read = |i: usize| reads[i].as_ref().expect("asked");
        let rows: Vec<(i64, Option<ordergate_domain::Timestamp>)> = sqlx::query_as(
            "select q.n, (select max(created_at) from orders
                          where shop_id = $4 and session_id = q.session_id
                            and client_id = q.client_id and created_at > q.since)
             from unnest($1::uuid[], $2::text[], $3::timestamptz[])
                      with ordinality as q(session_id, client_id, since, n)",
        )
        .bind(
            cooling
                .iter()
                .map(|&i| cmds[i].session_id)
                .collect::<Vec<_>>(),
        )
        .bind(
            cooling
                .iter()
                .map(|&i| read(i).client_id)
                .collect::<Vec<_>>(),
        )
        .bind(
            cooling
                .iter()
                .map(|&i| read(i).last_order_since)
                .collect::<Vec<_>>(),
        )
        .bind(shop_id)
        .fetch_all(&mut *conn)
        .await?;
        for (n, last_order_at) in rows {
            histories[asked_at(&cooling, n)?].last_order_at = last_order_at;
        }
    }

    let limited: Vec<usize> = (0..cmds.len())
        .filter(|&i| {
            reads[i]
                .as_ref()
                .is_some_and(|r| r.recent_guest_orders.is_some())
        })
        .collect();
    if !limited.is_empty() {
        let recent = |i: usize| {
            reads[i]
                .as_ref()
                .and_then(|r| r.recent_guest_orders)
                .expect("asked")
        };
        let rows: Vec<(i64, Option<ordergate_domain::Timestamp>)> = sqlx::query_as(
            "select q.n, (select created_at from orders
                          where shop_id = $4 and session_id = q.session_id
                            and source = 'guest' and created_at > q.since
                          order by created_at desc limit 1 offset q.nth)
             from unnest($1::uuid[], $2::timestamptz[], $3::bigint[])
                      with ordinality as q(session_id, since, nth, n)",
        )
        .bind(
            limited
                .iter()
                .map(|&i| cmds[i].session_id)
                .collect::<Vec<_>>(),
        )
        .bind(limited.iter().map(|&i| recent(i).since).collect::<Vec<_>>())
        .bind(
            limited
                .iter()
                .map(|&i| i64::from(recent(i).nth))
                .collect::<Vec<_>>(),
        )
        .bind(shop_id)
        .fetch_all(conn)
        .await?;
        for (n, nth_recent_at) in rows {
            histories[asked_at(&limited, n)?].nth_recent_at = nth_recent_at;
        }
    }
    Ok(histories)
}

/// The order a row answers: `n` counts from 1 over the orders `asked`.
fn asked_at(asked: &[usize], n: i64) -> Result<usize, PgError> {
    usize::try_from(n - 1)
        .ok()
        .and_then(|k| asked.get(k).copied())
        .ok_or_else(|| PgError::Corrupt(format!("an answer for question {n} of a group")))
}

/// Step 8 for each admitted order, in their order: catalog, prices, stock,
/// ticket, order, event, idempotency record. The catalog entries every
/// order names are read at once, and the stock rows every order touches
/// are locked at once, in ascending id order; each order then takes what
/// it needs from what the ones before it left.
async fn commit(
    tx: &mut Tx,
    shop_id: Uuid,
    shop: &ShopFacts,
    placing: Vec<(&PlaceOrder, &Session)>,
) -> Result<Vec<Result<Placed, Rejection>>, PgError> {
    let referenced = Referenced {
        catalog_version: shop.catalog_version,
        languages: shop.languages.clone(),
        ..referenced_catalog(tx.conn(), shop_id, placing.iter().map(|(cmd, _)| *cmd)).await?
    };
    let priced: Vec<Result<Priced, Rejection>> = placing
        .iter()
        .map(|(cmd, _)| referenced.price(&cmd.order))
        .collect();
    let mut stock_ids: Vec<Uuid> = priced
        .iter()
        .flatten()
        .flat_map(Priced::stock_ids)
        .collect();
    stock_ids.sort_unstable();
    stock_ids.dedup();
    let mut levels: HashMap<Uuid, StockLevel> = if stock_ids.is_empty() {
        HashMap::new()
    } else {
        inventory::lock_levels(tx, shop_id, &stock_ids).await?
    };
    let mut outcomes = Vec::with_capacity(placing.len());
    let mut filings = Vec::new();
    for ((cmd, session), priced) in placing.into_iter().zip(priced) {
        let taken = priced.and_then(|priced| {
            let moves = priced.take_stock(&levels, cmd.now)?;
            Ok((priced, moves))
        });
        let (priced, moves) = match taken {
            Ok(taken) => taken,
            Err(rejection) => {
                outcomes.push(Err(rejection));
                continue;
            }
        };
        for step in &moves {
            levels.insert(step.item_id, step.after.clone());
        }
        // Rendered before the database draws its ticket (see `filing`).
        let order = priced.into_order(cmd.placing(session), filing::UNNUMBERED);
        let unnumbered = Placed::fresh(&order, cmd.receipt);
        filings.push(Filing {
            order,
            ticket_day: shop.timezone.day_of(cmd.now),
            payload_hash: cmd.order.payload_hash.as_str(),
            audit: cmd.accepted_entry(cmd.order_id, false),
            moves,
            actor: cmd.caller.actor(),
            response: unnumbered.response.clone(),
            claim: cmd.claim.as_ref(),
            now: cmd.now,
        });
        outcomes.push(Ok(unnumbered));
    }
    let mut answers = filing::file(tx, &filings).await?.into_iter();
    for outcome in outcomes.iter_mut().flatten() {
        outcome.response = answers
            .next()
            .ok_or_else(|| PgError::Corrupt("a filed order without its answer".into()))?;
    }
    Ok(outcomes)
}

/// The catalog entries the orders name, read in two queries.
async fn referenced_catalog<'a>(
    conn: &mut PgConnection,
    shop_id: Uuid,
    cmds: impl Iterator<Item = &'a PlaceOrder>,
) -> Result<Referenced, PgError> {
    let (mut item_ids, mut topping_ids) = (Vec::new(), Vec::new());
    for cmd in cmds {
        let (items, toppings) = referenced_ids(&cmd.order);
        item_ids.extend(items);
        topping_ids.extend(toppings);
    }
    for ids in [&mut item_ids, &mut topping_ids] {
        ids.sort_unstable();
        ids.dedup();
    }
    Ok(Referenced {
        items: catalog::menu_items(&mut *conn, shop_id, &item_ids).await?,
        toppings: catalog::active_toppings(conn, shop_id, &topping_ids).await?,
        ..Referenced::default()
    })
}
