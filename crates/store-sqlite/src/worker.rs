//! Threads that own SQLite connections and run jobs sent over a queue.
//!
//! SQLite allows one writer at a time. Instead of letting tasks race for the
//! write lock with busy-timeout retries (unfair under load, and a task can
//! starve), every write is a job on one FIFO queue served by one thread that
//! owns the only write connection. Jobs are synchronous closures, so nothing
//! can `.await` while a transaction is open.
//!
//! The writer commits in groups: it takes every job already waiting (up to
//! [`MAX_GROUP`]), runs them inside one `BEGIN IMMEDIATE` transaction,
//! commits once, and only then answers them. A job that fails leaves
//! nothing of itself in the transaction; a failed commit fails them all,
//! and none was acknowledged. Under load this turns one fsync per write into
//! one fsync per group, with the same durability for every answer. A group
//! of writes nobody waits for (audit rows) lingers briefly for company; see
//! [`linger`].
//!
//! A job runs in a savepoint of its own, rolled back when it fails, unless
//! it can run again: orders, the bulk of a busy group, run one after
//! another without, and only if one of them fails after writing are they
//! rolled back and each run again in its own (see [`run_group`]).
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

/// A write job: runs, then hears how the commit went.
trait WriteJob: Send {
    /// Whether running it again, after its writes were rolled back, does
    /// what it did the first time: such jobs run together, without
    /// savepoints of their own (see [`run_group`]).
    fn repeatable(&self) -> bool;
    /// Runs the job in a savepoint of its own: whatever becomes of it, a
    /// failure leaves nothing of it in the transaction.
    fn run_alone(&mut self, conn: &Connection);
    /// Runs the job with no savepoint of its own; `false` when it failed
    /// after writing, its writes still in the transaction.
    fn run_bare(&mut self, conn: &Connection) -> bool;
    /// Tells the caller the job's outcome, once the commit is known
    /// (`Some` carries its failure, or why the group never committed).
    fn answer(self: Box<Self>, commit_error: Option<&rusqlite::Error>);
    /// Whether a caller is waiting for this job's commit.
    fn awaited(&self) -> bool;
}

/// What a job does: once, or as often as it is asked.
trait Work<R>: Send {
    const REPEATABLE: bool;
    fn call(&mut self, conn: &Connection) -> Result<R, SqliteError>;
}

struct Once<F>(Option<F>);

impl<F, R> Work<R> for Once<F>
where
    F: FnOnce(&Connection) -> Result<R, SqliteError> + Send,
{
    const REPEATABLE: bool = false;

    fn call(&mut self, conn: &Connection) -> Result<R, SqliteError> {
        let work = self
            .0
            .take()
            .ok_or_else(|| SqliteError::Corrupt("a write job ran twice".into()))?;
        work(conn)
    }
}

struct Repeatable<F>(F);

impl<F, R> Work<R> for Repeatable<F>
where
    F: Fn(&Connection) -> Result<R, SqliteError> + Send,
{
    const REPEATABLE: bool = true;

    fn call(&mut self, conn: &Connection) -> Result<R, SqliteError> {
        (self.0)(conn)
    }
}

struct Job<W, R> {
    work: W,
    outcome: Option<Result<R, SqliteError>>,
    reply: oneshot::Sender<StoreResult<R>>,
}

impl<W, R> Job<W, R> {
    fn new(work: W, reply: oneshot::Sender<StoreResult<R>>) -> Box<Job<W, R>> {
        Box::new(Job {
            work,
            outcome: None,
            reply,
        })
    }
}

impl<W, R> WriteJob for Job<W, R>
where
    W: Work<R>,
    R: Send,
{
    fn repeatable(&self) -> bool {
        W::REPEATABLE
    }

    fn run_alone(&mut self, conn: &Connection) {
        let work = &mut self.work;
        self.outcome = Some(in_savepoint(conn, |conn| work.call(conn)));
    }

    fn run_bare(&mut self, conn: &Connection) -> bool {
        let before = conn.total_changes();
        let work = &mut self.work;
        match panic::catch_unwind(AssertUnwindSafe(|| work.call(conn))) {
            Ok(Ok(value)) => {
                self.outcome = Some(Ok(value));
                true
            }
            // Rows a statement changed are counted once it completes, and a
            // statement that fails changes none: no count, nothing to undo.
            Ok(Err(e)) => {
                self.outcome = Some(Err(e));
                conn.total_changes() == before
            }
            Err(_) => false,
        }
    }

    fn answer(self: Box<Self>, commit_error: Option<&rusqlite::Error>) {
        let result = match (self.outcome, commit_error) {
            // Nothing of a failed job was to be committed: its own error stands.
            (Some(Err(e)), _) => Err(StoreError::from(e)),
            (Some(Ok(value)), None) => Ok(value),
            (_, Some(e)) => Err(classify(e)),
            (None, None) => Err(StoreError::Internal("a write job never ran".into())),
        };
        let _ = self.reply.send(result);
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
    pub(crate) fn start(conn: Connection, checkpointer: Connection) -> std::io::Result<Writer> {
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
                    commit_group(&conn, group, &announce_to);
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
            .send_async(Job::new(Once(Some(work)), reply))
            .await
            .map_err(|_| stopped())
    }

    /// Runs `work` in the next group commit; answers once it is durable.
    pub(crate) async fn run<R, F>(&self, work: F) -> StoreResult<R>
    where
        F: FnOnce(&Connection) -> Result<R, SqliteError> + Send + 'static,
        R: Send + 'static,
    {
        self.queue(Once(Some(work))).await
    }

    /// [`Writer::run`] for `work` that does the same when it runs again
    /// after its writes were rolled back (it reads what it decides on in
    /// the transaction, and changes nothing outside it but caches).
    pub(crate) async fn run_repeatable<R, F>(&self, work: F) -> StoreResult<R>
    where
        F: Fn(&Connection) -> Result<R, SqliteError> + Send + 'static,
        R: Send + 'static,
    {
        self.queue(Repeatable(work)).await
    }

    async fn queue<R, W>(&self, work: W) -> StoreResult<R>
    where
        W: Work<R> + 'static,
        R: Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send_async(Job::new(work, reply))
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
    conn: &Connection,
    mut group: Vec<Box<dyn WriteJob>>,
    listener: &RwLock<Option<ChangeListener>>,
) {
    let tx = match run_group(conn, &mut group) {
        Ok(tx) => tx,
        Err(e) => {
            tracing::warn!(error = %e, "group commit failed");
            // Nothing was committed: what the jobs noted must not be announced.
            drop(events::take_noted());
            group.into_iter().for_each(|job| job.answer(Some(&e)));
            return;
        }
    };
    let changes = events::take_noted();
    let committed = tx.commit();
    match committed {
        Ok(()) => {
            // Announced before anyone is answered: a client that got its
            // 201 finds caches already told.
            if let Some(listener) = listener.read().unwrap_or_else(|e| e.into_inner()).as_ref() {
                changes.into_iter().for_each(|change| listener(change));
            }
            group.into_iter().for_each(|job| job.answer(None));
        }
        Err(e) => {
            tracing::warn!(error = %e, "group commit failed");
            group.into_iter().for_each(|job| job.answer(Some(&e)));
        }
    }
}

/// Runs the group's jobs in one write transaction, and returns it open.
///
/// A savepoint keeps a copy of each page written while it is open, and a
/// savepoint per order copied the same pages for every order of a group:
/// with the statements that took journals of their own, a fifth of the
/// writer's time (profiles in the commits that made this). So repeatable
/// jobs (orders) run bare, one after another. Those that open the group
/// need no undo point but the transaction's start: if one fails after
/// writing, the transaction is rolled back and begun again, and each runs
/// again in a savepoint of its own, deciding from the same rows as before.
/// A run of them after other jobs shares one savepoint ([`run_together`]).
fn run_group<'c>(
    conn: &'c Connection,
    group: &mut [Box<dyn WriteJob>],
) -> rusqlite::Result<Transaction<'c>> {
    // Unchecked: the writer thread owns the connection and begins its
    // transactions here alone, one at a time.
    let begin = || Transaction::new_unchecked(conn, TransactionBehavior::Immediate);
    let mut tx = begin()?;
    let mut next = repeatable_run(group);
    if !group[..next].iter_mut().all(|job| job.run_bare(&tx)) {
        if transaction_lost(&tx) {
            return Err(lost_transaction_error());
        }
        tx.rollback()?;
        tx = begin()?;
        run_each_alone(&tx, &mut group[..next])?;
    }
    while next < group.len() {
        match repeatable_run(&group[next..]) {
            0 | 1 => {
                group[next].run_alone(&tx);
                next += 1;
            }
            together => {
                run_together(&tx, &mut group[next..next + together])?;
                next += together;
            }
        }
        if transaction_lost(&tx) {
            return Err(lost_transaction_error());
        }
    }
    Ok(tx)
}

/// How many repeatable jobs `jobs` starts with.
fn repeatable_run(jobs: &[Box<dyn WriteJob>]) -> usize {
    jobs.iter().take_while(|job| job.repeatable()).count()
}

/// Runs repeatable jobs one after another in one savepoint; if one of them
/// fails after writing, the savepoint is rolled back and each runs again in
/// one of its own.
fn run_together(conn: &Connection, jobs: &mut [Box<dyn WriteJob>]) -> rusqlite::Result<()> {
    conn.execute_batch("savepoint together")?;
    if jobs.iter_mut().all(|job| job.run_bare(conn)) {
        return conn.execute_batch("release together");
    }
    if transaction_lost(conn) {
        return Err(lost_transaction_error());
    }
    conn.execute_batch("rollback to together; release together")?;
    run_each_alone(conn, jobs)
}

fn run_each_alone(conn: &Connection, jobs: &mut [Box<dyn WriteJob>]) -> rusqlite::Result<()> {
    for job in jobs {
        job.run_alone(conn);
        if transaction_lost(conn) {
            return Err(lost_transaction_error());
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    use super::*;

    type TestJob = Box<dyn Fn(&Connection) -> Result<i64, SqliteError> + Send>;

    /// A writer on a fresh file with a table `t`, and the file's directory.
    fn writer() -> (Writer, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "journal_mode", "wal").unwrap();
        conn.execute_batch("create table t (x integer primary key)")
            .unwrap();
        let checkpointer = Connection::open(&path).unwrap();
        (Writer::start(conn, checkpointer).unwrap(), dir)
    }

    /// A job that inserts `x`, counted on each run, then fails when `fails`.
    fn insert(
        x: i64,
        runs: &Arc<AtomicUsize>,
        fails: bool,
    ) -> impl Fn(&Connection) -> Result<i64, SqliteError> + Send + 'static {
        let runs = Arc::clone(runs);
        move |conn| {
            runs.fetch_add(1, Ordering::SeqCst);
            conn.execute("insert into t (x) values (?1)", [x])?;
            match fails {
                true => Err(SqliteError::Corrupt("failed after writing".into())),
                false => Ok(x),
            }
        }
    }

    /// Runs `jobs` as one group, after a job that inserts `before` unless it
    /// is `None`: a first job holds the writer until all of them are
    /// queued. Returns each repeatable job's outcome and what `t` holds.
    async fn one_group<F>(
        writer: &Writer,
        before: Option<i64>,
        jobs: Vec<F>,
    ) -> (Vec<StoreResult<i64>>, Vec<i64>)
    where
        F: Fn(&Connection) -> Result<i64, SqliteError> + Send + 'static,
    {
        let (release, held) = mpsc::channel::<()>();
        let (holds, holding_now) = tokio::sync::oneshot::channel::<()>();
        let holder = writer.clone();
        let holding = tokio::spawn(async move {
            holder
                .run(move |_| {
                    holds.send(()).unwrap();
                    held.recv().unwrap();
                    Ok(())
                })
                .await
        });
        holding_now.await.unwrap();
        let once = before.map(|x| {
            let writer = writer.clone();
            tokio::spawn(async move {
                writer
                    .run(move |conn| Ok(conn.execute("insert into t (x) values (?1)", [x])?))
                    .await
            })
        });
        while writer.jobs.len() < usize::from(once.is_some()) {
            tokio::task::yield_now().await;
        }
        // Queued one at a time, so that the group runs them in this order.
        let mut queued = Vec::new();
        for job in jobs {
            let writer_of_job = writer.clone();
            let waiting = writer.jobs.len();
            queued.push(tokio::spawn(async move {
                writer_of_job.run_repeatable(job).await
            }));
            while writer.jobs.len() == waiting {
                tokio::task::yield_now().await;
            }
        }
        release.send(()).unwrap();
        holding.await.unwrap().unwrap();
        if let Some(once) = once {
            once.await.unwrap().unwrap();
        }
        let mut outcomes = Vec::new();
        for job in queued {
            outcomes.push(job.await.unwrap());
        }
        let rows = writer
            .run(|conn| {
                let mut stmt = conn.prepare("select x from t order by x")?;
                let rows = stmt.query_map([], |row| row.get(0))?;
                Ok(rows.collect::<rusqlite::Result<Vec<i64>>>()?)
            })
            .await
            .unwrap();
        (outcomes, rows)
    }

    /// Three repeatable jobs in one group, after a job that inserts
    /// `before` unless it is `None`, the second failing after it wrote:
    /// it alone fails, and the run is undone and each job run again alone.
    /// Returns what `t` holds.
    async fn the_second_of_three_fails_after_writing(before: Option<i64>) -> Vec<i64> {
        let (writer, _dir) = writer();
        let runs: Vec<Arc<AtomicUsize>> = (0..3).map(|_| Arc::default()).collect();
        let jobs = vec![
            insert(1, &runs[0], false),
            insert(2, &runs[1], true),
            insert(3, &runs[2], false),
        ];
        let (outcomes, rows) = one_group(&writer, before, jobs).await;
        assert!(matches!(outcomes[0], Ok(1)));
        assert!(outcomes[1].is_err(), "its own failure stands");
        assert!(matches!(outcomes[2], Ok(3)));
        let ran: Vec<usize> = runs.iter().map(|r| r.load(Ordering::SeqCst)).collect();
        assert_eq!(
            ran,
            [2, 2, 1],
            "the run was rolled back at the failure, then each ran alone"
        );
        rows
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn jobs_opening_a_group_run_bare_and_a_failure_after_writing_is_undone_alone() {
        let rows = the_second_of_three_fails_after_writing(None).await;
        assert_eq!(rows, [1, 3], "nothing of the failed job is committed");
    }

    /// Runs `middle` between two jobs inserting 1 and 3, as one group that
    /// opens the writer's run; checks that both neighbours committed, and
    /// returns `middle`'s outcome, what `t` holds and how often each
    /// neighbour ran.
    async fn between_two_inserts(middle: TestJob) -> (StoreResult<i64>, Vec<i64>, Vec<usize>) {
        let (writer, _dir) = writer();
        let runs: Vec<Arc<AtomicUsize>> = (0..2).map(|_| Arc::default()).collect();
        let first = insert(1, &runs[0], false);
        let last = insert(3, &runs[1], false);
        let jobs: Vec<TestJob> = vec![Box::new(first), middle, Box::new(last)];
        let (mut outcomes, rows) = one_group(&writer, None, jobs).await;
        assert!(matches!(outcomes[0], Ok(1)));
        assert!(matches!(outcomes[2], Ok(3)));
        let ran = runs.iter().map(|r| r.load(Ordering::SeqCst)).collect();
        (outcomes.swap_remove(1), rows, ran)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_repeatable_job_that_fails_before_writing_undoes_nothing() {
        let refusals = Arc::new(AtomicUsize::new(0));
        let refusing = {
            let refusals = Arc::clone(&refusals);
            move |_: &Connection| -> Result<i64, SqliteError> {
                refusals.fetch_add(1, Ordering::SeqCst);
                Err(SqliteError::Corrupt("refused before writing".into()))
            }
        };
        let (outcome, rows, ran) = between_two_inserts(Box::new(refusing)).await;
        assert!(outcome.is_err());
        assert_eq!(rows, [1, 3]);
        let ran = [ran[0], refusals.load(Ordering::SeqCst), ran[1]];
        assert_eq!(ran, [1, 1, 1], "every job ran once, bare");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_repeatable_job_that_panics_after_writing_fails_alone() {
        let panicking = move |conn: &Connection| -> Result<i64, SqliteError> {
            conn.execute("insert into t (x) values (2)", [])?;
            panic!("a bug after writing");
        };
        let (outcome, rows, _) = between_two_inserts(Box::new(panicking)).await;
        assert!(outcome.is_err());
        assert_eq!(rows, [1, 3]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn after_another_job_repeatable_jobs_that_fail_are_undone_to_their_savepoint() {
        let rows = the_second_of_three_fails_after_writing(Some(10)).await;
        assert_eq!(rows, [1, 3, 10], "the job before them kept its row");
    }
}
