//! A request served in its turn: the node's backend wrapped, for one request, in a
//! [`Backend`] that holds the request's first store call until its turn comes
//! ([`Turns::wait`]) and passes the turn on once its write has committed.
//!
//! The runner knows nothing of turns: [`serve_in_turn`] hands it the wrapper as the
//! backend of one call ([`Instance::serve_over`]). Everything the core does before its
//! first store call (parsing, validating and rendering a whole ingest batch) runs at
//! once, concurrently with other instances; the rest runs in the request's turn, which
//! ends when its write commits (a later store call fails) or, for a request that wrote
//! nothing, when it returns, failed unless the response is a success.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ledger_node_core::model::error::StoreError;
use ledger_node_core::storage::store::{Entry, Scan, WriteError};

use super::turns::Turns;
use crate::backend::{Backend, OpRef};
use crate::bodies::BodyCache;
use crate::host::{Instance, Request, Response};

/// Serves `request` with `instance` as ticket `ticket` of `turns` (see the module docs).
pub fn serve_in_turn(
    instance: &mut Instance,
    request: &Request,
    turns: &Arc<Turns>,
    ticket: u64,
) -> anyhow::Result<Response> {
    let in_turn = Arc::new(InTurn::new(Arc::clone(instance.backend()), Arc::clone(turns), ticket));
    let response = instance.serve_over(request, Arc::clone(&in_turn) as Arc<dyn Backend>);
    if !matches!(*in_turn.turn(), Turn::Passed) {
        turns.finish(ticket, response.as_ref().is_ok_and(|r| (200..300).contains(&r.status)));
    }
    response
}

/// Where a request stands in its turn order.
#[derive(Debug)]
enum Turn {
    /// Holding its ticket, not yet waited for.
    Pending,
    /// Its turn came: the store is the request's until its write commits.
    Held,
    /// Its write committed and the turn was passed on: the store is no longer its own.
    Passed,
    /// Its turn was refused: every store call fails.
    Refused(&'static str),
}

/// Why a store call after the request's committed write fails.
const PASSED: &str = "this request's turn at the store ended when its write committed";

/// The node's backend as one request in a turn order sees it.
#[derive(Debug)]
struct InTurn {
    backend: Arc<dyn Backend>,
    turns: Arc<Turns>,
    ticket: u64,
    /// Locked only by the one instance serving the request, whose store calls come one
    /// at a time.
    turn: Mutex<Turn>,
}

impl InTurn {
    /// `backend` as ticket `ticket` of `turns` sees it, before its turn.
    fn new(backend: Arc<dyn Backend>, turns: Arc<Turns>, ticket: u64) -> Self {
        InTurn { backend, turns, ticket, turn: Mutex::new(Turn::Pending) }
    }

    fn turn(&self) -> MutexGuard<'_, Turn> {
        self.turn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for the request's turn, if it has not waited yet.
    fn take_turn(&self) -> Result<(), StoreError> {
        let mut turn = self.turn();
        if matches!(*turn, Turn::Pending) {
            *turn = match self.turns.wait(self.ticket) {
                Ok(()) => Turn::Held,
                Err(why) => Turn::Refused(why),
            };
        }
        match *turn {
            Turn::Refused(why) => Err(StoreError::new(why)),
            Turn::Passed => Err(StoreError::new(PASSED)),
            Turn::Pending | Turn::Held => Ok(()),
        }
    }

    /// After a committed write: the turn passes on at once, so the next request starts
    /// on the store while this one is still answering (an ingest batch writes once, at
    /// its end).
    fn pass_turn(&self) {
        let mut turn = self.turn();
        if matches!(*turn, Turn::Held) {
            self.turns.finish(self.ticket, true);
            *turn = Turn::Passed;
        }
    }
}

impl Backend for InTurn {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.take_turn()?;
        self.backend.get(key)
    }

    fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.take_turn()?;
        self.backend.get_many(keys)
    }

    fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        self.take_turn()?;
        self.backend.scan(scan)
    }

    fn write(&self, ops: &[OpRef<'_>]) -> Result<(), WriteError> {
        self.take_turn()?;
        self.backend.write(ops)?;
        self.pass_turn();
        Ok(())
    }

    fn sync(&self) -> Result<(), StoreError> {
        self.backend.sync()
    }

    /// The node's: remembering and recalling wait for no turn, as they read and write
    /// no stored data.
    fn bodies(&self) -> &BodyCache {
        self.backend.bodies()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::MemoryBackend;
    use crate::ingest::turns::REFUSED;

    const PUT: OpRef<'static> = OpRef::Put { key: b"k", value: b"v" };

    #[test]
    fn a_committed_write_passes_the_turn_on_and_ends_the_requests_own() {
        let (backend, turns): (Arc<dyn Backend>, _) = (Arc::new(MemoryBackend::new()), Arc::new(Turns::new()));
        let first = InTurn::new(Arc::clone(&backend), Arc::clone(&turns), 0);
        let second = InTurn::new(Arc::clone(&backend), Arc::clone(&turns), 1);
        assert_eq!(first.get(b"k").expect("its turn"), None);
        first.write(&[PUT]).expect("the write");
        assert_eq!(second.get(b"k").expect("its turn, passed on by the write"), Some(b"v".to_vec()));
        assert_eq!(first.get(b"k").expect_err("a call after its write").to_string(), PASSED);
    }

    #[test]
    fn a_request_after_a_failed_one_applies_nothing() {
        let (backend, turns): (Arc<dyn Backend>, _) = (Arc::new(MemoryBackend::new()), Arc::new(Turns::new()));
        turns.finish(0, false);
        let refused = InTurn::new(Arc::clone(&backend), Arc::clone(&turns), 1);
        assert!(matches!(refused.write(&[PUT]), Err(WriteError::Store(e)) if e.to_string() == REFUSED));
        assert_eq!(backend.get(b"k").expect("a read"), None);
    }
}
