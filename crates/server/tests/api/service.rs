//! Service requests over HTTP: a table calls staff or asks for the bill,
//! the shop's stream and the table's own stream hear it, staff acknowledge
//! it, and a guest's double tap calls staff once.

use futures_util::future::join_all;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Reply, TestApp, key, wrong_pin};
use crate::sse::SseStream;

async fn call(app: &TestApp, session: &str, pin: &str, kind: &str) -> Reply {
    let path = format!("/api/v1/sessions/{session}/service-requests");
    TestApp::send(
        app.guest(Method::POST, &path, pin)
            .json(&json!({"kind": kind})),
    )
    .await
}

async fn acknowledge(app: &TestApp, request: &Value) -> Reply {
    let id = request["requestId"].as_str().unwrap();
    let path = format!("/api/v1/service-requests/{id}/ack");
    TestApp::send(app.staff(Method::POST, &path)).await
}

async fn list(app: &TestApp, shop: &str, query: &str) -> Reply {
    let path = format!("/api/v1/shops/{shop}/service-requests{query}");
    TestApp::send(app.staff(Method::GET, &path)).await
}

fn ids(listed: &Reply) -> Vec<Value> {
    listed.assert_status(200)["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["requestId"].clone())
        .collect()
}

#[tokio::test]
async fn a_call_reaches_staff_once_and_the_guest_hears_it_acknowledged() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let (other, other_pin) = app.table(&shop, "T2").await;
    let mut staff = app.follow_shop(&shop, None).await;
    let mut guest = SseStream::open(app.session_stream(&session, &pin)).await;
    let mut neighbour = SseStream::open(app.session_stream(&other, &other_pin)).await;

    // Ten taps at once: one request, the other nine are that request.
    let taps = join_all((0..10).map(|_| call(&app, &session, &pin, "call"))).await;
    let created: Vec<&Reply> = taps.iter().filter(|r| r.status == 201).collect();
    assert_eq!(
        created.len(),
        1,
        "{:?}",
        taps.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    let first = created[0].body.clone();
    for tap in &taps {
        assert_eq!(tap.assert_status(tap.status), &first);
    }
    assert_eq!(
        (
            first["kind"].clone(),
            first["status"].clone(),
            first["tableLabel"].clone()
        ),
        (json!("call"), json!("open"), json!("T1"))
    );
    assert_eq!(first["acknowledgedAt"], json!(null));
    // The bill is another request, open beside the call.
    let bill = call(&app, &session, &pin, "bill").await;
    let bill = bill.assert_status(201).clone();
    assert_ne!(bill["requestId"], first["requestId"]);
    assert_eq!(
        ids(&list(&app, &shop, "?status=open").await),
        [first["requestId"].clone(), bill["requestId"].clone()],
        "oldest first"
    );

    let acknowledged = acknowledge(&app, &first).await;
    let acknowledged = acknowledged.assert_status(200).clone();
    assert_eq!(acknowledged["status"], "acknowledged");
    assert!(acknowledged["acknowledgedAt"].is_string());
    let again = acknowledge(&app, &first).await;
    assert_eq!(again.assert_status(200), &acknowledged, "changes nothing");
    assert_eq!(
        ids(&list(&app, &shop, "?status=open").await),
        [bill["requestId"].clone()]
    );
    assert_eq!(
        ids(&list(&app, &shop, "?status=acknowledged").await),
        [first["requestId"].clone()]
    );
    assert_eq!(ids(&list(&app, &shop, "").await).len(), 2);
    // Once acknowledged, calling again calls staff again.
    let recalled = call(&app, &session, &pin, "call").await;
    assert_ne!(recalled.assert_status(201)["requestId"], first["requestId"]);

    let heard = staff.take(4).await;
    let types: Vec<&str> = heard.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(
        types,
        [
            "service.requested",
            "service.requested",
            "service.acknowledged",
            "service.requested"
        ]
    );
    assert_eq!(heard[0].data, first);
    assert_eq!(heard[2].data, acknowledged);
    assert_eq!(guest.take(4).await, heard, "the table hears its own");
    app.checkout(&other).await.assert_status(200);
    assert!(
        neighbour
            .rest()
            .await
            .iter()
            .all(|e| !e.event.starts_with("service.")),
        "another table hears nothing of it"
    );
}

#[tokio::test]
async fn a_keyed_call_replays_and_a_closed_or_unknown_table_calls_nobody() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let (session, pin) = app.table(&shop, "T1").await;
    let path = format!("/api/v1/sessions/{session}/service-requests");
    let keyed = |k: &str, kind: &str| {
        app.guest(Method::POST, &path, &pin)
            .header("Idempotency-Key", k)
            .json(&json!({"kind": kind}))
    };
    let k = key();
    let first = TestApp::send(keyed(&k, "bill")).await;
    let first_body = first.assert_status(201).clone();
    assert!(!first.replayed());
    let retry = TestApp::send(keyed(&k, "bill")).await;
    assert_eq!(
        retry.assert_status(201),
        &first_body,
        "the first answer, again"
    );
    assert!(retry.replayed());
    TestApp::send(keyed(&k, "call"))
        .await
        .assert_problem(422, "IDEMPOTENCY_KEY_REUSED");
    TestApp::send(keyed("not-a-uuid", "call"))
        .await
        .assert_problem(400, "IDEMPOTENCY_KEY_INVALID");

    for body in [
        json!({"kind": "dessert"}),
        json!({}),
        json!({"kind": "call", "x": 1}),
    ] {
        let refused = TestApp::send(app.guest(Method::POST, &path, &pin).json(&body)).await;
        assert_eq!(refused.status, 400, "{body}");
        refused.assert_problem(400, "MALFORMED_REQUEST");
    }
    call(&app, &session, wrong_pin(&pin), "call")
        .await
        .assert_problem(401, "PIN_INVALID");
    let unknown = uuid::Uuid::new_v4();
    TestApp::send(
        app.staff(
            Method::POST,
            &format!("/api/v1/sessions/{unknown}/service-requests"),
        )
        .json(&json!({"kind": "call"})),
    )
    .await
    .assert_problem(404, "NOT_FOUND");
    TestApp::send(app.staff(
        Method::POST,
        &format!("/api/v1/service-requests/{unknown}/ack"),
    ))
    .await
    .assert_problem(404, "NOT_FOUND");
    TestApp::send(app.request(
        Method::POST,
        &format!(
            "/api/v1/service-requests/{}/ack",
            first_body["requestId"].as_str().unwrap()
        ),
    ))
    .await
    .assert_problem(401, "UNAUTHORIZED");
    list(&app, &shop, "?status=waiting")
        .await
        .assert_problem(422, "VALIDATION_FAILED");

    let before = app.count_rows("service_requests").await;
    app.checkout(&session).await.assert_status(200);
    TestApp::send(
        app.staff(Method::POST, &path)
            .json(&json!({"kind": "call"})),
    )
    .await
    .assert_problem(410, "SESSION_CLOSED");
    assert_eq!(app.count_rows("service_requests").await, before);
}
