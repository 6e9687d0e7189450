//! Kitchen printers (staff): configured per station, each printing from the
//! shop's event log (see `crate::printing`), with its state and backlog.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use chrono::{DateTime, Utc};
use ordergate_domain::catalog::Catalog;
use ordergate_domain::order::Order;
use ordergate_domain::paging::Limit;
use ordergate_domain::printing::{NewPrinter, Printer, PrinterProgress, Wanted};
use ordergate_store::{PrinterState, StaffWrite};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::accounts::{Allowed, duty};
use crate::app::AppState;
use crate::error::{ApiError, Problem};
use crate::extract::{ApiJson, ApiPath};
use crate::idempotency::{Sent, StaffOperation, staff_claim, staff_write};

/// Events of the log read past a printer's cursor to count its backlog:
/// beyond, the count says "at least".
const BACKLOG_SCAN: usize = 2_000;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_printer, list_printers))
        .routes(routes!(delete_printer))
        .routes(routes!(reprint))
}

/// Where a printer stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
enum PrinterStatus {
    /// Nothing waiting.
    Idle,
    /// Tickets waiting, and no failure since the last one printed.
    Printing,
    /// The last attempt failed (`lastError`): tickets wait for it.
    Failing,
}

/// A printer as staff see it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct PrinterView {
    printer_id: Uuid,
    name: String,
    /// `host:port`.
    address: String,
    /// Prints only this station's lines; `null`: every line.
    station: Option<String>,
    created_at: DateTime<Utc>,
    status: PrinterStatus,
    /// Tickets waiting to print, counted over at most the next 2,000 events
    /// of the shop's log.
    backlog: usize,
    /// Tickets printed so far.
    printed: i64,
    last_printed_at: Option<DateTime<Utc>>,
    /// Why the last attempt failed; cleared once a ticket prints.
    last_error: Option<String>,
    last_error_at: Option<DateTime<Utc>>,
    /// A ticket's bytes went out without the printer confirming them: it
    /// prints again headed "REPRINT - may be a repeat".
    unconfirmed: bool,
    /// The shop's event the printer has dealt with up to.
    cursor: i64,
}

impl PrinterView {
    fn new(printer: Printer, progress: PrinterProgress, backlog: usize) -> PrinterView {
        let status = if progress.last_error.is_some() {
            PrinterStatus::Failing
        } else if backlog > 0 {
            PrinterStatus::Printing
        } else {
            PrinterStatus::Idle
        };
        PrinterView {
            printer_id: printer.printer_id,
            name: printer.name,
            address: printer.address,
            station: printer.station,
            created_at: printer.created_at,
            status,
            backlog,
            printed: progress.printed,
            last_printed_at: progress.last_printed_at,
            last_error: progress.last_error,
            last_error_at: progress.last_error_at,
            unconfirmed: progress.sending.is_some(),
            cursor: progress.cursor,
        }
    }
}

#[derive(Serialize, ToSchema)]
struct PrinterList {
    printers: Vec<PrinterView>,
}

/// Body of `POST /printers/{printerId}/reprint`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ReprintRequest {
    order_id: Uuid,
}

/// A reprint asked for.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct ReprintQueued {
    printer_id: Uuid,
    order_id: Uuid,
    /// The `ticket.reprint` event it prints from.
    event_id: i64,
}

/// Add a kitchen printer (staff): ESC/POS over TCP. It prints the orders
/// placed from now on.
#[utoipa::path(post, path = "/api/v1/shops/{shopId}/printers", tag = "printers",
    security(("staffToken" = [])),
    params(
        ("shopId" = Uuid, Path),
        ("Idempotency-Key" = Option<String>, Header, description = "UUID v4; retries replay the first answer"),
    ),
    request_body = NewPrinter,
    responses(
        (status = 201, description = "Added; it prints orders placed from now on", body = PrinterView),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 409, description = "The shop has a printer of that name (PRINTER_NAME_TAKEN)",
         body = Problem, content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn create_printer(
    State(state): State<AppState>,
    _: Allowed<duty::Printers>,
    ApiPath(shop_id): ApiPath<Uuid>,
    headers: HeaderMap,
    ApiJson(new_printer): ApiJson<NewPrinter>,
) -> Result<Sent, ApiError> {
    let now = state.now();
    let expires_at = state.settings().idempotency_expiry(now);
    let operation = StaffOperation::CreatePrinter { shop_id };
    let claim = staff_claim(&headers, operation, &new_printer, expires_at)?;
    let printer = new_printer.validate(shop_id, now)?;
    let render = |printer: &Printer| {
        let view = PrinterView::new(printer.clone(), PrinterProgress::default(), 0);
        Sent::render(StatusCode::CREATED, &view, None)
    };
    let sent = staff_write(
        &state,
        claim,
        StaffWrite::CreatePrinter(printer, Box::new(render)),
    )
    .await?;
    state.printing().added();
    Ok(sent)
}

/// The shop's printers (staff), by name, each with its state and backlog.
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/printers", tag = "printers",
    security(("staffToken" = [])),
    params(("shopId" = Uuid, Path)),
    responses(
        (status = 200, description = "By name", body = PrinterList),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn list_printers(
    State(state): State<AppState>,
    _: Allowed<duty::Printers>,
    ApiPath(shop_id): ApiPath<Uuid>,
) -> Result<Json<PrinterList>, ApiError> {
    let printers = state.store().printers(shop_id).await?;
    let catalog = match printers.is_empty() {
        true => None,
        false => Some(state.store().get_catalog(shop_id).await?),
    };
    let mut views = Vec::with_capacity(printers.len());
    for PrinterState { printer, progress } in printers {
        let backlog = match &catalog {
            Some(catalog) => backlog(&state, &printer, &progress, catalog).await?,
            None => 0,
        };
        views.push(PrinterView::new(printer, progress, backlog));
    }
    Ok(Json(PrinterList { printers: views }))
}

/// The tickets waiting for `printer`: the events past its cursor that ask
/// it for one (a copy, or an order with a line of its station).
async fn backlog(
    state: &AppState,
    printer: &Printer,
    progress: &PrinterProgress,
    catalog: &Catalog,
) -> Result<usize, ApiError> {
    let (mut cursor, mut scanned, mut waiting) = (progress.cursor, 0, 0);
    while scanned < BACKLOG_SCAN {
        let events = state
            .store()
            .events_after(printer.shop_id, cursor, Limit::MAX_PAGE)
            .await?;
        let Some(last) = events.last() else { break };
        cursor = last.event_id;
        scanned += events.len();
        waiting += events
            .iter()
            .filter(|event| match Wanted::of(event, printer) {
                Some(Wanted::Copy(_)) => true,
                Some(Wanted::Ticket(_)) => {
                    serde_json::from_str::<Order>(&event.data).is_ok_and(|order| {
                        !printer
                            .lines_of(&order, |item_id| catalog.station_of(item_id))
                            .is_empty()
                    })
                }
                None => false,
            })
            .count();
    }
    Ok(waiting)
}

/// Remove a printer (staff); it stops printing.
#[utoipa::path(delete, path = "/api/v1/printers/{printerId}", tag = "printers",
    security(("staffToken" = [])),
    params(("printerId" = Uuid, Path)),
    responses(
        (status = 204, description = "Removed"),
        (status = 404, description = "No such printer (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%printer_id))]
async fn delete_printer(
    State(state): State<AppState>,
    _: Allowed<duty::Printers>,
    ApiPath(printer_id): ApiPath<Uuid>,
) -> Result<StatusCode, ApiError> {
    state.store().delete_printer(printer_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Print a copy of an order's ticket (staff), headed "REPRINT (copy)".
#[utoipa::path(post, path = "/api/v1/printers/{printerId}/reprint", tag = "printers",
    security(("staffToken" = [])),
    params(("printerId" = Uuid, Path)),
    request_body = ReprintRequest,
    responses(
        (status = 202, description = "Queued behind the printer's backlog", body = ReprintQueued),
        (status = 404, description = "No such printer, or no such order in its shop (NOT_FOUND)",
         body = Problem, content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%printer_id))]
async fn reprint(
    State(state): State<AppState>,
    _: Allowed<duty::Printers>,
    ApiPath(printer_id): ApiPath<Uuid>,
    ApiJson(request): ApiJson<ReprintRequest>,
) -> Result<(StatusCode, Json<ReprintQueued>), ApiError> {
    let event_id = state
        .store()
        .request_reprint(printer_id, request.order_id, state.now())
        .await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(ReprintQueued {
            printer_id,
            order_id: request.order_id,
            event_id,
        }),
    ))
}
