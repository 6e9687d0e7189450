//! The storage boundary of ordergate.
//!
//! The server talks to one [`Store`]; each backend (SQLite embedded, and
//! PostgreSQL for several nodes) implements it and must pass the
//! [`conformance`] suite unchanged. Methods are whole business operations,
//! each one transaction, so a backend can keep the rules (atomic commit, one
//! shop per transaction, stock conservation) without the server knowing how.

use async_trait::async_trait;
use ordergate_domain::audit::AuditEntry;
use ordergate_domain::catalog::{Catalog, CatalogInput};
use ordergate_domain::events::Event;
use ordergate_domain::inventory::{InventoryItem, LogEntry, StockChange};
use ordergate_domain::order::{Order, OrderStatus, StatusChange};
use ordergate_domain::paging::Limit;
use ordergate_domain::printing::Printer;
use ordergate_domain::service::{ServiceRequest, ServiceStatus};
use ordergate_domain::session::{Bill, GuestProof, PinOutcome, PinPolicy, Session, SessionStatus};
use ordergate_domain::shop::{Shop, ShopPatch};
use ordergate_domain::staff::{Account, Device, LoginPolicy, Member, Membership, Role};
use ordergate_domain::table::TableState;
use ordergate_domain::{Rejection, Timestamp};
use uuid::Uuid;

#[cfg(feature = "conformance")]
pub mod conformance;
mod printing;
mod write;

pub use printing::{PrintStep, PrinterLease, PrinterState};
pub use write::{
    Answer, Called, Claim, Decided, KeyRecord, Ordered, PlaceOrder, Placed, Render, Replay,
    ServiceCall, StaffWrite, StoredResponse,
};

/// What a committed write changed, announced so caches and live streams
/// catch up. Announced after commit, never before: a listener never sees a
/// change that could still roll back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Change {
    /// New events in the shop's log (orders, stock, sessions).
    Events(Uuid),
    /// A stock level or 86 mark of the shop changed.
    Stock(Uuid),
    /// The shop's catalog was replaced.
    Catalog(Uuid),
    /// The announcer may have missed changes; reload everything. Sent by a
    /// backend whose cross-node notifications were interrupted (a dropped
    /// `LISTEN` connection): anything may have changed meanwhile.
    Everything,
}

/// Called once per change, on the thread that committed it: must not block.
pub type ChangeListener = std::sync::Arc<dyn Fn(Change) + Send + Sync>;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub type StoreResult<T> = Result<T, StoreError>;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The request was understood and refused by a business rule.
    #[error(transparent)]
    Rejected(#[from] Rejection),
    /// The database cannot be reached or written right now; retrying later may work.
    // The cause is in the message and not also a `source`: a report of
    // the whole chain would say it twice.
    #[error("database unavailable: {0}")]
    Unavailable(BoxError),
    /// Anything else: a bug or corrupted data. Never shown to clients.
    #[error("storage failure: {0}")]
    Internal(BoxError),
}

/// Everything the guest menu is built from, read in one consistent snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct MenuSource {
    pub shop: Shop,
    pub catalog: Catalog,
    pub inventory: Vec<InventoryItem>,
}

/// A menu photo: the upload as sent (kept, so a rendition of another size
/// can be made from it one day) and the rendition guests are sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Photo {
    pub image_id: Uuid,
    pub shop_id: Uuid,
    /// What the upload is: `image/jpeg`, `image/png` or `image/webp`.
    pub content_type: String,
    pub width: i64,
    pub height: i64,
    pub original: Vec<u8>,
    pub rendition: Rendition,
    pub created_at: Timestamp,
}

/// What guests are sent of a photo: a JPEG.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendition {
    pub bytes: Vec<u8>,
    pub width: i64,
    pub height: i64,
}

/// A guest's request to exchange the PIN for a guest token.
#[derive(Debug, Clone)]
pub struct GuestGrant {
    pub session_id: Uuid,
    pub pin: Option<String>,
    /// The digest the token is known by ([`guest_token_digest`]).
    ///
    /// [`guest_token_digest`]: ordergate_domain::session::guest_token_digest
    pub token_digest: String,
    pub expires_at: Timestamp,
    pub policy: PinPolicy,
    pub now: Timestamp,
}

#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Succeeds when the database answers a trivial query.
    async fn ping(&self) -> StoreResult<()>;

    async fn create_shop(&self, shop: Shop) -> StoreResult<Shop>;
    async fn list_shops(&self) -> StoreResult<Vec<Shop>>;
    async fn get_shop(&self, shop_id: Uuid) -> StoreResult<Option<Shop>>;
    /// Applies a staff patch to the shop (its name, its languages),
    /// validated inside the transaction; its menus are rendered anew, and
    /// `menu.changed` tells its pages so.
    async fn update_shop(
        &self,
        shop_id: Uuid,
        patch: ShopPatch,
        now: Timestamp,
    ) -> StoreResult<Shop>;

    /// Validates and publishes a catalog: retires what it no longer lists,
    /// creates an untracked inventory entry for every new id, bumps the version.
    /// Validation runs inside the transaction, where the kinds of existing
    /// ids and the shop's photos are known.
    /// `expected_version`, when given, is the version the edit was made
    /// against: another edit since → `CatalogVersionConflict`, nothing
    /// changed.
    async fn put_catalog(
        &self,
        shop_id: Uuid,
        catalog: CatalogInput,
        expected_version: Option<i64>,
        now: Timestamp,
    ) -> StoreResult<Catalog>;
    /// Keeps a photo of the shop's (`NotFound` for an unknown shop). A
    /// catalog item may then name it.
    async fn add_photo(&self, photo: Photo) -> StoreResult<()>;
    /// A photo's rendition; `None` when there is no such photo.
    async fn photo_rendition(&self, image_id: Uuid) -> StoreResult<Option<Rendition>>;
    /// The active catalog; version 0 and empty when never published.
    async fn get_catalog(&self, shop_id: Uuid) -> StoreResult<Catalog>;
    async fn menu_source(&self, shop_id: Uuid) -> StoreResult<MenuSource>;

    /// The inventory of the shop's active items and toppings.
    async fn list_inventory(&self, shop_id: Uuid) -> StoreResult<Vec<InventoryItem>>;
    async fn update_inventory(
        &self,
        shop_id: Uuid,
        item_id: Uuid,
        change: StockChange,
        actor: &str,
        now: Timestamp,
    ) -> StoreResult<InventoryItem>;
    async fn restock(
        &self,
        shop_id: Uuid,
        item_id: Uuid,
        quantity: i64,
        actor: &str,
        now: Timestamp,
    ) -> StoreResult<InventoryItem>;
    /// Newest first.
    async fn inventory_log(&self, shop_id: Uuid, limit: Limit) -> StoreResult<Vec<LogEntry>>;

    /// The shop's tables, by name, each with its active session if any
    /// (the session whose label is the table's name).
    async fn tables(&self, shop_id: Uuid) -> StoreResult<Vec<TableState>>;
    /// The table of a QR card's code, with its active session if any.
    async fn table_by_code(&self, code: &str) -> StoreResult<Option<TableState>>;

    /// An id for a new session of the shop. A backend that spreads shops
    /// over shards draws one that lives where the shop does.
    fn new_session_id(&self, shop_id: Uuid) -> Uuid {
        let _ = shop_id;
        Uuid::new_v4()
    }
    /// Opens a table; `TableOccupied` when it already has an active session.
    async fn open_session(&self, session: Session) -> StoreResult<Session>;
    /// Newest first, optionally only one status.
    async fn list_sessions(
        &self,
        shop_id: Uuid,
        status: Option<SessionStatus>,
        limit: Limit,
    ) -> StoreResult<Vec<Session>>;
    async fn get_session(&self, session_id: Uuid) -> StoreResult<Option<Session>>;
    /// Judges and records a guest's PIN attempt in one step, so parallel
    /// guesses are counted one by one and cannot slip past a lock.
    async fn verify_pin(
        &self,
        session_id: Uuid,
        given: Option<&str>,
        policy: PinPolicy,
        now: Timestamp,
    ) -> StoreResult<PinOutcome>;
    /// Closes the session (once) and returns its bill; later calls return the
    /// same bill. The session's guest tokens die with it.
    async fn checkout(&self, session_id: Uuid, now: Timestamp) -> StoreResult<Bill>;
    /// Clears the session's PIN lock and failure count (staff).
    async fn unlock_pin(&self, session_id: Uuid) -> StoreResult<Session>;
    /// Judges the PIN exactly as [`Store::verify_pin`] does and, when it is
    /// accepted on an active session, records the token in the same
    /// transaction. An accepted PIN on a closed session records nothing.
    async fn grant_guest_access(&self, grant: GuestGrant) -> StoreResult<PinOutcome>;
    /// The session, when it is active and the guest token is one of its
    /// own: `None` when no such token of it exists, it expired, or the
    /// session was checked out.
    async fn guest_token_session(
        &self,
        session_id: Uuid,
        token_digest: &str,
        now: Timestamp,
    ) -> StoreResult<Option<Session>>;

    /// Runs a staff write, and renders its response inside the
    /// transaction. Under an idempotency key (`claim`), it replays the stored
    /// response of a completed earlier request with this key, refuses the
    /// key with another fingerprint (`IdempotencyKeyReused`), or performs
    /// the write and stores its response in the same transaction. Refusals
    /// are not stored: a corrected retry with the same key is processed
    /// anew. `now` judges whether an earlier record expired.
    async fn staff_write(
        &self,
        write: StaffWrite,
        claim: Option<Claim>,
        now: Timestamp,
    ) -> StoreResult<Answer>;

    /// An id for a new order at the session: a UUIDv7 of now. A backend
    /// that spreads shops over shards draws one that lives where the
    /// session's shop does.
    async fn new_order_id(&self, session_id: Uuid) -> StoreResult<Uuid> {
        let _ = session_id;
        Ok(Uuid::now_v7())
    }

    /// Admits and places an order in one transaction, in the contract's
    /// order: session, PIN (or a verified token), replay, closed session,
    /// duplicate payload, cooldown, session order rate, then the commit
    /// (catalog, prices, stock, ticket, events, idempotency record, audit
    /// row). A refusal rolls the order back but still commits its audit row
    /// (and a wrong PIN's count), except one given before the credentials
    /// were judged ([`Ordered::audited`]); an unknown session is
    /// `Rejected(NotFound)`, with no shop to audit under.
    async fn place_order(&self, order: PlaceOrder) -> StoreResult<Ordered>;

    /// A guest's call for staff or the bill at an active session
    /// (`SessionClosed` otherwise): the open request of its kind if there
    /// is one, else a new one, announced as `service.requested`. Under a
    /// claim it replays the stored answer, or refuses the key with another
    /// fingerprint, as [`Store::staff_write`] does.
    async fn request_service(&self, call: ServiceCall) -> StoreResult<Answer>;
    /// Staff acknowledge a request (`NotFound` when there is none): once,
    /// announced as `service.acknowledged`; again, it is answered as it is.
    async fn acknowledge_service(
        &self,
        request_id: Uuid,
        now: Timestamp,
    ) -> StoreResult<ServiceRequest>;
    /// The shop's service requests, oldest first, optionally of one status.
    async fn service_requests(
        &self,
        shop_id: Uuid,
        status: Option<ServiceStatus>,
        limit: Limit,
    ) -> StoreResult<Vec<ServiceRequest>>;

    /// Moves an order along its status machine; cancelling puts back the
    /// stock its placement took, once. Appends `order.updated`.
    async fn set_order_status(
        &self,
        order_id: Uuid,
        change: StatusChange,
        now: Timestamp,
    ) -> StoreResult<Order>;
    /// The shop's orders in the given statuses (all when empty), oldest first.
    async fn shop_orders(
        &self,
        shop_id: Uuid,
        statuses: Vec<OrderStatus>,
        limit: Limit,
    ) -> StoreResult<Vec<Order>>;
    /// When each of the shop's orders that became ready since `since` was
    /// taken by the kitchen (or placed, if it was never accepted) and when
    /// its food was ready: what the estimated wait is made of.
    async fn kitchen_pace(
        &self,
        shop_id: Uuid,
        since: Timestamp,
    ) -> StoreResult<Vec<(Timestamp, Timestamp)>>;

    /// Events of the shop with ids above `after`, in id order.
    async fn events_after(
        &self,
        shop_id: Uuid,
        after: i64,
        limit: Limit,
    ) -> StoreResult<Vec<Event>>;
    /// The id of the shop's newest event; 0 when it has none.
    async fn last_event_id(&self, shop_id: Uuid) -> StoreResult<i64>;
    /// Registers who hears of committed changes (one listener; a later call replaces it).
    fn set_change_listener(&self, listener: ChangeListener);

    /// The stored answer to a guest order request that already completed,
    /// from committed data only, without taking the write path: `Some` when
    /// the session exists and [admits](Session::admits_as_is) the proof
    /// as is, and the claim's record matches. `None` means "take the full
    /// path", which decides everything else (wrong PIN, mismatch, in
    /// flight, new order); a backend may answer only what it remembers of
    /// its own recent writes and leave the rest to that path.
    async fn committed_replay(
        &self,
        session_id: Uuid,
        proof: &GuestProof,
        claim: &Claim,
        policy: PinPolicy,
        now: Timestamp,
    ) -> StoreResult<Option<Replay>>;

    /// Appends the audit row of an order POST answered outside
    /// `place_order` (refused before it, or replayed from committed data).
    /// Returns once the row is queued behind every write already queued; it
    /// is durable with the next commit. Unknown sessions are not recorded
    /// (no shop to file them under).
    async fn record_audit(&self, entry: AuditEntry) -> StoreResult<()>;
    /// Newest first, including every row recorded before the call.
    async fn audit_log(&self, shop_id: Uuid, limit: Limit) -> StoreResult<Vec<AuditEntry>>;

    /// The session's orders, newest first.
    async fn session_orders(&self, session_id: Uuid, limit: Limit) -> StoreResult<Vec<Order>>;
    async fn get_order(&self, order_id: Uuid) -> StoreResult<Option<Order>>;

    /// Forgets idempotency records and guest tokens that expired by `now`;
    /// returns how many.
    async fn purge_expired(&self, now: Timestamp) -> StoreResult<u64>;
    /// Deletes audit rows recorded before `before`, at most `batch` of them
    /// (a bounded transaction); returns how many. Call again while it
    /// returns `batch`.
    async fn purge_audit(&self, before: Timestamp, batch: u32) -> StoreResult<u64>;

    /// The shop's printers, by name, each with its progress.
    async fn printers(&self, shop_id: Uuid) -> StoreResult<Vec<PrinterState>>;
    /// Every shop's printers: what the print workers serve.
    async fn all_printers(&self) -> StoreResult<Vec<Printer>>;
    async fn get_printer(&self, printer_id: Uuid) -> StoreResult<Option<PrinterState>>;
    /// Forgets the printer; its worker stops. `NotFound` when unknown.
    async fn delete_printer(&self, printer_id: Uuid) -> StoreResult<()>;
    /// Appends `ticket.reprint` for the order on the printer: its worker
    /// prints a marked copy. `NotFound` for an unknown printer, or an order
    /// that is not of the printer's shop.
    async fn request_reprint(
        &self,
        printer_id: Uuid,
        order_id: Uuid,
        now: Timestamp,
    ) -> StoreResult<i64>;
    /// The right to print to the printer, `None` while another node holds
    /// it. Held until the lease is dropped.
    async fn lease_printer(&self, printer_id: Uuid) -> StoreResult<Option<Box<dyn PrinterLease>>>;

    /// Gives an account `role` in the shop: `new_account` is created first
    /// (`UsernameTaken` when its username has one); without it the account
    /// called `username` is found (`NotFound("account")`). A member already
    /// gets the new role. `true` when the membership is new.
    async fn add_member(
        &self,
        shop_id: Uuid,
        username: String,
        new_account: Option<Account>,
        role: Role,
        now: Timestamp,
    ) -> StoreResult<(Member, bool)>;
    /// The shop's members, by username.
    async fn members(&self, shop_id: Uuid) -> StoreResult<Vec<Member>>;
    /// Ends the account's membership of the shop (`NotFound("member")`);
    /// an account left in no shop is signed out (its tokens are revoked).
    async fn remove_member(&self, shop_id: Uuid, account_id: Uuid) -> StoreResult<()>;
    async fn account_by_username(&self, username: &str) -> StoreResult<Option<Account>>;
    /// Counts one sign-in attempt under each subject, atomically, before
    /// its password is judged: of any number of attempts at once, at most
    /// the policy's count are judged. `Some(until)`: a subject is past its
    /// count, and this attempt is refused until then.
    async fn count_login_attempt(
        &self,
        subjects: Vec<String>,
        policy: LoginPolicy,
        now: Timestamp,
    ) -> StoreResult<Option<Timestamp>>;
    /// A sign-in succeeded: the account's count starts again, and the
    /// attempt is taken back from the address's.
    async fn forgive_login_attempt(&self, account: String, address: String) -> StoreResult<()>;
    async fn create_staff_token(
        &self,
        token_digest: String,
        account_id: Uuid,
        now: Timestamp,
        expires_at: Timestamp,
    ) -> StoreResult<()>;
    /// The account a live token signs in, with its memberships.
    async fn staff_token(
        &self,
        token_digest: &str,
        now: Timestamp,
    ) -> StoreResult<Option<(Account, Vec<Membership>)>>;
    async fn revoke_staff_token(&self, token_digest: &str) -> StoreResult<()>;
    /// Gives the account a new password hash and signs out every one of
    /// its tokens but `kept` (the one that changed it), in one transaction.
    async fn change_password(
        &self,
        account_id: Uuid,
        password_hash: String,
        kept: String,
    ) -> StoreResult<()>;

    /// Keeps a new device with the digest of its token.
    async fn create_device(&self, device: Device, token_digest: String) -> StoreResult<()>;
    /// The shop's live devices, oldest first (`NotFound("shop")`).
    async fn devices(&self, shop_id: Uuid) -> StoreResult<Vec<Device>>;
    /// Forgets the device and so its token (`NotFound("device")`).
    async fn revoke_device(&self, shop_id: Uuid, device_id: Uuid) -> StoreResult<()>;
    /// The live device a token signs in.
    async fn device_token(&self, token_digest: &str) -> StoreResult<Option<Device>>;

    /// The shop a resource belongs to; `None` when there is no such
    /// resource. How a route named by a session, order, printer or service
    /// request learns whose it is before it lets a credential act on it.
    async fn shop_of(&self, resource: Owned) -> StoreResult<Option<Uuid>>;
}

/// A resource that belongs to one shop, named by its own id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owned {
    Session(Uuid),
    Order(Uuid),
    Printer(Uuid),
    ServiceRequest(Uuid),
}

impl Owned {
    /// The table it is a row of and the column its id is kept in (each
    /// such table has a `shop_id` and an index on that column).
    pub fn row(self) -> (&'static str, &'static str, Uuid) {
        match self {
            Owned::Session(id) => ("table_sessions", "session_id", id),
            Owned::Order(id) => ("orders", "order_id", id),
            Owned::Printer(id) => ("printers", "printer_id", id),
            Owned::ServiceRequest(id) => ("service_requests", "request_id", id),
        }
    }

    /// What a missing one is called in a `NOT_FOUND` answer.
    pub fn noun(self) -> &'static str {
        match self {
            Owned::Session(_) => "session",
            Owned::Order(_) => "order",
            Owned::Printer(_) => "printer",
            Owned::ServiceRequest(_) => "service request",
        }
    }
}
