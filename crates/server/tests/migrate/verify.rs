//! `ordergate verify` on a running database, then on one corrupted behind
//! the server's back: each problem named with its shop, item or order, and
//! what was expected against what is there.

use reqwest::Method;

use crate::support::{
    Request, Server, Shop, SqliteFile, failed, ordergate, succeeded, wait_released,
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
    let table_line = |check: &str| {
        report
            .lines()
            .find(|l| l.starts_with(check))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        table_line("stock = op-log sum").ends_with("1 PROBLEM"),
        "{report}"
    );
    assert!(
        table_line("one order.placed per order").ends_with("1 PROBLEM"),
        "{report}"
    );
}
