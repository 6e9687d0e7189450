//! Malformed, oversized and wrongly typed requests: refused with
//! problem+json, and nothing changes.

use reqwest::Method;
use serde_json::json;

use crate::helpers::TestApp;

#[tokio::test]
async fn body_that_is_not_json_is_malformed() {
    let app = TestApp::spawn().await;
    let request = app
        .staff(Method::POST, "/api/v1/shops")
        .header("Content-Type", "application/json")
        .body("{\"name\": ");
    TestApp::send(request)
        .await
        .assert_problem(400, "MALFORMED_REQUEST");
}

#[tokio::test]
async fn unknown_fields_and_wrong_types_are_malformed() {
    let app = TestApp::spawn().await;
    let unknown = app
        .create_shop(json!({"name": "Diner", "currency": "USD", "owner": "me"}))
        .await;
    unknown.assert_problem(400, "MALFORMED_REQUEST");
    assert!(unknown.body["detail"].as_str().unwrap().contains("owner"));
    app.create_shop(json!({"name": 5, "currency": "USD"}))
        .await
        .assert_problem(400, "MALFORMED_REQUEST");
    app.create_shop(json!({"currency": "USD"}))
        .await
        .assert_problem(400, "MALFORMED_REQUEST");
    assert_eq!(app.list_shops().await.body["shops"], json!([]));
}

#[tokio::test]
async fn a_body_that_is_not_declared_json_is_unsupported() {
    let app = TestApp::spawn().await;
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let mut request = app
            .staff(Method::POST, "/api/v1/shops")
            .body(r#"{"name": "Diner", "currency": "USD"}"#);
        if let Some(content_type) = content_type {
            request = request.header("Content-Type", content_type);
        }
        TestApp::send(request)
            .await
            .assert_problem(415, "UNSUPPORTED_MEDIA_TYPE");
    }
    assert_eq!(app.list_shops().await.body["shops"], json!([]));
}

#[tokio::test]
async fn bodies_over_16_kib_or_a_catalog_over_2_mib_are_too_large() {
    let app = TestApp::spawn().await;
    let (shop, _) = app.shop_with_menu().await;
    let big_name = "x".repeat(17 * 1024);
    let reply = TestApp::send(
        app.staff(Method::POST, "/api/v1/shops")
            .json(&json!({"name": big_name, "currency": "USD"})),
    )
    .await;
    reply.assert_problem(413, "PAYLOAD_TOO_LARGE");
    assert_eq!(
        app.list_shops().await.body["shops"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // A catalog may be far larger, but not without end.
    let items: Vec<_> = (0..3000)
        .map(|n| {
            json!({"name": format!("Dish {n}"), "category": "Mains", "price": 900,
                        "description": "y".repeat(700)})
        })
        .collect();
    let reply = app.put_catalog(&shop, json!({"items": items})).await;
    reply.assert_problem(413, "PAYLOAD_TOO_LARGE");
    assert_eq!(
        app.get_catalog(&shop).await.body["version"],
        1,
        "catalog unchanged"
    );
}

#[tokio::test]
async fn unknown_paths_and_methods_are_problems_too() {
    let app = TestApp::spawn().await;
    app.get("/api/v1/nothing-here")
        .await
        .assert_problem(404, "NOT_FOUND");
    TestApp::send(app.staff(Method::DELETE, "/api/v1/shops"))
        .await
        .assert_problem(405, "METHOD_NOT_ALLOWED");
}

#[tokio::test]
async fn every_response_carries_a_request_id() {
    let app = TestApp::spawn().await;
    let reply = app.get("/healthz").await;
    assert!(
        reply
            .header("x-request-id")
            .is_some_and(|id| id.len() == 36)
    );
    let echoed = TestApp::send(
        app.request(Method::GET, "/healthz")
            .header("x-request-id", "abc"),
    )
    .await;
    assert_eq!(echoed.header("x-request-id"), Some("abc"));
}

#[tokio::test]
async fn a_body_must_be_a_json_object_not_an_array_of_its_fields() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let path = format!("/api/v1/shops/{shop}");
    for body in [
        json!([null, null]),
        json!(["Sakura", ["ja"]]),
        json!("name"),
    ] {
        let reply = TestApp::send(app.staff(Method::PATCH, &path).json(&body)).await;
        reply.assert_problem(400, "MALFORMED_REQUEST");
    }
    let shop_as_array = TestApp::send(
        app.staff(Method::POST, "/api/v1/shops")
            .json(&json!(["Sakura", "JPY", null, null])),
    )
    .await;
    shop_as_array.assert_problem(400, "MALFORMED_REQUEST");
    assert_eq!(app.get_shop(&shop).await.body["name"], "Test Diner");
    let json_suffix = TestApp::send(
        app.staff(Method::PATCH, &path)
            .header("Content-Type", "application/merge-patch+json")
            .body(r#" {"name": "Sakura"}"#),
    )
    .await;
    assert_eq!(json_suffix.assert_status(200)["name"], "Sakura");
}
