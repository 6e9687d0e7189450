//! The ordergate server: HTTP API, authentication, problem errors, live
//! events and metrics, over any [`ordergate_store::Store`] backend.

pub mod accounts;
pub mod app;
pub mod auth;
pub mod config;
pub mod error;
pub mod etag;
pub mod extract;
pub mod hub;
pub mod idempotency;
pub mod limits;
pub mod menu_cache;
pub mod metrics;
pub mod openapi;
pub mod photo_cache;
pub mod photos;
pub mod printing;
mod routes;

pub use app::{HEADER_READ_TIMEOUT, open_store, serve, serve_with_clock};
pub use config::Settings;
