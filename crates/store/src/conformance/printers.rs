//! Kitchen printers: named once per shop, starting after the shop's newest
//! event, their progress recorded step by step through their lease, and a
//! copy asked for as an event of the printer's shop.

use ordergate_domain::Rejection;
use ordergate_domain::events::EventType;
use ordergate_domain::printing::{NewPrinter, Printer, PrinterProgress, Wanted};
use uuid::Uuid;

use super::helpers::*;
use crate::{PrintStep, PrinterState, StaffWrite, Store, StoreError, StoredResponse};

fn new_printer(shop_id: Uuid, name: &str, station: Option<&str>) -> Printer {
    NewPrinter {
        name: name.into(),
        address: "192.168.1.50".into(),
        station: station.map(Into::into),
    }
    .validate(shop_id, instant())
    .expect("a valid printer")
}

fn created(_: &Printer) -> StoredResponse {
    StoredResponse {
        status: 201,
        body: "{}".into(),
        location: None,
    }
}

async fn create(store: &dyn Store, printer: &Printer) -> Result<(), StoreError> {
    let write = StaffWrite::CreatePrinter(printer.clone(), Box::new(created));
    store.staff_write(write, None, instant()).await.map(drop)
}

pub async fn printers_start_after_the_newest_event_and_record_each_step(store: &dyn Store) {
    let t = table(store).await;
    let shop_id = t.menu.shop_id;
    let before = staff_order(
        t.session.session_id,
        simple_order(t.menu.ramen, 1),
        instant(),
    );
    placed(store.place(before).await);
    let newest = ok(store.last_event_id(shop_id).await);
    assert!(newest > 0);

    let grill = new_printer(shop_id, "Grill", Some("grill"));
    let bar = new_printer(shop_id, "Bar", Some("bar"));
    ok(create(store, &grill).await);
    ok(create(store, &bar).await);
    let fresh = |printer: &Printer| PrinterState {
        printer: printer.clone(),
        progress: PrinterProgress {
            cursor: newest,
            ..PrinterProgress::default()
        },
    };
    assert_eq!(
        ok(store.printers(shop_id).await),
        [fresh(&bar), fresh(&grill)],
        "by name, each starting after the newest event"
    );
    assert_eq!(
        rejected(create(store, &new_printer(shop_id, "Grill", None)).await),
        Rejection::PrinterNameTaken {
            name: "Grill".into()
        }
    );
    assert_eq!(
        rejected(create(store, &new_printer(Uuid::new_v4(), "X", None)).await),
        Rejection::NotFound("shop")
    );
    assert_eq!(ok(store.printers(shop_id).await).len(), 2);
    let mut everywhere: Vec<Uuid> = ok(store.all_printers().await)
        .into_iter()
        .map(|p| p.printer_id)
        .filter(|id| [grill.printer_id, bar.printer_id].contains(id))
        .collect();
    everywhere.sort();
    let mut expected = vec![grill.printer_id, bar.printer_id];
    expected.sort();
    assert_eq!(everywhere, expected);

    let mut lease = store
        .lease_printer(grill.printer_id)
        .await
        .expect("the lease")
        .expect("nobody else holds it");
    let at = instant() + secs(5);
    ok(lease.record(PrintStep::Passed(newest + 1), at).await);
    ok(lease.record(PrintStep::Sending(newest + 2), at).await);
    let failed = |nothing_sent| PrintStep::Failed {
        error: "connection refused".into(),
        nothing_sent,
    };
    ok(lease.record(failed(false), at).await);
    let maybe_sent = PrinterProgress {
        cursor: newest + 1,
        sending: Some(newest + 2),
        last_error: Some("connection refused".into()),
        last_error_at: Some(at),
        ..PrinterProgress::default()
    };
    assert_eq!(ok(lease.progress().await), Some(maybe_sent.clone()));
    ok(lease.record(failed(true), at).await);
    assert_eq!(
        ok(lease.progress().await),
        Some(PrinterProgress {
            sending: None,
            ..maybe_sent
        }),
        "known unsent: no longer a possible repeat"
    );
    ok(lease.record(PrintStep::Sending(newest + 2), at).await);
    let later = at + secs(1);
    ok(lease.record(PrintStep::Printed(newest + 2), later).await);
    ok(lease.record(PrintStep::Passed(newest), later).await);
    let printed = PrinterProgress {
        cursor: newest + 2,
        sending: None,
        printed: 1,
        last_printed_at: Some(later),
        last_error: None,
        last_error_at: None,
    };
    assert_eq!(
        ok(lease.progress().await),
        Some(printed.clone()),
        "the cursor never moves back"
    );
    assert_eq!(
        ok(store.get_printer(grill.printer_id).await).map(|s| s.progress),
        Some(printed)
    );
    assert_eq!(
        ok(store.get_printer(bar.printer_id).await),
        Some(fresh(&bar)),
        "another printer's steps are its own"
    );

    ok(store.delete_printer(grill.printer_id).await);
    assert_eq!(ok(lease.progress().await), None, "its worker sees it gone");
    assert_eq!(
        rejected(store.delete_printer(grill.printer_id).await),
        Rejection::NotFound("printer")
    );
    assert_eq!(ok(store.printers(shop_id).await), [fresh(&bar)]);
}

pub async fn a_reprint_is_an_event_of_the_printers_shop_for_its_order(store: &dyn Store) {
    let t = table(store).await;
    let shop_id = t.menu.shop_id;
    let printer = new_printer(shop_id, "Kitchen", None);
    ok(create(store, &printer).await);
    let cmd = staff_order(
        t.session.session_id,
        simple_order(t.menu.ramen, 1),
        instant(),
    );
    placed(store.place(cmd.clone()).await);
    let at = instant() + secs(2);
    let event_id = ok(store
        .request_reprint(printer.printer_id, cmd.order_id, at)
        .await);
    let events = ok(store.events_after(shop_id, event_id - 1, limit(10)).await);
    let [reprint] = events.as_slice() else {
        panic!("one event: {events:?}")
    };
    assert_eq!(
        (reprint.event_id, reprint.event_type),
        (event_id, EventType::TicketReprint)
    );
    assert_eq!(
        Wanted::of(reprint, &printer),
        Some(Wanted::Copy(cmd.order_id))
    );
    let other = new_printer(shop_id, "Bar", None);
    assert_eq!(Wanted::of(reprint, &other), None, "for that printer only");

    let elsewhere = table(store).await;
    let foreign = staff_order(
        elsewhere.session.session_id,
        simple_order(elsewhere.menu.ramen, 1),
        instant(),
    );
    placed(store.place(foreign.clone()).await);
    for (printer_id, order_id, missing) in [
        (printer.printer_id, foreign.order_id, "order"),
        (printer.printer_id, Uuid::new_v4(), "order"),
        (Uuid::new_v4(), cmd.order_id, "printer"),
    ] {
        assert_eq!(
            rejected(store.request_reprint(printer_id, order_id, at).await),
            Rejection::NotFound(missing)
        );
    }
    assert_eq!(
        ok(store.last_event_id(shop_id).await),
        event_id,
        "nothing appended"
    );
}
