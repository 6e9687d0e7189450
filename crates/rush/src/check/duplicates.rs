//! The check that no order was placed twice: no key answered with two
//! orders, no order nobody was told of, no cart placed again where the
//! server's duplicate rule should have refused it, no order answered to
//! two keys.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::Check;
use super::accounting::{Keyed, Ledger, Owners};
use super::history::Ordered;
use super::timeline::within_window;

pub(super) struct PlacedTwice {
    pub(super) check: Check,
    pub(super) duplicates: usize,
}

/// Orders that should not exist, each with why and what they were, and
/// how many problems of each kind were found.
#[derive(Default)]
struct Extra<'a> {
    orders: BTreeMap<&'a str, Value>,
    counts: BTreeMap<&'static str, usize>,
}

impl Extra<'_> {
    fn count(&mut self, what: &'static str) {
        *self.counts.entry(what).or_default() += 1;
    }
}

impl<'a> Ledger<'a> {
    pub(super) fn placed_twice(&self, owners: &Owners<'a>) -> PlacedTwice {
        let mut extra = Extra::default();
        self.keys_with_several_orders(&mut extra);
        self.orders_nobody_was_told_of(owners, &mut extra);
        self.placed_while_live(owners, &mut extra);
        let shared = self.orders_of_several_keys(&mut extra);

        let duplicates = extra.orders.len();
        let detail = self.placed_twice_detail(owners, &extra.counts);
        let mut problems: Vec<Value> = extra.orders.into_values().collect();
        problems.extend(shared);
        PlacedTwice {
            check: Check::new(
                "no order was placed twice",
                problems.is_empty(),
                detail,
                problems,
            ),
            duplicates,
        }
    }

    fn keys_with_several_orders(&self, extra: &mut Extra<'a>) {
        for keyed in &self.keyed {
            let mut ids: Vec<&Ordered> = keyed
                .request
                .placed()
                .into_iter()
                .filter_map(|id| self.orders.get(id).copied())
                .collect();
            ids.sort_by_key(|o| self.timeline.order(o));
            for second in ids.iter().skip(1) {
                extra.count("keys answered with several orders");
                extra.orders.entry(&second.id).or_insert_with(|| {
                    json!({
                        "problem": "one key answered with several orders",
                        "orders": ids.iter().map(|o| self.timeline.evidence(o)).collect::<Vec<_>>(),
                        "requests": [keyed.evidence()],
                    })
                });
            }
        }
    }

    fn orders_nobody_was_told_of(&self, owners: &Owners<'a>, extra: &mut Extra<'a>) {
        for order in &owners.unexplained {
            extra.count("orders nobody was told of");
            // Keys of the same device and cart that were never told of an
            // order: where to look in the audit log.
            let alike = (0..self.keyed.len()).filter(|k| {
                self.keyed[*k].request.placed().is_empty()
                    && self.keyed[*k].could_have_placed(order)
            });
            extra.orders.insert(
                &order.id,
                json!({
                    "problem": "an order nobody was told of: no answer named it, and no \
                                unanswered tap of its device and cart is left to have placed it",
                    "orders": [self.timeline.evidence(order)],
                    "requests": self.requests(alike.take(10)),
                }),
            );
        }
    }

    fn placed_while_live(&self, owners: &Owners<'a>, extra: &mut Extra<'a>) {
        let mut by_device: BTreeMap<(&str, Option<&str>), Vec<&Ordered>> = BTreeMap::new();
        for order in self.facts.history {
            by_device
                .entry((&order.session_id, order.client_id.as_deref()))
                .or_default()
                .push(order);
        }
        for same_device in by_device.values() {
            for y in same_device {
                let Some(&k) = owners.of.get(y.id.as_str()) else {
                    continue;
                };
                let Some(x) = self.repeated(y, &self.keyed[k], same_device) else {
                    continue;
                };
                extra.count("placed while an identical order was live");
                let problem = if self.keyed[k].fresh {
                    "a fresh-key tap placed its cart again while the original was live"
                } else {
                    "placed again while the same device's same cart was live, without allowRepeat"
                };
                let keys = owners.of.get(x.id.as_str()).copied().into_iter().chain([k]);
                extra.orders.entry(&y.id).or_insert_with(|| {
                    json!({
                        "problem": problem,
                        "orders": [self.timeline.evidence(x), self.timeline.evidence(y)],
                        "requests": self.requests(keys),
                    })
                });
            }
        }
    }

    /// The order the duplicate rule should have refused `y` for, if any: an
    /// earlier one of the same device and cart, inside the window and not
    /// yet cancelled, when `y`'s request did not ask for a repeat.
    fn repeated(
        &self,
        y: &Ordered,
        by: &Keyed,
        same_device: &[&'a Ordered],
    ) -> Option<&'a Ordered> {
        if by.intent.allow_repeat() {
            return None;
        }
        same_device.iter().copied().find(|x| {
            x.id != y.id
                && x.payload == y.payload
                && self.timeline.placed_before(x, y)
                && within_window(x, y, self.facts.duplicate_window)
                && self.timeline.live_when_placed(x, y)
        })
    }

    /// Orders the 201s of several keys named: problems of their own, not
    /// orders that should not exist.
    fn orders_of_several_keys(&self, extra: &mut Extra<'a>) -> Vec<Value> {
        let shared: Vec<Value> = self
            .named
            .iter()
            .filter(|(_, ks)| ks.len() > 1)
            .map(|(id, ks)| {
                json!({
                    "problem": "one order answered to several keys",
                    "orders": [self.order(id)],
                    "requests": self.requests(ks.iter().copied()),
                })
            })
            .collect();
        for _ in &shared {
            extra.count("orders answered to several keys");
        }
        shared
    }

    fn placed_twice_detail(
        &self,
        owners: &Owners<'a>,
        counts: &BTreeMap<&'static str, usize>,
    ) -> String {
        let named = self.facts.history.len() - owners.unheard.len() - owners.unexplained.len();
        format!(
            "{} orders in the history, {named} named by the answer to one key{}; {}",
            self.facts.history.len(),
            if owners.unheard.is_empty() {
                String::new()
            } else {
                format!(
                    ", {} committed with their answer never heard",
                    owners.unheard.len()
                )
            },
            if counts.is_empty() {
                "none placed twice".to_owned()
            } else {
                let counts: Vec<String> = counts
                    .iter()
                    .map(|(what, n)| format!("{n} {what}"))
                    .collect();
                counts.join(", ")
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::check::fixtures::*;

    #[test]
    fn a_fresh_key_tap_after_a_refusal_places_the_only_order() {
        let intents = [intent(
            cart(false),
            vec![vec![refused(409, "OUT_OF_STOCK")]],
            Some(vec![created("y")]),
        )];
        assert_clean(&judge_simply(&intents, &[order("y", 1, "placed")]));
    }

    #[test]
    fn a_fresh_key_tap_of_a_repeat_is_placed_once_the_cooldown_is_over() {
        let intents = [intent(
            cart(true),
            vec![vec![created("x")]],
            Some(vec![refused(429, "COOLDOWN_ACTIVE"), created("y")]),
        )];
        let history = [order("x", 0, "placed"), order("y", 2, "placed")];
        assert_clean(&judge_simply(&intents, &history));
    }

    #[test]
    fn a_fresh_key_tap_after_staff_cancelled_the_original_is_placed() {
        let intents = [intent(
            cart(false),
            vec![vec![created("x")]],
            Some(vec![created("y")]),
        )];
        let history = [order("x", 0, "cancelled"), order("y", 2, "placed")];
        let cancelled_first = [
            event(1, "order.placed", "x", "placed"),
            event(2, "order.updated", "x", "cancelled"),
            event(3, "order.placed", "y", "placed"),
        ];
        assert_clean(&judge(&intents, &history, &cancelled_first));

        // Cancelled only after the second was placed: the rule should have held.
        let cancelled_after = [
            event(1, "order.placed", "x", "placed"),
            event(2, "order.placed", "y", "placed"),
            event(3, "order.updated", "x", "cancelled"),
        ];
        let accounting = judge(&intents, &history, &cancelled_after);
        assert!(!accounting.checks[1].passed);
        assert_eq!(accounting.duplicates, 1);
    }

    #[test]
    fn a_fresh_key_tap_placed_while_the_original_is_live_is_a_duplicate_with_its_evidence() {
        let intents = [intent(
            cart(false),
            vec![vec![unanswered(), created("x")]],
            Some(vec![created("y")]),
        )];
        let history = [order("x", 0, "placed"), order("y", 1, "placed")];
        let accounting = judge_simply(&intents, &history);
        let check = &accounting.checks[1];
        assert!(!check.passed);
        assert_eq!(accounting.duplicates, 1);
        assert!(
            check
                .detail
                .contains("1 placed while an identical order was live")
        );
        let evidence = serde_json::to_value(check).unwrap()["evidence"].clone();
        let problem = &evidence[0];
        assert_eq!(
            problem["problem"],
            "a fresh-key tap placed its cart again while the original was live"
        );
        assert_eq!(problem["orders"][0]["orderId"], "x");
        assert_eq!(problem["orders"][1]["orderId"], "y");
        assert_eq!(problem["orders"][1]["placedEvent"], 2);
        assert_eq!(problem["requests"][0]["key"], "key");
        assert_eq!(problem["requests"][0]["sends"][0][0]["requestId"], "r");
        assert!(
            problem["requests"][0]["sends"][0][0]
                .get("status")
                .is_none()
        );
        assert_eq!(problem["requests"][0]["sends"][0][1]["status"], 201);
        assert_eq!(problem["requests"][1]["key"], "fresh-key");
        assert_eq!(problem["requests"][1]["freshKeyTap"], true);
        assert_eq!(problem["requests"][1]["sends"][0][0]["orderId"], "y");
        // The other checks hold, and say nothing more.
        assert!(accounting.checks[0].passed && accounting.checks[2].passed);
        assert!(accounting.checks[0].evidence.is_empty());
    }

    #[test]
    fn the_same_cart_again_after_the_duplicate_window_is_a_new_order() {
        let intents = [intent(
            cart(false),
            vec![vec![created("x")]],
            Some(vec![created("y")]),
        )];
        let history = [order("x", 0, "placed"), order("y", 30, "placed")];
        assert_clean(&judge_simply(&intents, &history));
        let history = [order("x", 0, "placed"), order("y", 29, "placed")];
        assert_eq!(judge_simply(&intents, &history).duplicates, 1);
    }

    #[test]
    fn one_key_answered_with_two_orders_is_a_duplicate() {
        let intents = [intent(
            cart(true),
            vec![vec![created("x")], vec![created("y")]],
            None,
        )];
        let history = [order("x", 0, "placed"), order("y", 0, "placed")];
        let accounting = judge_simply(&intents, &history);
        assert_eq!(accounting.duplicates, 1);
        assert!(
            accounting.checks[1]
                .detail
                .contains("1 keys answered with several orders")
        );
    }
}
