//! `POST /v0/admin/ingest`: the NDJSON ingest stream.
//!
//! A batch is newline-delimited JSON, one record per line, each an object with exactly
//! one key naming its kind. Blank lines are skipped but counted, so every error names
//! the 1-based line it is about. A batch is applied whole or not at all. Every id of
//! every record kind is at most [`MAX_ID_BYTES`](crate::model::ids::MAX_ID_BYTES) bytes; a
//! longer one is a 400 naming the line and the field, whichever parser reads the line.
//!
//! Applying a batch: every record is parsed (and every update rendered for storage)
//! before the store is touched; the keys the batch reads, the ledger's and every
//! projection's, are fetched in one round trip; then each record is applied in line
//! order to one [`Stage`]. An update goes to the ledger ([`ledger::apply_update`]),
//! and, if it is new, to every projection of [`projections`]; a network record
//! replaces the state it names ([`crate::state::network`]). The stage is committed by
//! [`commit::guarded`], prepared again if another write committed in between.

use alloc::format;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::model::config::{Config, Names};
use crate::model::error::Error;
use crate::model::json::Json;
use crate::model::names::TemplateNames;
use crate::model::update::Update;
use crate::model::value::PathError;
use crate::state::blobs::{self, BlobOutcome, BlobRecord, SoughtBlobs};
use crate::state::ledger::{self, Outcome, StoredUpdate};
use crate::state::network::{self, Backfill, KnownSynchronizers, RollForwardLsu, Topology, WalletUser};
use crate::state::projection::Projection;
use crate::state::registry::supply::{SupplyNames, TotalSupplyState};
use crate::state::registry::{RegistryIndex, RegistryTemplates};
use crate::state::scan::transfer_commands::TransferCommands;
use crate::state::scan::{ScanState, ScanTemplates};
use crate::state::wallet::outcome::LedgerOutcomes;
use crate::state::{Migrations, PriceVotes, Rounds};
use crate::storage::commit;
use crate::storage::stage::Stage;
use crate::storage::store::Store;

/// The kinds of ingest record.
const KINDS: [&str; 6] = ["update", "topology", "backfill", "roll_forward_lsu", "wallet_user", "blob"];

/// What an ingest batch changed: the body of a 200 from `POST /v0/admin/ingest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Records applied, by kind.
    pub applied: Applied,
    /// Updates that were already held (or came earlier in the same batch).
    pub unchanged: u64,
}

/// Records applied, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// `update` records.
    pub update: u64,
    /// `topology` records.
    pub topology: u64,
    /// `backfill` records.
    pub backfill: u64,
    /// `roll_forward_lsu` records.
    pub roll_forward_lsu: u64,
    /// `wallet_user` records.
    pub wallet_user: u64,
    /// `blob` records that gave a contract its blob or noted when it was sought
    /// ([`crate::state::blobs`]); written only when there are some, so a batch without
    /// them is summed up as before they existed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub blob: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Summary {
    /// Adds what another batch changed (totals over several batches).
    pub fn add(&mut self, other: &Summary) {
        let (mine, theirs) = (&mut self.applied, &other.applied);
        mine.update += theirs.update;
        mine.topology += theirs.topology;
        mine.backfill += theirs.backfill;
        mine.roll_forward_lsu += theirs.roll_forward_lsu;
        mine.wallet_user += theirs.wallet_user;
        mine.blob += theirs.blob;
        self.unchanged += other.unchanged;
    }

    /// Updates seen, new or not.
    pub fn updates(&self) -> u64 {
        self.applied.update + self.unchanged
    }
}

/// One non-blank line of a batch: its 1-based number, its kind and its payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Line<'a> {
    /// 1-based line number in the batch.
    pub number: usize,
    /// The record's kind, one of the ingest kinds.
    pub kind: &'static str,
    /// The record's payload (the value under the kind's key), borrowing from the batch.
    pub payload: Json<'a>,
}

/// Splits a batch into its records, refusing the first malformed line.
pub fn parse_lines(body: &[u8]) -> Result<Vec<Line<'_>>, Error> {
    lines(body).collect()
}

/// The records of a batch, one line at a time, each parsed only when it is reached.
fn lines(body: &[u8]) -> impl Iterator<Item = Result<Line<'_>, Error>> {
    raw_lines(body).map(|(number, raw)| parse_line(number, raw))
}

/// The non-blank lines of a batch, with their 1-based numbers.
fn raw_lines(body: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    body.split(|b| *b == b'\n').enumerate().filter_map(|(index, raw)| {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        (!raw.iter().all(u8::is_ascii_whitespace)).then_some((index + 1, raw))
    })
}

/// Parses line `number`, `raw`, into its record.
fn parse_line(number: usize, raw: &[u8]) -> Result<Line<'_>, Error> {
    let value = Json::parse(raw).map_err(|e| Error::BadRequest(format!("line {number}: not valid JSON: {e}")))?;
    let Json::Object(map) = value else {
        return Err(Error::BadRequest(format!(
            "line {number}: a record must be a JSON object with one key: one of {}",
            KINDS.join(", ")
        )));
    };
    let found = map.len();
    let mut entries = map.into_entries();
    let (Some((key, payload)), true) = (entries.pop(), found == 1) else {
        return Err(Error::BadRequest(format!(
            "line {number}: a record must have exactly one key (one of {}), found {found}",
            KINDS.join(", "),
        )));
    };
    let Some(kind) = KINDS.iter().copied().find(|k| *k == key) else {
        return Err(Error::BadRequest(format!(
            "line {number}: unknown record kind {key:?}; expected one of {}",
            KINDS.join(", ")
        )));
    };
    Ok(Line { number, kind, payload })
}

/// One parsed record of a batch.
#[derive(Debug)]
enum Record {
    /// An update, with its bodies rendered for storage (taken by the first attempt to
    /// apply the batch, rendered again by a retry). Boxed: an update is much larger
    /// than the other records.
    Update(alloc::boxed::Box<(Update, Option<StoredUpdate>)>),
    Topology(Topology),
    Backfill(Backfill),
    RollForwardLsu(Option<RollForwardLsu>),
    WalletUser(WalletUser),
    Blob(BlobRecord),
}

impl Record {
    /// An update record, rendered for storage.
    fn update(update: Update) -> Result<Self, Error> {
        let stored = StoredUpdate::new(&update)?;
        Ok(Record::Update((update, Some(stored)).into()))
    }
}

/// Parses every record of the batch, refusing the first invalid one (in line order),
/// and renders every update for storage: all of a batch's work that needs no store
/// happens here, before the store is first touched.
///
/// An update line goes straight from bytes to the typed update
/// ([`update::fast`](crate::model::update::fast)) when it is well formed; any other line, and
/// an update line that path does not take, is parsed into a JSON document and read by
/// the strict parsers, which name what is wrong. Each line goes from bytes to its typed
/// record before the next is read, so a JSON document is dropped while it is still in
/// the cache, and its memory is reused by the next line.
fn parse_records(body: &[u8]) -> Result<Vec<(usize, Record)>, Error> {
    raw_lines(body)
        .map(|(number, raw)| {
            if let Some(update) = crate::model::update::fast::update_line(raw) {
                return Ok((number, Record::update(update)?));
            }
            let line = parse_line(number, raw)?;
            let refused = |e: PathError| Error::BadRequest(format!("line {number}: {e}"));
            let payload = &line.payload;
            let record = match line.kind {
                "update" => Record::update(Update::parse(payload).map_err(refused)?)?,
                "topology" => Record::Topology(Topology::parse(payload).map_err(refused)?),
                "backfill" => Record::Backfill(Backfill::parse(payload).map_err(refused)?),
                "roll_forward_lsu" => Record::RollForwardLsu(RollForwardLsu::parse(payload).map_err(refused)?),
                "wallet_user" => Record::WalletUser(WalletUser::parse(payload).map_err(refused)?),
                _ => Record::Blob(BlobRecord::parse(payload).map_err(refused)?),
            };
            Ok((number, record))
        })
        .collect()
}

/// The templates and choices the projections follow, spelled by the configured names.
#[derive(Debug, Clone)]
pub struct Followed {
    names: TemplateNames,
    scan: ScanTemplates,
    registry: RegistryTemplates,
    supply: SupplyNames,
}

impl Followed {
    /// Everything the projections follow, as `names` spells it.
    pub fn new(names: &Names) -> Self {
        Followed {
            names: TemplateNames::new(names),
            scan: ScanTemplates::new(names),
            registry: RegistryTemplates::new(names),
            supply: SupplyNames::new(names),
        }
    }
}

/// Every piece of state ingest derives from the ledger, in the order it applies each
/// new update to them: the one list of projections, which both the batch's prefetch
/// and its apply step go through. `followed` names the templates they follow.
pub fn projections(followed: &Followed) -> impl Projection + '_ {
    KnownSynchronizers
        .then(LedgerOutcomes)
        .then(Migrations)
        .then(Rounds::new(&followed.names))
        .then(PriceVotes::new(&followed.names))
        .then(ScanState::new(&followed.scan))
        .then(TransferCommands::new(&followed.scan))
        .then(RegistryIndex::new(&followed.registry))
        .then(TotalSupplyState::new(&followed.supply))
        .then(SoughtBlobs::new(&followed.names, &followed.scan))
}

/// Applies one ingest batch atomically and says what changed.
///
/// Every record is parsed before the store is touched, the batch's reads are fetched in
/// one round trip, and all of its writes go in one atomic write batch guarded by the
/// ingest generation ([`commit::guarded`]): if another batch committed in between, this
/// one is prepared again on the new state. Each new update is stored by the ledger
/// ([`ledger::apply_update`]), then applied to every [`projections`]. `config` names the
/// templates that derived state follows.
pub async fn ingest<S: Store>(body: &[u8], store: &S, config: &Config) -> Result<Summary, Error> {
    let followed = Followed::new(&config.names);
    let projections = projections(&followed);
    let mut records = parse_records(body)?;
    let reads = keys_read(&records, &projections);
    let applied = commit::guarded(store, async || {
        let mut stage = Stage::new(store);
        stage.prefetch(reads.iter().cloned()).await?;
        let held = ledger::held_keys_read(
            &stage,
            records.iter().filter_map(|(_, record)| match record {
                Record::Update(update) => Some(&update.0),
                _ => None,
            }),
        );
        stage.prefetch(held).await?;
        let mut summary = Summary::default();
        for (number, record) in &mut records {
            match record {
                Record::Update(update) => {
                    let (update, stored) = &mut **update;
                    let stored = match stored.take() {
                        Some(stored) => stored,
                        None => StoredUpdate::new(update)?,
                    };
                    match ledger::apply_update(&mut stage, update, stored).await {
                        Ok(Outcome::New(archived)) => {
                            projections.apply(&mut stage, update, &archived).await?;
                            summary.applied.update += 1;
                        }
                        Ok(Outcome::Unchanged) => summary.unchanged += 1,
                        Err(Error::Conflict(message)) => {
                            return Err(Error::Conflict(format!(
                                "line {number}: {message}; nothing of this batch was applied"
                            )));
                        }
                        Err(other) => return Err(other),
                    }
                }
                Record::Topology(topology) => {
                    network::apply_topology(&mut stage, topology)?;
                    summary.applied.topology += 1;
                }
                Record::Backfill(backfill) => {
                    network::apply_backfill(&mut stage, backfill)?;
                    summary.applied.backfill += 1;
                }
                Record::RollForwardLsu(plan) => {
                    network::apply_roll_forward(&mut stage, plan)?;
                    summary.applied.roll_forward_lsu += 1;
                }
                Record::WalletUser(user) => {
                    network::apply_wallet_user(&mut stage, user);
                    summary.applied.wallet_user += 1;
                }
                Record::Blob(record) => match blobs::apply(&mut stage, record, &followed.names, &followed.scan).await {
                    Ok(BlobOutcome::Applied) => summary.applied.blob += 1,
                    Ok(BlobOutcome::Unchanged) => {}
                    Err(Error::Conflict(message)) => {
                        return Err(Error::Conflict(format!(
                            "line {number}: {message}; nothing of this batch was applied"
                        )));
                    }
                    Err(other) => return Err(other),
                },
            }
        }
        Ok((stage, summary))
    })
    .await?;
    applied.ok_or_else(|| {
        Error::Conflict(
            "other ingest batches kept committing while this one was prepared; nothing was applied; retry".into(),
        )
    })
}

/// Every store key that applying the batch's updates reads, the ledger's and
/// `projections`', sorted and without repeats: worked out before the batch's first
/// store call, so that its turn at the store starts with the reads themselves.
fn keys_read(records: &[(usize, Record)], projections: &impl Projection) -> Vec<Vec<u8>> {
    let updates = records
        .iter()
        .filter_map(|(_, record)| match record {
            Record::Update(update) => {
                let update = &update.0;
                Some(ledger::keys_read(update).chain(projections.keys_read(update)))
            }
            _ => None,
        })
        .flatten();
    let blobs = records
        .iter()
        .filter_map(|(_, record)| match record {
            Record::Blob(record) => Some(blobs::keys_read(record)),
            _ => None,
        })
        .flatten();
    let mut keys: Vec<Vec<u8>> = updates.chain(blobs).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_are_skipped_but_counted() {
        let lines = parse_lines(b"\n  \r\n{\"backfill\":{}}\n\n").unwrap();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].number, 3);
        assert_eq!(lines[0].kind, "backfill");
    }

    #[test]
    fn malformed_lines_are_named() {
        let cases: [(&[u8], &str); 5] = [
            (b"\n{", "line 2: not valid JSON"),
            (b"[1]", "line 1: a record must be a JSON object"),
            (b"{}", "line 1: a record must have exactly one key"),
            (b"{\"update\":{},\"backfill\":{}}", "line 1: a record must have exactly one key"),
            (b"{\"upgrade\":{}}", "line 1: unknown record kind \"upgrade\""),
        ];
        for (body, want) in cases {
            match parse_lines(body) {
                Err(Error::BadRequest(message)) => assert!(message.starts_with(want), "{message}"),
                other => panic!("{want}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_empty_batch_applies_nothing() {
        let store = crate::storage::store::MemoryStore::new();
        let summary = crate::storage::exec::block_on(ingest(b"", &store, &Config::default())).unwrap();
        assert_eq!(summary, Summary::default());
        assert_eq!(
            serde_json::to_string(&summary).unwrap(),
            r#"{"applied":{"update":0,"topology":0,"backfill":0,"roll_forward_lsu":0,"wallet_user":0},"unchanged":0}"#
        );
    }
}
