//! Order placement checks: prices, tickets, history, and exactly-once
//! replays of an `Idempotency-Key`.

use chrono::Duration;
use ordergate_domain::idempotency::{Fingerprint, IdempotencyKey, Scope};
use ordergate_domain::inventory::Operation;
use ordergate_domain::order::{OrderSource, OrderStatus};
use ordergate_domain::session::{Bill, GuestProof, SessionStatus};
use ordergate_domain::{Rejection, Timestamp};
use uuid::Uuid;

use crate::{Claim, PlaceOrder, Store};
use ordergate_domain::order::admission::Caller;
use ordergate_domain::session::PinOutcome;

use super::helpers::*;

fn at(rfc3339: &str) -> Timestamp {
    rfc3339.parse().expect("an RFC 3339 instant")
}

pub async fn order_placed_is_priced_from_the_catalog_and_numbered_from_one(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let t = instant();

    let first = guest_order(
        session.session_id,
        CLIENT,
        order_of(
            vec![line(p.curry, 2, &[p.cheese]), line(p.ramen, 1, &[])],
            "  no onions ",
            false,
        ),
        t + secs(1),
    );
    let answer = placed(store.place(first.clone()).await);
    assert_eq!(
        answer.order_id, first.order_id,
        "the caller's order id is used"
    );
    let order1 = placed_order(
        &first,
        &session,
        1,
        vec![
            priced(p.curry, "Curry", 900, 2, &[(p.cheese, "Cheese", 100)]),
            priced(p.ramen, "Ramen", 850, 1, &[]),
        ],
    );
    // The prices, spelled out: item plus toppings, times the quantity.
    assert_eq!(
        (order1.items[0].unit_price, order1.items[0].line_total),
        (1000, 2000)
    );
    assert_eq!(
        (order1.items[1].unit_price, order1.items[1].line_total),
        (850, 850)
    );
    assert_eq!(order1.total, 2850);
    assert_eq!(order1.note, "no onions", "the note is stored trimmed");
    assert_eq!(order1.status, OrderStatus::Placed);
    assert_eq!(order1.source, OrderSource::Guest);
    assert_eq!(order1.client_id.as_deref(), Some(CLIENT));
    assert_eq!(order1.table_label, "T4");
    assert_receipt(&answer.response, &order1, false);
    assert_stored(store, &order1).await;
    assert_eq!(
        ok(store.session_orders(session.session_id, limit(20)).await),
        std::slice::from_ref(&order1)
    );

    let second = guest_order(
        session.session_id,
        OTHER_CLIENT,
        simple_order(p.ramen, 3),
        t + secs(2),
    );
    let answer = placed(store.place(second.clone()).await);
    let order2 = placed_order(
        &second,
        &session,
        2,
        vec![priced(p.ramen, "Ramen", 850, 3, &[])],
    );
    assert_eq!(order2.total, 2550);
    assert_receipt(&answer.response, &order2, false);
    assert_stored(store, &order2).await;
    assert_stored(store, &order1).await;
    assert_eq!(
        ok(store.session_orders(session.session_id, limit(20)).await),
        [order2.clone(), order1.clone()],
        "newest first"
    );
    assert_eq!(
        ok(store.session_orders(session.session_id, limit(1)).await),
        std::slice::from_ref(&order2),
        "the limit is respected"
    );

    // Ticket numbers count per shop: another shop starts at 1 again ...
    let other = published(store).await;
    let elsewhere = open_table(store, other.shop_id, "T4").await;
    let third = guest_order(
        elsewhere.session_id,
        CLIENT,
        simple_order(other.curry, 1),
        t + secs(3),
    );
    let answer = placed(store.place(third.clone()).await);
    let order3 = placed_order(
        &third,
        &elsewhere,
        1,
        vec![priced(other.curry, "Curry", 900, 1, &[])],
    );
    assert_receipt(&answer.response, &order3, false);
    assert_stored(store, &order3).await;

    // ... and the first one goes on from where it was.
    let fourth = guest_order(
        session.session_id,
        "phone-3",
        simple_order(p.curry, 1),
        t + secs(4),
    );
    placed(store.place(fourth.clone()).await);
    let order4 = placed_order(
        &fourth,
        &session,
        3,
        vec![priced(p.curry, "Curry", 900, 1, &[])],
    );
    assert_stored(store, &order4).await;
}

pub async fn order_tickets_restart_at_midnight_in_the_shop_timezone(store: &dyn Store) {
    // 23:59:59.999 on 10 June in Tokyo, then Tokyo's midnight, which is
    // still 10 June in UTC.
    let last_tokyo_ms = at("2024-06-10T14:59:59.999Z");
    let tokyo_midnight = at("2024-06-10T15:00:00Z");
    let utc_midnight = at("2024-06-11T00:00:00Z");

    let tokyo = published_in(store, "Asia/Tokyo").await;
    let tokyo_table = open_table(store, tokyo.shop_id, "T1").await;
    let utc = published_in(store, "UTC").await;
    let utc_table = open_table(store, utc.shop_id, "T1").await;

    let mut seen = Vec::new();
    for (n, (menu, session, now)) in [
        (&tokyo, &tokyo_table, instant()),
        (&tokyo, &tokyo_table, last_tokyo_ms),
        (&tokyo, &tokyo_table, tokyo_midnight),
        (&tokyo, &tokyo_table, utc_midnight),
        (&utc, &utc_table, last_tokyo_ms),
        (&utc, &utc_table, tokyo_midnight),
        (&utc, &utc_table, utc_midnight),
    ]
    .into_iter()
    .enumerate()
    {
        let cmd = guest_order(
            session.session_id,
            &format!("phone-{n}"),
            simple_order(menu.ramen, 1),
            now,
        );
        let answer = placed(store.place(cmd).await);
        let order = ok(store.get_order(answer.order_id).await).expect("placed order");
        assert_eq!(order.created_at, now);
        seen.push(order.ticket_number);
    }
    assert_eq!(
        seen,
        [1, 2, 1, 2, 1, 2, 1],
        "Tokyo: two on 10 June, two on 11 June; UTC: two on 10 June, one on 11 June"
    );
}

pub async fn order_history_is_newest_first_and_the_bill_oldest_first(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let next_table = open_table(store, p.shop_id, "T5").await;
    let t = instant();

    let mut orders = Vec::new();
    for (n, (client, order)) in [
        (CLIENT, simple_order(p.curry, 1)),
        (OTHER_CLIENT, simple_order(p.ramen, 2)),
        (
            "phone-3",
            order_of(vec![line(p.curry, 1, &[p.cheese])], "", false),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let cmd = guest_order(session.session_id, client, order, t + secs(n as i64 + 1));
        placed(store.place(cmd.clone()).await);
        orders.push(ok(store.get_order(cmd.order_id).await).expect("placed order"));
    }
    let elsewhere = guest_order(
        next_table.session_id,
        CLIENT,
        simple_order(p.ramen, 1),
        t + secs(4),
    );
    placed(store.place(elsewhere.clone()).await);

    let totals: Vec<i64> = orders.iter().map(|o| o.total).collect();
    assert_eq!(totals, [900, 1700, 1000]);
    let newest_first: Vec<_> = orders.iter().rev().cloned().collect();
    assert_eq!(
        ok(store.session_orders(session.session_id, limit(20)).await),
        newest_first
    );
    assert_eq!(
        ok(store.session_orders(session.session_id, limit(2)).await),
        newest_first[..2]
    );
    assert_eq!(
        session_order_ids(store, next_table.session_id).await,
        [elsewhere.order_id]
    );

    let closed_at = t + Duration::hours(1);
    let bill = ok(store.checkout(session.session_id, closed_at).await);
    assert_eq!(
        bill,
        Bill {
            session_id: session.session_id,
            table_label: "T4".into(),
            status: SessionStatus::Closed,
            closed_at,
            orders: orders.clone(),
            total: 3600,
        },
        "oldest first, every order counted"
    );
    assert_eq!(
        ok(store.session_orders(session.session_id, limit(20)).await),
        newest_first,
        "checkout leaves the orders as they were"
    );
}

pub async fn order_replay_returns_the_first_response_and_places_nothing(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let t = instant();
    ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(Some(10), t), STAFF, t)
        .await);

    let first = guest_order(
        session.session_id,
        CLIENT,
        order_of(vec![line(p.curry, 2, &[p.cheese])], "", false),
        t + secs(1),
    );
    let fresh = placed(store.place(first.clone()).await);
    let order = placed_order(
        &first,
        &session,
        1,
        vec![priced(
            p.curry,
            "Curry",
            900,
            2,
            &[(p.cheese, "Cheese", 100)],
        )],
    );
    assert_receipt(&fresh.response, &order, false);

    // Within the duplicate window and the cooldown: the replay comes first.
    let again = retry(&first, t + secs(2));
    let replay = replayed(store.place(again.clone()).await);
    assert_eq!(
        replay.order_id, first.order_id,
        "the first order, not the retry's id"
    );
    assert_receipt(&replay.response, &order, true);
    assert_eq!(
        replay.response,
        fresh.response.clone().replayed(),
        "every byte as first sent but the flag"
    );
    let much_later = replayed(store.place(retry(&first, t + Duration::hours(1))).await);
    assert_eq!(much_later, replay);

    assert_eq!(
        session_order_ids(store, session.session_id).await,
        [first.order_id],
        "no second order"
    );
    assert_eq!(ok(store.get_order(again.order_id).await), None);
    assert_stored(store, &order).await;
    assert_eq!(
        stock_of(store, p.shop_id, p.curry).await,
        Some(8),
        "stock taken once"
    );
    let order_rows = ok(store.inventory_log(p.shop_id, limit(100)).await)
        .into_iter()
        .filter(|e| e.operation == Operation::Order)
        .count();
    assert_eq!(order_rows, 1);

    // The replays took no ticket number.
    let next = guest_order(
        session.session_id,
        OTHER_CLIENT,
        simple_order(p.ramen, 1),
        t + secs(3),
    );
    placed(store.place(next.clone()).await);
    assert_eq!(
        ok(store.get_order(next.order_id).await)
            .expect("placed")
            .ticket_number,
        2
    );
}

pub async fn order_key_reused_for_another_request_is_refused(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let t = instant();
    let first = guest_order(
        session.session_id,
        CLIENT,
        simple_order(p.curry, 1),
        t + secs(1),
    );
    placed(store.place(first.clone()).await);
    let claim = first.claim.clone().expect("guest claim");

    for (n, other) in [
        simple_order(p.curry, 2),
        simple_order(p.ramen, 1),
        order_of(vec![line(p.curry, 1, &[])], "", true),
        order_of(vec![line(p.curry, 1, &[])], "extra spicy", false),
    ]
    .into_iter()
    .enumerate()
    {
        assert_ne!(other.fingerprint, first.order.fingerprint);
        let reuse = PlaceOrder {
            claim: Some(Claim {
                fingerprint: other.fingerprint.clone(),
                ..claim.clone()
            }),
            order: other,
            ..retry(&first, t + secs(n as i64 + 2))
        };
        assert_eq!(
            rejected(store.place(reuse).await),
            Rejection::IdempotencyKeyReused,
            "request {n}"
        );
    }
    assert_eq!(
        session_order_ids(store, session.session_id).await,
        [first.order_id]
    );

    // The original request still replays.
    let replay = replayed(store.place(retry(&first, t + secs(10))).await);
    assert_eq!(replay.order_id, first.order_id);
}

pub async fn order_same_key_in_another_scope_is_another_order(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let next_table = open_table(store, p.shop_id, "T5").await;
    let t = instant();
    let first = guest_order(
        session.session_id,
        CLIENT,
        simple_order(p.curry, 1),
        t + secs(1),
    );
    placed(store.place(first.clone()).await);
    let claim = first.claim.clone().expect("guest claim");

    // The same key and request at another table: that session's own key.
    let elsewhere = PlaceOrder {
        session_id: next_table.session_id,
        claim: Some(Claim {
            scope: Scope::session(next_table.session_id),
            ..claim.clone()
        }),
        ..retry(&first, t + secs(2))
    };
    let answer = placed(store.place(elsewhere.clone()).await);
    assert_eq!(answer.order_id, elsewhere.order_id);
    let stored = ok(store.get_order(elsewhere.order_id).await).expect("placed");
    assert_eq!(stored.session_id, next_table.session_id);
    assert_eq!(stored.ticket_number, 2);

    // The same key from staff at the first table: the staff scope's key.
    let staff = PlaceOrder {
        claim: Some(Claim {
            scope: Scope::staff_post(&format!(
                "/api/v1/sessions/{}/staff-orders",
                session.session_id
            )),
            ..claim.clone()
        }),
        ..staff_order(session.session_id, first.order.clone(), t + secs(3))
    };
    let answer = placed(store.place(staff.clone()).await);
    assert_eq!(answer.order_id, staff.order_id);

    // Each key replays its own order.
    for (cmd, original) in [(&first, 1), (&elsewhere, 2), (&staff, 3)] {
        let replay = replayed(store.place(retry(cmd, t + secs(4))).await);
        assert_eq!(replay.order_id, cmd.order_id, "order {original}");
    }
    assert_eq!(
        session_order_ids(store, session.session_id).await,
        [staff.order_id, first.order_id]
    );
    assert_eq!(
        session_order_ids(store, next_table.session_id).await,
        [elsewhere.order_id]
    );
}

pub async fn order_key_past_its_expiry_is_a_new_key(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let t = instant();
    let expires_at = t + secs(10);
    let mut first = guest_order(session.session_id, CLIENT, simple_order(p.curry, 1), t);
    first.rules = lenient_rules();
    first.claim.as_mut().expect("guest claim").expires_at = expires_at;
    placed(store.place(first.clone()).await);

    let replay = replayed(store.place(retry(&first, expires_at - ms(1))).await);
    assert_eq!(
        replay.order_id, first.order_id,
        "live a millisecond before it expires"
    );

    // At its expiry the key is new: the same request is a second order,
    // whose claim lives on from now.
    let mut again = retry(&first, expires_at);
    again.claim.as_mut().expect("guest claim").expires_at = expires_at + Duration::days(1);
    let second = placed(store.place(again.clone()).await);
    assert_eq!(second.order_id, again.order_id);
    assert_ne!(second.order_id, first.order_id);
    assert_eq!(
        ok(store.get_order(again.order_id).await)
            .expect("placed")
            .ticket_number,
        2
    );

    // From now on the key replays the second order.
    let replay = replayed(store.place(retry(&again, expires_at + secs(1))).await);
    assert_eq!(replay.order_id, again.order_id);
    assert_eq!(
        session_order_ids(store, session.session_id).await,
        [again.order_id, first.order_id]
    );
}

pub async fn staff_orders_skip_the_guest_rules(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let t = instant();
    let order = simple_order(p.curry, 2);

    // Even with the guests locked out of the table.
    for _ in 0..5 {
        ok(store
            .verify_pin(session.session_id, Some(WRONG_PIN), policy(5, secs(300)), t)
            .await);
    }
    assert!(
        ok(store.get_session(session.session_id).await)
            .expect("session")
            .pin_locked_until
            .is_some()
    );

    // The same order twice, a millisecond apart: neither rule applies.
    let a = staff_order(session.session_id, order.clone(), t + secs(1));
    let b = staff_order(session.session_id, order.clone(), t + secs(1) + ms(1));
    let answer_a = placed(store.place(a.clone()).await);
    let answer_b = placed(store.place(b.clone()).await);
    let line = || vec![priced(p.curry, "Curry", 900, 2, &[])];
    let order_a = placed_order(&a, &session, 1, line());
    let order_b = placed_order(&b, &session, 2, line());
    assert_eq!(order_a.source, OrderSource::Staff);
    assert_eq!(order_a.client_id, None);
    assert_eq!(order_a.total, 1800);
    assert_receipt(&answer_a.response, &order_a, false);
    assert_receipt(&answer_b.response, &order_b, false);
    assert_stored(store, &order_a).await;
    assert_stored(store, &order_b).await;

    // A staff key is honoured like a guest's.
    let keyed = PlaceOrder {
        claim: Some(Claim {
            scope: Scope::staff_post(&format!(
                "/api/v1/sessions/{}/staff-orders",
                session.session_id
            )),
            key: IdempotencyKey::generate(),
            fingerprint: order.fingerprint.clone(),
            expires_at: claim_expiry(),
        }),
        ..staff_order(session.session_id, order.clone(), t + secs(2))
    };
    let fresh = placed(store.place(keyed.clone()).await);
    let replay = replayed(store.place(retry(&keyed, t + secs(3))).await);
    assert_eq!(replay.order_id, keyed.order_id);
    assert_eq!(replay.response, fresh.response.replayed());
    assert!(matches!(keyed.caller, Caller::Staff { .. }));
    assert_eq!(
        session_order_ids(store, session.session_id).await,
        [keyed.order_id, b.order_id, a.order_id]
    );
}

pub async fn committed_replay_answers_only_a_completed_matching_request(store: &dyn Store) {
    let t = table(store).await;
    let (session_id, shop_id) = (t.session.session_id, t.menu.shop_id);
    let first = guest_order(session_id, CLIENT, simple_order(t.menu.curry, 1), instant());
    let claim = first.claim.clone().expect("a guest claim");
    let policy = first.rules.pin_policy;
    let now = instant() + secs(1);
    let lookup = |pin: &'static str, claim: Claim, now| async move {
        let proof = GuestProof::Pin(Some(pin.to_owned()));
        ok(store
            .committed_replay(session_id, &proof, &claim, policy, now)
            .await)
    };
    assert_eq!(
        lookup(PIN, claim.clone(), now).await,
        None,
        "nothing completed yet"
    );

    let placed = placed(store.place(first.clone()).await);
    let replay = lookup(PIN, claim.clone(), now)
        .await
        .expect("a committed replay");
    assert_eq!(replay.shop_id, shop_id);
    assert_eq!(replay.order_id, placed.order_id);
    assert_eq!(replay.response, placed.response.clone().replayed());

    let other_body = Claim {
        fingerprint: Fingerprint::of("another request"),
        ..claim.clone()
    };
    assert_eq!(
        lookup(PIN, other_body, now).await,
        None,
        "a mismatch takes the full path"
    );
    let other_key = Claim {
        key: IdempotencyKey::generate(),
        ..claim.clone()
    };
    assert_eq!(lookup(PIN, other_key, now).await, None);
    assert_eq!(
        lookup(WRONG_PIN, claim.clone(), now).await,
        None,
        "a wrong PIN is judged by the full path"
    );
    assert_eq!(
        lookup(PIN, claim.clone(), claim.expires_at).await,
        None,
        "an expired key is new"
    );
    let unknown = ok(store
        .committed_replay(Uuid::new_v4(), &pin_proof(), &claim, policy, now)
        .await);
    assert_eq!(unknown, None);

    // A failure pending on the session sends even the right PIN down the full
    // path, which resets it.
    let outcome = ok(store
        .verify_pin(session_id, Some(WRONG_PIN), policy, now)
        .await);
    assert_eq!(outcome, PinOutcome::Invalid);
    assert_eq!(lookup(PIN, claim.clone(), now).await, None);
    replayed(store.place(retry(&first, now)).await);
    assert!(
        lookup(PIN, claim, now).await.is_some(),
        "the full path reset the count"
    );
}
