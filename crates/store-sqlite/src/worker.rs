//! Threads that own SQLite connections and run jobs sent over a queue.
//!
//! SQLite allows one writer at a time. Instead of letting tasks race for the
//! write lock with busy-timeout retries (unfair under load, and a task can
//! starve), every write is a job on one FIFO queue served by one thread that
//! owns the only write connection. Jobs are synchronous closures, so nothing
//! can `.await` while a transaction is open.
//!
//! The writer commits in groups: it takes every job already waiting (up to
//! [`MAX_GROUP`]), runs each in its own savepoint inside one `BEGIN
//! IMMEDIATE` transaction, commits once, and only then answers them. A job
//! that fails rolls back its savepoint alone; a failed commit fails them all,
//! and none was acknowledged. Under load this turns one fsync per write into
//! one fsync per group, with the same durability for every answer. A group
//! of writes nobody waits for (audit rows) lingers briefly for company; see
//! [`linger`].
//!
//! Reads run on the caller's own thread, on a pooled connection (see
//! [`Readers`]).

use std::panic::{self, AssertUnwindSafe};
use std::thread;
use std::time::{Duration, Instant};

use std::sync::{Arc, Mutex, RwLock};

use ordergate_store::{ChangeListener, StoreError, StoreResult};
use rusqlite::{Connection, Transaction, TransactionBehavior};
use tokio::sync::oneshot;

use crate::checkpoint::Checkpoints;
use crate::error::{SqliteError, classify};
use crate::events;

/// Jobs waiting beyond this many make callers wait to enqueue (backpressure).
const QUEUE_DEPTH: usize = 4096;
/// Most writes one commit carries: enough to amortise the fsync, few enough
/// that the first write of a group is not kept waiting long for the last.
pub(crate) const MAX_GROUP: usize = 128;
/// Longest a write nobody waits for is held back to share a commit. Such
/// writes are audit rows of replays and refusals: a crash may lose this
/// much of them, never an order (an order's row commits with it). 25 ms
/// rather than 5 ms: replays went from 0.50x to 0.54x of the bare endpoint,
/// each batch's commit (WAL frames, fsync) shared by five times the rows.
const LINGER: Duration = Duration::from_millis(25);

/// Tells a job's caller its outcome once the group's commit is known
/// (`Some` carries the commit's failure).
type Answer = Box<dyn FnOnce(Option<&rusqlite::Error>) + Send>;

/// A write job: runs inside a savepoint, then hears how the commit went.
trait WriteJob: Send {
    fn run(self: Box<Self>, conn: &Connection) -> Answer;
    fn abandon(self: Box<Self>, error: &rusqlite::Error);
    /// Whether a caller is waiting for this job's commit.
    fn awaited(&self) -> bool;
}

struct Job<F, R> {
    work: F,
    reply: oneshot::Sender<StoreResult<R>>,
}

impl<F, R> WriteJob for Job<F, R>
where
    F: FnOnce(&Connection) -> Result<R, SqliteError> + Send + 'static,
    R: Send + 'static,
{
    fn run(self: Box<Self>, conn: &Connection) -> Answer {
        let Job { work, reply } = *self;
        let outcome = in_savepoint(conn, work);
        Box::new(move |commit_error| {
            let result = match (outcome, commit_error) {
                // Nothing of a failed job was to be committed: its own error stands.
                (Err(e), _) => Err(StoreError::from(e)),
                (Ok(value), None) => Ok(value),
                (Ok(_), Some(e)) => Err(classify(e)),
            };
            let _ = reply.send(result);
        })
    }

    fn abandon(self: Box<Self>, error: &rusqlite::Error) {
        let _ = self.reply.send(Err(classify(error)));
    }

    fn awaited(&self) -> bool {
        !self.reply.is_closed()
    }
}

/// Runs `work` in a savepoint: released when it succeeds, rolled back when
/// it fails or panics.
fn in_savepoint<R>(
    conn: &Connection,
    work: impl FnOnce(&Connection) -> Result<R, SqliteError>,
) -> Result<R, SqliteError> {
    conn.execute_batch("savepoint job")?;
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| work(conn)));
    match outcome {
        Ok(Ok(value)) => {
            conn.execute_batch("release job")?;
            Ok(value)
        }
        Ok(Err(e)) => {
            roll_back_savepoint(conn)?;
            Err(e)
        }
        Err(_) => {
            roll_back_savepoint(conn)?;
            Err(SqliteError::Corrupt("a write job panicked".into()))
        }
    }
}

fn roll_back_savepoint(conn: &Connection) -> rusqlite::Result<()> {
    if transaction_lost(conn) {
        // The savepoint went with the transaction; the job's own error says why.
        return Ok(());
    }
    conn.execute_batch("rollback to job; release job")
}

/// After some failures (an I/O error, a full disk) SQLite rolls the whole
/// transaction back by itself: every savepoint of the group is gone, and a
/// further `SAVEPOINT` would start a transaction of its own.
fn transaction_lost(conn: &Connection) -> bool {
    conn.is_autocommit()
}

fn lost_transaction_error() -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_IOERR),
        Some("SQLite rolled the write transaction back after a failure".into()),
    )
}

/// A handle on the writer thread; it stops once every handle is dropped.
#[derive(Clone)]
pub(crate) struct Writer {
    jobs: flume::Sender<Box<dyn WriteJob>>,
    listener: Arc<RwLock<Option<ChangeListener>>>,
}

impl Writer {
    /// Starts the writer thread, and the checkpoints' on `checkpointer`.
    pub(crate) fn start(mut conn: Connection, checkpointer: Connection) -> std::io::Result<Writer> {
        let checkpoints = Checkpoints::start(&conn, checkpointer)?;
        let (jobs, queue) = flume::bounded::<Box<dyn WriteJob>>(QUEUE_DEPTH);
        let listener: Arc<RwLock<Option<ChangeListener>>> = Arc::default();
        let announce_to = Arc::clone(&listener);
        thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || {
                while let Ok(first) = queue.recv() {
                    let mut group = vec![first];
                    group.extend(queue.try_iter().take(MAX_GROUP - 1));
                    if !group.iter().any(|job| job.awaited()) {
                        linger(&queue, &mut group);
                    }
                    commit_group(&mut conn, group, &announce_to);
                    checkpoints.after_commit(&conn);
                }
            })?;
        Ok(Writer { jobs, listener })
    }

    pub(crate) fn set_listener(&self, listener: ChangeListener) {
        let mut slot = self.listener.write().unwrap_or_else(|e| e.into_inner());
        *slot = Some(listener);
    }

    /// Queues `work` for the next group commit without waiting for it: it
    /// runs after every job queued before it.
    pub(crate) async fn submit<F>(&self, work: F) -> StoreResult<()>
    where
        F: FnOnce(&Connection) -> Result<(), SqliteError> + Send + 'static,
    {
        let (reply, _) = oneshot::channel();
        self.jobs
            .send_async(Box::new(Job { work, reply }))
            .await
            .map_err(|_| stopped())
    }

    /// Runs `work` in the next group commit; answers once it is durable.
    pub(crate) async fn run<R, F>(&self, work: F) -> StoreResult<R>
    where
        F: FnOnce(&Connection) -> Result<R, SqliteError> + Send + 'static,
        R: Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send_async(Box::new(Job { work, reply }))
            .await
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

/// Lets a group that nobody waits for (audit rows of replays, say) gather
/// more jobs for up to [`LINGER`], and stops as soon as a job someone waits
/// for arrives. Every commit empties every reader's page cache and costs an
/// fsync: under a stream of replays, committing each audit row as it came
/// cost more than the replays' own reads.
fn linger(queue: &flume::Receiver<Box<dyn WriteJob>>, group: &mut Vec<Box<dyn WriteJob>>) {
    let deadline = Instant::now() + LINGER;
    while group.len() < MAX_GROUP {
        let Ok(job) = queue.recv_deadline(deadline) else {
            return;
        };
        let awaited = job.awaited();
        group.push(job);
        if awaited {
            return;
        }
    }
}

fn commit_group(
    conn: &mut Connection,
    group: Vec<Box<dyn WriteJob>>,
    listener: &RwLock<Option<ChangeListener>>,
) {
    let tx = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(tx) => tx,
        Err(e) => {
            tracing::warn!(error = %e, "cannot begin a write transaction");
            group.into_iter().for_each(|job| job.abandon(&e));
            return;
        }
    };
    let mut answers = Vec::with_capacity(group.len());
    let mut waiting = group.into_iter();
    for job in waiting.by_ref() {
        answers.push(job.run(&tx));
        if transaction_lost(&tx) {
            let e = lost_transaction_error();
            tracing::warn!(error = %e, "group commit failed");
            // Nothing was committed: what the jobs noted must not be announced.
            drop(events::take_noted());
            waiting.for_each(|job| job.abandon(&e));
            answers.into_iter().for_each(|answer| answer(Some(&e)));
            return;
        }
    }
    let changes = events::take_noted();
    let committed = tx.commit();
    match committed {
        Ok(()) => {
            // Announced before anyone is answered: a client that got its
            // 201 finds caches already told.
            if let Some(listener) = listener.read().unwrap_or_else(|e| e.into_inner()).as_ref() {
                changes.into_iter().for_each(|change| listener(change));
            }
            answers.into_iter().for_each(|answer| answer(None));
        }
        Err(e) => {
            tracing::warn!(error = %e, "group commit failed");
            answers.into_iter().for_each(|answer| answer(Some(&e)));
        }
    }
}

/// Opens one more read connection when every idle one is in use.
pub(crate) type Opener = Box<dyn Fn() -> rusqlite::Result<Connection> + Send + Sync>;

/// Read connections, used on the caller's own thread. A read here takes
/// tens of microseconds: less than handing it to another thread and waking
/// the caller again would cost. There are as many connections as reads ever
/// ran at once (at most one per runtime worker, in practice).
pub(crate) struct Readers {
    idle: Mutex<Vec<Connection>>,
    open: Opener,
}

impl Readers {
    pub(crate) fn new(connections: Vec<Connection>, open: Opener) -> Readers {
        Readers {
            idle: Mutex::new(connections),
            open,
        }
    }

    /// Runs `work` in a read transaction: one consistent snapshot.
    pub(crate) async fn run<R, F>(&self, work: F) -> StoreResult<R>
    where
        F: FnOnce(&Transaction) -> Result<R, SqliteError> + Send + 'static,
        R: Send + 'static,
    {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut conn = match idle {
            Some(conn) => conn,
            None => (self.open)().map_err(SqliteError::from)?,
        };
        // A panicking read must not lose the connection; its transaction
        // ends on unwind.
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
            work(&tx)
        }));
        self.idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(conn);
        match result {
            Ok(result) => result.map_err(StoreError::from),
            Err(_) => Err(StoreError::Internal("a SQLite read panicked".into())),
        }
    }
}

fn stopped() -> StoreError {
    StoreError::Unavailable("the SQLite worker threads have stopped".into())
}
