//! Kitchen printers as the store keeps them: configuration, progress through
//! the shop's event log, and the lease whoever prints to a printer holds.

use async_trait::async_trait;
use ordergate_domain::Timestamp;
use ordergate_domain::printing::{Printer, PrinterProgress};

use crate::StoreResult;

/// A printer and where its work stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrinterState {
    pub printer: Printer,
    pub progress: PrinterProgress,
}

/// One step of a printer's work, recorded as it happens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrintStep {
    /// Every event up to this one needed nothing of the printer.
    Passed(i64),
    /// This event's ticket is being sent: from here until [`Printed`] a
    /// stop leaves it marked as possibly printed.
    ///
    /// [`Printed`]: PrintStep::Printed
    Sending(i64),
    /// The printer confirmed this event's ticket: it is the new cursor.
    Printed(i64),
    /// The printer could not be reached. When nothing left for it, the
    /// ticket being sent is known unsent and is no longer a possible repeat.
    Failed { error: String, nothing_sent: bool },
}

/// The right to print to one printer. On several nodes exactly one holds
/// it; every step is recorded through it, so a node that lost it (its
/// database connection went away) can record nothing more.
#[async_trait]
pub trait PrinterLease: Send {
    /// The printer's progress; `None` once it was deleted.
    async fn progress(&mut self) -> StoreResult<Option<PrinterProgress>>;
    async fn record(&mut self, step: PrintStep, now: Timestamp) -> StoreResult<()>;
}
