//! A small typed HTTP client of ordergate's API: what `ordergate rush`
//! drives a server with, and what the crash test shares with it. Answers
//! are kept raw (status, headers, JSON body) because a load test cares
//! about every refusal, not only the successes.

use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::{Method, RequestBuilder};
use serde_json::Value;

/// A server's answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    /// JSON when it parses, else `Value::Null`.
    pub body: Value,
}

impl Reply {
    /// The problem code of a refusal.
    pub fn code(&self) -> Option<&str> {
        self.body.get("code").and_then(Value::as_str)
    }

    /// `Retry-After`, in whole seconds.
    pub fn retry_after(&self) -> Option<Duration> {
        let secs = self
            .headers
            .get("retry-after")?
            .to_str()
            .ok()?
            .parse()
            .ok()?;
        Some(Duration::from_secs(secs))
    }

    /// Whether this answer replays an earlier one (`Idempotent-Replayed`).
    pub fn replayed(&self) -> bool {
        self.headers
            .get("idempotent-replayed")
            .is_some_and(|v| v == "true")
    }

    pub fn str(&self, field: &str) -> Option<&str> {
        self.body.get(field).and_then(Value::as_str)
    }
}

/// Why no answer came.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("no answer within the timeout")]
    Timeout,
    #[error("the request failed: {0}")]
    Network(String),
}

impl From<reqwest::Error> for ClientError {
    fn from(e: reqwest::Error) -> Self {
        if e.is_timeout() {
            ClientError::Timeout
        } else {
            ClientError::Network(e.to_string())
        }
    }
}

pub type Answer = Result<Reply, ClientError>;

/// One guest order attempt: the same values go out on every retry.
#[derive(Debug, Clone)]
pub struct OrderAttempt {
    pub session_id: String,
    pub pin: String,
    pub client_id: String,
    pub key: String,
    pub body: Value,
}

#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    staff_token: Option<String>,
}

impl Client {
    pub fn new(base: impl Into<String>, staff_token: Option<String>) -> Client {
        Client {
            http: reqwest::Client::new(),
            base: base.into().trim_end_matches('/').to_owned(),
            staff_token,
        }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.http.request(method, format!("{}{path}", self.base))
    }

    fn staff(&self, method: Method, path: &str) -> RequestBuilder {
        let request = self.request(method, path);
        match &self.staff_token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    async fn send(request: RequestBuilder) -> Answer {
        let response = request.send().await?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.bytes().await?;
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Ok(Reply {
            status,
            headers,
            body,
        })
    }

    pub async fn get(&self, path: &str) -> Answer {
        Self::send(self.request(Method::GET, path)).await
    }

    pub async fn staff_get(&self, path: &str) -> Answer {
        Self::send(self.staff(Method::GET, path)).await
    }

    /// A staff POST or PUT with a JSON body and an optional `Idempotency-Key`.
    pub async fn staff_send(
        &self,
        method: Method,
        path: &str,
        body: &Value,
        key: Option<&str>,
    ) -> Answer {
        let mut request = self.staff(method, path).json(body);
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        Self::send(request).await
    }

    pub async fn create_shop(&self, body: &Value) -> Answer {
        self.staff_send(Method::POST, "/api/v1/shops", body, None)
            .await
    }

    pub async fn put_catalog(&self, shop: &str, body: &Value) -> Answer {
        let path = format!("/api/v1/shops/{shop}/catalog");
        self.staff_send(Method::PUT, &path, body, None).await
    }

    pub async fn set_inventory(&self, shop: &str, item: &str, body: &Value) -> Answer {
        let path = format!("/api/v1/shops/{shop}/inventory/{item}");
        self.staff_send(Method::PUT, &path, body, None).await
    }

    pub async fn restock(
        &self,
        shop: &str,
        item: &str,
        quantity: i64,
        key: Option<&str>,
    ) -> Answer {
        let path = format!("/api/v1/shops/{shop}/inventory/{item}/restock");
        let body = serde_json::json!({ "quantity": quantity });
        self.staff_send(Method::POST, &path, &body, key).await
    }

    pub async fn open_session(&self, shop: &str, table: &str) -> Answer {
        let path = format!("/api/v1/shops/{shop}/sessions");
        let body = serde_json::json!({ "tableLabel": table });
        self.staff_send(Method::POST, &path, &body, None).await
    }

    pub async fn set_status(&self, order: &str, body: &Value, key: Option<&str>) -> Answer {
        let path = format!("/api/v1/orders/{order}/status");
        self.staff_send(Method::POST, &path, body, key).await
    }

    pub async fn inventory(&self, shop: &str) -> Answer {
        self.staff_get(&format!("/api/v1/shops/{shop}/inventory"))
            .await
    }

    pub async fn inventory_log(&self, shop: &str, limit: u32) -> Answer {
        let path = format!("/api/v1/shops/{shop}/inventory/log?limit={limit}");
        self.staff_get(&path).await
    }

    pub async fn audit(&self, shop: &str, limit: u32) -> Answer {
        self.staff_get(&format!("/api/v1/shops/{shop}/audit?limit={limit}"))
            .await
    }

    /// A table's orders, newest first, read as staff.
    pub async fn session_orders(&self, session: &str, limit: u32) -> Answer {
        let path = format!("/api/v1/sessions/{session}/orders?limit={limit}");
        self.staff_get(&path).await
    }

    pub async fn menu(&self, shop: &str) -> Answer {
        self.get(&format!("/api/v1/shops/{shop}/menu")).await
    }

    /// A guest order POST with every header; `timeout` bounds the wait for
    /// its answer (a client that gives up early, as phones do).
    pub async fn place_order(&self, attempt: &OrderAttempt, timeout: Option<Duration>) -> Answer {
        Self::send(self.order_request(attempt, timeout)).await
    }

    /// [`Client::place_order`], sending `request_id` as `X-Request-Id`: the
    /// server files it in the attempt's audit row, which ties that row to
    /// the key and the attempt.
    pub async fn place_order_as(
        &self,
        attempt: &OrderAttempt,
        request_id: &str,
        timeout: Option<Duration>,
    ) -> Answer {
        let request = self
            .order_request(attempt, timeout)
            .header("X-Request-Id", request_id);
        Self::send(request).await
    }

    fn order_request(&self, attempt: &OrderAttempt, timeout: Option<Duration>) -> RequestBuilder {
        let path = format!("/api/v1/sessions/{}/orders", attempt.session_id);
        let mut request = self
            .request(Method::POST, &path)
            .header("X-Session-PIN", &attempt.pin)
            .header("X-Client-Id", &attempt.client_id)
            .header("Idempotency-Key", &attempt.key)
            .json(&attempt.body);
        if let Some(timeout) = timeout {
            request = request.timeout(timeout);
        }
        request
    }

    /// The shop's live events from just after `last_event_id`.
    pub async fn events(&self, shop: &str, last_event_id: i64) -> Result<EventStream, ClientError> {
        let path = format!("/api/v1/shops/{shop}/events");
        let response = self
            .staff(Method::GET, &path)
            .header("Last-Event-ID", last_event_id.to_string())
            .send()
            .await?;
        if !response.status().is_success() {
            return Err(ClientError::Network(format!(
                "event stream refused: {}",
                response.status()
            )));
        }
        Ok(EventStream {
            response,
            buffer: String::new(),
        })
    }
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub id: i64,
    pub event: String,
    pub data: Value,
}

/// A live event stream, parsed as it arrives.
pub struct EventStream {
    response: reqwest::Response,
    buffer: String,
}

impl EventStream {
    /// The next event; `None` when the stream ended.
    pub async fn next(&mut self) -> Result<Option<Event>, ClientError> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                if let Some(event) = parse_event(&block) {
                    return Ok(Some(event));
                }
                continue;
            }
            match self.response.chunk().await? {
                Some(chunk) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
                None => return Ok(None),
            }
        }
    }
}

/// An event block (`id:`, `event:`, `data:` lines); comments and `retry:`
/// blocks are not events.
fn parse_event(block: &str) -> Option<Event> {
    let (mut id, mut event, mut data) = (None, None, String::new());
    for line in block.lines() {
        if let Some(value) = line.strip_prefix("id:") {
            id = value.trim().parse().ok();
        } else if let Some(value) = line.strip_prefix("event:") {
            event = Some(value.trim().to_owned());
        } else if let Some(value) = line.strip_prefix("data:") {
            data.push_str(value.strip_prefix(' ').unwrap_or(value));
        }
    }
    Some(Event {
        id: id?,
        event: event?,
        data: serde_json::from_str(&data).unwrap_or(Value::Null),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_parsed_and_comments_skipped() {
        let event =
            parse_event("id: 7\nevent: order.placed\ndata: {\"orderId\":\"x\"}\n\n").unwrap();
        assert_eq!(event.id, 7);
        assert_eq!(event.event, "order.placed");
        assert_eq!(event.data["orderId"], "x");
        assert_eq!(parse_event(": keep-alive\n\n"), None);
        assert_eq!(parse_event("retry: 1000\n\n"), None);
    }
}
