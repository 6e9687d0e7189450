//! Live events over server-sent events: the kitchen's stream of the whole
//! shop, and each table's stream of its own orders and the shop's stock.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use futures_util::{StreamExt, stream};
use ordergate_domain::Rejection;
use ordergate_domain::session::SessionStatus;
use ordergate_domain::staff::Duty;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::accounts::{Actor, authorize};
use crate::app::AppState;
use crate::auth::{PIN_HEADER, SessionCaller, session_access};
use crate::error::{ApiError, Problem};
use crate::extract::{ApiPath, ApiQuery};
use crate::hub::{Audience, SseEvent};
use crate::limits::{ClientAddress, StreamSlot};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(shop_events))
        .routes(routes!(session_events))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ShopStreamQuery {
    /// The staff token, for clients that cannot set headers (EventSource).
    #[serde(rename = "access_token")]
    #[param(rename = "access_token")]
    access_token: Option<String>,
    /// Resume after this event id (or send the `Last-Event-ID` header).
    #[param(value_type = Option<i64>)]
    last_event_id: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct SessionStreamQuery {
    /// The table's PIN (or send `X-Session-PIN`).
    pin: Option<String>,
    /// A guest token of this session, or the staff token (or send it as
    /// `Authorization: Bearer`), for clients that cannot set headers.
    #[serde(rename = "access_token")]
    #[param(rename = "access_token")]
    access_token: Option<String>,
    /// Resume after this event id (or send the `Last-Event-ID` header).
    #[param(value_type = Option<i64>)]
    last_event_id: Option<String>,
}

/// The shop's live events (staff): every order, stock and session change.
///
/// `text/event-stream` of `order.placed`, `order.updated`, `stock.changed`,
/// `session.opened` and `session.closed`, each with its id. Reconnect with
/// `Last-Event-ID` to get every event after it first.
#[utoipa::path(get, path = "/api/v1/shops/{shopId}/events", tag = "kitchen",
    security(("staffToken" = [])),
    params(
        ("shopId" = Uuid, Path),
        ("Last-Event-ID" = Option<i64>, Header, description = "Resume after this event id"),
        ShopStreamQuery,
    ),
    responses(
        (status = 200, description = "An endless event stream", content_type = "text/event-stream", body = SseEvent),
        (status = 404, description = "No such shop (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 422, description = "Last-Event-ID is not an event id (VALIDATION_FAILED)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%shop_id))]
async fn shop_events(
    State(state): State<AppState>,
    ApiPath(shop_id): ApiPath<Uuid>,
    mut headers: HeaderMap,
    ApiQuery(query): ApiQuery<ShopStreamQuery>,
) -> Result<Response, ApiError> {
    bearer_from_query(&mut headers, query.access_token.as_deref());
    let actor = Actor::of(&state, &headers).await?;
    let actor = authorize(
        &state,
        actor,
        &[("shopId".to_owned(), shop_id.to_string())],
        Duty::Kitchen,
    )
    .await?;
    let cursor = last_event_id(&headers, query.last_event_id.as_deref())?;
    if state.store().get_shop(shop_id).await?.is_none() {
        return Err(ApiError::not_found("shop"));
    }
    let watcher = Watcher::of(actor, shop_id, Duty::Kitchen);
    stream(&state, shop_id, Audience::Staff, cursor, watcher).await
}

/// One table's live events (guests): its own orders and session, and the
/// shop's stock changes.
///
/// Authenticate with the PIN (`?pin=`), a guest token or the staff token
/// (`?access_token=`, or the headers). The stream ends after the table's
/// `session.closed` event.
#[utoipa::path(get, path = "/api/v1/sessions/{sessionId}/events", tag = "kitchen",
    security(("sessionPin" = []), ("guestToken" = []), ("staffToken" = [])),
    params(
        ("sessionId" = Uuid, Path),
        ("Last-Event-ID" = Option<i64>, Header, description = "Resume after this event id"),
        SessionStreamQuery,
    ),
    responses(
        (status = 200, description = "An endless event stream", content_type = "text/event-stream", body = SseEvent),
        (status = 404, description = "No such session (NOT_FOUND)", body = Problem,
         content_type = "application/problem+json"),
        (status = 410, description = "The table was checked out (SESSION_CLOSED): its stream \
         ended then", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "Too many wrong PINs (PIN_LOCKED), or too many streams open \
         for this table or from this address (TOO_MANY_STREAMS); with Retry-After", body = Problem,
         content_type = "application/problem+json"),
        (status = 422, description = "Last-Event-ID is not an event id (VALIDATION_FAILED)", body = Problem,
         content_type = "application/problem+json"),
    ),
)]
#[tracing::instrument(skip_all, fields(%session_id))]
async fn session_events(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<Uuid>,
    ClientAddress(address): ClientAddress,
    mut headers: HeaderMap,
    ApiQuery(query): ApiQuery<SessionStreamQuery>,
) -> Result<Response, ApiError> {
    if let Some(pin) = &query.pin
        && !headers.contains_key(PIN_HEADER)
        && let Ok(value) = HeaderValue::from_str(pin)
    {
        headers.insert(PIN_HEADER, value);
    }
    bearer_from_query(&mut headers, query.access_token.as_deref());
    let cursor = last_event_id(&headers, query.last_event_id.as_deref());
    let (session, caller) =
        session_access(&state, &headers, address, session_id, Duty::Sessions).await?;
    // A stream ends at checkout; a checked-out table has nothing more to say.
    if session.status == SessionStatus::Closed {
        return Err(Rejection::SessionClosed.into());
    }
    let watcher = match caller {
        SessionCaller::Guest => {
            Watcher::Guest(state.limits().open_guest_stream(session_id, address)?)
        }
        SessionCaller::Staff(actor) => Watcher::of(actor, session.shop_id, Duty::Sessions),
    };
    stream(
        &state,
        session.shop_id,
        Audience::Guests(session_id),
        cursor?,
        watcher,
    )
    .await
}

/// `?access_token=` as the bearer token, unless the request has an
/// `Authorization` header of its own (EventSource cannot set one).
fn bearer_from_query(headers: &mut HeaderMap, access_token: Option<&str>) {
    if let Some(token) = access_token
        && !headers.contains_key(header::AUTHORIZATION)
        && let Ok(value) = HeaderValue::from_str(&format!("Bearer {token}"))
    {
        headers.insert(header::AUTHORIZATION, value);
    }
}

/// The resume point: the `Last-Event-ID` header, else the query parameter.
/// Either one that is not an event id is refused, even beside a good one.
fn last_event_id(headers: &HeaderMap, query: Option<&str>) -> Result<Option<i64>, ApiError> {
    let parse = |raw: &str| {
        raw.trim()
            .parse::<i64>()
            .ok()
            .filter(|id| *id >= 0)
            .ok_or_else(|| {
                ApiError::from(ordergate_domain::Rejection::field(
                    "lastEventId",
                    "must be an event id (0 or more)",
                ))
            })
    };
    let from_query = query.map(parse).transpose()?;
    let from_header = headers
        .get("last-event-id")
        .map(|v| parse(v.to_str().unwrap_or("?")))
        .transpose()?;
    Ok(from_header.or(from_query))
}

/// Who holds a stream open, and what ends it besides the server: a
/// guest's slot (counted against the table's and the address's limits)
/// is held for as long as the stream; a staff credential is checked again
/// whenever one is revoked on this node, and every [`RECHECK`] besides (a
/// revocation on another node), and the stream ends once it no longer
/// allows the duty in the shop.
enum Watcher {
    Guest(StreamSlot),
    Admin,
    Staff {
        actor: Actor,
        shop_id: Uuid,
        duty: Duty,
    },
}

/// How long a stream outlives a revocation made on another node at most.
const RECHECK: Duration = Duration::from_secs(5);

impl Watcher {
    fn of(actor: Actor, shop_id: Uuid, duty: Duty) -> Watcher {
        match actor {
            Actor::Admin => Watcher::Admin,
            actor => Watcher::Staff {
                actor,
                shop_id,
                duty,
            },
        }
    }

    /// Resolves once the stream's credential no longer allows it; never
    /// for guests (checkout ends theirs), whose slot it holds meanwhile,
    /// and the administrator.
    async fn revoked(self, state: AppState) {
        let (actor, shop_id, duty) = match self {
            Watcher::Staff {
                actor,
                shop_id,
                duty,
            } => (actor, shop_id, duty),
            Watcher::Guest(_slot) => return std::future::pending().await,
            Watcher::Admin => return std::future::pending().await,
        };
        let mut revocations = state.revocations();
        loop {
            let _ = tokio::time::timeout(RECHECK, revocations.changed()).await;
            match actor.again(&state).await {
                Ok(Some(now)) if now.may(shop_id, duty) => {}
                // An unanswered check keeps the stream: the store being
                // away is no revocation.
                Err(_) => {}
                _ => return,
            }
        }
    }
}

async fn stream(
    state: &AppState,
    shop_id: Uuid,
    audience: Audience,
    cursor: Option<i64>,
    watcher: Watcher,
) -> Result<Response, ApiError> {
    let frames = state.hub().subscribe(shop_id, audience, cursor).await?;
    // Counted for as long as the body lives, i.e. the connection (the
    // watcher, with a guest's slot, lives as long).
    let connected = state.metrics().sse_connected(shop_id);
    // Tells EventSource how soon to reconnect after a cut.
    let hello = stream::once(async { Ok::<_, Infallible>(Bytes::from_static(b"retry: 1000\n\n")) });
    let live = stream::unfold((frames, connected), |(mut frames, connected)| async move {
        let frame = frames.recv().await?;
        Some((Ok::<_, Infallible>(frame), (frames, connected)))
    })
    .take_until(watcher.revoked(state.clone()));
    let body = Body::from_stream(hello.chain(live));
    Ok((
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
            // Proxies such as nginx would otherwise hold events back.
            (header::HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        body,
    )
        .into_response())
}
