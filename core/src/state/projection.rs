//! Derived state: what the node keeps beside the ledger so that its endpoints answer
//! from a key or a short scan.
//!
//! The ledger ([`crate::state::ledger`]) is the base: the updates as stored and the active
//! contract set. Everything else ingest keeps is a [`Projection`] of it, with one shape:
//!
//! - [`Projection::keys_read`]: the store keys it reads for an update, which ingest
//!   fetches with the rest of the batch's reads in one round trip before it applies
//!   anything;
//! - [`Projection::apply`]: what it stages for an update the ledger has just stored as
//!   new, given the contracts the update archived ([`Archived`]).
//!
//! A projection reads the ledger's state and its own keys, and writes only its own
//! keys: no projection reads what another writes, so their order does not change what
//! they write. Ingest names its projections once, in the order it applies them
//! ([`Projection::then`]), and both the prefetch and the apply step go through that
//! one list ([`crate::ingest`]).

use alloc::vec::Vec;

use crate::model::error::Error;
use crate::model::update::Update;
use crate::state::ledger::Archived;
use crate::storage::stage::Stage;
use crate::storage::store::Store;

/// State derived from the ledger at ingest, one update at a time.
#[expect(async_fn_in_trait, reason = "hosts are single-threaded; futures need not be Send")]
pub trait Projection {
    /// The store keys [`Projection::apply`] reads for `update`, to prefetch with the
    /// batch.
    fn keys_read<'a>(&'a self, update: &'a Update) -> impl Iterator<Item = Vec<u8>> + 'a;

    /// Stages what `update` changes in this state. The ledger has just stored `update`
    /// as new in `stage`, and `archived` holds the records, as they were before, of the
    /// contracts it archived.
    async fn apply<S: Store>(
        &self,
        stage: &mut Stage<'_, S>,
        update: &Update,
        archived: &Archived<'_>,
    ) -> Result<(), Error>;

    /// This projection, then `next`: the keys of both, and each update applied to this
    /// one before `next`.
    fn then<P: Projection>(self, next: P) -> Then<Self, P>
    where
        Self: Sized,
    {
        Then { first: self, next }
    }
}

/// Two projections kept as one ([`Projection::then`]).
#[derive(Debug, Clone)]
pub struct Then<A, B> {
    first: A,
    next: B,
}

impl<A: Projection, B: Projection> Projection for Then<A, B> {
    fn keys_read<'a>(&'a self, update: &'a Update) -> impl Iterator<Item = Vec<u8>> + 'a {
        self.first.keys_read(update).chain(self.next.keys_read(update))
    }

    async fn apply<S: Store>(
        &self,
        stage: &mut Stage<'_, S>,
        update: &Update,
        archived: &Archived<'_>,
    ) -> Result<(), Error> {
        self.first.apply(stage, update, archived).await?;
        self.next.apply(stage, update, archived).await
    }
}
