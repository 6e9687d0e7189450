//! Live events over SSE: what each stream carries, resuming with
//! `Last-Event-ID` (also across a restart), a thousand events in order, and
//! a stalled subscriber cut off without holding anyone up.

use std::collections::BTreeSet;
use std::time::Duration;

use chrono::Utc;
use futures_util::future::join_all;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{OrderBody, STAFF_TOKEN, TestApp, key, wrong_pin};
use crate::sse::{SseEvent, SseStream};

/// Asserts the events' ids are `first`, `first + 1`, … with no gap.
#[track_caller]
fn assert_consecutive(events: &[SseEvent], first: i64) {
    let ids: Vec<i64> = events.iter().map(|e| e.id).collect();
    let expected: Vec<i64> = (first..first + events.len() as i64).collect();
    assert_eq!(ids, expected, "ids must be consecutive from {first}");
}

fn types(events: &[SseEvent]) -> Vec<&str> {
    events.iter().map(|e| e.event.as_str()).collect()
}

#[tokio::test]
async fn a_stream_starts_with_retry_and_carries_every_kind_of_event_live() {
    let app = TestApp::spawn_with(|s| s.client_cooldown_ms = 0).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let mut stream = app.follow_shop(&shop, None).await;
    // Nothing from before the stream opened, without Last-Event-ID.
    stream.assert_quiet(Duration::from_millis(300)).await;
    assert!(
        stream
            .parser
            .first_line
            .as_deref()
            .is_some_and(|l| l.starts_with("retry:")),
        "a retry: line starts the stream, got {:?}",
        stream.parser.first_line
    );
    assert!(stream.parser.retry.is_some_and(|ms| ms > 0));

    // Each order reaches the stream before the next is placed.
    let mut seen = Vec::new();
    for i in 0..5 {
        let body = OrderBody::new().line(&ids.beer, i + 1).json();
        let receipt = app
            .place_order(&session, &pin, "phone-1", &key(), &body)
            .await
            .assert_order(false);
        let event = stream.next().await;
        assert_eq!(event.event, "order.placed");
        assert_eq!(event.data, receipt, "the full order");
        seen.push(event);
    }

    let order_id = seen[0].data["orderId"].as_str().unwrap().to_owned();
    let accepted = app.set_status(&order_id, "accepted").await;
    let event = stream.next().await;
    assert_eq!(event.event, "order.updated");
    assert_eq!(&event.data, accepted.assert_status(200));
    seen.push(event);

    app.set_inventory(&shop, &ids.soup, json!({"stock": 7}))
        .await
        .assert_status(200);
    let event = stream.next().await;
    assert_eq!(
        (event.event.as_str(), &event.data),
        (
            "stock.changed",
            &json!({"itemId": ids.soup, "stock": 7, "soldOut": false, "soldOutUntil": null})
        )
    );
    seen.push(event);

    let until = Utc::now() + chrono::Duration::minutes(30);
    let marked = app
        .set_inventory(
            &shop,
            &ids.cheese,
            json!({"soldOut": true, "soldOutUntil": until}),
        )
        .await;
    let event = stream.next().await;
    assert_eq!(event.event, "stock.changed");
    assert_eq!(
        event.data,
        json!({"itemId": ids.cheese, "stock": null, "soldOut": true,
               "soldOutUntil": marked.assert_status(200)["soldOutUntil"]})
    );
    seen.push(event);

    let opened = app.open_session(&shop, "T2").await;
    let opened = opened.assert_status(201).clone();
    let event = stream.next().await;
    assert_eq!(event.event, "session.opened");
    assert_eq!(
        event.data,
        json!({"sessionId": opened["sessionId"], "shopId": shop, "tableLabel": "T2",
               "status": "active", "openedAt": opened["openedAt"], "closedAt": null}),
        "never the PIN"
    );
    seen.push(event);

    let bill = app.checkout(&session).await;
    let event = stream.next().await;
    assert_eq!(event.event, "session.closed");
    assert_eq!(event.data["sessionId"], session);
    assert_eq!(event.data["status"], "closed");
    assert_eq!(event.data["closedAt"], bill.assert_status(200)["closedAt"]);
    assert!(
        event.data.get("pin").is_none(),
        "never the PIN: {}",
        event.data
    );
    seen.push(event);

    assert_consecutive(&seen, seen[0].id);
    stream.assert_quiet(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn a_reconnect_with_last_event_id_gets_exactly_what_it_missed() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, _) = app.table(&shop, "T1").await;
    app.set_inventory(&shop, &ids.soup, json!({"stock": 50}))
        .await
        .assert_status(200);
    let order = |n: i64| OrderBody::new().line(&ids.soup, n).json();

    let mut stream = app.follow_shop(&shop, None).await;
    for n in 1..=2 {
        app.staff_order(&session, None, &order(n))
            .await
            .assert_order(false);
    }
    // Each order is its stock change, then its order.placed.
    let first = stream.take(4).await;
    assert_eq!(
        types(&first),
        [
            "stock.changed",
            "order.placed",
            "stock.changed",
            "order.placed"
        ]
    );
    assert_consecutive(&first, first[0].id);
    let last_seen = first[3].id;
    drop(stream);

    // While away: orders, a restock, a status change, a new table.
    let mut missed_orders = Vec::new();
    for n in 3..=5 {
        let placed = app.staff_order(&session, None, &order(n)).await;
        missed_orders.push(placed.assert_order(false));
    }
    app.restock(&shop, &ids.soup, 10).await.assert_status(200);
    let id = missed_orders[0]["orderId"].as_str().unwrap();
    app.set_status(id, "accepted").await.assert_status(200);
    app.table(&shop, "T2").await;

    // The whole log, read from the start: the reference.
    let mut everything = app.follow_shop(&shop, Some(0)).await;
    let all = everything.until_id(last_seen + 9).await;
    assert_consecutive(&all, 1);
    everything.assert_quiet(Duration::from_millis(200)).await;
    let missed: Vec<SseEvent> = all.iter().filter(|e| e.id > last_seen).cloned().collect();
    assert_eq!(
        types(&missed),
        [
            "stock.changed",
            "order.placed",
            "stock.changed",
            "order.placed",
            "stock.changed",
            "order.placed",
            "stock.changed",
            "order.updated",
            "session.opened",
        ]
    );
    let from = (first[0].id - 1) as usize;
    assert_eq!(
        all[from..from + 4],
        first[..],
        "the same events, whoever reads them"
    );

    // Header: exactly the missed ones, in order, then live ones.
    let mut resumed = app.follow_shop(&shop, Some(last_seen)).await;
    assert_eq!(resumed.take(missed.len()).await, missed);
    resumed.assert_quiet(Duration::from_millis(200)).await;
    let live = app
        .staff_order(&session, None, &order(1))
        .await
        .assert_order(false);
    let next = resumed.take(2).await;
    assert_eq!(types(&next), ["stock.changed", "order.placed"]);
    assert_eq!(next[1].data, live);
    assert_consecutive(&next, last_seen + missed.len() as i64 + 1);
    resumed.assert_quiet(Duration::from_millis(200)).await;

    // Query parameters, as EventSource sends them (no headers at all).
    let path =
        format!("/api/v1/shops/{shop}/events?access_token={STAFF_TOKEN}&lastEventId={last_seen}");
    let mut queried = SseStream::open(app.request(Method::GET, &path)).await;
    let again = queried.take(missed.len() + 2).await;
    assert_eq!(again[..missed.len()], missed[..]);
    assert_eq!(again[missed.len()..], next[..]);
    queried.assert_quiet(Duration::from_millis(200)).await;

    // Resuming from the newest id: nothing until something new.
    let newest = next[1].id;
    let mut caught_up = app.follow_shop(&shop, Some(newest)).await;
    caught_up.assert_quiet(Duration::from_millis(200)).await;
    app.restock(&shop, &ids.soup, 1).await.assert_status(200);
    assert_eq!(caught_up.next().await.id, newest + 1);
}

#[tokio::test]
async fn a_resume_gets_every_missed_event_across_a_server_restart() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, _) = app.table(&shop, "T1").await;
    let body = OrderBody::new().line(&ids.curry, 1).json();

    let mut stream = app.follow_shop(&shop, None).await;
    let placed = app
        .staff_order(&session, None, &body)
        .await
        .assert_order(false);
    let seen = stream.next().await;
    assert_eq!(seen.data, placed);
    drop(stream);

    let mut expected = Vec::new();
    for _ in 0..3 {
        expected.push(
            app.staff_order(&session, None, &body)
                .await
                .assert_order(false),
        );
    }
    let app = app.restart().await;
    for _ in 0..3 {
        expected.push(
            app.staff_order(&session, None, &body)
                .await
                .assert_order(false),
        );
    }

    let mut resumed = app.follow_shop(&shop, Some(seen.id)).await;
    let missed = resumed.take(6).await;
    assert_consecutive(&missed, seen.id + 1);
    assert!(missed.iter().all(|e| e.event == "order.placed"));
    let orders: Vec<Value> = missed.iter().map(|e| e.data.clone()).collect();
    assert_eq!(orders, expected, "in order, none twice, none lost");
    resumed.assert_quiet(Duration::from_millis(200)).await;

    let live = app
        .staff_order(&session, None, &body)
        .await
        .assert_order(false);
    let event = resumed.next().await;
    assert_eq!((event.id, &event.data), (seen.id + 7, &live));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_resume_far_behind_gets_the_whole_backlog_on_one_connection() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.soup, json!({"stock": 0}))
        .await
        .assert_status(200);
    // 600 small events (~100 KB) while nobody listens: more than the
    // server keeps queued per subscriber, far less than a socket holds.
    let writers = (0..4).map(|_| async {
        for _ in 0..150 {
            app.restock(&shop, &ids.soup, 1).await.assert_status(200);
        }
    });
    join_all(writers).await;
    let last = {
        let mut probe = app.follow_shop(&shop, None).await;
        app.restock(&shop, &ids.soup, 1).await.assert_status(200);
        probe.next().await.id
    };

    // A client that reads as fast as it can, resuming from the start.
    let mut resumed = app.follow_shop(&shop, Some(0)).await;
    let backlog = resumed.until_id(last).await;
    assert_consecutive(&backlog, 1);
    // ... and stays connected for what comes next.
    app.restock(&shop, &ids.soup, 1).await.assert_status(200);
    assert_eq!(resumed.next().await.id, last + 1);
}

#[tokio::test]
async fn a_shutdown_ends_open_streams() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let mut stream = app.follow_shop(&shop, None).await;
    stream.assert_quiet(Duration::from_millis(100)).await;
    // "SSE streams close" on a graceful shutdown: the restart must not wait
    // for a kitchen screen to hang up.
    let restarted = tokio::time::timeout(Duration::from_secs(5), app.restart()).await;
    let app = restarted.expect("a graceful shutdown waited for an open stream forever");
    assert_eq!(stream.rest().await, []);
    assert_eq!(app.get_shop(&shop).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_events_arrive_complete_and_in_order() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, _) = app.table(&shop, "T1").await;
    const START: i64 = 100_000;
    app.set_inventory(&shop, &ids.soup, json!({"stock": START}))
        .await
        .assert_status(200);
    let mut stream = app.follow_shop(&shop, None).await;

    // 250 orders (a stock change and an order each) and 500 restocks, from
    // eight writers at once: 1,000 events.
    let produce = async {
        let writers = (0..8).map(|w| {
            let (app, ids, session, shop) = (&app, &ids, &session, &shop);
            async move {
                let mut orders = Vec::new();
                for i in 0..(750 / 8 + 1) {
                    let n = w + 8 * i;
                    if n >= 750 {
                        break;
                    }
                    if n % 3 == 0 {
                        let body = OrderBody::new().line(&ids.soup, 1).json();
                        orders.push(
                            app.staff_order(session, None, &body)
                                .await
                                .assert_order(false),
                        );
                    } else {
                        app.restock(shop, &ids.soup, 1).await.assert_status(200);
                    }
                }
                orders
            }
        });
        join_all(writers).await.concat()
    };
    let (orders, events) = tokio::join!(produce, stream.take(1000));
    assert_eq!(orders.len(), 250);
    assert_consecutive(&events, events[0].id);
    stream.assert_quiet(Duration::from_millis(300)).await;

    // Each order's stock change comes right before it (one transaction),
    // and the stock walks from START to where the inventory is now.
    let mut stock = START;
    let mut placed = BTreeSet::new();
    for (i, event) in events.iter().enumerate() {
        match event.event.as_str() {
            "stock.changed" => {
                assert_eq!(event.data["itemId"], ids.soup);
                let now = event.data["stock"].as_i64().unwrap();
                let order_follows = events.get(i + 1).is_some_and(|e| e.event == "order.placed");
                assert_eq!(
                    now,
                    if order_follows { stock - 1 } else { stock + 1 },
                    "{event:?}"
                );
                stock = now;
            }
            "order.placed" => {
                assert_eq!(events[i - 1].event, "stock.changed");
                assert_eq!(event.data["items"][0]["quantity"], 1);
                placed.insert(event.data["orderId"].as_str().unwrap().to_owned());
            }
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(stock, START - 250 + 500);
    assert_eq!(app.stock_entry(&shop, &ids.soup).await["stock"], stock);
    let expected: BTreeSet<String> = orders
        .iter()
        .map(|o| o["orderId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(placed, expected, "every order exactly once");
}

/// A catalog whose orders make big events: an 80-character dish with four
/// 80-character toppings, fifty lines an order, ~40 KB of JSON each.
fn big_catalog(dish: &str, toppings: &[String], soup: &str) -> Value {
    let name = |c: char| std::iter::repeat_n(c, 80).collect::<String>();
    json!({
        "toppings": toppings.iter().enumerate().map(|(i, id)| json!({
            "toppingId": id, "name": name(char::from(b'a' + i as u8)), "price": 100
        })).collect::<Vec<_>>(),
        "items": [
            {"menuItemId": dish, "name": name('D'), "category": "Mains", "price": 900,
             "toppingIds": toppings, "maxToppings": 4},
            {"menuItemId": soup, "name": "Miso soup", "category": "Sides", "price": 300}
        ]
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stalled_subscriber_is_cut_off_without_holding_up_orders_and_then_resumes() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let dish = uuid::Uuid::new_v4().to_string();
    let soup = uuid::Uuid::new_v4().to_string();
    let toppings: Vec<String> = (0..4).map(|_| uuid::Uuid::new_v4().to_string()).collect();
    app.put_catalog(&shop, big_catalog(&dish, &toppings, &soup))
        .await
        .assert_status(200);
    app.set_inventory(&shop, &soup, json!({"stock": 1}))
        .await
        .assert_status(200);
    let (session, _) = app.table(&shop, "T1").await;
    let topping_refs: Vec<&str> = toppings.iter().map(String::as_str).collect();
    let mut big = OrderBody::new().note(&"n".repeat(200));
    for _ in 0..50 {
        big = big.topped(&dish, 1, &topping_refs);
    }
    let big = big.json();

    // A subscriber that keeps reading, to learn where the log stands.
    let mut reader = app.follow_shop(&shop, None).await;
    app.restock(&shop, &soup, 1).await.assert_status(200);
    let start = reader.next().await.id;
    // The frozen kitchen screen, from the same point.
    let stalled = app.stalled_shop_stream(&shop, start).await;

    // ~8 MB of big orders (more than the sockets between server and client
    // hold: Linux lets a send buffer grow to 4 MB by default), then 500
    // small events (more than the server queues for one subscriber), from
    // eight writers.
    const ORDERS: usize = 200;
    const RESTOCKS: usize = 500;
    let produce = async {
        let writers = (0..8).map(|w| {
            let (app, session, shop, soup, big) = (&app, &session, &shop, &soup, &big);
            async move {
                let mut statuses = Vec::new();
                for n in (w..ORDERS + RESTOCKS).step_by(8) {
                    let status = if n < ORDERS {
                        app.staff_order(session, None, big).await.status
                    } else {
                        app.restock(shop, soup, 1).await.status
                    };
                    statuses.push((n < ORDERS, status));
                }
                statuses
            }
        });
        join_all(writers).await.concat()
    };
    let total = (ORDERS + RESTOCKS) as i64;
    let (statuses, followed) = tokio::join!(produce, reader.take(total as usize));
    // The stalled subscriber slowed no one: every write succeeded ...
    assert_eq!(statuses.len(), ORDERS + RESTOCKS);
    for (is_order, status) in statuses {
        assert_eq!(status, if is_order { 201 } else { 200 });
    }
    // ... and the other subscriber got all of it.
    assert_consecutive(&followed, start + 1);
    let last = start + total;

    // The stalled one, still frozen past the server's patience, was cut off:
    // its stream ended, short of the end, with an unbroken run of events.
    tokio::time::sleep(ordergate_server::hub::STALL + std::time::Duration::from_millis(500)).await;
    let (status, got) = stalled.read_to_end().await;
    assert_eq!(status, 200);
    assert_consecutive(&got, start + 1);
    assert!(
        (got.len() as i64) < total,
        "a stalled subscriber must be cut off, not buffered without bound"
    );
    assert_eq!(got[..], followed[..got.len()]);

    // Resuming from its last event, it gets the rest, exactly once.
    let resume_from = got.last().map_or(start, |e| e.id);
    let mut resumed = app.follow_shop(&shop, Some(resume_from)).await;
    let rest = resumed.until_id(last).await;
    assert_consecutive(&rest, resume_from + 1);
    assert_eq!(rest[..], followed[got.len()..]);
    resumed.assert_quiet(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn a_guest_stream_carries_its_own_orders_and_the_shops_stock_only() {
    let app = TestApp::spawn_with(|s| s.client_cooldown_ms = 0).await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.soup, json!({"stock": 20}))
        .await
        .assert_status(200);
    let (mine, my_pin) = app.table(&shop, "T1").await;
    let (theirs, their_pin) = app.table(&shop, "T2").await;
    let mut staff = app.follow_shop(&shop, None).await;
    let mut guest = SseStream::open(app.session_stream(&mine, &my_pin)).await;
    // The PIN may come as a header too.
    let mut by_header = SseStream::open(
        app.request(Method::GET, &format!("/api/v1/sessions/{mine}/events"))
            .header("X-Session-PIN", &my_pin),
    )
    .await;

    let soup = OrderBody::new().line(&ids.soup, 1);
    let beer = OrderBody::new().line(&ids.beer, 1);
    let their_order = app
        .place_order(
            &theirs,
            &their_pin,
            "phone-9",
            &key(),
            &soup.clone().note("theirs").json(),
        )
        .await
        .assert_order(false);
    let my_order = app
        .place_order(
            &mine,
            &my_pin,
            "phone-1",
            &key(),
            &soup.clone().note("mine").json(),
        )
        .await
        .assert_order(false);
    app.place_order(&theirs, &their_pin, "phone-9", &key(), &beer.clone().json())
        .await
        .assert_order(false);
    app.staff_order(&mine, None, &beer.json())
        .await
        .assert_order(false);
    let their_id = their_order["orderId"].as_str().unwrap();
    let my_id = my_order["orderId"].as_str().unwrap();
    app.set_status(their_id, "cancelled")
        .await
        .assert_status(200);
    app.set_status(my_id, "accepted").await.assert_status(200);
    app.restock(&shop, &ids.soup, 5).await.assert_status(200);
    app.table(&shop, "T3").await;
    let before_checkout = staff.take(11).await;
    // A guest resumes like the kitchen does, still seeing only its own.
    let path = format!(
        "/api/v1/sessions/{mine}/events?pin={my_pin}&lastEventId={}",
        before_checkout[0].id - 1
    );
    let mut resumed = SseStream::open(app.request(Method::GET, &path)).await;
    app.checkout(&theirs).await.assert_status(200);
    app.checkout(&mine).await.assert_status(200);

    // Two orders of tracked soup (stock + order each), two of beer, a
    // cancel (stock + update), an update, a restock, one opened, two closed.
    let all = [before_checkout, staff.take(2).await].concat();
    assert_consecutive(&all, all[0].id);
    let visible: Vec<SseEvent> = all
        .iter()
        .filter(|e| e.event == "stock.changed" || e.data["sessionId"] == mine.as_str())
        .cloned()
        .collect();
    let seen = guest.until_id(visible.last().unwrap().id).await;
    assert_eq!(seen, visible);
    assert!(seen.iter().all(|e| e.data["sessionId"] != theirs.as_str()));
    assert!(
        seen.iter()
            .all(|e| !e.data.to_string().contains(&their_pin)),
        "another table's PIN never shows"
    );
    assert_eq!(
        types(&seen),
        [
            "stock.changed", // their soup
            "stock.changed", // my soup
            "order.placed",
            "order.placed",  // my staff-placed beer
            "stock.changed", // their cancel puts soup back
            "order.updated",
            "stock.changed", // restock
            "session.closed"
        ]
    );
    assert_eq!(seen[2].data, my_order);
    assert!(
        guest
            .parser
            .first_line
            .as_deref()
            .is_some_and(|l| l.starts_with("retry:"))
    );
    // The table's streams end with its checkout, and a checked-out table
    // opens no new one.
    assert_eq!(guest.rest().await, []);
    assert_eq!(by_header.take(seen.len()).await, seen);
    assert_eq!(by_header.rest().await, []);
    assert_eq!(resumed.take(seen.len()).await, seen);
    assert_eq!(resumed.rest().await, []);
    SseStream::try_open(app.request(Method::GET, &path))
        .await
        .err()
        .expect("a checked-out table's stream is refused")
        .assert_problem(410, "SESSION_CLOSED");
}

#[tokio::test]
async fn streams_refuse_wrong_credentials_unknown_ids_and_bad_resume_points() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let shop_path = format!("/api/v1/shops/{shop}/events");
    let refused = |request| async move {
        SseStream::try_open(request)
            .await
            .err()
            .expect("the stream should be refused")
    };

    // Staff: the token in the header or the query, nothing else.
    refused(app.request(Method::GET, &shop_path))
        .await
        .assert_problem(401, "UNAUTHORIZED");
    refused(app.request(Method::GET, &shop_path).bearer_auth("wrong"))
        .await
        .assert_problem(401, "UNAUTHORIZED");
    refused(app.request(Method::GET, &format!("{shop_path}?access_token=wrong")))
        .await
        .assert_problem(401, "UNAUTHORIZED");
    refused(app.guest(Method::GET, &shop_path, &pin))
        .await
        .assert_problem(401, "UNAUTHORIZED");
    SseStream::open(app.request(
        Method::GET,
        &format!("{shop_path}?access_token={STAFF_TOKEN}"),
    ))
    .await;
    refused(app.shop_stream(&uuid::Uuid::new_v4().to_string()))
        .await
        .assert_problem(404, "NOT_FOUND");

    // Guests: the right PIN of a known session.
    refused(app.session_stream(&session, wrong_pin(&pin)))
        .await
        .assert_problem(401, "PIN_INVALID");
    refused(app.request(Method::GET, &format!("/api/v1/sessions/{session}/events")))
        .await
        .assert_problem(401, "PIN_INVALID");
    refused(app.session_stream(&uuid::Uuid::new_v4().to_string(), &pin))
        .await
        .assert_problem(404, "NOT_FOUND");
    SseStream::open(app.session_stream(&session, &pin)).await;

    // A resume point that is not an event id.
    for bad in ["abc", "-1", "1.5", ""] {
        let reply = refused(app.shop_stream(&shop).header("Last-Event-ID", bad)).await;
        assert_eq!(reply.invalid_fields(), ["lastEventId"], "header {bad:?}");
        let reply = refused(
            app.session_stream(&session, &pin)
                .header("Last-Event-ID", bad),
        )
        .await;
        assert_eq!(reply.invalid_fields(), ["lastEventId"], "header {bad:?}");
    }
    for bad in ["abc", "-1"] {
        let path = format!("{shop_path}?lastEventId={bad}");
        let reply = refused(app.staff(Method::GET, &path)).await;
        assert_eq!(reply.invalid_fields(), ["lastEventId"], "query {bad:?}");
        let path = format!("/api/v1/sessions/{session}/events?pin={pin}&lastEventId={bad}");
        let reply = refused(app.request(Method::GET, &path)).await;
        assert_eq!(reply.invalid_fields(), ["lastEventId"], "query {bad:?}");
        // A good header beside it does not excuse a bad query parameter.
        let path = format!("{shop_path}?lastEventId={bad}");
        let reply = refused(app.staff(Method::GET, &path).header("Last-Event-ID", "0")).await;
        assert_eq!(
            reply.invalid_fields(),
            ["lastEventId"],
            "query {bad:?} beside a header"
        );
    }
}

#[tokio::test]
async fn a_stopped_server_lets_go_of_its_database() {
    use std::sync::Arc;

    use ordergate_server::{Settings, open_store, serve};
    use tokio::time::Instant;

    let database = crate::database::TestDatabase::create().await;
    let mut settings = Settings::new(database.url.clone());
    settings.staff_token = Some(STAFF_TOKEN.into());
    let store = open_store(&settings).await.unwrap();
    let held = Arc::downgrade(&store);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(settings, store, listener, async {
        let _ = stopped.await;
    }));

    // A kitchen stream starts the shop's event reader.
    let client = reqwest::Client::new();
    let shop: Value = client
        .post(format!("{base}/api/v1/shops"))
        .bearer_auth(STAFF_TOKEN)
        .json(&json!({"name": "Diner", "currency": "USD"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let shop = shop["shopId"].as_str().unwrap();
    let stream = client
        .get(format!("{base}/api/v1/shops/{shop}/events"))
        .bearer_auth(STAFF_TOKEN);
    let stream = SseStream::open(stream).await;

    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
    drop(stream);
    let deadline = Instant::now() + crate::sse::WAIT;
    while held.upgrade().is_some() {
        assert!(
            Instant::now() < deadline,
            "the stopped server still holds its store"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
