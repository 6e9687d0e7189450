//! The load generators: a closed loop (N clients, each sending its next
//! request when the previous answer is in) for throughput, and an open loop
//! (requests at fixed times, whatever the answers do) for latency at a given
//! rate.

use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use reqwest::{Client, RequestBuilder, StatusCode};
use tokio::sync::{Semaphore, mpsc};

/// What one measurement produced.
pub struct Figure {
    /// Completed operations per second.
    pub rate: f64,
    /// Latency in microseconds.
    pub latency: Histogram<u64>,
    /// Operations that did not get the expected answer (excluded from `rate`).
    pub errors: u64,
    /// The first unexpected answer, to show.
    pub first_error: Option<String>,
}

impl Figure {
    /// The latency at `quantile`, in milliseconds, if anything was recorded.
    pub fn ms(&self, quantile: f64) -> Option<f64> {
        quantile_ms(&self.latency, quantile)
    }
}

pub fn quantile_ms(histogram: &Histogram<u64>, quantile: f64) -> Option<f64> {
    (!histogram.is_empty()).then(|| histogram.value_at_quantile(quantile) as f64 / 1000.0)
}

pub fn histogram() -> Histogram<u64> {
    // 1 µs to 60 s at 3 significant digits.
    Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid histogram bounds")
}

/// Whole microseconds, at least 1 (the histogram's lowest value).
pub fn micros(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_micros())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// Builds worker `w`'s `n`th request.
pub type MakeRequest = Arc<dyn Fn(&Client, usize, u64) -> RequestBuilder + Send + Sync>;
/// Judges an answer: `Err` describes an unexpected one.
pub type Check = fn(StatusCode, &reqwest::header::HeaderMap, &[u8]) -> Result<(), String>;

/// Sends `request`, reads the answer in full and judges it.
async fn exchange(request: RequestBuilder, check: Check) -> Result<(), String> {
    match request.send().await {
        Ok(response) => {
            let status = response.status();
            let headers = response.headers().clone();
            match response.bytes().await {
                Ok(body) => check(status, &headers, &body),
                Err(e) => Err(format!("reading the body: {e}")),
            }
        }
        Err(e) => Err(format!("sending: {e}")),
    }
}

/// Closed loop: `clients` workers, each with its own connection, each sending
/// its next request when the previous answer has been read in full. Counts
/// the answers that arrive within the measured window.
pub async fn drive(
    clients: usize,
    warmup: Duration,
    duration: Duration,
    make: MakeRequest,
    check: Check,
) -> anyhow::Result<Figure> {
    let measure_from = Instant::now() + warmup;
    let until = measure_from + duration;
    let mut workers = Vec::with_capacity(clients);
    for w in 0..clients {
        let make = Arc::clone(&make);
        let client = Client::builder()
            .pool_max_idle_per_host(1)
            .timeout(Duration::from_secs(30))
            .build()?;
        workers.push(tokio::spawn(async move {
            let mut latency = histogram();
            let (mut done, mut errors, mut first_error) = (0u64, 0u64, None);
            let mut n = 0u64;
            while Instant::now() < until {
                let request = make(&client, w, n);
                n += 1;
                let began = Instant::now();
                let outcome = exchange(request, check).await;
                let ended = Instant::now();
                if began < measure_from || ended > until {
                    continue;
                }
                match outcome {
                    Ok(()) => {
                        latency.saturating_record(micros(ended - began));
                        done += 1;
                    }
                    Err(e) => {
                        errors += 1;
                        first_error.get_or_insert(e);
                    }
                }
            }
            (latency, done, errors, first_error)
        }));
    }
    let mut latency = histogram();
    let (mut done, mut errors, mut first_error) = (0u64, 0u64, None);
    for worker in workers {
        let (h, d, e, first) = worker.await?;
        latency.add(&h)?;
        done += d;
        errors += e;
        if first_error.is_none() {
            first_error = first;
        }
    }
    Ok(Figure {
        rate: done as f64 / duration.as_secs_f64(),
        latency,
        errors,
        first_error,
    })
}

/// Requests the open loop lets be in flight at once; more wait (and the wait
/// counts in their latency).
const MAX_IN_FLIGHT: usize = 1024;

/// What the open loop measured.
pub struct OpenLoop {
    /// Rate of expected answers to requests scheduled in the measured window;
    /// latency from each request's *scheduled* send time to the last byte of
    /// its answer (corrected for coordinated omission).
    pub figure: Figure,
    /// Latency from the actual send instead (what a closed loop would see).
    pub from_send: Histogram<u64>,
    /// How late the generator sent, actual send minus scheduled time.
    pub lag: Histogram<u64>,
    /// Requests scheduled in the measured window.
    pub scheduled: u64,
}

/// Open loop: the `n`th request is due at `start + n / rate`, whether or not
/// earlier ones were answered. Requests share one client, whose pool opens as
/// many connections as are in flight (up to [`MAX_IN_FLIGHT`]). Every request
/// scheduled in the measured window is waited for, however late its answer:
/// dropping slow answers would hide exactly the tail being measured.
pub async fn open_loop(
    rate: f64,
    clients: usize,
    warmup: Duration,
    duration: Duration,
    make: MakeRequest,
    check: Check,
) -> anyhow::Result<OpenLoop> {
    let client = Client::builder()
        .pool_max_idle_per_host(MAX_IN_FLIGHT)
        .timeout(Duration::from_secs(30))
        .build()?;
    let start = Instant::now() + Duration::from_millis(10);
    let measure_from = start + warmup;
    let until = measure_from + duration;

    let mut result = OpenLoop::new();
    let mut done = 0u64;
    let (ticker, mut finished) = start_ticker(client, make, check, rate, clients, start, until);
    // Ends when the ticker and every request it spawned have dropped their senders.
    while let Some(request) = finished.recv().await {
        if result.record(measure_from, request) {
            done += 1;
        }
    }
    ticker
        .join()
        .map_err(|_| anyhow::anyhow!("the open-loop ticker panicked"))?;
    result.figure.rate = done as f64 / duration.as_secs_f64();
    Ok(result)
}

impl OpenLoop {
    fn new() -> OpenLoop {
        OpenLoop {
            figure: Figure {
                rate: 0.0,
                latency: histogram(),
                errors: 0,
                first_error: None,
            },
            from_send: histogram(),
            lag: histogram(),
            scheduled: 0,
        }
    }

    /// Counts a request scheduled in the measured window; true if it got the
    /// expected answer.
    fn record(&mut self, measure_from: Instant, request: Sent) -> bool {
        let Sent {
            scheduled,
            sent,
            ended,
            outcome,
        } = request;
        if scheduled < measure_from {
            return false;
        }
        self.scheduled += 1;
        self.lag.saturating_record(micros(sent - scheduled));
        match outcome {
            Ok(()) => {
                self.figure
                    .latency
                    .saturating_record(micros(ended - scheduled));
                self.from_send.saturating_record(micros(ended - sent));
                true
            }
            Err(e) => {
                self.figure.errors += 1;
                self.figure.first_error.get_or_insert(e);
                false
            }
        }
    }
}

/// Sends the `n`th request at `start + n / rate` until `until`; each one's
/// outcome comes out of the channel.
fn start_ticker(
    client: Client,
    make: MakeRequest,
    check: Check,
    rate: f64,
    clients: usize,
    start: Instant,
    until: Instant,
) -> (std::thread::JoinHandle<()>, mpsc::UnboundedReceiver<Sent>) {
    let permits = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    // Timing comes from an OS thread: tokio's timer ticks in whole
    // milliseconds, which would send most requests up to 1 ms late and count
    // that in their latency; a thread sleeping to the instant is late by
    // tens of microseconds. It only spawns; the runtime sends.
    let (results, finished) = mpsc::unbounded_channel::<Sent>();
    let runtime = tokio::runtime::Handle::current();
    let ticker = std::thread::spawn(move || {
        for n in 0u64.. {
            let scheduled = start + Duration::from_secs_f64(n as f64 / rate);
            if scheduled >= until {
                break;
            }
            let now = Instant::now();
            if scheduled > now {
                std::thread::sleep(scheduled - now);
            }
            let (client, make, permits, results) = (
                client.clone(),
                Arc::clone(&make),
                Arc::clone(&permits),
                results.clone(),
            );
            runtime.spawn(async move {
                let _permit = permits.acquire_owned().await;
                let sent = Instant::now();
                let outcome = exchange(make(&client, n as usize % clients, n), check).await;
                let _ = results.send(Sent {
                    scheduled,
                    sent,
                    ended: Instant::now(),
                    outcome,
                });
            });
        }
    });
    (ticker, finished)
}

struct Sent {
    scheduled: Instant,
    sent: Instant,
    ended: Instant,
    outcome: Result<(), String>,
}
