use reqwest::Method;
use serde_json::json;

use crate::helpers::{STAFF_TOKEN, TestApp};

#[tokio::test]
async fn staff_create_a_shop_and_anyone_can_read_it() {
    let app = TestApp::spawn().await;
    let reply = app
        .create_shop(json!({"name": " Sakura Diner ", "currency": "JPY", "timezone": "Asia/Tokyo"}))
        .await;
    let shop = reply.assert_status(201).clone();
    let id = shop["shopId"].as_str().unwrap();
    assert_eq!(
        reply.header("location"),
        Some(format!("/api/v1/shops/{id}").as_str())
    );
    assert_eq!(shop["name"], "Sakura Diner");
    assert_eq!(shop["currency"], "JPY");
    assert_eq!(shop["timezone"], "Asia/Tokyo");
    assert!(shop["createdAt"].as_str().unwrap().ends_with('Z'));

    let read = app.get_shop(id).await;
    assert_eq!(read.assert_status(200), &shop);
    let listed = app.list_shops().await;
    assert_eq!(listed.assert_status(200)["shops"], json!([shop]));
}

#[tokio::test]
async fn timezone_defaults_to_utc() {
    let app = TestApp::spawn().await;
    let reply = app
        .create_shop(json!({"name": "Diner", "currency": "USD"}))
        .await;
    assert_eq!(reply.assert_status(201)["timezone"], "UTC");
}

#[tokio::test]
async fn invalid_shop_fields_are_all_reported() {
    let app = TestApp::spawn().await;
    let reply = app
        .create_shop(json!({"name": "", "currency": "XXY", "timezone": "Mars/Base"}))
        .await;
    assert_eq!(reply.invalid_fields(), ["name", "currency", "timezone"]);
    assert_eq!(
        app.list_shops().await.body["shops"],
        json!([]),
        "nothing was created"
    );
}

#[tokio::test]
async fn unknown_and_malformed_shop_ids_are_not_found() {
    let app = TestApp::spawn().await;
    let unknown = uuid::Uuid::new_v4();
    app.get_shop(&unknown.to_string())
        .await
        .assert_problem(404, "NOT_FOUND");
    app.get_shop("not-a-uuid")
        .await
        .assert_problem(404, "NOT_FOUND");
}

#[tokio::test]
async fn staff_endpoints_refuse_missing_wrong_and_malformed_tokens() {
    let app = TestApp::spawn().await;
    let path = "/api/v1/shops";
    let body = json!({"name": "Diner", "currency": "USD"});
    let attempts = [
        app.request(Method::GET, path),
        app.request(Method::GET, path).bearer_auth("wrong"),
        app.request(Method::GET, path)
            .bearer_auth(format!("{STAFF_TOKEN}x")),
        app.request(Method::GET, path)
            .header("Authorization", STAFF_TOKEN),
        app.request(Method::GET, path)
            .basic_auth(STAFF_TOKEN, Some("")),
        app.request(Method::POST, path).json(&body),
    ];
    for attempt in attempts {
        let reply = TestApp::send(attempt).await;
        reply.assert_problem(401, "UNAUTHORIZED");
        assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
    }
    assert_eq!(
        app.list_shops().await.body["shops"],
        json!([]),
        "nothing was created"
    );
}

#[tokio::test]
async fn without_a_configured_token_staff_endpoints_refuse_everyone() {
    let app = TestApp::spawn_with(|s| s.staff_token = None).await;
    let reply = app.list_shops().await;
    reply.assert_problem(401, "UNAUTHORIZED");
    assert!(
        reply.body["detail"]
            .as_str()
            .unwrap()
            .contains("without a staff token")
    );
}
