//! PIN checks.

use ordergate_domain::session::Session;

use crate::Store;
use ordergate_domain::session::PinOutcome;

use super::helpers::*;

pub async fn pin_right_pin_is_accepted(store: &dyn Store) {
    let session = pin_session(store).await;
    let outcome = ok(store
        .verify_pin(
            session.session_id,
            Some(PIN),
            policy(5, secs(300)),
            instant(),
        )
        .await);
    assert_eq!(outcome, PinOutcome::Accepted(session.clone()));

    // The PIN is compared whole: a prefix, a longer string or the digits
    // as a number are wrong.
    for wrong in ["01234", "0123456", "12345", ""] {
        assert_eq!(
            ok(store
                .verify_pin(
                    session.session_id,
                    Some(wrong),
                    policy(50, secs(300)),
                    instant(),
                )
                .await),
            PinOutcome::Invalid,
            "{wrong:?}"
        );
    }
}

pub async fn pin_lock_after_max_failures_refuses_even_the_right_pin(store: &dyn Store) {
    let session = pin_session(store).await;
    let id = session.session_id;
    let rule = policy(3, secs(300));
    let now = instant();

    for failures in 1..=2 {
        assert_eq!(
            ok(store.verify_pin(id, Some(WRONG_PIN), rule, now).await),
            PinOutcome::Invalid
        );
        let stored = ok(store.get_session(id).await).expect("session");
        assert_eq!(stored.pin_failures, failures);
        assert_eq!(stored.pin_locked_until, None);
    }
    assert_eq!(
        ok(store.verify_pin(id, Some(WRONG_PIN), rule, now).await),
        PinOutcome::Invalid,
        "the failure that locks is itself still Invalid"
    );

    let until = now + secs(300);
    let locked = PinOutcome::Locked { until };
    assert_eq!(
        ok(store.get_session(id).await)
            .expect("session")
            .pin_locked_until,
        Some(until)
    );
    assert_eq!(ok(store.verify_pin(id, Some(PIN), rule, now).await), locked);
    assert_eq!(
        ok(store.verify_pin(id, Some(WRONG_PIN), rule, now).await),
        locked
    );
    assert_eq!(ok(store.verify_pin(id, None, rule, now).await), locked);
    assert_eq!(
        ok(store.verify_pin(id, Some(PIN), rule, until - ms(1)).await),
        locked,
        "still locked a millisecond before it lapses"
    );
    assert_eq!(
        ok(store.get_session(id).await)
            .expect("session")
            .pin_locked_until,
        Some(until),
        "attempts while locked do not extend the lock"
    );
}

pub async fn pin_lock_lapses_after_its_until_and_the_count_restarts(store: &dyn Store) {
    let session = pin_session(store).await;
    let id = session.session_id;
    let rule = policy(3, secs(300));
    let now = instant();
    for _ in 0..3 {
        assert_eq!(
            ok(store.verify_pin(id, Some(WRONG_PIN), rule, now).await),
            PinOutcome::Invalid
        );
    }
    let until = now + secs(300);
    assert_eq!(
        ok(store.verify_pin(id, Some(PIN), rule, now).await),
        PinOutcome::Locked { until }
    );

    let later = until + secs(1);
    let unlocked = Session {
        pin_failures: 0,
        pin_locked_until: None,
        ..session
    };
    assert_eq!(
        ok(store.verify_pin(id, Some(PIN), rule, later).await),
        PinOutcome::Accepted(unlocked.clone())
    );
    assert_eq!(ok(store.get_session(id).await), Some(unlocked.clone()));

    // A full set of attempts again: two wrong ones do not lock.
    for _ in 0..2 {
        assert_eq!(
            ok(store.verify_pin(id, Some(WRONG_PIN), rule, later).await),
            PinOutcome::Invalid
        );
    }
    assert_eq!(
        ok(store.verify_pin(id, Some(PIN), rule, later).await),
        PinOutcome::Accepted(unlocked)
    );
}

pub async fn pin_missing_pin_is_invalid_but_not_counted(store: &dyn Store) {
    let session = pin_session(store).await;
    let id = session.session_id;
    let rule = policy(3, secs(300));
    let now = instant();
    for _ in 0..10 {
        assert_eq!(
            ok(store.verify_pin(id, None, rule, now).await),
            PinOutcome::Invalid
        );
    }
    assert_eq!(ok(store.get_session(id).await), Some(session.clone()));

    for _ in 0..2 {
        assert_eq!(
            ok(store.verify_pin(id, Some(WRONG_PIN), rule, now).await),
            PinOutcome::Invalid
        );
    }
    assert_eq!(
        ok(store.verify_pin(id, Some(PIN), rule, now).await),
        PinOutcome::Accepted(session),
        "ten missing PINs and two wrong ones stay under a limit of three"
    );
}

pub async fn pin_success_resets_the_failure_count(store: &dyn Store) {
    let session = pin_session(store).await;
    let id = session.session_id;
    let rule = policy(3, secs(300));
    let now = instant();
    for round in 0..3 {
        for _ in 0..2 {
            assert_eq!(
                ok(store.verify_pin(id, Some(WRONG_PIN), rule, now).await),
                PinOutcome::Invalid,
                "round {round}"
            );
        }
        assert_eq!(
            ok(store.get_session(id).await)
                .expect("session")
                .pin_failures,
            2
        );
        assert_eq!(
            ok(store.verify_pin(id, Some(PIN), rule, now).await),
            PinOutcome::Accepted(session.clone()),
            "round {round}"
        );
        assert_eq!(ok(store.get_session(id).await), Some(session.clone()));
    }
}
