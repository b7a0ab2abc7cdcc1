//! The simulation: a [`History`] steps through the network's life, one update at a
//! time, and writes every update as it is made.
//!
//! The steps live by topic: [`rounds`] (bootstrap and the round automation),
//! [`workload`] (votes, taps, transfers, transfer instructions, allocations) and [`reassignments`]
//! (reassignments and the hard migration). This module holds the state, the main loop,
//! and the writing of records: updates through the core's [`Update::ingest_text`], the
//! network records through their JSON forms.

mod reassignments;
mod rounds;
mod workload;

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Write};
use std::rc::Rc;

use ledger_node_core::model::update::{Blob, CreatedEvent, ReassignmentEvent, Transaction, Update};
use ledger_node_core::model::value::{Record, Value};
use ledger_node_core::state::network::{Backfill, RollForwardLsu, Topology, WalletUser};
use serde_json::{Value as Json, json};

use super::network::{Network, Synchronizer, Template};
use super::random::{Ids, Rng};
use super::spelling::Spelling;
use super::tree::{self, Action, Contract};
use super::values::at;
use super::{DAY, HOUR, MIGRATION_MIN_UPDATES, Options, SECOND, START, Summary, TICK, UNIT};

/// The record and effective times of a transaction being built.
#[derive(Debug, Clone, Copy)]
struct TxTime {
    record: i64,
    effective: i64,
}

#[derive(Debug)]
struct Round {
    number: i64,
    opens_at: i64,
    contract: Contract,
}

#[derive(Debug)]
struct ClosedRound {
    number: i64,
    contract: Contract,
    closed_tick: u64,
    confirmed: bool,
}

#[derive(Debug)]
struct Confirmation {
    round: i64,
    contract: Contract,
    tick: u64,
}

#[derive(Debug)]
struct Coin {
    owner: usize,
    amount: i64,
    contract: Contract,
}

#[derive(Debug)]
struct Instruction {
    sender: usize,
    receiver: usize,
    amount: i64,
    workflow: String,
    contract: Contract,
    /// The locked coin, until it is archived (settled, or its lock expired).
    locked: Option<Contract>,
}

/// A coin allocation to a settlement, until it is executed, cancelled or withdrawn.
#[derive(Debug)]
struct Allocation {
    sender: usize,
    receiver: usize,
    /// The party that settles it (a validator's app).
    executor: String,
    amount: i64,
    workflow: String,
    contract: Contract,
    locked: Contract,
}

/// Round automation, run once per tick.
#[derive(Debug, Clone, Copy)]
enum Job {
    Advance,
    Close(u64),
    Confirm(u64),
    ArchiveClosed(u64),
}

/// The second half of a reassignment, due after `due` updates.
#[derive(Debug)]
struct PendingReassignment {
    due: u64,
    assignment: bool,
    contract_id: String,
    submitter: String,
    source: Synchronizer,
    unassign_id: String,
    counter: i64,
}

/// The simulation's state: the network, the clock, the active contracts it may still act
/// on, and the round automation and reassignments in progress.
pub(super) struct History<W> {
    out: W,
    rng: Rng,
    ids: Ids,
    /// How identifiers are spelled as updates are written (`None`: the default names).
    spelling: Option<Spelling>,
    /// The currency word: the id of the instrument transfer instructions move.
    coin: String,
    net: Network,
    summary: Summary,
    /// Record time of the latest update.
    now: i64,
    migration: i64,
    /// Number of updates to write.
    limit: u64,
    /// Number of updates written before the hard migration (`u64::MAX`: none).
    migrate_at: u64,
    bootstrap: u8,
    tick: u64,
    next_tick_at: i64,
    /// Coin price in units, a random walk.
    price: i64,
    /// The rules, exercised by most transactions: shared, so that holding one while
    /// writing costs no copy of its payload.
    dso_rules: Option<Rc<Contract>>,
    coin_rules: Option<Rc<Contract>>,
    external_config: Option<Contract>,
    /// The contracts a validator and a wallet read besides the rules and rounds: the
    /// SVs' node states, licenses, featured apps, preapprovals, ANS, coupons, a vote.
    network_state: Vec<Contract>,
    open: VecDeque<Round>,
    /// Issuing rounds by number, from an open round's archival to its close.
    issuing: VecDeque<(i64, Contract)>,
    /// Archived open rounds waiting to close: `(number, tick archived)`.
    summarizing: VecDeque<(i64, u64)>,
    closed: VecDeque<ClosedRound>,
    confirmations: VecDeque<Confirmation>,
    votes: Vec<Option<Contract>>,
    coins: Vec<Coin>,
    instructions: Vec<Instruction>,
    allocations: Vec<Allocation>,
    jobs: VecDeque<Job>,
    pending: Vec<PendingReassignment>,
    /// Largest number of active contracts seen (the memory bound).
    peak_active: usize,
}

impl<W: Write> History<W> {
    pub(super) fn new(options: &Options, out: W) -> Self {
        let mut rng = Rng::new(options.seed);
        let spelling = Spelling::new(&options.names);
        let coin = options.names.coin.clone();
        let net = Network::new(&mut rng);
        let svs = net.svs.len();
        History {
            out,
            ids: Ids::new(options.seed),
            spelling,
            coin,
            rng,
            net,
            summary: Summary::default(),
            now: START,
            migration: 0,
            limit: options.updates,
            migrate_at: if options.updates >= MIGRATION_MIN_UPDATES { options.updates / 2 } else { u64::MAX },
            bootstrap: 0,
            tick: 0,
            next_tick_at: START + TICK,
            price: UNIT / 200,
            dso_rules: None,
            coin_rules: None,
            external_config: None,
            network_state: Vec::new(),
            open: VecDeque::new(),
            issuing: VecDeque::new(),
            summarizing: VecDeque::new(),
            closed: VecDeque::new(),
            confirmations: VecDeque::new(),
            votes: vec![None; svs],
            coins: Vec::new(),
            instructions: Vec::new(),
            allocations: Vec::new(),
            jobs: VecDeque::new(),
            pending: Vec::new(),
            peak_active: 0,
        }
    }

    /// Writes the whole history: the preamble, the updates, the epilogue.
    pub(super) fn write(mut self) -> io::Result<Summary> {
        self.preamble()?;
        while self.summary.updates() < self.limit {
            self.step()?;
        }
        self.epilogue()?;
        self.out.flush()?;
        Ok(self.summary)
    }

    // --- records other than updates

    /// Writes the `topology` and `wallet_user` records.
    fn preamble(&mut self) -> io::Result<()> {
        for topology in self.net.topology() {
            self.write_record("topology", topology_json(&topology))?;
            self.summary.topology += 1;
        }
        for user in self.net.wallet_users() {
            self.write_record("wallet_user", wallet_user_json(&user))?;
            self.summary.wallet_user += 1;
        }
        Ok(())
    }

    /// Writes a `backfill` record per migration and the `roll_forward_lsu` record.
    fn epilogue(&mut self) -> io::Result<()> {
        for migration_id in 0..=self.migration {
            let backfill = Backfill { migration_id, complete: true, import_updates_complete: true };
            self.write_record("backfill", backfill_json(&backfill))?;
            self.summary.backfill += 1;
        }
        // The next synchronizer upgrade: at noon, a day after the history ends.
        let upgrade_time = (self.now.div_euclid(DAY) + 1) * DAY + 12 * HOUR;
        let physical = |serial: u32| format!("{}::34-{serial}", self.net.global);
        let plan = RollForwardLsu {
            upgrade_time: at(upgrade_time).to_string(),
            current_physical_synchronizer_id: physical(0),
            successor_physical_synchronizer_id: physical(1),
        };
        self.write_record("roll_forward_lsu", serde_json::to_value(&plan)?)?;
        self.summary.roll_forward_lsu += 1;
        Ok(())
    }

    /// Writes `{"<kind>": payload}` and a newline.
    fn write_record(&mut self, kind: &str, payload: Json) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, &BTreeMap::from([(kind, payload)]))?;
        self.out.write_all(b"\n")
    }

    /// Writes `{"update": ...}` in the canonical ingest form, and counts it.
    fn write_update(&mut self, update: &Update) -> io::Result<()> {
        self.out.write_all(br#"{"update":"#)?;
        match &self.spelling {
            Some(spelling) => {
                let mut spelled = update.clone();
                spelling.update(&mut spelled);
                self.out.write_all(spelled.ingest_text().as_bytes())?;
            }
            None => self.out.write_all(update.ingest_text().as_bytes())?,
        }
        self.out.write_all(b"}\n")?;
        let count = match update {
            Update::Transaction(t) if t.is_import() => &mut self.summary.imports,
            Update::Transaction(_) => &mut self.summary.transactions,
            Update::Reassignment(r) => match r.event {
                ReassignmentEvent::Assignment(_) => &mut self.summary.assignments,
                ReassignmentEvent::Unassignment(_) => &mut self.summary.unassignments,
            },
        };
        *count += 1;
        Ok(())
    }

    // --- the main loop

    /// Writes at least one record, and at least one update unless the budget is spent.
    fn step(&mut self) -> io::Result<()> {
        if self.bootstrap < 4 {
            return self.bootstrap_step();
        }
        if self.migration == 0 && self.summary.updates() >= self.migrate_at {
            return self.migrate();
        }
        let emitted = self.summary.updates();
        if let Some(i) = self.pending.iter().position(|p| p.due <= emitted) {
            let pending = self.pending.swap_remove(i);
            return self.finish_reassignment(pending);
        }
        if self.limit - emitted == 1 && self.pending.is_empty() && self.reassign(true)? {
            return Ok(());
        }
        self.schedule_ticks();
        while let Some(job) = self.jobs.pop_front() {
            if self.run(job)? {
                return Ok(());
            }
        }
        self.workload()
    }

    fn schedule_ticks(&mut self) {
        while self.now >= self.next_tick_at {
            self.tick += 1;
            self.next_tick_at += TICK;
            let tick = self.tick;
            self.jobs.extend([Job::Advance, Job::Close(tick), Job::Confirm(tick), Job::ArchiveClosed(tick)]);
        }
    }

    fn run(&mut self, job: Job) -> io::Result<bool> {
        match job {
            Job::Advance => self.advance_rounds(),
            Job::Close(tick) => self.close_round(tick),
            Job::Confirm(tick) => self.confirm_archival(tick),
            Job::ArchiveClosed(tick) => self.archive_closed_round(tick),
        }
    }

    fn workload(&mut self) -> io::Result<()> {
        let done = match self.rng.below(100) {
            0..8 => self.update_vote()?,
            8..16 => self.tap()?,
            16..26 => self.reassign(false)?,
            26..36 => self.create_instruction()?,
            36..46 => self.settle_instruction()?,
            46..51 => self.create_allocation()?,
            51..56 => self.settle_allocation()?,
            _ => false,
        };
        if !done && !self.transfer()? {
            self.tap()?;
        }
        Ok(())
    }

    fn track_peak(&mut self) {
        let active = 3
            + self.open.len()
            + self.closed.len()
            + self.confirmations.len()
            + self.votes.len()
            + self.coins.len()
            + self.instructions.len() * 2
            + self.allocations.len() * 2;
        self.peak_active = self.peak_active.max(active);
    }

    // --- time, contracts and transactions

    /// Advances the clock by a few seconds: the times of the next update.
    fn begin(&mut self) -> TxTime {
        self.now += self.rng.range(SECOND, 13 * SECOND);
        TxTime { record: self.now, effective: self.now - self.rng.range(5_000, 900_000) }
    }

    fn new_contract(
        &mut self,
        template: Template,
        arguments: Record,
        signatories: Vec<String>,
        observers: Vec<String>,
        time: TxTime,
    ) -> Contract {
        let contract_id = self.ids.contract_id(&mut self.rng);
        let length = 48 + self.rng.index(48);
        let mut bytes = Vec::with_capacity(length + 8);
        while bytes.len() < length {
            bytes.extend_from_slice(&self.rng.next_u64().to_le_bytes());
        }
        bytes.truncate(length);
        let created = CreatedEvent {
            event_id: String::new(),
            contract_id,
            template_id: self.net.template_id(template).clone(),
            package_name: template.package_name().to_owned(),
            create_arguments: Value::Record(arguments),
            created_at: at(time.effective),
            signatories,
            observers,
            created_event_blob: Some(Blob::encode(&bytes)),
        };
        Contract { created, synchronizer: Synchronizer::Global, reassignment_counter: 0, in_flight: false }
    }

    /// A contract signed by the DSO party alone.
    fn dso_contract(&mut self, template: Template, arguments: Record, time: TxTime) -> Contract {
        let dso = self.net.dso.clone();
        self.new_contract(template, arguments, vec![dso], vec![], time)
    }

    /// Writes a transaction on the global synchronizer with `roots`.
    fn commit(&mut self, time: TxTime, workflow: &str, roots: Vec<Action>, externally_signed: bool) -> io::Result<()> {
        let update_id = self.ids.update_id(&mut self.rng);
        let external_transaction_hash = externally_signed.then(|| {
            let mut hash = String::with_capacity(64);
            self.rng.push_hex(&mut hash, 4);
            hash
        });
        let (root_event_ids, events_by_id) = tree::events(&update_id, roots);
        let transaction = Transaction {
            update_id,
            migration_id: self.migration,
            workflow_id: workflow.to_owned(),
            record_time: at(time.record),
            synchronizer_id: self.net.global.clone(),
            effective_at: at(time.effective),
            root_event_ids,
            events_by_id,
            external_transaction_hash,
        };
        self.write_update(&Update::Transaction(transaction))?;
        self.track_peak();
        Ok(())
    }

    /// The open round in use at `at`: the highest whose `opensAt` is not after `at`.
    fn round_in_use(&self, at: i64) -> Option<&Round> {
        self.open.iter().filter(|r| r.opens_at <= at).max_by_key(|r| r.number).or_else(|| self.open.front())
    }

    fn round_number_at(&self, at: i64) -> i64 {
        self.round_in_use(at).map_or(0, |r| r.number)
    }
}

/// A `topology` record's payload.
fn topology_json(topology: &Topology) -> Json {
    json!({
        "synchronizer_id": topology.synchronizer_id,
        "party_id": topology.party_id,
        "participant_ids": topology.participant_ids,
    })
}

/// A `wallet_user` record's payload.
fn wallet_user_json(user: &WalletUser) -> Json {
    json!({"user_id": user.user_id, "party_id": user.party_id})
}

/// A `backfill` record's payload.
fn backfill_json(backfill: &Backfill) -> Json {
    json!({
        "migration_id": backfill.migration_id,
        "complete": backfill.complete,
        "import_updates_complete": backfill.import_updates_complete,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::MAX_REASSIGNED;

    #[test]
    fn the_final_state_shows_every_case() {
        let mut out = Vec::new();
        let options = Options::new(10_000, 4);
        let mut history = History::new(&options, &mut out);
        history.preamble().unwrap();
        while history.summary.updates() < options.updates {
            history.step().unwrap();
        }
        assert_eq!(history.open.len(), 3);
        assert!((1..=4).contains(&history.closed.len()), "{}", history.closed.len());
        assert!(history.votes.iter().all(Option::is_some));
        assert!(history.instructions.iter().any(|i| i.locked.is_some()));
        assert!(history.tick > 100);
        let topology = history.net.topology();
        let multi: Vec<_> = topology.iter().filter(|t| t.participant_ids.len() > 1).collect();
        assert_eq!(multi.len(), 1);
        assert!(multi[0].party_id.starts_with("erin::"));
        let open_numbers: Vec<i64> = history.open.iter().map(|r| r.number).collect();
        let newest_closed = history.closed.back().map(|c| c.number).unwrap();
        assert!(newest_closed < open_numbers[0], "{open_numbers:?} {newest_closed}");
    }

    #[test]
    fn memory_stays_bounded_however_long_the_history() {
        let options = Options::new(60_000, 1);
        let mut history = History::new(&options, io::sink());
        while history.summary.updates() < options.updates {
            history.step().unwrap();
        }
        assert!(history.peak_active < 250, "{} active contracts", history.peak_active);
        assert!(history.pending.len() <= MAX_REASSIGNED);
    }
}
