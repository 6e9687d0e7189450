//! Sessions checks.

use chrono::Duration;
use ordergate_domain::Rejection;
use ordergate_domain::session::{Bill, Session, SessionStatus};
use uuid::Uuid;

use crate::Store;

use super::helpers::*;

pub async fn session_open_then_get_round_trips(store: &dyn Store) {
    let shop = new_shop(store).await;
    // A leading zero in the PIN and a non-ASCII label must survive storage.
    let session = session_at(shop.shop_id, "窓際 4", "004217", instant());
    assert_eq!(ok(store.open_session(session.clone()).await), session);
    assert_eq!(
        ok(store.get_session(session.session_id).await),
        Some(session.clone())
    );
    assert_eq!(
        ok(store.list_sessions(shop.shop_id, None, limit(100)).await),
        vec![session.clone()]
    );

    let now = ordergate_domain::now();
    let second = session_at(shop.shop_id, "T2", "123456", now);
    ok(store.open_session(second.clone()).await);
    assert_eq!(ok(store.get_session(second.session_id).await), Some(second));
}

pub async fn session_open_on_an_occupied_table_is_table_occupied(store: &dyn Store) {
    let shop = new_shop(store).await;
    let t = instant();
    let first = ok(store
        .open_session(session_at(shop.shop_id, "T1", "111111", t))
        .await);

    let again = session_at(shop.shop_id, "T1", "222222", t + secs(1));
    assert_eq!(
        rejected(store.open_session(again.clone()).await),
        Rejection::TableOccupied {
            table_label: "T1".into()
        }
    );
    assert_eq!(ok(store.get_session(again.session_id).await), None);

    // Other tables, and the same label in another shop, are free.
    ok(store
        .open_session(session_at(shop.shop_id, "T2", "333333", t))
        .await);
    let other_shop = new_shop(store).await;
    ok(store
        .open_session(session_at(other_shop.shop_id, "T1", "444444", t))
        .await);

    let active = ok(store
        .list_sessions(shop.shop_id, Some(SessionStatus::Active), limit(100))
        .await);
    assert_eq!(active.len(), 2);
    assert!(active.contains(&first));
}

pub async fn session_table_can_be_opened_again_after_checkout(store: &dyn Store) {
    let shop = new_shop(store).await;
    let t = instant();
    let first = ok(store
        .open_session(session_at(shop.shop_id, "T1", "111111", t))
        .await);
    ok(store.checkout(first.session_id, t + secs(60)).await);

    let second = session_at(shop.shop_id, "T1", "222222", t + secs(61));
    assert_eq!(ok(store.open_session(second.clone()).await), second);
    assert_eq!(
        ok(store
            .list_sessions(shop.shop_id, Some(SessionStatus::Active), limit(100))
            .await),
        vec![second.clone()]
    );
    let closed = ok(store.get_session(first.session_id).await).expect("first session");
    assert_eq!(closed.status, SessionStatus::Closed);

    // And a third time, after the second one closes too.
    ok(store.checkout(second.session_id, t + secs(120)).await);
    ok(store
        .open_session(session_at(shop.shop_id, "T1", "333333", t + secs(121)))
        .await);
}

pub async fn session_list_filters_by_status_newest_first_within_the_limit(store: &dyn Store) {
    let shop = new_shop(store).await;
    let other = new_shop(store).await;
    let t = instant();
    let t1 = ok(store
        .open_session(session_at(shop.shop_id, "T1", "111111", t))
        .await);
    let t2 = ok(store
        .open_session(session_at(shop.shop_id, "T2", "222222", t + secs(1)))
        .await);
    let t3 = ok(store
        .open_session(session_at(shop.shop_id, "T3", "333333", t + secs(2)))
        .await);
    ok(store
        .open_session(session_at(other.shop_id, "T9", "999999", t + secs(3)))
        .await);
    let closed_at = t + secs(4);
    ok(store.checkout(t2.session_id, closed_at).await);
    let t2_closed = Session {
        status: SessionStatus::Closed,
        closed_at: Some(closed_at),
        ..t2.clone()
    };

    let all = ok(store.list_sessions(shop.shop_id, None, limit(100)).await);
    assert_eq!(all, [t3.clone(), t2_closed.clone(), t1.clone()]);
    assert_eq!(
        ok(store
            .list_sessions(shop.shop_id, Some(SessionStatus::Active), limit(100))
            .await),
        [t3.clone(), t1.clone()]
    );
    assert_eq!(
        ok(store
            .list_sessions(shop.shop_id, Some(SessionStatus::Closed), limit(100))
            .await),
        [t2_closed]
    );
    assert_eq!(
        ids(&ok(store.list_sessions(shop.shop_id, None, limit(2)).await)),
        [t3.session_id, t2.session_id]
    );
    assert_eq!(
        ids(&ok(store
            .list_sessions(shop.shop_id, Some(SessionStatus::Active), limit(1))
            .await)),
        [t3.session_id]
    );
}

pub async fn checkout_twice_returns_the_same_bill(store: &dyn Store) {
    let shop = new_shop(store).await;
    let opened = instant();
    let session = ok(store
        .open_session(session_at(shop.shop_id, "T5", "555555", opened))
        .await);
    let closed_at = opened + Duration::minutes(45) + ms(321);

    let bill = ok(store.checkout(session.session_id, closed_at).await);
    assert_eq!(
        bill,
        Bill {
            session_id: session.session_id,
            table_label: "T5".into(),
            status: SessionStatus::Closed,
            closed_at,
            orders: vec![],
            total: 0,
        }
    );
    let later = closed_at + Duration::minutes(5);
    assert_eq!(ok(store.checkout(session.session_id, later).await), bill);

    assert_eq!(
        ok(store.get_session(session.session_id).await),
        Some(Session {
            status: SessionStatus::Closed,
            closed_at: Some(closed_at),
            ..session
        })
    );
}

pub async fn session_operations_on_unknown_ids_are_not_found(store: &dyn Store) {
    let shop = new_shop(store).await;
    let unknown = Uuid::new_v4();
    let now = instant();
    assert_eq!(ok(store.get_session(unknown).await), None);
    assert_eq!(
        rejected(store.checkout(unknown, now).await),
        Rejection::NotFound("session")
    );
    assert_eq!(
        rejected(
            store
                .verify_pin(unknown, Some(PIN), policy(5, secs(300)), now)
                .await
        ),
        Rejection::NotFound("session")
    );
    assert_eq!(
        rejected(
            store
                .open_session(session_at(Uuid::new_v4(), "T1", PIN, now))
                .await
        ),
        Rejection::NotFound("shop")
    );
    assert_eq!(
        ok(store.list_sessions(shop.shop_id, None, limit(100)).await),
        []
    );
}
