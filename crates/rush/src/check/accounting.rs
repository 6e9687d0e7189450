//! The accounting of orders: which key placed each order of the history,
//! and the checks that follow from it.
//!
//! Orders are accounted for by the answers that named them. Each order in
//! the history belongs to the one idempotency key whose 201 carried its id;
//! an order no answer named belongs to a key whose tap never got a final
//! answer (its request may have committed with the answer lost), if one of
//! the same device and cart is left, and is otherwise an order nobody was
//! told of. An order is placed twice when one key produced two orders, or
//! when the server's duplicate rule should have refused it: a request
//! without `allowRepeat` placed the same cart as an order of the same
//! device and table that was live (not cancelled) and inside the duplicate
//! window. Everything else that looks alike is what the contract asks for:
//! a fresh key after a refusal or a cancellation, a repeat the guest asked
//! for, a cart placed again once the window has passed.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::history::{Ordered, Payload};
use super::timeline::Timeline;
use super::{Check, PAGE};
use crate::kitchen::Event;
use crate::tally::{Answer, Intent, Request};

/// What the accounting of orders goes by.
pub struct Facts<'a> {
    pub intents: &'a [Intent],
    pub history: &'a [Ordered],
    pub events: &'a [Event],
    /// The servers' `--duplicate-window-secs` (zero: no duplicate rule).
    pub duplicate_window: Duration,
    /// The history is one page of a longer one.
    pub truncated: bool,
}

/// The checks on the guests' answers and the history, and their counts.
pub struct Accounting {
    pub checks: Vec<Check>,
    pub duplicates: usize,
    pub lost: usize,
}

/// One idempotency key of the rush: an intent's, or its fresh-key tap's.
#[derive(Clone, Copy)]
pub(super) struct Keyed<'a> {
    /// The intent's place in the tally, which the report names it by.
    number: usize,
    pub(super) intent: &'a Intent,
    pub(super) request: &'a Request,
    pub(super) fresh: bool,
}

impl Keyed<'_> {
    pub(super) fn evidence(&self) -> Value {
        json!({
            "intent": self.number,
            "key": self.request.key,
            "freshKeyTap": self.fresh,
            "table": self.intent.table,
            "sessionId": self.intent.session_id,
            "clientId": self.intent.client_id,
            "allowRepeat": self.intent.allow_repeat(),
            "items": self.intent.cart["items"],
            "sends": self.request.sends,
        })
    }

    pub(super) fn could_have_placed(&self, order: &Ordered) -> bool {
        order.session_id == self.intent.session_id
            && order.client_id.as_deref() == Some(self.intent.client_id.as_str())
            && order.payload == Payload::of_cart(&self.intent.cart)
    }
}

pub fn account(facts: &Facts) -> Accounting {
    let ledger = Ledger::new(facts);
    let (lost, lost_count) = ledger.acknowledged_in_history();
    let owners = ledger.owners();
    let twice = ledger.placed_twice(&owners);
    let answers = ledger.answers(&owners);
    Accounting {
        duplicates: twice.duplicates,
        lost: lost_count,
        checks: vec![lost, twice.check, answers],
    }
}

/// The rush's keys and the history, side by side.
pub(super) struct Ledger<'a> {
    pub(super) facts: &'a Facts<'a>,
    pub(super) keyed: Vec<Keyed<'a>>,
    pub(super) orders: BTreeMap<&'a str, &'a Ordered>,
    pub(super) timeline: Timeline<'a>,
    /// The keys each 201 named an order to.
    pub(super) named: BTreeMap<&'a str, Vec<usize>>,
}

/// Who placed each order of the history, as far as the answers tell.
pub(super) struct Owners<'a> {
    /// The key whose 201 named the order or, failing that, an unanswered
    /// key of its device and cart.
    pub(super) of: BTreeMap<&'a str, usize>,
    /// Orders attributed to an unanswered key, by that key.
    pub(super) unheard: BTreeMap<usize, &'a Ordered>,
    /// Orders nobody was told of, and no unanswered key could have placed.
    pub(super) unexplained: Vec<&'a Ordered>,
}

impl<'a> Ledger<'a> {
    fn new(facts: &'a Facts<'a>) -> Ledger<'a> {
        let keyed: Vec<Keyed> = facts
            .intents
            .iter()
            .enumerate()
            .flat_map(|(number, intent)| {
                intent.requests().map(move |(request, fresh)| Keyed {
                    number,
                    intent,
                    request,
                    fresh,
                })
            })
            .collect();
        let mut named: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (k, keyed) in keyed.iter().enumerate() {
            for id in keyed.request.placed() {
                named.entry(id).or_default().push(k);
            }
        }
        Ledger {
            facts,
            keyed,
            orders: facts.history.iter().map(|o| (o.id.as_str(), o)).collect(),
            timeline: Timeline::new(facts.events),
            named,
        }
    }

    pub(super) fn requests(&self, ks: impl IntoIterator<Item = usize>) -> Vec<Value> {
        ks.into_iter().map(|k| self.keyed[k].evidence()).collect()
    }

    pub(super) fn order(&self, id: &str) -> Value {
        self.orders
            .get(id)
            .map_or_else(|| json!({"orderId": id}), |o| self.timeline.evidence(o))
    }

    /// The check, and how many acknowledged orders are missing.
    fn acknowledged_in_history(&self) -> (Check, usize) {
        let lost: Vec<Value> = self
            .named
            .iter()
            .filter(|(id, _)| !self.orders.contains_key(**id))
            .map(|(id, ks)| {
                json!({
                    "problem": "acknowledged, not in the history",
                    "orders": [{"orderId": id}],
                    "requests": self.requests(ks.iter().copied()),
                })
            })
            .collect();
        let count = lost.len();
        let check = Check::new(
            "every acknowledged order is in the history",
            lost.is_empty() && !self.facts.truncated,
            if self.facts.truncated {
                format!("a table has {PAGE}+ orders: history is one page; run a smaller rush")
            } else {
                format!(
                    "{} orders acknowledged by a 201 (fresh-key taps' included), {count} missing",
                    self.named.len()
                )
            },
            lost,
        );
        (check, count)
    }

    fn owners(&self) -> Owners<'a> {
        let mut owners = Owners {
            of: self.named.iter().map(|(id, ks)| (*id, ks[0])).collect(),
            unheard: BTreeMap::new(),
            unexplained: Vec::new(),
        };
        let mut unnamed: Vec<&Ordered> = self
            .facts
            .history
            .iter()
            .filter(|o| !self.named.contains_key(o.id.as_str()))
            .collect();
        unnamed.sort_by_key(|o| self.timeline.order(o));
        let unresolved: Vec<usize> = (0..self.keyed.len())
            .filter(|k| self.keyed[*k].request.unresolved())
            .collect();
        for order in unnamed {
            // One key places one order at most.
            let candidate = unresolved.iter().copied().find(|k| {
                !owners.unheard.contains_key(k) && self.keyed[*k].could_have_placed(order)
            });
            match candidate {
                Some(k) => {
                    owners.of.insert(&order.id, k);
                    owners.unheard.insert(k, order);
                }
                None => owners.unexplained.push(order),
            }
        }
        owners
    }

    fn answers(&self, owners: &Owners) -> Check {
        let mut gave_up = 0;
        let mut unexpected: BTreeMap<&str, usize> = BTreeMap::new();
        let mut problems = Vec::new();
        for (k, keyed) in self.keyed.iter().enumerate() {
            let mut wrong = Vec::new();
            for answer in keyed.request.answers() {
                let code = match answer {
                    Answer::Placed(_) | Answer::Refused("OUT_OF_STOCK") => continue,
                    Answer::Duplicate(original)
                        if self
                            .orders
                            .get(original)
                            .is_some_and(|o| keyed.could_have_placed(o)) =>
                    {
                        continue;
                    }
                    Answer::GaveUp => {
                        gave_up += 1;
                        wrong.push("no final answer".to_owned());
                        continue;
                    }
                    Answer::Duplicate(_) => "DUPLICATE_PAYLOAD",
                    Answer::Refused(code) => code,
                };
                *unexpected.entry(code).or_default() += 1;
                wrong.push(if code == "DUPLICATE_PAYLOAD" {
                    "DUPLICATE_PAYLOAD naming no order of this device and cart".to_owned()
                } else {
                    format!("refused {code}")
                });
            }
            if !wrong.is_empty() {
                // What its lost answer would have said, when it committed.
                let committed = owners.unheard.get(&k).map(|o| self.timeline.evidence(o));
                problems.push(json!({
                    "problem": wrong.join("; "),
                    "requests": [keyed.evidence()],
                    "orders": committed.into_iter().collect::<Vec<_>>(),
                }));
            }
        }
        Check::new(
            "every order got a final answer, and only expected refusals",
            problems.is_empty(),
            format!("{gave_up} taps without an answer; unexpected refusals {unexpected:?}"),
            problems,
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::check::fixtures::*;
    use crate::tally::Ending;

    #[test]
    fn a_double_tap_refused_then_placed_after_a_restock_is_acknowledged() {
        let double_tap = intent(
            cart(false),
            vec![
                vec![refused(409, "OUT_OF_STOCK")],
                vec![refused(409, "REQUEST_IN_PROGRESS"), created("x")],
            ],
            None,
        );
        assert_eq!(double_tap.ending(), Ending::Placed);
        assert_clean(&judge_simply(&[double_tap], &[order("x", 0, "placed")]));
    }

    #[test]
    fn an_order_no_answer_named_needs_an_unanswered_tap_of_its_cart() {
        let placed = intent(cart(false), vec![vec![created("x")]], None);
        let history = [order("x", 0, "placed"), order("z", 40, "placed")];
        let accounting = judge_simply(std::slice::from_ref(&placed), &history);
        assert_eq!(accounting.duplicates, 1);
        assert!(
            accounting.checks[1]
                .detail
                .contains("1 orders nobody was told of")
        );

        // A tap that never heard its answer may have committed: its order is
        // no duplicate, but the tap without an answer is a failure of its own.
        let gave_up = intent(
            cart(false),
            vec![vec![unanswered(), refused(409, "REQUEST_IN_PROGRESS")]],
            None,
        );
        let accounting = judge_simply(&[placed, gave_up], &history);
        assert!(accounting.checks[1].passed, "{:#?}", accounting.checks[1]);
        assert!(
            accounting.checks[1]
                .detail
                .contains("1 committed with their answer never heard")
        );
        let answers = &accounting.checks[2];
        assert!(!answers.passed);
        assert_eq!(answers.evidence[0]["problem"], "no final answer");
        assert_eq!(answers.evidence[0]["orders"][0]["orderId"], "z");
    }

    #[test]
    fn a_server_error_after_a_lost_answer_leaves_the_order_to_that_key() {
        // The first try committed, its answer lost; the retry hit a broken
        // connection: a 500, not the replay. Not a duplicate, but a failure.
        let broken = intent(
            cart(false),
            vec![vec![unanswered(), refused(500, "INTERNAL")]],
            None,
        );
        let accounting = judge_simply(&[broken], &[order("z", 0, "placed")]);
        assert!(accounting.checks[1].passed, "{:#?}", accounting.checks[1]);
        let answers = &accounting.checks[2];
        assert!(!answers.passed);
        assert_eq!(answers.evidence[0]["problem"], "refused INTERNAL");
        assert_eq!(answers.evidence[0]["orders"][0]["orderId"], "z");

        // A refusal the contract gives only when nothing was recorded for
        // the key rules its order out: this one was placed all the same.
        let refused = intent(
            cart(false),
            vec![vec![unanswered(), refused(409, "OUT_OF_STOCK")]],
            None,
        );
        let accounting = judge_simply(&[refused], &[order("z", 0, "placed")]);
        assert_eq!(accounting.duplicates, 1);
        assert!(accounting.checks[2].passed);
    }

    #[test]
    fn a_refusal_as_a_duplicate_must_name_an_order_of_the_same_device_and_cart() {
        let first = intent(cart(false), vec![vec![created("x")]], None);
        let again = |original: &str| {
            let mut duplicate = refused(409, "DUPLICATE_PAYLOAD");
            duplicate.order_id = Some(original.into());
            intent(cart(false), vec![vec![duplicate]], None)
        };
        let history = [order("x", 0, "placed")];
        assert_clean(&judge_simply(&[first.clone(), again("x")], &history));
        let accounting = judge_simply(&[first, again("elsewhere")], &history);
        assert!(!accounting.checks[2].passed);
        assert!(accounting.checks[2].detail.contains("DUPLICATE_PAYLOAD"));
    }

    #[test]
    fn an_acknowledged_order_missing_from_the_history_is_lost() {
        let intents = [intent(cart(false), vec![vec![created("x")]], None)];
        let accounting = judge_simply(&intents, &[]);
        assert_eq!(accounting.lost, 1);
        assert!(!accounting.checks[0].passed);
        assert_eq!(
            accounting.checks[0].evidence[0]["orders"][0]["orderId"],
            "x"
        );
    }
}
