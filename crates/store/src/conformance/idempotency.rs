//! Idempotent staff writes, and the purge of expired idempotency records.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::Duration;
use ordergate_domain::Rejection;
use ordergate_domain::idempotency::Fingerprint;
use ordergate_domain::inventory::{InventoryItem, Operation};
use ordergate_domain::session::{Bill, Session, SessionStatus};
use ordergate_domain::shop::Shop;
use uuid::Uuid;

use crate::{Answer, Claim, PlaceOrder, Render, StaffWrite, Store, StoredResponse};

use super::helpers::*;

/// A render that counts its calls.
fn counted<T: 'static>(
    calls: &Arc<AtomicUsize>,
    render: impl Fn(&T) -> StoredResponse + Send + 'static,
) -> Render<T> {
    let calls = Arc::clone(calls);
    Box::new(move |value| {
        calls.fetch_add(1, Ordering::SeqCst);
        render(value)
    })
}

fn calls_of(calls: &Arc<AtomicUsize>) -> usize {
    calls.load(Ordering::SeqCst)
}

fn created(body: String, location: Option<String>) -> StoredResponse {
    StoredResponse {
        status: 201,
        body,
        location,
    }
}

fn shop_body(shop: &Shop) -> StoredResponse {
    created(
        format!(r#"{{"shopId":"{}","name":"{}"}}"#, shop.shop_id, shop.name),
        Some(format!("/api/v1/shops/{}", shop.shop_id)),
    )
}

fn session_body(session: &Session) -> StoredResponse {
    created(
        format!(
            r#"{{"sessionId":"{}","tableLabel":"{}","pin":"{}"}}"#,
            session.session_id, session.table_label, session.pin
        ),
        None,
    )
}

fn item_body(item: &InventoryItem) -> StoredResponse {
    StoredResponse {
        status: 200,
        body: format!(
            r#"{{"itemId":"{}","stock":{:?},"version":{}}}"#,
            item.item_id,
            item.level.stock.unwrap_or(-1),
            item.version
        ),
        location: None,
    }
}

fn bill_body(bill: &Bill) -> StoredResponse {
    StoredResponse {
        status: 200,
        body: format!(
            r#"{{"closedAt":{},"orders":{},"total":{}}}"#,
            bill.closed_at.timestamp_millis(),
            bill.orders.len(),
            bill.total
        ),
        location: None,
    }
}

fn restock(
    shop_id: Uuid,
    item_id: Uuid,
    quantity: i64,
    render: Render<InventoryItem>,
) -> StaffWrite {
    StaffWrite::Restock {
        shop_id,
        item_id,
        quantity,
        actor: STAFF.to_owned(),
        now: instant() + secs(1),
        render,
    }
}

fn restock_claim(shop_id: Uuid, item_id: Uuid, fingerprint: &str) -> Claim {
    staff_claim(
        &format!("/api/v1/shops/{shop_id}/inventory/{item_id}/restock"),
        fingerprint,
    )
}

pub async fn idempotent_create_shop_runs_once_and_replays_its_response(store: &dyn Store) {
    let calls = Arc::new(AtomicUsize::new(0));
    let claim = staff_claim("/api/v1/shops", "sakura-diner");
    let sakura = shop_named("Sakura Diner", instant());
    let expected = shop_body(&sakura);

    let first = ok(store
        .staff_write(
            StaffWrite::CreateShop(sakura.clone(), counted(&calls, shop_body)),
            Some(claim.clone()),
            ordergate_domain::now(),
        )
        .await);
    assert_eq!(first, Answer::Fresh(expected.clone()));
    assert_eq!(calls_of(&calls), 1);

    // A retry is a new attempt with a new id; the key makes it one shop.
    for _ in 0..2 {
        let retried = shop_named("Sakura Diner", instant());
        let again = ok(store
            .staff_write(
                StaffWrite::CreateShop(retried.clone(), counted(&calls, shop_body)),
                Some(claim.clone()),
                ordergate_domain::now(),
            )
            .await);
        assert_eq!(again, Answer::Replayed(expected.clone()));
        assert_eq!(ok(store.get_shop(retried.shop_id).await), None);
    }
    assert_eq!(calls_of(&calls), 1, "a replay renders nothing");
    assert_eq!(ok(store.list_shops().await), [sakura]);
}

pub async fn idempotent_open_session_runs_once_and_replays_its_response(store: &dyn Store) {
    let shop = new_shop(store).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let claim = staff_claim(&format!("/api/v1/shops/{}/sessions", shop.shop_id), "T1");
    let session = session_at(shop.shop_id, "T1", "111111", instant());
    let expected = session_body(&session);

    let first = ok(store
        .staff_write(
            StaffWrite::OpenSession(session.clone(), counted(&calls, session_body)),
            Some(claim.clone()),
            ordergate_domain::now(),
        )
        .await);
    assert_eq!(first, Answer::Fresh(expected.clone()));
    assert_eq!(
        ok(store.get_session(session.session_id).await),
        Some(session.clone())
    );

    // The retry would be TableOccupied if it ran: it is replayed instead.
    let retried = session_at(shop.shop_id, "T1", "222222", instant() + secs(1));
    let again = ok(store
        .staff_write(
            StaffWrite::OpenSession(retried.clone(), counted(&calls, session_body)),
            Some(claim.clone()),
            ordergate_domain::now(),
        )
        .await);
    assert_eq!(again, Answer::Replayed(expected));
    assert_eq!(calls_of(&calls), 1);
    assert_eq!(ok(store.get_session(retried.session_id).await), None);
    assert_eq!(
        ok(store.list_sessions(shop.shop_id, None, limit(100)).await),
        [session]
    );
}

pub async fn idempotent_restock_adds_once(store: &dyn Store) {
    let p = published(store).await;
    let t = instant();
    ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(Some(5), t), STAFF, t)
        .await);
    let calls = Arc::new(AtomicUsize::new(0));
    let claim = restock_claim(p.shop_id, p.curry, "quantity=3");

    let first = ok(store
        .staff_write(
            restock(p.shop_id, p.curry, 3, counted(&calls, item_body)),
            Some(claim.clone()),
            ordergate_domain::now(),
        )
        .await);
    let expected = StoredResponse {
        status: 200,
        body: format!(r#"{{"itemId":"{}","stock":8,"version":3}}"#, p.curry),
        location: None,
    };
    assert_eq!(first, Answer::Fresh(expected.clone()));

    for _ in 0..2 {
        let again = ok(store
            .staff_write(
                restock(p.shop_id, p.curry, 3, counted(&calls, item_body)),
                Some(claim.clone()),
                ordergate_domain::now(),
            )
            .await);
        assert_eq!(again, Answer::Replayed(expected.clone()));
    }
    assert_eq!(calls_of(&calls), 1);
    assert_eq!(stock_of(store, p.shop_id, p.curry).await, Some(8));
    let restocks = ok(store.inventory_log(p.shop_id, limit(100)).await)
        .into_iter()
        .filter(|e| e.operation == Operation::Restock)
        .count();
    assert_eq!(restocks, 1);
}

pub async fn staff_write_without_a_key_runs_every_time_and_keeps_no_record(store: &dyn Store) {
    let p = published(store).await;
    let t = instant();
    ok(store
        .update_inventory(p.shop_id, p.curry, set_stock(Some(5), t), STAFF, t)
        .await);
    let calls = Arc::new(AtomicUsize::new(0));
    for expected_stock in [7, 9] {
        let answer = ok(store
            .staff_write(
                restock(p.shop_id, p.curry, 2, counted(&calls, item_body)),
                None,
                ordergate_domain::now(),
            )
            .await);
        let Answer::Fresh(response) = answer else {
            panic!("a write without a key is never a replay: {answer:?}");
        };
        assert!(
            response
                .body
                .contains(&format!(r#""stock":{expected_stock}"#)),
            "{}",
            response.body
        );
    }
    assert_eq!(calls_of(&calls), 2, "each rendered its own response");
    assert_eq!(stock_of(store, p.shop_id, p.curry).await, Some(9));
    // Nothing was recorded under any key: the same restock with one now
    // runs as new.
    let claim = restock_claim(p.shop_id, p.curry, "quantity=2");
    let keyed = ok(store
        .staff_write(
            restock(p.shop_id, p.curry, 2, counted(&calls, item_body)),
            Some(claim),
            ordergate_domain::now(),
        )
        .await);
    assert!(matches!(keyed, Answer::Fresh(_)));
    assert_eq!(stock_of(store, p.shop_id, p.curry).await, Some(11));
}

pub async fn idempotent_checkout_replays_the_first_bill(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let t = instant();
    placed(
        store
            .place(guest_order(
                session.session_id,
                CLIENT,
                simple_order(p.curry, 1),
                t + secs(1),
            ))
            .await,
    );
    let calls = Arc::new(AtomicUsize::new(0));
    let claim = staff_claim(
        &format!("/api/v1/sessions/{}/checkout", session.session_id),
        "checkout",
    );
    let checkout = |now| StaffWrite::Checkout {
        session_id: session.session_id,
        now,
        render: counted(&calls, bill_body),
    };

    let closed_at = t + Duration::hours(1);
    let first = ok(store
        .staff_write(
            checkout(closed_at),
            Some(claim.clone()),
            ordergate_domain::now(),
        )
        .await);
    let expected = StoredResponse {
        status: 200,
        body: format!(
            r#"{{"closedAt":{},"orders":1,"total":900}}"#,
            closed_at.timestamp_millis()
        ),
        location: None,
    };
    assert_eq!(first, Answer::Fresh(expected.clone()));
    let again = ok(store
        .staff_write(
            checkout(closed_at + Duration::hours(1)),
            Some(claim.clone()),
            ordergate_domain::now(),
        )
        .await);
    assert_eq!(again, Answer::Replayed(expected));
    assert_eq!(calls_of(&calls), 1);
    let closed = ok(store.get_session(session.session_id).await).expect("session");
    assert_eq!(
        (closed.status, closed.closed_at),
        (SessionStatus::Closed, Some(closed_at))
    );
}

pub async fn idempotent_key_reused_for_another_request_is_refused(store: &dyn Store) {
    let p = published(store).await;
    let t = instant();
    for id in [p.curry, p.cheese] {
        ok(store
            .update_inventory(p.shop_id, id, set_stock(Some(5), t), STAFF, t)
            .await);
    }
    let calls = Arc::new(AtomicUsize::new(0));
    let claim = restock_claim(p.shop_id, p.curry, "quantity=3");
    ok(store
        .staff_write(
            restock(p.shop_id, p.curry, 3, counted(&calls, item_body)),
            Some(claim.clone()),
            ordergate_domain::now(),
        )
        .await);

    let other = Claim {
        fingerprint: Fingerprint::of("quantity=4"),
        ..claim.clone()
    };
    assert_eq!(
        rejected(
            store
                .staff_write(
                    restock(p.shop_id, p.curry, 4, counted(&calls, item_body)),
                    Some(other),
                    ordergate_domain::now()
                )
                .await
        ),
        Rejection::IdempotencyKeyReused
    );
    assert_eq!(calls_of(&calls), 1);
    assert_eq!(stock_of(store, p.shop_id, p.curry).await, Some(8));

    // The same key in another scope is another key.
    let cheese = Claim {
        fingerprint: Fingerprint::of("quantity=4"),
        ..restock_claim(p.shop_id, p.cheese, "")
    };
    let cheese = Claim {
        key: claim.key.clone(),
        ..cheese
    };
    let answer = ok(store
        .staff_write(
            restock(p.shop_id, p.cheese, 4, counted(&calls, item_body)),
            Some(cheese),
            ordergate_domain::now(),
        )
        .await);
    assert!(matches!(answer, Answer::Fresh(_)), "{answer:?}");
    assert_eq!(stock_of(store, p.shop_id, p.cheese).await, Some(9));
    let shop = shop_named("Kissa", instant());
    let answer = ok(store
        .staff_write(
            StaffWrite::CreateShop(shop.clone(), counted(&calls, shop_body)),
            Some(Claim {
                key: claim.key.clone(),
                ..staff_claim("/api/v1/shops", "kissa")
            }),
            ordergate_domain::now(),
        )
        .await);
    assert_eq!(answer, Answer::Fresh(shop_body(&shop)));
    assert_eq!(calls_of(&calls), 3);
}

pub async fn idempotent_refused_writes_store_nothing(store: &dyn Store) {
    let p = published(store).await;
    let t = instant();
    let calls = Arc::new(AtomicUsize::new(0));

    // Restock of untracked ramen: refused, and the key stays free.
    let claim = restock_claim(p.shop_id, p.ramen, "quantity=3");
    assert_eq!(
        rejected(
            store
                .staff_write(
                    restock(p.shop_id, p.ramen, 3, counted(&calls, item_body)),
                    Some(claim.clone()),
                    ordergate_domain::now()
                )
                .await
        ),
        Rejection::StockNotTracked { item_id: p.ramen }
    );
    assert_eq!(stock_of(store, p.shop_id, p.ramen).await, None);
    ok(store
        .update_inventory(p.shop_id, p.ramen, set_stock(Some(0), t), STAFF, t)
        .await);
    let answer = ok(store
        .staff_write(
            restock(p.shop_id, p.ramen, 3, counted(&calls, item_body)),
            Some(claim.clone()),
            ordergate_domain::now(),
        )
        .await);
    assert_eq!(
        answer,
        Answer::Fresh(StoredResponse {
            status: 200,
            body: format!(r#"{{"itemId":"{}","stock":3,"version":3}}"#, p.ramen),
            location: None,
        })
    );
    assert_eq!(stock_of(store, p.shop_id, p.ramen).await, Some(3));

    // Opening an occupied table: refused, and the key stays free.
    let occupant = open_table(store, p.shop_id, "T1").await;
    let claim = staff_claim(&format!("/api/v1/shops/{}/sessions", p.shop_id), "T1");
    let newcomer = session_at(p.shop_id, "T1", "222222", t + secs(1));
    assert_eq!(
        rejected(
            store
                .staff_write(
                    StaffWrite::OpenSession(newcomer.clone(), counted(&calls, session_body)),
                    Some(claim.clone()),
                    ordergate_domain::now()
                )
                .await
        ),
        Rejection::TableOccupied {
            table_label: "T1".into()
        }
    );
    assert_eq!(ok(store.get_session(newcomer.session_id).await), None);
    ok(store.checkout(occupant.session_id, t + secs(2)).await);
    let answer = ok(store
        .staff_write(
            StaffWrite::OpenSession(newcomer.clone(), counted(&calls, session_body)),
            Some(claim),
            ordergate_domain::now(),
        )
        .await);
    assert_eq!(answer, Answer::Fresh(session_body(&newcomer)));
    assert_eq!(
        ok(store.get_session(newcomer.session_id).await),
        Some(newcomer)
    );
    assert_eq!(calls_of(&calls), 2, "only successful writes render");
}

pub async fn purge_expired_forgets_only_expired_records(store: &dyn Store) {
    let Table { menu: p, session } = table(store).await;
    let t = instant();
    let short_lived = t + secs(10);
    let with_expiry = |client, item, expires_at| {
        let mut cmd = guest_order(session.session_id, client, simple_order(item, 1), t);
        cmd.rules = lenient_rules();
        cmd.claim.as_mut().expect("guest claim").expires_at = expires_at;
        cmd
    };
    let short = with_expiry(CLIENT, p.curry, short_lived);
    let long = with_expiry(OTHER_CLIENT, p.ramen, t + Duration::hours(1));
    placed(store.place(short.clone()).await);
    placed(store.place(long.clone()).await);
    let shop_claim = staff_claim("/api/v1/shops", "kissa");
    let kissa = shop_named("Kissa", instant());
    let shop_answer = ok(store
        .staff_write(
            StaffWrite::CreateShop(kissa, Box::new(shop_body)),
            Some(shop_claim.clone()),
            ordergate_domain::now(),
        )
        .await);

    assert_eq!(ok(store.purge_expired(short_lived - ms(1)).await), 0);
    assert_eq!(ok(store.purge_expired(short_lived).await), 1);
    assert_eq!(ok(store.purge_expired(short_lived).await), 0);

    // What lives on still replays.
    let replay = replayed(store.place(retry(&long, t + secs(20))).await);
    assert_eq!(replay.order_id, long.order_id);
    let Answer::Fresh(stored) = shop_answer else {
        panic!("a new key is fresh")
    };
    let again = ok(store
        .staff_write(
            StaffWrite::CreateShop(shop_named("Kissa", instant()), Box::new(shop_body)),
            Some(shop_claim),
            ordergate_domain::now(),
        )
        .await);
    assert_eq!(again, Answer::Replayed(stored));

    // The purged key is free for another request.
    let other = simple_order(p.curry, 2);
    let reuse = PlaceOrder {
        claim: Some(Claim {
            fingerprint: other.fingerprint.clone(),
            expires_at: claim_expiry(),
            ..short.claim.clone().expect("guest claim")
        }),
        order: other,
        ..retry(&short, t + secs(20))
    };
    placed(store.place(reuse.clone()).await);

    // Purged by a clock past every expiry, the long-lived order's key is
    // gone too: the same request is a new order.
    assert_eq!(
        ok(store
            .purge_expired(ordergate_domain::now() + Duration::days(2))
            .await),
        3,
        "the long order's, the reused key's and the shop's"
    );
    let fresh = placed(store.place(retry(&long, t + secs(30))).await);
    assert_ne!(fresh.order_id, long.order_id);
    assert_eq!(session_order_ids(store, session.session_id).await.len(), 4);
}
