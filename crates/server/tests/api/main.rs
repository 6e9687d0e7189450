//! HTTP integration tests: the real server on port 0 over a fresh SQLite
//! database per test, driven through its public API with a real client.

mod helpers;

mod catalog;
mod errors;
mod inventory;
mod menu;
mod ops;
mod order_audit;
mod order_checks;
mod order_retries;
mod order_stock;
mod orders;
mod sessions;
mod shops;
mod staff_idempotency;
mod staff_orders;
