//! Why a well-formed request was refused. Stores and handlers return these;
//! the server turns each into its problem+json response in one place.

use uuid::Uuid;

use crate::validation::FieldError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Rejection {
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    #[error("table {table_label} already has an active session")]
    TableOccupied { table_label: String },
    #[error("the shop has not published a catalog yet")]
    CatalogNotReady,
    #[error("item {item_id} has no tracked stock to add to")]
    StockNotTracked { item_id: Uuid },
}

impl Rejection {
    /// A rejection naming a single bad field.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Rejection::Validation(vec![FieldError {
            field: field.into(),
            message: message.into(),
        }])
    }
}
