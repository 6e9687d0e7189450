//! `ordergate verify` on a running database, then on one corrupted behind
//! the server's back: each problem named with its shop, item or order, and
//! what was expected against what is there.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::lunch::lunch;
use crate::support::{
    Http, PgSchema, Request, Server, Shop, SqliteFile, failed, ordergate, postgres_url, succeeded,
    wait_released,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_names_what_is_wrong_with_a_corrupted_database() {
    let file = SqliteFile::new();
    let server = Server::start(&file.url()).await;
    let http = server.http();
    let create = Request::staff(Method::POST, "/api/v1/shops");
    let (shop, _, _) = Shop::create(&http, "Corner Diner", create).await;
    let (session, pin, _, _) = shop.open(&http, "T1", false).await;
    let mut orders = Vec::new();
    for n in 0..3 {
        let reply = http
            .send(&shop.guest_order(&session, &pin, "phone", n))
            .await;
        orders.push(reply.ok(201));
    }
    // A health check runs beside the server.
    let clean = succeeded(&ordergate(&["verify", "--database", &file.url()]).await);
    assert!(clean.contains("verify: every invariant holds"), "{clean}");
    server.stop().await;
    wait_released(&file.path).await;

    let db = rusqlite::Connection::open(&file.path).unwrap();
    let stock: i64 = db
        .query_row(
            "select stock from inventory where item_id = ?1",
            [&shop.curry],
            |row| row.get(0),
        )
        .unwrap();
    // Stock changed behind its op log.
    db.execute(
        "update inventory set stock = stock + 3 where item_id = ?1",
        [&shop.curry],
    )
    .unwrap();
    // An order whose kitchen event is gone.
    let victim = orders[1]["orderId"].as_str().unwrap();
    let ticket = &orders[1]["ticketNumber"];
    let deleted = db
        .execute(
            "delete from events
             where event_type = 'order.placed' and json_extract(data, '$.orderId') = ?1",
            [victim],
        )
        .unwrap();
    assert_eq!(deleted, 1);
    // A ticket counter behind the tickets it handed out.
    db.execute("update ticket_counters set last_number = 1", [])
        .unwrap();
    drop(db);

    let report = failed(&ordergate(&["verify", "--database", &file.url()]).await);
    let shop_id = &shop.id;
    for expected in [
        format!(
            "shop {shop_id}: menuItem {} (Curry): stock is {}, but its op log (",
            shop.curry,
            stock + 3
        ),
        format!("entries) sums to {stock}"),
        format!("shop {shop_id}: order {victim} (ticket #{ticket} of "),
        "has no order.placed event (expected 1, found 0)".to_owned(),
        format!("shop {shop_id}: event ids jump from "),
        format!("shop {shop_id}, day "),
        "the ticket counter stands at 1 but ticket #3 exists (expected at least 3)".to_owned(),
        "verify found 4 problem(s)".to_owned(),
    ] {
        assert!(
            report.contains(&expected),
            "{expected:?} missing from:\n{report}"
        );
    }
    let table_line = |check: &str| table_line(&report, check);
    assert!(
        table_line("stock = op-log sum").ends_with("1 PROBLEM"),
        "{report}"
    );
    assert!(
        table_line("one order.placed per order").ends_with("1 PROBLEM"),
        "{report}"
    );
}

/// A database of either backend that a test changes behind the server's back.
enum Database {
    Sqlite(SqliteFile),
    Postgres(PgSchema),
}

impl Database {
    fn url(&self) -> String {
        match self {
            Database::Sqlite(file) => file.url(),
            Database::Postgres(schema) => schema.url.clone(),
        }
    }

    /// Runs each statement (SQL both backends read alike), checking how
    /// many rows it changed.
    async fn tamper(&self, statements: &[(String, u64)]) {
        match self {
            Database::Sqlite(file) => {
                wait_released(&file.path).await;
                let db = rusqlite::Connection::open(&file.path).unwrap();
                for (sql, rows) in statements {
                    assert_eq!(db.execute(sql, []).unwrap() as u64, *rows, "{sql}");
                }
            }
            Database::Postgres(schema) => {
                let mut db = schema.connect().await;
                for (sql, rows) in statements {
                    let done = sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                        .execute(&mut db)
                        .await
                        .unwrap();
                    assert_eq!(done.rows_affected(), *rows, "{sql}");
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_names_stock_deltas_that_do_not_match_their_orders_on_sqlite() {
    stock_deltas_that_do_not_match_their_orders(Database::Sqlite(SqliteFile::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_names_stock_deltas_that_do_not_match_their_orders_on_postgres() {
    let Some(admin_url) = postgres_url() else {
        return;
    };
    let schema = PgSchema::create(&admin_url).await;
    stock_deltas_that_do_not_match_their_orders(Database::Postgres(schema)).await;
}

async fn set_status(http: &Http, order: &Value, status: &str) {
    let path = format!(
        "/api/v1/orders/{}/status",
        order["orderId"].as_str().unwrap()
    );
    http.send(&Request::staff(Method::POST, path).json(json!({"status": status})))
        .await
        .ok(200);
}

/// Each change is one a faulty writer could make with the stock kept equal
/// to its op log (the stock is moved along), so only this check sees it.
async fn stock_deltas_that_do_not_match_their_orders(database: Database) {
    let server = Server::start(&database.url()).await;
    let http = server.http();
    lunch(&http).await;
    let create = Request::staff(Method::POST, "/api/v1/shops");
    let (shop, _, _) = Shop::create(&http, "Corner Diner", create).await;
    let (session, pin, _, _) = shop.open(&http, "T1", false).await;
    // Carts by n % 4: curry with cheese; two beers and a regular soup
    // (untracked); two curries with egg and cheese; three large soups (a
    // tracked option of an untracked item).
    let mut orders = Vec::new();
    for n in 0..9 {
        let reply = http
            .send(&shop.guest_order(&session, &pin, "phone", n))
            .await;
        orders.push(reply.ok(201));
    }
    for n in [2, 4, 5, 6] {
        set_status(&http, &orders[n], "cancelled").await;
    }
    // Egg goes untracked between an order and its cancellation: nothing
    // goes back to it. An order placed meanwhile takes no egg, and its
    // cancellation (egg tracked again) gives none back.
    let took_egg = http
        .send(&shop.guest_order(&session, &pin, "phone", 2))
        .await
        .ok(201);
    shop.set(&http, &shop.egg, json!({"stock": null})).await;
    set_status(&http, &took_egg, "cancelled").await;
    let no_egg = http
        .send(&shop.guest_order(&session, &pin, "phone", 2))
        .await
        .ok(201);
    shop.set(&http, &shop.egg, json!({"stock": 40})).await;
    set_status(&http, &no_egg, "cancelled").await;
    // Egg stays tracked from here: an order that takes it must give it back.
    let reply = http
        .send(&shop.guest_order(&session, &pin, "phone", 2))
        .await;
    orders.push(reply.ok(201));
    set_status(&http, &orders[9], "cancelled").await;
    let clean = succeeded(&ordergate(&["verify", "--database", &database.url()]).await);
    assert!(clean.contains("verify: every invariant holds"), "{clean}");
    server.stop().await;

    let id = |n: usize| orders[n]["orderId"].as_str().unwrap().to_owned();
    let stray = Uuid::new_v4();
    let (curry, egg, cheese, beer) = (&shop.curry, &shop.egg, &shop.cheese, &shop.beer);
    let large = &shop.large;
    let row = |order: usize, item: &str, operation: &str| {
        format!(
            "order_id = '{}' and item_id = '{item}' and operation = '{operation}'",
            id(order)
        )
    };
    let stock = |item: &str, by: i64| {
        (
            format!("update inventory set stock = stock + ({by}) where item_id = '{item}'"),
            1,
        )
    };
    database
        .tamper(&[
            // Order 0 took two curries for its one.
            (
                format!(
                    "update inventory_log set delta = -2 where {}",
                    row(0, curry, "order")
                ),
                1,
            ),
            stock(curry, -1),
            // Order 3 took two large soups for its three.
            (
                format!(
                    "update inventory_log set delta = -2 where {}",
                    row(3, large, "order")
                ),
                1,
            ),
            stock(large, 1),
            // Order 1 took an egg its lines do not name.
            (
                format!(
                    "insert into inventory_log (shop_id, item_id, operation, delta, stock_before,
                                                stock_after, order_id, actor, created_at)
                     select b.shop_id, e.item_id, 'order', -1, e.stock_before, e.stock_after,
                            b.order_id, b.actor, b.created_at
                     from inventory_log b, inventory_log e
                     where b.order_id = '{}' and b.item_id = '{beer}'
                       and e.order_id = '{}' and e.item_id = '{egg}'
                       and e.operation = 'order'",
                    id(1),
                    id(2)
                ),
                1,
            ),
            stock(egg, -1),
            // Cancelled order 2 gave back one curry of its two.
            (
                format!(
                    "update inventory_log set delta = 1 where {}",
                    row(2, curry, "cancel")
                ),
                1,
            ),
            stock(curry, -1),
            // Cancelled order 9 gave its eggs back to nobody (egg was untracked
            // only before the order took it).
            (
                format!("delete from inventory_log where {}", row(9, egg, "cancel")),
                1,
            ),
            stock(egg, -2),
            // Order 5's cancellation stands, but the order is no longer cancelled.
            (
                format!(
                    "update orders set status = 'ready' where order_id = '{}'",
                    id(5)
                ),
                1,
            ),
            // Cancelled order 6 gave back eggs it never took.
            (
                format!("delete from inventory_log where {}", row(6, egg, "order")),
                1,
            ),
            stock(egg, 2),
            // The curry shows a photo that is gone.
            (
                format!("delete from images where image_id = '{}'", shop.photo),
                1,
            ),
            // Order 8's rows name an order that is not there.
            (
                format!(
                    "update inventory_log set order_id = '{stray}' where order_id = '{}'",
                    id(8)
                ),
                2,
            ),
        ])
        .await;

    let report = failed(&ordergate(&["verify", "--database", &database.url()]).await);
    let order = |n: usize| {
        format!(
            "shop {}: order {} (ticket #{} of ",
            shop.id,
            id(n),
            orders[n]["ticketNumber"]
        )
    };
    for (n, expected) in [
        (
            0,
            format!(
                "menuItem {curry} (Curry): its `order` rows sum to -2 (expected -1: its lines name 1)"
            ),
        ),
        (
            1,
            format!(
                "topping {egg} (Egg): its `order` rows sum to -1, but its lines do not name it (expected no row)"
            ),
        ),
        (
            3,
            format!(
                "option {large} (Large): its `order` rows sum to -2 (expected -3: its lines name 3)"
            ),
        ),
        (
            2,
            format!(
                "menuItem {curry} (Curry): its `cancel` rows sum to 1 (expected 2: what its `order` rows took)"
            ),
        ),
        (
            9,
            format!(
                "topping {egg} (Egg): the order is cancelled but has no `cancel` row (expected 2: what its `order` rows took; the item has stayed tracked since)"
            ),
        ),
        (
            5,
            format!(
                "menuItem {beer} (Beer): its `cancel` rows sum to 2, but the order is ready, not cancelled (expected no row)"
            ),
        ),
        (
            6,
            format!(
                "topping {egg} (Egg): its `cancel` rows sum to 2, but it has no `order` row for it (expected no row)"
            ),
        ),
    ] {
        let line = report
            .lines()
            .find(|l| l.contains(&order(n)))
            .unwrap_or_else(|| panic!("order {n} missing from:\n{report}"));
        assert!(
            line.ends_with(&expected),
            "{expected:?} missing from:\n{report}"
        );
    }
    for expected in [
        format!(
            "shop {}: order {stray}, which the shop does not have: menuItem {curry} (Curry): its \
             `order` rows sum to -1 and its `cancel` rows to 0 (expected no row)",
            shop.id
        ),
        format!(
            "shop {}: order {stray}, which the shop does not have: topping {cheese} (Cheese): \
             its `order` rows sum to -1 and its `cancel` rows to 0 (expected no row)",
            shop.id
        ),
        format!(
            "shop {}: menu item {curry} shows photo {}, which the shop does not have",
            shop.id, shop.photo
        ),
        "verify found 10 problem(s)".to_owned(),
    ] {
        assert!(
            report.contains(&expected),
            "{expected:?} missing from:\n{report}"
        );
    }
    let table_line = |check: &str| table_line(&report, check);
    assert!(
        table_line("order/cancel rows = lines").ends_with("9 PROBLEMS"),
        "{report}"
    );
    assert!(table_line("stock = op-log sum").ends_with("ok"), "{report}");
    assert!(table_line("photos").ends_with("1 PROBLEM"), "{report}");
}

/// The row of `check` in the table a verify report opens with.
fn table_line(report: &str, check: &str) -> String {
    report
        .lines()
        .find(|l| l.starts_with(check))
        .unwrap_or_default()
        .to_owned()
}
