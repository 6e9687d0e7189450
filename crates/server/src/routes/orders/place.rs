//! Placing an order once its request is judged well-formed: through the
//! in-flight join when it carries a key, answering a guest's retry from
//! committed data, and auditing refusals decided outside the store.

use std::time::Instant;

use axum::http::StatusCode;

use ordergate_domain::Rejection;
use ordergate_domain::audit::AuditEntry;
use ordergate_domain::idempotency::ClientId;
use ordergate_domain::order::admission::Caller;
use ordergate_domain::order::{Order, OrderReceipt, ValidOrder};
use ordergate_store::{Claim, PlaceOrder, StoredResponse};
use uuid::Uuid;

use crate::app::AppState;
use crate::error::ApiError;
use crate::idempotency::Sent;

/// Files the audit row of a refusal decided outside the store's order
/// transaction, then passes the refusal on.
pub(super) async fn audited(
    state: &AppState,
    session_id: Uuid,
    request_id: &str,
    client_id: Option<&ClientId>,
    refusal: ApiError,
) -> ApiError {
    let entry = AuditEntry::refused(
        state.now(),
        session_id,
        request_id,
        client_id.map(ClientId::as_str),
        refusal.code(),
    );
    match state.store().record_audit(entry).await {
        Ok(()) => refusal,
        Err(e) => e.into(),
    }
}

/// Places an order through the in-flight join when it carries a key.
pub(super) async fn place(
    state: &AppState,
    session_id: Uuid,
    caller: Caller,
    claim: Option<Claim>,
    order: ValidOrder,
    request_id: &str,
    busy_deadline: Instant,
) -> Result<Sent, ApiError> {
    let command = PlaceOrder {
        order_id: state.store().new_order_id(session_id).await?,
        session_id,
        caller,
        claim: claim.clone(),
        order,
        rules: state.settings().order_rules(busy_deadline),
        receipt,
        request_id: request_id.to_owned(),
        now: state.now(),
    };
    let guest = match &command.caller {
        Caller::Guest { client_id, .. } => Some(client_id.clone()),
        Caller::Staff { .. } => None,
    };
    let place_now = || async {
        if let Some(sent) = committed_replay(state, &command).await? {
            return Ok(sent);
        }
        let ordered = state.store().place_order(command).await?;
        let metrics = state.metrics();
        if let (false, Err(rejection)) = (ordered.audited, &ordered.outcome) {
            metrics.order_refused_unaudited(rejection.code().as_str());
        }
        match ordered.outcome {
            Ok(placed) => {
                metrics.order_placed(ordered.shop_id, placed.replayed);
                Ok(Sent {
                    response: placed.response,
                    replayed: placed.replayed,
                })
            }
            Err(rejection) => {
                metrics.order_rejected(ordered.shop_id, rejection.code().as_str());
                Err(rejection.into())
            }
        }
    };
    match claim {
        Some(claim) => {
            let key = claim.scoped_key();
            let wait = state.settings().inflight_wait();
            match state.in_flight().run(key, wait, place_now).await {
                Some(placed) => placed,
                None => {
                    let refusal = Rejection::RequestInProgress.into();
                    match guest {
                        Some(client_id) => {
                            Err(
                                audited(state, session_id, request_id, Some(&client_id), refusal)
                                    .await,
                            )
                        }
                        None => Err(refusal),
                    }
                }
            }
        }
        None => place_now().await,
    }
}

/// Answers a guest's retry of a completed order from committed data, off
/// the single write path: only its audit row is queued there, so replays
/// are not held to the pace of commits.
async fn committed_replay(
    state: &AppState,
    command: &PlaceOrder,
) -> Result<Option<Sent>, ApiError> {
    let (Caller::Guest { proof, .. }, Some(claim)) = (&command.caller, &command.claim) else {
        return Ok(None);
    };
    let store = state.store();
    let policy = state.pin_policy();
    let Some(replay) = store
        .committed_replay(command.session_id, proof, claim, policy, command.now)
        .await?
    else {
        return Ok(None);
    };
    store
        .record_audit(AuditEntry::placed(
            command.now,
            command.session_id,
            &command.request_id,
            command.client_id(),
            replay.order_id,
            true,
        ))
        .await?;
    state.metrics().order_placed(replay.shop_id, true);
    Ok(Some(Sent {
        response: replay.response,
        replayed: true,
    }))
}

/// The answer to a placed order, stored with its key: 201, the order with
/// `"idempotentReplay": false` (a replay flips it), and its location.
fn receipt(order: &Order) -> StoredResponse {
    Sent::render(
        StatusCode::CREATED,
        &OrderReceipt {
            order,
            idempotent_replay: false,
        },
        Some(format!("/api/v1/orders/{}", order.order_id)),
    )
}

#[cfg(test)]
mod tests {
    use ordergate_domain::order::{LineTopping, OrderLine, OrderSource, OrderStatus};

    use super::*;

    /// A receipt exactly as every release so far stored it. A retry after
    /// an upgrade replays the stored bytes: a change here would answer the
    /// same order differently on either side of the upgrade.
    const STORED_RECEIPT: &str = concat!(
        r#"{"orderId":"01930000-0000-7000-8000-000000000001","#,
        r#""shopId":"00000000-0000-0000-0000-000000000002","#,
        r#""sessionId":"00000000-0000-0000-0000-000000000003","#,
        r#""tableLabel":"T4","ticketNumber":17,"status":"placed","source":"guest","#,
        r#""clientId":"phone-1","items":[{"menuItemId":"00000000-0000-0000-0000-000000000004","#,
        r#""name":"Katsu curry","unitPrice":1100,"quantity":2,"toppings":[{"#,
        r#""toppingId":"00000000-0000-0000-0000-000000000005","name":"Egg","price":100}],"#,
        r#""lineTotal":2200}],"note":"no onions","total":2200,"#,
        r#""createdAt":"2026-12-01T12:00:00.123Z","version":1,"idempotentReplay":false}"#
    );

    fn golden_order() -> Order {
        Order {
            order_id: Uuid::from_u128(0x0193_0000_0000_7000_8000_0000_0000_0001),
            shop_id: Uuid::from_u128(2),
            session_id: Uuid::from_u128(3),
            table_label: "T4".into(),
            ticket_number: 17,
            status: OrderStatus::Placed,
            source: OrderSource::Guest,
            client_id: Some("phone-1".into()),
            items: vec![OrderLine {
                menu_item_id: Uuid::from_u128(4),
                name: "Katsu curry".into(),
                unit_price: 1100,
                quantity: 2,
                toppings: vec![LineTopping {
                    topping_id: Uuid::from_u128(5),
                    name: "Egg".into(),
                    price: 100,
                }],
                options: vec![],
                line_total: 2200,
                note: None,
            }],
            note: "no onions".into(),
            total: 2200,
            created_at: "2026-12-01T12:00:00.123Z".parse().unwrap(),
            version: 1,
        }
    }

    #[test]
    fn a_placed_order_stores_the_receipt_format_of_every_release() {
        let response = receipt(&golden_order());
        assert_eq!(response.body, STORED_RECEIPT);
        assert_eq!(response.status, 201);
        assert_eq!(
            response.location.as_deref(),
            Some("/api/v1/orders/01930000-0000-7000-8000-000000000001")
        );
        let replay = response.replayed();
        assert_eq!(
            replay.body,
            STORED_RECEIPT.replace(r#""idempotentReplay":false"#, r#""idempotentReplay":true"#)
        );
        assert_eq!(replay.order_id().unwrap(), golden_order().order_id);
    }
}
