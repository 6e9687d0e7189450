//! Option groups over HTTP: choices judged with the catalog checks (422
//! `INVALID_OPTIONS` naming each group), priced and shown on the order,
//! tracked options taken and given back like toppings, and part of what
//! makes two requests the same.

use futures_util::future::join_all;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{OrderBody, TestApp, find, key};

/// A steak with a required doneness (medium rare costs 100) and up to two
/// sides, fries among them; a salad with its own dressing.
struct Grill {
    shop: String,
    steak: String,
    salad: String,
    doneness: String,
    rare: String,
    medium_rare: String,
    sides: String,
    fries: String,
    beans: String,
    sesame: String,
}

impl Grill {
    async fn publish(app: &TestApp) -> Grill {
        let id = || Uuid::new_v4().to_string();
        let grill = Grill {
            shop: app.shop().await,
            steak: id(),
            salad: id(),
            doneness: id(),
            rare: id(),
            medium_rare: id(),
            sides: id(),
            fries: id(),
            beans: id(),
            sesame: id(),
        };
        app.put_catalog(&grill.shop, grill.catalog())
            .await
            .assert_status(200);
        grill
    }

    fn catalog(&self) -> Value {
        json!({"items": [
            {"menuItemId": self.steak, "name": "Steak", "category": "Mains", "price": 2000,
             "optionGroups": [
                {"groupId": self.doneness, "name": "Doneness", "minChoices": 1, "maxChoices": 1,
                 "options": [{"optionId": self.rare, "name": "Rare"},
                             {"optionId": self.medium_rare, "name": "Medium rare", "price": 100}]},
                {"groupId": self.sides, "name": "Sides", "maxChoices": 2,
                 "options": [{"optionId": self.fries, "name": "Fries", "price": 300},
                             {"optionId": self.beans, "name": "Beans", "price": 200}]}
             ]},
            {"menuItemId": self.salad, "name": "Salad", "category": "Sides", "price": 700,
             "optionGroups": [
                {"name": "Dressing", "options": [{"optionId": self.sesame, "name": "Sesame"}]}
             ]}
        ]})
    }

    fn steak(&self, quantity: i64, options: &[&str]) -> Value {
        OrderBody::new()
            .chosen(&self.steak, quantity, options)
            .json()
    }
}

#[tokio::test]
async fn the_catalog_and_the_menu_carry_option_groups_with_stock() {
    let app = TestApp::spawn().await;
    let g = Grill::publish(&app).await;
    app.set_inventory(&g.shop, &g.fries, json!({"stock": 0}))
        .await
        .assert_status(200);
    let catalog = app.get_catalog(&g.shop).await;
    let groups = &catalog.assert_status(200)["items"][0]["optionGroups"];
    assert_eq!(
        groups[1],
        json!({"groupId": g.sides, "name": "Sides", "minChoices": 0, "maxChoices": 2,
               "options": [{"optionId": g.fries, "name": "Fries", "price": 300},
                           {"optionId": g.beans, "name": "Beans", "price": 200}]})
    );
    let menu = app.menu(&g.shop).await;
    let steak = find(&menu.assert_status(200)["items"], "menuItemId", &g.steak);
    assert_eq!(steak["soldOut"], false, "fries are optional");
    assert_eq!(
        steak["optionGroups"][1]["options"][0],
        json!({"optionId": g.fries, "name": "Fries", "price": 300, "stock": 0,
               "soldOut": true, "soldOutUntil": null})
    );
    let entry = app.stock_entry(&g.shop, &g.fries).await;
    assert_eq!(
        (entry["kind"].clone(), entry["name"].clone()),
        (json!("option"), json!("Steak · Fries"))
    );

    let mut bad = g.catalog();
    bad["items"][0]["optionGroups"][0]["minChoices"] = json!(3);
    bad["items"][1]["optionGroups"][0]["options"][0]["optionId"] = json!(g.rare);
    let refused = app.put_catalog(&g.shop, bad).await;
    assert_eq!(
        refused.invalid_fields(),
        [
            "items[0].optionGroups[0].minChoices",
            "items[1].optionGroups[0].options[0].optionId"
        ]
    );
    assert_eq!(app.get_catalog(&g.shop).await.body, catalog.body);
}

#[tokio::test]
async fn choices_that_break_a_group_are_invalid_options_naming_it() {
    let app = TestApp::spawn().await;
    let g = Grill::publish(&app).await;
    let (session, pin) = app.table(&g.shop, "T1").await;

    let missing = app
        .place_order(&session, &pin, "phone-1", &key(), &g.steak(1, &[&g.fries]))
        .await;
    missing.assert_problem(422, "INVALID_OPTIONS");
    assert_eq!(
        missing.body["errors"],
        json!([{"field": "items[0].optionIds", "groupId": g.doneness,
                "message": "choose one Doneness"}])
    );
    assert_eq!(missing.body["detail"], "choose one Doneness");

    let too_many = app
        .place_order(
            &session,
            &pin,
            "phone-1",
            &key(),
            &g.steak(1, &[&g.rare, &g.medium_rare]),
        )
        .await;
    too_many.assert_problem(422, "INVALID_OPTIONS");
    assert_eq!(too_many.body["errors"][0]["groupId"], g.doneness);

    let strangers = OrderBody::new()
        .chosen(&g.steak, 1, &[&g.rare, &g.sesame])
        .chosen(&g.salad, 1, &[&g.fries])
        .json();
    let foreign = app
        .place_order(&session, &pin, "phone-1", &key(), &strangers)
        .await;
    foreign.assert_problem(422, "INVALID_OPTIONS");
    assert_eq!(
        foreign.body["errors"],
        json!([
            {"field": "items[0].optionIds[1]", "groupId": null,
             "message": "not an option of Steak"},
            {"field": "items[1].optionIds[0]", "groupId": null,
             "message": "not an option of Salad"}
        ])
    );
    assert_eq!(app.orders_of(&session).await, Vec::<Value>::new());
    let codes: Vec<Value> = app
        .audit_entries(&g.shop)
        .await
        .into_iter()
        .map(|e| e["code"].clone())
        .collect();
    assert_eq!(codes, vec![json!("INVALID_OPTIONS"); 3]);

    let fine = app
        .place_order(
            &session,
            &pin,
            "phone-1",
            &key(),
            &g.steak(2, &[&g.beans, &g.medium_rare]),
        )
        .await;
    let order = fine.assert_order(false);
    assert_eq!(
        order["items"][0],
        json!({"menuItemId": g.steak, "name": "Steak", "unitPrice": 2300, "quantity": 2,
               "toppings": [],
               "options": [
                   {"optionId": g.medium_rare, "groupId": g.doneness, "name": "Medium rare",
                    "price": 100},
                   {"optionId": g.beans, "groupId": g.sides, "name": "Beans", "price": 200}
               ],
               "lineTotal": 4600})
    );
    assert_eq!(order["total"], 4600);
}

#[tokio::test]
async fn a_tracked_option_runs_out_like_a_topping_and_a_cancel_gives_it_back() {
    let app = TestApp::spawn().await;
    let g = Grill::publish(&app).await;
    app.set_inventory(&g.shop, &g.fries, json!({"stock": 1}))
        .await
        .assert_status(200);
    let (session, pin) = app.table(&g.shop, "T1").await;
    let with_fries = |quantity| g.steak(quantity, &[&g.rare, &g.fries]);

    let short = app
        .place_order(&session, &pin, "phone-1", &key(), &with_fries(2))
        .await;
    short.assert_problem(409, "OUT_OF_STOCK");
    assert_eq!(
        short.body["shortages"],
        json!([{"itemId": g.fries, "requested": 2, "available": 1}])
    );
    let placed = app
        .place_order(&session, &pin, "phone-2", &key(), &with_fries(1))
        .await;
    let order_id = placed.order_id();
    assert_eq!(app.stock_entry(&g.shop, &g.fries).await["stock"], 0);
    let menu = app.menu(&g.shop).await;
    let steak = find(&menu.body["items"], "menuItemId", &g.steak);
    assert_eq!(steak["optionGroups"][1]["options"][0]["soldOut"], true);

    app.set_status(&order_id, "cancelled")
        .await
        .assert_status(200);
    assert_eq!(app.stock_entry(&g.shop, &g.fries).await["stock"], 1);
    let moves: Vec<(Value, Value)> = app
        .stock_log(&g.shop)
        .await
        .into_iter()
        .filter(|e| e["itemId"] == g.fries.as_str() && e["orderId"] == order_id.as_str())
        .map(|e| (e["operation"].clone(), e["delta"].clone()))
        .collect();
    assert_eq!(
        moves,
        [(json!("cancel"), json!(1)), (json!("order"), json!(-1))],
        "newest first"
    );
}

#[tokio::test]
async fn options_are_part_of_what_makes_two_requests_the_same() {
    let app = TestApp::spawn().await;
    let g = Grill::publish(&app).await;
    let (session, pin) = app.table(&g.shop, "T1").await;
    let rare = g.steak(1, &[&g.rare]);
    let medium_rare = g.steak(1, &[&g.medium_rare]);
    let first_key = key();
    app.place_order(&session, &pin, "phone-1", &first_key, &rare)
        .await
        .assert_order(false);
    app.place_order(&session, &pin, "phone-1", &first_key, &medium_rare)
        .await
        .assert_problem(422, "IDEMPOTENCY_KEY_REUSED");
    app.place_order(&session, &pin, "phone-1", &first_key, &rare)
        .await
        .assert_order(true);
    app.clock.skip(chrono::Duration::seconds(3));
    app.place_order(&session, &pin, "phone-1", &key(), &rare)
        .await
        .assert_problem(409, "DUPLICATE_PAYLOAD");
    app.place_order(&session, &pin, "phone-1", &key(), &medium_rare)
        .await
        .assert_order(false);
}

#[tokio::test]
async fn concurrent_orders_for_a_scarce_option_never_oversell_it() {
    let app = TestApp::spawn().await;
    let g = Grill::publish(&app).await;
    app.set_inventory(&g.shop, &g.fries, json!({"stock": 5}))
        .await
        .assert_status(200);
    let mut tables = Vec::new();
    for n in 0..16 {
        tables.push(app.table(&g.shop, &format!("T{n}")).await);
    }
    let body = g.steak(1, &[&g.rare, &g.fries]);
    let replies = join_all(tables.iter().map(|(session, pin)| {
        let body = body.clone();
        let app = &app;
        async move {
            app.place_order(session, pin, "phone-1", &key(), &body)
                .await
        }
    }))
    .await;
    let placed = replies.iter().filter(|r| r.status == 201).count();
    let short = replies
        .iter()
        .filter(|r| r.status == 409 && r.body["code"] == "OUT_OF_STOCK")
        .count();
    assert_eq!((placed, short), (5, 11));
    assert_eq!(app.stock_entry(&g.shop, &g.fries).await["stock"], 0);
    let taken: i64 = app
        .stock_log(&g.shop)
        .await
        .iter()
        .filter(|e| e["itemId"] == g.fries.as_str())
        .map(|e| e["delta"].as_i64().unwrap())
        .sum();
    assert_eq!(taken, 0, "set to 5, then five orders of one");
}
