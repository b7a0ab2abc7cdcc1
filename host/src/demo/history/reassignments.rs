//! Contracts moving between synchronizers: reassignments of coins and locked coins to
//! the app synchronizer and back, and the hard migration that re-imports every active
//! contract.

use std::collections::BTreeMap;
use std::io::{self, Write};

use ledger_node_core::model::time::Timestamp;
use ledger_node_core::model::update::{
    Assignment, Event, Reassignment, ReassignmentEvent, Transaction, Unassignment, Update,
};

use super::{History, PendingReassignment};
use crate::demo::network::Synchronizer;
use crate::demo::tree::{self, Contract};
use crate::demo::values::at;
use crate::demo::{MAX_REASSIGNED, MINUTE};

impl<W: Write> History<W> {
    /// Sends a coin or locked coin to the app synchronizer, or brings one back. The
    /// `last` update of a history unassigns a locked coin if there is one (else a coin)
    /// and leaves it in flight, so the registry's conflict case is always visible.
    pub(super) fn reassign(&mut self, last: bool) -> io::Result<bool> {
        let away: Vec<String> = self
            .coins
            .iter()
            .map(|c| &c.contract)
            .chain(self.instructions.iter().filter_map(|i| i.locked.as_ref()))
            .filter(|c| c.synchronizer == Synchronizer::App || c.in_flight)
            .map(|c| c.id().to_owned())
            .collect();
        let returning: Vec<&String> = away
            .iter()
            .filter(|id| self.contract(id).is_some_and(|c| !c.in_flight && c.synchronizer == Synchronizer::App))
            .collect();
        let id = if !last && !returning.is_empty() && (self.rng.percent(40) || away.len() >= MAX_REASSIGNED) {
            returning[self.rng.index(returning.len())].clone()
        } else if last || away.len() < MAX_REASSIGNED {
            let locked: Vec<&Contract> =
                self.instructions.iter().filter_map(|i| i.locked.as_ref()).filter(|c| c.is_home()).collect();
            let coins: Vec<&Contract> = self.coins.iter().map(|c| &c.contract).filter(|c| c.is_home()).collect();
            let pool = if !locked.is_empty() && (last || self.rng.percent(25)) { locked } else { coins };
            if pool.is_empty() {
                return Ok(false);
            }
            pool[self.rng.index(pool.len())].id().to_owned()
        } else {
            return Ok(false);
        };
        let unassign_id = self.ids.unassign_id(&mut self.rng);
        let Some(contract) = self.contract_mut(&id) else {
            return Ok(false);
        };
        contract.in_flight = true;
        contract.reassignment_counter += 1;
        let source = contract.synchronizer;
        let counter = contract.reassignment_counter;
        // The owner submits: the last signatory (after the DSO party).
        let submitter = contract.created.signatories.last().cloned().unwrap_or_default();
        let assignment_first = !last && self.rng.percent(10);
        let emitted = self.summary.updates();
        let due = emitted + 1 + self.rng.below(4);
        let first = PendingReassignment {
            due: emitted,
            assignment: assignment_first,
            contract_id: id,
            submitter,
            source,
            unassign_id,
            counter,
        };
        let second = PendingReassignment {
            due,
            assignment: !assignment_first,
            contract_id: first.contract_id.clone(),
            submitter: first.submitter.clone(),
            source,
            unassign_id: first.unassign_id.clone(),
            counter,
        };
        self.pending.push(second);
        self.write_reassignment(&first)?;
        Ok(true)
    }

    /// Writes the second half of a reassignment; the contract is then on its target.
    pub(super) fn finish_reassignment(&mut self, pending: PendingReassignment) -> io::Result<()> {
        self.write_reassignment(&pending)?;
        if let Some(contract) = self.contract_mut(&pending.contract_id) {
            contract.in_flight = false;
            contract.synchronizer = pending.source.other();
        }
        Ok(())
    }

    fn contract(&self, id: &str) -> Option<&Contract> {
        self.coins
            .iter()
            .map(|c| &c.contract)
            .chain(self.instructions.iter().filter_map(|i| i.locked.as_ref()))
            .find(|c| c.id() == id)
    }

    fn contract_mut(&mut self, id: &str) -> Option<&mut Contract> {
        self.coins
            .iter_mut()
            .map(|c| &mut c.contract)
            .chain(self.instructions.iter_mut().filter_map(|i| i.locked.as_mut()))
            .find(|c| c.id() == id)
    }

    /// Writes one half of a reassignment.
    fn write_reassignment(&mut self, r: &PendingReassignment) -> io::Result<()> {
        let time = self.begin();
        let update_id = self.ids.update_id(&mut self.rng);
        let offset = format!("{:018}", self.summary.updates() + 1);
        let source_synchronizer = self.net.synchronizer_id(r.source).to_owned();
        let target_synchronizer = self.net.synchronizer_id(r.source.other()).to_owned();
        let event = if r.assignment {
            let Some(contract) = self.contract(&r.contract_id) else {
                return Ok(());
            };
            ReassignmentEvent::Assignment(Assignment {
                submitter: r.submitter.clone(),
                source_synchronizer,
                target_synchronizer,
                migration_id: self.migration,
                unassign_id: r.unassign_id.clone(),
                created_event: contract.created_event(tree::event_id(&update_id, 0)),
                reassignment_counter: r.counter,
            })
        } else {
            ReassignmentEvent::Unassignment(Unassignment {
                submitter: r.submitter.clone(),
                source_synchronizer,
                migration_id: self.migration,
                target_synchronizer,
                unassign_id: r.unassign_id.clone(),
                reassignment_counter: r.counter,
                contract_id: r.contract_id.clone(),
            })
        };
        let reassignment = Reassignment { update_id, offset, record_time: at(time.record), event };
        self.write_update(&Update::Reassignment(Box::new(reassignment)))
    }

    // --- the hard migration

    /// Completes the reassignments in progress, re-imports every active contract under
    /// migration 1, and moves the clock past the downtime.
    pub(super) fn migrate(&mut self) -> io::Result<()> {
        while self.summary.updates() < self.limit {
            let Some(pending) = self.pending.pop() else {
                break;
            };
            self.finish_reassignment(pending)?;
        }
        self.migration = 1;
        let mut active: Vec<Contract> = Vec::new();
        active.extend(self.dso_rules.iter().map(|rules| Contract::clone(rules)));
        active.extend(self.coin_rules.iter().map(|rules| Contract::clone(rules)));
        active.extend(self.external_config.iter().cloned());
        active.extend(self.open.iter().map(|r| r.contract.clone()));
        active.extend(self.issuing.iter().map(|(_, contract)| contract.clone()));
        active.extend(self.network_state.iter().cloned());
        active.extend(self.closed.iter().map(|r| r.contract.clone()));
        active.extend(self.confirmations.iter().map(|c| c.contract.clone()));
        active.extend(self.votes.iter().flatten().cloned());
        active.extend(self.coins.iter().map(|c| c.contract.clone()));
        for instruction in &self.instructions {
            active.push(instruction.contract.clone());
            active.extend(instruction.locked.iter().cloned());
        }
        for allocation in &self.allocations {
            active.push(allocation.contract.clone());
            active.push(allocation.locked.clone());
        }
        for contract in &active {
            if self.summary.updates() >= self.limit {
                break;
            }
            self.write_import(contract)?;
        }
        self.now += 30 * MINUTE + self.rng.range(0, 30 * MINUTE);
        Ok(())
    }

    /// Writes the import update of `contract`: its id is the contract id, its record
    /// time the earliest there is.
    fn write_import(&mut self, contract: &Contract) -> io::Result<()> {
        let event_id = tree::event_id(contract.id(), 0);
        let created = contract.created_event(event_id.clone());
        let import = Transaction {
            update_id: contract.id().to_owned(),
            migration_id: self.migration,
            workflow_id: String::new(),
            record_time: Timestamp::MIN,
            synchronizer_id: self.net.synchronizer_id(contract.synchronizer).to_owned(),
            effective_at: created.created_at,
            root_event_ids: vec![event_id.clone()],
            events_by_id: BTreeMap::from([(event_id, Event::Created(created))]),
            external_transaction_hash: None,
        };
        self.write_update(&Update::Transaction(import))
    }
}
