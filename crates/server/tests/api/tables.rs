//! Tables over HTTP: created once with a permanent card link, found by the
//! card's code without credentials, seated by a session opened for them.

use futures_util::future::join_all;
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{TestApp, key};

async fn create_table(app: &TestApp, shop: &str, name: &str) -> crate::helpers::Reply {
    let path = format!("/api/v1/shops/{shop}/tables");
    TestApp::send(app.staff(Method::POST, &path).json(&json!({"name": name}))).await
}

fn code_of(table: &Value) -> String {
    let url = table["tableUrl"].as_str().unwrap();
    url.rsplit_once("/q/").unwrap().1.to_owned()
}

#[tokio::test]
async fn a_table_card_finds_the_party_seated_there() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let created = create_table(&app, &shop, " T4 ").await;
    let table = created.assert_status(201).clone();
    assert_eq!(
        (table["name"].clone(), table["sessionId"].clone()),
        (json!("T4"), json!(null))
    );
    let code = code_of(&table);
    assert_eq!(
        table["tableUrl"],
        format!("{}/q/{code}", app.base),
        "the public URL, for printing"
    );
    assert!(
        code.len() == 20 && code.bytes().all(|b| b.is_ascii_hexdigit()),
        "{code}"
    );

    let card = app.get(&format!("/api/v1/tables/{code}")).await;
    assert_eq!(
        card.assert_status(200),
        &json!({"shopId": shop, "tableName": "T4", "sessionId": null}),
        "anyone who scans the card, no credentials"
    );
    let opened = TestApp::send(
        app.staff(Method::POST, &format!("/api/v1/shops/{shop}/sessions"))
            .json(&json!({"tableId": table["tableId"]})),
    )
    .await;
    let session = opened.assert_status(201)["sessionId"].clone();
    assert_eq!(opened.body["tableLabel"], "T4");
    let card = app.get(&format!("/api/v1/tables/{code}")).await;
    assert_eq!(card.body["sessionId"], session);
    let listed =
        TestApp::send(app.staff(Method::GET, &format!("/api/v1/shops/{shop}/tables"))).await;
    assert_eq!(listed.assert_status(200)["tables"][0]["sessionId"], session);

    // Seated: the same table cannot be opened twice, by id or by name.
    for body in [
        json!({"tableId": table["tableId"]}),
        json!({"tableLabel": "T4"}),
    ] {
        let again = TestApp::send(
            app.staff(Method::POST, &format!("/api/v1/shops/{shop}/sessions"))
                .json(&body),
        )
        .await;
        again.assert_problem(409, "TABLE_OCCUPIED");
    }
    app.checkout(session.as_str().unwrap())
        .await
        .assert_status(200);
    let card = app.get(&format!("/api/v1/tables/{code}")).await;
    assert_eq!(card.body["sessionId"], json!(null), "free again");

    // The card's page is the guest page.
    let page = app.get(&format!("/q/{code}")).await;
    assert_eq!(page.status, 200);
    assert!(
        page.text.contains("<html"),
        "{}",
        &page.text[..100.min(page.text.len())]
    );
}

#[tokio::test]
async fn tables_are_named_once_and_bad_references_are_refused() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    create_table(&app, &shop, "T1").await.assert_status(201);
    let taken = create_table(&app, &shop, "T1").await;
    taken.assert_problem(409, "TABLE_NAME_TAKEN");
    assert_eq!(taken.body["name"], "T1");
    assert_eq!(
        create_table(&app, &shop, "").await.invalid_fields(),
        ["name"]
    );
    let sessions = format!("/api/v1/shops/{shop}/sessions");
    for (body, field) in [
        (json!({"tableId": Uuid::new_v4()}), "tableId"),
        (
            json!({"tableId": Uuid::new_v4(), "tableLabel": "T1"}),
            "tableId",
        ),
        (json!({}), "tableLabel"),
    ] {
        let refused = TestApp::send(app.staff(Method::POST, &sessions).json(&body)).await;
        assert_eq!(refused.invalid_fields(), [field], "{body}");
    }
    for code in ["0123456789abcdef0123", "not-a-code", "0123456789ABCDEF0123"] {
        app.get(&format!("/api/v1/tables/{code}"))
            .await
            .assert_problem(404, "NOT_FOUND");
    }
    let listed =
        TestApp::send(app.staff(Method::GET, &format!("/api/v1/shops/{shop}/tables"))).await;
    assert_eq!(
        listed.assert_status(200)["tables"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_table_created_under_a_key_is_created_once() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let path = format!("/api/v1/shops/{shop}/tables");
    let key = key();
    let send = || {
        TestApp::send(
            app.staff(Method::POST, &path)
                .header("Idempotency-Key", &key)
                .json(&json!({"name": "T7"})),
        )
    };
    let first = send().await;
    let again = send().await;
    assert_eq!(first.assert_status(201), again.assert_status(201));
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
}

#[tokio::test]
async fn staff_naming_one_table_at_once_create_it_once() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let replies = join_all((0..12).map(|_| create_table(&app, &shop, "Terrace 1"))).await;
    let created = replies.iter().filter(|r| r.status == 201).count();
    let taken = replies
        .iter()
        .filter(|r| r.status == 409 && r.body["code"] == "TABLE_NAME_TAKEN")
        .count();
    assert_eq!((created, taken), (1, 11));
    let listed =
        TestApp::send(app.staff(Method::GET, &format!("/api/v1/shops/{shop}/tables"))).await;
    assert_eq!(listed.body["tables"].as_array().unwrap().len(), 1);
}
