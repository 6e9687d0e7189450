//! Threads that own SQLite connections and run jobs sent over a queue.
//!
//! SQLite allows one writer at a time. Instead of letting tasks race for the
//! write lock with busy-timeout retries (unfair under load, and a task can
//! starve), every write is a job on one FIFO queue served by one thread that
//! owns the only write connection. Readers are a few threads sharing another
//! queue. Jobs are synchronous closures, so nothing can `.await` while a
//! transaction is open.

use std::panic::{self, AssertUnwindSafe};
use std::thread;

use ordergate_store::{StoreError, StoreResult};
use rusqlite::Connection;
use tokio::sync::oneshot;

use crate::error::SqliteError;

/// Jobs waiting beyond this many make callers wait to enqueue (backpressure).
const QUEUE_DEPTH: usize = 4096;

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

pub(crate) struct Workers {
    jobs: flume::Sender<Job>,
}

impl Workers {
    /// Starts one thread per connection; they stop when `Workers` is dropped.
    pub(crate) fn start(name: &str, connections: Vec<Connection>) -> std::io::Result<Workers> {
        let (jobs, queue) = flume::bounded::<Job>(QUEUE_DEPTH);
        for (i, mut conn) in connections.into_iter().enumerate() {
            let queue = queue.clone();
            thread::Builder::new()
                .name(format!("{name}-{i}"))
                .spawn(move || {
                    for job in queue.iter() {
                        // A panicking job drops its reply (the caller sees an
                        // internal error) but must not take the connection
                        // down with it; an open transaction rolls back on unwind.
                        let _ = panic::catch_unwind(AssertUnwindSafe(|| job(&mut conn)));
                    }
                })?;
        }
        Ok(Workers { jobs })
    }

    pub(crate) async fn run<R, F>(&self, f: F) -> StoreResult<R>
    where
        F: FnOnce(&mut Connection) -> Result<R, SqliteError> + Send + 'static,
        R: Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move |conn| {
            let _ = reply.send(f(conn));
        });
        self.jobs.send_async(job).await.map_err(|_| {
            StoreError::Unavailable("the SQLite worker threads have stopped".into())
        })?;
        match answer.await {
            Ok(result) => result.map_err(Into::into),
            Err(_) => Err(StoreError::Internal("a SQLite job panicked".into())),
        }
    }
}
