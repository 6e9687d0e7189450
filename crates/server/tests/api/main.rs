//! HTTP integration tests: the real server on port 0 over a fresh SQLite
//! database per test, driven through its public API with a real client.

mod helpers;

mod catalog;
mod errors;
mod inventory;
mod menu;
mod ops;
mod sessions;
mod shops;
