//! Turns for the requests that read the index: at most `max_queries` at once, the
//! newest waiter served first, none past the wait (the guard answers 503 then).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::defaults::DEFAULT_QUEUE_WAIT_MS;

/// How many index reads run at once and how long a request may wait for
/// its turn (`harvest serve --max-queries`, `--queue-wait-ms`): past that,
/// or with too many waiting, a request is answered 503 with `Retry-After`
/// at once instead of queueing for seconds behind others.
#[derive(Debug, Clone, Copy)]
pub struct AdmissionLimits {
    /// Requests reading the index at once.
    pub max_queries: usize,
    /// Longest wait for a turn.
    pub queue_wait: Duration,
    /// Requests waiting at most (more are refused at once).
    pub max_waiting: usize,
}

impl Default for AdmissionLimits {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        AdmissionLimits {
            max_queries: cores,
            queue_wait: Duration::from_millis(DEFAULT_QUEUE_WAIT_MS),
            max_waiting: 32 * cores,
        }
    }
}

/// The turns of [`AdmissionLimits`]. Waiting requests get a turn newest
/// first: under overload the oldest waiters run out their wait and are
/// refused, while the ones answered waited little. A first-come queue would
/// instead make every answered request wait nearly `queue_wait` as soon as
/// there are more requests than the server can answer in that time.
pub(super) struct Admission {
    limits: AdmissionLimits,
    turns: Arc<Turns>,
}

impl Admission {
    pub(super) fn new(limits: AdmissionLimits) -> Admission {
        Admission {
            limits,
            turns: Arc::new(Turns {
                queue: Mutex::new(TurnQueue {
                    free: limits.max_queries.max(1),
                    waiting: Vec::new(),
                }),
            }),
        }
    }
}

/// Turns not held and the requests waiting for one.
struct Turns {
    queue: Mutex<TurnQueue>,
}

struct TurnQueue {
    free: usize,
    /// Oldest first; a turn goes to the last.
    waiting: Vec<tokio::sync::oneshot::Sender<Turn>>,
}

/// What [`Turns::take`] gives.
enum Taken {
    Now(Turn),
    /// Wait for a turn on this channel.
    Wait(tokio::sync::oneshot::Receiver<Turn>),
    /// Too many are waiting already.
    Refused,
}

impl Turns {
    fn queue(&self) -> std::sync::MutexGuard<'_, TurnQueue> {
        // The queue is consistent between statements: a panic elsewhere
        // while it was locked leaves nothing half-done.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A free turn, else a place among at most `max_waiting` waiters.
    fn take(self: &Arc<Self>, max_waiting: usize) -> Taken {
        let mut q = self.queue();
        if q.free > 0 {
            q.free -= 1;
            return Taken::Now(Turn(Some(self.clone())));
        }
        // Waiters that gave up (timed out, or their client went away).
        q.waiting.retain(|w| !w.is_closed());
        if q.waiting.len() >= max_waiting {
            return Taken::Refused;
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        q.waiting.push(tx);
        Taken::Wait(rx)
    }

    /// A turn given back: to the newest waiter still waiting, else free.
    fn give_back(self: &Arc<Self>) {
        let mut q = self.queue();
        while let Some(waiter) = q.waiting.pop() {
            match waiter.send(Turn(Some(self.clone()))) {
                Ok(()) => return,
                // That waiter is gone: the turn is not its to give back.
                Err(mut turn) => turn.0 = None,
            }
        }
        q.free += 1;
    }
}

/// A turn held; given back when dropped, also when it was sent to a waiter
/// that went away before it took it.
pub(super) struct Turn(Option<Arc<Turns>>);

impl Drop for Turn {
    fn drop(&mut self) {
        if let Some(turns) = self.0.take() {
            turns.give_back();
        }
    }
}

impl Admission {
    /// A turn for a request: at once when one is free, else after waiting at most
    /// `queue_wait` among at most `max_waiting` others; `None` when none came.
    pub(super) async fn turn(&self) -> Option<Turn> {
        match self.turns.take(self.limits.max_waiting) {
            Taken::Now(turn) => Some(turn),
            Taken::Refused => None,
            Taken::Wait(rx) => match tokio::time::timeout(self.limits.queue_wait, rx).await {
                Ok(Ok(turn)) => Some(turn),
                // Past the wait (a turn sent meanwhile is given back as the
                // channel drops).
                _ => None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turns(max_queries: usize) -> Arc<Turns> {
        Admission::new(AdmissionLimits {
            max_queries,
            queue_wait: Duration::from_millis(100),
            max_waiting: 2,
        })
        .turns
    }

    #[test]
    fn the_newest_waiter_gets_the_turn_and_at_most_max_waiting_wait() {
        let turns = turns(1);
        let Taken::Now(first) = turns.take(2) else {
            panic!("one turn free at start")
        };
        let Taken::Wait(mut older) = turns.take(2) else {
            panic!("no turn free: wait")
        };
        let Taken::Wait(mut newer) = turns.take(2) else {
            panic!("no turn free: wait")
        };
        assert!(matches!(turns.take(2), Taken::Refused), "a third waiter");
        drop(first);
        assert!(older.try_recv().is_err(), "the older waiter got the turn");
        let turn = newer.try_recv().expect("the newest waiter's turn");
        drop(turn);
        assert!(older.try_recv().is_ok(), "then the older one's");
    }

    #[test]
    fn a_turn_is_not_lost_to_waiters_that_left() {
        let turns = turns(1);
        let Taken::Now(first) = turns.take(1) else {
            panic!("one turn free at start")
        };
        let Taken::Wait(gone_before) = turns.take(1) else {
            panic!("wait")
        };
        drop(gone_before);
        let Taken::Wait(gone_after) = turns.take(1) else {
            panic!("a waiter that left frees its place")
        };
        // Handed to the waiter, which leaves without taking it.
        drop(first);
        drop(gone_after);
        assert!(matches!(turns.take(1), Taken::Now(_)), "the turn was lost");
    }
}
