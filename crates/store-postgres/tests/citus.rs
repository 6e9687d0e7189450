//! On Citus (a coordinator `ORDERGATE_TEST_CITUS_URL` names, with the
//! `citus` extension in its database), the store's own migrations spread
//! the schema by shop: no flag, no step of the operator's.

mod support;

use std::io::Write;
use std::time::Duration;

use ordergate_domain::audit::AuditEntry;
use ordergate_domain::code::ErrorCode;
use ordergate_domain::idempotency::{Fingerprint, IdempotencyKey, Scope};
use ordergate_domain::order::{OrderStatus, Recall, StatusChange};
use ordergate_domain::paging::Limit;
use ordergate_domain::service::{NewServiceRequest, ServiceKind};
use ordergate_domain::session::{GuestProof, PinOutcome, PinPolicy, Session, SessionStatus};
use ordergate_store::{
    Answer, Claim, GuestGrant, Owned, PlaceOrder, Render, ServiceCall, StaffWrite, Store,
    StoredResponse,
};
use ordergate_store_postgres::PgStore;
use sqlx::{Connection, PgConnection};
use support::{PIN, Schema, curry_shop, guest_order};
use uuid::Uuid;

const CITUS_URL_VAR: &str = "ORDERGATE_TEST_CITUS_URL";

/// The coordinator's URL, or `None` after telling stderr the test is skipped.
fn citus_url() -> Option<String> {
    match std::env::var(CITUS_URL_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            let _ = writeln!(
                std::io::stderr(),
                "citus: skipped: set {CITUS_URL_VAR}=postgres://postgres@127.0.0.1:9700/postgres \
                 (../shared/citus/cluster.sh start) to run it"
            );
            None
        }
    }
}

#[tokio::test]
async fn the_migrations_distribute_every_shop_table_by_shop() {
    let Some(url) = citus_url() else {
        return;
    };
    let schema = Schema::create(&url).await;
    let store = schema.store().await;

    let mut conn = PgConnection::connect_with(&schema.options())
        .await
        .expect("connect");
    let tables: Vec<String> = sqlx::query_scalar(
        "select table_name::text from information_schema.tables
         where table_schema = $1 and table_type = 'BASE TABLE' and table_name != '_sqlx_migrations'
         order by 1",
    )
    .bind(&schema.name)
    .fetch_all(&mut conn)
    .await
    .expect("list the tables");
    // (table, hash or reference, distribution column, colocation group)
    let spread: Vec<(String, String, Option<String>, i32)> = sqlx::query_as(
        "select c.relname::text, p.partmethod::text,
                column_to_column_name(p.logicalrelid, p.partkey)::text, p.colocationid
         from pg_dist_partition p
         join pg_class c on c.oid = p.logicalrelid
         join pg_namespace n on n.oid = c.relnamespace
         where n.nspname = $1
         order by 1",
    )
    .bind(&schema.name)
    .fetch_all(&mut conn)
    .await
    .expect("read Citus's table metadata");
    let _ = conn.close().await;

    let names: Vec<&str> = spread.iter().map(|(name, ..)| name.as_str()).collect();
    assert_eq!(names, tables, "every table is Citus's");
    let shops_group = spread
        .iter()
        .find(|(name, ..)| name == "shops")
        .map(|(.., group)| *group)
        .expect("shops is distributed");
    for (name, method, column, group) in &spread {
        if ["accounts", "login_attempts", "staff_tokens"].contains(&name.as_str()) {
            assert_eq!(method, "n", "{name} is a reference table");
        } else if name == "shop_routes" {
            assert_eq!(
                (method.as_str(), column.as_deref(), *group),
                ("h", Some("id"), shops_group),
                "routes are hashed by their id, colocated with shops"
            );
        } else {
            assert_eq!(
                (method.as_str(), column.as_deref(), *group),
                ("h", Some("shop_id"), shops_group),
                "{name} is hashed by shop_id, colocated with shops"
            );
        }
    }

    // And the store works on it.
    let (shop_id, _) = curry_shop(&store, 5).await;
    let shops = store.list_shops().await.expect("list the shops");
    assert!(shops.iter().any(|shop| shop.shop_id == shop_id));
}

/// A response as the server would store it; what it says does not matter here.
fn stored<T>() -> Render<T> {
    Box::new(|_: &T| StoredResponse {
        status: 200,
        body: "{}".to_owned(),
        location: None,
    })
}

fn staff_claim(path: String) -> Claim {
    Claim {
        scope: Scope::staff_post(&path),
        key: IdempotencyKey::generate(),
        fingerprint: Fingerprint::of(&path),
        expires_at: ordergate_domain::now() + chrono::Duration::days(1),
    }
}

/// Whether Citus keeps `id`'s route on the shard of `shop_id`'s rows.
async fn routed_beside_its_shop(conn: &mut PgConnection, id: Uuid, shop_id: Uuid) -> bool {
    sqlx::query_scalar(
        "select (select shardminvalue from pg_dist_shard
                 where shardid = get_shard_id_for_distribution_column('shop_routes', $1))
              = (select shardminvalue from pg_dist_shard
                 where shardid = get_shard_id_for_distribution_column('shops', $2))",
    )
    .bind(id)
    .bind(shop_id)
    .fetch_one(conn)
    .await
    .expect("ask Citus where the rows are")
}

/// The order path keeps to its shop's shard: this store's connections ask
/// Citus to refuse, with an error, every statement it would run on more
/// than one shard (`citus.multi_task_query_log_level = error`) or as
/// several plans passing results between nodes
/// (`citus.max_intermediate_result_size = 0`), and a
/// table is seated, guests get in and order (new, retried, refused), the
/// kitchen moves and recalls and cancels, stock is kept, the guests call
/// for the bill, and the table is checked out, all through it. New
/// sessions and orders get ids whose routes live on their shop's shard.
#[tokio::test]
async fn the_order_path_runs_each_statement_on_the_shops_shard() {
    let Some(url) = citus_url() else {
        return;
    };
    let schema = Schema::create(&url).await;
    let setup = schema.store().await;
    let (shop_id, curry) = curry_shop(&setup, 50).await;
    let strict = PgStore::connect_with(
        schema
            .options()
            .options([("citus.multi_task_query_log_level", "error")])
            .options([("citus.max_intermediate_result_size", "0")]),
    )
    .await
    .expect("connect a store whose statements must each run on one shard");
    let store: &dyn Store = &strict;
    // The guard is on: listing every shop reads every shard.
    assert!(
        store.list_shops().await.is_err(),
        "a statement over several shards is refused"
    );
    let now = ordergate_domain::now();
    let rule = PinPolicy {
        max_failures: 5,
        lockout: chrono::Duration::seconds(300),
        closed_grace: chrono::Duration::minutes(30),
    };

    // Seated under a key, and the retry replayed.
    let session = Session {
        session_id: store.new_session_id(shop_id),
        shop_id,
        table_label: "T1".to_owned(),
        pin: PIN.to_owned(),
        status: SessionStatus::Active,
        opened_at: now,
        closed_at: None,
        pin_failures: 0,
        pin_locked_until: None,
    };
    let session_id = session.session_id;
    let seat = staff_claim(format!("/api/v1/shops/{shop_id}/sessions"));
    for replayed in [false, true] {
        let write = StaffWrite::OpenSession(session.clone(), stored());
        let answer = store.staff_write(write, Some(seat.clone()), now).await;
        assert_eq!(
            matches!(answer.expect("seat the table"), Answer::Replayed(_)),
            replayed
        );
    }

    // The guests get in.
    assert!(store.get_session(session_id).await.expect("read").is_some());
    let wrong = store
        .verify_pin(session_id, Some("999999"), rule, now)
        .await;
    assert_eq!(wrong.expect("judge a PIN"), PinOutcome::Invalid);
    store.unlock_pin(session_id).await.expect("unlock");
    let grant = GuestGrant {
        session_id,
        pin: Some(PIN.to_owned()),
        token_digest: "citus-token".to_owned(),
        expires_at: now + chrono::Duration::hours(4),
        policy: rule,
        now,
    };
    store
        .grant_guest_access(grant)
        .await
        .expect("grant a token");
    let opened = store
        .guest_token_session(session_id, "citus-token", now)
        .await;
    assert!(opened.expect("read the token").is_some());

    // They order; the retry is answered from committed data, and again by
    // the full path; an unknown item is refused.
    let order = PlaceOrder {
        order_id: store.new_order_id(session_id).await.expect("an order id"),
        ..guest_order(session_id, "guest-a", curry, Duration::from_secs(5))
    };
    let placed = store.place_order(order.clone()).await.expect("place");
    let placed = placed.outcome.expect("the order is placed");
    let claim = order.claim.clone().expect("a guest's key");
    let proof = GuestProof::Pin(Some(PIN.to_owned()));
    let replay = store
        .committed_replay(session_id, &proof, &claim, rule, now)
        .await;
    assert!(replay.expect("check for a replay").is_some());
    let again = store.place_order(order.clone()).await.expect("retry");
    assert!(again.outcome.expect("replayed").replayed);
    let unknown = guest_order(
        session_id,
        "guest-b",
        Uuid::new_v4(),
        Duration::from_secs(5),
    );
    let refused = store.place_order(unknown).await.expect("refuse");
    assert!(refused.outcome.is_err());
    let entry = AuditEntry::refused(
        now,
        session_id,
        "req-x",
        Some("guest-c"),
        ErrorCode::CooldownActive,
    );
    store.record_audit(entry).await.expect("file an audit row");
    assert_eq!(
        store
            .session_orders(session_id, Limit::DEFAULT)
            .await
            .expect("list")
            .len(),
        1
    );
    let order_id = placed.order_id;
    assert!(store.get_order(order_id).await.expect("read").is_some());
    for resource in [Owned::Session(session_id), Owned::Order(order_id)] {
        let found = store.shop_of(resource).await.expect("route");
        assert_eq!(found, Some(shop_id));
    }

    // The kitchen moves it along, undoes that, cancels it; stock is kept.
    let mv = |status| StaffWrite::SetOrderStatus {
        order_id,
        change: StatusChange {
            status,
            expected_version: None,
            actor: "kitchen".to_owned(),
        },
        now,
        render: stored(),
    };
    let path = format!("/api/v1/orders/{order_id}/status");
    store
        .staff_write(
            mv(OrderStatus::Accepted),
            Some(staff_claim(path.clone())),
            now,
        )
        .await
        .expect("accept");
    let recall = StaffWrite::RecallOrder {
        order_id,
        recall: Recall {
            expected_version: 2,
            window: chrono::Duration::minutes(5),
        },
        now,
        render: stored(),
    };
    store.staff_write(recall, None, now).await.expect("recall");
    store
        .set_order_status(
            order_id,
            StatusChange {
                status: OrderStatus::Cancelled,
                expected_version: None,
                actor: "kitchen".to_owned(),
            },
            now,
        )
        .await
        .expect("cancel");
    let restock = StaffWrite::Restock {
        shop_id,
        item_id: curry,
        quantity: 5,
        actor: "staff".to_owned(),
        now,
        render: stored(),
    };
    let path = format!("/api/v1/shops/{shop_id}/inventory/{curry}/restock");
    store
        .staff_write(restock, Some(staff_claim(path)), now)
        .await
        .expect("restock");
    let stock = store.list_inventory(shop_id).await.expect("inventory");
    assert_eq!(stock[0].level.stock, Some(55), "taken, put back, restocked");
    store
        .inventory_log(shop_id, Limit::DEFAULT)
        .await
        .expect("log");
    store.menu_source(shop_id).await.expect("menu");
    store
        .shop_orders(shop_id, vec![], Limit::DEFAULT)
        .await
        .expect("the kitchen's orders");
    store.kitchen_pace(shop_id, now).await.expect("pace");
    let events = store
        .events_after(shop_id, 0, Limit::DEFAULT)
        .await
        .expect("events");
    assert_eq!(
        store.last_event_id(shop_id).await.expect("newest event"),
        events.last().expect("events").event_id
    );

    // They ask for the bill, and the table is checked out under a key.
    let call = ServiceCall {
        session_id,
        request: NewServiceRequest {
            kind: ServiceKind::Bill,
        },
        claim: None,
        now,
        render: stored(),
    };
    store.request_service(call).await.expect("ask for the bill");
    let checkout = StaffWrite::Checkout {
        session_id,
        now,
        render: stored(),
    };
    let path = format!("/api/v1/sessions/{session_id}/checkout");
    store
        .staff_write(checkout, Some(staff_claim(path)), now)
        .await
        .expect("check out");
    store
        .audit_log(shop_id, Limit::DEFAULT)
        .await
        .expect("audit");

    let mut conn = PgConnection::connect_with(&schema.options())
        .await
        .expect("connect");
    assert!(routed_beside_its_shop(&mut conn, session_id, shop_id).await);
    assert!(routed_beside_its_shop(&mut conn, order_id, shop_id).await);
    let _ = conn.close().await;
}

/// `url` as libpq reads it: without the query sqlx's options ride in.
fn libpq(url: &str) -> &str {
    url.split('?').next().unwrap_or(url)
}

/// An ordergate database on plain PostgreSQL moves onto Citus: its schema
/// and rows are restored into the coordinator (`pg_dump`, as the README's
/// "Running on Citus" says), `ordergate distribute` spreads them over the
/// workers, and a store on it then finds every earlier order: a guest's
/// retry replays the order it placed, a new order is placed. Then its
/// backup, taken and restored the same way, brings both back.
#[tokio::test]
async fn a_postgresql_database_moves_onto_citus_with_its_orders() {
    let (Some(citus), Some(plain)) = (citus_url(), support::database_url()) else {
        return;
    };
    let before = Schema::create(&plain).await;
    let (shop_id, curry, session_id, order) = {
        let store = before.store().await;
        let (shop_id, curry) = curry_shop(&store, 20).await;
        let session = support::open_table(&store, shop_id, "T1").await;
        let order = guest_order(session.session_id, "guest-a", curry, Duration::from_secs(5));
        let placed = store.place_order(order.clone()).await.expect("place");
        assert!(!placed.outcome.expect("placed").replayed);
        (shop_id, curry, session.session_id, order)
    };

    let after = Schema::adopt(&citus, &before.name);
    restore(&citus, &dump(&plain, &before.name));

    let tables = ordergate_store_postgres::distribute(after.options())
        .await
        .expect("distribute");
    assert_eq!(tables, 24, "every table, spread");
    let again = ordergate_store_postgres::distribute(after.options()).await;
    assert_eq!(
        again.expect("distribute again"),
        0,
        "nothing left to spread"
    );

    let store = after.store().await;
    let mut conn = PgConnection::connect_with(&after.options())
        .await
        .expect("connect");
    let local: Vec<String> = sqlx::query_scalar(
        "select c.relname::text from pg_class c
         where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r'
           and c.relname != '_sqlx_migrations'
           and not exists (select from pg_dist_partition p where p.logicalrelid = c.oid)",
    )
    .fetch_all(&mut conn)
    .await
    .expect("list the coordinator's own tables");
    assert_eq!(
        local,
        Vec::<String>::new(),
        "no table stays on the coordinator alone"
    );
    let _ = conn.close().await;

    let retried = store.place_order(order.clone()).await.expect("retry");
    let retried = retried.outcome.expect("replayed");
    assert!(
        retried.replayed,
        "the retry finds the order placed before the move"
    );
    let next = PlaceOrder {
        order_id: store.new_order_id(session_id).await.expect("an order id"),
        ..guest_order(session_id, "guest-b", curry, Duration::from_secs(5))
    };
    let placed = store.place_order(next).await.expect("place after the move");
    assert!(!placed.outcome.expect("placed").replayed);
    let orders = store
        .session_orders(session_id, Limit::DEFAULT)
        .await
        .expect("list");
    let tickets: Vec<i64> = orders.iter().map(|o| o.ticket_number).collect();
    assert_eq!(
        tickets,
        [2, 1],
        "numbered after the order placed before the move"
    );
    let stock = store.list_inventory(shop_id).await.expect("inventory");
    assert_eq!(stock[0].level.stock, Some(18));
    drop(store);

    // A backup of the cluster is a pg_dump of the coordinator, with every
    // worker's rows: the schema gone, it comes back the same way.
    let backup = dump(&citus, &after.name);
    let mut admin = PgConnection::connect(libpq(&citus)).await.expect("connect");
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "drop schema {} cascade",
        after.name
    )))
    .execute(&mut admin)
    .await
    .expect("lose the schema");
    let _ = admin.close().await;
    restore(&citus, &backup);
    let tables = ordergate_store_postgres::distribute(after.options()).await;
    assert_eq!(tables.expect("distribute the restored schema"), 24);
    let store = after.store().await;
    let orders = store
        .session_orders(session_id, Limit::DEFAULT)
        .await
        .expect("list");
    assert_eq!(orders.len(), 2, "both orders came back");
    let retried = store
        .place_order(order)
        .await
        .expect("retry after the restore");
    assert!(retried.outcome.expect("replayed").replayed);
}

/// `pg_dump` of one schema of the database `url` names.
fn dump(url: &str, schema: &str) -> Vec<u8> {
    let dumped = std::process::Command::new("pg_dump")
        .args(["--no-owner", "--schema", schema, "--dbname", libpq(url)])
        .output()
        .expect("run pg_dump");
    assert!(
        dumped.status.success(),
        "{}",
        String::from_utf8_lossy(&dumped.stderr)
    );
    dumped.stdout
}

/// Runs a dump into the database `url` names.
fn restore(url: &str, dump: &[u8]) {
    let mut restore = std::process::Command::new("psql")
        .args(["-q", "-v", "ON_ERROR_STOP=1", "--dbname", libpq(url)])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("run psql");
    restore
        .stdin
        .take()
        .expect("psql's input")
        .write_all(dump)
        .expect("send the dump");
    assert!(restore.wait().expect("psql ends").success(), "restored");
}
