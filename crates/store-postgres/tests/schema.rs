//! The migrated schema keeps the rule every backend keeps: every table
//! carries `shop_id`, so one shop's rows never need another shop's — but
//! for staff accounts, which are people's and span the shops they work at
//! (on a distributed database, reference tables).

mod support;

use sqlx::{Connection, PgConnection};

#[tokio::test]
async fn every_table_carries_shop_id() {
    let Some(url) = support::database_url() else {
        return;
    };
    let schema = support::Schema::create(&url).await;
    drop(schema.store().await);

    let mut conn = PgConnection::connect_with(&schema.options())
        .await
        .expect("connect");
    let tables: Vec<(String, Option<String>)> = sqlx::query_as(
        "select t.table_name::text, c.is_nullable::text
         from information_schema.tables t
         left join information_schema.columns c
             on c.table_schema = t.table_schema and c.table_name = t.table_name
            and c.column_name = 'shop_id'
         where t.table_schema = $1 and t.table_type = 'BASE TABLE'
         order by t.table_name",
    )
    .bind(&schema.name)
    .fetch_all(&mut conn)
    .await
    .expect("list the tables");
    let _ = conn.close().await;

    let names: Vec<&str> = tables.iter().map(|(name, _)| name.as_str()).collect();
    for expected in [
        "shops",
        "menu_items",
        "toppings",
        "inventory",
        "inventory_log",
        "table_sessions",
        "orders",
        "idempotency_keys",
        "ticket_counters",
        "event_counters",
        "events",
        "audit_log",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let without: Vec<&str> = tables
        .iter()
        .filter(|(_, nullable)| nullable.is_none())
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(
        without,
        [
            "_sqlx_migrations",
            "accounts",
            "login_attempts",
            "staff_tokens"
        ],
        "only the migration bookkeeping and staff accounts are global"
    );
    // Only staff keys that create a shop have none.
    let nullable: Vec<&str> = tables
        .iter()
        .filter(|(_, nullable)| nullable.as_deref() == Some("YES"))
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(nullable, ["idempotency_keys"]);
}
