//! Why a well-formed request was refused. Stores and handlers return these;
//! the server turns each into its problem+json response in one place.

use uuid::Uuid;

use crate::Timestamp;
use crate::code::ErrorCode;
use crate::order::{OptionError, Order, Shortage};
use crate::validation::FieldError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Rejection {
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    #[error("table {table_label} already has an active session")]
    TableOccupied { table_label: String },
    #[error("the shop has a table called {name} already")]
    TableNameTaken { name: String },
    #[error("the shop has a printer called {name} already")]
    PrinterNameTaken { name: String },
    /// A new account was asked for under a username that has one.
    #[error("an account is called {username} already")]
    UsernameTaken { username: String },
    #[error("the shop has not published a catalog yet")]
    CatalogNotReady,
    /// Another edit replaced the catalog since the version the editor read.
    #[error("the catalog is at version {current}")]
    CatalogVersionConflict { current: i64 },
    #[error("item {item_id} has no tracked stock to add to")]
    StockNotTracked { item_id: Uuid },
    #[error("wrong or missing session PIN")]
    PinInvalid,
    #[error("session PIN locked until {until}")]
    PinLocked { until: Timestamp },
    #[error("idempotency key reused with a different request")]
    IdempotencyKeyReused,
    #[error("the session is closed")]
    SessionClosed,
    #[error("the same order was placed moments ago")]
    DuplicatePayload { original: Box<Order> },
    #[error("the client ordered moments ago")]
    CooldownActive { until: Timestamp },
    #[error("the session placed its most orders for now")]
    SessionRateLimited { until: Timestamp },
    #[error("the session is busy")]
    SessionBusy,
    #[error("a request with this idempotency key is still in progress")]
    RequestInProgress,
    #[error("out of stock")]
    OutOfStock { shortages: Vec<Shortage> },
    #[error("line {line}: unknown menu item {menu_item_id}")]
    UnknownMenuItem { line: usize, menu_item_id: Uuid },
    #[error("line {line}: menu item {menu_item_id} is no longer on the menu")]
    ItemUnavailable { line: usize, menu_item_id: Uuid },
    #[error("the order is at version {current}, not the expected one")]
    VersionConflict { current: i64 },
    #[error("an order cannot go from {from} to {to}")]
    InvalidTransition {
        from: &'static str,
        to: &'static str,
    },
    /// The move a recall would undo is older than the recall window.
    #[error("the order's last move is older than {window_secs} s")]
    RecallExpired { window_secs: i64 },
    /// The order has no move a recall could undo: never moved, cancelled,
    /// or recalled already.
    #[error("an order that is {status} has no move to recall")]
    NothingToRecall { status: &'static str },
    #[error("line {line}: {reason}")]
    InvalidTopping {
        line: usize,
        topping_id: Option<Uuid>,
        reason: String,
    },
    /// Choices that break their items' option groups, every one of them.
    #[error("the choices break the items' option groups")]
    InvalidOptions { errors: Vec<OptionError> },
}

impl Rejection {
    /// A rejection naming a single bad field.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Rejection::Validation(vec![FieldError {
            field: field.into(),
            message: message.into(),
        }])
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            Rejection::NotFound(_) => ErrorCode::NotFound,
            Rejection::Validation(_) => ErrorCode::ValidationFailed,
            Rejection::TableOccupied { .. } => ErrorCode::TableOccupied,
            Rejection::TableNameTaken { .. } => ErrorCode::TableNameTaken,
            Rejection::PrinterNameTaken { .. } => ErrorCode::PrinterNameTaken,
            Rejection::UsernameTaken { .. } => ErrorCode::UsernameTaken,
            Rejection::CatalogNotReady => ErrorCode::CatalogNotReady,
            Rejection::StockNotTracked { .. } => ErrorCode::StockNotTracked,
            Rejection::PinInvalid => ErrorCode::PinInvalid,
            Rejection::PinLocked { .. } => ErrorCode::PinLocked,
            Rejection::IdempotencyKeyReused => ErrorCode::IdempotencyKeyReused,
            Rejection::SessionClosed => ErrorCode::SessionClosed,
            Rejection::DuplicatePayload { .. } => ErrorCode::DuplicatePayload,
            Rejection::CooldownActive { .. } => ErrorCode::CooldownActive,
            Rejection::SessionRateLimited { .. } => ErrorCode::SessionRateLimited,
            Rejection::SessionBusy => ErrorCode::SessionBusy,
            Rejection::RequestInProgress => ErrorCode::RequestInProgress,
            Rejection::OutOfStock { .. } => ErrorCode::OutOfStock,
            Rejection::UnknownMenuItem { .. } => ErrorCode::UnknownMenuItem,
            Rejection::ItemUnavailable { .. } => ErrorCode::ItemUnavailable,
            Rejection::InvalidTopping { .. } => ErrorCode::InvalidTopping,
            Rejection::InvalidOptions { .. } => ErrorCode::InvalidOptions,
            Rejection::VersionConflict { .. } => ErrorCode::VersionConflict,
            Rejection::CatalogVersionConflict { .. } => ErrorCode::CatalogVersionConflict,
            Rejection::InvalidTransition { .. } => ErrorCode::InvalidTransition,
            Rejection::RecallExpired { .. } => ErrorCode::RecallExpired,
            Rejection::NothingToRecall { .. } => ErrorCode::NothingToRecall,
        }
    }
}
