//! The PostgreSQL figures (`--only postgres`, on the server `--postgres`
//! names): ordergate on a fresh database of that server, against raw
//! single-row insert transactions on the same server at the same client
//! concurrency, measured in the same run.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use serde_json::json;
use sqlx::Connection;
use sqlx::postgres::PgConnection;
use uuid::Uuid;

use crate::Args;
use crate::load::{Figure, histogram, micros};
use crate::orders;
use crate::references;
use crate::report::{Report, Row};
use crate::server::{self, BenchServer, Shop, ShopSpec};

/// Issue 20: orders spread over many shops reach half the raw transactions.
const SPREAD_TARGET: f64 = 0.5;
/// Issue 20: one shop takes at least this many orders a second.
const ONE_SHOP_TARGET: f64 = 1000.0;
/// Issue 20: p99 of one shop's orders at half its peak.
const LATENCY_TARGET_MS: f64 = 20.0;
/// Issue 20: replays reach half the bare endpoint.
const REPLAY_TARGET: f64 = 0.5;

/// A database of its own on the server, dropped at the end.
struct BenchDatabase {
    admin_url: String,
    name: String,
    url: String,
}

impl BenchDatabase {
    async fn create(admin_url: &str) -> anyhow::Result<BenchDatabase> {
        let name = format!("ordergate_bench_{}", Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(admin_url)
            .await
            .with_context(|| format!("connecting to {admin_url}"))?;
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("create database {name}")))
            .execute(&mut admin)
            .await?;
        let mut url = reqwest::Url::parse(admin_url).context("--postgres is not a URL")?;
        url.set_path(&name);
        Ok(BenchDatabase {
            admin_url: admin_url.to_owned(),
            name,
            url: url.to_string(),
        })
    }

    async fn drop(self) -> anyhow::Result<()> {
        let mut admin = PgConnection::connect(&self.admin_url).await?;
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "drop database {} with (force)",
            self.name
        )))
        .execute(&mut admin)
        .await?;
        Ok(())
    }
}

pub async fn run(args: &Args, report: &mut Report) -> anyhow::Result<()> {
    let admin_url = args
        .postgres
        .as_deref()
        .context("the postgres part needs --postgres URL (or ORDERGATE_BENCH_POSTGRES)")?;
    let database = BenchDatabase::create(admin_url).await?;
    let measured = measure(args, &database, report).await;
    database.drop().await?;
    measured
}

async fn measure(args: &Args, database: &BenchDatabase, report: &mut Report) -> anyhow::Result<()> {
    eprintln!(
        "[postgres] raw single-row insert transactions, {} connections …",
        args.clients
    );
    let raw = raw_inserts(&database.url, args, false).await?;
    report.push(Row::reference(
        &format!("raw PostgreSQL 1-row insert tx x {}", args.clients),
        &raw,
    ));

    let server = BenchServer::start_url(database.url.clone()).await?;
    let base = server.base.clone();

    let mut spread_shops = Vec::new();
    for _ in 0..args.clients {
        spread_shops.push(server::seed(&base, &ShopSpec::small()).await?);
    }
    eprintln!(
        "[postgres] new orders over {} shops of one table …",
        spread_shops.len()
    );
    let bases = [base.clone()];
    let spread_shops = Arc::new(spread_shops);
    let spread = one_line_orders(args, &bases, Arc::clone(&spread_shops), Item::Untracked).await?;
    eprintln!("[postgres] raw order transactions over the same shops …");
    let raw_orders = raw_order_transactions(&database.url, args, &spread_shops, false).await?;
    report.push(
        Row::ratio(
            &format!("PG orders, {} shops x 1 table", args.clients),
            &spread,
            ("raw PG", &raw),
            SPREAD_TARGET,
        )
        .note(format!(
            "{:.2}x the raw order transactions below: what the database alone allows \
             one order a transaction",
            spread.rate / raw_orders.rate
        )),
    );
    report.push(Row::reference(
        &format!("raw PG order tx (an order's rows) x {}", args.clients),
        &raw_orders,
    ));

    let one_shop = Arc::new(server::seed(&base, &ShopSpec::one_shop(args)).await?);
    let only_it = Arc::new(vec![(*one_shop).clone()]);
    for item in [Item::Untracked, Item::Tracked] {
        eprintln!(
            "[postgres] new orders at one shop of {} tables, {} …",
            args.clients,
            item.name()
        );
        let figure = one_line_orders(args, &bases, Arc::clone(&only_it), item).await?;
        report.push(
            Row::info(
                &format!(
                    "PG orders, 1 shop x {} tables, {}",
                    args.clients,
                    item.name()
                ),
                format!("{:.0}/s", figure.rate),
            )
            .latency(figure.ms(0.5), figure.ms(0.99))
            .errors(figure.errors)
            .target(
                &format!(">= {ONE_SHOP_TARGET:.0}/s"),
                figure.errors == 0 && figure.rate >= ONE_SHOP_TARGET,
            ),
        );
        if item == Item::Untracked {
            let rate = figure.rate / 2.0;
            eprintln!("[postgres] one shop's orders open-loop at {rate:.0}/s …");
            orders::latency_at_rate(
                args,
                &base,
                &one_shop,
                rate,
                (LATENCY_TARGET_MS, "PG orders, 1 shop"),
                report,
            )
            .await?;
        }
    }
    eprintln!(
        "[postgres] bare axum JSON endpoint, {} clients …",
        args.clients
    );
    let bare = references::bare_endpoint(args, args.warmup(), args.duration()).await?;
    report.push(Row::reference("bare axum JSON endpoint (PG part)", &bare));
    eprintln!("[postgres] replayed orders …");
    let replays = orders::replays(args, &base, &one_shop).await?;
    report.push(Row::ratio(
        "PG replayed orders (same key)",
        &replays,
        ("bare axum", &bare),
        REPLAY_TARGET,
    ));
    server.stop().await
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Item {
    Untracked,
    Tracked,
}

impl Item {
    fn name(self) -> &'static str {
        match self {
            Item::Untracked => "untracked item",
            Item::Tracked => "one tracked item",
        }
    }
}

/// One-line orders, closed loop: worker `w` orders at table `w` of shop
/// `w` (both modulo their counts), the shop's first item (untracked) or
/// second (stock-tracked).
pub async fn one_line_orders(
    args: &Args,
    bases: &[String],
    shops: Arc<Vec<Shop>>,
    item: Item,
) -> anyhow::Result<Figure> {
    let count = shops.len();
    let index = match item {
        Item::Untracked => 0,
        Item::Tracked => 1,
    };
    orders::one_line_orders(args, bases, shops, Box::new(move |w| (w % count, index))).await
}

/// `--clients` connections, each committing one single-row insert
/// transaction after another (`BEGIN; INSERT; COMMIT`, as pgbench's
/// simple protocol does): a key like an idempotency key (unique) and an
/// order-sized JSON body, at the server's default durability. On Citus
/// (`distributed`) the table is hashed by that key over the workers, and
/// has no identity column (Citus keys include the distribution column).
pub async fn raw_inserts(url: &str, args: &Args, distributed: bool) -> anyhow::Result<Figure> {
    let mut setup = PgConnection::connect(url).await?;
    if distributed {
        sqlx::raw_sql(
            "create table raw_orders (idempotency_key uuid primary key, body jsonb not null);
             select create_distributed_table('raw_orders', 'idempotency_key')",
        )
        .execute(&mut setup)
        .await?;
    } else {
        sqlx::raw_sql(
            "create table raw_orders (
                 id bigint generated always as identity primary key,
                 idempotency_key uuid not null unique,
                 body jsonb not null
             )",
        )
        .execute(&mut setup)
        .await?;
    }
    let body = json!({"items": [{"menuItemId": Uuid::new_v4(), "quantity": 1, "toppingIds": []}],
                      "note": "bench"});
    closed_loop_transactions(url, args, |_| RawTransaction::Insert(body.clone())).await
}

/// The rows an accepted order writes, by a client of the database with
/// nothing else to do: one transaction per order that locks its table
/// (with its shop) and writes the order, its ticket, audit row, event and
/// key record, at the tables of `shops` (worker `w` at shop `w`). What one
/// order a transaction costs the database alone: the most any server
/// placing orders one at a time could reach. The writes are one statement,
/// or on Citus (`distributed`) one statement each, as ordergate's are
/// there: Citus plans each data-modifying part of a statement on its own,
/// passing results between nodes.
pub async fn raw_order_transactions(
    url: &str,
    args: &Args,
    shops: &[Shop],
    distributed: bool,
) -> anyhow::Result<Figure> {
    let tables = shops
        .iter()
        .map(|shop| {
            let session = &shop.sessions.first().context("a table")?.0;
            Ok((shop.shop_id.parse()?, session.parse()?))
        })
        .collect::<anyhow::Result<Vec<(Uuid, Uuid)>>>()?;
    closed_loop_transactions(url, args, |w| {
        let (shop_id, session_id) = tables[w % tables.len()];
        RawTransaction::Order {
            shop_id,
            session_id,
            distributed,
        }
    })
    .await
}

/// What a raw client commits, again and again.
enum RawTransaction {
    /// One row of an order-sized JSON body under a fresh key.
    Insert(serde_json::Value),
    /// An order's rows at this table (see [`raw_order_transactions`]).
    Order {
        shop_id: Uuid,
        session_id: Uuid,
        distributed: bool,
    },
}

impl RawTransaction {
    async fn commit_one(&self, conn: &mut PgConnection) -> anyhow::Result<()> {
        let mut tx = conn.begin().await?;
        match self {
            RawTransaction::Insert(body) => {
                sqlx::query("insert into raw_orders (idempotency_key, body) values ($1, $2)")
                    .bind(Uuid::new_v4())
                    .bind(body)
                    .execute(&mut *tx)
                    .await?;
            }
            RawTransaction::Order {
                shop_id,
                session_id,
                distributed: true,
            } => order_rows_statement_by_statement(&mut tx, *shop_id, *session_id).await?,
            RawTransaction::Order {
                shop_id,
                session_id,
                distributed: false,
            } => {
                sqlx::query(
                    "select s.status, shop.timezone from table_sessions s
                     join shops shop on shop.shop_id = s.shop_id
                     where s.shop_id = $1 and s.session_id = $2 for update of s",
                )
                .bind(shop_id)
                .bind(session_id)
                .fetch_one(&mut *tx)
                .await?;
                let order_id = Uuid::now_v7();
                let lines = json!([{"menuItemId": Uuid::new_v4(), "name": "Item 0",
                                    "unitPrice": 500, "quantity": 1, "toppings": [],
                                    "options": [], "lineTotal": 500}])
                .to_string();
                let placed = json!({"orderId": order_id, "shopId": shop_id,
                                    "sessionId": session_id, "tableLabel": "B0",
                                    "status": "placed", "source": "guest",
                                    "clientId": "bench-raw", "items": lines, "note": "",
                                    "total": 500, "version": 1})
                .to_string();
                sqlx::query(
                    "with ticket as (
                         insert into ticket_counters (shop_id, ticket_day, last_number)
                         values ($1, 'raw', 1)
                         on conflict (shop_id, ticket_day)
                             do update set last_number = ticket_counters.last_number + 1
                         returning last_number
                     ),
                     placed as (
                         insert into orders (order_id, shop_id, session_id, ticket_day,
                                             ticket_number, status, source, client_id,
                                             payload_hash, lines, note, total, version,
                                             created_at, updated_at)
                         select $3, $1, $2, 'raw', last_number, 'placed', 'guest', 'bench-raw',
                                md5($3::text), $4, '', 500, 1, now(), now()
                         from ticket
                         returning ticket_number
                     ),
                     audited as (
                         insert into audit_log (shop_id, session_id, request_id, client_id,
                                                status, code, idempotent_replay, order_id,
                                                created_at, actor)
                         values ($1, $2, $3::text, 'bench-raw', 201, 'ACCEPTED', false, $3,
                                 now(), null)
                     ),
                     counter as (
                         insert into event_counters (shop_id, last_event_id)
                         select $1, 1 from placed
                         on conflict (shop_id)
                             do update set last_event_id = event_counters.last_event_id + 1
                         returning last_event_id
                     ),
                     appended as (
                         insert into events (shop_id, event_id, event_type, session_id, data,
                                             created_at)
                         select $1, last_event_id, 'order.placed', $2, $5, now() from counter
                     ),
                     keyed as (
                         insert into idempotency_keys (scope, idempotency_key, shop_id,
                                                       fingerprint, status, body, location,
                                                       created_at, expires_at)
                         select 'session:' || $2, $6, $1, md5($6), 201, $5, null, now(),
                                now() + interval '1 day'
                         from placed
                     )
                     select ticket_number from placed",
                )
                .bind(shop_id)
                .bind(session_id)
                .bind(order_id)
                .bind(&lines)
                .bind(&placed)
                .bind(Uuid::new_v4().to_string())
                .fetch_one(&mut *tx)
                .await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }
}

/// The rows of [`RawTransaction::Order`], a statement each, every one of
/// which Citus routes to the shop's worker.
async fn order_rows_statement_by_statement(
    conn: &mut PgConnection,
    shop_id: Uuid,
    session_id: Uuid,
) -> anyhow::Result<()> {
    sqlx::query(
        "select status from table_sessions where shop_id = $1 and session_id = $2 for update",
    )
    .bind(shop_id)
    .bind(session_id)
    .fetch_one(&mut *conn)
    .await?;
    let ticket: i64 = sqlx::query_scalar(
        "insert into ticket_counters (shop_id, ticket_day, last_number) values ($1, 'raw', 1)
         on conflict (shop_id, ticket_day)
             do update set last_number = ticket_counters.last_number + 1
         returning last_number",
    )
    .bind(shop_id)
    .fetch_one(&mut *conn)
    .await?;
    let order_id = Uuid::now_v7();
    let lines = json!([{"menuItemId": Uuid::new_v4(), "name": "Item 0", "unitPrice": 500,
                        "quantity": 1, "toppings": [], "options": [], "lineTotal": 500}])
    .to_string();
    let placed = json!({"orderId": order_id, "shopId": shop_id, "sessionId": session_id,
                        "tableLabel": "B0", "status": "placed", "source": "guest",
                        "clientId": "bench-raw", "items": lines, "note": "", "total": 500,
                        "version": 1})
    .to_string();
    sqlx::query(
        "insert into orders (order_id, shop_id, session_id, ticket_day, ticket_number, status,
                             source, client_id, payload_hash, lines, note, total, version,
                             created_at, updated_at)
         values ($3, $1, $2, 'raw', $4, 'placed', 'guest', 'bench-raw', md5($3::text), $5, '',
                 500, 1, now(), now())",
    )
    .bind(shop_id)
    .bind(session_id)
    .bind(order_id)
    .bind(ticket)
    .bind(&lines)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "insert into audit_log (shop_id, session_id, request_id, client_id, status, code,
                                idempotent_replay, order_id, created_at, actor)
         values ($1, $2, $3::text, 'bench-raw', 201, 'ACCEPTED', false, $3, now(), null)",
    )
    .bind(shop_id)
    .bind(session_id)
    .bind(order_id)
    .execute(&mut *conn)
    .await?;
    let event_id: i64 = sqlx::query_scalar(
        "insert into event_counters (shop_id, last_event_id) values ($1, 1)
         on conflict (shop_id)
             do update set last_event_id = event_counters.last_event_id + 1
         returning last_event_id",
    )
    .bind(shop_id)
    .fetch_one(&mut *conn)
    .await?;
    sqlx::query(
        "insert into events (shop_id, event_id, event_type, session_id, data, created_at)
         values ($1, $2, 'order.placed', $3, $4, now())",
    )
    .bind(shop_id)
    .bind(event_id)
    .bind(session_id)
    .bind(&placed)
    .execute(&mut *conn)
    .await?;
    let key = Uuid::new_v4().to_string();
    sqlx::query(
        "insert into idempotency_keys (scope, idempotency_key, shop_id, fingerprint, status,
                                       body, location, created_at, expires_at)
         values ('session:' || $2, $3, $1, md5($3), 201, $4, null, now(),
                 now() + interval '1 day')",
    )
    .bind(shop_id)
    .bind(session_id)
    .bind(&key)
    .bind(&placed)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// `--clients` connections, worker `w` committing `transaction(w)` one
/// after another for the warm-up and the measured window.
async fn closed_loop_transactions(
    url: &str,
    args: &Args,
    transaction: impl Fn(usize) -> RawTransaction,
) -> anyhow::Result<Figure> {
    let measure_from = Instant::now() + args.warmup();
    let until = measure_from + args.duration();
    let mut workers = Vec::new();
    for w in 0..args.clients {
        let mut conn = PgConnection::connect(url).await?;
        let transaction = transaction(w);
        workers.push(tokio::spawn(async move {
            let mut latency = histogram();
            let mut done = 0u64;
            while Instant::now() < until {
                let began = Instant::now();
                transaction.commit_one(&mut conn).await?;
                let ended = Instant::now();
                if began >= measure_from && ended <= until {
                    latency.saturating_record(micros(ended - began));
                    done += 1;
                }
            }
            anyhow::Ok((latency, done))
        }));
    }
    let mut latency = histogram();
    let mut done = 0;
    for worker in workers {
        let (h, d) = worker.await??;
        latency.add(&h)?;
        done += d;
    }
    Ok(Figure {
        rate: done as f64 / args.duration().as_secs_f64(),
        latency,
        errors: 0,
        first_error: None,
    })
}
