//! Limits against a guest-facing server's abuse: one address sweeping PINs
//! over many tables (each table locks itself after a few wrong PINs; this
//! catches the sweep), too many open event streams for one table or one
//! address, oversized request heads and requests that never finish.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::http::HeaderMap;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use uuid::Uuid;

use crate::app::AppState;
use crate::error::{ApiError, ErrorCode};

/// Wrong PINs one address may send, across all tables, per window.
pub const PIN_FAILURES_PER_ADDRESS: u32 = 20;
pub const PIN_WINDOW: Duration = Duration::from_secs(600);
/// Open guest event streams per table and per address.
pub const STREAMS_PER_SESSION: usize = 8;
pub const STREAMS_PER_ADDRESS: usize = 64;
/// Total size of a request's header names and values.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
/// Header fields a request may carry (browsers send a few dozen).
pub const MAX_HEADER_FIELDS: usize = 100;
/// Header fields the HTTP parser takes before it refuses a request itself,
/// with a bare 431 the app never sees: well above [`MAX_HEADER_FIELDS`], so
/// that a request over the limit gets the app's own problem+json. Not far
/// above it: the parser sets up room for this many on every request
/// (1,024 cost replays a sixth of their instructions under callgrind).
pub const PARSER_MAX_HEADER_FIELDS: usize = 256;

/// One address's wrong-PIN allowance for the current window. A guess holds
/// one unit while it is judged and gives it back when the PIN was right; a
/// wrong PIN spends it for the rest of the window. So simultaneous guesses
/// are counted as they start, never raced past the limit: the 21st waits
/// for one of the 20 in flight, and is refused once 20 were wrong.
struct AddressGuesses {
    allowance: Arc<Semaphore>,
    wrong: AtomicU32,
    since: Instant,
}

impl AddressGuesses {
    fn locked(&self) -> ApiError {
        let left = PIN_WINDOW.saturating_sub(self.since.elapsed());
        ApiError::new(
            ErrorCode::PinLocked,
            "too many wrong PINs from this address; try again later",
        )
        .with("scope", "address")
        .retry_after(left.as_secs().max(1))
    }
}

pub struct Limits {
    /// Wrong-PIN allowances by address; an entry lives one window from its
    /// first guess.
    pin_guesses: moka::sync::Cache<IpAddr, Arc<AddressGuesses>>,
    /// (session, PIN) pairs judged right before: a session's PIN never
    /// changes, so sending it again is no guess and needs no allowance. A
    /// guest who is already in is not held up by a sweep from the same
    /// address (a restaurant's Wi-Fi). Six digits pack into a `u32`; the
    /// PINs are the database's own, kept there in the clear anyway.
    known_pins: moka::sync::Cache<(Uuid, u32), ()>,
    streams: Arc<Mutex<HashMap<StreamOwner, usize>>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum StreamOwner {
    Session(Uuid),
    Address(IpAddr),
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            pin_guesses: moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(PIN_WINDOW)
                .build(),
            known_pins: moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(Duration::from_secs(24 * 3600))
                .build(),
            streams: Arc::default(),
        }
    }
}

/// A PIN attempt cleared to be judged; tell it how the judgement went.
pub struct PinAttempt {
    session_id: Uuid,
    /// The PIN packed, when it has a PIN's form (anything else is wrong).
    pin: Option<u32>,
    /// `None` for a PIN known to be right: it spends no allowance.
    guess: Option<(OwnedSemaphorePermit, Arc<AddressGuesses>)>,
}

impl PinAttempt {
    /// The PIN was judged wrong: the unit it held stays spent.
    pub fn wrong(self, address: IpAddr) {
        let Some((permit, guesses)) = self.guess else {
            return;
        };
        permit.forget();
        if guesses.wrong.fetch_add(1, Ordering::AcqRel) + 1 == PIN_FAILURES_PER_ADDRESS {
            // Waiting guesses are refused at once rather than left waiting
            // for a unit that will never come back.
            guesses.allowance.close();
            tracing::warn!(%address, "too many wrong PINs from one address: its PIN checks are refused for a while");
        }
    }

    /// The PIN was judged right: remember it, and give the unit back.
    pub fn right(self, limits: &Limits) {
        if let (Some(_), Some(pin)) = (&self.guess, self.pin) {
            limits.known_pins.insert((self.session_id, pin), ());
        }
    }
}

impl Limits {
    /// Clears a PIN attempt from `address` at `session` to be judged, once
    /// the address has allowance left (waiting for guesses in flight to be
    /// judged if need be); refused once its window holds too many wrong ones.
    pub async fn pin_attempt(
        &self,
        address: IpAddr,
        session_id: Uuid,
        pin: &str,
    ) -> Result<PinAttempt, ApiError> {
        let pin = packed_pin(pin);
        if let Some(packed) = pin
            && self.known_pins.contains_key(&(session_id, packed))
        {
            return Ok(PinAttempt {
                session_id,
                pin,
                guess: None,
            });
        }
        let guesses = self.pin_guesses.get_with(address, || {
            Arc::new(AddressGuesses {
                allowance: Arc::new(Semaphore::new(PIN_FAILURES_PER_ADDRESS as usize)),
                wrong: AtomicU32::new(0),
                since: Instant::now(),
            })
        });
        match Arc::clone(&guesses.allowance).acquire_owned().await {
            Ok(permit) => Ok(PinAttempt {
                session_id,
                pin,
                guess: Some((permit, guesses)),
            }),
            Err(_closed) => Err(guesses.locked()),
        }
    }

    /// Counts a guest stream for its table and its address for as long as
    /// the returned guard lives; refuses one over either limit. (Staff
    /// streams carry the staff token and are not counted.)
    pub fn open_guest_stream(
        &self,
        session: Uuid,
        address: IpAddr,
    ) -> Result<StreamSlot, ApiError> {
        let owners = [
            (StreamOwner::Session(session), STREAMS_PER_SESSION),
            (StreamOwner::Address(address), STREAMS_PER_ADDRESS),
        ];
        let mut open = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        if owners
            .iter()
            .any(|(owner, max)| open.get(owner).copied().unwrap_or(0) >= *max)
        {
            return Err(ApiError::new(
                ErrorCode::TooManyStreams,
                "too many event streams are open for this table or from this address",
            )
            .retry_after(5));
        }
        for (owner, _) in &owners {
            *open.entry(*owner).or_default() += 1;
        }
        Ok(StreamSlot {
            streams: Arc::clone(&self.streams),
            owners: owners.map(|(owner, _)| owner),
        })
    }
}

/// Six ASCII digits as one number (with a leading 1, so "000123" and
/// "123" differ); `None` for anything else.
fn packed_pin(pin: &str) -> Option<u32> {
    (pin.len() == 6 && pin.bytes().all(|b| b.is_ascii_digit()))
        .then(|| pin.bytes().fold(1, |n, b| n * 10 + u32::from(b - b'0')))
}

/// A counted stream; dropping it (the stream ended) frees its place.
pub struct StreamSlot {
    streams: Arc<Mutex<HashMap<StreamOwner, usize>>>,
    owners: [StreamOwner; 2],
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        for owner in &self.owners {
            if let Some(count) = open.get_mut(owner) {
                *count -= 1;
                if *count == 0 {
                    open.remove(owner);
                }
            }
        }
    }
}

/// Refuses a request whose headers are too large, and answers one that takes
/// longer than the request timeout to arrive and be answered with 408. An
/// event stream's body is not timed: the handler has answered by then.
pub async fn bound_requests(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let header_bytes: usize = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len())
        .sum();
    if header_bytes > MAX_HEADER_BYTES || request.headers().len() > MAX_HEADER_FIELDS {
        return ApiError::new(
            ErrorCode::HeadersTooLarge,
            format!(
                "request headers may total at most {MAX_HEADER_BYTES} bytes in at most \
                 {MAX_HEADER_FIELDS} fields"
            ),
        )
        .into_response();
    }
    let timeout = state.settings().request_timeout();
    match tokio::time::timeout(timeout, next.run(request)).await {
        Ok(response) => response,
        // An order cut off here may still commit: its retry with the same
        // key gets the committed answer.
        Err(_) => ApiError::new(
            ErrorCode::RequestTimeout,
            format!(
                "the request was not completed within {} s; retry it (with the same Idempotency-Key)",
                timeout.as_secs()
            ),
        )
        .into_response(),
    }
}

/// The client's address: the peer's, or, when the peer is one of the
/// configured reverse proxies, the nearest address in `X-Forwarded-For` that
/// is not one of them (entries further left are the client's own claims).
pub struct ClientAddress(pub IpAddr);

impl FromRequestParts<AppState> for ClientAddress {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let ConnectInfo(peer) = ConnectInfo::<SocketAddr>::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::new(ErrorCode::Internal, "an internal error occurred"))?;
        let trusted = &state.settings().trusted_proxies;
        Ok(ClientAddress(client_address(
            peer.ip(),
            &parts.headers,
            trusted,
        )))
    }
}

pub(crate) fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &[IpAddr]) -> IpAddr {
    if !trusted.contains(&peer) {
        return peer;
    }
    let hops: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .flat_map(|value| value.to_str().unwrap_or_default().split(','))
        .map(str::trim)
        .collect();
    let mut client = peer;
    for hop in hops.iter().rev() {
        // An entry that is not an address ends the trusted chain.
        let Ok(address) = hop.parse::<IpAddr>() else {
            break;
        };
        client = address;
        if !trusted.contains(&address) {
            break;
        }
    }
    client
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOME: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 7));

    #[tokio::test]
    async fn a_pin_sweep_from_one_address_is_stopped() {
        let limits = Limits::default();
        for _ in 0..PIN_FAILURES_PER_ADDRESS {
            let attempt = limits.pin_attempt(HOME, Uuid::new_v4(), "000000").await;
            attempt.unwrap().wrong(HOME);
        }
        let refused = limits.pin_attempt(HOME, Uuid::new_v4(), "000000").await;
        assert_eq!(refused.err().unwrap().code(), ErrorCode::PinLocked);
        let other = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 8));
        assert!(
            limits
                .pin_attempt(other, Uuid::new_v4(), "000000")
                .await
                .is_ok(),
            "other addresses are not held"
        );
    }

    #[test]
    fn only_six_digits_pack_and_leading_zeros_count() {
        assert_eq!(packed_pin("012345"), Some(1_012_345));
        assert_ne!(packed_pin("000123"), packed_pin("123000"));
        for not_a_pin in ["12345", "1234567", "12345a", "١٢٣٤٥٦", ""] {
            assert_eq!(packed_pin(not_a_pin), None, "{not_a_pin:?}");
        }
    }

    #[tokio::test]
    async fn guesses_in_flight_hold_the_allowance_and_right_pins_give_it_back() {
        let limits = Limits::default();
        let table = Uuid::new_v4();
        let mut in_flight = Vec::new();
        for _ in 0..PIN_FAILURES_PER_ADDRESS {
            in_flight.push(limits.pin_attempt(HOME, table, "123456").await.unwrap());
        }
        let waiting = tokio::time::timeout(
            Duration::from_millis(50),
            limits.pin_attempt(HOME, table, "654321"),
        )
        .await;
        assert!(
            waiting.is_err(),
            "the 21st guess waits for the 20 in flight"
        );
        let right = in_flight.pop().unwrap();
        right.right(&limits);
        for wrong in in_flight {
            wrong.wrong(HOME);
        }
        // One unit came back; the known PIN needs none.
        let last = limits.pin_attempt(HOME, table, "654321").await.unwrap();
        last.wrong(HOME);
        assert!(limits.pin_attempt(HOME, table, "000000").await.is_err());
        assert!(limits.pin_attempt(HOME, table, "123456").await.is_ok());
    }

    #[test]
    fn streams_are_counted_per_table_and_freed_when_they_end() {
        let limits = Limits::default();
        let table = Uuid::new_v4();
        let slots: Vec<_> = (0..STREAMS_PER_SESSION)
            .map(|_| limits.open_guest_stream(table, HOME).unwrap())
            .collect();
        let refused = limits.open_guest_stream(table, HOME).err().unwrap();
        assert_eq!(refused.code(), ErrorCode::TooManyStreams);
        assert!(
            limits.open_guest_stream(Uuid::new_v4(), HOME).is_ok(),
            "another table"
        );
        drop(slots);
        assert!(limits.open_guest_stream(table, HOME).is_ok());
        assert!(
            limits.streams.lock().unwrap().is_empty(),
            "every place freed"
        );
    }

    #[test]
    fn forwarded_for_counts_only_behind_a_trusted_proxy() {
        let proxy: IpAddr = "10.0.0.1".parse().unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("x-forwarded-for", "6.6.6.6, 203.0.113.9".parse().unwrap());
        assert_eq!(
            client_address(HOME, &headers, &[]),
            HOME,
            "no proxy configured"
        );
        assert_eq!(
            client_address(HOME, &headers, &[proxy]),
            HOME,
            "peer is not the proxy"
        );
        assert_eq!(
            client_address(proxy, &headers, &[proxy]),
            "203.0.113.9".parse::<IpAddr>().unwrap(),
            "the address the proxy appended, not the client's own claim"
        );
        headers.insert("x-forwarded-for", "nonsense".parse().unwrap());
        assert_eq!(client_address(proxy, &headers, &[proxy]), proxy);
    }
}
