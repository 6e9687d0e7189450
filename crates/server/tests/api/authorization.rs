//! The authorisation matrix of API.md "Staff accounts and roles", driven by
//! the served OpenAPI document: every staff operation, called with every
//! kind of credential (each role's account, a device of each device role,
//! an owner of another shop, none, and credentials that were revoked), is
//! refused with 401 or 403 and changes nothing, or is allowed and answers
//! 2xx. An operation the document has and this table lacks fails the test.

use std::collections::{BTreeMap, BTreeSet};

use image::ImageFormat;
use reqwest::{Method, RequestBuilder};
use serde_json::{Value, json};

use crate::helpers::{Menu, OrderBody, Reply, STAFF_TOKEN, TestApp, key};
use crate::photos::photo;
use crate::sse::SseStream;

const PASSWORD: &str = "correct horse battery staple";

/// Who may call an operation.
#[derive(Debug, Clone, Copy)]
enum May {
    /// Members of the shop in these roles (accounts and devices alike).
    Roles(&'static [&'static str]),
    /// Any live credential: what it sees is its own (`GET /shops`, sign-out).
    AnyCredential,
    /// The platform administrator alone.
    Platform,
    /// Signed-in accounts, whatever their role: what is a person's own.
    Accounts,
    /// A table's guests alone (their PIN or guest token): no staff
    /// credential opens a guest's own door.
    GuestsOnly,
}

const OWNER: May = May::Roles(&["owner"]);
const MANAGE: May = May::Roles(&["owner", "manager"]);
const FLOOR: May = May::Roles(&["owner", "manager", "floor"]);
const EVERY_ROLE: May = May::Roles(&["owner", "manager", "floor", "kitchen"]);

/// Every staff operation and who may call it: API.md's roles, written out.
const MATRIX: [(&str, &str, May); 45] = [
    ("post", "/api/v1/auth/logout", May::AnyCredential),
    ("get", "/api/v1/auth/me", May::AnyCredential),
    ("post", "/api/v1/auth/password", May::Accounts),
    ("get", "/api/v1/shops", May::AnyCredential),
    ("post", "/api/v1/shops", May::Platform),
    ("get", "/metrics", May::Platform),
    ("patch", "/api/v1/shops/{shopId}", MANAGE),
    ("get", "/api/v1/shops/{shopId}/staff", OWNER),
    ("post", "/api/v1/shops/{shopId}/staff", OWNER),
    ("delete", "/api/v1/shops/{shopId}/staff/{accountId}", OWNER),
    ("get", "/api/v1/shops/{shopId}/devices", MANAGE),
    ("post", "/api/v1/shops/{shopId}/devices", MANAGE),
    (
        "delete",
        "/api/v1/shops/{shopId}/devices/{deviceId}",
        MANAGE,
    ),
    // The kitchen display reads its stations from the catalog.
    ("get", "/api/v1/shops/{shopId}/catalog", EVERY_ROLE),
    ("put", "/api/v1/shops/{shopId}/catalog", MANAGE),
    ("post", "/api/v1/shops/{shopId}/images", MANAGE),
    ("get", "/api/v1/shops/{shopId}/inventory", MANAGE),
    ("get", "/api/v1/shops/{shopId}/inventory/log", MANAGE),
    ("put", "/api/v1/shops/{shopId}/inventory/{itemId}", MANAGE),
    (
        "post",
        "/api/v1/shops/{shopId}/inventory/{itemId}/restock",
        MANAGE,
    ),
    ("get", "/api/v1/shops/{shopId}/printers", MANAGE),
    ("post", "/api/v1/shops/{shopId}/printers", MANAGE),
    ("delete", "/api/v1/printers/{printerId}", MANAGE),
    ("post", "/api/v1/printers/{printerId}/reprint", MANAGE),
    ("get", "/api/v1/shops/{shopId}/audit", MANAGE),
    ("get", "/api/v1/shops/{shopId}/tables", FLOOR),
    ("post", "/api/v1/shops/{shopId}/tables", FLOOR),
    ("get", "/api/v1/shops/{shopId}/sessions", FLOOR),
    ("post", "/api/v1/shops/{shopId}/sessions", FLOOR),
    ("get", "/api/v1/sessions/{sessionId}", FLOOR),
    ("get", "/api/v1/sessions/{sessionId}/orders", FLOOR),
    ("get", "/api/v1/sessions/{sessionId}/events", FLOOR),
    ("post", "/api/v1/sessions/{sessionId}/staff-orders", FLOOR),
    ("post", "/api/v1/sessions/{sessionId}/unlock", FLOOR),
    ("post", "/api/v1/sessions/{sessionId}/checkout", FLOOR),
    ("get", "/api/v1/shops/{shopId}/orders", EVERY_ROLE),
    ("get", "/api/v1/shops/{shopId}/events", EVERY_ROLE),
    ("get", "/api/v1/orders/{orderId}", EVERY_ROLE),
    ("post", "/api/v1/orders/{orderId}/status", EVERY_ROLE),
    ("post", "/api/v1/orders/{orderId}/recall", EVERY_ROLE),
    ("get", "/api/v1/shops/{shopId}/service-requests", EVERY_ROLE),
    (
        "post",
        "/api/v1/sessions/{sessionId}/service-requests",
        EVERY_ROLE,
    ),
    (
        "post",
        "/api/v1/service-requests/{requestId}/ack",
        EVERY_ROLE,
    ),
    // Guests' own operations, which staff do not take over.
    (
        "post",
        "/api/v1/sessions/{sessionId}/orders",
        May::GuestsOnly,
    ),
    (
        "post",
        "/api/v1/sessions/{sessionId}/access",
        May::GuestsOnly,
    ),
];

/// How an operation is called, as the document says.
#[derive(Debug, Clone, Copy)]
struct Shape {
    has_body: bool,
    /// Guests may call it with the table's PIN.
    takes_pin: bool,
    /// Only the PIN opens it.
    pin_only: bool,
}

fn assert_problem(reply: &Reply, status: u16, code: &str, what: &str) {
    assert_eq!(
        (
            reply.status,
            reply.body["code"].as_str().unwrap_or_default()
        ),
        (status, code),
        "{what}: {}",
        reply.text
    );
}

/// A credential and the role it has in the shop under test.
struct Caller {
    name: String,
    token: String,
    role: Option<&'static str>,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Admin,
    Account,
    Device,
}

/// The shop under test, with one of everything an operation can name.
struct World {
    shop: String,
    menu: Menu,
    session: String,
    order: String,
    printer: String,
    request: String,
    member: String,
    device: String,
}

fn send_as(app: &TestApp, token: &str, method: Method, path: &str) -> RequestBuilder {
    app.request(method, path).bearer_auth(token)
}

async fn add_member(app: &TestApp, shop: &str, username: &str, role: &str) -> Value {
    let path = format!("/api/v1/shops/{shop}/staff");
    let body = json!({"username": username, "password": PASSWORD, "role": role});
    let reply = TestApp::send(app.staff(Method::POST, &path).json(&body)).await;
    reply.assert_status(201).clone()
}

async fn sign_in(app: &TestApp, username: &str) -> String {
    let body = json!({"username": username, "password": PASSWORD});
    let reply = TestApp::send(app.request(Method::POST, "/api/v1/auth/login").json(&body)).await;
    reply.assert_status(200)["token"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn add_device(app: &TestApp, shop: &str, name: &str, role: &str) -> Value {
    let path = format!("/api/v1/shops/{shop}/devices");
    let body = json!({"name": name, "role": role});
    let reply = TestApp::send(app.staff(Method::POST, &path).json(&body)).await;
    reply.assert_status(201).clone()
}

fn text(value: &Value, field: &str) -> String {
    value[field].as_str().unwrap().to_owned()
}

async fn fresh_order(app: &TestApp, world: &World) -> String {
    let body = OrderBody::new()
        .line(&world.menu.soup, 1)
        .allow_repeat()
        .json();
    let reply = app.staff_order(&world.session, Some(&key()), &body).await;
    text(reply.assert_status(201), "orderId")
}

async fn fresh_printer(app: &TestApp, shop: &str) -> String {
    let path = format!("/api/v1/shops/{shop}/printers");
    let name = format!("P-{}", &key()[..8]);
    let body = json!({"name": name, "address": "127.0.0.1:9"});
    let reply = app.staff_post(&path, None, Some(&body)).await;
    text(reply.assert_status(201), "printerId")
}

async fn world(app: &TestApp) -> World {
    let (shop, menu) = app.shop_with_menu().await;
    app.set_inventory(&shop, &menu.curry, json!({"stock": 1000}))
        .await
        .assert_status(200);
    let (session, _) = app.table(&shop, "T1").await;
    let mut world = World {
        shop,
        menu,
        session,
        order: String::new(),
        printer: String::new(),
        request: String::new(),
        member: String::new(),
        device: String::new(),
    };
    world.order = fresh_order(app, &world).await;
    world.printer = fresh_printer(app, &world.shop).await;
    let path = format!("/api/v1/sessions/{}/service-requests", world.session);
    let call = app
        .staff_post(&path, None, Some(&json!({"kind": "call"})))
        .await;
    world.request = text(call.assert_status(201), "requestId");
    world.member = text(
        &add_member(app, &world.shop, "bystander", "floor").await,
        "accountId",
    );
    world.device = text(
        &add_device(app, &world.shop, "Spare", "kitchen").await,
        "deviceId",
    );
    world
}

/// The path of `template` in the world, naming its standing resources.
fn path_in(world: &World, template: &str) -> String {
    template
        .replace("{shopId}", &world.shop)
        .replace("{sessionId}", &world.session)
        .replace("{orderId}", &world.order)
        .replace("{printerId}", &world.printer)
        .replace("{requestId}", &world.request)
        .replace("{itemId}", &world.menu.curry)
        .replace("{accountId}", &world.member)
        .replace("{deviceId}", &world.device)
}

/// Everything staff can see of the shop: what a refusal must leave alone.
async fn everything(app: &TestApp, world: &World) -> Value {
    let shop = &world.shop;
    let mut seen = serde_json::Map::new();
    for path in [
        "/api/v1/shops".to_owned(),
        format!("/api/v1/shops/{shop}"),
        format!("/api/v1/shops/{shop}/catalog"),
        format!("/api/v1/shops/{shop}/inventory"),
        format!("/api/v1/shops/{shop}/inventory/log"),
        format!("/api/v1/shops/{shop}/sessions"),
        format!("/api/v1/shops/{shop}/orders"),
        format!("/api/v1/shops/{shop}/audit"),
        format!("/api/v1/shops/{shop}/tables"),
        format!("/api/v1/shops/{shop}/printers"),
        format!("/api/v1/shops/{shop}/service-requests"),
        format!("/api/v1/shops/{shop}/staff"),
        format!("/api/v1/shops/{shop}/devices"),
    ] {
        let reply = TestApp::send(app.staff(Method::GET, &path)).await;
        let mut body = reply.assert_status(200).clone();
        // Printers' live state moves by itself (their worker keeps trying).
        if let Some(printers) = body.get_mut("printers").and_then(Value::as_array_mut) {
            for printer in printers {
                let id = printer["printerId"].clone();
                *printer = json!({"printerId": id});
            }
        }
        seen.insert(path, body);
    }
    Value::Object(seen)
}

/// Calls `template` as `token` against the world's standing resources,
/// with a body that would do if the caller were allowed: the answer to a
/// caller who is not.
async fn refused(
    app: &TestApp,
    world: &World,
    token: Option<&str>,
    method: &str,
    template: &str,
    has_body: bool,
) -> Reply {
    let method: Method = method.to_uppercase().parse().unwrap();
    let mut request = app
        .request(method, &path_in(world, template))
        .header("Idempotency-Key", key());
    if has_body {
        request = request.json(&json!({}));
    }
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if template.ends_with("/events") {
        return match SseStream::try_open(request).await {
            Ok(_) => panic!("{template} opened a stream"),
            Err(reply) => reply,
        };
    }
    TestApp::send(request).await
}

/// A request that `template` answers 2xx to when the caller may: fresh
/// resources where the call uses one up.
async fn allowed(app: &TestApp, world: &World, token: &str, method: &str, template: &str) -> Reply {
    let shop = &world.shop;
    let unique = &key()[..8];
    let mut path = path_in(world, template);
    let mut body: Option<Value> = None;
    match (method, template) {
        ("post", "/api/v1/shops") => {
            body =
                Some(json!({"name": "Other Diner", "currency": "JPY", "timezone": "Asia/Tokyo"}));
        }
        ("patch", "/api/v1/shops/{shopId}") => body = Some(json!({"name": "Test Diner"})),
        ("post", "/api/v1/auth/password") => {
            body = Some(json!({"currentPassword": PASSWORD, "newPassword": PASSWORD}));
        }
        ("post", "/api/v1/shops/{shopId}/staff") => {
            body = Some(
                json!({"username": format!("new-{unique}"), "password": PASSWORD, "role": "floor"}),
            );
        }
        ("delete", "/api/v1/shops/{shopId}/staff/{accountId}") => {
            let member = add_member(app, shop, &format!("gone-{unique}"), "kitchen").await;
            path = format!("/api/v1/shops/{shop}/staff/{}", text(&member, "accountId"));
        }
        ("post", "/api/v1/shops/{shopId}/devices") => {
            body = Some(json!({"name": format!("Display {unique}"), "role": "kitchen"}));
        }
        ("delete", "/api/v1/shops/{shopId}/devices/{deviceId}") => {
            let device = add_device(app, shop, "Doomed", "floor").await;
            path = format!("/api/v1/shops/{shop}/devices/{}", text(&device, "deviceId"));
        }
        ("put", "/api/v1/shops/{shopId}/catalog") => body = Some(world.menu.catalog()),
        ("post", "/api/v1/shops/{shopId}/images") => {
            let request = app
                .request(Method::POST, &path)
                .bearer_auth(token)
                .header("Content-Type", "image/png")
                .body(photo(ImageFormat::Png, 8, 8));
            return TestApp::send(request).await;
        }
        ("put", "/api/v1/shops/{shopId}/inventory/{itemId}") => body = Some(json!({"stock": 1000})),
        ("post", "/api/v1/shops/{shopId}/inventory/{itemId}/restock") => {
            body = Some(json!({"quantity": 1}));
        }
        ("post", "/api/v1/shops/{shopId}/printers") => {
            body = Some(json!({"name": format!("P-{unique}"), "address": "127.0.0.1:9"}));
        }
        ("delete", "/api/v1/printers/{printerId}") => {
            path = format!("/api/v1/printers/{}", fresh_printer(app, shop).await);
        }
        ("post", "/api/v1/printers/{printerId}/reprint") => {
            body = Some(json!({"orderId": world.order}));
        }
        ("post", "/api/v1/shops/{shopId}/tables") => {
            body = Some(json!({"name": format!("Table {unique}")}))
        }
        ("post", "/api/v1/shops/{shopId}/sessions") => {
            body = Some(json!({"tableLabel": format!("S-{unique}")}));
        }
        ("post", "/api/v1/sessions/{sessionId}/staff-orders") => {
            body = Some(
                OrderBody::new()
                    .line(&world.menu.soup, 1)
                    .allow_repeat()
                    .json(),
            );
        }
        ("post", "/api/v1/sessions/{sessionId}/checkout") => {
            let (session, _) = app.table(shop, &format!("C-{unique}")).await;
            path = format!("/api/v1/sessions/{session}/checkout");
        }
        ("post", "/api/v1/orders/{orderId}/status") => {
            let order = fresh_order(app, world).await;
            path = format!("/api/v1/orders/{order}/status");
            body = Some(json!({"status": "preparing"}));
        }
        ("post", "/api/v1/orders/{orderId}/recall") => {
            let order = fresh_order(app, world).await;
            app.set_status(&order, "preparing").await.assert_status(200);
            app.set_status(&order, "ready").await.assert_status(200);
            path = format!("/api/v1/orders/{order}/recall");
            body = Some(json!({"expectedVersion": 3}));
        }
        ("post", "/api/v1/sessions/{sessionId}/service-requests") => {
            body = Some(json!({"kind": "bill"}))
        }
        _ => {}
    }
    let method: Method = method.to_uppercase().parse().unwrap();
    let mut request = send_as(app, token, method, &path).header("Idempotency-Key", key());
    if let Some(body) = &body {
        request = request.json(body);
    }
    if template.ends_with("/events") {
        return match SseStream::try_open(request).await {
            Ok(_) => Reply {
                status: 200,
                headers: Default::default(),
                body: Value::Null,
                text: String::new(),
            },
            Err(reply) => reply,
        };
    }
    TestApp::send(request).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_staff_operation_admits_exactly_the_roles_api_md_gives_it() {
    let app = TestApp::spawn().await;
    let world = world(&app).await;
    let other_shop = app.shop().await;

    // The document's operations that take a credential are the matrix's,
    // no more, no fewer; how each is called is read from the document.
    let document = app.get("/api/v1/openapi.json").await;
    let mut documented = BTreeSet::new();
    let mut shapes = BTreeMap::new();
    for (template, item) in document.assert_status(200)["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let schemes: Vec<&str> = operation["security"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|alternative| alternative.as_object()?.keys().next())
                .map(String::as_str)
                .collect();
            if schemes.is_empty() {
                continue;
            }
            let op = (method.clone(), template.clone());
            documented.insert(op.clone());
            let shape = Shape {
                has_body: operation.get("requestBody").is_some(),
                takes_pin: schemes.contains(&"sessionPin"),
                pin_only: schemes == ["sessionPin"],
            };
            shapes.insert(op, shape);
        }
    }
    let tabled: BTreeSet<(String, String)> = MATRIX
        .iter()
        .map(|(m, t, _)| ((*m).to_owned(), (*t).to_owned()))
        .collect();
    assert_eq!(
        documented.difference(&tabled).collect::<Vec<_>>(),
        Vec::<&(String, String)>::new(),
        "operations the matrix does not say who may call"
    );
    assert_eq!(
        tabled.difference(&documented).collect::<Vec<_>>(),
        Vec::<&(String, String)>::new(),
        "operations the document does not have"
    );

    // One account of each role, one device of each device role, and an
    // owner of another shop.
    let mut callers = Vec::new();
    for role in ["owner", "manager", "floor", "kitchen"] {
        add_member(&app, &world.shop, role, role).await;
        callers.push(Caller {
            name: format!("{role} account"),
            token: sign_in(&app, role).await,
            role: Some(role),
            kind: Kind::Account,
        });
    }
    for role in ["kitchen", "floor"] {
        let device = add_device(&app, &world.shop, &format!("{role} device"), role).await;
        callers.push(Caller {
            name: format!("{role} device"),
            token: text(&device, "token"),
            role: Some(role),
            kind: Kind::Device,
        });
    }
    add_member(&app, &other_shop, "elsewhere", "owner").await;
    let elsewhere = Caller {
        name: "owner of another shop".into(),
        token: sign_in(&app, "elsewhere").await,
        role: None,
        kind: Kind::Account,
    };

    // Credentials that were good and are no more: a revoked device, a
    // signed-out account, and a member removed from the only shop.
    let revoked_device = add_device(&app, &world.shop, "Revoked", "kitchen").await;
    let path = format!(
        "/api/v1/shops/{}/devices/{}",
        world.shop,
        text(&revoked_device, "deviceId")
    );
    TestApp::send(app.staff(Method::DELETE, &path))
        .await
        .assert_status(204);
    add_member(&app, &world.shop, "signed-out", "owner").await;
    let signed_out = sign_in(&app, "signed-out").await;
    TestApp::send(send_as(
        &app,
        &signed_out,
        Method::POST,
        "/api/v1/auth/logout",
    ))
    .await
    .assert_status(204);
    let removed = add_member(&app, &world.shop, "removed", "owner").await;
    let removed_token = sign_in(&app, "removed").await;
    let path = format!(
        "/api/v1/shops/{}/staff/{}",
        world.shop,
        text(&removed, "accountId")
    );
    TestApp::send(app.staff(Method::DELETE, &path))
        .await
        .assert_status(204);
    let dead = [text(&revoked_device, "token"), signed_out, removed_token];

    let admin = Caller {
        name: "administrator".into(),
        token: STAFF_TOKEN.to_owned(),
        role: None,
        kind: Kind::Admin,
    };

    // Every refusal first, and nothing moves.
    let before = everything(&app, &world).await;
    let mut refusals = 0;
    for (method, template, may) in MATRIX {
        let shape = shapes[&(method.to_owned(), template.to_owned())];
        let call = |token: Option<&str>| {
            let token = token.map(str::to_owned);
            let app = &app;
            let world = &world;
            async move {
                refused(
                    app,
                    world,
                    token.as_deref(),
                    method,
                    template,
                    shape.has_body,
                )
                .await
            }
        };
        // Without a credential an operation open to guests misses the PIN.
        let expected = if shape.takes_pin {
            "PIN_INVALID"
        } else {
            "UNAUTHORIZED"
        };
        call(None).await.assert_problem(401, expected);
        // A dead staff credential is no credential, unless only a PIN opens
        // the operation (then the PIN is what is missing).
        let expected = if shape.pin_only {
            "PIN_INVALID"
        } else {
            "UNAUTHORIZED"
        };
        for token in &dead {
            let reply = call(Some(token)).await;
            assert_problem(
                &reply,
                401,
                expected,
                &format!("{method} {template} revoked"),
            );
            refusals += 1;
        }
        let (forbidden, status, code): (Vec<&Caller>, u16, &str) = match may {
            May::AnyCredential => (vec![], 403, "FORBIDDEN"),
            May::Platform => (
                callers.iter().chain([&elsewhere]).collect(),
                403,
                "FORBIDDEN",
            ),
            May::Roles(roles) => {
                let others = callers.iter().filter(|c| !roles.contains(&c.role.unwrap()));
                (others.chain([&elsewhere]).collect(), 403, "FORBIDDEN")
            }
            May::GuestsOnly => {
                let everyone = callers.iter().chain([&elsewhere]);
                (everyone.collect(), 401, expected)
            }
            May::Accounts => {
                let others = callers
                    .iter()
                    .chain([&admin])
                    .filter(|c| c.kind != Kind::Account);
                (others.collect(), 403, "FORBIDDEN")
            }
        };
        for caller in forbidden {
            let reply = call(Some(&caller.token)).await;
            assert_problem(
                &reply,
                status,
                code,
                &format!("{method} {template} as {}", caller.name),
            );
            refusals += 1;
        }
    }
    assert!(refusals > 150, "only {refusals} refusals tried");
    assert_eq!(
        everything(&app, &world).await,
        before,
        "a refusal changed something"
    );

    // Then every allowed call, each answered 2xx; signing out comes last,
    // as it ends the credential.

    let mut ordered: Vec<&(&str, &str, May)> = MATRIX.iter().collect();
    ordered.sort_by_key(|(_, template, _)| *template == "/api/v1/auth/logout");
    for caller in callers.iter().chain([&admin, &elsewhere]) {
        for (method, template, may) in &ordered {
            let may_call = match (may, caller.role) {
                (May::AnyCredential, _) => true,
                (May::GuestsOnly, _) => false,
                (May::Accounts, _) => caller.kind == Kind::Account,
                (_, None) if caller.kind == Kind::Admin => true,
                (May::Roles(roles), Some(role)) => roles.contains(&role),
                _ => false,
            };
            if !may_call {
                continue;
            }
            let reply = allowed(&app, &world, &caller.token, method, template).await;
            assert!(
                (200..300).contains(&reply.status),
                "{method} {template} as {}: {} {}",
                caller.name,
                reply.status,
                reply.text
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn revoking_a_device_or_removing_a_member_ends_their_open_streams_at_once() {
    let app = TestApp::spawn().await;
    let world = world(&app).await;
    let device = add_device(&app, &world.shop, "Pass", "kitchen").await;
    let member = add_member(&app, &world.shop, "server", "floor").await;
    let member_token = sign_in(&app, "server").await;
    let shop_stream = |token: &str| {
        let path = format!("/api/v1/shops/{}/events?access_token={token}", world.shop);
        app.request(Method::GET, &path)
    };
    let mut display = SseStream::open(shop_stream(&text(&device, "token"))).await;
    let session_path = format!("/api/v1/sessions/{}/events", world.session);
    let mut tablet =
        SseStream::open(send_as(&app, &member_token, Method::GET, &session_path)).await;
    let mut kept = SseStream::open(app.shop_stream(&world.shop)).await;

    // Both streams are live: an order reaches them.
    let order = fresh_order(&app, &world).await;
    for stream in [&mut display, &mut tablet, &mut kept] {
        let placed = loop {
            let event = stream.next().await;
            if event.event == "order.placed" {
                break event;
            }
        };
        assert_eq!(placed.data["orderId"], order.as_str());
    }

    let started = std::time::Instant::now();
    let path = format!(
        "/api/v1/shops/{}/devices/{}",
        world.shop,
        text(&device, "deviceId")
    );
    TestApp::send(app.staff(Method::DELETE, &path))
        .await
        .assert_status(204);
    display.rest().await;
    let path = format!(
        "/api/v1/shops/{}/staff/{}",
        world.shop,
        text(&member, "accountId")
    );
    TestApp::send(app.staff(Method::DELETE, &path))
        .await
        .assert_status(204);
    tablet.rest().await;
    // Within the same node a revocation is checked at once, not at the
    // next periodic check.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "the streams ended only after {:?}",
        started.elapsed()
    );

    // Nor can they come back: the device's token and the removed member's
    // are refused on their next request.
    let again = SseStream::try_open(shop_stream(&text(&device, "token"))).await;
    again.err().unwrap().assert_problem(401, "UNAUTHORIZED");
    let again = TestApp::send(send_as(&app, &member_token, Method::GET, &session_path)).await;
    again.assert_problem(401, "UNAUTHORIZED");
    // The administrator's stream was not touched.
    fresh_order(&app, &world).await;
    loop {
        if kept.next().await.event == "order.placed" {
            break;
        }
    }
}

#[tokio::test]
async fn the_audit_and_inventory_logs_name_the_account_or_device_that_acted() {
    let app = TestApp::spawn().await;
    let world = world(&app).await;
    add_member(&app, &world.shop, "mika", "manager").await;
    let manager = sign_in(&app, "mika").await;
    let tablet = text(
        &add_device(&app, &world.shop, "Tablet 2", "floor").await,
        "token",
    );

    let restock = format!(
        "/api/v1/shops/{}/inventory/{}/restock",
        world.shop, world.menu.curry
    );
    let request = send_as(&app, &manager, Method::POST, &restock).json(&json!({"quantity": 5}));
    TestApp::send(request).await.assert_status(200);
    let order = format!("/api/v1/sessions/{}/staff-orders", world.session);
    let request = send_as(&app, &tablet, Method::POST, &order)
        .json(&OrderBody::new().line(&world.menu.curry, 2).json());
    let placed = TestApp::send(request).await;
    let order_id = text(placed.assert_status(201), "orderId");
    // The kitchen cancels it: the stock it puts back is the display's doing.
    let display = text(
        &add_device(&app, &world.shop, "Pass", "kitchen").await,
        "token",
    );
    let status = format!("/api/v1/orders/{order_id}/status");
    let request =
        send_as(&app, &display, Method::POST, &status).json(&json!({"status": "cancelled"}));
    TestApp::send(request).await.assert_status(200);

    let log = app.stock_log(&world.shop).await;
    let actors: Vec<(&str, i64)> = log
        .iter()
        .take(3)
        .map(|e| (e["actor"].as_str().unwrap(), e["delta"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        actors,
        [
            ("device:Pass", 2),
            ("device:Tablet 2", -2),
            ("account:mika", 5)
        ],
        "newest first"
    );
    let audit = app.audit_entries(&world.shop).await;
    let newest = &audit[0];
    assert_eq!(newest["orderId"], order_id.as_str());
    assert_eq!(newest["actor"], "device:Tablet 2");
    // The world's first order was the administrator's.
    let first = audit.last().unwrap();
    assert_eq!(first["orderId"], world.order.as_str());
    assert_eq!(first["actor"], "admin");
}

#[tokio::test]
async fn a_credential_learns_who_it_is_and_what_it_may_do_where() {
    let app = TestApp::spawn().await;
    let shop = app.shop().await;
    add_member(&app, &shop, "rin", "floor").await;
    let floor = sign_in(&app, "rin").await;
    let display = text(&add_device(&app, &shop, "Pass", "kitchen").await, "token");
    let me = |token: String| {
        let app = &app;
        async move {
            let reply = TestApp::send(send_as(app, &token, Method::GET, "/api/v1/auth/me")).await;
            reply.assert_status(200).clone()
        }
    };

    let account = me(floor).await;
    assert_eq!(account["kind"], "account");
    assert_eq!(account["account"]["username"], "rin");
    assert_eq!(
        account["shops"],
        json!([{"shopId": shop, "role": "floor", "may": ["tables", "sessions", "kitchen", "service"]}])
    );
    let device = me(display).await;
    assert_eq!(device["kind"], "device");
    assert_eq!(device["device"]["name"], "Pass");
    assert_eq!(
        device["shops"],
        json!([{"shopId": shop, "role": "kitchen", "may": ["kitchen", "service"]}])
    );
    let admin = me(STAFF_TOKEN.to_owned()).await;
    assert_eq!(admin, json!({"kind": "admin", "shops": []}));
}
