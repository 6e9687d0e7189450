//! Where "now" comes from. The server asks its [`Clock`] and passes the
//! answer down, so every rule that depends on time (cooldowns, locks,
//! expiries, 86 marks that lapse) can be tested by moving a clock instead
//! of waiting for one.

use std::sync::atomic::{AtomicI64, Ordering};

use crate::Timestamp;

pub trait Clock: Send + Sync + 'static {
    /// The current time, at the millisecond precision the stores keep.
    fn now(&self) -> Timestamp;
}

/// The system's clock: what a server runs on.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        crate::now()
    }
}

/// The system's clock, moved forward by however much a test skipped. Time
/// still passes between requests (so records keep their order), and a test
/// that needs a window to pass skips it instead of sleeping through it.
#[derive(Debug, Default)]
pub struct SkippingClock {
    skipped_ms: AtomicI64,
}

impl SkippingClock {
    pub fn skip(&self, by: chrono::Duration) {
        self.skipped_ms
            .fetch_add(by.num_milliseconds(), Ordering::Relaxed);
    }
}

impl Clock for SkippingClock {
    fn now(&self) -> Timestamp {
        crate::now() + chrono::Duration::milliseconds(self.skipped_ms.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skipping_clock_runs_ahead_by_what_was_skipped() {
        let clock = SkippingClock::default();
        let before = SystemClock.now();
        clock.skip(chrono::Duration::minutes(5));
        let ahead = clock.now() - before;
        assert!(ahead >= chrono::Duration::minutes(5), "{ahead}");
        assert!(ahead < chrono::Duration::minutes(6), "{ahead}");
    }
}
