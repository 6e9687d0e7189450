//! The tables a migration copies, in dependency order, and how each one's
//! columns look on either side.

use std::collections::BTreeSet;

use anyhow::{Result, bail};
use rusqlite::Connection;
use sqlx::postgres::PgConnection;

/// The user_version of a SQLite database whose schema this binary's
/// SQLite backend has fully migrated (one per migration file).
pub const SQLITE_SCHEMA_VERSION: i64 = 15;

/// A table copied from SQLite to PostgreSQL.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Table {
    pub name: &'static str,
    /// The PostgreSQL column that keeps each row's SQLite rowid: the
    /// insertion order SQLite breaks ties with (`table_sessions.seq`).
    pub rowid_as: Option<&'static str>,
    /// Only rows that are still live are copied (idempotency records that
    /// expire after the migration's cutoff).
    pub expiring: bool,
    /// Rows per batch at most, for tables whose rows are large (photos of
    /// up to a MiB and more): a batch stays a few dozen MiB.
    pub max_batch_rows: Option<u32>,
}

const fn table(name: &'static str) -> Table {
    Table {
        name,
        rowid_as: None,
        expiring: false,
        max_batch_rows: None,
    }
}

/// Every table of the SQLite schema, parents before children. The
/// PostgreSQL-only `event_counters` and `shop_routes` are derived afterwards.
pub(crate) const TABLES: [Table; 22] = [
    table("shops"),
    table("tables"),
    Table {
        max_batch_rows: Some(16),
        ..table("images")
    },
    table("menu_items"),
    table("toppings"),
    table("item_options"),
    table("inventory"),
    table("inventory_log"),
    Table {
        rowid_as: Some("seq"),
        ..table("table_sessions")
    },
    table("orders"),
    table("service_requests"),
    table("ticket_counters"),
    table("events"),
    table("printers"),
    table("accounts"),
    table("memberships"),
    table("devices"),
    // Live tokens are copied: staff signed in during the move stay in.
    Table {
        expiring: true,
        ..table("staff_tokens")
    },
    table("login_attempts"),
    Table {
        expiring: true,
        ..table("idempotency_keys")
    },
    // Live tokens are copied: a party seated during the move stays in.
    Table {
        expiring: true,
        ..table("guest_tokens")
    },
    table("audit_log"),
];

/// Every table the PostgreSQL backend keeps, for the emptiness check.
pub(crate) const PG_TABLES: [&str; 24] = [
    "shops",
    "tables",
    "images",
    "menu_items",
    "toppings",
    "item_options",
    "inventory",
    "inventory_log",
    "table_sessions",
    "orders",
    "service_requests",
    "ticket_counters",
    "event_counters",
    "events",
    "printers",
    "accounts",
    "memberships",
    "devices",
    "staff_tokens",
    "login_attempts",
    "idempotency_keys",
    "guest_tokens",
    "audit_log",
    "shop_routes",
];

impl Table {
    /// Rows per batch of this table, when `asked` for at most.
    pub(crate) fn batch_rows(&self, asked: u32) -> u32 {
        self.max_batch_rows.map_or(asked, |most| asked.min(most))
    }

    /// The SQL condition on source rows that are copied, if not all.
    pub(crate) fn source_condition(&self, cutoff_ms: i64) -> Option<String> {
        self.expiring.then(|| format!("expires_at > {cutoff_ms}"))
    }
}

/// The PostgreSQL types the schemas use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PgKind {
    Uuid,
    Text,
    BigInt,
    Bool,
    Time,
    Bytes,
}

impl PgKind {
    fn parse(data_type: &str) -> Option<PgKind> {
        Some(match data_type {
            "uuid" => PgKind::Uuid,
            "text" => PgKind::Text,
            "bigint" => PgKind::BigInt,
            "boolean" => PgKind::Bool,
            "timestamp with time zone" => PgKind::Time,
            "bytea" => PgKind::Bytes,
            _ => return None,
        })
    }

    /// The array type `unnest` takes a batch of this column as.
    pub(crate) fn array(self) -> &'static str {
        match self {
            PgKind::Uuid => "uuid[]",
            PgKind::Text => "text[]",
            PgKind::BigInt => "int8[]",
            PgKind::Bool => "bool[]",
            PgKind::Time => "timestamptz[]",
            PgKind::Bytes => "bytea[]",
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct PgColumn {
    pub name: String,
    pub kind: PgKind,
    pub identity: bool,
}

/// One table's columns, matched up between the two schemas.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub table: Table,
    /// The SQLite columns, in their order; PostgreSQL has each of them.
    pub columns: Vec<PgColumn>,
    /// The PostgreSQL column filled from the SQLite rowid.
    pub rowid_column: Option<PgColumn>,
    /// Whether an identity column is written (`overriding system value`).
    pub identity: bool,
}

impl Layout {
    /// The column list the source is read with, after the rowid: the
    /// SQLite names.
    pub(crate) fn source_columns(&self) -> String {
        names(&self.columns)
    }

    /// The columns to insert into, in the order a batch is bound.
    pub(crate) fn target_columns(&self) -> Vec<&PgColumn> {
        self.rowid_column.iter().chain(&self.columns).collect()
    }

    /// The identity columns whose sequences must move past the copied ids.
    pub(crate) fn identity_columns(&self) -> impl Iterator<Item = &PgColumn> {
        self.target_columns().into_iter().filter(|c| c.identity)
    }

    /// The same rows on both sides, in a form comparable value by value:
    /// `(source query, target query)`.
    pub(crate) fn content_queries(&self, cutoff_ms: i64) -> (String, String) {
        let table = self.table.name;
        let columns = self.source_columns();
        let condition = self
            .table
            .source_condition(cutoff_ms)
            .map(|c| format!(" where {c}"))
            .unwrap_or_default();
        match &self.rowid_column {
            Some(rowid) => (
                format!("select rowid, {columns} from {table}{condition}"),
                format!("select {}, {columns} from {table}", rowid.name),
            ),
            None => (
                format!("select {columns} from {table}{condition}"),
                format!("select {columns} from {table}"),
            ),
        }
    }
}

fn names(columns: &[PgColumn]) -> String {
    columns
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn sqlite_columns(conn: &Connection, table: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!("select name from pragma_table_info('{table}')"))?;
    let names = stmt
        .query_map([], |row| row.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(names)
}

async fn pg_columns(conn: &mut PgConnection, table: &str) -> Result<Vec<PgColumn>> {
    let rows: Vec<(String, String, String)> = sqlx::query_as(
        "select column_name::text, data_type::text, is_identity::text
         from information_schema.columns
         where table_schema = current_schema() and table_name = $1
         order by ordinal_position",
    )
    .bind(table)
    .fetch_all(conn)
    .await?;
    rows.into_iter()
        .map(|(name, data_type, identity)| {
            let Some(kind) = PgKind::parse(&data_type) else {
                bail!("PostgreSQL column {table}.{name} has type {data_type}, which migrate cannot fill");
            };
            Ok(PgColumn {
                name,
                kind,
                identity: identity == "YES",
            })
        })
        .collect()
}

/// Matches every table's columns up between the two schemas; a table or
/// column one side has and the other lacks is an error (the backends
/// disagree, or a table was added that migrate does not know yet: it must
/// not be left behind silently).
pub(crate) async fn layouts(source: &Connection, target: &mut PgConnection) -> Result<Vec<Layout>> {
    let mut stmt = source.prepare(
        "select name from sqlite_master where type = 'table' and name not like 'sqlite_%'",
    )?;
    let sqlite_tables = stmt
        .query_map([], |row| row.get::<_, String>(0))?
        .collect::<rusqlite::Result<BTreeSet<_>>>()?;
    let pg_tables: BTreeSet<String> = sqlx::query_scalar(
        "select table_name::text from information_schema.tables
         where table_schema = current_schema() and table_type = 'BASE TABLE'
           and table_name not in ('_sqlx_migrations', 'ordergate_migration',
                                  'ordergate_migration_run')",
    )
    .fetch_all(&mut *target)
    .await?
    .into_iter()
    .collect();
    let known: BTreeSet<String> = TABLES.iter().map(|t| t.name.to_owned()).collect();
    let pg_known: BTreeSet<String> = PG_TABLES.iter().map(|t| (*t).to_owned()).collect();
    if sqlite_tables != known || pg_tables != pg_known {
        bail!(
            "migrate does not know these tables' schema: SQLite has {:?}, PostgreSQL has {:?}",
            sqlite_tables
                .symmetric_difference(&known)
                .collect::<Vec<_>>(),
            pg_tables
                .symmetric_difference(&pg_known)
                .collect::<Vec<_>>()
        );
    }
    let mut layouts = Vec::new();
    for table in TABLES {
        let sqlite = sqlite_columns(source, table.name)?;
        let pg = pg_columns(target, table.name).await?;
        if sqlite.is_empty() {
            bail!("the SQLite database has no table {}", table.name);
        }
        if pg.is_empty() {
            bail!("the PostgreSQL database has no table {}", table.name);
        }
        let expected: BTreeSet<&str> = sqlite
            .iter()
            .map(String::as_str)
            .chain(table.rowid_as)
            .collect();
        let found: BTreeSet<&str> = pg.iter().map(|c| c.name.as_str()).collect();
        if expected != found {
            bail!(
                "table {}: the schemas differ (only in SQLite: {:?}; only in PostgreSQL: {:?})",
                table.name,
                expected.difference(&found).collect::<Vec<_>>(),
                found.difference(&expected).collect::<Vec<_>>()
            );
        }
        let find = |name: &str| pg.iter().find(|c| c.name == name).cloned();
        let columns: Vec<PgColumn> = sqlite.iter().filter_map(|name| find(name)).collect();
        let rowid_column = table.rowid_as.and_then(find);
        let identity = columns.iter().chain(&rowid_column).any(|c| c.identity);
        layouts.push(Layout {
            table,
            columns,
            rowid_column,
            identity,
        });
    }
    Ok(layouts)
}
