//! HTTP integration tests: the real server on port 0 over a fresh SQLite
//! database per test, driven through its public API with a real client.

mod database;
mod fake_printer;
mod helpers;

mod abuse;
mod authorization;
mod catalog;
mod errors;
mod events;
mod guest_access;
mod inventory;
mod kitchen;
mod languages;
mod menu;
mod menu_cache;
mod nodes;
mod ops;
mod options;
mod order_audit;
mod order_checks;
mod order_retries;
mod order_stock;
mod orders;
mod outage;
mod pace;
mod photos;
mod printing;
mod security;
mod service;
mod sessions;
mod shops;
mod sse;
mod staff_accounts;
mod staff_idempotency;
mod staff_orders;
mod tables;
