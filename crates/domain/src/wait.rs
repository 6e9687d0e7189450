//! The estimated wait a guest sees: how long the kitchen has been taking,
//! from taking an order to its food being ready, over the last hour.

use chrono::Duration;
use serde::Serialize;

use crate::Timestamp;
use crate::order::OrderStatus;

/// When the kitchen took an order and when its food was ready, as its
/// status moves. Recalled back before a step, the step's time goes: the
/// food was not ready after all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KitchenTimes {
    /// The first move to `accepted` or `preparing`; `None` when the kitchen
    /// went straight to ready (the order's placing time stands in).
    pub accepted_at: Option<Timestamp>,
    /// The first move to `ready` or, skipping it, `served`.
    pub ready_at: Option<Timestamp>,
}

impl KitchenTimes {
    /// The times once the order moves to `to` at `now`.
    pub fn after_move(self, to: OrderStatus, now: Timestamp) -> KitchenTimes {
        match to {
            OrderStatus::Placed | OrderStatus::Cancelled => KitchenTimes::default(),
            OrderStatus::Accepted | OrderStatus::Preparing => KitchenTimes {
                accepted_at: self.accepted_at.or(Some(now)),
                ready_at: None,
            },
            OrderStatus::Ready | OrderStatus::Served => KitchenTimes {
                ready_at: self.ready_at.or(Some(now)),
                ..self
            },
        }
    }
}

/// The span the estimate looks back over.
pub const WAIT_WINDOW: Duration = Duration::minutes(60);
/// Fewer orders than this say too little: no estimate.
pub const MIN_WAIT_SAMPLES: usize = 3;

/// Body of `GET /shops/{shopId}/wait`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WaitEstimate {
    /// Minutes from taking an order to its food being ready: the median of
    /// the orders that became ready within the window, rounded up; `null`
    /// with fewer than three of them.
    #[cfg_attr(feature = "openapi", schema(example = 12))]
    pub estimated_minutes: Option<i64>,
    /// How many orders it is made of.
    pub sample_size: usize,
    pub window_minutes: i64,
}

impl WaitEstimate {
    /// The estimate from each recent order's (taken, ready) times. The
    /// median, so one forgotten ticket bumped an hour late does not move it.
    pub fn of(times: &[(Timestamp, Timestamp)]) -> WaitEstimate {
        let mut spans: Vec<Duration> = times
            .iter()
            .map(|(taken, ready)| (*ready - *taken).max(Duration::zero()))
            .collect();
        spans.sort();
        let median = match spans.len() {
            n if n < MIN_WAIT_SAMPLES => None,
            n if n % 2 == 1 => Some(spans[n / 2]),
            n => Some((spans[n / 2 - 1] + spans[n / 2]) / 2),
        };
        WaitEstimate {
            estimated_minutes: median.map(|m| (m.num_seconds() + 59) / 60),
            sample_size: spans.len(),
            window_minutes: WAIT_WINDOW.num_minutes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minute: i64) -> Timestamp {
        "2026-12-01T12:00:00Z".parse::<Timestamp>().unwrap() + Duration::minutes(minute)
    }

    #[test]
    fn taking_and_readying_are_stamped_once_and_a_recall_takes_them_back() {
        use OrderStatus::*;
        let times = KitchenTimes::default().after_move(Accepted, at(1));
        let times = times.after_move(Preparing, at(2));
        assert_eq!(times.accepted_at, Some(at(1)), "taken when first accepted");
        let ready = times.after_move(Ready, at(9)).after_move(Served, at(12));
        assert_eq!(
            ready,
            KitchenTimes {
                accepted_at: Some(at(1)),
                ready_at: Some(at(9))
            }
        );
        assert_eq!(
            ready.after_move(Preparing, at(13)).ready_at,
            None,
            "recalled: not ready after all"
        );
        assert_eq!(ready.after_move(Placed, at(13)), KitchenTimes::default());
        let straight = KitchenTimes::default().after_move(Served, at(5));
        assert_eq!(
            (straight.accepted_at, straight.ready_at),
            (None, Some(at(5)))
        );
        assert_eq!(times.after_move(Cancelled, at(3)), KitchenTimes::default());
    }

    #[test]
    fn the_estimate_is_the_median_rounded_up_and_needs_three_orders() {
        let span = |minutes: i64, seconds: i64| (at(0), at(minutes) + Duration::seconds(seconds));
        assert_eq!(
            WaitEstimate::of(&[span(5, 0), span(9, 0)]),
            WaitEstimate {
                estimated_minutes: None,
                sample_size: 2,
                window_minutes: 60
            }
        );
        let odd = WaitEstimate::of(&[span(58, 0), span(8, 1), span(5, 0)]);
        assert_eq!(odd.estimated_minutes, Some(9), "8 min 1 s is 9 minutes");
        let even = WaitEstimate::of(&[span(4, 0), span(6, 0), span(10, 0), span(50, 0)]);
        assert_eq!(even.estimated_minutes, Some(8));
        let clock_skew = WaitEstimate::of(&[(at(5), at(0)), span(0, 0), span(0, 30)]);
        assert_eq!(clock_skew.estimated_minutes, Some(0));
    }
}
