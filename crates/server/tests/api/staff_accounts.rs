//! Staff accounts: owners add members, members sign in and out, and a
//! wrong password looks exactly like an unknown user, counted so that of
//! any number of attempts at once only the allowed few are judged.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Reply, TestApp};

const PASSWORD: &str = "correct horse battery staple";

async fn add_member(app: &TestApp, token: &str, shop: &str, body: Value) -> Reply {
    let path = format!("/api/v1/shops/{shop}/staff");
    TestApp::send(
        app.request(Method::POST, &path)
            .bearer_auth(token)
            .json(&body),
    )
    .await
}

async fn login(app: &TestApp, username: &str, password: &str) -> Reply {
    TestApp::send(
        app.request(Method::POST, "/api/v1/auth/login")
            .json(&json!({"username": username, "password": password})),
    )
    .await
}

async fn members(app: &TestApp, token: &str, shop: &str) -> Reply {
    let path = format!("/api/v1/shops/{shop}/staff");
    TestApp::send(app.request(Method::GET, &path).bearer_auth(token)).await
}

#[tokio::test]
async fn an_owner_adds_staff_who_sign_in_to_their_shop_and_out_again() {
    let app = TestApp::spawn().await;
    let (shop, other) = (app.shop().await, app.shop().await);
    let admin = crate::helpers::STAFF_TOKEN;
    let owner = add_member(
        &app,
        admin,
        &shop,
        json!({"username": " Kai ", "password": PASSWORD, "role": "owner"}),
    )
    .await;
    let owner = owner.assert_status(201).clone();
    assert_eq!(owner["username"], "kai");
    assert_eq!(owner["role"], "owner");

    let signed_in = login(&app, "KAI", PASSWORD).await;
    let body = signed_in.assert_status(200).clone();
    let token = body["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("og_staff_"));
    assert_eq!(body["account"]["accountId"], owner["accountId"]);
    assert_eq!(
        body["memberships"],
        json!([{"shopId": shop, "role": "owner"}])
    );

    // The owner adds a waiter, and lists the shop's staff.
    let waiter = add_member(
        &app,
        &token,
        &shop,
        json!({"username": "hana", "password": PASSWORD, "role": "floor"}),
    )
    .await;
    assert_eq!(waiter.assert_status(201)["role"], "floor");
    let listed = members(&app, &token, &shop).await;
    let names: Vec<&str> = listed.assert_status(200)["staff"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["username"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["hana", "kai"]);
    // A new role for a member: 200.
    let promoted = add_member(
        &app,
        &token,
        &shop,
        json!({"username": "hana", "role": "manager"}),
    )
    .await;
    assert_eq!(promoted.assert_status(200)["role"], "manager");

    // Another shop's staff is none of this owner's business, nor a waiter's.
    add_member(
        &app,
        &token,
        &other,
        json!({"username": "hana", "role": "floor"}),
    )
    .await
    .assert_problem(403, "FORBIDDEN");
    members(&app, &token, &other)
        .await
        .assert_problem(403, "FORBIDDEN");
    let hana = login(&app, "hana", PASSWORD).await.assert_status(200)["token"]
        .as_str()
        .unwrap()
        .to_owned();
    members(&app, &hana, &shop)
        .await
        .assert_problem(403, "FORBIDDEN");

    // Bad requests change nothing.
    for (body, status, code) in [
        (
            json!({"username": "hana", "password": PASSWORD, "role": "floor"}),
            409,
            "USERNAME_TAKEN",
        ),
        (
            json!({"username": "nobody-here", "role": "floor"}),
            404,
            "NOT_FOUND",
        ),
        (
            json!({"username": "x", "password": PASSWORD, "role": "floor"}),
            422,
            "VALIDATION_FAILED",
        ),
        (
            json!({"username": "ren", "password": "short", "role": "floor"}),
            422,
            "VALIDATION_FAILED",
        ),
        (
            json!({"username": "ren", "password": PASSWORD, "role": "admin"}),
            400,
            "MALFORMED_REQUEST",
        ),
    ] {
        add_member(&app, &token, &shop, body)
            .await
            .assert_problem(status, code);
    }
    assert_eq!(
        members(&app, &token, &shop).await.assert_status(200)["staff"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // Removed: the waiter's token no longer opens the shop.
    let hana_id = promoted.assert_status(200)["accountId"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/api/v1/shops/{shop}/staff/{hana_id}");
    let removed = TestApp::send(app.request(Method::DELETE, &path).bearer_auth(&token)).await;
    assert_eq!(removed.status, 204);
    TestApp::send(app.request(Method::DELETE, &path).bearer_auth(&token))
        .await
        .assert_problem(404, "NOT_FOUND");

    // Signed out: the token is refused from then on.
    let out = TestApp::send(
        app.request(Method::POST, "/api/v1/auth/logout")
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(out.status, 204);
    members(&app, &token, &shop)
        .await
        .assert_problem(401, "UNAUTHORIZED");
    members(&app, "og_staff_made-up", &shop)
        .await
        .assert_problem(401, "UNAUTHORIZED");
    let anonymous =
        TestApp::send(app.request(Method::GET, &format!("/api/v1/shops/{shop}/staff"))).await;
    anonymous.assert_problem(401, "UNAUTHORIZED");
}

#[tokio::test]
async fn a_wrong_password_and_an_unknown_user_get_the_same_answer_in_the_same_time() {
    // Enough attempts from one address for the comparison.
    let app = TestApp::spawn_with(|s| s.login_max_address_failures = 1_000).await;
    let shop = app.shop().await;
    let mut usernames = Vec::new();
    for n in 0..8 {
        let username = format!("cook{n}");
        add_member(
            &app,
            crate::helpers::STAFF_TOKEN,
            &shop,
            json!({"username": username, "password": PASSWORD, "role": "kitchen"}),
        )
        .await
        .assert_status(201);
        usernames.push(username);
    }
    let strip = |reply: &Reply| reply.text.clone();
    let wrong = login(&app, "cook0", "not the password at all").await;
    let unknown = login(&app, "no-such-cook", "not the password at all").await;
    wrong.assert_problem(401, "LOGIN_FAILED");
    assert_eq!(strip(&wrong), strip(&unknown), "byte for byte");

    // Each try alternates a known account (below its lockout) and an unknown
    // username; medians of many tries, compared with each other.
    let (mut known_times, mut unknown_times) = (Vec::new(), Vec::new());
    for round in 0..3 {
        for username in &usernames {
            let started = Instant::now();
            login(&app, username, "wrong password, again")
                .await
                .assert_problem(401, "LOGIN_FAILED");
            known_times.push(started.elapsed());
            let started = Instant::now();
            let stranger = format!("stranger-{round}-{username}");
            login(&app, &stranger, "wrong password, again")
                .await
                .assert_problem(401, "LOGIN_FAILED");
            unknown_times.push(started.elapsed());
        }
    }
    let median = |times: &mut Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    let (known, unknown) = (median(&mut known_times), median(&mut unknown_times));
    let ratio = known.as_secs_f64() / unknown.as_secs_f64();
    assert!(
        (0.5..2.0).contains(&ratio),
        "a wrong password took {known:?}, an unknown user {unknown:?}: the hash is skipped for one"
    );
}

#[tokio::test]
async fn fifty_attempts_at_once_judge_only_the_allowed_five_and_the_rest_wait() {
    // The address's own count (50 by default) is not what this is about.
    let app = TestApp::spawn_with(|s| s.login_max_address_failures = 100).await;
    let shop = app.shop().await;
    add_member(
        &app,
        crate::helpers::STAFF_TOKEN,
        &shop,
        json!({"username": "mei", "password": PASSWORD, "role": "manager"}),
    )
    .await
    .assert_status(201);
    let attempts = (0..50).map(|i| {
        let password = if i == 49 {
            PASSWORD.to_owned()
        } else {
            format!("guess {i} {}", Uuid::new_v4())
        };
        let app = &app;
        async move { login(app, "mei", &password).await }
    });
    let replies = join_all(attempts).await;
    let judged = replies
        .iter()
        .filter(|r| r.status == 401 || r.status == 200)
        .count();
    let locked: Vec<&Reply> = replies.iter().filter(|r| r.status == 429).collect();
    assert_eq!(
        judged,
        5,
        "{:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    assert_eq!(locked.len(), 45);
    for reply in &locked {
        reply.assert_problem(429, "LOGIN_LOCKED");
        let wait: u64 = reply.header("retry-after").unwrap().parse().unwrap();
        assert!((1..=900).contains(&wait), "{wait}");
    }
    // Locked, the right password too waits.
    login(&app, "mei", PASSWORD)
        .await
        .assert_problem(429, "LOGIN_LOCKED");
    // Another username from the same address is not locked by mei's count.
    login(&app, "someone-else", "whatever it is")
        .await
        .assert_problem(401, "LOGIN_FAILED");
}

async fn change_password(app: &TestApp, token: &str, current: &str, new: &str) -> Reply {
    let body = json!({"currentPassword": current, "newPassword": new});
    TestApp::send(
        app.request(Method::POST, "/api/v1/auth/password")
            .bearer_auth(token)
            .json(&body),
    )
    .await
}

#[tokio::test]
async fn a_new_password_signs_out_every_other_session_of_the_account() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    let admin = crate::helpers::STAFF_TOKEN;
    let body = json!({"username": "yui", "password": PASSWORD, "role": "manager"});
    add_member(&app, admin, &shop, body)
        .await
        .assert_status(201);
    let token = |reply: Reply| {
        reply.assert_status(200)["token"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let laptop = token(login(&app, "yui", PASSWORD).await);
    let phone = token(login(&app, "yui", PASSWORD).await);
    let mut phone_stream = crate::sse::SseStream::open(
        app.request(Method::GET, &format!("/api/v1/shops/{shop}/events"))
            .bearer_auth(&phone),
    )
    .await;

    // A wrong current password, or a short new one, changes nothing.
    let new = "a different long passphrase";
    let wrong = change_password(&app, &laptop, "not the password", new).await;
    assert_eq!(wrong.invalid_fields(), ["currentPassword"]);
    let short = change_password(&app, &laptop, PASSWORD, "short").await;
    assert_eq!(short.invalid_fields(), ["newPassword"]);
    assert_eq!(
        members(&app, &phone, &shop).await.status,
        403,
        "still signed in"
    );

    change_password(&app, &laptop, PASSWORD, new)
        .await
        .assert_status(204);
    // The laptop that changed it stays signed in; the phone is signed out
    // and its stream ends.
    let me = |token: String| {
        let app = &app;
        async move {
            TestApp::send(
                app.request(Method::GET, "/api/v1/auth/me")
                    .bearer_auth(token),
            )
            .await
        }
    };
    me(laptop.clone()).await.assert_status(200);
    me(phone).await.assert_problem(401, "UNAUTHORIZED");
    phone_stream.rest().await;
    login(&app, "yui", PASSWORD)
        .await
        .assert_problem(401, "LOGIN_FAILED");
    token(login(&app, "yui", new).await);

    // Devices and the administrator have no password to change.
    let path = format!("/api/v1/shops/{shop}/devices");
    let device = TestApp::send(
        app.request(Method::POST, &path)
            .bearer_auth(admin)
            .json(&json!({"name": "Pass", "role": "kitchen"})),
    )
    .await;
    let device = device.assert_status(201)["token"]
        .as_str()
        .unwrap()
        .to_owned();
    for token in [device.as_str(), admin] {
        change_password(&app, token, new, PASSWORD)
            .await
            .assert_problem(403, "FORBIDDEN");
    }
}
