//! The live-stream figures: how long an order's `order.placed` event takes
//! to reach each of many connected subscribers, and how much memory the
//! server holds per idle subscriber.

mod fanout;
mod memory;

use std::net::SocketAddr;

use anyhow::Context;

use crate::server::{STAFF_TOKEN, Shop};

pub use fanout::fanout;
pub use memory::memory;

/// Streams being opened at once.
const CONNECT_PARALLEL: usize = 128;

fn address(base: &str) -> anyhow::Result<SocketAddr> {
    base.strip_prefix("http://")
        .unwrap_or(base)
        .parse()
        .with_context(|| format!("server address {base}"))
}

fn staff_stream(shop: &Shop) -> String {
    format!(
        "/api/v1/shops/{}/events?access_token={STAFF_TOKEN}",
        shop.shop_id
    )
}
