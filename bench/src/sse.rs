//! A minimal server-sent-events client over a raw TCP connection: one
//! HTTP/1.1 GET, the chunked body decoded, the events split out. Thousands
//! of these cost a socket and a small buffer each, where thousands of HTTP
//! client instances would cost far more and measure the client instead.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

/// One event of the stream.
pub struct Event {
    pub kind: String,
    pub data: String,
}

/// An open event stream whose response headers said 200.
pub struct Subscriber {
    tcp: TcpStream,
    body: Body,
    /// Decoded body bytes not yet split into events.
    text: Vec<u8>,
}

/// Opens `GET path` on `addr` and reads the response head.
pub async fn connect(addr: SocketAddr, path: &str) -> anyhow::Result<Subscriber> {
    let mut tcp = TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\
         Cache-Control: no-cache\r\n\r\n"
    );
    tcp.write_all(request.as_bytes()).await?;
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    let end = loop {
        let n = tcp.read(&mut buf).await?;
        ensure!(n > 0, "the server closed the stream before answering");
        head.extend_from_slice(&buf[..n]);
        if let Some(end) = find(&head, b"\r\n\r\n") {
            break end;
        }
        ensure!(head.len() < 16 * 1024, "response head too long");
    };
    let text = String::from_utf8_lossy(&head[..end]).to_ascii_lowercase();
    let status = text.lines().next().unwrap_or_default();
    if !status.starts_with("http/1.1 200") {
        bail!(
            "event stream answered {status:?}: {}",
            String::from_utf8_lossy(&head[end + 4..])
        );
    }
    let mut body = Body {
        chunked: text.contains("transfer-encoding: chunked"),
        raw: Vec::new(),
        state: Chunk::Size,
    };
    let mut decoded = Vec::new();
    body.feed(&head[end + 4..], &mut decoded)?;
    Ok(Subscriber {
        tcp,
        body,
        text: decoded,
    })
}

/// Opens `count` streams, `parallel` at a time; stops at the first failure
/// (e.g. out of file descriptors). Returns the streams opened and the
/// failure, if any.
pub async fn connect_many(
    addr: SocketAddr,
    path: &str,
    count: usize,
    parallel: usize,
) -> (Vec<Subscriber>, Option<String>) {
    let mut opened = Vec::with_capacity(count);
    let mut failure = None;
    let mut pending = JoinSet::new();
    let mut started = 0;
    loop {
        while failure.is_none() && started < count && pending.len() < parallel {
            let path = path.to_owned();
            pending.spawn(async move {
                tokio::time::timeout(Duration::from_secs(10), connect(addr, &path))
                    .await
                    .context("connecting took over 10 s")?
            });
            started += 1;
        }
        let Some(done) = pending.join_next().await else {
            break;
        };
        match done {
            Ok(Ok(subscriber)) => opened.push(subscriber),
            Ok(Err(e)) => {
                failure.get_or_insert(format!("stream {}: {e:#}", opened.len() + 1));
            }
            Err(e) => {
                failure.get_or_insert(format!("connecting task: {e}"));
            }
        }
    }
    (opened, failure)
}

impl Subscriber {
    /// Waits for more of the stream and appends the complete events it
    /// brought to `events`. `Ok(false)` when the stream has ended.
    pub async fn read_events(&mut self, events: &mut Vec<Event>) -> anyhow::Result<bool> {
        let mut buf = [0u8; 8 * 1024];
        let n = self.tcp.read(&mut buf).await?;
        if n == 0 {
            return Ok(false);
        }
        self.body.feed(&buf[..n], &mut self.text)?;
        let mut consumed = 0;
        while let Some(end) = find(&self.text[consumed..], b"\n\n") {
            let frame = &self.text[consumed..consumed + end];
            consumed += end + 2;
            let (mut kind, mut data) = (String::from("message"), String::new());
            for line in String::from_utf8_lossy(frame).lines() {
                if let Some(value) = line.strip_prefix("event:") {
                    kind = value.trim_start().to_owned();
                } else if let Some(value) = line.strip_prefix("data:") {
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(value.strip_prefix(' ').unwrap_or(value));
                }
            }
            if !data.is_empty() {
                events.push(Event { kind, data });
            }
        }
        self.text.drain(..consumed);
        Ok(!self.body.ended())
    }
}

/// The response body: chunked transfer coding undone, or as it comes.
struct Body {
    chunked: bool,
    /// Received bytes not decoded yet.
    raw: Vec<u8>,
    state: Chunk,
}

#[derive(Clone, Copy)]
enum Chunk {
    /// Expecting a chunk-size line.
    Size,
    /// This many data bytes of the current chunk still to come.
    Data(usize),
    /// Expecting the CRLF after a chunk's data.
    DataEnd,
    /// The last chunk was read.
    Done,
}

impl Body {
    fn ended(&self) -> bool {
        matches!(self.state, Chunk::Done)
    }

    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) -> anyhow::Result<()> {
        if !self.chunked {
            out.extend_from_slice(input);
            return Ok(());
        }
        self.raw.extend_from_slice(input);
        let mut at = 0;
        loop {
            let rest = &self.raw[at..];
            match self.state {
                Chunk::Size => {
                    let Some(end) = find(rest, b"\r\n") else {
                        break;
                    };
                    let line = std::str::from_utf8(&rest[..end])?;
                    let size = line.split(';').next().unwrap_or_default().trim();
                    let size = usize::from_str_radix(size, 16)
                        .with_context(|| format!("chunk size {line:?}"))?;
                    at += end + 2;
                    self.state = if size == 0 {
                        Chunk::Done
                    } else {
                        Chunk::Data(size)
                    };
                }
                Chunk::Data(left) => {
                    let take = left.min(rest.len());
                    out.extend_from_slice(&rest[..take]);
                    at += take;
                    if take < left {
                        self.state = Chunk::Data(left - take);
                        break;
                    }
                    self.state = Chunk::DataEnd;
                }
                Chunk::DataEnd => {
                    if rest.len() < 2 {
                        break;
                    }
                    ensure!(rest.starts_with(b"\r\n"), "chunk not followed by CRLF");
                    at += 2;
                    self.state = Chunk::Size;
                }
                Chunk::Done => break,
            }
        }
        self.raw.drain(..at);
        Ok(())
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
