//! Kitchen printers: what each prints and how a ticket reads. Printing is
//! driven by the shop's event log: a printer's cursor is the last event it
//! has dealt with, and the one event whose bytes may have gone out without
//! that being recorded is kept too, so it is printed again only marked as a
//! possible repeat.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::events::{Event, EventType};
use crate::order::{Order, OrderLine};
use crate::shop::ShopTimeZone;
use crate::validation::FieldErrors;
use crate::{Rejection, Timestamp};

/// The port network receipt printers take raw ESC/POS on.
pub const DEFAULT_PRINTER_PORT: u16 = 9100;

/// Body of `POST /shops/{shopId}/printers`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewPrinter {
    /// 1–32 characters, unique in the shop.
    #[cfg_attr(feature = "openapi", schema(example = "Grill printer"))]
    pub name: String,
    /// `host` or `host:port` on the restaurant's network (port 9100 when
    /// left out).
    #[cfg_attr(feature = "openapi", schema(example = "192.168.1.50:9100"))]
    pub address: String,
    /// Print only the lines of this station's items; every line when left
    /// out (and the lines of items with no station only here).
    #[cfg_attr(feature = "openapi", schema(example = "grill"))]
    #[serde(default)]
    pub station: Option<String>,
}

/// A printer as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Printer {
    pub printer_id: Uuid,
    pub shop_id: Uuid,
    pub name: String,
    /// `host:port`.
    pub address: String,
    pub station: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// Where a printer's work stands, as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrinterProgress {
    /// The last event of the shop this printer has dealt with (printed, or
    /// nothing for it).
    pub cursor: i64,
    /// The event whose ticket was being sent: its bytes may have reached the
    /// printer without that being recorded.
    pub sending: Option<i64>,
    pub printed: i64,
    pub last_printed_at: Option<Timestamp>,
    /// The last failure to reach the printer, and when.
    pub last_error: Option<String>,
    pub last_error_at: Option<Timestamp>,
}

impl NewPrinter {
    pub fn validate(self, shop_id: Uuid, now: Timestamp) -> Result<Printer, Rejection> {
        let mut errors = FieldErrors::default();
        errors.text("name", &self.name, 1, 32);
        let address = printer_address(&self.address).unwrap_or_else(|| {
            errors.push(
                "address",
                "must be a host name or IP address, with an optional :port (1–65535)",
            );
            String::new()
        });
        if let Some(station) = &self.station {
            errors.text("station", station, 1, 32);
        }
        errors.finish(Printer {
            printer_id: Uuid::new_v4(),
            shop_id,
            name: self.name.trim().to_owned(),
            address,
            station: self.station.map(|s| s.trim().to_owned()),
            created_at: now,
        })
    }
}

/// `host:port` for an address given as `host`, `host:port`, `[v6]` or
/// `[v6]:port`; `None` when it is none of these.
fn printer_address(given: &str) -> Option<String> {
    let given = given.trim();
    let (host, port) = if let Some(rest) = given.strip_prefix('[') {
        let (v6, after) = rest.split_once(']')?;
        v6.parse::<std::net::Ipv6Addr>().ok()?;
        (format!("[{v6}]"), after.strip_prefix(':'))
    } else {
        match given.split_once(':') {
            Some((host, port)) => (host.to_owned(), Some(port)),
            None => (given.to_owned(), None),
        }
    };
    let port = match port {
        None => DEFAULT_PRINTER_PORT,
        Some(port) => port.parse::<u16>().ok().filter(|p| *p > 0)?,
    };
    let plain_host = !host.is_empty()
        && host.len() <= 253
        && (host.starts_with('[')
            || host.split('.').all(|label| {
                !label.is_empty()
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            }));
    plain_host.then(|| format!("{host}:{port}"))
}

impl Printer {
    /// The lines of `order` that print here, `station_of` naming each
    /// item's station.
    pub fn lines_of<'o, 's>(
        &self,
        order: &'o Order,
        station_of: impl Fn(Uuid) -> Option<&'s str>,
    ) -> Vec<&'o OrderLine> {
        order
            .items
            .iter()
            .filter(|line| self.takes(station_of(line.menu_item_id)))
            .collect()
    }

    /// Whether the line of an item made at `station` prints here.
    pub fn takes(&self, station: Option<&str>) -> bool {
        match (&self.station, station) {
            (None, _) => true,
            (Some(mine), Some(theirs)) => mine.eq_ignore_ascii_case(theirs),
            (Some(_), None) => false,
        }
    }
}

/// Data of a `ticket.reprint` event: staff asked a printer for a copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReprintRequested {
    pub printer_id: Uuid,
    pub order_id: Uuid,
}

/// What an event asks of a printer, before its order is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    /// A new order: its ticket, if any line is for this printer.
    Ticket(Uuid),
    /// A copy staff asked this printer for.
    Copy(Uuid),
}

impl Wanted {
    /// What `event` asks of `printer`; `None`: nothing.
    pub fn of(event: &Event, printer: &Printer) -> Option<Wanted> {
        match event.event_type {
            EventType::OrderPlaced => {
                #[derive(Deserialize)]
                #[serde(rename_all = "camelCase")]
                struct Placed {
                    order_id: Uuid,
                }
                let placed: Placed = serde_json::from_str(&event.data).ok()?;
                Some(Wanted::Ticket(placed.order_id))
            }
            EventType::TicketReprint => {
                let asked: ReprintRequested = serde_json::from_str(&event.data).ok()?;
                (asked.printer_id == printer.printer_id).then_some(Wanted::Copy(asked.order_id))
            }
            _ => None,
        }
    }

    pub fn order_id(self) -> Uuid {
        match self {
            Wanted::Ticket(order_id) | Wanted::Copy(order_id) => order_id,
        }
    }
}

/// Which copy a ticket is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copy {
    /// The first time.
    Original,
    /// Its bytes may have reached the printer before: the server cannot
    /// know (it stopped, or the printer went away, between sending and
    /// recording them).
    MaybeRepeat,
    /// Staff asked for it.
    Requested,
}

/// How a line of a ticket is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Normal,
    Bold,
    /// Double width and height: the ticket number and table, read from across
    /// the kitchen.
    Big,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintLine {
    pub style: Style,
    pub text: String,
}

/// The marker heading a copy that is not the first, as printed.
pub const MAYBE_REPEAT: &str = "REPRINT - may be a repeat";
pub const REQUESTED_COPY: &str = "REPRINT (copy)";

/// The ticket `printer` prints for `order`, `station_of` naming each item's
/// station; `None` when no line of the order is for it.
pub fn ticket<'s>(
    order: &Order,
    printer: &Printer,
    station_of: impl Fn(Uuid) -> Option<&'s str>,
    timezone: ShopTimeZone,
    copy: Copy,
) -> Option<Vec<PrintLine>> {
    let lines = printer.lines_of(order, station_of);
    if lines.is_empty() {
        return None;
    }
    let line = |style, text: String| PrintLine { style, text };
    let mut out = Vec::new();
    match copy {
        Copy::Original => {}
        Copy::MaybeRepeat => out.push(line(Style::Bold, format!("*** {MAYBE_REPEAT} ***"))),
        Copy::Requested => out.push(line(Style::Bold, format!("*** {REQUESTED_COPY} ***"))),
    }
    out.push(line(
        Style::Big,
        format!("#{}  {}", order.ticket_number, order.table_label),
    ));
    let station = printer.station.as_deref().unwrap_or("All");
    out.push(line(
        Style::Normal,
        format!("{}  {station}", timezone.clock_of(order.created_at)),
    ));
    out.push(line(Style::Normal, "-".repeat(32)));
    let others = order.items.len() - lines.len();
    for item in lines {
        out.push(line(
            Style::Bold,
            format!("{} x {}", item.quantity, item.name),
        ));
        for option in &item.options {
            out.push(line(Style::Normal, format!("   {}", option.name)));
        }
        for topping in &item.toppings {
            out.push(line(Style::Normal, format!("   + {}", topping.name)));
        }
        if let Some(note) = &item.note {
            out.push(line(Style::Bold, format!("   ! {note}")));
        }
    }
    if !order.note.is_empty() {
        out.push(line(Style::Normal, "-".repeat(32)));
        out.push(line(Style::Bold, format!("Note: {}", order.note)));
    }
    if others > 0 {
        out.push(line(
            Style::Normal,
            format!("(+ {others} line(s) for other stations)"),
        ));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order::{LineOption, OrderSource, OrderStatus};

    fn printer(station: Option<&str>) -> Printer {
        NewPrinter {
            name: "Grill".into(),
            address: "192.168.1.50".into(),
            station: station.map(Into::into),
        }
        .validate(Uuid::nil(), crate::now())
        .unwrap()
    }

    #[test]
    fn addresses_get_the_raw_printing_port_and_junk_is_refused() {
        for (given, stored) in [
            ("192.168.1.50", Some("192.168.1.50:9100")),
            (
                " kitchen-printer.local:9101 ",
                Some("kitchen-printer.local:9101"),
            ),
            ("[fe80::1]", Some("[fe80::1]:9100")),
            ("[::1]:9100", Some("[::1]:9100")),
            ("printer:0", None),
            ("printer:70000", None),
            ("http://printer", None),
            ("", None),
            ("a..b", None),
            ("[nope]:9100", None),
        ] {
            assert_eq!(printer_address(given).as_deref(), stored, "{given}");
        }
    }

    #[test]
    fn a_station_printer_takes_its_lines_and_one_without_takes_all() {
        assert!(printer(Some("grill")).takes(Some("Grill")));
        assert!(!printer(Some("grill")).takes(Some("bar")));
        assert!(
            !printer(Some("grill")).takes(None),
            "no station: the all-lines printers"
        );
        assert!(printer(None).takes(None));
        assert!(printer(None).takes(Some("bar")));
    }

    #[test]
    fn a_ticket_shows_its_lines_choices_and_notes_and_says_which_copy_it_is() {
        let line = |name: &str, options: &[&str], note: Option<&str>| OrderLine {
            menu_item_id: Uuid::new_v4(),
            name: name.into(),
            unit_price: 100,
            quantity: 2,
            toppings: vec![],
            options: options
                .iter()
                .map(|o| LineOption {
                    option_id: Uuid::nil(),
                    group_id: Uuid::nil(),
                    name: (*o).into(),
                    price: 0,
                })
                .collect(),
            line_total: 200,
            note: note.map(Into::into),
        };
        let order = Order {
            order_id: Uuid::nil(),
            shop_id: Uuid::nil(),
            session_id: Uuid::nil(),
            table_label: "T4".into(),
            ticket_number: 12,
            status: OrderStatus::Placed,
            source: OrderSource::Guest,
            client_id: None,
            items: vec![
                line("Steak", &["Medium rare"], Some("no salt")),
                line("Beer", &[], None),
            ],
            note: "birthday".into(),
            total: 400,
            created_at: "2026-12-01T05:05:00Z".parse().unwrap(),
            version: 1,
        };
        let steak = order.items[0].menu_item_id;
        let station_of = |id: Uuid| Some(if id == steak { "grill" } else { "bar" });
        let tokyo = ShopTimeZone::parse("Asia/Tokyo").unwrap();
        let grill = ticket(
            &order,
            &printer(Some("grill")),
            station_of,
            tokyo,
            Copy::Original,
        )
        .unwrap();
        let text: Vec<&str> = grill.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(
            text,
            [
                "#12  T4",
                "14:05  grill",
                &"-".repeat(32),
                "2 x Steak",
                "   Medium rare",
                "   ! no salt",
                &"-".repeat(32),
                "Note: birthday",
                "(+ 1 line(s) for other stations)",
            ]
        );
        assert_eq!(grill[0].style, Style::Big);
        let again = ticket(&order, &printer(None), station_of, tokyo, Copy::MaybeRepeat).unwrap();
        assert_eq!(again[0].text, "*** REPRINT - may be a repeat ***");
        assert_eq!(
            again.iter().filter(|l| l.text.ends_with(" x Beer")).count(),
            1
        );
        assert_eq!(
            ticket(
                &order,
                &printer(Some("dessert")),
                station_of,
                tokyo,
                Copy::Original
            ),
            None,
            "nothing for this printer"
        );
    }

    #[test]
    fn placed_orders_are_tickets_and_copies_go_to_the_printer_asked() {
        let grill = printer(Some("grill"));
        let order_id = Uuid::new_v4();
        let event = |event_type, data: serde_json::Value| Event {
            event_id: 7,
            event_type,
            session_id: None,
            data: data.to_string(),
        };
        let placed = event(
            EventType::OrderPlaced,
            serde_json::json!({"orderId": order_id}),
        );
        assert_eq!(Wanted::of(&placed, &grill), Some(Wanted::Ticket(order_id)));
        let copy = |printer_id| {
            event(
                EventType::TicketReprint,
                serde_json::json!({"printerId": printer_id, "orderId": order_id}),
            )
        };
        assert_eq!(
            Wanted::of(&copy(grill.printer_id), &grill),
            Some(Wanted::Copy(order_id))
        );
        assert_eq!(Wanted::of(&copy(Uuid::new_v4()), &grill), None);
        let updated = event(
            EventType::OrderUpdated,
            serde_json::json!({"orderId": order_id}),
        );
        assert_eq!(Wanted::of(&updated, &grill), None);
    }
}
