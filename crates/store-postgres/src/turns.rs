//! A shop's orders that arrive together, placed together.
//!
//! Every order takes its shop's ticket and event counter rows and holds
//! them until it commits, so one shop's orders commit one after another,
//! each paying a round trip for its commit and a WAL flush while the next
//! waits. One shop topped out near 700 orders/s on the bench machine, and
//! so did a raw client running nothing but an order's own statements, one
//! order a transaction (pgbench, 64 clients): no change inside one order's
//! transaction could lift it. So on each node a shop's orders take turns:
//! while a transaction of the shop's orders runs, the orders that arrive
//! wait, and the next transaction places all of them (one per table, each
//! decided on its own, as if it were alone), one commit and one hold of the
//! counters for the lot. An order that finds its shop idle goes at once.
//!
//! Nothing in a turn waits for another transaction's key or table: an
//! order whose key or table is held elsewhere is left out of its turn and
//! placed alone, waiting as it always did (see [`place::Locks`]). Turns
//! are this node's: orders of one shop on several nodes take turns on each
//! and meet at the counter rows, as single orders do.
//!
//! On Citus every order is placed alone: its filing is several statements
//! (see [`crate::filing`]), not yet written for a group.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ordergate_store::{Ordered, PlaceOrder, StoreError, StoreResult};
use tokio::sync::oneshot;
use uuid::Uuid;

use crate::Pg;
use crate::place::{self, Locks};
use crate::tx::Tx;

/// Most orders one turn places: enough to share a commit among a full
/// dining room's tables, few enough that the first is not kept long.
const MOST_TOGETHER: usize = 64;

/// Turns of one shop running at once on a node: while one files its
/// orders and commits (holding the shop's counters), the next locks and
/// reads for its own, and then waits for the counters.
const MOST_RUNNING: usize = 2;

/// The shops with turns running on this node.
#[derive(Default)]
pub(crate) struct Turns {
    shops: Mutex<HashMap<Uuid, ShopTurns>>,
}

#[derive(Default)]
struct ShopTurns {
    running: usize,
    /// The tables of the orders in the running turns: an order at one of
    /// them waits for a later turn rather than for its table.
    seated: HashSet<Uuid>,
    waiting: VecDeque<Waiting>,
}

struct Waiting {
    order: PlaceOrder,
    answer: oneshot::Sender<StoreResult<Ordered>>,
}

/// What became of an order in a turn.
enum Turned {
    Ordered(StoreResult<Ordered>),
    /// Left out (its key or table was held elsewhere, or the turn's
    /// transaction failed before its commit): to be placed alone.
    LeftOut(Box<PlaceOrder>),
}

impl Turns {
    /// Starts a turn of the shop's for `order` (`Ok`: place it now, then
    /// [`Turns::next`]), or queues it for a later turn.
    fn join(
        &self,
        shop_id: Uuid,
        order: PlaceOrder,
    ) -> Result<PlaceOrder, oneshot::Receiver<StoreResult<Ordered>>> {
        let mut shops = self.shops.lock().unwrap_or_else(|e| e.into_inner());
        let shop = shops.entry(shop_id).or_default();
        if shop.running < MOST_RUNNING && !shop.seated.contains(&order.session_id) {
            shop.running += 1;
            shop.seated.insert(order.session_id);
            return Ok(order);
        }
        let (answer, answered) = oneshot::channel();
        shop.waiting.push_back(Waiting { order, answer });
        Err(answered)
    }

    /// Ends a turn of the shop's, which placed orders at `tables`, and
    /// returns the orders its runner places next: those queued, oldest
    /// first, one per table and none at a table of a running turn, at most
    /// [`MOST_TOGETHER`]; the rest wait for a later turn. `None` when none
    /// can go: the runner stops.
    fn next(&self, shop_id: Uuid, tables: &[Uuid]) -> Option<Vec<Waiting>> {
        let mut shops = self.shops.lock().unwrap_or_else(|e| e.into_inner());
        let shop = shops.get_mut(&shop_id)?;
        for table in tables {
            shop.seated.remove(table);
        }
        let mut turn = Vec::new();
        let mut later = VecDeque::new();
        for queued in shop.waiting.drain(..) {
            if turn.len() < MOST_TOGETHER && shop.seated.insert(queued.order.session_id) {
                turn.push(queued);
            } else {
                later.push_back(queued);
            }
        }
        shop.waiting = later;
        if !turn.is_empty() {
            return Some(turn);
        }
        shop.running -= 1;
        if shop.running == 0 {
            // With no turn running no table is seated, so every queued
            // order could have gone: none is queued.
            shops.remove(&shop_id);
        }
        None
    }
}

impl Pg {
    /// Places an order: in its shop's turn on this node when the shop is
    /// known here (see the module's notes), or else alone.
    pub(crate) async fn place_order(
        self: Arc<Self>,
        order: PlaceOrder,
        in_flight_wait: Duration,
    ) -> StoreResult<Ordered> {
        let shop_id = match self.routes.known(order.session_id) {
            Some(shop_id) if !self.shards.distributed() => shop_id,
            _ => return self.place_alone(order, in_flight_wait).await,
        };
        let order = match self.turns.join(shop_id, order) {
            Ok(order) => order,
            Err(answered) => {
                return answered.await.unwrap_or_else(|_| {
                    Err(StoreError::Internal("a turn ended unanswered".into()))
                });
            }
        };
        let table = [order.session_id];
        let turned = self.place_in_turn(shop_id, vec![order]).await;
        if let Some(next) = self.turns.next(shop_id, &table) {
            tokio::spawn(Arc::clone(&self).take_turns(shop_id, next, in_flight_wait));
        }
        match turned.into_iter().next() {
            Some(Turned::Ordered(ordered)) => ordered,
            Some(Turned::LeftOut(order)) => self.place_alone(*order, in_flight_wait).await,
            None => Err(StoreError::Internal("a turn lost its order".into())),
        }
    }

    /// Runs the shop's turns, from `turn` on, until no order waits; orders
    /// left out are placed alone beside them.
    async fn take_turns(
        self: Arc<Self>,
        shop_id: Uuid,
        mut turn: Vec<Waiting>,
        in_flight_wait: Duration,
    ) {
        loop {
            let (orders, answers): (Vec<_>, Vec<_>) = turn
                .into_iter()
                .map(|waiting| (waiting.order, waiting.answer))
                .unzip();
            let tables: Vec<Uuid> = orders.iter().map(|order| order.session_id).collect();
            let turned = self.place_in_turn(shop_id, orders).await;
            for (turned, answer) in turned.into_iter().zip(answers) {
                match turned {
                    Turned::Ordered(ordered) => {
                        // A caller that stopped waiting has nothing to hear.
                        let _ = answer.send(ordered);
                    }
                    Turned::LeftOut(order) => {
                        let pg = Arc::clone(&self);
                        tokio::spawn(async move {
                            let _ = answer.send(pg.place_alone(*order, in_flight_wait).await);
                        });
                    }
                }
            }
            match self.turns.next(shop_id, &tables) {
                Some(next) => turn = next,
                None => return,
            }
        }
    }

    /// One turn: `orders` (of `shop_id`, each at a table of its own) in one
    /// transaction, none waiting for another transaction's key or table.
    /// The transaction runs in a task of its own, so that a panic in it
    /// fails its orders and not the shop's turns.
    async fn place_in_turn(
        self: &Arc<Self>,
        shop_id: Uuid,
        orders: Vec<PlaceOrder>,
    ) -> Vec<Turned> {
        let count = orders.len();
        let pg = Arc::clone(self);
        match tokio::spawn(async move { pg.place_together(shop_id, orders).await }).await {
            Ok(turned) => turned,
            Err(failed) => {
                tracing::error!(error = %failed, "a turn of orders failed");
                (0..count)
                    .map(|_| {
                        Turned::Ordered(Err(StoreError::Internal(
                            "placing the order failed".into(),
                        )))
                    })
                    .collect()
            }
        }
    }

    async fn place_together(&self, shop_id: Uuid, orders: Vec<PlaceOrder>) -> Vec<Turned> {
        let left_out = |orders: Vec<PlaceOrder>| {
            orders
                .into_iter()
                .map(|order| Turned::LeftOut(Box::new(order)))
                .collect()
        };
        // Only stock and counter rows are waited for, as long as the most
        // hurried order would wait for its table.
        let wait = orders
            .iter()
            .map(place::table_wait)
            .min()
            .unwrap_or_default();
        let mut tx = match Tx::begin_waiting(&self.pool, wait, false).await {
            Ok(tx) => tx,
            // Placed alone, each order meets the failure for itself.
            Err(_) => return left_out(orders),
        };
        let outcomes = match place::place(&mut tx, shop_id, &orders, Locks::TakeFree).await {
            Ok(outcomes) => outcomes,
            Err(e) => {
                tracing::debug!(error = ?e, "a turn of orders is placed order by order");
                tx.rollback().await;
                return left_out(orders);
            }
        };
        let committed = self.finish(tx, Ok(())).await.map_err(|e| e.to_string());
        orders
            .into_iter()
            .zip(outcomes)
            .map(|(order, outcome)| match (outcome, &committed) {
                (None, _) => Turned::LeftOut(Box::new(order)),
                (Some(ordered), Ok(())) => Turned::Ordered(Ok(ordered)),
                // The commit may have happened: a retry with the order's
                // key finds out.
                (Some(_), Err(why)) => {
                    Turned::Ordered(Err(StoreError::Unavailable(why.clone().into())))
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Building a `PlaceOrder` needs the whole domain; the queue's rules are
    // shown on the store's own tests (tests/turns.rs) and here on its
    // bookkeeping alone.
    #[test]
    fn a_shop_without_queued_orders_ends_its_turns() {
        let turns = Turns::default();
        let shop_id = Uuid::new_v4();
        let table = Uuid::new_v4();
        turns.shops.lock().unwrap().insert(
            shop_id,
            ShopTurns {
                running: 1,
                seated: HashSet::from([table]),
                waiting: VecDeque::new(),
            },
        );
        assert!(turns.next(shop_id, &[table]).is_none());
        assert!(turns.shops.lock().unwrap().is_empty());
        assert!(
            turns.next(shop_id, &[table]).is_none(),
            "no turn, nothing next"
        );
    }
}
