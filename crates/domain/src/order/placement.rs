//! Step 8 of the contract, an admitted order's commit: prices from the
//! catalog, the stock check, and the order itself, decided from what the
//! store read. The store writes what this returns, in one transaction.

use std::collections::{BTreeMap, HashMap};

use uuid::Uuid;

use super::admission::Caller;
use super::{
    ItemLookup, Order, OrderLine, OrderStatus, Shortage, ValidOrder, price_lines, stock_needed,
};
use crate::catalog::Topping;
use crate::inventory::{StockLevel, StockMove};
use crate::language::Languages;
use crate::session::Session;
use crate::{Rejection, Timestamp};

/// The catalog entries an order names, as the store found them.
#[derive(Debug, Clone, Default)]
pub struct Referenced {
    /// The shop's catalog version; 0 when it was never published.
    pub catalog_version: i64,
    /// Every named menu item; an id the shop does not have is missing.
    pub items: HashMap<Uuid, ItemLookup>,
    /// Active toppings only.
    pub toppings: HashMap<Uuid, Topping>,
    /// The shop's languages: orders keep names in its default.
    pub languages: Languages,
}

/// The menu item and topping ids an order names, each once, ascending:
/// what the store reads into [`Referenced`].
pub fn referenced_ids(order: &ValidOrder) -> (Vec<Uuid>, Vec<Uuid>) {
    let mut items: Vec<Uuid> = order.lines.iter().map(|l| l.menu_item_id).collect();
    items.sort_unstable();
    items.dedup();
    let mut toppings: Vec<Uuid> = order
        .lines
        .iter()
        .flat_map(|l| l.topping_ids.iter().copied())
        .collect();
    toppings.sort_unstable();
    toppings.dedup();
    (items, toppings)
}

/// An order's lines priced from the catalog, and the stock they need.
#[derive(Debug, Clone, PartialEq)]
pub struct Priced {
    lines: Vec<OrderLine>,
    needed: BTreeMap<Uuid, i64>,
}

impl Referenced {
    /// Prices every line; the catalog must be published and name every
    /// line's item and toppings as orderable.
    pub fn price(&self, order: &ValidOrder) -> Result<Priced, Rejection> {
        if self.catalog_version == 0 {
            return Err(Rejection::CatalogNotReady);
        }
        let lines = price_lines(
            order,
            |id| self.items.get(&id).cloned().unwrap_or(ItemLookup::Unknown),
            |id| self.toppings.get(&id).cloned(),
            &self.languages,
        )?;
        let needed = stock_needed(&lines);
        Ok(Priced { lines, needed })
    }
}

impl Priced {
    /// The stock rows the order touches, ascending: the order every
    /// transaction reads (and locks) stock rows in, so concurrent orders
    /// cannot deadlock.
    pub fn stock_ids(&self) -> Vec<Uuid> {
        self.needed.keys().copied().collect()
    }

    /// What the order takes from each tracked level (`levels` as read for
    /// [`Priced::stock_ids`]), in ascending id order; `OutOfStock` listing
    /// every shortage when any level has too little.
    pub fn take_stock(
        &self,
        levels: &HashMap<Uuid, StockLevel>,
        now: Timestamp,
    ) -> Result<Vec<StockMove>, Rejection> {
        let shortages: Vec<Shortage> = self
            .needed
            .iter()
            .filter_map(|(&item_id, &requested)| {
                let available = levels.get(&item_id)?.available(now)?;
                (available < requested).then_some(Shortage {
                    item_id,
                    requested,
                    available,
                })
            })
            .collect();
        if !shortages.is_empty() {
            return Err(Rejection::OutOfStock { shortages });
        }
        Ok(self
            .needed
            .iter()
            .filter_map(|(&item_id, &quantity)| {
                StockMove::of(item_id, levels.get(&item_id)?, -quantity)
            })
            .collect())
    }

    /// The placed order, numbered with the ticket the store drew.
    pub fn into_order(self, placing: NewOrder<'_>, ticket_number: i64) -> Order {
        Order {
            order_id: placing.order_id,
            shop_id: placing.session.shop_id,
            session_id: placing.session.session_id,
            table_label: placing.session.table_label.clone(),
            ticket_number,
            status: OrderStatus::Placed,
            source: placing.caller.source(),
            client_id: placing.caller.client_id().map(str::to_owned),
            total: self.lines.iter().map(|l| l.line_total).sum(),
            items: self.lines,
            note: placing.note.to_owned(),
            created_at: placing.now,
            version: 1,
        }
    }
}

/// Who places which order where, and when.
#[derive(Debug, Clone, Copy)]
pub struct NewOrder<'a> {
    pub order_id: Uuid,
    pub session: &'a Session,
    pub caller: &'a Caller,
    pub note: &'a str,
    pub now: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::MenuItem;
    use crate::idempotency::ClientId;
    use crate::order::{LineRequest, OrderRequest, OrderSource};
    use crate::session::{GuestProof, SessionStatus};

    fn now() -> Timestamp {
        "2026-12-01T12:00:00Z".parse().unwrap()
    }

    fn item(id: Uuid, price: i64, toppings: &[Uuid]) -> ItemLookup {
        ItemLookup::Active(Box::new(MenuItem {
            menu_item_id: id,
            name: "Curry".into(),
            description: Default::default(),
            category: "Mains".into(),
            price,
            topping_ids: toppings.to_vec(),
            max_toppings: 2,
            details: Default::default(),
            option_groups: vec![],
        }))
    }

    fn order(lines: &[(Uuid, i64, &[Uuid])]) -> ValidOrder {
        OrderRequest {
            items: lines
                .iter()
                .map(|&(menu_item_id, quantity, toppings)| LineRequest {
                    menu_item_id,
                    quantity,
                    topping_ids: toppings.to_vec(),
                    note: None,
                    option_ids: vec![],
                })
                .collect(),
            note: Some("no onions".into()),
            allow_repeat: false,
        }
        .validate()
        .unwrap()
    }

    fn level(stock: Option<i64>) -> StockLevel {
        StockLevel {
            stock,
            marked_sold_out: false,
            sold_out_until: None,
        }
    }

    #[test]
    fn ids_are_read_once_each_in_ascending_order() {
        let (a, b, t) = (Uuid::from_u128(2), Uuid::from_u128(1), Uuid::from_u128(9));
        let ids = referenced_ids(&order(&[(a, 1, &[t]), (b, 1, &[t]), (a, 2, &[])]));
        assert_eq!(ids, (vec![b, a], vec![t]));
    }

    #[test]
    fn an_unpublished_catalog_prices_nothing() {
        let curry = Uuid::from_u128(1);
        let referenced = Referenced {
            catalog_version: 0,
            items: HashMap::from([(curry, item(curry, 900, &[]))]),
            ..Referenced::default()
        };
        assert_eq!(
            referenced.price(&order(&[(curry, 1, &[])])),
            Err(Rejection::CatalogNotReady)
        );
    }

    #[test]
    fn stock_is_taken_from_tracked_rows_only_or_every_shortage_is_named() {
        let (curry, rice, egg) = (Uuid::from_u128(3), Uuid::from_u128(1), Uuid::from_u128(2));
        let referenced = Referenced {
            catalog_version: 1,
            items: HashMap::from([
                (curry, item(curry, 900, &[egg])),
                (rice, item(rice, 200, &[])),
            ]),
            toppings: HashMap::from([(
                egg,
                Topping {
                    topping_id: egg,
                    name: "Egg".into(),
                    price: 100,
                },
            )]),
            languages: Languages::default(),
        };
        let priced = referenced
            .price(&order(&[(curry, 2, &[egg]), (rice, 1, &[])]))
            .unwrap();
        assert_eq!(priced.stock_ids(), vec![rice, egg, curry]);

        let levels = HashMap::from([
            (rice, level(None)),
            (egg, level(Some(5))),
            (curry, level(Some(2))),
        ]);
        let takes = priced.take_stock(&levels, now()).unwrap();
        assert_eq!(
            takes
                .iter()
                .map(|t| (t.item_id, t.delta, t.after.stock))
                .collect::<Vec<_>>(),
            vec![(egg, -2, Some(3)), (curry, -2, Some(0))],
            "untracked rice takes nothing; ascending ids"
        );

        let short = HashMap::from([(egg, level(Some(1))), (curry, level(Some(1)))]);
        let Err(Rejection::OutOfStock { shortages }) = priced.take_stock(&short, now()) else {
            panic!("expected a shortage");
        };
        assert_eq!(
            shortages
                .iter()
                .map(|s| (s.item_id, s.requested, s.available))
                .collect::<Vec<_>>(),
            vec![(egg, 2, 1), (curry, 2, 1)]
        );
    }

    #[test]
    fn the_order_carries_its_caller_table_and_total() {
        let curry = Uuid::from_u128(1);
        let referenced = Referenced {
            catalog_version: 1,
            items: HashMap::from([(curry, item(curry, 900, &[]))]),
            ..Referenced::default()
        };
        let valid = order(&[(curry, 3, &[])]);
        let session = Session {
            session_id: Uuid::from_u128(7),
            shop_id: Uuid::from_u128(8),
            table_label: "T4".into(),
            pin: "123456".into(),
            status: SessionStatus::Active,
            opened_at: now(),
            closed_at: None,
            pin_failures: 0,
            pin_locked_until: None,
        };
        let caller = Caller::Guest {
            proof: GuestProof::Token,
            client_id: ClientId::parse(Some("phone-1")).unwrap(),
        };
        let placing = NewOrder {
            order_id: Uuid::from_u128(9),
            session: &session,
            caller: &caller,
            note: &valid.note,
            now: now(),
        };
        let order = referenced.price(&valid).unwrap().into_order(placing, 42);
        assert_eq!(
            (
                order.ticket_number,
                order.total,
                order.table_label.as_str(),
                order.source,
                order.client_id.as_deref(),
                order.note.as_str(),
                order.status,
                order.version,
            ),
            (
                42,
                2700,
                "T4",
                OrderSource::Guest,
                Some("phone-1"),
                "no onions",
                OrderStatus::Placed,
                1
            )
        );
    }
}
