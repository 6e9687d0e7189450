//! Service requests: one open request of a kind per table, announced to
//! the shop and the table, acknowledged once.

use ordergate_domain::Rejection;
use ordergate_domain::events::EventType;
use ordergate_domain::idempotency::{Fingerprint, IdempotencyKey, Scope};
use ordergate_domain::service::{NewServiceRequest, ServiceKind, ServiceStatus};
use uuid::Uuid;

use super::helpers::*;
use crate::{Answer, Called, Claim, ServiceCall, Store, StoreError, StoredResponse};

/// The answer as the server renders it: the status and the request's id.
fn rendered(called: &Called) -> StoredResponse {
    StoredResponse {
        status: if called.created { 201 } else { 200 },
        body: called.request.request_id.to_string(),
        location: None,
    }
}

async fn call(
    store: &dyn Store,
    session_id: Uuid,
    kind: ServiceKind,
    claim: Option<Claim>,
    at: i64,
) -> Result<Answer, StoreError> {
    store
        .request_service(ServiceCall {
            session_id,
            request: NewServiceRequest { kind },
            claim,
            now: instant() + secs(at),
            render: Box::new(rendered),
        })
        .await
}

fn fresh(answer: Answer) -> StoredResponse {
    match answer {
        Answer::Fresh(response) => response,
        Answer::Replayed(response) => panic!("expected a fresh answer, got a replay {response:?}"),
    }
}

/// A table's call is one request while it is open, announced once on the
/// shop's log under the session; acknowledged once, announced again; a
/// call after that is a new request. A closed table calls nobody.
pub async fn service_requests_are_one_open_call_of_a_kind_acknowledged_once(store: &dyn Store) {
    let t = table(store).await;
    let (shop, session) = (t.menu.shop_id, t.session.session_id);
    let last = ok(store.last_event_id(shop).await);
    let first = fresh(ok(call(store, session, ServiceKind::Call, None, 1).await));
    assert_eq!(first.status, 201);
    let again = fresh(ok(call(store, session, ServiceKind::Call, None, 2).await));
    assert_eq!(
        (again.status, &again.body),
        (200, &first.body),
        "the open one"
    );
    let bill = fresh(ok(call(store, session, ServiceKind::Bill, None, 3).await));
    assert_eq!(bill.status, 201, "another kind is another request");

    let events = ok(store.events_after(shop, last, limit(10)).await);
    let told: Vec<_> = events
        .iter()
        .map(|e| (e.event_type, e.session_id))
        .collect();
    let requested = (EventType::ServiceRequested, Some(session));
    assert_eq!(told, [requested, requested]);

    let open = ok(store
        .service_requests(shop, Some(ServiceStatus::Open), limit(10))
        .await);
    assert_eq!(
        open.iter()
            .map(|r| (r.kind, r.table_label.as_str()))
            .collect::<Vec<_>>(),
        [(ServiceKind::Call, "T4"), (ServiceKind::Bill, "T4")],
        "oldest first"
    );
    let called: Uuid = first.body.parse().unwrap();
    assert_eq!(open[0].request_id, called);
    let acked = ok(store.acknowledge_service(called, instant() + secs(4)).await);
    assert_eq!(
        (acked.status, acked.acknowledged_at),
        (ServiceStatus::Acknowledged, Some(instant() + secs(4)))
    );
    let twice = ok(store.acknowledge_service(called, instant() + secs(9)).await);
    assert_eq!(twice, acked, "acknowledged once");
    let after_ack = ok(store.events_after(shop, last + 2, limit(10)).await);
    assert_eq!(
        after_ack.iter().map(|e| e.event_type).collect::<Vec<_>>(),
        [EventType::ServiceAcknowledged]
    );
    let next = fresh(ok(call(store, session, ServiceKind::Call, None, 10).await));
    assert_eq!(next.status, 201, "a new call once the last was answered");
    assert_eq!(
        ok(store.service_requests(shop, None, limit(10)).await).len(),
        3
    );

    assert_eq!(
        rejected(store.acknowledge_service(Uuid::new_v4(), instant()).await),
        Rejection::NotFound("service request")
    );
    assert_eq!(
        rejected(call(store, Uuid::new_v4(), ServiceKind::Call, None, 11).await),
        Rejection::NotFound("session")
    );
    // Checkout answers what is still open (the bill and the new call),
    // announced before the close.
    let before_checkout = ok(store.last_event_id(shop).await);
    ok(store.checkout(session, instant() + secs(12)).await);
    let closing = ok(store.events_after(shop, before_checkout, limit(10)).await);
    assert_eq!(
        closing.iter().map(|e| e.event_type).collect::<Vec<_>>(),
        [
            EventType::ServiceAcknowledged,
            EventType::ServiceAcknowledged,
            EventType::SessionClosed
        ]
    );
    assert_eq!(
        ok(store
            .service_requests(shop, Some(ServiceStatus::Open), limit(10))
            .await),
        []
    );
    assert_eq!(
        rejected(call(store, session, ServiceKind::Bill, None, 13).await),
        Rejection::SessionClosed
    );
}

/// Under a key, a retried call gets its first answer back even once the
/// request was acknowledged (it does not call staff again); the key with
/// another kind is refused.
pub async fn a_keyed_service_call_replays_its_first_answer(store: &dyn Store) {
    let t = table(store).await;
    let session = t.session.session_id;
    let claim = |kind: ServiceKind| Claim {
        scope: Scope::service_requests(session),
        key: IdempotencyKey::parse(Some("0b6f0d4e-8f4a-4c59-9d3e-2f1f7f3c1a01")).unwrap(),
        fingerprint: Fingerprint::of(kind.as_str()),
        expires_at: claim_expiry(),
    };
    let first = fresh(ok(call(
        store,
        session,
        ServiceKind::Call,
        Some(claim(ServiceKind::Call)),
        1,
    )
    .await));
    ok(store
        .acknowledge_service(first.body.parse().unwrap(), instant() + secs(2))
        .await);
    let retried = ok(call(
        store,
        session,
        ServiceKind::Call,
        Some(claim(ServiceKind::Call)),
        3,
    )
    .await);
    assert_eq!(retried, Answer::Replayed(first));
    assert_eq!(
        rejected(
            call(
                store,
                session,
                ServiceKind::Bill,
                Some(claim(ServiceKind::Bill)),
                4
            )
            .await
        ),
        Rejection::IdempotencyKeyReused
    );
    let open = ok(store
        .service_requests(t.menu.shop_id, Some(ServiceStatus::Open), limit(10))
        .await);
    assert_eq!(open, [], "nobody was called twice");
}
