//! Kitchen printers, driven by each shop's event log.
//!
//! One worker per printer holds the printer's lease (on PostgreSQL, exactly
//! one node holds it) and walks the shop's events from the printer's
//! cursor: a new order's station lines become a ticket, a `ticket.reprint`
//! for this printer a marked copy, anything else is passed. Each ticket is
//! recorded as being sent before its bytes go out and as printed once the
//! printer answered a status request sent after them (it answers only
//! after taking in what came before). A printer that is off or unplugged
//! keeps its cursor: its tickets print, in order, when it is back.
//!
//! The honest limit: TCP cannot tell whether bytes that left reached the
//! printer when the answer never came (the server died, or the printer
//! went away mid-ticket). Such a ticket is printed again, headed
//! "REPRINT - may be a repeat": never lost, never silently repeated.

pub mod escpos;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ordergate_domain::catalog::Catalog;
use ordergate_domain::clock::Clock;
use ordergate_domain::events::Event;
use ordergate_domain::order::OrderStatus;
use ordergate_domain::paging::Limit;
use ordergate_domain::printing::{Copy, Printer, PrinterProgress, Wanted, ticket};
use ordergate_domain::shop::Shop;
use ordergate_store::{PrintStep, PrinterLease, Store, StoreError, StoreResult};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use tokio::time::{sleep, timeout};
use uuid::Uuid;

use self::escpos::Charset;

/// How often the printers are listed again: printers added on another
/// node, or a lease another node gave up.
const RESCAN: Duration = Duration::from_secs(10);
/// How often a worker looks at its shop's log without being woken: a lost
/// wake-up delays a ticket by at most this.
const POLL: Duration = Duration::from_secs(2);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// For the ticket's bytes and the status answer after them.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
const RETRY_FIRST: Duration = Duration::from_millis(500);
const RETRY_MOST: Duration = Duration::from_secs(5);
/// After bytes went out unconfirmed: the marked copy waits this long, so a
/// printer that prints but never answers repeats a ticket this seldom, not
/// in a burst, while the console shows it failing.
const UNCONFIRMED_RETRY: Duration = Duration::from_secs(10);

/// The printers this server prints to.
pub struct Printing {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    /// Per shop: changed when its log grew.
    shops: Mutex<HashMap<Uuid, watch::Sender<()>>>,
    workers: Mutex<HashMap<Uuid, JoinHandle<()>>>,
    rescan: Notify,
}

impl Printing {
    pub fn new(store: Arc<dyn Store>, clock: Arc<dyn Clock>) -> Arc<Printing> {
        Arc::new(Printing {
            store,
            clock,
            shops: Mutex::default(),
            workers: Mutex::default(),
            rescan: Notify::new(),
        })
    }

    /// Starts the supervisor; it and every worker stop when the returned
    /// guard is dropped (a stopped worker drops its lease).
    pub fn start(self: &Arc<Printing>) -> Supervisor {
        let printing = Arc::clone(self);
        Supervisor {
            printing: Arc::clone(self),
            task: tokio::spawn(async move { printing.supervise().await }),
        }
    }

    /// Called when the shop's log grew; never blocks.
    pub fn announce(&self, shop_id: Uuid) {
        let shops = self.shops.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(shop) = shops.get(&shop_id) {
            shop.send_replace(());
        }
    }

    /// Wakes every worker: the store may have missed announcing changes.
    pub fn announce_all(&self) {
        let shops = self.shops.lock().unwrap_or_else(|e| e.into_inner());
        shops.values().for_each(|shop| {
            shop.send_replace(());
        });
    }

    /// A printer was added here: serve it now rather than at the next scan.
    pub fn added(&self) {
        self.rescan.notify_one();
    }

    async fn supervise(self: Arc<Printing>) {
        loop {
            match self.store.all_printers().await {
                Ok(printers) => self.serve(printers),
                Err(e) => tracing::warn!(error = %e, "cannot list the printers"),
            }
            tokio::select! {
                () = sleep(RESCAN) => {}
                () = self.rescan.notified() => {}
            }
        }
    }

    fn serve(self: &Arc<Printing>, printers: Vec<Printer>) {
        let mut workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        workers.retain(|_, worker| !worker.is_finished());
        for printer in printers {
            if workers.contains_key(&printer.printer_id) {
                continue;
            }
            let wake = self.wake_of(printer.shop_id);
            let worker = Worker {
                store: Arc::clone(&self.store),
                clock: Arc::clone(&self.clock),
                printer: printer.clone(),
                wake,
            };
            workers.insert(printer.printer_id, tokio::spawn(worker.run()));
        }
    }

    fn wake_of(&self, shop_id: Uuid) -> watch::Receiver<()> {
        let mut shops = self.shops.lock().unwrap_or_else(|e| e.into_inner());
        shops
            .entry(shop_id)
            .or_insert_with(|| watch::Sender::new(()))
            .subscribe()
    }
}

/// Stops printing when dropped.
pub struct Supervisor {
    printing: Arc<Printing>,
    task: JoinHandle<()>,
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.task.abort();
        let workers = self
            .printing
            .workers
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        workers.values().for_each(JoinHandle::abort);
    }
}

struct Worker {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    printer: Printer,
    wake: watch::Receiver<()>,
}

/// Why a printer's worker stopped printing for now.
enum Interrupted {
    /// The printer was deleted: the worker ends.
    Deleted,
    /// The store failed: the lease is given up and taken again.
    Store(StoreError),
}

impl From<StoreError> for Interrupted {
    fn from(e: StoreError) -> Self {
        Interrupted::Store(e)
    }
}

/// A ticket and the event it prints for.
struct Job {
    event_id: i64,
    bytes: Vec<u8>,
}

/// What the tickets of one batch of events need to know of the shop.
struct ShopView {
    shop: Shop,
    catalog: Catalog,
}

impl Worker {
    async fn run(mut self) {
        let printer_id = self.printer.printer_id;
        let mut retry = RETRY_FIRST;
        loop {
            let lease = match self.store.lease_printer(printer_id).await {
                Ok(Some(lease)) => lease,
                // Another node prints to it; it may stop doing so.
                Ok(None) => {
                    sleep(RESCAN).await;
                    continue;
                }
                Err(e) => {
                    tracing::warn!(%printer_id, error = %e, "cannot take the printer's lease");
                    sleep(retry).await;
                    retry = (retry * 2).min(RETRY_MOST);
                    continue;
                }
            };
            match self.print_while_held(lease).await {
                Interrupted::Deleted => return,
                Interrupted::Store(e) => {
                    tracing::warn!(%printer_id, error = %e, "printing paused: the store failed");
                    sleep(retry).await;
                    retry = (retry * 2).min(RETRY_MOST);
                }
            }
        }
    }

    async fn print_while_held(&mut self, mut lease: Box<dyn PrinterLease>) -> Interrupted {
        let mut retry = RETRY_FIRST;
        loop {
            match self.print_batch(lease.as_mut()).await {
                Ok(Batch::Done) => retry = RETRY_FIRST,
                Ok(Batch::UpToDate) => {
                    retry = RETRY_FIRST;
                    // Either a change or the poll: a missed wake-up only waits.
                    let _ = timeout(POLL, self.wake.changed()).await;
                }
                Ok(Batch::PrinterFailed { nothing_sent: true }) => {
                    sleep(retry).await;
                    retry = (retry * 2).min(RETRY_MOST);
                }
                Ok(Batch::PrinterFailed {
                    nothing_sent: false,
                }) => sleep(UNCONFIRMED_RETRY).await,
                Err(interrupted) => return interrupted,
            }
        }
    }

    /// Prints what the events after the cursor ask of the printer, up to
    /// the first failure to print.
    async fn print_batch(&mut self, lease: &mut dyn PrinterLease) -> Result<Batch, Interrupted> {
        let progress = lease.progress().await?.ok_or(Interrupted::Deleted)?;
        let shop_id = self.printer.shop_id;
        self.wake.mark_unchanged();
        let events = self
            .store
            .events_after(shop_id, progress.cursor, Limit::DEFAULT)
            .await?;
        if events.is_empty() {
            return Ok(Batch::UpToDate);
        }
        let mut view = None;
        let mut passed = None;
        for event in &events {
            let Some(job) = self.job(event, &progress, &mut view).await? else {
                passed = Some(event.event_id);
                continue;
            };
            if let Some(event_id) = passed.take() {
                lease
                    .record(PrintStep::Passed(event_id), self.now())
                    .await?;
            }
            lease
                .record(PrintStep::Sending(job.event_id), self.now())
                .await?;
            match send(&self.printer.address, &job.bytes).await {
                Ok(()) => {
                    lease
                        .record(PrintStep::Printed(job.event_id), self.now())
                        .await?
                }
                Err(failure) => {
                    tracing::warn!(
                        printer_id = %self.printer.printer_id,
                        address = %self.printer.address,
                        error = %failure,
                        "the printer did not take a ticket"
                    );
                    let nothing_sent = failure.nothing_sent();
                    let step = PrintStep::Failed {
                        nothing_sent,
                        error: failure.to_string(),
                    };
                    lease.record(step, self.now()).await?;
                    return Ok(Batch::PrinterFailed { nothing_sent });
                }
            }
        }
        if let Some(event_id) = passed {
            lease
                .record(PrintStep::Passed(event_id), self.now())
                .await?;
        }
        Ok(Batch::Done)
    }

    /// The ticket `event` asks of this printer, if any.
    async fn job(
        &self,
        event: &Event,
        progress: &PrinterProgress,
        view: &mut Option<ShopView>,
    ) -> StoreResult<Option<Job>> {
        let Some(wanted) = Wanted::of(event, &self.printer) else {
            return Ok(None);
        };
        let Some(order) = self.store.get_order(wanted.order_id()).await? else {
            return Ok(None);
        };
        let copy = if progress.sending == Some(event.event_id) {
            Copy::MaybeRepeat
        } else {
            match wanted {
                // Cancelled before its ticket could print: nothing to make.
                Wanted::Ticket(_) if order.status == OrderStatus::Cancelled => return Ok(None),
                Wanted::Ticket(_) => Copy::Original,
                Wanted::Copy(_) => Copy::Requested,
            }
        };
        let view = match view {
            Some(view) => view,
            None => view.insert(self.shop_view().await?),
        };
        let station_of = |item_id| view.catalog.station_of(item_id);
        let Some(lines) = ticket(&order, &self.printer, station_of, view.shop.timezone, copy)
        else {
            return Ok(None);
        };
        let charset = Charset::for_language(view.shop.languages.default_language().as_str());
        Ok(Some(Job {
            event_id: event.event_id,
            bytes: escpos::encode(&lines, charset),
        }))
    }

    async fn shop_view(&self) -> StoreResult<ShopView> {
        let shop_id = self.printer.shop_id;
        let shop = self
            .store
            .get_shop(shop_id)
            .await?
            .ok_or(StoreError::Rejected(ordergate_domain::Rejection::NotFound(
                "shop",
            )))?;
        let catalog = self.store.get_catalog(shop_id).await?;
        Ok(ShopView { shop, catalog })
    }

    fn now(&self) -> ordergate_domain::Timestamp {
        self.clock.now()
    }
}

enum Batch {
    /// Events were dealt with; there may be more.
    Done,
    /// No event after the cursor.
    UpToDate,
    /// The printer did not take a ticket: try again later.
    PrinterFailed { nothing_sent: bool },
}

/// Why a ticket did not print.
#[derive(Debug, thiserror::Error)]
enum SendFailure {
    /// Nothing of the ticket left: it is certainly not printed.
    #[error("cannot reach the printer: {0}")]
    Unreachable(String),
    /// Bytes left without the printer's answer: they may have printed.
    #[error("the printer did not confirm the ticket: {0}")]
    Unconfirmed(String),
}

impl SendFailure {
    fn nothing_sent(&self) -> bool {
        matches!(self, SendFailure::Unreachable(_))
    }
}

/// Sends a ticket and waits for the printer's status answer after it.
async fn send(address: &str, ticket: &[u8]) -> Result<(), SendFailure> {
    let mut stream = match timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => return Err(SendFailure::Unreachable(e.to_string())),
        Err(_) => return Err(SendFailure::Unreachable("no answer to connect".into())),
    };
    let exchange = async {
        stream.write_all(ticket).await?;
        stream.write_all(&escpos::STATUS_REQUEST).await?;
        stream.flush().await?;
        let mut status = [0u8];
        stream.read_exact(&mut status).await?;
        Ok::<u8, std::io::Error>(status[0])
    };
    let status = match timeout(ANSWER_TIMEOUT, exchange).await {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => return Err(SendFailure::Unconfirmed(e.to_string())),
        Err(_) => return Err(SendFailure::Unconfirmed("no status answer in time".into())),
    };
    let _ = stream.shutdown().await;
    if escpos::is_offline(status) {
        return Err(SendFailure::Unconfirmed(
            "the printer is offline (cover open, out of paper, or an error)".into(),
        ));
    }
    Ok(())
}
