//! Table sessions: a table opened by staff for one party of guests, guarded
//! by a six-digit PIN that rides in the QR code's URL fragment.

use chrono::Duration;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use crate::order::Order;
use crate::validation::FieldErrors;
use crate::{Rejection, Timestamp};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum SessionStatus {
    Active,
    Closed,
}

impl SessionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Active => "active",
            SessionStatus::Closed => "closed",
        }
    }

    pub fn parse(s: &str) -> Option<SessionStatus> {
        match s {
            "active" => Some(SessionStatus::Active),
            "closed" => Some(SessionStatus::Closed),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewSession {
    /// The table, by name: 1–32 characters.
    #[cfg_attr(feature = "openapi", schema(example = "T4"))]
    // Staff keys fingerprint the parsed body: a request by label must
    // digest as it did before tables could be named by id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_label: Option<String>,
    /// Or a table created with `POST /shops/{shopId}/tables`: its name is
    /// the session's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_id: Option<Uuid>,
}

/// Which table a new session is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeatAt {
    Label(String),
    Table(Uuid),
}

impl NewSession {
    /// The table: a trimmed label, or a table's id; exactly one of them.
    pub fn validate(self) -> Result<SeatAt, Rejection> {
        let mut errors = FieldErrors::default();
        let seat = match (self.table_label, self.table_id) {
            (Some(label), None) => {
                errors.text("tableLabel", &label, 1, 32);
                SeatAt::Label(label.trim().to_owned())
            }
            (None, Some(table_id)) => SeatAt::Table(table_id),
            (label, _) => {
                let field = if label.is_some() {
                    "tableId"
                } else {
                    "tableLabel"
                };
                errors.push(
                    field,
                    "give the table as tableLabel or as tableId, one of them",
                );
                SeatAt::Label(String::new())
            }
        };
        errors.finish(seat)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub session_id: Uuid,
    pub shop_id: Uuid,
    pub table_label: String,
    pub pin: String,
    pub status: SessionStatus,
    pub opened_at: DateTime<Utc>,
    pub closed_at: Option<DateTime<Utc>>,
    pub pin_failures: i64,
    pub pin_locked_until: Option<DateTime<Utc>>,
}

/// How a guest shows they are at the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuestProof {
    /// The session's PIN (`None`: none was sent).
    Pin(Option<String>),
    /// A guest token of this session that the caller has verified: it
    /// stands whatever the PIN's lock says, so other people's wrong guesses
    /// cannot lock out a party already seated.
    Token,
}

/// The window of the per-session order rate: at most the configured number
/// of guest orders per session within it, whatever device sends them.
pub const SESSION_ORDER_WINDOW: Duration = Duration::minutes(10);

/// How long a guest token lives, at most: a meal, generously. Checkout
/// ends it sooner.
pub const GUEST_TOKEN_LIFETIME: Duration = Duration::hours(12);

/// A fresh guest token: 256 random bits, with a prefix that tells it apart
/// from other credentials in a log or a secret scanner.
pub fn generate_guest_token() -> String {
    format!("og_guest_{}", hex::encode(rand::random::<[u8; 32]>()))
}

/// The digest a guest token is stored and looked up by; the token itself
/// is never stored.
pub fn guest_token_digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A fresh, uniformly random six-digit PIN (leading zeros included).
pub fn generate_pin() -> String {
    format!("{:06}", rand::random_range(0..1_000_000u32))
}

/// How guests' credentials for a session are judged.
#[derive(Debug, Clone, Copy)]
pub struct PinPolicy {
    pub max_failures: u32,
    pub lockout: Duration,
    /// How long after checkout guests may still read the session and replay
    /// old keys; after it, the session is [gone](Session::gone_for_guests).
    pub closed_grace: Duration,
}

/// The outcome of a guest's PIN attempt, after the store recorded it.
#[derive(Debug, Clone, PartialEq)]
pub enum PinOutcome {
    Accepted(Session),
    /// Wrong or missing PIN.
    Invalid,
    Locked {
        until: Timestamp,
    },
    /// Checked out longer ago than the grace: nothing was judged.
    Gone,
}

/// A PIN attempt's outcome, and the failure count the store must write
/// for it (`None`: nothing changes).
#[derive(Debug, Clone, PartialEq)]
pub struct PinJudgement {
    pub outcome: PinOutcome,
    pub record: Option<PinFailures>,
}

/// A session's stored count of wrong PINs, and its lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinFailures {
    pub failures: i64,
    pub locked_until: Option<Timestamp>,
}

impl PinFailures {
    /// No failures and no lock: after a right PIN, or a staff unlock.
    pub const CLEAR: PinFailures = PinFailures {
        failures: 0,
        locked_until: None,
    };
}

/// What a guest's PIN attempt means, and what the store must remember.
#[derive(Debug, Clone, PartialEq)]
pub enum PinCheck {
    /// The session was checked out longer ago than its grace: refused
    /// whatever was given, and nothing judged.
    Gone,
    /// Right PIN; `reset` when earlier failures must be forgotten.
    Accepted { reset: bool },
    /// No PIN given: refused, but not counted as a guess.
    Missing,
    /// Wrong PIN: store the new failure count and lock, if any.
    Wrong {
        failures: i64,
        locked_until: Option<Timestamp>,
    },
    /// Locked: refused whatever was given, until `until`.
    Locked { until: Timestamp },
}

impl Session {
    /// A closed session whose grace has passed: guests get nothing more
    /// from it, not even replays, whatever they send.
    pub fn gone_for_guests(&self, now: Timestamp, grace: Duration) -> bool {
        self.status == SessionStatus::Closed
            && self.closed_at.is_some_and(|closed| closed + grace <= now)
    }

    /// Whether `proof` lets a guest in without anything to record: a
    /// verified token, or the right PIN with no failures to reset. What
    /// answers from committed data (replays) may rely on.
    pub fn admits_as_is(&self, proof: &GuestProof, policy: PinPolicy, now: Timestamp) -> bool {
        match proof {
            GuestProof::Token => !self.gone_for_guests(now, policy.closed_grace),
            GuestProof::Pin(pin) => {
                self.check_pin(pin.as_deref(), policy, now) == (PinCheck::Accepted { reset: false })
            }
        }
    }

    /// Judges a PIN attempt ([`Session::check_pin`]) into what the guest is
    /// told and what the store records.
    pub fn judge_pin(
        &self,
        given: Option<&str>,
        policy: PinPolicy,
        now: Timestamp,
    ) -> PinJudgement {
        let (outcome, record) = match self.check_pin(given, policy, now) {
            PinCheck::Accepted { reset } => (
                PinOutcome::Accepted(self.clone().with_failures(PinFailures::CLEAR)),
                reset.then_some(PinFailures::CLEAR),
            ),
            PinCheck::Missing => (PinOutcome::Invalid, None),
            PinCheck::Wrong {
                failures,
                locked_until,
            } => (
                PinOutcome::Invalid,
                Some(PinFailures {
                    failures,
                    locked_until,
                }),
            ),
            PinCheck::Locked { until } => (PinOutcome::Locked { until }, None),
            PinCheck::Gone => (PinOutcome::Gone, None),
        };
        PinJudgement { outcome, record }
    }

    /// The session with this failure count and lock stored.
    pub fn with_failures(self, count: PinFailures) -> Session {
        Session {
            pin_failures: count.failures,
            pin_locked_until: count.locked_until,
            ..self
        }
    }

    pub fn locked_until(&self, now: Timestamp) -> Option<Timestamp> {
        self.pin_locked_until.filter(|until| *until > now)
    }

    /// Judges a PIN attempt. The comparison takes the same time wherever the
    /// first wrong digit is, so timing does not leak the PIN digit by digit.
    pub fn check_pin(&self, given: Option<&str>, policy: PinPolicy, now: Timestamp) -> PinCheck {
        if self.gone_for_guests(now, policy.closed_grace) {
            return PinCheck::Gone;
        }
        if let Some(until) = self.locked_until(now) {
            return PinCheck::Locked { until };
        }
        let Some(given) = given else {
            return PinCheck::Missing;
        };
        if bool::from(given.as_bytes().ct_eq(self.pin.as_bytes())) {
            return PinCheck::Accepted {
                reset: self.pin_failures > 0 || self.pin_locked_until.is_some(),
            };
        }
        let failures = self.pin_failures + 1;
        if failures >= i64::from(policy.max_failures) {
            // The count restarts once the lock lapses, so a guest who waited
            // out the lock gets a full set of attempts again.
            PinCheck::Wrong {
                failures: 0,
                locked_until: Some(now + policy.lockout),
            }
        } else {
            PinCheck::Wrong {
                failures,
                locked_until: None,
            }
        }
    }
}

/// What a table owes at checkout.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Bill {
    pub session_id: Uuid,
    pub table_label: String,
    pub status: SessionStatus,
    pub closed_at: DateTime<Utc>,
    /// Every order of the session, oldest first; cancelled ones are listed
    /// but not counted.
    pub orders: Vec<Order>,
    pub total: i64,
}

impl Bill {
    pub fn new(
        session_id: Uuid,
        table_label: String,
        closed_at: Timestamp,
        orders: Vec<Order>,
    ) -> Bill {
        let total = orders
            .iter()
            .filter(|o| o.counts_toward_bill())
            .map(|o| o.total)
            .sum();
        Bill {
            session_id,
            table_label,
            status: SessionStatus::Closed,
            closed_at,
            orders,
            total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(pin: &str) -> Session {
        Session {
            session_id: Uuid::new_v4(),
            shop_id: Uuid::new_v4(),
            table_label: "T1".into(),
            pin: pin.into(),
            status: SessionStatus::Active,
            opened_at: crate::now(),
            closed_at: None,
            pin_failures: 0,
            pin_locked_until: None,
        }
    }

    const POLICY: PinPolicy = PinPolicy {
        max_failures: 3,
        lockout: Duration::seconds(60),
        closed_grace: Duration::minutes(30),
    };

    fn seat(body: serde_json::Value) -> Result<SeatAt, Vec<String>> {
        let new: NewSession = serde_json::from_value(body).unwrap();
        new.validate().map_err(|rejection| match rejection {
            Rejection::Validation(errors) => errors.into_iter().map(|e| e.field).collect(),
            other => panic!("{other:?}"),
        })
    }

    #[test]
    fn a_session_is_seated_by_label_or_by_table_never_both() {
        let table = Uuid::new_v4();
        assert_eq!(
            seat(serde_json::json!({"tableLabel": " T4 "})),
            Ok(SeatAt::Label("T4".into()))
        );
        assert_eq!(
            seat(serde_json::json!({"tableId": table})),
            Ok(SeatAt::Table(table))
        );
        assert_eq!(
            seat(serde_json::json!({"tableLabel": "T4", "tableId": table})),
            Err(vec!["tableId".to_owned()])
        );
        assert_eq!(
            seat(serde_json::json!({})),
            Err(vec!["tableLabel".to_owned()])
        );
        assert_eq!(
            seat(serde_json::json!({"tableLabel": " "})),
            Err(vec!["tableLabel".to_owned()])
        );
    }

    #[test]
    fn a_session_by_label_fingerprints_as_it_did_before_tables() {
        let new: NewSession =
            serde_json::from_value(serde_json::json!({"tableLabel": "T4"})).unwrap();
        assert_eq!(
            serde_json::to_string(&new).unwrap(),
            r#"{"tableLabel":"T4"}"#
        );
    }

    #[test]
    fn pins_are_six_digits() {
        for _ in 0..100 {
            let pin = generate_pin();
            assert_eq!(pin.len(), 6);
            assert!(pin.bytes().all(|b| b.is_ascii_digit()));
        }
    }

    #[test]
    fn lock_after_max_failures_refuses_even_the_right_pin_until_it_lapses() {
        let now = crate::now();
        let mut s = session("123456");
        for expected in 1..3 {
            assert_eq!(
                s.check_pin(Some("000000"), POLICY, now),
                PinCheck::Wrong {
                    failures: expected,
                    locked_until: None
                }
            );
            s.pin_failures = expected;
        }
        let PinCheck::Wrong {
            failures: 0,
            locked_until: Some(until),
        } = s.check_pin(Some("000000"), POLICY, now)
        else {
            panic!("third failure must lock");
        };
        s.pin_failures = 0;
        s.pin_locked_until = Some(until);
        assert_eq!(
            s.check_pin(Some("123456"), POLICY, now),
            PinCheck::Locked { until }
        );
        assert_eq!(s.check_pin(None, POLICY, now), PinCheck::Locked { until });
        assert_eq!(
            s.check_pin(Some("123456"), POLICY, until),
            PinCheck::Accepted { reset: true }
        );
    }

    #[test]
    fn a_token_admits_through_a_lock_and_a_closed_session_goes_after_its_grace() {
        let now = crate::now();
        let mut s = session("123456");
        s.pin_locked_until = Some(now + Duration::seconds(30));
        assert!(s.admits_as_is(&GuestProof::Token, POLICY, now));
        assert!(!s.admits_as_is(&GuestProof::Pin(Some("123456".into())), POLICY, now));
        s.pin_locked_until = None;
        s.pin_failures = 1;
        assert!(
            !s.admits_as_is(&GuestProof::Pin(Some("123456".into())), POLICY, now),
            "a failure to reset is a write"
        );

        let grace = POLICY.closed_grace;
        assert!(!s.gone_for_guests(now, grace));
        s.status = SessionStatus::Closed;
        s.closed_at = Some(now);
        s.pin_failures = 0;
        let right = Some("123456");
        let within = now + grace - Duration::seconds(1);
        assert!(!s.gone_for_guests(within, grace));
        assert_eq!(
            s.check_pin(right, POLICY, within),
            PinCheck::Accepted { reset: false }
        );
        assert!(s.admits_as_is(&GuestProof::Token, POLICY, within));
        assert!(s.gone_for_guests(now + grace, grace));
        assert_eq!(s.check_pin(right, POLICY, now + grace), PinCheck::Gone);
        assert!(!s.admits_as_is(&GuestProof::Token, POLICY, now + grace));
    }

    #[test]
    fn guest_tokens_are_long_random_and_stored_as_digests() {
        let token = generate_guest_token();
        assert!(token.starts_with("og_guest_") && token.len() == 9 + 64);
        assert_ne!(token, generate_guest_token());
        assert_eq!(guest_token_digest(&token), guest_token_digest(&token));
        assert!(!guest_token_digest(&token).contains(&token[9..]));
    }

    #[test]
    fn judging_a_pin_says_what_to_store() {
        let now = crate::now();
        let s = session("123456");
        let wrong = s.judge_pin(Some("000000"), POLICY, now);
        assert_eq!(wrong.outcome, PinOutcome::Invalid);
        assert_eq!(
            wrong.record,
            Some(PinFailures {
                failures: 1,
                locked_until: None
            })
        );
        let missing = s.judge_pin(None, POLICY, now);
        assert_eq!(
            (missing.outcome, missing.record),
            (PinOutcome::Invalid, None)
        );
        let clean = s.judge_pin(Some("123456"), POLICY, now);
        assert_eq!(clean.record, None, "nothing to reset");
        let failed_before = s.clone().with_failures(PinFailures {
            failures: 2,
            locked_until: None,
        });
        let right = failed_before.judge_pin(Some("123456"), POLICY, now);
        assert_eq!(right.record, Some(PinFailures::CLEAR));
        assert_eq!(right.outcome, PinOutcome::Accepted(s));
    }

    #[test]
    fn missing_pin_is_not_a_guess() {
        let s = session("123456");
        assert_eq!(s.check_pin(None, POLICY, crate::now()), PinCheck::Missing);
        assert_eq!(
            s.check_pin(Some("123456"), POLICY, crate::now()),
            PinCheck::Accepted { reset: false }
        );
    }
}
