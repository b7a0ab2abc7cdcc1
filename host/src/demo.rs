//! `ledger-node demo`: a generated network history, written as the ingest stream
//! (see the README's native section).
//!
//! [`write()`] streams NDJSON ingest records for a small but complete network. The output
//! is a pure function of [`Options`] (a seeded splitmix64 generator drives every choice,
//! and the clock is simulated), so a seed names one history byte for byte. In order:
//!
//! 1. `topology`: the DSO party, four SVs, three validators and six users, hosted on two
//!    synchronizers (`global-domain::1220…` and `app-domain::1220…`). One user, `erin`,
//!    is hosted on two participants of the global synchronizer, so the "several
//!    hosting participants" case of the participant-id route is visible.
//! 2. `wallet_user`: four users (`alice`, `bob`, `carol`, `dave`) and their parties.
//! 3. Exactly `updates` `update` records, record times a few seconds apart from
//!    [`START`] (so a history of a few thousand updates crosses several 3-hour snapshot
//!    boundaries):
//!    - bootstrap: `DsoRules`, `CoinRules` and `ExternalPartyConfigState`, open rounds
//!      0 to 2, one `CoinPriceVote` per SV, and the state a validator and a wallet read
//!      from a scan: `ExternalPartyCoinRules`, `AnsRules`, an `SvNodeState` per SV
//!      (its sequencer, mediator and scan), a `ValidatorLicense` per validator, a
//!      `FeaturedAppRight`, two `TransferPreapproval`s, the external party's
//!      `TransferCommandCounter`, two `AnsEntry`s, two
//!      `UnclaimedDevelopmentFundCoupon`s and a `VoteRequest`, and the external
//!      party's `TransferCommand`s (created through `ExternalPartyCoinRules`; one
//!      pending, the others sent, failed, withdrawn or expired in the same transaction);
//!    - every 10 simulated minutes the round automation runs: the oldest
//!      `OpenMiningRound` is archived and a new one created with the archived round's
//!      `IssuingMiningRound`, an earlier round becomes a `ClosedMiningRound` (its
//!      issuing round archived), an SV creates a `Confirmation` to archive an older closed
//!      round, and a confirmed closed round is archived with its confirmation (so three
//!      rounds are open and two or three closed at any time);
//!    - the workload: coin transfers (a non-consuming `CoinRules_Transfer` whose children
//!      archive the inputs and create the outputs), taps, price vote changes (the old
//!      vote archived, a new one created), transfer instructions through the token
//!      standard interface (a `LockedCoin` and a `CoinTransferInstruction` whose
//!      `lockedCoin` names it), their acceptance, rejection or withdrawal, expired locks
//!      (leaving an instruction whose locked coin is gone), coin allocations to a
//!      settlement (`AllocationFactory_Allocate`: a `LockedCoin` and a `CoinAllocation`
//!      whose `lockedCoin` names it and whose `allocation` carries the settlement and
//!      the transfer leg), each then executed by the settlement's executor, cancelled
//!      by it or withdrawn by the sender, and reassignments of coins
//!      and locked coins between the synchronizers (an unassignment and its assignment a
//!      few updates apart, now and then the assignment first; some contracts are left
//!      in flight at the end);
//!    - with at least [`MIGRATION_MIN_UPDATES`] updates, a hard migration halfway: the
//!      pending reassignments complete, every active contract is re-imported under
//!      migration 1 (import updates: record time `0001-01-01T00:00:00.000000Z`, update
//!      id = contract id), and after half an hour of downtime the history goes on
//!      under migration 1.
//! 4. A `backfill` record per migration (complete, imports complete) and one
//!    `roll_forward_lsu` record planning an upgrade of the global synchronizer a day
//!    after the history ends.
//!
//! Every kind of ledger value ([`ledger_node_core::model::value`]) appears in payloads, choice
//! arguments or exercise results; created events carry a base64 `created_event_blob`.
//! Template ids are `<package-id>:<Module.Path>:<Entity>`, spelled by the configured
//! names ([`Options::names`]): the simulation is written with the defaults, and every
//! identifier of an update is spelled the configured way as it is written (`spelling`),
//! so a history for a node configured with the network's names (`Splice`, `Amulet`)
//! reads as that network spells it, blobs and other data untouched. The instrument id
//! of transfer instructions is the currency word.
//!
//! The demo has no model of its own: it builds the core's types and writes them with
//! the core's writers, so what it writes is exactly what the node parses. Each update is
//! an [`Update`](ledger_node_core::model::update::Update) (a transaction of created and
//! exercised events, or a reassignment) holding [`Value`](ledger_node_core::model::value::Value)s,
//! written by [`Update::ingest_text`](ledger_node_core::model::update::Update::ingest_text)
//! inside `{"update": ...}`: the canonical ingest form, which parses back to the same
//! update. The other records are the core's [`network`](ledger_node_core::state::network)
//! records (`Topology`, `WalletUser`, `Backfill`, `RollForwardLsu`), written as the JSON
//! objects their ingest records hold. What is the demo's own is the simulation: who
//! creates and exercises what, when, with which seeded choice.
//!
//! Its modules: `random` (the seeded generator and fresh ids), `network` (who is who,
//! and the templates), `values` (short constructors of ledger values), `tree` (contracts,
//! and transaction trees numbered into events) and `history` (the simulation, step by
//! step, and the writing of its records).
//!
//! Memory is bounded whatever the size: records are written as they are generated, and
//! the generator only keeps the contracts it may still act on, whose number is capped
//! (transfers merge coins, instructions and reassignments in progress are capped).

mod history;
mod network;
mod random;
mod spelling;
mod tree;
mod values;

#[cfg(test)]
mod tests;

use std::io::{self, Write};

use history::History;
use ledger_node_core::model::config::Names;

/// Number of `update` records when `--updates` is not given.
pub const DEFAULT_UPDATES: u64 = 1_000;
/// Seed when `--seed` is not given.
pub const DEFAULT_SEED: u64 = 1;
/// Histories of at least this many updates include a hard migration halfway.
pub const MIGRATION_MIN_UPDATES: u64 = 1_000;
/// Record time of the first update: 2025-01-06T08:00:00Z, in microseconds.
pub const START: i64 = 1_736_150_400 * SECOND;

const SECOND: i64 = 1_000_000;
const MINUTE: i64 = 60 * SECOND;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;
/// How often the round automation runs (the rounds' tick duration).
const TICK: i64 = 10 * MINUTE;
/// Numeric amounts are held in units of 10^-10 (Daml's `Numeric 10`).
const UNIT: i64 = 10_000_000_000;
/// At most this many transfer instructions are pending at once.
const MAX_INSTRUCTIONS: usize = 16;
/// At most this many coin allocations are live at once.
const MAX_ALLOCATIONS: usize = 8;
/// At most this many contracts are away on the app synchronizer or in flight at once.
const MAX_REASSIGNED: usize = 8;

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Number of `update` records (transactions, reassignments and imports).
    pub updates: u64,
    /// Seed of the generator: one seed, one history.
    pub seed: u64,
    /// The names the identifiers are spelled by (`ledger-node demo` takes the node's
    /// configured ones, `LEDGER_NODE_NAMES_*`).
    pub names: Names,
}

impl Options {
    /// `updates` updates from `seed`, under the default names.
    pub fn new(updates: u64, seed: u64) -> Self {
        Options { updates, seed, names: ledger_node_core::Config::default().names }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options::new(DEFAULT_UPDATES, DEFAULT_SEED)
    }
}

/// How many records of each kind were written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// `topology` records.
    pub topology: u64,
    /// `wallet_user` records.
    pub wallet_user: u64,
    /// `update` records that are ordinary transactions.
    pub transactions: u64,
    /// `update` records that are import updates.
    pub imports: u64,
    /// `update` records that are assignments.
    pub assignments: u64,
    /// `update` records that are unassignments.
    pub unassignments: u64,
    /// `backfill` records (one per migration).
    pub backfill: u64,
    /// `roll_forward_lsu` records.
    pub roll_forward_lsu: u64,
}

impl Summary {
    /// All `update` records.
    pub fn updates(&self) -> u64 {
        self.transactions + self.imports + self.assignments + self.unassignments
    }
}

/// Writes the demo history for `options` to `out`, record by record, and says what it
/// wrote. `out` should be buffered.
pub fn write<W: Write>(options: &Options, out: W) -> io::Result<Summary> {
    History::new(options, out).write()
}
