//! Types of the exactly-once write path: idempotency claims checked and
//! completed inside the transaction of the write they guard, and the order
//! placement command.

use ordergate_domain::Rejection;
use ordergate_domain::Timestamp;
use ordergate_domain::audit::AuditEntry;
use ordergate_domain::idempotency::{Fingerprint, IdempotencyKey, Scope};
use ordergate_domain::inventory::InventoryItem;
use ordergate_domain::order::admission::{
    Admission, Caller, GuestHistory, KeyLookup, OrderRules, Snapshot, admit,
};
use ordergate_domain::order::placement::NewOrder;
use ordergate_domain::order::{Order, Recall, StatusChange, ValidOrder};
use ordergate_domain::printing::Printer;
use ordergate_domain::service::{NewServiceRequest, ServiceRequest};
use ordergate_domain::session::{Bill, PinOutcome, Session};
use ordergate_domain::shop::Shop;
use ordergate_domain::table::Table;
use uuid::Uuid;

/// An idempotency key as a write presents it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub scope: Scope,
    pub key: IdempotencyKey,
    /// The same key with another fingerprint is refused.
    pub fingerprint: Fingerprint,
    /// When the completed record may be forgotten.
    pub expires_at: Timestamp,
}

/// A response exactly as first sent, kept to be sent again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    pub body: String,
    pub location: Option<String>,
}

/// How a write's result becomes its response; run inside the transaction so
/// the stored response commits with the write.
pub type Render<T> = Box<dyn FnOnce(&T) -> StoredResponse + Send>;

/// A staff write that honours an `Idempotency-Key`.
pub enum StaffWrite {
    CreateShop(Shop, Render<Shop>),
    /// `TableNameTaken` when the shop has a table of that name.
    CreateTable(Table, Render<Table>),
    /// `PrinterNameTaken` when the shop has a printer of that name. It
    /// starts at the shop's newest event: it prints what comes after.
    CreatePrinter(Printer, Render<Printer>),
    OpenSession(Session, Render<Session>),
    Restock {
        shop_id: Uuid,
        item_id: Uuid,
        quantity: i64,
        actor: String,
        now: Timestamp,
        render: Render<InventoryItem>,
    },
    Checkout {
        session_id: Uuid,
        now: Timestamp,
        render: Render<Bill>,
    },
    SetOrderStatus {
        order_id: Uuid,
        change: StatusChange,
        now: Timestamp,
        render: Render<Order>,
    },
    /// Undoes the order's last advance; appends `order.updated`.
    RecallOrder {
        order_id: Uuid,
        recall: Recall,
        now: Timestamp,
        render: Render<Order>,
    },
}

/// A guest's call for staff or the bill, under the session's optional
/// idempotency claim; its answer rendered inside the transaction.
pub struct ServiceCall {
    pub session_id: Uuid,
    pub request: NewServiceRequest,
    pub claim: Option<Claim>,
    pub now: Timestamp,
    pub render: Render<Called>,
}

/// What a call became: a new request, or the open one of its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Called {
    pub request: ServiceRequest,
    pub created: bool,
}

/// What an idempotent write answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Done now; this response was stored with it.
    Fresh(StoredResponse),
    /// Done before; this is the stored response.
    Replayed(StoredResponse),
}

/// One order POST, decided and committed in one transaction.
#[derive(Debug, Clone)]
pub struct PlaceOrder {
    /// Assigned by the caller (UUIDv7, time ordered: see
    /// [`Store::new_order_id`]); used only if the order is placed.
    ///
    /// [`Store::new_order_id`]: crate::Store::new_order_id
    pub order_id: Uuid,
    pub session_id: Uuid,
    pub caller: Caller,
    /// Required for guests; staff may leave it out.
    pub claim: Option<Claim>,
    pub order: ValidOrder,
    pub rules: OrderRules,
    /// The response a placed order is answered with, and stored for its
    /// key's replays: rendered inside the transaction, by the caller's
    /// rules (the server's HTTP form).
    pub receipt: fn(&Order) -> StoredResponse,
    /// For the audit row.
    pub request_id: String,
    pub now: Timestamp,
}

impl PlaceOrder {
    /// The guest's device id; `None` for staff.
    pub fn client_id(&self) -> Option<&str> {
        self.caller.client_id()
    }

    /// Admission decided ([`admit`]) from what the store read under the
    /// session lock, as of now: `None` when the order is to be committed.
    ///
    /// [`admit`]: ordergate_domain::order::admission::admit
    pub fn admit(
        &self,
        session: &Session,
        pin: Option<PinOutcome>,
        key: Option<KeyLookup<StoredResponse>>,
        history: GuestHistory,
    ) -> Result<Option<Decided>, serde_json::Error> {
        let snapshot = Snapshot {
            session,
            pin,
            key,
            history,
            now: self.now,
            read_at: std::time::Instant::now(),
        };
        Decided::before_commit(admit(&self.rules, snapshot))
    }

    /// Who places which order at `session`, for [`Priced::into_order`].
    ///
    /// [`Priced::into_order`]: ordergate_domain::order::placement::Priced::into_order
    pub fn placing<'a>(&'a self, session: &'a Session) -> NewOrder<'a> {
        NewOrder {
            order_id: self.order_id,
            session,
            caller: &self.caller,
            note: &self.order.note,
            now: self.now,
        }
    }

    /// The audit row of this request's outcome.
    pub fn audit_entry(&self, outcome: &Result<Placed, Rejection>) -> AuditEntry {
        match outcome {
            Ok(placed) => self.accepted_entry(placed.order_id, placed.replayed),
            Err(rejection) => AuditEntry::refused(
                self.now,
                self.session_id,
                &self.request_id,
                self.client_id(),
                rejection.code(),
            )
            .by(self.caller.staff_actor()),
        }
    }

    /// The audit row of this request answered with the order `order_id`:
    /// placed now, or `replayed`. A backend may file it before the order
    /// is written (it names nothing the write decides).
    pub fn accepted_entry(&self, order_id: Uuid, replayed: bool) -> AuditEntry {
        AuditEntry::placed(
            self.now,
            self.session_id,
            &self.request_id,
            self.client_id(),
            order_id,
            replayed,
        )
        .by(self.caller.staff_actor())
    }
}

/// How an order POST ended, once its audit row (if any) committed.
#[derive(Debug, Clone, PartialEq)]
pub struct Ordered {
    pub shop_id: Uuid,
    pub outcome: Result<Placed, Rejection>,
    /// False for refusals given before the guest's credentials were judged
    /// (a locked PIN, a session closed past its grace): they get no audit
    /// row, so a flood of them cannot grow the log (count them elsewhere).
    pub audited: bool,
}

/// What a backend decided about an order POST, before its audit row.
#[derive(Debug, Clone, PartialEq)]
pub enum Decided {
    /// Decided past the caller's credentials: audited.
    Judged(Result<Placed, Rejection>),
    /// Refused before the credentials were judged: not audited.
    Unjudged(Rejection),
}

impl Decided {
    /// The outcome, and whether it is written to the audit log.
    pub fn outcome(self) -> (Result<Placed, Rejection>, bool) {
        match self {
            Decided::Judged(outcome) => (outcome, true),
            Decided::Unjudged(rejection) => (Err(rejection), false),
        }
    }

    /// What admission decided, when it decided the outcome; `None` when the
    /// order was admitted and is to be committed.
    pub fn before_commit(
        admission: Admission<StoredResponse>,
    ) -> Result<Option<Decided>, serde_json::Error> {
        Ok(Some(match admission {
            Admission::Unjudged(rejection) => Decided::Unjudged(rejection),
            Admission::Refused(rejection) => Decided::Judged(Err(rejection)),
            Admission::Replay(response) => Decided::Judged(Ok(Placed {
                order_id: response.order_id()?,
                response,
                replayed: true,
            })),
            Admission::Admitted => return Ok(None),
        }))
    }
}

impl From<Result<Placed, Rejection>> for Decided {
    fn from(outcome: Result<Placed, Rejection>) -> Decided {
        Decided::Judged(outcome)
    }
}

/// A placed (or replayed) order and the response to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    pub order_id: Uuid,
    pub response: StoredResponse,
    pub replayed: bool,
}

impl Placed {
    /// An order placed just now, answered with `receipt`.
    pub fn fresh(order: &Order, receipt: fn(&Order) -> StoredResponse) -> Placed {
        Placed {
            order_id: order.order_id,
            response: receipt(order),
            replayed: false,
        }
    }
}

/// A completed order request's answer, found in committed data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    pub shop_id: Uuid,
    pub order_id: Uuid,
    /// Already marked as a replay.
    pub response: StoredResponse,
}

impl Replay {
    /// The replay of an order request's stored response, as first sent.
    pub fn of(shop_id: Uuid, stored: StoredResponse) -> Result<Replay, serde_json::Error> {
        let response = stored.replayed();
        Ok(Replay {
            shop_id,
            order_id: response.order_id()?,
            response,
        })
    }
}

/// An idempotency key's record as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    pub fingerprint: Fingerprint,
    pub response: StoredResponse,
    pub expires_at: Timestamp,
}

impl Claim {
    /// Whether a record with this fingerprint and expiry answers this
    /// request: it is live, and the request is the same one.
    pub fn answered_by(
        &self,
        fingerprint: &Fingerprint,
        expires_at: Timestamp,
        now: Timestamp,
    ) -> bool {
        expires_at > now && *fingerprint == self.fingerprint
    }

    /// The one text for this claim's (scope, key) pair.
    pub fn scoped_key(&self) -> String {
        self.scope.with_key(&self.key)
    }

    /// What the key's record means for this request.
    pub fn judge(&self, record: Option<KeyRecord>, now: Timestamp) -> KeyLookup<StoredResponse> {
        match record {
            Some(record) if self.answered_by(&record.fingerprint, record.expires_at, now) => {
                KeyLookup::Replay(record.response.replayed())
            }
            Some(record) if record.expires_at > now => KeyLookup::Mismatch,
            _ => KeyLookup::Absent,
        }
    }
}

impl StoredResponse {
    /// The order a stored order response is the receipt of.
    pub fn order_id(&self) -> Result<Uuid, serde_json::Error> {
        /// Only the id: building the whole receipt as a JSON value was a
        /// sixth of a replay's read.
        #[derive(serde::Deserialize)]
        struct Receipt {
            #[serde(rename = "orderId")]
            order_id: Uuid,
        }
        Ok(serde_json::from_str::<Receipt>(&self.body)?.order_id)
    }

    /// The response as a replay: order bodies say `"idempotentReplay": true`,
    /// every other byte as first sent.
    pub fn replayed(self) -> StoredResponse {
        const FRESH: &str = r#""idempotentReplay":false"#;
        let body = match self.body.rfind(FRESH) {
            Some(at) => {
                let mut body = self.body;
                body.replace_range(at..at + FRESH.len(), r#""idempotentReplay":true"#);
                body
            }
            None => self.body,
        };
        StoredResponse { body, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_record_answers_only_the_same_request_while_it_lives() {
        let now: Timestamp = "2026-12-01T12:00:00Z".parse().unwrap();
        let claim = Claim {
            scope: Scope::session(Uuid::nil()),
            key: IdempotencyKey::generate(),
            fingerprint: Fingerprint::of("two curries"),
            expires_at: now + chrono::Duration::days(1),
        };
        let record = |fingerprint: &str, expires_at| KeyRecord {
            fingerprint: Fingerprint::of(fingerprint),
            response: StoredResponse {
                status: 201,
                body: r#"{"orderId":"x","idempotentReplay":false}"#.into(),
                location: None,
            },
            expires_at,
        };
        let later = now + chrono::Duration::hours(1);
        assert_eq!(claim.judge(None, now), KeyLookup::Absent);
        assert_eq!(
            claim.judge(Some(record("two curries", now)), now),
            KeyLookup::Absent,
            "expired the moment it reaches its expiry"
        );
        assert_eq!(
            claim.judge(Some(record("one soup", later)), now),
            KeyLookup::Mismatch
        );
        let KeyLookup::Replay(replay) = claim.judge(Some(record("two curries", later)), now) else {
            panic!("the same request replays");
        };
        assert!(replay.body.contains(r#""idempotentReplay":true"#));
    }

    #[test]
    fn only_bodies_that_carry_the_flag_change_on_replay() {
        let order = StoredResponse {
            status: 201,
            body: r#"{"orderId":"x","idempotentReplay":false}"#.into(),
            location: Some("/api/v1/orders/x".into()),
        };
        let replay = order.clone().replayed();
        assert_eq!(replay.body, r#"{"orderId":"x","idempotentReplay":true}"#);
        assert_eq!(
            (replay.status, replay.location),
            (order.status, order.location)
        );
        let shop = StoredResponse {
            status: 201,
            body: r#"{"shopId":"s"}"#.into(),
            location: None,
        };
        assert_eq!(shop.clone().replayed(), shop);
    }
}
