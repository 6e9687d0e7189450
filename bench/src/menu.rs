//! Warm menu reads of a restaurant-sized menu: 500 items with option
//! groups, every text in three languages, `GET
//! /api/v1/shops/{shopId}/menu?lang=…` from every client (the three
//! languages in turn), closed loop, against a bare endpoint serving a body
//! of the same size; and the server's own count of menu cache misses
//! (reads that went to the database), which must not grow while the menu
//! is warm (DESIGN.md: "steady-state menu reads make no database query").

use std::sync::Arc;

use anyhow::Context;
use axum::body::Bytes;
use axum::routing::get;
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::Args;
use crate::load::{Figure, MakeRequest, drive};
use crate::references::LocalApp;
use crate::report::{Report, Row, Verdict};
use crate::server::{STAFF_TOKEN, metric};

const MISSES: &str = "ordergate_menu_cache_misses_total";
const ITEMS: usize = 500;
const LANGUAGES: [&str; 3] = ["ja", "en", "zh-Hant"];

pub async fn run(args: &Args, base: &str, report: &mut Report) -> anyhow::Result<()> {
    let shop_id = seed_big_menu(base).await?;
    let url = |lang: &str| format!("{base}/api/v1/shops/{shop_id}/menu?lang={lang}");
    // Warm the cache in every language, and keep the English body: the
    // reference serves one of its size.
    let mut english = Bytes::new();
    for lang in LANGUAGES {
        let first = reqwest::get(url(lang)).await?;
        anyhow::ensure!(first.status() == StatusCode::OK, "menu: {}", first.status());
        let body = first.bytes().await?;
        if lang == "en" {
            english = body;
        }
    }
    eprintln!(
        "[menu] bare endpoint serving a {} KiB body, {} clients …",
        english.len() / 1024,
        args.clients
    );
    let bare = bare_body(args, english.clone()).await?;
    let before = metric(base, MISSES, &shop_id).await?;
    eprintln!(
        "[menu] warm menu GETs ({ITEMS} items, 3 languages), {} clients …",
        args.clients
    );
    let urls: Arc<Vec<String>> = Arc::new(LANGUAGES.iter().map(|lang| url(lang)).collect());
    let make: MakeRequest =
        Arc::new(move |client, w, n| client.get(&urls[(w + n as usize) % urls.len()]));
    let figure = drive(
        args.clients,
        args.warmup(),
        args.duration(),
        make,
        json_body,
    )
    .await?;
    let after = metric(base, MISSES, &shop_id).await?;
    report.push(Row::reference(
        &format!("bare endpoint, {} KiB body", english.len() / 1024),
        &bare,
    ));
    report.push(Row::ratio(
        "warm menu GETs (500 items, 3 languages)",
        &figure,
        ("bare, same body size", &bare),
        0.5,
    ));
    let grew = after - before;
    report.push(
        Row::info(
            "  menu cache misses during warm GETs",
            format!("+{grew:.0}"),
        )
        .target("+0", grew == 0.0)
        .verdict(Verdict::pass_if(grew == 0.0))
        .note(format!(
            "{MISSES} for the shop: {before:.0} after one priming GET per language, {after:.0} \
             after the warm-up and measured window"
        )),
    );
    Ok(())
}

fn json_body(
    status: StatusCode,
    _: &reqwest::header::HeaderMap,
    body: &[u8],
) -> Result<(), String> {
    if status == StatusCode::OK && body.starts_with(b"{") {
        Ok(())
    } else {
        Err(format!(
            "{status} {}",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        ))
    }
}

/// A GET answered with `body` from memory: HTTP and the bytes alone.
async fn bare_body(args: &Args, body: Bytes) -> anyhow::Result<Figure> {
    let app = axum::Router::new().route(
        "/menu",
        get(move || {
            let body = body.clone();
            async move { ([("content-type", "application/json")], body) }
        }),
    );
    let server = LocalApp::serve(app).await?;
    let url = format!("{}/menu", server.base);
    let make: MakeRequest = Arc::new(move |client, _, _| client.get(&url));
    let figure = drive(
        args.clients,
        args.warmup(),
        args.duration(),
        make,
        json_body,
    )
    .await;
    server.stop().await?;
    figure
}

/// A shop whose menu is a restaurant's whole: 500 items in 25 categories,
/// each with a description, allergens and tags, a required and an
/// optional option group, every text in Japanese, English and Chinese.
async fn seed_big_menu(base: &str) -> anyhow::Result<String> {
    let client = Client::new();
    let created = client
        .post(format!("{base}/api/v1/shops"))
        .bearer_auth(STAFF_TOKEN)
        .json(
            &json!({"name": "Bench Izakaya", "currency": "JPY", "timezone": "Asia/Tokyo",
                      "languages": LANGUAGES}),
        )
        .send()
        .await?;
    anyhow::ensure!(
        created.status() == StatusCode::CREATED,
        "shop: {}",
        created.status()
    );
    let shop: Value = created.json().await?;
    let shop_id = shop["shopId"].as_str().context("shopId")?.to_owned();
    let catalog = big_catalog();
    let put = client
        .put(format!("{base}/api/v1/shops/{shop_id}/catalog"))
        .bearer_auth(STAFF_TOKEN)
        .json(&catalog)
        .send()
        .await?;
    let status = put.status();
    anyhow::ensure!(
        status == StatusCode::OK,
        "catalog: {status} {}",
        put.text().await?
    );
    Ok(shop_id)
}

/// One text in every language.
fn text(what: &str, n: usize) -> Value {
    json!({"ja": format!("{what}その{n}"), "en": format!("{what} number {n}"),
           "zh-Hant": format!("{what}第{n}號")})
}

fn big_catalog() -> Value {
    let items: Vec<Value> = (0..ITEMS)
        .map(|i| {
            let option = |kind: &str, o: usize, price: usize| {
                json!({"optionId": Uuid::new_v4(), "name": text(kind, o), "price": price})
            };
            json!({
                "menuItemId": Uuid::new_v4(),
                "name": text("Dish", i),
                "description": text(
                    "Seasonal, grilled over charcoal, served with pickles and rice; ask staff about",
                    i,
                ),
                "category": text("Category", i % 25),
                "price": 400 + 10 * (i % 80),
                "allergens": ["wheat", "soy", "sesame"],
                "tags": if i % 3 == 0 { json!(["vegetarian"]) } else { json!(["spicy"]) },
                "station": if i % 2 == 0 { "grill" } else { "kitchen" },
                "optionGroups": [
                    {"name": text("Size", i), "minChoices": 1, "maxChoices": 1,
                     "options": [option("Regular", 1, 0), option("Large", 2, 150)]},
                    {"name": text("Extras", i), "maxChoices": 2,
                     "options": [option("Egg", 1, 80), option("Cheese", 2, 100),
                                 option("Greens", 3, 60)]}
                ]
            })
        })
        .collect();
    json!({"items": items})
}
