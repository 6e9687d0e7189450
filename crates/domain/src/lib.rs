//! The pure core of ordergate: the types the API speaks and the rules that
//! decide what is valid. Nothing here does I/O, so every rule can be unit
//! tested beside its code and reused unchanged by every storage backend.

pub mod allergens;
pub mod audit;
pub mod catalog;
pub mod clock;
pub mod code;
pub mod events;
pub mod idempotency;
pub mod inventory;
pub mod language;
pub mod menu;
pub mod order;
pub mod paging;
pub mod printing;
pub mod rejection;
pub mod service;
pub mod session;
pub mod shop;
pub mod staff;
pub mod table;
pub mod validation;
pub mod wait;

pub use rejection::Rejection;

/// Every timestamp ordergate stores or returns: UTC, millisecond precision.
pub type Timestamp = chrono::DateTime<chrono::Utc>;

/// The current time truncated to the millisecond precision the stores keep,
/// so a value read back equals the value written.
pub fn now() -> Timestamp {
    let now = chrono::Utc::now();
    chrono::DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now)
}
