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
use ordergate_domain::inventory::{Cause, StockMove};
use ordergate_domain::order::Order;
use ordergate_store::{Change, Claim, StoredResponse};
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
    pub(crate) order: &'a Order,
    pub(crate) ticket_day: &'a str,
    pub(crate) payload_hash: &'a str,
    pub(crate) audit: &'a AuditEntry,
    /// Taken from levels this transaction has locked.
    pub(crate) moves: &'a [StockMove],
    pub(crate) cause: &'a Cause<'a>,
    /// The order's answer, rendered from `order`; kept with the key if
    /// there is one.
    pub(crate) response: &'a StoredResponse,
    pub(crate) claim: Option<&'a Claim>,
    pub(crate) now: Timestamp,
}

/// Files the order and returns its answer with its ticket number. Locks
/// are taken in the order every transaction takes them (see
/// `events::append`): the ticket counter, then the event counter.
pub(crate) async fn file(tx: &mut Tx, filing: &Filing<'_>) -> Result<StoredResponse, PgError> {
    let order = filing.order;
    let shop_id = order.shop_id;
    let rows = Rows::of(filing)?;
    let (ticket_number, last_event_id, taken) = if tx.distributed() {
        file_on_the_shops_worker(tx, filing, &rows).await?
    } else {
        file_in_one_statement(tx, filing, &rows).await?
    };
    if taken != rows.taken_ids.len() as i64 {
        return Err(PgError::Corrupt(format!(
            "stock of order {} changed under its row locks",
            order.order_id
        )));
    }
    tx.note_event(shop_id, last_event_id);
    if !filing.moves.is_empty() {
        tx.note(Change::Stock(shop_id));
    }
    Ok(StoredResponse {
        body: rows.answer.numbered(ticket_number),
        ..filing.response.clone()
    })
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
            placed: AwaitingTicket::of(&serde_json::to_string(filing.order)?)?,
            answer: AwaitingTicket::of(&filing.response.body)?,
            taken_ids: Vec::with_capacity(filing.moves.len()),
            taken_units: Vec::with_capacity(filing.moves.len()),
            logs: Logs::default(),
            stock_events: Vec::with_capacity(filing.moves.len()),
        };
        for step in filing.moves {
            rows.taken_ids.push(step.item_id);
            rows.taken_units.push(-step.delta);
            if let Some(entry) = filing
                .cause
                .log_entry(step.item_id, &step.before, &step.after)
            {
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

/// Every write in one statement: the ticket number, the newest event id
/// and how many stock rows the order took. The shop's counters are held
/// for that statement and the commit alone.
async fn file_in_one_statement(
    tx: &mut Tx,
    filing: &Filing<'_>,
    rows: &Rows,
) -> Result<(i64, i64, i64), PgError> {
    let order = filing.order;
    let shop_id = order.shop_id;
    let claim = filing.claim;
    Ok(sqlx::query_as(concat!(
        "with ticket as (
             insert into ticket_counters (shop_id, ticket_day, last_number) values ($1, $4, 1)
             on conflict (shop_id, ticket_day)
                 do update set last_number = ticket_counters.last_number + 1
             returning last_number
         ),
         placed as (
             ",
        insert_order!(),
        "
             select $2, $1, $3, $4, last_number, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13
             from ticket
             returning ticket_number
         ),
         audited as (
             insert into audit_log (shop_id, session_id, request_id, client_id, status, code,
                                    idempotent_replay, order_id, created_at, actor)
             values ($1, $3, $14, $15, $16, $17, false, $2, $13, $18)
         ),
         taken as (
             update inventory i
             set stock = i.stock - m.units, version = i.version + 1, updated_at = $13
             from unnest($19::uuid[], $20::bigint[]) as m(item_id, units)
             where i.shop_id = $1 and i.item_id = m.item_id and i.stock >= m.units
             returning i.item_id
         ),
         logged as (
             insert into inventory_log (shop_id, item_id, operation, delta, stock_before,
                                        stock_after, order_id, actor, created_at)
             select $1, l.item_id, $21, l.delta, l.before, l.after, $2, $22, $13
             from unnest($23::uuid[], $24::bigint[], $25::bigint[], $26::bigint[])
                 as l(item_id, delta, before, after)
         ),
         counter as (
             insert into event_counters (shop_id, last_event_id)
             select $1, cardinality($29::text[]) + 1 from placed
             on conflict (shop_id)
                 do update set last_event_id = event_counters.last_event_id
                                               + excluded.last_event_id
             returning last_event_id
         ),
         appended as (
             ",
        events::insert_events!(),
        "
             select $1, c.last_event_id - cardinality($29::text[]) - 1 + e.n,
                    case when e.n > cardinality($29::text[]) then $28 else $27 end,
                    case when e.n > cardinality($29::text[]) then $3::uuid end,
                    e.data, $13
             from counter c, placed p,
                  unnest($29::text[] || ($30 || p.ticket_number || $31))
                      with ordinality as e(data, n)
         ),
         keyed as (",
        idempotency::insert_record!(),
        "select $32, $33, $1, $34, $35, $36 || p.ticket_number || $37, $38, $13, $39
             from placed p where $32::text is not null",
        idempotency::record_kept!(),
        "
         )
         select p.ticket_number, c.last_event_id, (select count(*) from taken)
         from placed p, counter c"
    ))
    .bind(shop_id)
    .bind(order.order_id)
    .bind(order.session_id)
    .bind(filing.ticket_day)
    .bind(order.status.as_str())
    .bind(order.source.as_str())
    .bind(&order.client_id)
    .bind(filing.payload_hash)
    .bind(serde_json::to_string(&order.items)?)
    .bind(&order.note)
    .bind(order.total)
    .bind(order.version)
    .bind(filing.now)
    .bind(&filing.audit.request_id)
    .bind(&filing.audit.client_id)
    .bind(i64::from(filing.audit.status))
    .bind(filing.audit.code.as_str())
    .bind(&filing.audit.actor)
    .bind(&rows.taken_ids)
    .bind(&rows.taken_units)
    .bind(filing.cause.operation.as_str())
    .bind(filing.cause.actor)
    .bind(&rows.logs.item_ids)
    .bind(&rows.logs.deltas)
    .bind(&rows.logs.before)
    .bind(&rows.logs.after)
    .bind(EventType::StockChanged.as_str())
    .bind(EventType::OrderPlaced.as_str())
    .bind(&rows.stock_events)
    .bind(&rows.placed.before)
    .bind(&rows.placed.after)
    .bind(claim.map(|claim| claim.scope.as_str()))
    .bind(claim.map(|claim| claim.key.as_str()))
    .bind(claim.map(|claim| claim.fingerprint.as_str()))
    .bind(i64::from(filing.response.status))
    .bind(&rows.answer.before)
    .bind(&rows.answer.after)
    .bind(&filing.response.location)
    .bind(claim.map(|claim| claim.expires_at))
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
    let order = filing.order;
    let shop_id = order.shop_id;
    let now = filing.now;
    let ticket_number: i64 = sqlx::query_scalar(
        "insert into ticket_counters (shop_id, ticket_day, last_number) values ($1, $2, 1)
         on conflict (shop_id, ticket_day)
             do update set last_number = ticket_counters.last_number + 1
         returning last_number",
    )
    .bind(shop_id)
    .bind(filing.ticket_day)
    .fetch_one(tx.conn())
    .await?;
    sqlx::query(concat!(
        insert_order!(),
        " values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)"
    ))
    .bind(order.order_id)
    .bind(shop_id)
    .bind(order.session_id)
    .bind(filing.ticket_day)
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
    audit::append(tx.conn(), shop_id, filing.audit).await?;
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
                .push_bind(filing.cause.operation.as_str())
                .push_bind(logs.deltas[i])
                .push_bind(logs.before[i])
                .push_bind(logs.after[i])
                .push_bind(order.order_id)
                .push_bind(filing.cause.actor)
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
