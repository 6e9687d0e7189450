//! Admission checks: the contract's rules in the contract's order, and the
//! catalog's say on what can be ordered. A refusal places nothing and keeps
//! nothing against its key.

use chrono::Duration;
use ordergate_domain::catalog::{CatalogInput, MenuItemInput};
use ordergate_domain::session::SessionStatus;
use ordergate_domain::{Rejection, Timestamp};
use uuid::Uuid;

use crate::{Claim, PlaceOrder, Store};
use ordergate_domain::order::admission::OrderRules;
use ordergate_domain::session::PinOutcome;

use super::helpers::*;

async fn pin_failures(store: &dyn Store, session_id: Uuid) -> i64 {
    ok(store.get_session(session_id).await)
        .expect("session")
        .pin_failures
}

async fn pin_locked_until(store: &dyn Store, session_id: Uuid) -> Option<Timestamp> {
    ok(store.get_session(session_id).await)
        .expect("session")
        .pin_locked_until
}

pub async fn order_for_an_unknown_session_is_not_found_and_not_audited(store: &dyn Store) {
    let Table { menu: p, .. } = table(store).await;
    let unknown = Uuid::new_v4();
    let guest = guest_order(unknown, CLIENT, simple_order(p.curry, 1), instant());
    assert_eq!(
        rejected(store.place(guest.clone()).await),
        Rejection::NotFound("session")
    );
    let staff = staff_order(unknown, simple_order(p.curry, 1), instant());
    assert_eq!(
        rejected(store.place(staff.clone()).await),
        Rejection::NotFound("session")
    );
    assert_eq!(ok(store.get_order(guest.order_id).await), None);
    assert_eq!(ok(store.get_order(staff.order_id).await), None);
    assert_eq!(audit_rows(store, p.shop_id).await, []);
}

pub async fn order_with_a_wrong_pin_is_refused_and_counted(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let id = session.session_id;
    let t = instant();
    let rules = OrderRules {
        pin_policy: policy(3, secs(300)),
        ..lenient_rules()
    };
    let wrong_pin = guest_with_pin(CLIENT, Some(WRONG_PIN));

    let refused = PlaceOrder {
        caller: wrong_pin.clone(),
        rules,
        ..guest_order(id, CLIENT, simple_order(p.curry, 1), t + secs(1))
    };
    assert_eq!(rejected(store.place(refused).await), Rejection::PinInvalid);
    assert_eq!(
        pin_failures(store, id).await,
        1,
        "counted though the order was refused"
    );

    // The right PIN places the order and resets the count.
    let first = PlaceOrder {
        rules,
        ..guest_order(id, CLIENT, simple_order(p.curry, 1), t + secs(2))
    };
    placed(store.place(first.clone()).await);
    assert_eq!(pin_failures(store, id).await, 0);

    // The PIN comes before the replay: a completed key is no way around it.
    let replay_attempt = PlaceOrder {
        caller: wrong_pin.clone(),
        ..retry(&first, t + secs(3))
    };
    assert_eq!(
        rejected(store.place(replay_attempt).await),
        Rejection::PinInvalid
    );
    assert_eq!(pin_failures(store, id).await, 1);

    // A missing PIN is refused but not counted as a guess.
    let missing = PlaceOrder {
        caller: guest_with_pin(CLIENT, None),
        rules,
        ..guest_order(id, CLIENT, simple_order(p.ramen, 1), t + secs(4))
    };
    assert_eq!(rejected(store.place(missing).await), Rejection::PinInvalid);
    assert_eq!(pin_failures(store, id).await, 1);
    assert_eq!(session_order_ids(store, id).await, [first.order_id]);

    // verify_pin sees the order's failure: max_failures - 1 more lock.
    let lock_at = t + secs(5);
    assert_eq!(
        ok(store
            .verify_pin(id, Some(WRONG_PIN), rules.pin_policy, lock_at)
            .await),
        PinOutcome::Invalid
    );
    assert_eq!(pin_locked_until(store, id).await, None);
    assert_eq!(
        ok(store
            .verify_pin(id, Some(WRONG_PIN), rules.pin_policy, lock_at)
            .await),
        PinOutcome::Invalid
    );
    let until = lock_at + secs(300);
    assert_eq!(pin_locked_until(store, id).await, Some(until));
    assert_eq!(
        ok(store
            .verify_pin(id, Some(PIN), rules.pin_policy, lock_at)
            .await),
        PinOutcome::Locked { until }
    );
}

pub async fn order_while_the_pin_is_locked_is_pin_locked(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let id = session.session_id;
    let t = instant();
    let rules = OrderRules {
        pin_policy: policy(2, secs(300)),
        ..lenient_rules()
    };
    let first = PlaceOrder {
        rules,
        ..guest_order(id, CLIENT, simple_order(p.curry, 1), t)
    };
    placed(store.place(first.clone()).await);

    // Two wrong PINs on orders alone lock the table's PIN.
    for n in 1..=2 {
        let wrong = PlaceOrder {
            caller: guest_with_pin(OTHER_CLIENT, Some(WRONG_PIN)),
            rules,
            ..guest_order(id, OTHER_CLIENT, simple_order(p.ramen, 1), t + secs(n))
        };
        assert_eq!(rejected(store.place(wrong).await), Rejection::PinInvalid);
    }
    let until = t + secs(2) + secs(300);
    assert_eq!(pin_locked_until(store, id).await, Some(until));

    // Locked: the right PIN is refused too, for new orders and replays alike.
    let fresh = PlaceOrder {
        rules,
        ..guest_order(id, CLIENT, simple_order(p.ramen, 1), t + secs(3))
    };
    assert_eq!(
        rejected(store.place(fresh.clone()).await),
        Rejection::PinLocked { until }
    );
    assert_eq!(
        rejected(store.place(retry(&first, t + secs(3))).await),
        Rejection::PinLocked { until }
    );
    let wrong = PlaceOrder {
        caller: guest_with_pin(CLIENT, Some(WRONG_PIN)),
        ..retry(&fresh, until - ms(1))
    };
    assert_eq!(
        rejected(store.place(wrong).await),
        Rejection::PinLocked { until }
    );
    assert_eq!(
        pin_locked_until(store, id).await,
        Some(until),
        "attempts while locked do not extend the lock"
    );
    assert_eq!(session_order_ids(store, id).await, [first.order_id]);

    // Once it lapses, the replay replays and the refused key is new.
    let replay = replayed(store.place(retry(&first, until)).await);
    assert_eq!(replay.order_id, first.order_id);
    let late = retry(&fresh, until);
    placed(store.place(late.clone()).await);
    assert_eq!(
        session_order_ids(store, id).await,
        [late.order_id, first.order_id]
    );
}

pub async fn order_to_a_closed_session_is_refused_but_earlier_keys_replay(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let id = session.session_id;
    let t = instant() + secs(1);
    let first = guest_order(id, CLIENT, simple_order(p.curry, 1), t);
    let fresh = placed(store.place(first.clone()).await);
    let bill = ok(store.checkout(id, t + ms(100)).await);
    assert_eq!(bill.orders.len(), 1);

    // Closed is decided before the duplicate and cooldown rules would be.
    let same_again = guest_order(id, CLIENT, simple_order(p.curry, 1), t + ms(200));
    assert_eq!(
        rejected(store.place(same_again).await),
        Rejection::SessionClosed
    );
    let other = guest_order(id, OTHER_CLIENT, simple_order(p.ramen, 1), t + ms(300));
    assert_eq!(rejected(store.place(other).await), Rejection::SessionClosed);

    let replay = replayed(store.place(retry(&first, t + ms(400))).await);
    assert_eq!(replay.order_id, first.order_id);
    assert_eq!(replay.response, fresh.response.replayed());

    assert_eq!(session_order_ids(store, id).await, [first.order_id]);
    assert_eq!(ok(store.checkout(id, t + secs(60)).await), bill);
    assert_eq!(
        ok(store.get_session(id).await).expect("session").status,
        SessionStatus::Closed
    );
}

pub async fn order_duplicate_payload_from_one_client_is_refused_with_the_original(
    store: &dyn Store,
) {
    let Table { menu: p, session } = table(store).await;
    let next_table = open_table(store, p.shop_id, "T5").await;
    let rules = OrderRules {
        cooldown: Duration::zero(),
        ..order_rules()
    };
    let request = |allow_repeat| {
        order_of(
            vec![line(p.curry, 2, &[p.cheese]), line(p.ramen, 1, &[])],
            "no onions",
            allow_repeat,
        )
    };
    // The same items and note in another shape: lines split and reordered,
    // the note padded.
    let reshaped = order_of(
        vec![
            line(p.ramen, 1, &[]),
            line(p.curry, 1, &[p.cheese]),
            line(p.curry, 1, &[p.cheese]),
        ],
        "  no onions ",
        false,
    );
    assert_eq!(reshaped.payload_hash, request(false).payload_hash);
    let t0 = instant() + secs(1);

    let first = PlaceOrder {
        rules,
        ..guest_order(session.session_id, CLIENT, request(false), t0)
    };
    placed(store.place(first.clone()).await);
    let original = ok(store.get_order(first.order_id).await).expect("placed");

    let duplicate = PlaceOrder {
        rules,
        ..guest_order(session.session_id, CLIENT, reshaped, t0 + secs(1))
    };
    assert_eq!(
        rejected(store.place(duplicate).await),
        Rejection::DuplicatePayload {
            original: Box::new(original.clone())
        }
    );

    // Another guest's identical order is theirs ...
    let other_guest = PlaceOrder {
        rules,
        ..guest_order(
            session.session_id,
            OTHER_CLIENT,
            request(false),
            t0 + secs(1),
        )
    };
    placed(store.place(other_guest.clone()).await);
    // ... and a deliberate repeat is a repeat.
    let repeat = PlaceOrder {
        rules,
        ..guest_order(session.session_id, CLIENT, request(true), t0 + secs(2))
    };
    placed(store.place(repeat.clone()).await);
    // A different note is a different order.
    let other_note = PlaceOrder {
        rules,
        ..guest_order(
            session.session_id,
            CLIENT,
            order_of(
                vec![line(p.curry, 2, &[p.cheese]), line(p.ramen, 1, &[])],
                "no onions, please",
                false,
            ),
            t0 + secs(3),
        )
    };
    placed(store.place(other_note.clone()).await);
    assert_eq!(
        session_order_ids(store, session.session_id).await,
        [
            other_note.order_id,
            repeat.order_id,
            other_guest.order_id,
            first.order_id
        ]
    );

    // At another table the same client's identical order is new; there the
    // window runs from it, and an order arriving as it closes is no duplicate.
    let u0 = t0 + secs(10);
    let there = PlaceOrder {
        rules,
        ..guest_order(next_table.session_id, CLIENT, request(false), u0)
    };
    placed(store.place(there.clone()).await);
    let original = ok(store.get_order(there.order_id).await).expect("placed");
    let last_moment = PlaceOrder {
        rules,
        ..guest_order(
            next_table.session_id,
            CLIENT,
            request(false),
            u0 + secs(30) - ms(1),
        )
    };
    assert_eq!(
        rejected(store.place(last_moment.clone()).await),
        Rejection::DuplicatePayload {
            original: Box::new(original)
        },
        "a millisecond inside the 30 s window"
    );
    // The refusal kept nothing against its key: the same request, once the
    // window has passed, is placed.
    let after = retry(&last_moment, u0 + secs(30));
    placed(store.place(after.clone()).await);
    assert_eq!(
        session_order_ids(store, next_table.session_id).await,
        [after.order_id, there.order_id]
    );
}

pub async fn order_cooldown_holds_one_client_until_it_lapses(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let id = session.session_id;
    let rules = OrderRules {
        duplicate_window: Duration::zero(),
        ..order_rules()
    };
    let order = |client: &str, item, now| PlaceOrder {
        rules,
        ..guest_order(id, client, simple_order(item, 1), now)
    };
    let t0 = instant() + secs(1);

    placed(store.place(order(CLIENT, p.curry, t0)).await);
    let until = t0 + secs(2);
    let early = order(CLIENT, p.ramen, t0 + ms(500));
    assert_eq!(
        rejected(store.place(early.clone()).await),
        Rejection::CooldownActive { until }
    );
    // Other clients are not held.
    placed(
        store
            .place(order(OTHER_CLIENT, p.ramen, t0 + ms(500)))
            .await,
    );
    assert_eq!(
        rejected(store.place(order(CLIENT, p.ramen, until - ms(1))).await),
        Rejection::CooldownActive { until }
    );
    // At `until` it has lapsed; the refused key kept nothing.
    let on_time = retry(&early, until);
    placed(store.place(on_time.clone()).await);

    // Refusals do not restart it: it runs from the last accepted order.
    let next_until = until + secs(2);
    assert_eq!(
        rejected(store.place(order(CLIENT, p.curry, until + ms(1))).await),
        Rejection::CooldownActive { until: next_until }
    );
    let last = PlaceOrder {
        rules,
        ..guest_order(id, CLIENT, simple_order(p.ramen, 2), next_until)
    };
    placed(store.place(last.clone()).await);

    // With both rules on, a duplicate is judged before the cooldown.
    let duplicate = guest_order(id, CLIENT, simple_order(p.ramen, 2), next_until + ms(1));
    let original = ok(store.get_order(last.order_id).await).expect("placed");
    assert_eq!(
        rejected(store.place(duplicate).await),
        Rejection::DuplicatePayload {
            original: Box::new(original)
        }
    );
    assert_eq!(ok(store.session_orders(id, limit(100)).await).len(), 4);
}

pub async fn order_past_its_busy_deadline_is_session_busy_but_replays_replay(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let id = session.session_id;
    let t = instant();
    let first = guest_order(id, CLIENT, simple_order(p.curry, 1), t + secs(1));
    placed(store.place(first.clone()).await);

    let gave_up = |cmd: PlaceOrder| PlaceOrder {
        rules: OrderRules {
            busy_deadline: past_deadline(),
            ..cmd.rules
        },
        ..cmd
    };
    let busy = gave_up(guest_order(
        id,
        OTHER_CLIENT,
        simple_order(p.ramen, 1),
        t + secs(2),
    ));
    assert_eq!(
        rejected(store.place(busy.clone()).await),
        Rejection::SessionBusy
    );
    let staff = gave_up(staff_order(id, simple_order(p.ramen, 1), t + secs(2)));
    assert_eq!(rejected(store.place(staff).await), Rejection::SessionBusy);
    let replay = replayed(store.place(gave_up(retry(&first, t + secs(2)))).await);
    assert_eq!(replay.order_id, first.order_id);
    assert_eq!(session_order_ids(store, id).await, [first.order_id]);

    // The busy refusal kept nothing against its key.
    let again = retry(&busy, t + secs(3));
    placed(store.place(again.clone()).await);
    assert_eq!(
        session_order_ids(store, id).await,
        [again.order_id, first.order_id]
    );
}

pub async fn order_before_a_catalog_is_published_is_catalog_not_ready(store: &dyn Store) {
    let shop = new_shop(store).await;
    let session = open_table(store, shop.shop_id, "T1").await;
    let curry = Uuid::new_v4();
    let t = instant();
    let cmd = guest_order(
        session.session_id,
        CLIENT,
        simple_order(curry, 2),
        t + secs(1),
    );
    assert_eq!(
        rejected(store.place(cmd.clone()).await),
        Rejection::CatalogNotReady
    );
    assert_eq!(
        session_order_ids(store, session.session_id).await,
        Vec::<Uuid>::new()
    );

    ok(store
        .put_catalog(
            shop.shop_id,
            CatalogInput {
                toppings: vec![],
                items: vec![item(Some(curry), "Curry", 900, vec![])],
            },
            None,
            t + secs(2),
        )
        .await);
    let again = retry(&cmd, t + secs(3));
    placed(store.place(again.clone()).await);
    let expected = placed_order(
        &again,
        &session,
        1,
        vec![priced(curry, "Curry", 900, 2, &[])],
    );
    assert_stored(store, &expected).await;
}

pub async fn order_for_an_unknown_menu_item_names_its_line(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let other_shop = published(store).await;
    let id = session.session_id;
    let t = instant();

    for (n, stranger) in [
        Uuid::new_v4(),
        other_shop.curry, // another shop's item
        p.cheese,         // a topping is not a menu item
    ]
    .into_iter()
    .enumerate()
    {
        let cmd = guest_order(
            id,
            CLIENT,
            order_of(
                vec![
                    line(p.curry, 1, &[]),
                    line(p.ramen, 1, &[]),
                    line(stranger, 1, &[]),
                ],
                "",
                false,
            ),
            t + secs(n as i64 + 1),
        );
        assert_eq!(
            rejected(store.place(cmd).await),
            Rejection::UnknownMenuItem {
                line: 2,
                menu_item_id: stranger
            },
            "stranger {n}"
        );
    }

    // The first bad line is the one named.
    let (x, y) = (Uuid::new_v4(), Uuid::new_v4());
    let cmd = guest_order(
        id,
        CLIENT,
        order_of(vec![line(x, 1, &[]), line(y, 1, &[])], "", false),
        t + secs(5),
    );
    assert_eq!(
        rejected(store.place(cmd.clone()).await),
        Rejection::UnknownMenuItem {
            line: 0,
            menu_item_id: x
        }
    );
    assert_eq!(session_order_ids(store, id).await, Vec::<Uuid>::new());

    // The corrected request under the same key is processed normally.
    let corrected = simple_order(p.curry, 1);
    let fixed = PlaceOrder {
        claim: Some(Claim {
            fingerprint: corrected.fingerprint.clone(),
            ..cmd.claim.clone().expect("guest claim")
        }),
        order: corrected,
        ..retry(&cmd, t + secs(6))
    };
    placed(store.place(fixed.clone()).await);
    assert_eq!(session_order_ids(store, id).await, [fixed.order_id]);
}

pub async fn order_for_a_retired_item_is_item_unavailable(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let t = instant();
    let without_ramen = CatalogInput {
        toppings: vec![topping(Some(p.cheese), "Cheese", 100)],
        items: vec![item(Some(p.curry), "Curry", 900, vec![p.cheese])],
    };
    ok(store
        .put_catalog(p.shop_id, without_ramen, None, t + secs(1))
        .await);

    let cmd = guest_order(
        session.session_id,
        CLIENT,
        order_of(
            vec![line(p.curry, 1, &[]), line(p.ramen, 2, &[])],
            "",
            false,
        ),
        t + secs(2),
    );
    assert_eq!(
        rejected(store.place(cmd.clone()).await),
        Rejection::ItemUnavailable {
            line: 1,
            menu_item_id: p.ramen
        }
    );
    assert_eq!(
        session_order_ids(store, session.session_id).await,
        Vec::<Uuid>::new()
    );

    // Back on the menu, the same request is placed.
    ok(store
        .put_catalog(p.shop_id, p.input(), None, t + secs(3))
        .await);
    let again = retry(&cmd, t + secs(4));
    placed(store.place(again.clone()).await);
    assert_eq!(
        session_order_ids(store, session.session_id).await,
        [again.order_id]
    );
}

#[track_caller]
fn invalid_topping(rejection: Rejection) -> (usize, Option<Uuid>) {
    match rejection {
        Rejection::InvalidTopping {
            line,
            topping_id,
            reason,
        } => {
            assert!(!reason.is_empty(), "a reason is given");
            (line, topping_id)
        }
        other => panic!("expected InvalidTopping, got {other:?}"),
    }
}

pub async fn order_with_a_topping_not_offered_is_invalid_topping(store: &dyn Store) {
    let shop = new_shop(store).await;
    let (curry, ramen) = (Uuid::new_v4(), Uuid::new_v4());
    let (cheese, egg, nori) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
    let t = instant();
    let catalog = |with_nori: bool| CatalogInput {
        toppings: [
            Some(topping(Some(cheese), "Cheese", 100)),
            Some(topping(Some(egg), "Egg", 80)),
            with_nori.then(|| topping(Some(nori), "Nori", 50)),
        ]
        .into_iter()
        .flatten()
        .collect(),
        items: vec![
            MenuItemInput {
                max_toppings: Some(1),
                ..item(Some(curry), "Curry", 900, vec![cheese, egg])
            },
            // Ramen comes with nori, and with egg once nori is retired.
            item(
                Some(ramen),
                "Ramen",
                850,
                vec![if with_nori { nori } else { egg }],
            ),
        ],
    };
    ok(store
        .put_catalog(shop.shop_id, catalog(true), None, t)
        .await);
    let session = open_table(store, shop.shop_id, "T1").await;
    let id = session.session_id;
    let stranger = Uuid::new_v4();

    let attempt = |lines, n: i64| PlaceOrder {
        rules: lenient_rules(),
        ..guest_order(id, CLIENT, order_of(lines, "", false), t + secs(n))
    };
    for (n, lines, expected) in [
        (
            1,
            vec![line(ramen, 1, &[cheese])],
            (0, Some(cheese)), // a topping of the shop, not offered with ramen
        ),
        (
            2,
            vec![line(curry, 1, &[]), line(curry, 1, &[nori])],
            (1, Some(nori)),
        ),
        (3, vec![line(curry, 1, &[stranger])], (0, Some(stranger))),
        (
            4,
            vec![line(curry, 1, &[cheese]), line(curry, 1, &[cheese, egg])],
            (1, None), // more than maxToppings
        ),
    ] {
        assert_eq!(
            invalid_topping(rejected(store.place(attempt(lines, n)).await)),
            expected,
            "attempt {n}"
        );
    }

    assert_eq!(session_order_ids(store, id).await, Vec::<Uuid>::new());

    // What is offered is priced in.
    let fine = attempt(vec![line(curry, 2, &[egg])], 5);
    placed(store.place(fine.clone()).await);
    let expected = placed_order(
        &fine,
        &session,
        1,
        vec![priced(curry, "Curry", 900, 2, &[(egg, "Egg", 80)])],
    );
    assert_eq!(expected.total, 1960);
    assert_stored(store, &expected).await;
    let with_nori = attempt(vec![line(ramen, 1, &[nori])], 6);
    placed(store.place(with_nori.clone()).await);

    // Nori retired: the same request is refused now.
    ok(store
        .put_catalog(shop.shop_id, catalog(false), None, t + secs(7))
        .await);
    let retired = attempt(vec![line(ramen, 1, &[nori])], 8);
    assert_eq!(
        invalid_topping(rejected(store.place(retired).await)),
        (0, Some(nori))
    );
    assert_eq!(
        session_order_ids(store, id).await,
        [with_nori.order_id, fine.order_id]
    );
}
