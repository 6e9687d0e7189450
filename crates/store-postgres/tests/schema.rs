//! The migrated schema keeps the rule every backend keeps: every table
//! carries `shop_id`, so one shop's rows never need another shop's — but
//! for staff accounts, which are people's and span the shops they work at
//! (on a distributed database, reference tables), and every key of a
//! shop's table includes it (but the routes that find a session's or an
//! order's shop by its id alone).

mod support;

use sqlx::{Connection, PgConnection};

/// A fresh schema the store has migrated, and a connection inside it;
/// `None` (skipped) without a test database.
async fn migrated() -> Option<(support::Schema, PgConnection)> {
    let url = support::database_url()?;
    let schema = support::Schema::create(&url).await;
    drop(schema.store().await);
    let conn = PgConnection::connect_with(&schema.options())
        .await
        .expect("connect");
    Some((schema, conn))
}

#[tokio::test]
async fn every_table_carries_shop_id() {
    let Some((schema, mut conn)) = migrated().await else {
        return;
    };
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
    let nullable: Vec<&str> = tables
        .iter()
        .filter(|(_, nullable)| nullable.as_deref() == Some("YES"))
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(nullable, Vec::<&str>::new(), "every row names its shop");
}

/// What a database distributed by shop (Citus) requires of each table it
/// spreads: every unique index, the primary key included, and every
/// foreign key to another shop's table includes `shop_id`.
#[tokio::test]
async fn every_key_of_a_shop_table_includes_shop_id() {
    let Some((schema, mut conn)) = migrated().await else {
        return;
    };
    let unique: Vec<String> = sqlx::query_scalar(
        "select i.indexrelid::regclass::text
         from pg_index i
         join pg_class c on c.oid = i.indrelid
         join pg_namespace n on n.oid = c.relnamespace
         join pg_attribute a on a.attrelid = c.oid and a.attname = 'shop_id'
         where n.nspname = $1 and i.indisunique and not (a.attnum = any(i.indkey::int2[]))
         order by 1",
    )
    .bind(&schema.name)
    .fetch_all(&mut conn)
    .await
    .expect("list unique indexes");
    // A shop's own row is the one key that is its shop_id alone; a route
    // is found by its id, and spread by it (see src/routes.rs).
    assert_eq!(unique, ["shop_routes_pkey"], "unique without shop_id");
    let foreign: Vec<String> = sqlx::query_scalar(
        "select co.conname::text
         from pg_constraint co
         join pg_namespace n on n.oid = co.connamespace
         join pg_attribute a on a.attrelid = co.conrelid and a.attname = 'shop_id'
         join pg_attribute r on r.attrelid = co.confrelid and r.attname = 'shop_id'
         where n.nspname = $1 and co.contype = 'f'
           and not (a.attnum = any(co.conkey) and r.attnum = any(co.confkey))
         order by 1",
    )
    .bind(&schema.name)
    .fetch_all(&mut conn)
    .await
    .expect("list foreign keys");
    assert_eq!(
        foreign,
        Vec::<String>::new(),
        "foreign keys without shop_id"
    );
    let _ = conn.close().await;
}
