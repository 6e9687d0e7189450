//! A lunch peak on SQLite moves to PostgreSQL, or to a Citus cluster: the
//! copy verifies, and a server on the new database answers every held key,
//! every read and every resumed event stream exactly as the old one did.

use reqwest::Method;

use crate::lunch::lunch;
use crate::support::{
    PgSchema, Request, Server, SqliteFile, citus_url, failed, ordergate, postgres_url, succeeded,
    wait_released,
};

/// A reply's text with the server's own address taken out (guest links
/// are built from it).
fn portable(text: &str, base: &str) -> String {
    text.replace(base, "<base>")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lunch_peak_moves_to_postgres_and_answers_as_before() {
    if let Some(admin_url) = postgres_url() {
        moves_and_answers_as_before(&admin_url).await;
    }
}

/// The migrations spread the target over the cluster before the copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lunch_peak_moves_to_citus_and_answers_as_before() {
    if let Some(admin_url) = citus_url() {
        moves_and_answers_as_before(&admin_url).await;
    }
}

async fn moves_and_answers_as_before(admin_url: &str) {
    let file = SqliteFile::new();
    let server = Server::spawn(&file.url()).await;
    let old_base = server.base.clone();
    let lunch = lunch(&server.http()).await;
    let schema = PgSchema::create(admin_url).await;

    // A server holds the source: refused, and the target is left alone.
    let refused =
        failed(&ordergate(&["migrate", "--from", &file.url(), "--to", &schema.url]).await);
    assert!(refused.contains("is in use"), "{refused}");
    assert!(
        refused.contains("Stop every `ordergate serve`"),
        "{refused}"
    );
    server.stop().await;
    wait_released(&file.path).await;

    // Small batches, so every table takes several.
    let migrated = ordergate(&[
        "migrate",
        "--from",
        &file.url(),
        "--to",
        &schema.url,
        "--batch-rows",
        "7",
    ])
    .await;
    let report = succeeded(&migrated);
    assert!(report.contains("verification passed"), "{report}");
    assert!(!report.contains("MISMATCH"), "{report}");
    for check in [
        "rows: images",
        "rows: orders",
        "rows: events",
        "rows: idempotency_keys (live)",
        "rows: event_counters",
        "order totals per shop",
        "stock per item",
        "op-log sums = stock",
        "last event id per shop",
        "stored responses (sample)",
    ] {
        let line = report
            .lines()
            .find(|l| l.starts_with(check))
            .unwrap_or_else(|| panic!("no {check:?} line in\n{report}"));
        assert!(line.trim_end().ends_with("ok"), "{line}");
    }
    let keys = lunch.held.len();
    assert!(
        report.contains(&format!("{keys} byte-identical")),
        "every one of the {keys} keys compared:\n{report}"
    );

    // The target is full now: a second migration into it is refused.
    let again = failed(&ordergate(&["migrate", "--from", &file.url(), "--to", &schema.url]).await);
    assert!(again.contains("is not empty"), "{again}");
    succeeded(&ordergate(&["verify", "--database", &schema.url]).await);
    let mut conn = schema.connect().await;
    let progress: Option<String> =
        sqlx::query_scalar("select to_regclass('ordergate_migration')::text")
            .fetch_one(&mut conn)
            .await
            .unwrap();
    assert_eq!(progress, None, "the migration's bookkeeping is gone");

    let server = Server::start(&schema.url).await;
    let http = server.http();

    // Every read answers the same (newest-first lists in the same order).
    for (request, before) in &lunch.views {
        let now = http.send(request).await;
        assert_eq!(now.status, before.status, "{}", request.path);
        assert_eq!(
            portable(&now.text, &server.base),
            portable(&before.text, &old_base),
            "{}",
            request.path
        );
        assert_eq!(now.etag, before.etag, "{}", request.path);
    }

    // Guests' phones get every photo, byte for byte.
    for (image_id, rendition) in &lunch.photos {
        assert_eq!(&http.photo(image_id).await, rendition, "photo {image_id}");
    }

    // Kitchen displays resume from an old Last-Event-ID: exactly the later
    // events, byte for byte.
    for (shop, frames) in &lunch.events {
        for resume_at in [0, frames[frames.len() / 2].id, frames.last().unwrap().id] {
            let expected: Vec<_> = frames
                .iter()
                .filter(|f| f.id > resume_at)
                .cloned()
                .collect();
            let resumed = http
                .events_after(shop, resume_at, Some(expected.len()))
                .await;
            assert_eq!(resumed, expected, "shop {shop} resumed after {resume_at}");
        }
    }

    // Every held key replays byte for byte as it did before the move.
    for held in &lunch.held {
        let replay = http.send(&held.request).await;
        assert_eq!(
            replay, held.replay,
            "{} {}",
            held.request.method, held.request.path
        );
    }

    // PIN state came along: the locked table stays locked, the other locks
    // at its next wrong PIN.
    let guest = |(session, pin): &(String, String), pin_sent: Option<&str>| {
        Request::new(Method::GET, format!("/api/v1/sessions/{session}"))
            .header("X-Session-PIN", pin_sent.unwrap_or(pin))
    };
    let locked = http.send(&guest(&lunch.locked, None)).await;
    assert_eq!(locked.status, 429, "{}", locked.text);
    let wrong = http
        .send(&guest(&lunch.nearly_locked, Some("999999")))
        .await;
    assert_eq!(wrong.status, 401, "{}", wrong.text);
    let now_locked = http.send(&guest(&lunch.nearly_locked, None)).await;
    assert_eq!(now_locked.status, 429, "{}", now_locked.text);

    // New orders carry on: the next event ids, without a gap.
    let shop = &lunch.shops[0];
    let last = lunch.events[0].1.last().unwrap().id;
    let (session, pin) = &lunch.open_table;
    let order = http
        .send(&shop.guest_order(session, pin, "phone-c", 0))
        .await;
    let order = order.ok(201);
    let new_events = http.events_after(&shop.id, last, Some(3)).await;
    let ids: Vec<i64> = new_events.iter().map(|f| f.id).collect();
    assert_eq!(ids, [last + 1, last + 2, last + 3], "{new_events:?}");
    assert_eq!(new_events[2].event, "order.placed");
    assert!(
        new_events[2]
            .data
            .contains(order["orderId"].as_str().unwrap())
    );
    // Rows made after the move sort newest, after the copied ones: the
    // identity counters moved past the copied ids.
    let order_id = order["orderId"].as_str().unwrap();
    let newest = |path: String| {
        let http = http.clone();
        async move { http.staff_get(&path).await.ok(200) }
    };
    let log = newest(format!("/api/v1/shops/{}/inventory/log?limit=1", shop.id)).await;
    assert_eq!(log["entries"][0]["orderId"], order_id, "{log}");
    let audit = newest(format!("/api/v1/shops/{}/audit?limit=1", shop.id)).await;
    assert_eq!(audit["entries"][0]["orderId"], order_id, "{audit}");
    let (session, _, _, _) = shop.open(&http, "T10", false).await;
    let sessions = newest(format!("/api/v1/shops/{}/sessions?limit=1", shop.id)).await;
    assert_eq!(
        sessions["sessions"][0]["sessionId"],
        session.as_str(),
        "{sessions}"
    );
    server.stop().await;
    succeeded(&ordergate(&["verify", "--database", &schema.url]).await);

    // verify names a PostgreSQL counter that fell behind its events (the
    // last is the new table's `session.opened`).
    sqlx::query("update event_counters set last_event_id = last_event_id - 1")
        .execute(&mut conn)
        .await
        .unwrap();
    let broken = failed(&ordergate(&["verify", "--database", &schema.url]).await);
    assert!(
        broken.contains(&format!(
            "shop {}: the event counter stands at {}, but the last event is {}",
            shop.id,
            last + 3,
            last + 4
        )),
        "{broken}"
    );
}
