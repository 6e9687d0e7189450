//! Staff orders, one order by id, and the order history a client reads to
//! reconcile after a lost response.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{OrderBody, TestApp, key, wrong_pin};

#[tokio::test]
async fn staff_orders_are_marked_staff_and_skip_the_guest_rules() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, _) = app.table(&shop, "T2").await;
    let body = OrderBody::new()
        .topped(&ids.curry, 1, &[&ids.cheese])
        .note("for the kids")
        .json();

    let first = app.staff_order(&session, None, &body).await;
    let second = app.staff_order(&session, None, &body).await;
    let first = first.assert_order(false);
    let second = second.assert_order(false);
    assert_ne!(first["orderId"], second["orderId"]);
    for (order, ticket) in [(&first, 1), (&second, 2)] {
        assert_eq!(order["source"], "staff");
        assert_eq!(order["clientId"], json!(null));
        assert_eq!(order["ticketNumber"], ticket);
        assert_eq!(order["status"], "placed");
        assert_eq!(order["tableLabel"], "T2");
        assert_eq!(order["total"], 1000);
        assert_eq!(order["note"], "for the kids");
    }
    assert_eq!(app.orders_of(&session).await, [second, first]);
}

#[tokio::test]
async fn staff_orders_need_the_staff_token_and_a_valid_body() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let body = OrderBody::new().line(&ids.soup, 1).json();
    let path = format!("/api/v1/sessions/{session}/staff-orders");
    TestApp::send(app.request(Method::POST, &path).json(&body))
        .await
        .assert_problem(401, "UNAUTHORIZED");
    TestApp::send(app.guest(Method::POST, &path, &pin).json(&body))
        .await
        .assert_problem(401, "UNAUTHORIZED");
    TestApp::send(
        app.request(Method::POST, &path)
            .bearer_auth("wrong")
            .json(&body),
    )
    .await
    .assert_problem(401, "UNAUTHORIZED");

    assert_eq!(
        app.staff_order(&session, None, &json!({"items": []}))
            .await
            .invalid_fields(),
        ["items"]
    );
    app.staff_order(
        &session,
        None,
        &OrderBody::new().line(&ids.cheese, 1).json(),
    )
    .await
    .assert_problem(422, "UNKNOWN_MENU_ITEM");
    app.staff_order(&session, Some("not-a-key"), &body)
        .await
        .assert_problem(400, "IDEMPOTENCY_KEY_INVALID");
    app.staff_order(&Uuid::new_v4().to_string(), None, &body)
        .await
        .assert_problem(404, "NOT_FOUND");
    app.set_inventory(&shop, &ids.soup, json!({"stock": 0}))
        .await
        .assert_status(200);
    let short = app.staff_order(&session, None, &body).await;
    short.assert_problem(409, "OUT_OF_STOCK");
    assert_eq!(
        short.body["shortages"],
        json!([{"itemId": ids.soup, "requested": 1, "available": 0}])
    );
    assert_eq!(app.orders_of(&session).await, Vec::<Value>::new());
}

#[tokio::test]
async fn one_order_is_read_by_staff_only() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let placed = app
        .place_order(
            &session,
            &pin,
            "phone-1",
            &key(),
            &OrderBody::new().line(&ids.beer, 2).json(),
        )
        .await;
    let order = placed.assert_order(false);
    let id = placed.order_id();

    let read = app.get_order(&id).await;
    assert_eq!(read.assert_status(200), &order);
    assert_eq!(read.body.get("idempotentReplay"), None);
    let path = format!("/api/v1/orders/{id}");
    TestApp::send(app.request(Method::GET, &path))
        .await
        .assert_problem(401, "UNAUTHORIZED");
    TestApp::send(app.guest(Method::GET, &path, &pin))
        .await
        .assert_problem(401, "UNAUTHORIZED");
    app.get_order(&Uuid::now_v7().to_string())
        .await
        .assert_problem(404, "NOT_FOUND");
    app.get_order("not-an-order")
        .await
        .assert_problem(404, "NOT_FOUND");
}

#[tokio::test]
async fn history_is_newest_first_and_limited() {
    let app = TestApp::spawn_with(|s| s.client_cooldown_ms = 0).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    for n in 1..=22 {
        let body = OrderBody::new().line(&ids.soup, n).json();
        let reply = if n % 2 == 0 {
            app.staff_order(&session, None, &body).await
        } else {
            app.place_order(&session, &pin, "phone-1", &key(), &body)
                .await
        };
        assert_eq!(reply.assert_order(false)["ticketNumber"], n);
    }
    let tickets = |orders: &Value| -> Vec<i64> {
        orders["orders"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["ticketNumber"].as_i64().unwrap())
            .collect()
    };

    let staff = app.session_orders(&session, "").await;
    assert_eq!(
        tickets(staff.assert_status(200)),
        (3..=22).rev().collect::<Vec<_>>(),
        "20 by default"
    );
    let guest = app.guest_orders(&session, &pin, "").await;
    assert_eq!(
        guest.assert_status(200),
        &staff.body,
        "guests read the same"
    );
    let five = app.guest_orders(&session, &pin, "?limit=5").await;
    assert_eq!(tickets(five.assert_status(200)), [22, 21, 20, 19, 18]);
    let all = app.session_orders(&session, "?limit=500").await;
    assert_eq!(
        tickets(all.assert_status(200)),
        (1..=22).rev().collect::<Vec<_>>()
    );
    for bad in ["0", "501", "-1", "twenty"] {
        let query = format!("?limit={bad}");
        assert_eq!(
            app.session_orders(&session, &query).await.invalid_fields(),
            ["limit"]
        );
        assert_eq!(
            app.guest_orders(&session, &pin, &query)
                .await
                .invalid_fields(),
            ["limit"]
        );
    }
}

#[tokio::test]
async fn guests_read_only_their_own_table() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let (other, other_pin) = app.table(&shop, "T2").await;
    app.place_order(
        &session,
        &pin,
        "phone-1",
        &key(),
        &OrderBody::new().line(&ids.soup, 1).json(),
    )
    .await
    .assert_order(false);

    app.guest_orders(&session, wrong_pin(&pin), "")
        .await
        .assert_problem(401, "PIN_INVALID");
    if other_pin != pin {
        app.guest_orders(&session, &other_pin, "")
            .await
            .assert_problem(401, "PIN_INVALID");
    }
    let path = format!("/api/v1/sessions/{session}/orders");
    TestApp::send(app.request(Method::GET, &path))
        .await
        .assert_problem(401, "PIN_INVALID");
    TestApp::send(app.request(Method::GET, &path).bearer_auth("wrong"))
        .await
        .assert_problem(401, "UNAUTHORIZED");
    let theirs = app.guest_orders(&other, &other_pin, "").await;
    assert_eq!(theirs.assert_status(200)["orders"], json!([]));
    app.guest_orders(&Uuid::new_v4().to_string(), &pin, "")
        .await
        .assert_problem(404, "NOT_FOUND");
    app.session_orders(&Uuid::new_v4().to_string(), "")
        .await
        .assert_problem(404, "NOT_FOUND");
}
