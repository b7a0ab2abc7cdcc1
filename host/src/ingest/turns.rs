//! Turns: requests served concurrently, each touching the store only in its turn.
//!
//! `ledger-node ingest` serves consecutive batches with several instances at once, so
//! that one batch is parsed, validated and rendered while the one before it is applied.
//! The core does all of a batch's store-free work before its first store call, and the
//! batches must still be applied in input order, once each, and none after one that
//! failed. So the batch with ticket `n` holds its first store call until batch `n - 1`
//! has finished ([`Turns::wait`]), and then has the store to itself until it finishes
//! ([`Turns::finish`]): the store the batch sees (`ingest/in_turn.rs`) finishes its
//! turn as soon as its write commits (an ingest batch writes once, at its end), so the
//! next batch applies while this one is still answering. If a batch failed, every
//! later batch finds its turn refused: its first store call fails, and it applies
//! nothing.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// The turn order of one run of concurrently served requests; tickets count from 0.
#[derive(Debug, Default)]
pub struct Turns {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// The ticket whose turn it is.
    current: u64,
    /// Whether a request failed: no later one gets its turn.
    failed: bool,
}

/// Why a request was refused its turn.
pub const REFUSED: &str = "an earlier batch of this run failed, so this one was not applied";

impl Turns {
    /// A turn order starting at ticket 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Waits until it is `ticket`'s turn; an error if an earlier request failed.
    pub fn wait(&self, ticket: u64) -> Result<(), &'static str> {
        let state = self.until_turn(ticket);
        if state.failed { Err(REFUSED) } else { Ok(()) }
    }

    /// Ends `ticket`'s turn (waiting for it first, if the request never touched the
    /// store), passing it on to the next ticket; `succeeded: false` refuses every later
    /// turn.
    pub fn finish(&self, ticket: u64, succeeded: bool) {
        let mut state = self.until_turn(ticket);
        state.failed |= !succeeded;
        state.current = ticket + 1;
        drop(state);
        self.changed.notify_all();
    }

    fn until_turn(&self, ticket: u64) -> MutexGuard<'_, State> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.changed.wait_while(state, |s| s.current < ticket).unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::mpsc;
    use std::thread;
    use std::time::Duration;

    #[test]
    fn a_later_ticket_waits_for_every_earlier_one() {
        let turns = Arc::new(Turns::new());
        let (sender, order) = mpsc::channel();
        let handles: Vec<_> = [2u64, 0, 1]
            .into_iter()
            .map(|ticket| {
                let (turns, sender) = (Arc::clone(&turns), sender.clone());
                thread::spawn(move || {
                    turns.wait(ticket).expect("no failures");
                    sender.send(ticket).expect("the receiver lives");
                    thread::sleep(Duration::from_millis(5));
                    turns.finish(ticket, true);
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().expect("no panics"));
        drop(sender);
        assert_eq!(order.iter().collect::<Vec<_>>(), [0, 1, 2]);
    }

    #[test]
    fn a_failure_refuses_every_later_turn() {
        let turns = Turns::new();
        turns.wait(0).expect("the first turn");
        turns.finish(0, false);
        assert_eq!(turns.wait(1), Err(REFUSED));
        turns.finish(1, true);
        assert_eq!(turns.wait(2), Err(REFUSED), "a later success does not undo the failure");
    }

    #[test]
    fn finishing_without_touching_the_store_still_keeps_the_order() {
        let turns = Arc::new(Turns::new());
        let later = {
            let turns = Arc::clone(&turns);
            thread::spawn(move || {
                turns.finish(1, true);
                turns.wait(2)
            })
        };
        thread::sleep(Duration::from_millis(20));
        assert!(!later.is_finished(), "ticket 1 cannot finish before ticket 0");
        turns.finish(0, true);
        assert_eq!(later.join().expect("no panics"), Ok(()));
    }
}
