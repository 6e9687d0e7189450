//! One statement for the same small question asked by many requests at
//! once.
//!
//! A guest's retry costs two tiny statements (the replay check, its audit
//! row), and each paid a round trip, a backend's executor start-up and, for
//! the audit row, a WAL flush of its own: replays ran at 3.2k/s on the
//! bench machine against 55k/s for a bare endpoint. Here one task per kind
//! of question takes every question queued since its last statement and
//! answers them all with one; questions asked meanwhile go in the next. A
//! caller still gets its answer only after its statement ran (and, for a
//! write, committed), so nothing is weaker than one statement each.
//!
//! On Citus a statement over several shops would run on several workers,
//! and fail for all of them while one is down: there each shop's
//! questions get a statement of their own ([`Grouped::start_per_shop`]).

use std::future::Future;

use ordergate_store::{StoreError, StoreResult};
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

/// Questions in one statement at most: past a few hundred, a bigger group
/// would only make its first caller wait longer.
const MOST_PER_GROUP: usize = 256;

/// The queue of one kind of question; its task ends when this is dropped.
pub(crate) struct Grouped<Q, A> {
    queue: mpsc::UnboundedSender<Asked<Q, A>>,
}

struct Asked<Q, A> {
    question: Q,
    answer: oneshot::Sender<Result<A, Failure>>,
}

/// Why a group's statement failed, told to each of its callers.
#[derive(Clone)]
struct Failure {
    unavailable: bool,
    message: String,
}

impl<Q: Send + 'static, A: Send + 'static> Grouped<Q, A> {
    /// Starts the task that answers each group with `answer_all`, which
    /// returns one answer per question, in the questions' order. When
    /// `per_shop`, a group's questions are answered a shop at a time
    /// (`shop_of` tells a question's), each shop's in their order.
    pub(crate) fn start_per_shop<F, Fut>(
        per_shop: bool,
        shop_of: fn(&Q) -> Uuid,
        answer_all: F,
    ) -> Grouped<Q, A>
    where
        F: Fn(Vec<Q>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = StoreResult<Vec<A>>> + Send + 'static,
    {
        let (queue, asked) = mpsc::unbounded_channel();
        let split = per_shop.then_some(shop_of);
        tokio::spawn(answer_groups(asked, split, answer_all));
        Grouped { queue }
    }

    /// Asks `question` in the next group and waits for its answer.
    pub(crate) async fn ask(&self, question: Q) -> StoreResult<A> {
        let (answer, answered) = oneshot::channel();
        let stopped = || StoreError::Unavailable("the store is shutting down".into());
        self.queue
            .send(Asked { question, answer })
            .map_err(|_| stopped())?;
        match answered.await.map_err(|_| stopped())? {
            Ok(answer) => Ok(answer),
            Err(Failure {
                unavailable: true,
                message,
            }) => Err(StoreError::Unavailable(message.into())),
            Err(Failure { message, .. }) => Err(StoreError::Internal(message.into())),
        }
    }
}

/// One group at a time: in alternating bench runs, two statements of a
/// kind at once gave replays nothing clear (6.2k/s against 6.5k/s, 6.2k/s
/// against 7.3k/s) and cost one shop's new orders 10-15 %.
async fn answer_groups<Q, A, F, Fut>(
    mut asked: mpsc::UnboundedReceiver<Asked<Q, A>>,
    split: Option<fn(&Q) -> Uuid>,
    answer_all: F,
) where
    F: Fn(Vec<Q>) -> Fut,
    Fut: Future<Output = StoreResult<Vec<A>>>,
{
    let mut group = Vec::with_capacity(MOST_PER_GROUP);
    while asked.recv_many(&mut group, MOST_PER_GROUP).await > 0 {
        let Some(shop_of) = split else {
            answer_group(group.drain(..), &answer_all).await;
            continue;
        };
        while let Some(first) = group.first() {
            let shop_id = shop_of(&first.question);
            let (this_shop, others) = group
                .drain(..)
                .partition(|asked| shop_of(&asked.question) == shop_id);
            group = others;
            answer_group(this_shop, &answer_all).await;
        }
    }
}

/// Answers one statement's questions, and tells each caller.
async fn answer_group<Q, A, F, Fut>(group: impl IntoIterator<Item = Asked<Q, A>>, answer_all: &F)
where
    F: Fn(Vec<Q>) -> Fut,
    Fut: Future<Output = StoreResult<Vec<A>>>,
{
    let (questions, waiting): (Vec<Q>, Vec<_>) = group
        .into_iter()
        .map(|asked| (asked.question, asked.answer))
        .unzip();
    let answering = answer_all(questions);
    // A caller that stopped waiting has nothing to be told.
    match answering.await {
        Ok(answers) => {
            debug_assert_eq!(answers.len(), waiting.len(), "one answer per question");
            for (waiting, answer) in waiting.into_iter().zip(answers) {
                let _ = waiting.send(Ok(answer));
            }
        }
        Err(e) => {
            let failure = match e {
                StoreError::Unavailable(why) => Failure {
                    unavailable: true,
                    message: why.to_string(),
                },
                other => Failure {
                    unavailable: false,
                    message: other.to_string(),
                },
            };
            for waiting in waiting {
                let _ = waiting.send(Err(failure.clone()));
            }
        }
    }
}
