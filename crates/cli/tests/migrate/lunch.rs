//! A short lunch peak through the real server: orders from guests and
//! staff, replays, status moves and cancellations, restocks and 86s,
//! refusals, wrong PINs and closed tables. It keeps what a migrated
//! database must still answer the same way.

use reqwest::Method;
use serde_json::json;

use crate::support::{Frame, Http, Reply, Request, Shop};

/// A request whose idempotency key was used, with the replay the source
/// server answered it with.
pub struct Held {
    pub request: Request,
    pub replay: Reply,
}

pub struct Lunch {
    pub shops: Vec<Shop>,
    /// Every keyed request, replayed once on the source.
    pub held: Vec<Held>,
    /// Staff and guest reads, with what the source answered.
    pub views: Vec<(Request, Reply)>,
    /// Each shop's whole event stream as the source sent it.
    pub events: Vec<(String, Vec<Frame>)>,
    /// A table locked by wrong PINs, and one a wrong PIN away from it.
    pub locked: (String, String),
    pub nearly_locked: (String, String),
    /// An open table of the first shop: (session, PIN).
    pub open_table: (String, String),
    /// Each shop's photo: its id, and the rendition guests got.
    pub photos: Vec<(String, Vec<u8>)>,
}

const SHOPS: usize = 2;
const TABLES: usize = 4;
const ORDERS_PER_TABLE: usize = 4;

pub async fn lunch(http: &Http) -> Lunch {
    let mut keyed: Vec<(Request, Reply)> = Vec::new();
    let mut views = Vec::new();
    let mut shops = Vec::new();
    let mut locked = None;
    let mut nearly_locked = None;
    let mut open_table = None;
    for s in 0..SHOPS {
        let create = Request::staff(Method::POST, "/api/v1/shops").keyed();
        let (shop, create, created) = Shop::create(http, &format!("Lunch Diner {s}"), create).await;
        keyed.push((create, created));

        let mut tables = Vec::new();
        for t in 0..TABLES {
            let (session, pin, request, reply) = shop.open(http, &format!("T{t}"), t < 2).await;
            if t < 2 {
                keyed.push((request, reply));
            }
            tables.push((session, pin));
        }

        // Guests order, two phones a table.
        let mut orders = Vec::new();
        for n in 0..ORDERS_PER_TABLE {
            for (t, (session, pin)) in tables.iter().enumerate() {
                let client = if n % 2 == 0 { "phone-a" } else { "phone-b" };
                let request = shop.guest_order(session, pin, client, n + t);
                let reply = http.send(&request).await;
                orders.push(reply.ok(201)["orderId"].as_str().unwrap().to_owned());
                keyed.push((request, reply));
            }
        }
        // Staff order for a table, under a key.
        for (session, _) in tables.iter().take(2) {
            let request = Request::staff(
                Method::POST,
                format!("/api/v1/sessions/{session}/staff-orders"),
            )
            .keyed()
            .json(json!({"items": [{"menuItemId": shop.beer, "quantity": 1}]}));
            let reply = http.send(&request).await;
            orders.push(reply.ok(201)["orderId"].as_str().unwrap().to_owned());
            keyed.push((request, reply));
        }

        // The kitchen moves tickets along; two are cancelled (stock back).
        for (i, order) in orders.iter().enumerate().take(8) {
            let status = match i {
                0..=3 => "accepted",
                4 | 5 => "cancelled",
                _ => "ready",
            };
            let request = Request::staff(Method::POST, format!("/api/v1/orders/{order}/status"))
                .json(json!({"status": status}));
            let request = if i % 2 == 0 { request.keyed() } else { request };
            let reply = http.send(&request).await;
            reply.ok(200);
            if i % 2 == 0 {
                keyed.push((request, reply));
            }
        }

        // Stock: a restock, a new count, an 86 with an end and one without.
        let restock = Request::staff(
            Method::POST,
            format!("/api/v1/shops/{}/inventory/{}/restock", shop.id, shop.curry),
        )
        .keyed()
        .json(json!({"quantity": 5}));
        let reply = http.send(&restock).await;
        reply.ok(200);
        keyed.push((restock, reply));
        shop.set(http, &shop.beer, json!({"stock": 250})).await;
        let until = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
        shop.set(
            http,
            &shop.soup,
            json!({"soldOut": true, "soldOutUntil": until}),
        )
        .await;
        shop.set(http, &shop.egg, json!({"soldOut": true})).await;

        // Refusals leave audit rows and nothing else.
        let (session, pin) = &tables[2];
        let refused = http
            .send(
                &Request::new(Method::POST, format!("/api/v1/sessions/{session}/orders"))
                    .header("X-Session-PIN", pin)
                    .header("X-Client-Id", "phone-a")
                    .keyed()
                    .json(json!({"items": [{"menuItemId": shop.curry, "quantity": 1,
                                            "toppingIds": [shop.egg]}]})),
            )
            .await;
        assert_eq!(refused.status, 409, "{}", refused.text);

        // A table with a printed card is seated; one table asks for the
        // bill, another calls staff, who come.
        let create_table =
            Request::staff(Method::POST, format!("/api/v1/shops/{}/tables", shop.id))
                .keyed()
                .json(json!({"name": "Window"}));
        let reply = http.send(&create_table).await;
        let table = reply.ok(201);
        keyed.push((create_table, reply));
        let seat = Request::staff(Method::POST, format!("/api/v1/shops/{}/sessions", shop.id))
            .json(json!({"tableId": table["tableId"]}));
        http.send(&seat).await.ok(201);
        let code = table["tableUrl"]
            .as_str()
            .unwrap()
            .rsplit_once("/q/")
            .unwrap()
            .1;
        views.push(Request::new(Method::GET, format!("/api/v1/tables/{code}")));
        for (kind, (session, pin)) in ["bill", "call"].iter().zip(&tables[2..]) {
            let call = Request::new(
                Method::POST,
                format!("/api/v1/sessions/{session}/service-requests"),
            )
            .header("X-Session-PIN", pin)
            .keyed()
            .json(json!({"kind": kind}));
            let reply = http.send(&call).await;
            let request_id = reply.ok(201)["requestId"].as_str().unwrap().to_owned();
            keyed.push((call, reply));
            if *kind == "call" {
                let ack = Request::staff(
                    Method::POST,
                    format!("/api/v1/service-requests/{request_id}/ack"),
                );
                http.send(&ack).await.ok(200);
            }
        }

        // A kitchen printer is added (it is away: its tickets wait, and its
        // state changes by the second, so only its creation is compared).
        let add_printer =
            Request::staff(Method::POST, format!("/api/v1/shops/{}/printers", shop.id))
                .keyed()
                .json(json!({"name": "Pass", "address": "127.0.0.1:9", "station": "grill"}));
        let reply = http.send(&add_printer).await;
        reply.ok(201);
        keyed.push((add_printer, reply));

        // The shop's owner gets an account.
        let owner = Request::staff(Method::POST, format!("/api/v1/shops/{}/staff", shop.id)).json(
            json!({"username": format!("owner-{s}"), "password": "a long enough passphrase",
                         "role": "owner"}),
        );
        http.send(&owner).await.ok(201);
        // And a kitchen display signed in for good: its token must still
        // open the shop after the move.
        let display = Request::staff(Method::POST, format!("/api/v1/shops/{}/devices", shop.id))
            .json(json!({"name": "Pass display", "role": "kitchen"}));
        let display = http.send(&display).await;
        let display_token = display.ok(201)["token"].as_str().unwrap().to_owned();

        // Two tables pay and leave; their orders' keys still replay.
        for (session, _) in tables.iter().take(2) {
            let checkout =
                Request::staff(Method::POST, format!("/api/v1/sessions/{session}/checkout"))
                    .keyed();
            let reply = http.send(&checkout).await;
            reply.ok(200);
            keyed.push((checkout, reply));
        }

        if s == 0 {
            // A table locked by wrong PINs, and one a wrong PIN short of it.
            let (session, pin, _, _) = shop.open(http, "T8", false).await;
            for _ in 0..5 {
                wrong_pin(http, &session, &pin).await;
            }
            locked = Some((session, pin));
            let (session, pin, _, _) = shop.open(http, "T9", false).await;
            for _ in 0..4 {
                wrong_pin(http, &session, &pin).await;
            }
            nearly_locked = Some((session, pin));
            open_table = Some(tables[3].clone());
        }

        let id = &shop.id;
        for path in [
            format!("/api/v1/shops/{id}"),
            format!("/api/v1/shops/{id}/catalog"),
            format!("/api/v1/shops/{id}/inventory"),
            format!("/api/v1/shops/{id}/inventory/log?limit=500"),
            format!("/api/v1/shops/{id}/sessions?limit=500"),
            format!("/api/v1/shops/{id}/orders?limit=500"),
            format!("/api/v1/sessions/{}/orders?limit=500", tables[0].0),
            format!("/api/v1/shops/{id}/tables"),
            format!("/api/v1/shops/{id}/service-requests"),
            format!("/api/v1/shops/{id}/staff"),
            format!("/api/v1/shops/{id}/devices"),
        ] {
            views.push(Request::staff(Method::GET, path));
        }
        views.push(
            Request::new(Method::GET, format!("/api/v1/shops/{id}/orders?limit=500"))
                .header("Authorization", &format!("Bearer {display_token}")),
        );
        for menu in ["menu", "menu?lang=ja"] {
            views.push(Request::new(
                Method::GET,
                format!("/api/v1/shops/{id}/{menu}"),
            ));
        }
        shops.push(shop);
    }
    views.push(Request::staff(Method::GET, "/api/v1/shops"));

    // Every key is retried once: the answer a client retrying it gets.
    let mut held = Vec::new();
    for (request, first) in keyed {
        let replay = http.send(&request).await;
        assert_eq!(replay.status, first.status, "{}", replay.text);
        held.push(Held { request, replay });
    }
    // The audit trail is read last: it has the replays' rows too.
    for shop in &shops {
        views.push(Request::staff(
            Method::GET,
            format!("/api/v1/shops/{}/audit?limit=500", shop.id),
        ));
    }
    let mut answered = Vec::new();
    for request in views {
        let reply = http.send(&request).await;
        assert_eq!(reply.status, 200, "{}: {}", request.path, reply.text);
        answered.push((request, reply));
    }
    let mut photos = Vec::new();
    for shop in &shops {
        photos.push((shop.photo.clone(), http.photo(&shop.photo).await));
    }
    let mut events = Vec::new();
    for shop in &shops {
        let frames = http.events_after(&shop.id, 0, None).await;
        assert!(frames.len() > 50, "a busy lunch: {} events", frames.len());
        events.push((shop.id.clone(), frames));
    }
    Lunch {
        shops,
        held,
        views: answered,
        events,
        locked: locked.unwrap(),
        nearly_locked: nearly_locked.unwrap(),
        open_table: open_table.unwrap(),
        photos,
    }
}

async fn wrong_pin(http: &Http, session: &str, pin: &str) {
    let wrong = if pin == "000000" { "000001" } else { "000000" };
    let reply = http
        .send(
            &Request::new(Method::GET, format!("/api/v1/sessions/{session}"))
                .header("X-Session-PIN", wrong),
        )
        .await;
    assert!(matches!(reply.status, 401 | 429), "{}", reply.text);
}
