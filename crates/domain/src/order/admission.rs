//! Admitting an order POST: steps 2–7 of the contract (PIN, replay, closed
//! session, duplicate payload, cooldown, session order rate, waiting time),
//! decided in the contract's order from what the store read. The store
//! reads under its session lock and writes what this decides; no backend
//! decides a rule of its own.

use std::time::Instant;

use super::{Order, OrderSource, ValidOrder};
use crate::Rejection;
use crate::Timestamp;
use crate::idempotency::ClientId;
use crate::session::{
    GuestProof, PinOutcome, PinPolicy, SESSION_ORDER_WINDOW, Session, SessionStatus,
};

/// Who places an order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// A guest at the table, proving it with the PIN or a guest token.
    Guest {
        proof: GuestProof,
        client_id: ClientId,
    },
    /// Staff, named as the logs name them (`account:hana`, `device:Pass`).
    Staff { actor: String },
}

impl Caller {
    /// The guest's device id; `None` for staff.
    pub fn client_id(&self) -> Option<&str> {
        match self {
            Caller::Guest { client_id, .. } => Some(client_id.as_str()),
            Caller::Staff { .. } => None,
        }
    }

    /// The staff member or device placing the order; `None` for guests.
    pub fn staff_actor(&self) -> Option<&str> {
        match self {
            Caller::Guest { .. } => None,
            Caller::Staff { actor } => Some(actor),
        }
    }

    /// The PIN the store must judge (and count) before anything else:
    /// `Some` when the caller proves itself with a PIN, given or not. A
    /// guest token was verified before the order reached the store.
    pub fn pin_to_judge(&self) -> Option<Option<&str>> {
        match self {
            Caller::Guest {
                proof: GuestProof::Pin(pin),
                ..
            } => Some(pin.as_deref()),
            _ => None,
        }
    }

    pub fn source(&self) -> OrderSource {
        match self {
            Caller::Guest { .. } => OrderSource::Guest,
            Caller::Staff { .. } => OrderSource::Staff,
        }
    }

    /// Who the inventory log names for the stock an order takes.
    pub fn actor(&self) -> String {
        match self {
            Caller::Guest { client_id, .. } => format!("guest:{}", client_id.as_str()),
            Caller::Staff { actor } => actor.clone(),
        }
    }
}

/// The rules an order is admitted under.
#[derive(Debug, Clone, Copy)]
pub struct OrderRules {
    pub pin_policy: PinPolicy,
    /// Same client, same items and note within this window → duplicate (zero: off).
    pub duplicate_window: chrono::Duration,
    /// Minimum gap between one client's accepted orders (zero: off).
    pub cooldown: chrono::Duration,
    /// Most guest orders one session may place within
    /// [`SESSION_ORDER_WINDOW`], whatever client sends them (zero: off).
    pub session_order_limit: u32,
    /// Past this instant the order gave up waiting for its table: `SessionBusy`.
    pub busy_deadline: Instant,
}

/// What the guest rules need read about the session's earlier orders; each
/// `None` (or `false`) is a rule that is off for this order.
#[derive(Debug, Clone, PartialEq)]
pub struct GuestReads<'a> {
    pub client_id: &'a str,
    /// Read the client's newest uncancelled order with the same payload
    /// created after this instant.
    pub same_payload_since: Option<Timestamp>,
    /// Read when the client last ordered in the session, if after this
    /// instant: only an order within the cooldown refuses this one, and
    /// the store finds it among the session's recent orders.
    pub last_order_since: Option<Timestamp>,
    /// Read the `nth` newest (0 = newest) guest order of the session
    /// created after `since`.
    pub recent_guest_orders: Option<RecentOrders>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecentOrders {
    pub since: Timestamp,
    pub nth: u32,
}

/// The answers to [`GuestReads`]; `None` where nothing was found or the
/// rule is off.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuestHistory {
    pub same_payload: Option<Order>,
    pub last_order_at: Option<Timestamp>,
    pub nth_recent_at: Option<Timestamp>,
}

impl OrderRules {
    /// What to read for the guest rules; `None` for staff, whom they do
    /// not bind.
    pub fn guest_reads<'a>(
        &self,
        caller: &'a Caller,
        order: &ValidOrder,
        now: Timestamp,
    ) -> Option<GuestReads<'a>> {
        let client_id = caller.client_id()?;
        let duplicates_on = !order.allow_repeat && self.duplicate_window > chrono::Duration::zero();
        Some(GuestReads {
            client_id,
            same_payload_since: duplicates_on.then(|| now - self.duplicate_window),
            last_order_since: (self.cooldown > chrono::Duration::zero())
                .then(|| now - self.cooldown),
            recent_guest_orders: (self.session_order_limit > 0).then(|| RecentOrders {
                since: now - SESSION_ORDER_WINDOW,
                nth: self.session_order_limit - 1,
            }),
        })
    }

    /// Steps 5–7: duplicate payload, cooldown, session order rate.
    fn judge_guest(&self, history: GuestHistory, now: Timestamp) -> Result<(), Rejection> {
        if let Some(original) = history.same_payload {
            return Err(Rejection::DuplicatePayload {
                original: Box::new(original),
            });
        }
        if let Some(until) = history
            .last_order_at
            .map(|last| last + self.cooldown)
            .filter(|until| *until > now)
        {
            return Err(Rejection::CooldownActive { until });
        }
        // The limit-th newest guest order in the window: while there is
        // one, the window is full until it leaves.
        if let Some(nth) = history.nth_recent_at {
            return Err(Rejection::SessionRateLimited {
                until: nth + SESSION_ORDER_WINDOW,
            });
        }
        Ok(())
    }
}

/// What the store found under an idempotency key.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyLookup<R> {
    /// No live record: the write runs.
    Absent,
    /// The same request completed before: replay its answer.
    Replay(R),
    /// The key was used for another request.
    Mismatch,
}

/// Everything admission is decided from, read by the store under the
/// session lock.
pub struct Snapshot<'a, R> {
    pub session: &'a Session,
    /// The judged PIN, when the caller proved itself with one.
    pub pin: Option<PinOutcome>,
    /// The key's record, when the order came with a key.
    pub key: Option<KeyLookup<R>>,
    /// The answers to [`OrderRules::guest_reads`] (empty for staff).
    pub history: GuestHistory,
    pub now: Timestamp,
    /// When the reads were done, against the order's busy deadline.
    pub read_at: Instant,
}

/// The decision on an order POST before its commit.
#[derive(Debug, Clone, PartialEq)]
pub enum Admission<R> {
    /// Refused before the caller's credentials were judged (a locked PIN, a
    /// session gone past its grace): no audit row, so a flood of them
    /// cannot grow the log.
    Unjudged(Rejection),
    /// Refused after the credentials were judged: audited.
    Refused(Rejection),
    /// The key's request completed before: answer it again.
    Replay(R),
    /// Every rule passed: place the order.
    Admitted,
}

/// Steps 2–7 of the contract, in its order.
pub fn admit<R>(rules: &OrderRules, snapshot: Snapshot<'_, R>) -> Admission<R> {
    match snapshot.pin {
        None | Some(PinOutcome::Accepted(_)) => {}
        Some(PinOutcome::Invalid) => return Admission::Refused(Rejection::PinInvalid),
        Some(PinOutcome::Locked { until }) => {
            return Admission::Unjudged(Rejection::PinLocked { until });
        }
        Some(PinOutcome::Gone) => return Admission::Unjudged(Rejection::SessionClosed),
    }
    match snapshot.key {
        None | Some(KeyLookup::Absent) => {}
        Some(KeyLookup::Replay(answer)) => return Admission::Replay(answer),
        Some(KeyLookup::Mismatch) => return Admission::Refused(Rejection::IdempotencyKeyReused),
    }
    if snapshot.session.status == SessionStatus::Closed {
        return Admission::Refused(Rejection::SessionClosed);
    }
    if let Err(rejection) = rules.judge_guest(snapshot.history, snapshot.now) {
        return Admission::Refused(rejection);
    }
    if snapshot.read_at > rules.busy_deadline {
        return Admission::Refused(Rejection::SessionBusy);
    }
    Admission::Admitted
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::order::{LineRequest, OrderRequest};

    fn rules() -> OrderRules {
        OrderRules {
            pin_policy: PinPolicy {
                max_failures: 5,
                lockout: chrono::Duration::minutes(5),
                closed_grace: chrono::Duration::minutes(10),
            },
            duplicate_window: chrono::Duration::seconds(30),
            cooldown: chrono::Duration::seconds(2),
            session_order_limit: 10,
            busy_deadline: Instant::now() + Duration::from_secs(60),
        }
    }

    fn now() -> Timestamp {
        "2026-12-01T12:00:00Z".parse().unwrap()
    }

    fn session(status: SessionStatus) -> Session {
        Session {
            session_id: uuid::Uuid::nil(),
            shop_id: uuid::Uuid::nil(),
            table_label: "T1".into(),
            pin: "123456".into(),
            status,
            opened_at: now() - chrono::Duration::hours(1),
            closed_at: (status == SessionStatus::Closed).then(now),
            pin_failures: 0,
            pin_locked_until: None,
        }
    }

    fn guest() -> Caller {
        Caller::Guest {
            proof: GuestProof::Pin(Some("123456".into())),
            client_id: ClientId::parse(Some("phone-1")).unwrap(),
        }
    }

    fn order(allow_repeat: bool) -> ValidOrder {
        OrderRequest {
            items: vec![LineRequest {
                menu_item_id: uuid::Uuid::nil(),
                quantity: 1,
                topping_ids: vec![],
                note: None,
                option_ids: vec![],
            }],
            note: None,
            allow_repeat,
        }
        .validate()
        .unwrap()
    }

    fn snapshot(session: &Session) -> Snapshot<'_, &'static str> {
        Snapshot {
            session,
            pin: None,
            key: None,
            history: GuestHistory::default(),
            now: now(),
            read_at: Instant::now(),
        }
    }

    #[test]
    fn guest_reads_ask_only_for_the_rules_that_are_on() {
        let caller = guest();
        let reads = rules().guest_reads(&caller, &order(false), now()).unwrap();
        assert_eq!(
            reads,
            GuestReads {
                client_id: "phone-1",
                same_payload_since: Some(now() - chrono::Duration::seconds(30)),
                last_order_since: Some(now() - chrono::Duration::seconds(2)),
                recent_guest_orders: Some(RecentOrders {
                    since: now() - SESSION_ORDER_WINDOW,
                    nth: 9,
                }),
            }
        );
        let repeat = rules().guest_reads(&caller, &order(true), now()).unwrap();
        assert_eq!(
            repeat.same_payload_since, None,
            "allowRepeat skips the duplicate rule"
        );
        let off = OrderRules {
            duplicate_window: chrono::Duration::zero(),
            cooldown: chrono::Duration::zero(),
            session_order_limit: 0,
            ..rules()
        };
        let reads = off.guest_reads(&caller, &order(false), now()).unwrap();
        assert_eq!(
            (
                reads.same_payload_since,
                reads.last_order_since,
                reads.recent_guest_orders
            ),
            (None, None, None)
        );
        assert_eq!(
            rules().guest_reads(
                &Caller::Staff {
                    actor: "admin".into()
                },
                &order(false),
                now()
            ),
            None
        );
    }

    #[test]
    fn credentials_come_first_and_locks_go_unaudited() {
        let open = session(SessionStatus::Active);
        let until = now() + chrono::Duration::minutes(5);
        let judged = |pin| {
            admit(
                &rules(),
                Snapshot {
                    pin: Some(pin),
                    key: Some(KeyLookup::Replay("r")),
                    ..snapshot(&open)
                },
            )
        };
        assert_eq!(
            judged(PinOutcome::Invalid),
            Admission::Refused(Rejection::PinInvalid)
        );
        assert_eq!(
            judged(PinOutcome::Locked { until }),
            Admission::Unjudged(Rejection::PinLocked { until })
        );
        assert_eq!(
            judged(PinOutcome::Gone),
            Admission::Unjudged(Rejection::SessionClosed)
        );
        assert_eq!(
            judged(PinOutcome::Accepted(open.clone())),
            Admission::Replay("r")
        );
    }

    #[test]
    fn a_replay_answers_even_a_closed_session_but_a_new_order_does_not() {
        let closed = session(SessionStatus::Closed);
        let replay = Snapshot {
            key: Some(KeyLookup::Replay("r")),
            ..snapshot(&closed)
        };
        assert_eq!(admit(&rules(), replay), Admission::Replay("r"));
        let reused = Snapshot {
            key: Some(KeyLookup::Mismatch),
            ..snapshot(&closed)
        };
        assert_eq!(
            admit(&rules(), reused),
            Admission::Refused(Rejection::IdempotencyKeyReused)
        );
        let fresh = Snapshot {
            key: Some(KeyLookup::Absent),
            ..snapshot(&closed)
        };
        assert_eq!(
            admit(&rules(), fresh),
            Admission::Refused(Rejection::SessionClosed)
        );
    }

    #[test]
    fn guest_rules_apply_in_order_duplicate_cooldown_rate() {
        let open = session(SessionStatus::Active);
        let earlier = now() - chrono::Duration::seconds(1);
        let with = |history| {
            admit(
                &rules(),
                Snapshot {
                    history,
                    ..snapshot(&open)
                },
            )
        };
        let cooling = GuestHistory {
            last_order_at: Some(earlier),
            nth_recent_at: Some(earlier),
            ..GuestHistory::default()
        };
        assert_eq!(
            with(cooling),
            Admission::Refused(Rejection::CooldownActive {
                until: earlier + chrono::Duration::seconds(2)
            })
        );
        let cooled = GuestHistory {
            last_order_at: Some(now() - chrono::Duration::seconds(2)),
            nth_recent_at: Some(earlier),
            ..GuestHistory::default()
        };
        assert_eq!(
            with(cooled),
            Admission::Refused(Rejection::SessionRateLimited {
                until: earlier + SESSION_ORDER_WINDOW
            })
        );
        assert_eq!(with(GuestHistory::default()), Admission::Admitted);
    }

    #[test]
    fn an_order_past_its_busy_deadline_gives_up() {
        let open = session(SessionStatus::Active);
        let late = OrderRules {
            busy_deadline: Instant::now() - Duration::from_millis(1),
            ..rules()
        };
        assert_eq!(
            admit(&late, snapshot(&open)),
            Admission::Refused(Rejection::SessionBusy)
        );
    }
}
