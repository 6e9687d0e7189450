//! A small server-sent-events client for the tests: parses `id:`, `event:`,
//! `data:` and `retry:` lines into events, and never waits without a
//! deadline, so a test that misses an event fails instead of hanging.

use std::time::Duration;

use reqwest::{Method, RequestBuilder};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::{Instant, timeout, timeout_at};

use crate::helpers::{Reply, STAFF_TOKEN, TestApp};

/// The longest a test waits for an event that should come.
pub const WAIT: Duration = Duration::from_secs(10);

/// One dispatched event.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    pub id: i64,
    pub event: String,
    pub data: Value,
}

/// Turns the bytes of an event stream into events (the WHATWG parsing
/// rules, for the fields this server sends).
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    /// The stream's first line, whatever it was.
    pub first_line: Option<String>,
    /// The last `retry:` value seen.
    pub retry: Option<u64>,
    /// Comment lines seen (keep-alives).
    pub comments: usize,
    id: Option<String>,
    event: Option<String>,
    data: Vec<String>,
}

impl SseParser {
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete event in what was fed so far.
    pub fn next_event(&mut self) -> Option<SseEvent> {
        while let Some(end) = self.buf.iter().position(|&b| b == b'\n') {
            let raw: Vec<u8> = self.buf.drain(..=end).collect();
            let line = String::from_utf8(raw).expect("an event stream is UTF-8");
            let line = line.trim_end_matches('\n').trim_end_matches('\r');
            if self.first_line.is_none() {
                self.first_line = Some(line.to_owned());
            }
            if line.is_empty() {
                if let Some(event) = self.dispatch() {
                    return Some(event);
                }
                continue;
            }
            if line.starts_with(':') {
                self.comments += 1;
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "id" => self.id = Some(value.to_owned()),
                "event" => self.event = Some(value.to_owned()),
                "data" => self.data.push(value.to_owned()),
                "retry" => {
                    self.retry = Some(value.parse().expect("retry: takes milliseconds"));
                }
                other => panic!("unexpected field {other:?} in line {line:?}"),
            }
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let id = self.id.take();
        let event = self.event.take();
        let data = std::mem::take(&mut self.data);
        if id.is_none() && event.is_none() && data.is_empty() {
            return None;
        }
        let id = id.unwrap_or_else(|| panic!("an event without id: {event:?} {data:?}"));
        let data = data.join("\n");
        Some(SseEvent {
            id: id.parse().unwrap_or_else(|_| panic!("event id {id:?}")),
            event: event.unwrap_or_else(|| "message".to_owned()),
            data: serde_json::from_str(&data).unwrap_or_else(|e| panic!("data {data:?}: {e}")),
        })
    }

    /// Every complete event fed so far.
    pub fn drain(&mut self) -> Vec<SseEvent> {
        std::iter::from_fn(|| self.next_event()).collect()
    }
}

/// What waiting for the next event came to.
#[derive(Debug)]
pub enum Next {
    Event(SseEvent),
    /// The server ended the stream (or the connection).
    End,
    /// Nothing arrived before the deadline.
    Quiet,
}

/// An open event stream, read through reqwest.
pub struct SseStream {
    response: reqwest::Response,
    pub parser: SseParser,
    ended: bool,
}

impl SseStream {
    /// Opens a stream, or hands back the refusal.
    pub async fn try_open(request: RequestBuilder) -> Result<SseStream, Reply> {
        let response = timeout(WAIT, request.send())
            .await
            .expect("the stream did not answer")
            .expect("request failed");
        if response.status() != 200 {
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let text = response.text().await.unwrap();
            let body = serde_json::from_str(&text).unwrap_or(Value::Null);
            return Err(Reply {
                status,
                headers,
                body,
                text,
            });
        }
        let content_type = response.headers().get("content-type").unwrap();
        assert_eq!(content_type, "text/event-stream");
        Ok(SseStream {
            response,
            parser: SseParser::default(),
            ended: false,
        })
    }

    pub async fn open(request: RequestBuilder) -> SseStream {
        match Self::try_open(request).await {
            Ok(stream) => stream,
            Err(reply) => panic!("stream refused: {} {}", reply.status, reply.text),
        }
    }

    /// The next event, the end of the stream, or nothing by `deadline`.
    pub async fn next_by(&mut self, deadline: Instant) -> Next {
        loop {
            if let Some(event) = self.parser.next_event() {
                return Next::Event(event);
            }
            if self.ended {
                return Next::End;
            }
            match timeout_at(deadline, self.response.chunk()).await {
                Ok(Ok(Some(bytes))) => self.parser.feed(&bytes),
                // A connection cut mid-body is an end too.
                Ok(Ok(None) | Err(_)) => self.ended = true,
                Err(_) => return Next::Quiet,
            }
        }
    }

    /// The next event; fails the test if none comes within [`WAIT`].
    pub async fn next(&mut self) -> SseEvent {
        match self.next_by(Instant::now() + WAIT).await {
            Next::Event(event) => event,
            other => panic!("expected an event, got {other:?}"),
        }
    }

    /// The next `n` events.
    pub async fn take(&mut self, n: usize) -> Vec<SseEvent> {
        let mut events = Vec::with_capacity(n);
        while events.len() < n {
            events.push(self.next().await);
        }
        events
    }

    /// Events up to and including the one with id `last`, on this one
    /// connection.
    pub async fn until_id(&mut self, last: i64) -> Vec<SseEvent> {
        let deadline = Instant::now() + WAIT;
        let mut events: Vec<SseEvent> = Vec::new();
        loop {
            let event = match self.next_by(deadline).await {
                Next::Event(event) => event,
                other => panic!(
                    "waiting for event {last}: got {other:?} after {} events (last id {:?})",
                    events.len(),
                    events.last().map(|e| e.id)
                ),
            };
            assert!(event.id <= last, "skipped past {last}: {event:?}");
            let done = event.id == last;
            events.push(event);
            if done {
                return events;
            }
        }
    }

    /// Asserts that no event arrives for `quiet` (and the stream stays open).
    pub async fn assert_quiet(&mut self, quiet: Duration) {
        match self.next_by(Instant::now() + quiet).await {
            Next::Quiet => {}
            other => panic!("expected silence, got {other:?}"),
        }
    }

    /// Everything until the server ends the stream; fails if it does not
    /// end within [`WAIT`].
    pub async fn rest(&mut self) -> Vec<SseEvent> {
        let deadline = Instant::now() + WAIT;
        let mut events = Vec::new();
        loop {
            match self.next_by(deadline).await {
                Next::Event(event) => events.push(event),
                Next::End => return events,
                Next::Quiet => panic!("the stream did not end; got {} events", events.len()),
            }
        }
    }
}

/// A stream opened on a bare TCP socket with a small receive buffer, which
/// the test then does not read: a kitchen screen that froze.
pub struct StalledStream {
    socket: TcpStream,
}

impl StalledStream {
    /// Sends the request for `path_and_query` with `headers` and reads nothing.
    pub async fn open(base: &str, path_and_query: &str, headers: &[(&str, &str)]) -> Self {
        let host = base.trim_start_matches("http://");
        let socket = TcpSocket::new_v4().unwrap();
        // Set before connecting, so the window stays this small.
        socket.set_recv_buffer_size(64 * 1024).unwrap();
        let mut socket = socket.connect(host.parse().unwrap()).await.unwrap();
        let mut request = format!(
            "GET {path_and_query} HTTP/1.1\r\nhost: {host}\r\naccept: text/event-stream\r\nconnection: close\r\n"
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        socket.write_all(request.as_bytes()).await.unwrap();
        StalledStream { socket }
    }

    /// Reads the response to its end (the server must close it within
    /// [`WAIT`]): its status and the events its body carried.
    pub async fn read_to_end(mut self) -> (u16, Vec<SseEvent>) {
        let mut raw = Vec::new();
        timeout(WAIT, self.socket.read_to_end(&mut raw))
            .await
            .expect("the stalled stream was never cut off")
            .expect("read failed");
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a response head");
        let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
        let status: u16 = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("a status line");
        let body = &raw[split + 4..];
        let body = if head.contains("transfer-encoding: chunked") {
            dechunk(body)
        } else {
            body.to_vec()
        };
        let mut parser = SseParser::default();
        parser.feed(&body);
        let events = parser.drain();
        assert!(
            parser
                .first_line
                .as_deref()
                .is_some_and(|l| l.starts_with("retry:")),
            "{:?}",
            parser.first_line
        );
        (status, events)
    }
}

/// The payload of a chunked body (complete chunks only: a body cut off
/// mid-chunk ends where its last complete chunk did).
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = body.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = std::str::from_utf8(&body[..eol]).unwrap();
        let size = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16)
            .unwrap_or_else(|_| panic!("chunk size {size:?}"));
        if size == 0 || body.len() < eol + 2 + size + 2 {
            return out;
        }
        out.extend_from_slice(&body[eol + 2..eol + 2 + size]);
        body = &body[eol + 2 + size + 2..];
    }
}

impl TestApp {
    /// `GET /shops/{shop}/events` with the staff token.
    pub fn shop_stream(&self, shop: &str) -> RequestBuilder {
        self.staff(Method::GET, &format!("/api/v1/shops/{shop}/events"))
    }

    /// `GET /sessions/{session}/events?pin=…`.
    pub fn session_stream(&self, session: &str, pin: &str) -> RequestBuilder {
        let path = format!("/api/v1/sessions/{session}/events?pin={pin}");
        self.request(Method::GET, &path)
    }

    /// The staff stream of `shop`, resuming after `last` when given.
    pub async fn follow_shop(&self, shop: &str, last: Option<i64>) -> SseStream {
        let mut request = self.shop_stream(shop);
        if let Some(last) = last {
            request = request.header("Last-Event-ID", last.to_string());
        }
        SseStream::open(request).await
    }

    /// A staff stream of `shop` from just after `last`, never read.
    pub async fn stalled_shop_stream(&self, shop: &str, last: i64) -> StalledStream {
        let authorization = format!("Bearer {STAFF_TOKEN}");
        let last = last.to_string();
        StalledStream::open(
            &self.base,
            &format!("/api/v1/shops/{shop}/events"),
            &[("authorization", &authorization), ("last-event-id", &last)],
        )
        .await
    }
}
