//! Placing an order once its request is judged well-formed: through the
//! in-flight join when it carries a key, answering a guest's retry from
//! committed data, and auditing refusals decided outside the store.

use std::time::Instant;

use ordergate_domain::Rejection;
use ordergate_domain::audit::AuditEntry;
use ordergate_domain::idempotency::ClientId;
use ordergate_domain::order::ValidOrder;
use ordergate_domain::order::admission::Caller;
use ordergate_store::{Claim, PlaceOrder};
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
        order_id: Uuid::now_v7(),
        session_id,
        caller,
        claim: claim.clone(),
        order,
        rules: state.settings().order_rules(busy_deadline),
        request_id: request_id.to_owned(),
        now: state.now(),
    };
    let guest = match &command.caller {
        Caller::Guest { client_id, .. } => Some(client_id.clone()),
        Caller::Staff => None,
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
