//! On Citus (a coordinator `ORDERGATE_TEST_CITUS_URL` names, with the
//! `citus` extension in its database), the store's own migrations spread
//! the schema by shop: no flag, no step of the operator's.

mod support;

use std::io::Write;

use ordergate_store::Store;
use sqlx::{Connection, PgConnection};
use support::{Schema, curry_shop};

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
