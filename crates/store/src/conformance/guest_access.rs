//! Guest access and abuse limits (API v1.1): guest tokens, unlocking a
//! table, the per-session order rate, the grace after checkout, refusals
//! that judged no credentials (not audited), and the audit purge.

use ordergate_domain::Rejection;
use ordergate_domain::session::{GuestProof, PinPolicy, SESSION_ORDER_WINDOW, SessionStatus};
use uuid::Uuid;

use crate::{GuestGrant, PlaceOrder, Store};
use ordergate_domain::order::admission::OrderRules;
use ordergate_domain::session::PinOutcome;

use super::helpers::*;

fn grant(session_id: Uuid, pin: Option<&str>, digest: &str, policy: PinPolicy) -> GuestGrant {
    GuestGrant {
        session_id,
        pin: pin.map(str::to_owned),
        token_digest: digest.to_owned(),
        expires_at: instant() + secs(3600),
        policy,
        now: instant(),
    }
}

fn token_order(session_id: Uuid, item: Uuid, at: ordergate_domain::Timestamp) -> PlaceOrder {
    let mut order = guest_order(session_id, CLIENT, simple_order(item, 1), at);
    order.caller = ordergate_domain::order::admission::Caller::Guest {
        proof: GuestProof::Token,
        client_id: client_id(CLIENT),
    };
    order
}

pub async fn guest_token_opens_its_active_session_until_checkout_or_expiry(store: &dyn Store) {
    let session = pin_session(store).await;
    let id = session.session_id;
    let rule = policy(5, secs(300));
    let t = instant();
    assert_eq!(
        ok(store
            .grant_guest_access(grant(id, Some(PIN), "digest-a", rule))
            .await),
        PinOutcome::Accepted(session.clone())
    );
    ok(store
        .grant_guest_access(grant(id, Some(PIN), "digest-b", rule))
        .await);
    assert_eq!(
        ok(store.guest_token_session(id, "digest-a", t).await),
        Some(session.clone())
    );
    assert_eq!(ok(store.guest_token_session(id, "digest-x", t).await), None);
    let elsewhere = open_table(store, session.shop_id, "T8").await;
    assert_eq!(
        ok(store
            .guest_token_session(elsewhere.session_id, "digest-a", t)
            .await),
        None,
        "a token opens its own table's session only"
    );
    assert_eq!(
        ok(store
            .guest_token_session(id, "digest-a", t + secs(3600))
            .await),
        None,
        "expired"
    );

    // Expired tokens are purged; live ones stay.
    let purged = ok(store.purge_expired(t + secs(3600)).await);
    assert_eq!(purged, 2);
    ok(store
        .grant_guest_access(GuestGrant {
            expires_at: t + secs(7200),
            ..grant(id, Some(PIN), "digest-c", rule)
        })
        .await);
    assert_eq!(ok(store.purge_expired(t + secs(3600)).await), 0);

    // Checkout ends every token of the session at once.
    ok(store.checkout(id, t + secs(60)).await);
    assert_eq!(ok(store.guest_token_session(id, "digest-c", t).await), None);
}

pub async fn guest_access_judges_the_pin_and_records_a_token_only_when_accepted(store: &dyn Store) {
    let session = pin_session(store).await;
    let id = session.session_id;
    let rule = policy(2, secs(300));
    let t = instant();
    for pin in [Some(WRONG_PIN), None] {
        assert_eq!(
            ok(store
                .grant_guest_access(grant(id, pin, "wrong", rule))
                .await),
            PinOutcome::Invalid
        );
    }
    let stored = ok(store.get_session(id).await).expect("session");
    assert_eq!(
        stored.pin_failures, 1,
        "a wrong PIN counts, a missing one not"
    );
    assert_eq!(
        ok(store
            .grant_guest_access(grant(id, Some(WRONG_PIN), "wrong", rule))
            .await),
        PinOutcome::Invalid
    );
    let until = t + secs(300);
    assert_eq!(
        ok(store
            .grant_guest_access(grant(id, Some(PIN), "locked", rule))
            .await),
        PinOutcome::Locked { until }
    );
    for digest in ["wrong", "locked"] {
        assert_eq!(ok(store.guest_token_session(id, digest, t).await), None);
    }

    // A closed session accepts its PIN (reads within the grace) but grants nothing.
    let other = open_table(store, session.shop_id, "T9").await;
    ok(store.checkout(other.session_id, t).await);
    let PinOutcome::Accepted(closed) = ok(store
        .grant_guest_access(grant(other.session_id, Some(PIN), "closed", rule))
        .await)
    else {
        panic!("the right PIN of a closed session is accepted");
    };
    assert_eq!(closed.status, SessionStatus::Closed);
    assert_eq!(
        ok(store
            .guest_token_session(other.session_id, "closed", t)
            .await),
        None
    );
}

pub async fn unlock_clears_the_lock_and_the_failures(store: &dyn Store) {
    let session = pin_session(store).await;
    let id = session.session_id;
    let rule = policy(1, secs(300));
    let t = instant();
    ok(store.verify_pin(id, Some(WRONG_PIN), rule, t).await);
    assert_eq!(
        ok(store.verify_pin(id, Some(PIN), rule, t).await),
        PinOutcome::Locked {
            until: t + secs(300)
        }
    );
    let unlocked = ok(store.unlock_pin(id).await);
    assert_eq!(unlocked, session, "as it was opened: no failures, no lock");
    assert_eq!(ok(store.get_session(id).await), Some(session.clone()));
    assert_eq!(
        ok(store.verify_pin(id, Some(PIN), rule, t).await),
        PinOutcome::Accepted(session)
    );
    assert_eq!(
        rejected(store.unlock_pin(Uuid::new_v4()).await),
        Rejection::NotFound("session")
    );
}

pub async fn orders_with_a_guest_token_pass_a_pin_lock(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let id = session.session_id;
    let rule = policy(1, secs(300));
    let t = instant();
    ok(store.verify_pin(id, Some(WRONG_PIN), rule, t).await);
    let by_pin = PlaceOrder {
        rules: OrderRules {
            pin_policy: rule,
            ..lenient_rules()
        },
        ..guest_order(id, CLIENT, simple_order(p.curry, 1), t + secs(1))
    };
    let locked = ok(store.place_order(by_pin).await);
    assert!(matches!(locked.outcome, Err(Rejection::PinLocked { .. })));
    let by_token = PlaceOrder {
        rules: OrderRules {
            pin_policy: rule,
            ..lenient_rules()
        },
        ..token_order(id, p.curry, t + secs(2))
    };
    let placed = placed(store.place(by_token.clone()).await);
    assert_eq!(session_order_ids(store, id).await, [placed.order_id]);
    // Its retry replays, from committed data and down the full path alike.
    let claim = by_token.claim.clone().expect("a claim");
    let replay = ok(store
        .committed_replay(id, &GuestProof::Token, &claim, rule, t + secs(3))
        .await)
    .expect("a committed replay for the token");
    assert_eq!(replay.order_id, placed.order_id);
    replayed(store.place(retry(&by_token, t + secs(3))).await);
}

pub async fn refusals_that_judged_no_credentials_are_not_audited(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let id = session.session_id;
    let t = instant();
    let rules = OrderRules {
        pin_policy: policy(1, secs(300)),
        ..lenient_rules()
    };
    let wrong = PlaceOrder {
        caller: guest_with_pin(CLIENT, Some(WRONG_PIN)),
        rules,
        ..guest_order(id, CLIENT, simple_order(p.curry, 1), t)
    };
    let judged = ok(store.place_order(wrong.clone()).await);
    assert_eq!(
        (judged.outcome, judged.audited),
        (Err(Rejection::PinInvalid), true)
    );
    let while_locked = PlaceOrder {
        rules,
        ..guest_order(id, CLIENT, simple_order(p.curry, 1), t + secs(1))
    };
    let locked = ok(store.place_order(while_locked).await);
    assert!(matches!(locked.outcome, Err(Rejection::PinLocked { .. })));
    assert!(!locked.audited);
    assert_eq!(
        audit_rows(store, p.shop_id).await,
        [refusal_row(&wrong, "PIN_INVALID", 401)],
        "only the judged PIN is on file"
    );
}

pub async fn a_closed_session_is_gone_for_guests_after_its_grace(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let id = session.session_id;
    let t = instant();
    let first = guest_order(id, CLIENT, simple_order(p.curry, 1), t);
    let claim = first.claim.clone().expect("a claim");
    let placed = placed(store.place(first.clone()).await);
    let closed_at = t + secs(60);
    ok(store.checkout(id, closed_at).await);
    let rule = first.rules.pin_policy;

    // Within the grace: the PIN reads, and old keys replay.
    let within = closed_at + CLOSED_GRACE - secs(1);
    assert!(matches!(
        ok(store.verify_pin(id, Some(PIN), rule, within).await),
        PinOutcome::Accepted(_)
    ));
    assert_eq!(
        replayed(store.place(retry(&first, within)).await).order_id,
        placed.order_id
    );

    // After it: nothing, and nothing judged or audited.
    let after = closed_at + CLOSED_GRACE;
    let rows_before = audit_rows(store, p.shop_id).await.len();
    for pin in [Some(PIN), Some(WRONG_PIN), None] {
        assert_eq!(
            ok(store.verify_pin(id, pin, rule, after).await),
            PinOutcome::Gone
        );
    }
    assert_eq!(
        ok(store.get_session(id).await)
            .expect("session")
            .pin_failures,
        0
    );
    assert_eq!(
        ok(store
            .committed_replay(id, &pin_proof(), &claim, rule, after)
            .await),
        None
    );
    let late = ok(store.place_order(retry(&first, after)).await);
    assert_eq!(
        (late.outcome, late.audited),
        (Err(Rejection::SessionClosed), false)
    );
    assert_eq!(audit_rows(store, p.shop_id).await.len(), rows_before);
}

pub async fn a_session_places_at_most_its_limit_of_guest_orders_per_window(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let id = session.session_id;
    let t = instant();
    let rules = OrderRules {
        session_order_limit: 3,
        ..lenient_rules()
    };
    let order_from = |client: &str, at| PlaceOrder {
        rules,
        ..guest_order(id, client, simple_order(p.curry, 1), at)
    };
    // Three devices, one order each: whatever the client id, the table counts.
    for (n, client) in ["phone-a", "phone-b", "phone-c"].into_iter().enumerate() {
        placed(store.place(order_from(client, t + secs(n as i64))).await);
    }
    // Staff orders are not counted, and not limited.
    placed(
        store
            .place(staff_order(id, simple_order(p.curry, 1), t + secs(3)))
            .await,
    );
    assert_eq!(
        rejected(store.place(order_from("phone-d", t + secs(4))).await),
        Rejection::SessionRateLimited {
            until: t + SESSION_ORDER_WINDOW
        }
    );
    // Once the first leaves the window, one more fits.
    placed(
        store
            .place(order_from("phone-d", t + SESSION_ORDER_WINDOW))
            .await,
    );
    assert_eq!(
        rejected(
            store
                .place(order_from("phone-e", t + SESSION_ORDER_WINDOW))
                .await
        ),
        Rejection::SessionRateLimited {
            until: t + secs(1) + SESSION_ORDER_WINDOW
        }
    );
    let off = PlaceOrder {
        rules: OrderRules {
            session_order_limit: 0,
            ..rules
        },
        ..order_from("phone-e", t + SESSION_ORDER_WINDOW)
    };
    placed(store.place(off).await);
}

pub async fn purge_audit_deletes_only_rows_before_the_cutoff_in_batches(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let id = session.session_id;
    let t = instant();
    for n in 0..5 {
        let wrong = PlaceOrder {
            caller: guest_with_pin(CLIENT, Some(WRONG_PIN)),
            rules: OrderRules {
                pin_policy: policy(100, secs(300)),
                ..lenient_rules()
            },
            ..guest_order(id, CLIENT, simple_order(p.curry, 1), t + secs(n))
        };
        ok(store.place_order(wrong).await);
    }
    assert_eq!(ok(store.purge_audit(t + secs(3), 2).await), 2);
    assert_eq!(ok(store.purge_audit(t + secs(3), 2).await), 1);
    assert_eq!(ok(store.purge_audit(t + secs(3), 2).await), 0);
    let left: Vec<_> = audit_rows(store, p.shop_id)
        .await
        .iter()
        .map(|row| row.at)
        .collect();
    assert_eq!(left, [t + secs(4), t + secs(3)]);
}
