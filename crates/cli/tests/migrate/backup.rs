//! `ordergate backup` while guests keep ordering: the snapshot is a whole,
//! consistent database that passes `verify` and serves again.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::Method;
use serde_json::json;

use crate::support::{Request, Server, Shop, SqliteFile, failed, ordergate, sqlite_url, succeeded};

const GUESTS: usize = 6;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_taken_while_orders_are_placed_is_consistent() {
    let file = SqliteFile::new();
    let server = Server::start(&file.url()).await;
    let http = server.http();
    let create = Request::staff(Method::POST, "/api/v1/shops");
    let (shop, _, _) = Shop::create(&http, "Busy Diner", create).await;
    let photo = http.photo(&shop.photo).await;
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicUsize::new(0));
    let mut guests = Vec::new();
    for t in 0..GUESTS {
        let (session, pin, _, _) = shop.open(&http, &format!("T{t}"), false).await;
        let (http, stop, acked) = (http.clone(), Arc::clone(&stop), Arc::clone(&acked));
        let (curry, soup, regular) = (shop.curry.clone(), shop.soup.clone(), shop.regular.clone());
        guests.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                n += 1;
                let order =
                    Request::new(Method::POST, format!("/api/v1/sessions/{session}/orders"))
                        .header("X-Session-PIN", &pin)
                        .header("X-Client-Id", "guest")
                        .keyed()
                        .json(json!({"items": [{"menuItemId": curry, "quantity": 1},
                                           {"menuItemId": soup, "quantity": 1 + n % 2,
                                            "optionIds": [regular]}],
                                 "allowRepeat": true}));
                let reply = http.send(&order).await;
                assert_eq!(reply.status, 201, "{}", reply.text);
                acked.fetch_add(1, Ordering::SeqCst);
            }
        }));
    }
    while acked.load(Ordering::SeqCst) < 20 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let before = acked.load(Ordering::SeqCst);
    let path = file.dir.path().join("snapshot.db");
    let path_arg = path.display().to_string();
    let backup = ordergate(&["backup", "--database", &file.url(), "--to", &path_arg]).await;
    // Orders keep coming after the snapshot too.
    let during = acked.load(Ordering::SeqCst);
    while acked.load(Ordering::SeqCst) < during + 10 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stop.store(true, Ordering::SeqCst);
    for guest in guests {
        guest.await.unwrap();
    }
    let total = acked.load(Ordering::SeqCst);
    let printed = succeeded(&backup);
    assert!(printed.contains("backup written to"), "{printed}");
    assert!(printed.contains("integrity ok"), "{printed}");

    // The snapshot holds every order acknowledged before it began, and
    // passes every invariant check.
    let checked = succeeded(&ordergate(&["verify", "--database", &sqlite_url(&path)]).await);
    assert!(checked.contains("every invariant holds"), "{checked}");
    let orders: usize = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("select count(*) from orders", [], |row| row.get(0))
        .unwrap();
    assert!(
        (before..=total).contains(&orders),
        "{orders} orders in the snapshot; {before} acknowledged before it, {total} in all"
    );

    // A backup never overwrites, and PostgreSQL has its own tools.
    let again = failed(&ordergate(&["backup", "--database", &file.url(), "--to", &path_arg]).await);
    assert!(again.contains("exists already"), "{again}");
    let elsewhere = file.dir.path().join("pg.db").display().to_string();
    let pg = failed(
        &ordergate(&[
            "backup",
            "--database",
            "postgres://localhost/og",
            "--to",
            &elsewhere,
        ])
        .await,
    );
    assert!(pg.contains("pg_dump"), "{pg}");
    server.stop().await;

    // The snapshot serves as a database again.
    let restored = Server::start(&sqlite_url(&path)).await;
    let listed = restored
        .http()
        .staff_get(&format!("/api/v1/shops/{}/orders?limit=500", shop.id))
        .await;
    assert_eq!(listed.ok(200)["orders"].as_array().unwrap().len(), orders);
    assert_eq!(
        restored.http().photo(&shop.photo).await,
        photo,
        "the menu's photo came along"
    );
    restored.stop().await;
    succeeded(&ordergate(&["verify", "--database", &file.url()]).await);
}
