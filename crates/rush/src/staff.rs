//! The floor staff of a rush: restocking and cancelling while guests order.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use uuid::Uuid;

use crate::SETTLE;
use crate::client::{Answer as ClientAnswer, Client, Reply};
use crate::setup::Shop;
use crate::tally::says_retry;

/// What the floor staff did during the rush.
#[derive(Debug, Default)]
pub struct StaffTally {
    /// Units added to each item by acknowledged restocks.
    pub restocked: BTreeMap<String, i64>,
    /// Restocks that never got an answer: applied or not, nobody can say,
    /// so the stock cannot be judged.
    pub unanswered_restocks: usize,
    pub cancelled: Vec<String>,
}

/// Restocks the hot item every second and cancels a recent order every few
/// seconds, as a floor does, each with an Idempotency-Key kept on retry.
pub async fn run(clients: Arc<Vec<Client>>, shop: Shop, deadline: Instant) -> StaffTally {
    let mut tally = StaffTally::default();
    let give_up = deadline + SETTLE;
    let mut round = 0u64;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(1)).await;
        round += 1;
        let client = &clients[rand::random_range(0..clients.len())];
        if let Some(hot) = &shop.hot {
            let quantity = (shop.tables.len() as i64).max(1);
            let key = Uuid::new_v4().to_string();
            let restock = || client.restock(&shop.shop_id, hot, quantity, Some(&key));
            match until_answered(give_up, restock).await {
                Some(reply) if reply.status == 200 => {
                    *tally.restocked.entry(hot.clone()).or_default() += quantity;
                }
                // Refused: nothing was added.
                Some(_) => {}
                None => tally.unanswered_restocks += 1,
            }
        }
        if round.is_multiple_of(3) {
            let table = &shop.tables[rand::random_range(0..shop.tables.len())];
            let Ok(orders) = client.session_orders(&table.session_id, 1).await else {
                continue;
            };
            let Some(order) = orders.body["orders"].as_array().and_then(|o| o.first()) else {
                continue;
            };
            let order_id = order["orderId"].as_str().unwrap_or_default().to_owned();
            let key = Uuid::new_v4().to_string();
            let body = json!({"status": "cancelled"});
            let cancel = || client.set_status(&order_id, &body, Some(&key));
            if until_answered(give_up, cancel)
                .await
                .is_some_and(|reply| reply.status == 200)
            {
                tally.cancelled.push(order_id);
            }
        }
    }
    tally
}

/// Sends a staff request, with the same key every time, until it is
/// answered with something other than "try again" (a lost answer, or what
/// [`says_retry`]); `None` if `give_up` came first.
async fn until_answered<F, A>(give_up: Instant, mut send: F) -> Option<Reply>
where
    F: FnMut() -> A,
    A: Future<Output = ClientAnswer>,
{
    loop {
        match send().await {
            Ok(reply) if !says_retry(&reply) => return Some(reply),
            _ if Instant::now() > give_up => return None,
            _ => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
}
