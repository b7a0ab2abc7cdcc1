//! The ledger: the updates the node holds and the active contract set, the base that
//! every other piece of state is derived from.
//!
//! [`apply_update`] stores one update ([`updates`]) and brings the active contract set
//! in line with it ([`contracts`]), staging its writes in the batch's [`Stage`]. It says
//! whether the update was new and, if so, which contracts it archived ([`Archived`]):
//! ingest then applies the update to each [`Projection`](crate::state::projection::Projection),
//! which read what the ledger has just written. The ledger itself knows nothing of
//! them.

pub mod contracts;
pub mod updates;

use crate::model::error::Error;
use crate::model::update::{Event, ReassignmentEvent, Update};
use crate::storage::stage::Stage;
use crate::storage::store::Store;

pub use contracts::{ContractRecord, Creation, Location};
pub use updates::StoredUpdate;

/// What applying one update did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome<'u> {
    /// The update is new and was applied; it archived these contracts.
    New(Archived<'u>),
    /// An identical update was already held.
    Unchanged,
}

/// The contracts an update archived whose creation was held, each with that creation
/// ([`contracts::archive`]). An archived contract's record keeps no creation, so
/// derived state that lists contracts by their payload finds the entry to remove from
/// this one (the contract lists of [`crate::state`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Archived<'u>(alloc::vec::Vec<(&'u str, Creation)>);

impl Archived<'_> {
    /// The creation of `contract_id`, if the update archived it.
    pub fn creation(&self, contract_id: &str) -> Option<&Creation> {
        self.0.iter().find(|(id, _)| *id == contract_id).map(|(_, creation)| creation)
    }
}

/// Every contract `update` creates, assigns or archives (a consuming exercise), with
/// its qualified template name: the contracts whose records ingest reads and writes.
pub fn touched_contracts(update: &Update) -> impl Iterator<Item = (&str, &str)> {
    let events = update.as_transaction().into_iter().flat_map(|tx| tx.events_by_id.values());
    let created_or_archived = events
        .filter(|e| match e {
            Event::Created(_) => true,
            Event::Exercised(x) => x.consuming,
        })
        .map(|e| (e.contract_id(), e.template_id().qualified_name()));
    let assigned = match update {
        Update::Reassignment(r) => match &r.event {
            ReassignmentEvent::Assignment(a) => Some(&a.created_event),
            ReassignmentEvent::Unassignment(_) => None,
        },
        Update::Transaction(_) => None,
    };
    created_or_archived.chain(assigned.map(|c| (c.contract_id.as_str(), c.template_id.qualified_name())))
}

/// The store keys [`apply_update`] reads for `update`, to prefetch in one round trip.
pub fn keys_read(update: &Update) -> impl Iterator<Item = alloc::vec::Vec<u8>> + '_ {
    let contracts = touched_contracts(update);
    let reassigned = match update {
        Update::Reassignment(r) => Some(contracts::reassignment_key(r.event.contract_id())),
        Update::Transaction(_) => None,
    };
    core::iter::once(updates::hash_key(update.id()))
        .chain(contracts.map(|(id, _)| contracts::contract_key(id)))
        .chain(reassigned)
}

/// The keys [`apply_update`] reads for those of `updates` already held, once every
/// update's [`keys_read`] are in `stage`: their stored forms, which decide whether they
/// were re-sent unchanged. To prefetch in one more round trip,
/// taken only when a batch re-sends updates.
pub fn held_keys_read<'u, S: Store>(
    stage: &Stage<'_, S>,
    updates: impl IntoIterator<Item = &'u Update>,
) -> alloc::vec::Vec<alloc::vec::Vec<u8>> {
    updates
        .into_iter()
        .filter(|update| {
            matches!(stage.cached(&updates::hash_key(update.id())), Some(Some(held)) if updates::needs_form(held))
        })
        .map(|update| updates::form_key(update.id()))
        .collect()
}

/// Stores `update`, rendered for storage as `stored` ([`StoredUpdate::new`]), and
/// brings the active contract set in line with it; an update already held with other
/// content is a conflict.
pub async fn apply_update<'u, S: Store>(
    stage: &mut Stage<'_, S>,
    update: &'u Update,
    stored: StoredUpdate,
) -> Result<Outcome<'u>, Error> {
    if let Some(held) = stage.get(&updates::hash_key(update.id())).await? {
        let held_form = match updates::needs_form(&held) {
            true => stage.get(&updates::form_key(update.id())).await?,
            false => None,
        };
        return if stored.matches(&held, held_form.as_deref()) {
            Ok(Outcome::Unchanged)
        } else {
            Err(Error::Conflict(alloc::format!("update {} is already held with different content", update.id())))
        };
    }
    let (entries, mut records) = stored.into_parts(update.id());
    let mut archived = Archived::default();
    for (key, value) in entries {
        stage.put(key, value);
    }
    match update {
        Update::Transaction(tx) => {
            let import = tx.is_import();
            for event in tx.events_in_order() {
                match event {
                    Event::Created(created) => {
                        let record = records.take(&created.contract_id);
                        contracts::create(stage, created, &tx.synchronizer_id, import, record).await?
                    }
                    Event::Exercised(x) if x.consuming => {
                        if let Some(creation) = contracts::archive(stage, &x.contract_id).await? {
                            archived.0.push((&x.contract_id, creation));
                        }
                    }
                    Event::Exercised(_) => {}
                }
            }
        }
        Update::Reassignment(r) => {
            let (id, counter, target) = match &r.event {
                ReassignmentEvent::Assignment(a) => {
                    (a.created_event.contract_id.as_str(), a.reassignment_counter, Some(a.target_synchronizer.as_str()))
                }
                ReassignmentEvent::Unassignment(u) => (u.contract_id.as_str(), u.reassignment_counter, None),
            };
            let key = contracts::reassignment_key(id);
            let held = match stage.get(&key).await? {
                Some(bytes) => Some(contracts::Reassigned::decode(id, &bytes)?),
                None => None,
            };
            stage.put(key, contracts::Reassigned::fold(held, counter, target).encode());
            if let ReassignmentEvent::Assignment(a) = &r.event {
                let record = records.take(id);
                contracts::create(stage, &a.created_event, &a.target_synchronizer, false, record).await?;
            }
        }
    }
    Ok(Outcome::New(archived))
}
