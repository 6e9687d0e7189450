//! An accepted order's writes, all in one statement.
//!
//! From the moment an order draws its ticket, the shop's ticket and event
//! counter rows (and the rows of the tracked stock it takes) stay locked
//! until its commit: every round trip in that window holds up the shop's
//! next order. So the ticket, the order row, its audit row, the stock it
//! takes and the op-log rows of that, the events and the idempotency
//! record go to the database as one statement, and the commit follows it.
//!
//! The order's event and its stored response carry its ticket number,
//! which only that statement draws: they are rendered with [`UNNUMBERED`]
//! and sent as the text either side of it, and the database puts the
//! number in between.

use ordergate_domain::Timestamp;
use ordergate_domain::audit::AuditEntry;
use ordergate_domain::events::{EventType, StockChanged};
use ordergate_domain::inventory::{Cause, Operation, StockMove};
use ordergate_domain::order::Order;
use ordergate_store::{Change, Claim, StoredResponse};
use std::collections::HashMap;

use sqlx::{Postgres, QueryBuilder};
use uuid::Uuid;

use crate::error::PgError;
use crate::tx::Tx;
use crate::{audit, events, idempotency, routes};

/// The ticket number an order is rendered with before it has one: a value
/// no shop reaches, so its JSON text is found only where the number goes.
pub(crate) const UNNUMBERED: i64 = i64::MIN;

/// Text rendered from an order numbered [`UNNUMBERED`], cut where its
/// number goes.
pub(crate) struct AwaitingTicket {
    before: String,
    after: String,
}

impl AwaitingTicket {
    /// Cuts `text` at its one `"ticketNumber":` member. Inside a JSON string
    /// every quote is escaped, so the member's text cannot be forged by a
    /// guest's note or name; a rendering without exactly one is a bug.
    pub(crate) fn of(text: &str) -> Result<AwaitingTicket, PgError> {
        let member = format!("\"ticketNumber\":{UNNUMBERED}");
        let mut found = text.match_indices(&member);
        match (found.next(), found.next()) {
            (Some((at, _)), None) => {
                let number_at = at + member.len() - UNNUMBERED.to_string().len();
                Ok(AwaitingTicket {
                    before: text[..number_at].to_owned(),
                    after: text[at + member.len()..].to_owned(),
                })
            }
            _ => Err(PgError::Corrupt(format!(
                "an order's text without one unnumbered ticket: {text}"
            ))),
        }
    }

    pub(crate) fn numbered(&self, ticket_number: i64) -> String {
        format!("{}{ticket_number}{}", self.before, self.after)
    }
}

/// The insert of an order, as far as its values.
macro_rules! insert_order {
    () => {
        "insert into orders (order_id, shop_id, session_id, ticket_day, ticket_number, status,
                             source, client_id, payload_hash, lines, note, total, version,
                             created_at, updated_at)"
    };
}

/// Everything an accepted order writes.
pub(crate) struct Filing<'a> {
    /// Numbered [`UNNUMBERED`].
    pub(crate) order: Order,
    pub(crate) ticket_day: String,
    pub(crate) payload_hash: &'a str,
    pub(crate) audit: AuditEntry,
    /// Taken from levels this transaction has locked (by the orders filed
    /// before this one in the same transaction, too).
    pub(crate) moves: Vec<StockMove>,
    /// Who takes the stock, for its op-log rows.
    pub(crate) actor: String,
    /// The order's answer, rendered from `order`; kept with the key if
    /// there is one.
    pub(crate) response: StoredResponse,
    pub(crate) claim: Option<&'a Claim>,
    pub(crate) now: Timestamp,
}

impl Filing<'_> {
    fn cause(&self) -> Cause<'_> {
        Cause {
            order_id: Some(self.order.order_id),
            ..Cause::new(Operation::Order, &self.actor, self.now)
        }
    }
}

/// Files the orders, all of one shop, in their order, and returns each
/// one's answer with its ticket number. Locks are taken in the order every
/// transaction takes them (see `events::append`): the ticket counter, then
/// the event counter.
pub(crate) async fn file(
    tx: &mut Tx,
    filings: &[Filing<'_>],
) -> Result<Vec<StoredResponse>, PgError> {
    let mut answers = Vec::with_capacity(filings.len());
    // A ticket counts within its day: orders either side of midnight are
    // filed a day at a time.
    for day in filings.chunk_by(|a, b| a.ticket_day == b.ticket_day) {
        let rows = day.iter().map(Rows::of).collect::<Result<Vec<_>, _>>()?;
        let changed = |taken: i64, expected: i64| match taken == expected {
            true => Ok(()),
            false => Err(PgError::Corrupt(format!(
                "stock of order {} changed under its row locks",
                day[0].order.order_id
            ))),
        };
        let (ticket_numbers, last_event_id) = if tx.distributed() {
            let mut filed = (Vec::with_capacity(day.len()), 0);
            for (filing, rows) in day.iter().zip(&rows) {
                let (ticket_number, last_event_id, taken) =
                    file_on_the_shops_worker(tx, filing, rows).await?;
                changed(taken, rows.taken_ids.len() as i64)?;
                filed.0.push(ticket_number);
                filed.1 = last_event_id;
            }
            filed
        } else {
            let (ticket_numbers, last_event_id, taken) =
                file_in_one_statement(tx, day, &rows).await?;
            changed(taken, distinct_items(&rows))?;
            (ticket_numbers, last_event_id)
        };
        if ticket_numbers.len() != day.len() {
            return Err(PgError::Corrupt(
                "orders filed without their tickets".into(),
            ));
        }
        let shop_id = day[0].order.shop_id;
        tx.note_event(shop_id, last_event_id);
        if rows.iter().any(|rows| !rows.taken_ids.is_empty()) {
            tx.note(Change::Stock(shop_id));
        }
        for ((filing, rows), ticket_number) in day.iter().zip(&rows).zip(ticket_numbers) {
            answers.push(StoredResponse {
                body: rows.answer.numbered(ticket_number),
                ..filing.response.clone()
            });
        }
    }
    Ok(answers)
}

/// How many stock rows the orders take from, each counted once.
fn distinct_items(rows: &[Rows]) -> i64 {
    let mut items: Vec<Uuid> = rows
        .iter()
        .flat_map(|r| r.taken_ids.iter().copied())
        .collect();
    items.sort_unstable();
    items.dedup();
    items.len() as i64
}

/// What a filing writes besides the order, as the statements bind it.
struct Rows {
    placed: AwaitingTicket,
    answer: AwaitingTicket,
    taken_ids: Vec<Uuid>,
    taken_units: Vec<i64>,
    logs: Logs,
    /// The `stock.changed` events, in the order of their ids; the order's
    /// `order.placed` follows them.
    stock_events: Vec<String>,
}

impl Rows {
    fn of(filing: &Filing<'_>) -> Result<Rows, PgError> {
        let mut rows = Rows {
            placed: AwaitingTicket::of(&serde_json::to_string(&filing.order)?)?,
            answer: AwaitingTicket::of(&filing.response.body)?,
            taken_ids: Vec::with_capacity(filing.moves.len()),
            taken_units: Vec::with_capacity(filing.moves.len()),
            logs: Logs::default(),
            stock_events: Vec::with_capacity(filing.moves.len()),
        };
        let cause = filing.cause();
        for step in &filing.moves {
            rows.taken_ids.push(step.item_id);
            rows.taken_units.push(-step.delta);
            if let Some(entry) = cause.log_entry(step.item_id, &step.before, &step.after) {
                rows.logs.item_ids.push(entry.item_id);
                rows.logs.deltas.push(entry.delta);
                rows.logs.before.push(entry.stock_before);
                rows.logs.after.push(entry.stock_after);
            }
            let changed = StockChanged::new(step.item_id, &step.after, filing.now);
            rows.stock_events.push(serde_json::to_string(&changed)?);
        }
        Ok(rows)
    }
}

/// The columns a statement binds, one array each, built row by row.
#[derive(Default)]
struct Columns {
    orders: OrderColumns,
    audit: AuditColumns,
    taken: HashMap<Uuid, i64>,
    logs: LogColumns,
    events: EventColumns,
    keys: KeyColumns,
}

#[derive(Default)]
struct OrderColumns {
    order_id: Vec<Uuid>,
    session_id: Vec<Uuid>,
    status: Vec<&'static str>,
    source: Vec<&'static str>,
    client_id: Vec<Option<String>>,
    payload_hash: Vec<String>,
    lines: Vec<String>,
    note: Vec<String>,
    total: Vec<i64>,
    version: Vec<i64>,
    created_at: Vec<Timestamp>,
}

#[derive(Default)]
struct AuditColumns {
    request_id: Vec<String>,
    client_id: Vec<Option<String>>,
    status: Vec<i64>,
    code: Vec<&'static str>,
    actor: Vec<Option<String>>,
}

/// Every order's op-log rows, each with its order.
#[derive(Default)]
struct LogColumns {
    rows: Logs,
    order_id: Vec<Uuid>,
    actor: Vec<String>,
    created_at: Vec<Timestamp>,
}

/// Each event's text is `before`, or for an `order.placed` event
/// `before`, its order's ticket number and `after`.
#[derive(Default)]
struct EventColumns {
    /// The event's order, counted from 1.
    order_n: Vec<i64>,
    event_type: Vec<&'static str>,
    session_id: Vec<Option<Uuid>>,
    before: Vec<String>,
    after: Vec<Option<String>>,
    created_at: Vec<Timestamp>,
}

/// The keys' records; each body is `before`, its order's ticket number and
/// `after`.
#[derive(Default)]
struct KeyColumns {
    order_n: Vec<i64>,
    scope: Vec<String>,
    key: Vec<String>,
    fingerprint: Vec<String>,
    status: Vec<i64>,
    before: Vec<String>,
    after: Vec<String>,
    location: Vec<Option<String>>,
    created_at: Vec<Timestamp>,
    expires_at: Vec<Timestamp>,
}

impl Columns {
    fn of(filings: &[Filing<'_>], rows: &[Rows]) -> Result<Columns, PgError> {
        let mut columns = Columns::default();
        for (n, (filing, rows)) in (1..).zip(filings.iter().zip(rows)) {
            let order = &filing.order;
            let o = &mut columns.orders;
            o.order_id.push(order.order_id);
            o.session_id.push(order.session_id);
            o.status.push(order.status.as_str());
            o.source.push(order.source.as_str());
            o.client_id.push(order.client_id.clone());
            o.payload_hash.push(filing.payload_hash.to_owned());
            o.lines.push(serde_json::to_string(&order.items)?);
            o.note.push(order.note.clone());
            o.total.push(order.total);
            o.version.push(order.version);
            o.created_at.push(filing.now);

            let a = &mut columns.audit;
            a.request_id.push(filing.audit.request_id.clone());
            a.client_id.push(filing.audit.client_id.clone());
            a.status.push(i64::from(filing.audit.status));
            a.code.push(filing.audit.code.as_str());
            a.actor.push(filing.audit.actor.clone());

            for (item_id, units) in rows.taken_ids.iter().zip(&rows.taken_units) {
                *columns.taken.entry(*item_id).or_default() += units;
            }
            let l = &mut columns.logs;
            let logged = rows.logs.item_ids.len();
            l.rows.item_ids.extend(&rows.logs.item_ids);
            l.rows.deltas.extend(&rows.logs.deltas);
            l.rows.before.extend(&rows.logs.before);
            l.rows.after.extend(&rows.logs.after);
            l.order_id
                .extend(std::iter::repeat_n(order.order_id, logged));
            l.actor
                .extend(std::iter::repeat_n(filing.actor.clone(), logged));
            l.created_at.extend(std::iter::repeat_n(filing.now, logged));

            let e = &mut columns.events;
            for data in &rows.stock_events {
                e.order_n.push(n);
                e.event_type.push(EventType::StockChanged.as_str());
                e.session_id.push(None);
                e.before.push(data.clone());
                e.after.push(None);
                e.created_at.push(filing.now);
            }
            e.order_n.push(n);
            e.event_type.push(EventType::OrderPlaced.as_str());
            e.session_id.push(Some(order.session_id));
            e.before.push(rows.placed.before.clone());
            e.after.push(Some(rows.placed.after.clone()));
            e.created_at.push(filing.now);

            if let Some(claim) = filing.claim {
                let k = &mut columns.keys;
                k.order_n.push(n);
                k.scope.push(claim.scope.as_str().to_owned());
                k.key.push(claim.key.as_str().to_owned());
                k.fingerprint.push(claim.fingerprint.as_str().to_owned());
                k.status.push(i64::from(filing.response.status));
                k.before.push(rows.answer.before.clone());
                k.after.push(rows.answer.after.clone());
                k.location.push(filing.response.location.clone());
                k.created_at.push(filing.now);
                k.expires_at.push(claim.expires_at);
            }
        }
        Ok(columns)
    }
}

/// Every write of the orders in one statement: each order's ticket number,
/// the newest event id and how many stock rows the orders took. The shop's
/// counters are held for that statement and the commit alone.
async fn file_in_one_statement(
    tx: &mut Tx,
    filings: &[Filing<'_>],
    rows: &[Rows],
) -> Result<(Vec<i64>, i64, i64), PgError> {
    let shop_id = filings[0].order.shop_id;
    let newest = filings.iter().map(|f| f.now).max().unwrap_or_default();
    let Columns {
        orders: o,
        audit: a,
        taken,
        logs: l,
        events: e,
        keys: k,
    } = Columns::of(filings, rows)?;
    let (taken_ids, taken_units): (Vec<Uuid>, Vec<i64>) = taken.into_iter().unzip();
    Ok(sqlx::query_as(concat!(
        "with ticket as (
             insert into ticket_counters (shop_id, ticket_day, last_number)
             values ($1, $2, cardinality($3::uuid[]))
             on conflict (shop_id, ticket_day)
                 do update set last_number = ticket_counters.last_number + excluded.last_number
             returning last_number
         ),
         numbered as (
             select o.*, t.last_number - cardinality($3::uuid[]) + o.n as ticket_number
             from ticket t,
                  unnest($3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[],
                         $9::text[], $10::text[], $11::bigint[], $12::bigint[],
                         $13::timestamptz[])
                      with ordinality
                      as o(order_id, session_id, status, source, client_id, payload_hash, lines,
                           note, total, version, created_at, n)
         ),
         placed as (
             ",
        insert_order!(),
        "
             select order_id, $1, session_id, $2, ticket_number, status, source, client_id,
                    payload_hash, lines, note, total, version, created_at, created_at
             from numbered
             returning ticket_number
         ),
         audited as (
             insert into audit_log (shop_id, session_id, request_id, client_id, status, code,
                                    idempotent_replay, order_id, created_at, actor)
             select $1, o.session_id, a.request_id, a.client_id, a.status, a.code, false,
                    o.order_id, o.created_at, a.actor
             from unnest($14::text[], $15::text[], $16::bigint[], $17::text[], $18::text[])
                      with ordinality as a(request_id, client_id, status, code, actor, n)
             join numbered o on o.n = a.n
         ),
         taken as (
             update inventory i
             set stock = i.stock - m.units, version = i.version + 1, updated_at = $21
             from unnest($19::uuid[], $20::bigint[]) as m(item_id, units)
             where i.shop_id = $1 and i.item_id = m.item_id and i.stock >= m.units
             returning i.item_id
         ),
         logged as (
             insert into inventory_log (shop_id, item_id, operation, delta, stock_before,
                                        stock_after, order_id, actor, created_at)
             select $1, l.item_id, $22, l.delta, l.before, l.after, l.order_id, l.actor,
                    l.created_at
             from unnest($23::uuid[], $24::bigint[], $25::bigint[], $26::bigint[], $27::uuid[],
                         $28::text[], $29::timestamptz[])
                 as l(item_id, delta, before, after, order_id, actor, created_at)
         ),
         counter as (
             insert into event_counters (shop_id, last_event_id)
             select $1, cardinality($30::bigint[]) from (select count(*) from placed) as p
             on conflict (shop_id)
                 do update set last_event_id = event_counters.last_event_id
                                               + excluded.last_event_id
             returning last_event_id
         ),
         appended as (
             ",
        events::insert_events!(),
        "
             select $1, c.last_event_id - cardinality($30::bigint[]) + e.k, e.event_type,
                    e.session_id,
                    case when e.after is null then e.before
                         else e.before || o.ticket_number || e.after end,
                    e.created_at
             from counter c
             cross join unnest($30::bigint[], $31::text[], $32::uuid[], $33::text[], $34::text[],
                               $35::timestamptz[])
                 with ordinality as e(order_n, event_type, session_id, before, after,
                                      created_at, k)
             join numbered o on o.n = e.order_n
         ),
         keyed as (",
        idempotency::insert_record!(),
        "select k.scope, k.key, $1, k.fingerprint, k.status,
                    k.before || o.ticket_number || k.after, k.location, k.created_at,
                    k.expires_at
             from unnest($36::bigint[], $37::text[], $38::text[], $39::text[], $40::bigint[],
                         $41::text[], $42::text[], $43::text[], $44::timestamptz[],
                         $45::timestamptz[])
                 as k(order_n, scope, key, fingerprint, status, before, after, location,
                      created_at, expires_at)
             join numbered o on o.n = k.order_n",
        idempotency::record_kept!(),
        "
         )
         select (select array_agg(ticket_number order by n) from numbered),
                (select last_event_id from counter),
                (select count(*) from taken)"
    ))
    .bind(shop_id)
    .bind(&filings[0].ticket_day)
    .bind(o.order_id)
    .bind(o.session_id)
    .bind(o.status)
    .bind(o.source)
    .bind(o.client_id)
    .bind(o.payload_hash)
    .bind(o.lines)
    .bind(o.note)
    .bind(o.total)
    .bind(o.version)
    .bind(o.created_at)
    .bind(a.request_id)
    .bind(a.client_id)
    .bind(a.status)
    .bind(a.code)
    .bind(a.actor)
    .bind(taken_ids)
    .bind(taken_units)
    .bind(newest)
    .bind(Operation::Order.as_str())
    .bind(l.rows.item_ids)
    .bind(l.rows.deltas)
    .bind(l.rows.before)
    .bind(l.rows.after)
    .bind(l.order_id)
    .bind(l.actor)
    .bind(l.created_at)
    .bind(e.order_n)
    .bind(e.event_type)
    .bind(e.session_id)
    .bind(e.before)
    .bind(e.after)
    .bind(e.created_at)
    .bind(k.order_n)
    .bind(k.scope)
    .bind(k.key)
    .bind(k.fingerprint)
    .bind(k.status)
    .bind(k.before)
    .bind(k.after)
    .bind(k.location)
    .bind(k.created_at)
    .bind(k.expires_at)
    .fetch_one(tx.conn())
    .await?)
}

/// On Citus the writes go as one statement each. Citus runs each
/// data-modifying part of a statement as a plan of its own, whose results
/// travel between nodes (a transaction over several, and a round trip per
/// part): one statement each is as many round trips, and every one of them
/// runs on the shop's worker alone. Returns what [`file_in_one_statement`]
/// does.
async fn file_on_the_shops_worker(
    tx: &mut Tx,
    filing: &Filing<'_>,
    rows: &Rows,
) -> Result<(i64, i64, i64), PgError> {
    let order = &filing.order;
    let shop_id = order.shop_id;
    let now = filing.now;
    let ticket_number: i64 = sqlx::query_scalar(
        "insert into ticket_counters (shop_id, ticket_day, last_number) values ($1, $2, 1)
         on conflict (shop_id, ticket_day)
             do update set last_number = ticket_counters.last_number + 1
         returning last_number",
    )
    .bind(shop_id)
    .bind(&filing.ticket_day)
    .fetch_one(tx.conn())
    .await?;
    sqlx::query(concat!(
        insert_order!(),
        " values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)"
    ))
    .bind(order.order_id)
    .bind(shop_id)
    .bind(order.session_id)
    .bind(&filing.ticket_day)
    .bind(ticket_number)
    .bind(order.status.as_str())
    .bind(order.source.as_str())
    .bind(&order.client_id)
    .bind(filing.payload_hash)
    .bind(serde_json::to_string(&order.items)?)
    .bind(&order.note)
    .bind(order.total)
    .bind(order.version)
    .bind(now)
    .execute(tx.conn())
    .await?;
    audit::append(tx.conn(), shop_id, &filing.audit).await?;
    routes::insert(tx, order.order_id, shop_id).await?;
    let mut taken = 0;
    if !rows.taken_ids.is_empty() {
        taken = sqlx::query(
            "update inventory i
             set stock = i.stock - m.units, version = i.version + 1, updated_at = $4
             from unnest($2::uuid[], $3::bigint[]) as m(item_id, units)
             where i.shop_id = $1 and i.item_id = m.item_id and i.stock >= m.units",
        )
        .bind(shop_id)
        .bind(&rows.taken_ids)
        .bind(&rows.taken_units)
        .bind(now)
        .execute(tx.conn())
        .await?
        .rows_affected() as i64;
    }
    if !rows.logs.item_ids.is_empty() {
        let logs = &rows.logs;
        let mut logged = QueryBuilder::<Postgres>::new(
            "insert into inventory_log (shop_id, item_id, operation, delta, stock_before,
                                        stock_after, order_id, actor, created_at) ",
        );
        logged.push_values(0..logs.item_ids.len(), |mut row, i| {
            row.push_bind(shop_id)
                .push_bind(logs.item_ids[i])
                .push_bind(Operation::Order.as_str())
                .push_bind(logs.deltas[i])
                .push_bind(logs.before[i])
                .push_bind(logs.after[i])
                .push_bind(order.order_id)
                .push_bind(&filing.actor)
                .push_bind(now);
        });
        logged.build().execute(tx.conn()).await?;
    }
    let appended = rows.stock_events.len() as i64 + 1;
    let last_event_id = events::take_ids(tx, shop_id, appended).await?;
    let placed = rows.placed.numbered(ticket_number);
    let appending = rows
        .stock_events
        .iter()
        .map(|data| (EventType::StockChanged, None, data.as_str()))
        .chain([(
            EventType::OrderPlaced,
            Some(order.session_id),
            placed.as_str(),
        )]);
    let first_id = last_event_id - appended + 1;
    events::insert_numbered(tx, shop_id, first_id, appending, now).await?;
    if let Some(claim) = filing.claim {
        let answer = StoredResponse {
            body: rows.answer.numbered(ticket_number),
            ..filing.response.clone()
        };
        idempotency::complete(tx, claim, shop_id, &answer, now).await?;
    }
    Ok((ticket_number, last_event_id, taken))
}

/// Op-log rows, as columns.
#[derive(Default)]
struct Logs {
    item_ids: Vec<Uuid>,
    deltas: Vec<i64>,
    before: Vec<Option<i64>>,
    after: Vec<Option<i64>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_number_goes_where_the_unnumbered_member_was() {
        let text = format!(r#"{{"note":"a","ticketNumber":{UNNUMBERED},"total":3}}"#);
        let cut = AwaitingTicket::of(&text).unwrap();
        assert_eq!(
            cut.numbered(42),
            r#"{"note":"a","ticketNumber":42,"total":3}"#
        );
    }

    #[test]
    fn a_guest_cannot_forge_the_member_in_a_string() {
        // How serde_json writes a note that spells out the member.
        let note = serde_json::to_string(&format!("\"ticketNumber\":{UNNUMBERED}")).unwrap();
        let text = format!(r#"{{"note":{note},"ticketNumber":{UNNUMBERED}}}"#);
        let cut = AwaitingTicket::of(&text).unwrap();
        assert_eq!(
            cut.numbered(7),
            format!(r#"{{"note":{note},"ticketNumber":7}}"#)
        );
    }

    #[test]
    fn a_text_without_exactly_one_member_is_refused() {
        assert!(AwaitingTicket::of(r#"{"ticketNumber":7}"#).is_err());
        let twice = format!(r#"[{{"ticketNumber":{UNNUMBERED}}},{{"ticketNumber":{UNNUMBERED}}}]"#);
        assert!(AwaitingTicket::of(&twice).is_err());
    }
}
