//! Audit checks: one row for every order POST, whatever became of it.

use ordergate_domain::audit::AuditEntry;
use ordergate_domain::catalog::CatalogInput;
use ordergate_domain::code::ErrorCode;
use ordergate_domain::{Rejection, Timestamp};
use uuid::Uuid;

use crate::{Claim, PlaceOrder, Store};
use ordergate_domain::order::admission::OrderRules;
use ordergate_domain::session::PinOutcome;

use super::helpers::*;

/// The shop's audit log is exactly `expected` (given oldest first).
async fn assert_audit(store: &dyn Store, shop_id: Uuid, expected: &[AuditEntry]) {
    let newest_first: Vec<AuditEntry> = expected.iter().rev().cloned().collect();
    assert_eq!(audit_rows(store, shop_id).await, newest_first);
}

/// Places `cmd`, expects `rejection`, and expects one audit row for it.
async fn refuse(
    store: &dyn Store,
    cmd: PlaceOrder,
    rejection: Rejection,
    code: &str,
    status: u16,
    rows: &mut Vec<AuditEntry>,
    shop_id: Uuid,
) {
    assert_eq!(rejected(store.place(cmd.clone()).await), rejection);
    rows.push(refusal_row(&cmd, code, status));
    assert_audit(store, shop_id, rows).await;
}

pub async fn audit_records_one_row_for_every_order_outcome_past_the_credentials(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let shop_id = p.shop_id;
    let id = session.session_id;
    let t = instant();
    let at = |n: i64| t + secs(5 * n);
    // Ramen is retired; udon is new and out of stock.
    let udon = Uuid::new_v4();
    let mut input: CatalogInput = p.input();
    input.items.retain(|i| i.menu_item_id != Some(p.ramen));
    input.items.push(item(Some(udon), "Udon", 700, vec![]));
    ok(store.put_catalog(shop_id, input, None, t).await);
    ok(store
        .update_inventory(shop_id, udon, set_stock(Some(0), t), STAFF, t)
        .await);
    let mut rows = Vec::new();

    // Accepted, then replayed.
    let first = guest_order(id, CLIENT, simple_order(p.curry, 1), at(1));
    placed(store.place(first.clone()).await);
    rows.push(success_row(&first, first.order_id, false));
    assert_audit(store, shop_id, &rows).await;
    let again = retry(&first, at(2));
    replayed(store.place(again.clone()).await);
    rows.push(success_row(&again, first.order_id, true));
    assert_audit(store, shop_id, &rows).await;

    let other = simple_order(p.curry, 2);
    let reuse = PlaceOrder {
        claim: Some(Claim {
            fingerprint: other.fingerprint.clone(),
            ..first.claim.clone().expect("guest claim")
        }),
        order: other,
        ..retry(&first, at(3))
    };
    let reused = Rejection::IdempotencyKeyReused;
    refuse(
        store,
        reuse,
        reused,
        "IDEMPOTENCY_KEY_REUSED",
        422,
        &mut rows,
        shop_id,
    )
    .await;

    let wrong_pin = PlaceOrder {
        caller: guest_with_pin(OTHER_CLIENT, Some(WRONG_PIN)),
        ..guest_order(id, OTHER_CLIENT, simple_order(p.curry, 1), at(4))
    };
    let invalid = Rejection::PinInvalid;
    refuse(
        store,
        wrong_pin,
        invalid.clone(),
        "PIN_INVALID",
        401,
        &mut rows,
        shop_id,
    )
    .await;
    let no_pin = PlaceOrder {
        caller: guest_with_pin(OTHER_CLIENT, None),
        ..guest_order(id, OTHER_CLIENT, simple_order(p.curry, 1), at(4) + ms(1))
    };
    refuse(
        store,
        no_pin,
        invalid,
        "PIN_INVALID",
        401,
        &mut rows,
        shop_id,
    )
    .await;

    let original = ok(store.get_order(first.order_id).await).expect("placed");
    let duplicate = guest_order(id, CLIENT, simple_order(p.curry, 1), at(5));
    let dup = Rejection::DuplicatePayload {
        original: Box::new(original),
    };
    refuse(
        store,
        duplicate,
        dup,
        "DUPLICATE_PAYLOAD",
        409,
        &mut rows,
        shop_id,
    )
    .await;

    let second = guest_order(id, OTHER_CLIENT, simple_order(p.curry, 1), at(6));
    placed(store.place(second.clone()).await);
    rows.push(success_row(&second, second.order_id, false));
    let hurried = guest_order(id, OTHER_CLIENT, simple_order(p.curry, 3), at(6) + ms(500));
    let cooldown = Rejection::CooldownActive {
        until: at(6) + secs(2),
    };
    refuse(
        store,
        hurried,
        cooldown,
        "COOLDOWN_ACTIVE",
        429,
        &mut rows,
        shop_id,
    )
    .await;

    let short = guest_order(id, "phone-3", simple_order(udon, 1), at(7));
    let out = Rejection::OutOfStock {
        shortages: vec![ordergate_domain::order::Shortage {
            item_id: udon,
            requested: 1,
            available: 0,
        }],
    };
    refuse(store, short, out, "OUT_OF_STOCK", 409, &mut rows, shop_id).await;

    let stranger = Uuid::new_v4();
    let unknown = guest_order(id, "phone-3", simple_order(stranger, 1), at(8));
    let not_on_menu = Rejection::UnknownMenuItem {
        line: 0,
        menu_item_id: stranger,
    };
    refuse(
        store,
        unknown,
        not_on_menu,
        "UNKNOWN_MENU_ITEM",
        422,
        &mut rows,
        shop_id,
    )
    .await;

    let topped = guest_order(
        id,
        "phone-3",
        order_of(vec![line(p.curry, 1, &[stranger])], "", false),
        at(9),
    );
    assert!(matches!(
        rejected(store.place(topped.clone()).await),
        Rejection::InvalidTopping { line: 0, .. }
    ));
    rows.push(refusal_row(&topped, "INVALID_TOPPING", 422));
    assert_audit(store, shop_id, &rows).await;

    let retired = guest_order(id, "phone-3", simple_order(p.ramen, 1), at(10));
    let gone = Rejection::ItemUnavailable {
        line: 0,
        menu_item_id: p.ramen,
    };
    refuse(
        store,
        retired,
        gone,
        "ITEM_UNAVAILABLE",
        422,
        &mut rows,
        shop_id,
    )
    .await;

    let busy = PlaceOrder {
        rules: OrderRules {
            busy_deadline: past_deadline(),
            ..order_rules()
        },
        ..guest_order(id, "phone-3", simple_order(p.curry, 1), at(11))
    };
    refuse(
        store,
        busy,
        Rejection::SessionBusy,
        "SESSION_BUSY",
        409,
        &mut rows,
        shop_id,
    )
    .await;

    // PIN checks outside an order file nothing; nor does an order refused
    // by the lock, which judged no PIN (the log must not grow without a
    // PIN being tried).
    let pins = order_rules().pin_policy;
    for _ in 0..pins.max_failures {
        let outcome = ok(store.verify_pin(id, Some(WRONG_PIN), pins, at(12)).await);
        assert!(matches!(
            outcome,
            PinOutcome::Invalid | PinOutcome::Locked { .. }
        ));
    }
    assert_audit(store, shop_id, &rows).await;
    let until: Timestamp = ok(store.get_session(id).await)
        .expect("session")
        .pin_locked_until
        .expect("locked");
    let locked = guest_order(id, "phone-3", simple_order(p.curry, 1), at(13));
    assert_eq!(
        rejected(store.place(locked).await),
        Rejection::PinLocked { until }
    );
    assert_audit(store, shop_id, &rows).await;

    // Closed: refused, and a replay after checkout is still a replay.
    let closing = until + secs(1);
    ok(store.checkout(id, closing).await);
    let late = guest_order(id, "phone-3", simple_order(p.curry, 1), closing + secs(1));
    let closed = Rejection::SessionClosed;
    refuse(
        store,
        late,
        closed,
        "SESSION_CLOSED",
        410,
        &mut rows,
        shop_id,
    )
    .await;
    let last = retry(&first, closing + secs(2));
    replayed(store.place(last.clone()).await);
    rows.push(success_row(&last, first.order_id, true));
    assert_audit(store, shop_id, &rows).await;

    // An order for a session nobody knows has no shop to be filed under.
    let nowhere = guest_order(Uuid::new_v4(), CLIENT, simple_order(p.curry, 1), at(1));
    assert_eq!(
        rejected(store.place(nowhere).await),
        Rejection::NotFound("session")
    );
    assert_audit(store, shop_id, &rows).await;

    // A shop without a catalog files its refusal under its own name.
    let bare = new_shop(store).await;
    let bare_table = open_table(store, bare.shop_id, "T1").await;
    let early = guest_order(
        bare_table.session_id,
        CLIENT,
        simple_order(p.curry, 1),
        at(1),
    );
    let mut bare_rows = Vec::new();
    let not_ready = Rejection::CatalogNotReady;
    let code = ErrorCode::CatalogNotReady;
    refuse(
        store,
        early,
        not_ready,
        code.as_str(),
        503,
        &mut bare_rows,
        bare.shop_id,
    )
    .await;
    assert_eq!(audit_rows(store, shop_id).await.len(), rows.len());
}

pub async fn audit_log_is_newest_first_within_the_limit_and_per_shop(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let other = published(store).await;
    let other_table = open_table(store, other.shop_id, "T1").await;
    let t = instant();

    let first = guest_order(session.session_id, CLIENT, simple_order(p.curry, 1), t);
    placed(store.place(first.clone()).await);
    let elsewhere = guest_order(
        other_table.session_id,
        CLIENT,
        simple_order(other.curry, 1),
        t + secs(1),
    );
    placed(store.place(elsewhere.clone()).await);
    let stranger = Uuid::new_v4();
    let bad = guest_order(
        session.session_id,
        OTHER_CLIENT,
        simple_order(stranger, 1),
        t + secs(2),
    );
    rejected(store.place(bad.clone()).await);
    let again = retry(&first, t + secs(3));
    replayed(store.place(again.clone()).await);

    let rows = [
        success_row(&again, first.order_id, true),
        refusal_row(&bad, "UNKNOWN_MENU_ITEM", 422),
        success_row(&first, first.order_id, false),
    ];
    assert_eq!(ok(store.audit_log(p.shop_id, limit(100)).await), rows);
    assert_eq!(ok(store.audit_log(p.shop_id, limit(2)).await), rows[..2]);
    assert_eq!(ok(store.audit_log(p.shop_id, limit(1)).await), rows[..1]);
    assert_eq!(
        ok(store.audit_log(other.shop_id, limit(100)).await),
        [success_row(&elsewhere, elsewhere.order_id, false)]
    );
}

pub async fn record_audit_files_rows_of_known_sessions_only(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let id = session.session_id;
    let t = instant();

    let invalid_body = AuditEntry::refused(
        t + secs(1),
        id,
        "req-1",
        Some(CLIENT),
        ErrorCode::ValidationFailed,
    );
    ok(store.record_audit(invalid_body.clone()).await);
    assert_eq!(invalid_body.status, 422);
    assert_eq!(invalid_body.code.as_str(), "VALIDATION_FAILED");
    assert_eq!(
        audit_rows(store, p.shop_id).await,
        std::slice::from_ref(&invalid_body)
    );

    let bad_client =
        AuditEntry::refused(t + secs(2), id, "req-2", None, ErrorCode::ClientIdInvalid);
    ok(store.record_audit(bad_client.clone()).await);
    assert_eq!(
        audit_rows(store, p.shop_id).await,
        [bad_client.clone(), invalid_body.clone()]
    );

    // Unknown sessions are ignored, without an error.
    let stray = AuditEntry::refused(
        t + secs(3),
        Uuid::new_v4(),
        "req-3",
        Some(CLIENT),
        ErrorCode::IdempotencyKeyMissing,
    );
    ok(store.record_audit(stray).await);
    assert_eq!(
        audit_rows(store, p.shop_id).await,
        [bad_client.clone(), invalid_body.clone()]
    );

    // Recorded rows and the store's own rows share one log.
    let order = guest_order(id, CLIENT, simple_order(p.curry, 1), t + secs(4));
    placed(store.place(order.clone()).await);
    assert_eq!(
        audit_rows(store, p.shop_id).await,
        [
            success_row(&order, order.order_id, false),
            bad_client,
            invalid_body
        ]
    );
}
