//! Checkpoints that do not run inside a guest's commit.
//!
//! SQLite's automatic checkpoint runs on the connection that committed,
//! right after its commit, once the WAL has passed 1 000 pages: the writer
//! thread then copies those pages into the database file and fsyncs it
//! before it can begin the next group, and every order queued meanwhile
//! waits. Here a WAL hook takes the automatic checkpoint's place and only
//! notes how many pages the WAL holds; past [`BACKGROUND_PAGES`] a thread
//! of its own, on a connection of its own, runs a `PASSIVE` checkpoint,
//! which copies committed pages while the writer goes on appending.
//!
//! The WAL starts again from its beginning only at a write that finds every
//! page already copied, and under a steady stream of groups the background
//! checkpoint never quite catches up. So once the WAL holds
//! [`RESTART_PAGES`] and all but [`FINISH_PAGES`] of them are copied, the
//! writer copies the rest between two groups: a stall as long as SQLite's
//! own (the fsync of the database file is most of it), but an eighth as
//! often, so that fewer than one order in a hundred waits behind one. Past
//! [`WRITER_PAGES`] it copies whatever is left, so the file stays bounded.

use std::cell::Cell;
use std::ffi::c_int;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;

use rusqlite::Connection;
use rusqlite::hooks::Wal;

/// Pages not yet copied that wake the background checkpoint (about 1 MiB
/// of 4 KiB pages). The checkpoint's fsync of the database file makes the
/// writer's WAL fsyncs wait for the disk: at SQLite's own threshold of
/// 1 000 pages, commits during one took 3-6 ms instead of ~0.3, and runs of
/// them put new orders' p99 at half the peak rate at 6-20 ms; a quarter of
/// it, more often, left it at 4.3-6.3 ms in twelve runs of twelve, at the
/// same peak rate (measurements in the commit that set it).
const BACKGROUND_PAGES: c_int = 250;
/// The WAL's size from which the writer starts it again (about 32 MiB):
/// its stall, however short, comes once per this many pages.
const RESTART_PAGES: c_int = 8_000;
/// Few enough pages for the writer to copy between two groups.
const FINISH_PAGES: c_int = 256;
/// About 64 MiB: the most the WAL grows before the writer itself makes room.
const WRITER_PAGES: c_int = 16_000;

thread_local! {
    /// The WAL's size after the last commit on this thread's connection:
    /// SQLite calls the hook on the thread that commits, the writer's.
    static WAL_PAGES: Cell<c_int> = const { Cell::new(0) };
}

fn note_wal_pages(_: &Wal, pages: c_int) -> rusqlite::Result<()> {
    WAL_PAGES.set(pages);
    Ok(())
}

/// The writer's side of the background checkpoints; the thread stops when
/// this is dropped.
pub(crate) struct Checkpoints {
    wake: flume::Sender<()>,
    /// What the last background checkpoint saw: the WAL's size in pages
    /// (high half) and how many of them it had copied (low half).
    last: Arc<AtomicU64>,
}

impl Checkpoints {
    /// Replaces `writer`'s automatic checkpoint, and starts the thread that
    /// checkpoints on `own` (a connection to the same database).
    pub(crate) fn start(writer: &Connection, own: Connection) -> std::io::Result<Checkpoints> {
        // One pending wake-up is enough: a checkpoint copies every page
        // committed before it starts.
        let (wake, woken) = flume::bounded::<()>(1);
        let last = Arc::new(AtomicU64::new(0));
        let noted = Arc::clone(&last);
        thread::Builder::new()
            .name("sqlite-checkpoint".into())
            .spawn(move || {
                while woken.recv().is_ok() {
                    if let Some((wal_pages, copied)) = checkpoint(&own, "background") {
                        noted.store(pack(wal_pages, copied), Ordering::Release);
                    }
                }
            })?;
        writer.wal_hook(Some(note_wal_pages));
        Ok(Checkpoints { wake, last })
    }

    /// Called on the writer thread after each commit, before it takes the
    /// next group.
    pub(crate) fn after_commit(&self, writer: &Connection) {
        let pages = WAL_PAGES.replace(0);
        if pages < BACKGROUND_PAGES {
            return;
        }
        let (seen, copied) = unpack(self.last.load(Ordering::Acquire));
        // A larger WAL than this one was seen before the WAL started again.
        let copied = if seen <= pages { copied } else { 0 };
        let behind = pages - copied;
        if (pages >= RESTART_PAGES && behind <= FINISH_PAGES) || pages >= WRITER_PAGES {
            if checkpoint(writer, "writer").is_some() {
                self.last.store(0, Ordering::Release);
            }
        } else if behind >= BACKGROUND_PAGES || (pages >= RESTART_PAGES && behind > FINISH_PAGES) {
            let _ = self.wake.try_send(());
        }
    }
}

fn pack(wal_pages: c_int, copied: c_int) -> u64 {
    (u64::from(wal_pages.max(0).cast_unsigned()) << 32) | u64::from(copied.max(0).cast_unsigned())
}

fn unpack(packed: u64) -> (c_int, c_int) {
    let high = u32::try_from(packed >> 32).unwrap_or_default();
    let low = u32::try_from(packed & u64::from(u32::MAX)).unwrap_or_default();
    (high.cast_signed(), low.cast_signed())
}

/// A `PASSIVE` checkpoint: the WAL's size in pages and how many of them are
/// copied, or `None` when it failed.
fn checkpoint(conn: &Connection, by: &'static str) -> Option<(c_int, c_int)> {
    let outcome = conn.query_row("pragma wal_checkpoint(passive)", [], |row| {
        Ok((row.get::<_, c_int>(1)?, row.get::<_, c_int>(2)?))
    });
    match outcome {
        Ok((wal_pages, copied)) => {
            tracing::debug!(by, wal_pages, copied, "checkpoint");
            Some((wal_pages, copied))
        }
        // Another process's checkpoint (an operator's backup) may hold the
        // lock: a later commit asks again.
        Err(e) => {
            tracing::warn!(by, error = %e, "checkpoint failed");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    use super::*;

    const PAGE: u64 = 4096;

    fn open(path: &Path) -> Connection {
        let conn = Connection::open(path).unwrap();
        conn.pragma_update(None, "journal_mode", "wal").unwrap();
        conn
    }

    fn wal_bytes(path: &Path) -> u64 {
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        std::fs::metadata(wal).map_or(0, |meta| meta.len())
    }

    /// Commits `pages` fresh pages, as the writer thread would, and calls
    /// `after_commit` after it.
    fn commit_pages(writer: &mut Connection, checkpoints: &Checkpoints, pages: usize) {
        let tx = writer.transaction().unwrap();
        for _ in 0..pages {
            tx.execute("insert into filler (body) values (randomblob(4000))", [])
                .unwrap();
        }
        tx.commit().unwrap();
        checkpoints.after_commit(writer);
    }

    fn database_pages(path: &Path) -> u64 {
        std::fs::metadata(path).unwrap().len() / PAGE
    }

    /// A writer on a fresh database in `dir`, with a table to fill, and its
    /// checkpoints started.
    fn started(dir: &Path) -> (PathBuf, Connection, Checkpoints) {
        let path = dir.join("og.db");
        let writer = open(&path);
        writer
            .execute_batch("create table filler (id integer primary key, body blob)")
            .unwrap();
        let checkpoints = Checkpoints::start(&writer, open(&path)).unwrap();
        (path, writer, checkpoints)
    }

    /// Waits up to 10 s for the database file to hold `pages` pages.
    fn wait_for_database_pages(path: &Path, pages: u64) -> u64 {
        let deadline = Instant::now() + Duration::from_secs(10);
        while database_pages(path) < pages && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        database_pages(path)
    }

    /// Past the background threshold and short of the writer's, only the
    /// background checkpoint can have copied pages into the database file.
    #[test]
    fn the_background_checkpoint_copies_what_the_writer_committed() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut writer, checkpoints) = started(dir.path());
        let written = 2 * u64::from(BACKGROUND_PAGES.cast_unsigned());
        for _ in 0..written / 50 {
            commit_pages(&mut writer, &checkpoints, 50);
        }
        let copied = wait_for_database_pages(&path, written / 2);
        assert!(
            copied >= written / 2,
            "only {copied} of {written} pages reached the database file"
        );
    }

    /// However long the writes go on, the WAL stays within its bound: it
    /// starts again from its beginning.
    #[test]
    fn the_wal_starts_again_within_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut writer, checkpoints) = started(dir.path());
        let bound = (u64::from(WRITER_PAGES.cast_unsigned()) + 100) * PAGE;
        let written = 3 * u64::from(WRITER_PAGES.cast_unsigned());
        for _ in 0..written / 50 {
            commit_pages(&mut writer, &checkpoints, 50);
            let wal = wal_bytes(&path);
            assert!(wal <= bound, "the WAL outgrew its bound: {wal} bytes");
        }
        let copied = wait_for_database_pages(&path, written * 9 / 10);
        assert!(
            copied >= written * 9 / 10,
            "only {copied} of {written} pages reached the database file"
        );
    }

    #[test]
    fn sizes_survive_packing() {
        assert_eq!(unpack(pack(16_000, 15_744)), (16_000, 15_744));
        assert_eq!(unpack(pack(0, 0)), (0, 0));
    }
}
