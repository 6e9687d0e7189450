//! What a guest order must carry: a PIN, a device id, an Idempotency-Key
//! (checked in that order) and a body within the contract's limits that
//! names orderable items. Refusals place nothing.

use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{OrderBody, TestApp, key, wrong_pin};

#[tokio::test]
async fn a_key_reused_for_another_order_is_refused() {
    let app = TestApp::spawn_with(|s| s.client_cooldown_ms = 0).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let key = key();
    let body = OrderBody::new()
        .topped(&ids.curry, 2, &[&ids.cheese, &ids.egg])
        .line(&ids.beer, 1)
        .note("no onions")
        .json();
    let first = app
        .place_order(&session, &pin, "phone-1", &key, &body)
        .await
        .assert_order(false);

    let others = [
        OrderBody::new()
            .topped(&ids.curry, 3, &[&ids.cheese, &ids.egg])
            .line(&ids.beer, 1)
            .note("no onions")
            .json(),
        OrderBody::new()
            .topped(&ids.curry, 2, &[&ids.cheese])
            .line(&ids.beer, 1)
            .note("no onions")
            .json(),
        OrderBody::new()
            .topped(&ids.curry, 2, &[&ids.cheese, &ids.egg])
            .line(&ids.beer, 1)
            .note("extra onions")
            .json(),
        OrderBody::new()
            .topped(&ids.curry, 2, &[&ids.cheese, &ids.egg])
            .line(&ids.beer, 1)
            .note("no onions")
            .allow_repeat()
            .json(),
    ];
    for other in &others {
        app.place_order(&session, &pin, "phone-1", &key, other)
            .await
            .assert_problem(422, "IDEMPOTENCY_KEY_REUSED");
    }
    // The same request written differently is the same request.
    let same = OrderBody::new()
        .line(&ids.beer, 1)
        .topped(&ids.curry, 1, &[&ids.egg, &ids.cheese])
        .topped(&ids.curry, 1, &[&ids.cheese, &ids.egg])
        .note("  no onions ")
        .json();
    let replay = app
        .place_order(&session, &pin, "phone-1", &key, &same)
        .await;
    assert_eq!(replay.assert_order(true), first);
    assert_eq!(app.orders_of(&session).await, [first]);
}

#[tokio::test]
async fn quoted_bare_and_upper_case_forms_are_one_key() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let key = key();
    let body = OrderBody::new().line(&ids.soup, 1).json();
    let first = app
        .place_order(&session, &pin, "phone-1", &key, &body)
        .await
        .assert_order(false);
    for form in [
        format!("\"{key}\""),
        key.to_uppercase(),
        format!("\"{}\"", key.to_uppercase()),
    ] {
        let replay = app
            .place_order(&session, &pin, "phone-1", &form, &body)
            .await;
        assert_eq!(replay.assert_order(true), first, "{form}");
    }
    assert_eq!(app.orders_of(&session).await.len(), 1);
}

#[tokio::test]
async fn the_same_key_at_another_table_is_another_order() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (t1, pin1) = app.table(&shop, "T1").await;
    let (t2, pin2) = app.table(&shop, "T2").await;
    let key = key();
    let body = OrderBody::new().line(&ids.soup, 1).json();
    let here = app
        .place_order(&t1, &pin1, "phone-1", &key, &body)
        .await
        .assert_order(false);
    let there = app
        .place_order(&t2, &pin2, "phone-1", &key, &body)
        .await
        .assert_order(false);
    assert_ne!(here["orderId"], there["orderId"]);
    assert_eq!(
        (here["sessionId"].clone(), there["sessionId"].clone()),
        (json!(t1), json!(t2))
    );
    assert_eq!(app.orders_of(&t1).await, [here]);
    assert_eq!(app.orders_of(&t2).await, [there]);
}

#[tokio::test]
async fn a_missing_or_malformed_key_is_refused() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let body = OrderBody::new().line(&ids.soup, 1).json();
    let missing = TestApp::send(
        app.order_request(&session, Some(&pin), Some("phone-1"), None)
            .json(&body),
    )
    .await;
    missing.assert_problem(400, "IDEMPOTENCY_KEY_MISSING");

    let v4 = key();
    let v7 = Uuid::now_v7().to_string();
    for bad in [
        "".to_owned(),
        "not-a-uuid".to_owned(),
        "6ba7b810-9dad-11d1-80b4-00c04fd430c8".to_owned(), // v1
        v7,
        format!("{{{v4}}}"),
        v4.replace('-', ""),
        format!("urn:uuid:{v4}"),
        format!("\"{v4}"),
        format!("'{v4}'"),
    ] {
        let reply = app
            .place_order(&session, &pin, "phone-1", &bad, &body)
            .await;
        reply.assert_problem(400, "IDEMPOTENCY_KEY_INVALID");
    }
    assert_eq!(app.orders_of(&session).await, Vec::<Value>::new());
}

#[tokio::test]
async fn a_missing_or_malformed_client_id_is_refused() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let body = OrderBody::new().line(&ids.soup, 1).json();
    let missing = TestApp::send(
        app.order_request(&session, Some(&pin), None, Some(&key()))
            .json(&body),
    )
    .await;
    missing.assert_problem(400, "CLIENT_ID_INVALID");
    for bad in ["", "has space", "a/b", "semi;colon", &"x".repeat(65)] {
        app.place_order(&session, &pin, bad, &key(), &body)
            .await
            .assert_problem(400, "CLIENT_ID_INVALID");
    }
    let longest = "x".repeat(64);
    for good in ["dev:42.x_Y-z", longest.as_str()] {
        let reply = app.place_order(&session, &pin, good, &key(), &body).await;
        assert_eq!(reply.assert_order(false)["clientId"], good);
    }
    assert_eq!(app.orders_of(&session).await.len(), 2);
}

#[tokio::test]
async fn the_session_and_its_pin_are_judged_before_the_request() {
    let app = TestApp::spawn_with(|s| s.pin_max_failures = 100).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let body = OrderBody::new().line(&ids.soup, 1).json();
    let wrong = wrong_pin(&pin);

    app.place_order(&session, wrong, "phone-1", &key(), &body)
        .await
        .assert_problem(401, "PIN_INVALID");
    app.place_order(&session, wrong, "phone-1", "not-a-key", &body)
        .await
        .assert_problem(401, "PIN_INVALID");
    app.place_order(&session, wrong, "bad id", &key(), &body)
        .await
        .assert_problem(401, "PIN_INVALID");
    TestApp::send(
        app.order_request(&session, Some(wrong), None, None)
            .json(&body),
    )
    .await
    .assert_problem(401, "PIN_INVALID");
    TestApp::send(
        app.order_request(&session, None, Some("phone-1"), Some(&key()))
            .json(&body),
    )
    .await
    .assert_problem(401, "PIN_INVALID");
    let malformed = app
        .order_request(&session, Some(wrong), Some("phone-1"), Some(&key()))
        .header("Content-Type", "application/json")
        .body("{\"items\": ");
    TestApp::send(malformed)
        .await
        .assert_problem(401, "PIN_INVALID");
    let invalid = OrderBody::new().line(&ids.soup, 0).json();
    app.place_order(&session, wrong, "phone-1", &key(), &invalid)
        .await
        .assert_problem(401, "PIN_INVALID");

    let unknown = Uuid::new_v4().to_string();
    app.place_order(&unknown, &pin, "phone-1", &key(), &body)
        .await
        .assert_problem(404, "NOT_FOUND");
    app.place_order(&unknown, wrong, "bad id", "bad key", &body)
        .await
        .assert_problem(404, "NOT_FOUND");
    app.place_order("not-a-session", &pin, "phone-1", &key(), &body)
        .await
        .assert_problem(404, "NOT_FOUND");
    assert_eq!(app.orders_of(&session).await, Vec::<Value>::new());
}

#[tokio::test]
async fn a_locked_pin_refuses_orders_even_with_the_right_pin() {
    let app = TestApp::spawn_with(|s| s.pin_max_failures = 2).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let body = OrderBody::new().line(&ids.soup, 1).json();
    let wrong = wrong_pin(&pin);
    for _ in 0..2 {
        app.place_order(&session, wrong, "phone-1", &key(), &body)
            .await
            .assert_problem(401, "PIN_INVALID");
    }
    let locked = app
        .place_order(&session, &pin, "phone-1", &key(), &body)
        .await;
    locked.assert_problem(429, "PIN_LOCKED");
    let retry: u64 = locked.header("retry-after").unwrap().parse().unwrap();
    assert!((299..=300).contains(&retry), "{retry}");
    app.place_order(&session, &pin, "phone-1", "bad key", &body)
        .await
        .assert_problem(429, "PIN_LOCKED");
    assert_eq!(app.orders_of(&session).await, Vec::<Value>::new());
}

/// Replays may be answered from memory (SQLite): a lock that comes after
/// them must still refuse the next one.
#[tokio::test]
async fn a_lock_after_replays_refuses_the_next_replay() {
    let app = TestApp::spawn_with(|s| s.pin_max_failures = 2).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let body = OrderBody::new().line(&ids.soup, 1).json();
    let wrong = wrong_pin(&pin);
    let cart = key();
    let placed = app
        .place_order(&session, &pin, "phone-1", &cart, &body)
        .await;
    assert_eq!(placed.status, 201);
    for _ in 0..3 {
        let replay = app
            .place_order(&session, &pin, "phone-1", &cart, &body)
            .await;
        assert_eq!(replay.status, 201);
        assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    }

    app.place_order(&session, wrong, "phone-1", &key(), &body)
        .await
        .assert_problem(401, "PIN_INVALID");
    let after_one_failure = app
        .place_order(&session, &pin, "phone-1", &cart, &body)
        .await;
    assert_eq!(after_one_failure.status, 201, "one failure locks nothing");
    assert_eq!(
        after_one_failure.header("idempotent-replayed"),
        Some("true")
    );

    for _ in 0..2 {
        app.place_order(&session, wrong, "phone-1", &key(), &body)
            .await
            .assert_problem(401, "PIN_INVALID");
    }
    app.place_order(&session, &pin, "phone-1", &cart, &body)
        .await
        .assert_problem(429, "PIN_LOCKED");
    assert_eq!(app.orders_of(&session).await.len(), 1);
}

#[tokio::test]
async fn order_limits_are_reported_field_by_field() {
    let app = TestApp::spawn_with(|s| s.client_cooldown_ms = 0).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let place = |body: Value| {
        let (app, session, pin) = (&app, &session, &pin);
        async move {
            app.place_order(session, pin, "phone-1", &key(), &body)
                .await
        }
    };

    assert_eq!(
        place(json!({"items": []})).await.invalid_fields(),
        ["items"]
    );
    let fifty_one = (0..51).fold(OrderBody::new(), |b, _| b.line(&ids.beer, 1));
    assert_eq!(place(fifty_one.json()).await.invalid_fields(), ["items"]);
    let quantities = OrderBody::new()
        .line(&ids.beer, 0)
        .line(&ids.soup, 100)
        .line(&ids.curry, -1);
    assert_eq!(
        place(quantities.json()).await.invalid_fields(),
        [
            "items[0].quantity",
            "items[1].quantity",
            "items[2].quantity"
        ]
    );
    let twice = OrderBody::new().topped(&ids.curry, 1, &[&ids.cheese, &ids.cheese]);
    assert_eq!(
        place(twice.json()).await.invalid_fields(),
        ["items[0].toppingIds[1]"]
    );
    let long_note = OrderBody::new().line(&ids.soup, 1).note(&"x".repeat(201));
    assert_eq!(place(long_note.json()).await.invalid_fields(), ["note"]);
    assert_eq!(app.orders_of(&session).await, Vec::<Value>::new());

    // The limits themselves are allowed.
    let fifty = (0..50).fold(OrderBody::new(), |b, _| b.line(&ids.beer, 1));
    let order = place(fifty.json()).await.assert_order(false);
    assert_eq!(order["items"].as_array().unwrap().len(), 50);
    let most = OrderBody::new().line(&ids.soup, 99).note(&"é".repeat(200));
    let order = place(most.json()).await.assert_order(false);
    assert_eq!(order["total"], 99 * 300);
    assert_eq!(order["note"], "é".repeat(200));
}

#[tokio::test]
async fn orders_must_name_orderable_items_and_toppings() {
    let app = TestApp::spawn_with(|s| s.client_cooldown_ms = 0).await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let place = |body: Value| {
        let (app, session, pin) = (&app, &session, &pin);
        async move {
            app.place_order(session, pin, "phone-1", &key(), &body)
                .await
        }
    };

    let stranger = Uuid::new_v4().to_string();
    let unknown = place(
        OrderBody::new()
            .line(&ids.soup, 1)
            .line(&stranger, 1)
            .json(),
    )
    .await;
    unknown.assert_problem(422, "UNKNOWN_MENU_ITEM");
    assert_eq!(unknown.body["field"], "items[1].menuItemId");
    assert_eq!(unknown.body["menuItemId"], stranger);

    let no_toppings = place(OrderBody::new().topped(&ids.soup, 1, &[&ids.egg]).json()).await;
    no_toppings.assert_problem(422, "INVALID_TOPPING");
    assert_eq!(no_toppings.body["field"], "items[0].toppingIds");
    let no_such_topping = place(OrderBody::new().topped(&ids.curry, 1, &[&stranger]).json()).await;
    no_such_topping.assert_problem(422, "INVALID_TOPPING");
    assert_eq!(no_such_topping.body["toppingId"], stranger);
    // A topping is not a menu item.
    place(OrderBody::new().line(&ids.cheese, 1).json())
        .await
        .assert_problem(422, "UNKNOWN_MENU_ITEM");

    // A new catalog allows curry one topping, soup cheese, and retires beer.
    let mut catalog = ids.catalog();
    catalog["items"][0]["maxToppings"] = json!(1);
    catalog["items"][1]["toppingIds"] = json!([ids.cheese]);
    catalog["items"][1]["maxToppings"] = json!(1);
    catalog["items"].as_array_mut().unwrap().remove(2);
    app.put_catalog(&shop, catalog).await.assert_status(200);
    let too_many = place(
        OrderBody::new()
            .line(&ids.soup, 1)
            .topped(&ids.curry, 1, &[&ids.cheese, &ids.egg])
            .json(),
    )
    .await;
    too_many.assert_problem(422, "INVALID_TOPPING");
    assert_eq!(too_many.body["field"], "items[1].toppingIds");
    let not_offered = place(OrderBody::new().topped(&ids.soup, 1, &[&ids.egg]).json()).await;
    not_offered.assert_problem(422, "INVALID_TOPPING");
    assert_eq!(not_offered.body["field"], "items[0].toppingIds");
    assert_eq!(not_offered.body["toppingId"], ids.egg);
    let retired = place(OrderBody::new().line(&ids.beer, 1).json()).await;
    retired.assert_problem(422, "ITEM_UNAVAILABLE");
    assert_eq!(retired.body["field"], "items[0].menuItemId");
    assert_eq!(retired.body["menuItemId"], ids.beer);
    assert_eq!(app.orders_of(&session).await, Vec::<Value>::new());

    let one_topping = place(OrderBody::new().topped(&ids.curry, 1, &[&ids.egg]).json()).await;
    assert_eq!(one_topping.assert_order(false)["total"], 980);
}

#[tokio::test]
async fn bodies_that_do_not_parse_are_malformed() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let bodies = [
        json!({"items": [{"menuItemId": ids.soup, "quantity": 1}], "tip": 100}),
        json!({"items": [{"menuItemId": ids.soup, "quantity": 1, "price": 1}]}),
        json!({"items": [{"menuItemId": ids.soup, "quantity": "one"}]}),
        json!({"items": [{"menuItemId": "soup", "quantity": 1}]}),
        json!({"items": [{"quantity": 1}]}),
        json!({"note": "hello"}),
        json!([]),
    ];
    for body in bodies {
        app.place_order(&session, &pin, "phone-1", &key(), &body)
            .await
            .assert_problem(400, "MALFORMED_REQUEST");
    }
    let broken = app
        .order_request(&session, Some(&pin), Some("phone-1"), Some(&key()))
        .header("Content-Type", "application/json")
        .body("{\"items\": [");
    TestApp::send(broken)
        .await
        .assert_problem(400, "MALFORMED_REQUEST");
    assert_eq!(app.orders_of(&session).await, Vec::<Value>::new());
}

#[tokio::test]
async fn form_checks_come_in_the_contracts_order() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let invalid = OrderBody::new().line(&ids.soup, 0).json();
    app.place_order(&session, &pin, "bad id", "bad key", &invalid)
        .await
        .assert_problem(400, "IDEMPOTENCY_KEY_INVALID");
    app.place_order(&session, &pin, "bad id", &key(), &invalid)
        .await
        .assert_problem(400, "CLIENT_ID_INVALID");
    let malformed = app
        .order_request(&session, Some(&pin), Some("phone-1"), Some(&key()))
        .header("Content-Type", "application/json")
        .body("[");
    TestApp::send(malformed)
        .await
        .assert_problem(400, "MALFORMED_REQUEST");
    let plain_text = app
        .order_request(&session, Some(&pin), Some("phone-1"), Some(&key()))
        .header("Content-Type", "text/plain")
        .body(invalid.to_string());
    TestApp::send(plain_text)
        .await
        .assert_problem(415, "UNSUPPORTED_MEDIA_TYPE");
    let huge = OrderBody::new()
        .line(&ids.soup, 1)
        .note(&"x".repeat(17 * 1024))
        .json();
    app.place_order(&session, &pin, "phone-1", &key(), &huge)
        .await
        .assert_problem(413, "PAYLOAD_TOO_LARGE");
    app.place_order(&session, wrong_pin(&pin), "phone-1", &key(), &huge)
        .await
        .assert_problem(401, "PIN_INVALID");
    assert_eq!(app.orders_of(&session).await, Vec::<Value>::new());
}

#[tokio::test]
async fn a_shop_without_a_catalog_takes_no_orders_yet() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let ids = crate::helpers::Menu::default();
    let key = key();
    let body = OrderBody::new().line(&ids.soup, 1).json();
    let refused = app
        .place_order(&session, &pin, "phone-1", &key, &body)
        .await;
    refused.assert_problem(503, "CATALOG_NOT_READY");
    assert!(refused.header("retry-after").is_some());

    app.put_catalog(&shop, ids.catalog())
        .await
        .assert_status(200);
    let placed = app
        .place_order(&session, &pin, "phone-1", &key, &body)
        .await;
    assert_eq!(placed.assert_order(false)["total"], 300);
}
