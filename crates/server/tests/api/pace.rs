//! The kitchen's pace over HTTP: the estimated wait guests see, made of
//! the last hour's accepted-to-ready times, and the age colours each shop
//! sets for its kitchen display.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{OrderBody, TestApp};

fn minutes(m: i64) -> chrono::Duration {
    chrono::Duration::minutes(m)
}

async fn wait(app: &TestApp, shop: &str) -> Value {
    let reply = app.get(&format!("/api/v1/shops/{shop}/wait")).await;
    assert_eq!(reply.header("cache-control"), Some("max-age=30"));
    reply.assert_status(200).clone()
}

fn estimate(minutes: Option<i64>, orders: usize) -> Value {
    json!({"estimatedMinutes": minutes, "sampleSize": orders, "windowMinutes": 60})
}

#[tokio::test]
async fn the_wait_is_the_median_of_the_last_hours_kitchen_times() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    assert_eq!(wait(&app, &shop).await, estimate(None, 0), "nothing yet");
    let (session, _) = app.table(&shop, "T1").await;
    let mut orders = Vec::new();
    for _ in 0..4 {
        let body = OrderBody::new().line(&ids.beer, 1).allow_repeat().json();
        orders.push(app.staff_order(&session, None, &body).await.order_id());
    }
    for order in &orders[..3] {
        app.set_status(order, "accepted").await.assert_status(200);
    }
    // Ready after 5, 8 and 12 minutes; the fourth is served straight from
    // placed at 12 (its placing stands in for the kitchen taking it).
    app.clock.skip(minutes(5));
    app.set_status(&orders[0], "preparing")
        .await
        .assert_status(200);
    app.set_status(&orders[0], "ready").await.assert_status(200);
    app.clock.skip(minutes(3));
    app.set_status(&orders[1], "ready").await.assert_status(200);
    assert_eq!(
        wait(&app, &shop).await,
        estimate(None, 2),
        "two orders say too little"
    );
    app.clock.skip(minutes(4));
    app.set_status(&orders[2], "served")
        .await
        .assert_status(200);
    assert_eq!(wait(&app, &shop).await, estimate(Some(8), 3));
    app.set_status(&orders[3], "served")
        .await
        .assert_status(200);
    assert_eq!(wait(&app, &shop).await, estimate(Some(10), 4));

    // Recalled, an order is not ready after all.
    let recall = format!("/api/v1/orders/{}/recall", orders[3]);
    app.staff_post(&recall, None, Some(&json!({"expectedVersion": 2})))
        .await
        .assert_status(200);
    assert_eq!(wait(&app, &shop).await, estimate(Some(8), 3));
    // An hour on, the kitchen's old pace says nothing about now: the order
    // ready at minute 5 counts until minute 65.
    app.clock.skip(minutes(52));
    assert_eq!(wait(&app, &shop).await, estimate(Some(8), 3));
    app.clock.skip(minutes(2));
    assert_eq!(
        wait(&app, &shop).await,
        estimate(None, 2),
        "the first ready order left the window"
    );

    app.get(&format!("/api/v1/shops/{}/wait", uuid::Uuid::new_v4()))
        .await
        .assert_problem(404, "NOT_FOUND");
}

#[tokio::test]
async fn a_shop_sets_its_kitchens_age_colours() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let path = format!("/api/v1/shops/{shop}");
    let shown = app.get(&path).await;
    let thresholds = |body: &Value| {
        (
            body["kitchenWarnMinutes"].clone(),
            body["kitchenLateMinutes"].clone(),
        )
    };
    assert_eq!(thresholds(shown.assert_status(200)), (json!(5), json!(10)));
    let patch = |body: Value| TestApp::send(app.staff(Method::PATCH, &path).json(&body));

    let mut kitchen = app.follow_shop(&shop, None).await;
    let patched = patch(json!({"kitchenWarnMinutes": 7, "kitchenLateMinutes": 15})).await;
    assert_eq!(
        thresholds(patched.assert_status(200)),
        (json!(7), json!(15))
    );
    assert_eq!(
        kitchen.take(1).await[0].event,
        "menu.changed",
        "displays read the shop again"
    );
    assert_eq!(
        thresholds(&app.get(&path).await.body),
        (json!(7), json!(15))
    );

    for (body, field) in [
        (json!({"kitchenLateMinutes": 7}), "kitchenLateMinutes"),
        (json!({"kitchenWarnMinutes": 20}), "kitchenWarnMinutes"),
        (json!({"kitchenWarnMinutes": 0}), "kitchenWarnMinutes"),
        (json!({"kitchenLateMinutes": 241}), "kitchenLateMinutes"),
    ] {
        assert_eq!(
            patch(body.clone()).await.invalid_fields(),
            [field],
            "{body}"
        );
    }
    patch(json!({"kitchenWarnMinutes": "7"}))
        .await
        .assert_problem(400, "MALFORMED_REQUEST");
    assert_eq!(
        thresholds(&app.get(&path).await.body),
        (json!(7), json!(15)),
        "refusals change nothing"
    );
}
