use reqwest::Method;
use serde_json::Value;

use crate::helpers::{STAFF_TOKEN, TestApp};

#[tokio::test]
async fn health_and_readiness_answer_without_auth() {
    let app = TestApp::spawn().await;
    assert_eq!(app.get("/healthz").await.status, 200);
    let ready = app.get("/readyz").await;
    assert_eq!((ready.status, ready.text.as_str()), (200, "ready"));
}

#[tokio::test]
async fn the_start_page_links_the_staff_pages_and_shows_no_data() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let page = app.get("/").await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(page.text.contains("/web/home.js") && page.text.contains("id=\"sign-in\""));
    assert!(
        !page.text.contains(&shop),
        "a shop's id on a page anyone can read"
    );
    assert!(page.header("content-security-policy").is_some());
}

#[tokio::test]
async fn metrics_count_requests_by_route_template() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    app.get_shop(&shop).await;
    let metrics = TestApp::send(app.staff(Method::GET, "/metrics")).await;
    assert_eq!(metrics.status, 200);
    assert!(
        metrics
            .text
            .contains(r#"ordergate_http_requests_total{method="GET",route="/api/v1/shops/{shopId}",status="200"} 1"#),
        "{}",
        metrics.text
    );
    assert!(
        metrics
            .text
            .contains("ordergate_http_request_duration_seconds_bucket")
    );
}

#[tokio::test]
async fn metrics_need_the_staff_or_metrics_token_unless_public() {
    const SCRAPER: &str = "prometheus-scrape-token";
    let app = TestApp::spawn_with(|s| s.metrics_token = Some(SCRAPER.into())).await;
    app.get("/metrics")
        .await
        .assert_problem(401, "UNAUTHORIZED");
    let wrong = app
        .request(Method::GET, "/metrics")
        .bearer_auth("prometheus-scrape-tokem");
    TestApp::send(wrong)
        .await
        .assert_problem(401, "UNAUTHORIZED");
    for token in [SCRAPER, STAFF_TOKEN] {
        let scrape = app.request(Method::GET, "/metrics").bearer_auth(token);
        let metrics = TestApp::send(scrape).await;
        assert_eq!(metrics.status, 200);
        assert!(metrics.text.contains("ordergate_http_requests_total"));
    }
    // A scraper's token opens nothing else.
    let shops = app
        .request(Method::GET, "/api/v1/shops")
        .bearer_auth(SCRAPER);
    TestApp::send(shops)
        .await
        .assert_problem(401, "UNAUTHORIZED");

    let public = TestApp::spawn_with(|s| s.metrics_public = true).await;
    assert_eq!(public.get("/metrics").await.status, 200);
}

#[tokio::test]
async fn openapi_document_is_3_1_and_lists_every_endpoint() {
    let app = TestApp::spawn().await;
    let reply = app.get("/api/v1/openapi.json").await;
    let doc = reply.assert_status(200);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths = doc["paths"].as_object().unwrap();
    let expected = [
        ("/healthz", "get"),
        ("/readyz", "get"),
        ("/metrics", "get"),
        ("/api/v1/openapi.json", "get"),
        ("/api/v1/shops", "post"),
        ("/api/v1/shops", "get"),
        ("/api/v1/shops/{shopId}", "get"),
        ("/api/v1/shops/{shopId}/catalog", "put"),
        ("/api/v1/shops/{shopId}/catalog", "get"),
        ("/api/v1/shops/{shopId}/menu", "get"),
        ("/api/v1/shops/{shopId}/inventory", "get"),
        ("/api/v1/shops/{shopId}/inventory/{itemId}", "put"),
        ("/api/v1/shops/{shopId}/inventory/{itemId}/restock", "post"),
        ("/api/v1/shops/{shopId}/inventory/log", "get"),
        ("/api/v1/shops/{shopId}/sessions", "post"),
        ("/api/v1/shops/{shopId}/sessions", "get"),
        ("/api/v1/sessions/{sessionId}", "get"),
        ("/api/v1/sessions/{sessionId}/checkout", "post"),
        ("/api/v1/sessions/{sessionId}/access", "post"),
        ("/api/v1/sessions/{sessionId}/unlock", "post"),
        ("/api/v1/sessions/{sessionId}/orders", "post"),
        ("/api/v1/sessions/{sessionId}/orders", "get"),
        ("/api/v1/sessions/{sessionId}/staff-orders", "post"),
        ("/api/v1/orders/{orderId}", "get"),
        ("/api/v1/shops/{shopId}/audit", "get"),
    ];
    for (path, method) in expected {
        assert!(
            paths[path][method].is_object(),
            "{method} {path} undocumented"
        );
    }
    // Shared refusals are documented from each operation's own traits.
    let create_shop = &paths["/api/v1/shops"]["post"]["responses"];
    for status in ["201", "400", "401", "413", "415", "422", "503"] {
        assert!(
            create_shop[status].is_object(),
            "POST /shops lacks {status}"
        );
    }
    let guest_view = &paths["/api/v1/sessions/{sessionId}"]["get"]["responses"];
    for status in ["200", "401", "404", "410", "429"] {
        assert!(
            guest_view[status].is_object(),
            "GET /sessions/{{id}} lacks {status}"
        );
    }
    assert_eq!(paths["/healthz"]["get"]["responses"]["503"], Value::Null);
}

#[tokio::test]
async fn everything_acknowledged_survives_a_restart() {
    let app = TestApp::spawn().await;
    let (shop, ids) = app.shop_with_menu().await;
    app.set_inventory(&shop, &ids.beer, serde_json::json!({"stock": 9}))
        .await
        .assert_status(200);
    let (session, pin) = app.table(&shop, "T1").await;
    let menu_before = app.menu(&shop).await;

    let app = app.restart().await;
    let menu_after = app.menu(&shop).await;
    assert_eq!(menu_after.body, menu_before.body);
    assert_eq!(menu_after.header("etag"), menu_before.header("etag"));
    app.guest_session(&session, &pin).await.assert_status(200);
    assert_eq!(
        app.inventory_log(&shop, "").await.body["entries"][0]["stockAfter"],
        9
    );
}
