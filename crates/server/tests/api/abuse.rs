//! Limits against abuse of a guest-facing server: PIN sweeps over many
//! tables from one address, too many open streams, oversized headers and
//! requests that never finish arriving. Each refusal is problem+json and
//! changes nothing.

use std::time::Duration;

use futures_util::future::join_all;
use reqwest::Method;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, sleep, timeout};

use crate::helpers::{OrderBody, TestApp, key, wrong_pin};
use crate::sse::{SseStream, WAIT};

const ATTACKER: &str = "203.0.113.9";
const NEIGHBOUR: &str = "198.51.100.4";

/// Guesses PINs from `address` (as the proxy names it) at every table given,
/// `per_table` times each, all at once.
async fn sweep(app: &TestApp, tables: &[(String, String)], per_table: usize, address: &str) {
    let guesses = tables.iter().flat_map(|(session, pin)| {
        (0..per_table).map(move |_| {
            let path = format!("/api/v1/sessions/{session}");
            TestApp::send(
                app.guest(Method::GET, &path, wrong_pin(pin))
                    .header("X-Forwarded-For", address),
            )
        })
    });
    for reply in join_all(guesses).await {
        reply.assert_problem(401, "PIN_INVALID");
    }
}

#[tokio::test]
async fn a_pin_sweep_over_many_tables_locks_out_the_address_not_the_tables() {
    let app = TestApp::spawn_with(|s| s.trusted_proxies = vec!["127.0.0.1".parse().unwrap()]).await;
    let (shop, menu) = app.shop_with_menu().await;
    let mut tables = Vec::new();
    for label in ["T1", "T2", "T3", "T4", "T5", "T6"] {
        tables.push(app.table(&shop, label).await);
    }
    // Four wrong guesses at each of five tables: under each table's own
    // lock (five), twenty in all.
    sweep(&app, &tables[..5], 4, ATTACKER).await;

    let (session, pin) = &tables[5];
    let path = format!("/api/v1/sessions/{session}");
    let from = |address: &str| {
        app.guest(Method::GET, &path, pin)
            .header("X-Forwarded-For", address)
    };
    let locked = TestApp::send(from(ATTACKER)).await;
    locked.assert_problem(429, "PIN_LOCKED");
    let retry_after: u64 = locked.header("retry-after").unwrap().parse().unwrap();
    assert!(
        (1..=600).contains(&retry_after),
        "Retry-After {retry_after}"
    );

    let order = OrderBody::new().line(&menu.soup, 1).json();
    let refused = TestApp::send(
        app.order_request(session, Some(pin), Some("attacker-phone"), Some(&key()))
            .header("X-Forwarded-For", ATTACKER)
            .json(&order),
    )
    .await;
    refused.assert_problem(429, "PIN_LOCKED");
    assert!(
        app.orders_of(session).await.is_empty(),
        "nothing was placed"
    );

    // The tables are not locked: the guests at them, elsewhere, carry on.
    TestApp::send(from(NEIGHBOUR)).await.assert_status(200);
    for (session, pin) in &tables[..5] {
        let path = format!("/api/v1/sessions/{session}");
        let guest = app
            .guest(Method::GET, &path, pin)
            .header("X-Forwarded-For", NEIGHBOUR);
        TestApp::send(guest).await.assert_status(200);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn simultaneous_guesses_from_one_address_are_counted_not_raced() {
    let app = TestApp::spawn_with(|s| s.trusted_proxies = vec!["127.0.0.1".parse().unwrap()]).await;
    let (shop, menu) = app.shop_with_menu().await;
    let mut tables = Vec::new();
    for n in 0..100 {
        tables.push(app.table(&shop, &format!("T{n}")).await);
    }
    let order = OrderBody::new().line(&menu.soup, 1).json();
    // Five guesses at each table, reads and orders mixed, all at once.
    let app = &app;
    let guesses = tables.iter().flat_map(|(session, pin)| {
        let order = &order;
        (0..5).map(move |n| {
            let pin = wrong_pin(pin);
            let request = if n % 2 == 0 {
                app.guest(Method::GET, &format!("/api/v1/sessions/{session}"), pin)
            } else {
                app.order_request(session, Some(pin), Some("sweeper"), Some(&key()))
                    .json(order)
            };
            TestApp::send(request.header("X-Forwarded-For", ATTACKER))
        })
    });
    let replies = join_all(guesses).await;
    let judged = replies.iter().filter(|r| r.status == 401).count();
    for reply in &replies {
        if reply.status == 401 {
            reply.assert_problem(401, "PIN_INVALID");
        } else {
            reply.assert_problem(429, "PIN_LOCKED");
        }
    }
    assert_eq!(judged, 20, "wrong PINs judged for one address");
    for (session, _) in &tables {
        assert!(app.orders_of(session).await.is_empty());
    }
}

#[tokio::test]
async fn forged_forwarded_for_does_not_dodge_the_address_lock() {
    // No trusted proxy: X-Forwarded-For is the client's own claim.
    let app = TestApp::spawn().await;
    let (shop, _) = app.shop_with_menu().await;
    let mut tables = Vec::new();
    for label in ["T1", "T2", "T3", "T4", "T5", "T6"] {
        tables.push(app.table(&shop, label).await);
    }
    for (i, table) in tables[..5].iter().enumerate() {
        sweep(
            &app,
            std::slice::from_ref(table),
            4,
            &format!("192.0.2.{i}"),
        )
        .await;
    }
    let (session, pin) = &tables[5];
    let path = format!("/api/v1/sessions/{session}");
    let guest = app
        .guest(Method::GET, &path, pin)
        .header("X-Forwarded-For", "192.0.2.99");
    TestApp::send(guest).await.assert_problem(429, "PIN_LOCKED");
}

/// Opens a guest stream, or hands back the refusal.
async fn guest_stream(
    app: &TestApp,
    table: &(String, String),
) -> Result<SseStream, crate::helpers::Reply> {
    SseStream::try_open(app.session_stream(&table.0, &table.1)).await
}

#[tokio::test]
async fn guest_streams_are_limited_per_table_and_per_address() {
    let app = TestApp::spawn().await;
    let (shop, _) = app.shop_with_menu().await;
    let mut tables = Vec::new();
    for n in 0..9 {
        tables.push(app.table(&shop, &format!("T{n}")).await);
    }
    let first = &tables[0];
    let mut open: Vec<SseStream> = join_all((0..8).map(|_| guest_stream(&app, first)))
        .await
        .into_iter()
        .map(|stream| stream.expect("eight streams per table are allowed"))
        .collect();
    let refused = guest_stream(&app, first)
        .await
        .err()
        .expect("a ninth is refused");
    refused.assert_problem(429, "TOO_MANY_STREAMS");
    assert_eq!(refused.header("retry-after"), Some("5"));
    // Staff streams of the same table are not counted.
    let staff = app.staff(Method::GET, &format!("/api/v1/sessions/{}/events", first.0));
    let _staff = SseStream::open(staff).await;

    // Eight tables of eight streams fill the address's 64.
    for table in &tables[1..8] {
        for stream in join_all((0..8).map(|_| guest_stream(&app, table))).await {
            open.push(stream.expect("under the address's limit"));
        }
    }
    let ninth_table = guest_stream(&app, &tables[8]).await.err().expect("over 64");
    ninth_table.assert_problem(429, "TOO_MANY_STREAMS");

    // A stream that ends frees its place.
    drop(open.pop());
    let deadline = Instant::now() + WAIT;
    loop {
        match guest_stream(&app, &tables[8]).await {
            Ok(_) => break,
            Err(refusal) => {
                refusal.assert_problem(429, "TOO_MANY_STREAMS");
                assert!(
                    Instant::now() < deadline,
                    "the closed stream's place was never freed"
                );
                sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

#[tokio::test]
async fn oversized_headers_are_refused_and_change_nothing() {
    let app = TestApp::spawn().await;
    let create = |padding: usize| {
        app.staff(Method::POST, "/api/v1/shops")
            .header("X-Padding", "x".repeat(padding))
            .json(&json!({"name": "Diner", "currency": "USD"}))
    };
    TestApp::send(create(17 * 1024))
        .await
        .assert_problem(431, "HEADERS_TOO_LARGE");
    let mut many = app
        .staff(Method::POST, "/api/v1/shops")
        .json(&json!({"name": "Diner", "currency": "USD"}));
    for n in 0..100 {
        many = many.header(format!("x-extra-{n}"), "1");
    }
    TestApp::send(many)
        .await
        .assert_problem(431, "HEADERS_TOO_LARGE");
    assert_eq!(app.list_shops().await.body["shops"], json!([]));
    TestApp::send(create(15 * 1024)).await.assert_status(201);
}

/// Sends `head` (and nothing else) on a fresh connection and reads the
/// answer until the server closes it.
async fn raw_answer(app: &TestApp, head: &str) -> String {
    let mut socket = TcpStream::connect(app.base.trim_start_matches("http://"))
        .await
        .unwrap();
    socket.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let read = timeout(WAIT, socket.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "the server kept the connection open");
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn requests_the_http_parser_refuses_are_answered_and_change_nothing() {
    let app = TestApp::spawn().await;
    let body = r#"{"name":"Diner","currency":"USD"}"#;
    let auth = format!("Authorization: Bearer {}\r\n", crate::helpers::STAFF_TOKEN);
    // Framing that two parsers could read two ways: refused outright (the
    // parser answers before the app sees the request; docs/api.md).
    for framing in [
        format!("Content-Length: {}\r\nContent-Length: 5\r\n", body.len()),
        "Transfer-Encoding: gzip, chunked, identity\r\n".to_owned(),
    ] {
        let head = format!(
            "POST /api/v1/shops HTTP/1.1\r\nHost: og\r\n{auth}Content-Type: application/json\r\n\
             {framing}\r\n{body}"
        );
        let answer = raw_answer(&app, &head).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    }
    // Past the parser's own header limit: its 431, not ours.
    let headers: String = (0..300).map(|n| format!("x-{n}: 1\r\n")).collect();
    let answer = raw_answer(
        &app,
        &format!("GET /healthz HTTP/1.1\r\nHost: og\r\n{headers}\r\n"),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    assert_eq!(app.list_shops().await.body["shops"], json!([]));
}

#[tokio::test]
async fn a_request_that_never_finishes_arriving_times_out_but_streams_stay_open() {
    let app = TestApp::spawn_with(|s| s.request_timeout_secs = 1).await;
    let (shop, menu) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let mut kitchen = app.follow_shop(&shop, None).await;

    // An order whose body stops a third of the way in.
    let body = OrderBody::new().line(&menu.soup, 1).json().to_string();
    let third = body.len() / 3;
    let mut socket = app
        .partial_order((&session, &pin), "slow-phone", &body, third)
        .await;
    let mut answer = Vec::new();
    let read = timeout(WAIT, async {
        let mut chunk = [0u8; 4096];
        while !String::from_utf8_lossy(&answer).contains("REQUEST_TIMEOUT") {
            let n = socket.read(&mut chunk).await.unwrap();
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&chunk[..n]);
        }
    })
    .await;
    assert!(read.is_ok(), "no answer to a request that stalled");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("application/problem+json"), "{answer}");
    assert!(app.orders_of(&session).await.is_empty());

    // The kitchen's stream outlived the timeout and still delivers.
    sleep(Duration::from_millis(1500)).await;
    let order = OrderBody::new().line(&menu.soup, 1).json();
    app.place_order(&session, &pin, "phone", &key(), &order)
        .await
        .assert_order(false);
    let placed = loop {
        let event = kitchen.next().await;
        if event.event == "order.placed" {
            break event;
        }
    };
    assert_eq!(placed.data["sessionId"], session.as_str());
}

#[tokio::test]
async fn a_client_that_trickles_its_headers_or_idles_is_disconnected() {
    let app = TestApp::spawn().await;
    let address = app.base.trim_start_matches("http://");
    let mut trickling = TcpStream::connect(address).await.unwrap();
    trickling
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: ordergate\r\n")
        .await
        .unwrap();
    let mut idle = TcpStream::connect(address).await.unwrap();
    let started = Instant::now();
    let limit = ordergate_server::HEADER_READ_TIMEOUT + WAIT;
    for socket in [&mut trickling, &mut idle] {
        let mut rest = Vec::new();
        let closed = timeout(limit, socket.read_to_end(&mut rest)).await;
        assert!(closed.is_ok(), "the connection was held open");
    }
    assert!(
        started.elapsed() >= ordergate_server::HEADER_READ_TIMEOUT - Duration::from_secs(1),
        "closed before the header timeout"
    );
    // Others are served meanwhile and after.
    app.get("/healthz").await.assert_status(200);
}
