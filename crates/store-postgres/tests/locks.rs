//! Bounded waits of the order path: a request that cannot get its table in
//! time is refused as `SessionBusy`, one whose idempotency key stays held
//! by another request (on any node) as `RequestInProgress`; either keeps
//! its audit row and nothing against its key.

mod support;

use std::time::{Duration, Instant};

use ordergate_domain::Rejection;
use ordergate_domain::idempotency::Scope;
use ordergate_domain::paging::Limit;
use ordergate_store::{Claim, StaffWrite, Store, StoreError};
use sqlx::{Connection, PgConnection};
use support::{Schema, curry_shop, guest_order, open_table};

async fn holder(schema: &Schema) -> PgConnection {
    PgConnection::connect_with(&schema.options())
        .await
        .expect("connect a second client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_that_cannot_get_its_table_in_time_is_session_busy_and_audited() {
    let Some(url) = support::database_url() else {
        return;
    };
    let schema = Schema::create(&url).await;
    let store = schema.store().await;
    let (shop_id, curry) = curry_shop(&store, 10).await;
    let table = open_table(&store, shop_id, "T1").await;

    // Another client holds the table (as a long transaction on another node would).
    let mut other = holder(&schema).await;
    let mut held = other.begin().await.expect("begin");
    sqlx::query("select 1 from table_sessions where session_id = $1 for update")
        .bind(table.session_id)
        .execute(&mut *held)
        .await
        .expect("lock the session");

    let cmd = guest_order(
        table.session_id,
        "phone-1",
        curry,
        Duration::from_millis(300),
    );
    let started = Instant::now();
    let ordered = store.place_order(cmd.clone()).await.expect("an answer");
    let waited = started.elapsed();
    assert_eq!(ordered.shop_id, shop_id);
    assert_eq!(ordered.outcome, Err(Rejection::SessionBusy));
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(2),
        "waited {waited:?} for a 300 ms deadline"
    );
    held.rollback().await.expect("release the table");

    let audit = store
        .audit_log(shop_id, Limit::MAX_PAGE)
        .await
        .expect("audit");
    assert_eq!(audit.len(), 1);
    assert_eq!(
        (
            audit[0].code.as_str(),
            audit[0].status,
            &audit[0].request_id
        ),
        ("SESSION_BUSY", 409, &cmd.request_id)
    );

    // The refusal kept nothing against the key: the same request now places.
    let retry = ordergate_store::PlaceOrder {
        rules: ordergate_domain::order::admission::OrderRules {
            busy_deadline: Instant::now() + Duration::from_secs(5),
            ..cmd.rules
        },
        ..cmd
    };
    let placed = store
        .place_order(retry)
        .await
        .expect("an answer")
        .outcome
        .expect("placed");
    assert!(!placed.replayed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_whose_key_stays_held_elsewhere_are_in_progress() {
    let Some(url) = support::database_url() else {
        return;
    };
    let schema = Schema::create(&url).await;
    let store = schema.store().await;
    let (shop_id, curry) = curry_shop(&store, 10).await;
    let table = open_table(&store, shop_id, "T1").await;
    let cmd = guest_order(table.session_id, "phone-1", curry, Duration::from_secs(5));
    let claim = cmd.claim.clone().expect("a guest claim");
    let staff = Claim {
        scope: Scope::staff_post(&format!("/api/v1/sessions/{}/checkout", table.session_id)),
        ..claim.clone()
    };

    // Another node is still running requests with these keys: one of the
    // versions that built the lock's text in SQL, which this version must
    // still meet.
    let mut other = holder(&schema).await;
    let mut held = other.begin().await.expect("begin");
    for claim in [&claim, &staff] {
        sqlx::query("select pg_advisory_xact_lock(hashtextextended($1 || E'\\n' || $2, 0))")
            .bind(claim.scope.as_str())
            .bind(claim.key.as_str())
            .execute(&mut *held)
            .await
            .expect("take the key");
    }

    let started = Instant::now();
    let ordered = store.place_order(cmd.clone()).await.expect("an answer");
    assert_eq!(ordered.outcome, Err(Rejection::RequestInProgress));
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(1900) && waited < Duration::from_secs(4),
        "waited {waited:?} for a key held elsewhere"
    );
    let audit = store
        .audit_log(shop_id, Limit::MAX_PAGE)
        .await
        .expect("audit");
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].code.as_str(), "REQUEST_IN_PROGRESS");

    let checkout = StaffWrite::Checkout {
        session_id: table.session_id,
        now: ordergate_domain::now(),
        render: Box::new(|_| ordergate_store::StoredResponse {
            status: 200,
            body: "{}".into(),
            location: None,
        }),
    };
    match store
        .staff_write(checkout, Some(staff), ordergate_domain::now())
        .await
    {
        Err(StoreError::Rejected(Rejection::RequestInProgress)) => {}
        other => panic!("expected RequestInProgress, got {other:?}"),
    }
    held.rollback().await.expect("release the keys");
    let session = store
        .get_session(table.session_id)
        .await
        .expect("read")
        .expect("session");
    assert_eq!(
        session.status,
        ordergate_domain::session::SessionStatus::Active,
        "the refused checkout did nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waits_for_its_key_on_another_node_then_replays() {
    let Some(url) = support::database_url() else {
        return;
    };
    let schema = Schema::create(&url).await;
    let first_node = std::sync::Arc::new(schema.store().await);
    let second_node = std::sync::Arc::new(schema.store().await);
    let (shop_id, curry) = curry_shop(&*first_node, 10).await;
    let table = open_table(&*first_node, shop_id, "T1").await;

    // The table is busy, so the first request holds its key while it waits.
    let mut other = holder(&schema).await;
    let mut held = other.begin().await.expect("begin");
    sqlx::query("select 1 from table_sessions where session_id = $1 for update")
        .bind(table.session_id)
        .execute(&mut *held)
        .await
        .expect("lock the session");
    let cmd = guest_order(table.session_id, "phone-1", curry, Duration::from_secs(5));
    let first = tokio::spawn({
        let (node, cmd) = (std::sync::Arc::clone(&first_node), cmd.clone());
        async move { node.place_order(cmd).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The same request again, on another node: it waits for the key.
    let second = tokio::spawn({
        let node = std::sync::Arc::clone(&second_node);
        let cmd = ordergate_store::PlaceOrder {
            order_id: uuid::Uuid::now_v7(),
            request_id: "req-retry".into(),
            ..cmd.clone()
        };
        async move { node.place_order(cmd).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!first.is_finished() && !second.is_finished());
    held.rollback().await.expect("free the table");

    let first = first.await.expect("task").expect("an answer").outcome;
    let second = second.await.expect("task").expect("an answer").outcome;
    let (first, second) = (first.expect("placed"), second.expect("replayed"));
    assert!(!first.replayed && second.replayed);
    assert_eq!(first.order_id, cmd.order_id);
    assert_eq!(second.order_id, cmd.order_id);
    assert_eq!(second.response, first.response.clone().replayed());
    let orders = second_node
        .session_orders(table.session_id, Limit::MAX_PAGE)
        .await
        .expect("orders");
    assert_eq!(orders.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_of_an_untracked_item_does_not_wait_for_its_stock_row() {
    let Some(url) = support::database_url() else {
        return;
    };
    let schema = Schema::create(&url).await;
    let store = schema.store().await;
    let (shop_id, curry) = curry_shop(&store, 10).await;
    let now = chrono::Utc::now();
    let untrack = ordergate_domain::inventory::InventoryUpdate {
        stock: Some(None),
        sold_out: None,
        sold_out_until: None,
    }
    .validate(now)
    .expect("a valid stock change");
    store
        .update_inventory(shop_id, curry, untrack, "staff", now)
        .await
        .expect("untrack the curry");
    let table = open_table(&store, shop_id, "T1").await;

    // Another transaction holds the item's row, as another order of it
    // would until its commit: unlimited dishes are not taken in turns.
    let mut other = holder(&schema).await;
    let mut held = other.begin().await.expect("begin");
    sqlx::query("select 1 from inventory where item_id = $1 for update")
        .bind(curry)
        .execute(&mut *held)
        .await
        .expect("lock the stock row");
    let cmd = guest_order(
        table.session_id,
        "phone-1",
        curry,
        Duration::from_millis(300),
    );
    let outcome = store.place_order(cmd).await.expect("an answer").outcome;
    assert!(outcome.is_ok(), "the order waited for the row: {outcome:?}");
    held.rollback().await.expect("release the row");
}
