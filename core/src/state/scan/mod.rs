//! The network's own contracts that a validator and a wallet read from a scan: the
//! DSO's rules, the rounds, the SVs' node states and the contracts looked up by party
//! or by name, kept at ingest as one [`Projection`] ([`ScanState`]).
//!
//! The templates are those of the network's Daml (`daml/splice-*/daml/Splice/*.daml`
//! of `hyperledger-labs/splice`), spelled by the configured names ([`ScanTemplates`]).
//!
//! Keys (see [`crate::storage::keys`]):
//!
//! - `A kind created_at contract_id` (the synchronizer the contract was created on and
//!   the contract rendered as a `Contract`, [`read::Entry`]): every active contract of a [`Kind`], by creation time, removed
//!   when archived. A singleton (the DSO's rules, the coin rules) is the last key of its
//!   kind: the latest creation, then the highest contract id, in one reverse scan of
//!   limit 1. A list (rounds, node states, featured apps, the coin's live allocations,
//!   each with the locked coin it holds in its payload) is one scan.
//! - `F index key created_at contract_id` (the same entry): active contracts of
//!   an [`Index`] by one text of their payload (the receiver of a transfer
//!   preapproval, the provider of a featured app right, an ANS entry's name or user),
//!   so that a lookup is one scan within one key's prefix.
//!
//! Where a contract is now (its synchronizer, or in flight) is not kept here: the
//! ledger answers it from the contract's reassignments
//! ([`crate::state::ledger::contracts::location_from`]), one more read per contract served
//! with its state.
//!
//! A contract whose payload lacks the text an index needs is kept in `A` and left out
//! of that index.

pub mod read;
pub mod transfer_commands;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::model::config::Names;
use crate::model::error::Error;
use crate::model::update::Update;
use crate::state::ledger::{self, Archived};
use crate::state::projection::Projection;
use crate::storage::keys::{self, Key};
use crate::storage::stage::Stage;
use crate::storage::store::Store;

use super::listed::ListedContract;

/// The kinds of contract kept in `A`, one per template; its byte is the key's second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Kind {
    /// `Splice.DsoRules:DsoRules`
    DsoRules = 1,
    /// `Splice.AmuletRules:AmuletRules`
    CoinRules = 2,
    /// `Splice.ExternalPartyAmuletRules:ExternalPartyAmuletRules`
    ExternalPartyCoinRules = 3,
    /// `Splice.Ans:AnsRules`
    AnsRules = 4,
    /// `Splice.Round:OpenMiningRound`
    OpenRound = 5,
    /// `Splice.Round:IssuingMiningRound`
    IssuingRound = 6,
    /// `Splice.Round:SummarizingMiningRound`
    SummarizingRound = 7,
    /// `Splice.DSO.SvState:SvNodeState`
    SvNodeState = 8,
    /// `Splice.Amulet:FeaturedAppRight`
    FeaturedAppRight = 9,
    /// `Splice.Amulet:UnclaimedDevelopmentFundCoupon`
    DevelopmentFundCoupon = 10,
    /// `Splice.DsoRules:VoteRequest`
    VoteRequest = 11,
    /// `Splice.AmuletRules:TransferPreapproval`
    TransferPreapproval = 12,
    /// `Splice.ExternalPartyAmuletRules:TransferCommandCounter`
    TransferCommandCounter = 13,
    /// `Splice.Ans:AnsEntry`
    AnsEntry = 14,
    /// `Splice.ValidatorLicense:ValidatorLicense`
    ValidatorLicense = 15,
    /// `Splice.AmuletAllocation:AmuletAllocation`: the coin's allocations to a
    /// settlement (delivery versus payment), each holding a locked coin.
    CoinAllocation = 16,
}

impl Kind {
    /// Every kind, in byte order.
    pub const ALL: [Kind; 16] = [
        Kind::DsoRules,
        Kind::CoinRules,
        Kind::ExternalPartyCoinRules,
        Kind::AnsRules,
        Kind::OpenRound,
        Kind::IssuingRound,
        Kind::SummarizingRound,
        Kind::SvNodeState,
        Kind::FeaturedAppRight,
        Kind::DevelopmentFundCoupon,
        Kind::VoteRequest,
        Kind::TransferPreapproval,
        Kind::TransferCommandCounter,
        Kind::AnsEntry,
        Kind::ValidatorLicense,
        Kind::CoinAllocation,
    ];

    /// The indexes of `F` a contract of this kind is in.
    fn indexes(self) -> &'static [Index] {
        match self {
            Kind::TransferPreapproval => &[Index::PreapprovalByReceiver],
            Kind::FeaturedAppRight => &[Index::FeaturedAppByProvider],
            Kind::TransferCommandCounter => &[Index::CounterBySender],
            Kind::AnsEntry => &[Index::AnsEntryByName, Index::AnsEntryByUser],
            _ => &[],
        }
    }
}

/// The lookups of `F`; its byte is the key's second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Index {
    /// Transfer preapprovals by `receiver`.
    PreapprovalByReceiver = 1,
    /// Featured app rights by `provider`.
    FeaturedAppByProvider = 2,
    /// Transfer command counters by `sender`.
    CounterBySender = 3,
    /// ANS entries by `name`.
    AnsEntryByName = 4,
    /// ANS entries by `user`, then `name`.
    AnsEntryByUser = 5,
}

impl Index {
    /// The payload fields whose texts key the index, in key order.
    fn fields(self) -> &'static [&'static str] {
        match self {
            Index::PreapprovalByReceiver => &["receiver"],
            Index::FeaturedAppByProvider => &["provider"],
            Index::CounterBySender => &["sender"],
            Index::AnsEntryByName => &["name"],
            Index::AnsEntryByUser => &["user", "name"],
        }
    }
}

/// The qualified names of the templates kept here, spelled by the configured names:
/// with the network's (`Splice`, `Amulet`) they are the network's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanTemplates {
    names: Vec<(Kind, String)>,
    transfer_command: String,
}

impl ScanTemplates {
    /// The names as `names` spells them.
    pub fn new(names: &Names) -> Self {
        let Names { root, coin } = names;
        let name = |kind| match kind {
            Kind::DsoRules => format!("{root}.DsoRules:DsoRules"),
            Kind::CoinRules => format!("{root}.{coin}Rules:{coin}Rules"),
            Kind::ExternalPartyCoinRules => {
                format!("{root}.ExternalParty{coin}Rules:ExternalParty{coin}Rules")
            }
            Kind::AnsRules => format!("{root}.Ans:AnsRules"),
            Kind::OpenRound => format!("{root}.Round:OpenMiningRound"),
            Kind::IssuingRound => format!("{root}.Round:IssuingMiningRound"),
            Kind::SummarizingRound => format!("{root}.Round:SummarizingMiningRound"),
            Kind::SvNodeState => format!("{root}.DSO.SvState:SvNodeState"),
            Kind::FeaturedAppRight => format!("{root}.{coin}:FeaturedAppRight"),
            Kind::DevelopmentFundCoupon => format!("{root}.{coin}:UnclaimedDevelopmentFundCoupon"),
            Kind::VoteRequest => format!("{root}.DsoRules:VoteRequest"),
            Kind::TransferPreapproval => format!("{root}.{coin}Rules:TransferPreapproval"),
            Kind::TransferCommandCounter => format!("{root}.ExternalParty{coin}Rules:TransferCommandCounter"),
            Kind::AnsEntry => format!("{root}.Ans:AnsEntry"),
            Kind::ValidatorLicense => format!("{root}.ValidatorLicense:ValidatorLicense"),
            Kind::CoinAllocation => format!("{root}.{coin}Allocation:{coin}Allocation"),
        };
        ScanTemplates {
            names: Kind::ALL.iter().map(|kind| (*kind, name(*kind))).collect(),
            transfer_command: format!("{root}.ExternalParty{coin}Rules:TransferCommand"),
        }
    }

    /// The qualified name of the transfer command template, whose statuses
    /// [`transfer_commands`] keeps (it is not kept in `A`).
    pub fn transfer_command(&self) -> &str {
        &self.transfer_command
    }

    /// The kind of the template `qualified_name`, if it is one kept here.
    pub fn kind(&self, qualified_name: &str) -> Option<Kind> {
        self.names.iter().find(|(_, name)| name == qualified_name).map(|(kind, _)| *kind)
    }

    /// The qualified name of `kind`'s template.
    pub fn name(&self, kind: Kind) -> &str {
        self.names.iter().find(|(k, _)| *k == kind).map_or("", |(_, name)| name.as_str())
    }
}

/// The prefix of every active contract of `kind`.
pub fn kind_prefix(kind: Kind) -> Vec<u8> {
    Key::new(keys::SCAN_CONTRACT).byte(kind as u8).into_bytes()
}

fn kind_key(kind: Kind, created_at_micros: i64, contract_id: &str) -> Vec<u8> {
    Key::new(keys::SCAN_CONTRACT).byte(kind as u8).i64(created_at_micros).str(contract_id).into_bytes()
}

/// The prefix of the contracts of `index` under `texts`, the first of its key texts
/// (all of them: one key's entries; fewer: a range of keys).
pub fn index_prefix(index: Index, texts: &[&str]) -> Vec<u8> {
    texts.iter().fold(Key::new(keys::SCAN_LOOKUP).byte(index as u8), |key, text| key.str(text)).into_bytes()
}

fn index_key(index: Index, texts: &[&str], created_at_micros: i64, contract_id: &str) -> Vec<u8> {
    let mut key = index_prefix(index, texts);
    let tail = Key::new(0).i64(created_at_micros).str(contract_id).into_bytes();
    key.extend_from_slice(tail.get(1..).unwrap_or_default());
    key
}

/// The contracts of [`Kind`]s, and their lookups ([`Index`]), kept from the ledger.
#[derive(Debug, Clone, Copy)]
pub struct ScanState<'n> {
    templates: &'n ScanTemplates,
}

impl<'n> ScanState<'n> {
    /// The state of the templates `templates` names.
    pub fn new(templates: &'n ScanTemplates) -> Self {
        ScanState { templates }
    }
}

impl Projection for ScanState<'_> {
    /// None besides the contract records, which the ledger's own reads prefetch.
    fn keys_read<'a>(&'a self, _update: &'a Update) -> impl Iterator<Item = Vec<u8>> + 'a {
        core::iter::empty()
    }

    async fn apply<S: Store>(
        &self,
        stage: &mut Stage<'_, S>,
        update: &Update,
        archived: &Archived<'_>,
    ) -> Result<(), Error> {
        for (contract_id, qualified_name) in ledger::touched_contracts(update) {
            if let Some(kind) = self.templates.kind(qualified_name) {
                sync(stage, kind, contract_id, archived).await?;
            }
        }
        Ok(())
    }
}

/// Brings `A` and `F` in line with the record of `contract_id`, a contract of `kind`:
/// kept while active, removed once archived.
pub(crate) async fn sync<S: Store>(
    stage: &mut Stage<'_, S>,
    kind: Kind,
    contract_id: &str,
    archived: &Archived<'_>,
) -> Result<(), Error> {
    let Some(listed) = ListedContract::read(stage, contract_id, archived).await? else {
        return Ok(());
    };
    let created_at = listed.created_at.micros();
    let mut keys = Vec::with_capacity(1 + kind.indexes().len());
    keys.push(kind_key(kind, created_at, contract_id));
    for index in kind.indexes() {
        let texts: Option<Vec<&str>> = index.fields().iter().map(|field| listed.payload_text(&[*field])).collect();
        if let Some(texts) = texts {
            keys.push(index_key(*index, &texts, created_at, contract_id));
        }
    }
    let entry = read::Entry::encode(&listed.synchronizer_id, &listed.json);
    for key in keys {
        if listed.active {
            stage.put(key, entry.clone());
        } else {
            stage.delete(key);
        }
    }
    Ok(())
}

/// The contract id at the end of a key of `A` or `F` whose fixed part is `prefix_len`
/// bytes long and is followed by the creation time.
pub(crate) fn contract_id_of(key: &[u8], prefix_len: usize) -> Option<String> {
    keys::decode_str(key.get(prefix_len + 8..)?).map(|(id, _)| id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_and_the_network_s_names_spell_the_templates() {
        let default = ScanTemplates::new(&crate::Config::default().names);
        assert_eq!(default.name(Kind::CoinRules), "Platform.CoinRules:CoinRules");
        assert_eq!(default.kind("Platform.Round:IssuingMiningRound"), Some(Kind::IssuingRound));
        let network = ScanTemplates::new(&Names { root: "Splice".into(), coin: "Amulet".into() });
        for (kind, name) in [
            (Kind::ExternalPartyCoinRules, "Splice.ExternalPartyAmuletRules:ExternalPartyAmuletRules"),
            (Kind::TransferPreapproval, "Splice.AmuletRules:TransferPreapproval"),
            (Kind::FeaturedAppRight, "Splice.Amulet:FeaturedAppRight"),
            (Kind::SvNodeState, "Splice.DSO.SvState:SvNodeState"),
            (Kind::AnsEntry, "Splice.Ans:AnsEntry"),
            (Kind::DevelopmentFundCoupon, "Splice.Amulet:UnclaimedDevelopmentFundCoupon"),
            (Kind::CoinAllocation, "Splice.AmuletAllocation:AmuletAllocation"),
        ] {
            assert_eq!(network.name(kind), name);
            assert_eq!(network.kind(name), Some(kind));
        }
        assert_eq!(network.kind("Platform.CoinRules:CoinRules"), None);
        assert_eq!(network.transfer_command(), "Splice.ExternalPartyAmuletRules:TransferCommand");
    }

    #[test]
    fn keys_sort_by_creation_and_give_back_their_contract_id() {
        let a = kind_key(Kind::CoinRules, 5, "zz");
        let b = kind_key(Kind::CoinRules, 6, "aa");
        assert!(a < b && a.starts_with(&kind_prefix(Kind::CoinRules)));
        assert_eq!(contract_id_of(&b, kind_prefix(Kind::CoinRules).len()).as_deref(), Some("aa"));
        let prefix = index_prefix(Index::AnsEntryByUser, &["alice::1", "a.ans"]);
        let key = index_key(Index::AnsEntryByUser, &["alice::1", "a.ans"], -3, "c\0d");
        assert!(key.starts_with(&prefix) && key.starts_with(&index_prefix(Index::AnsEntryByUser, &["alice::1"])));
        assert_eq!(contract_id_of(&key, prefix.len()).as_deref(), Some("c\0d"));
        // One receiver's key is never a prefix of another's.
        assert!(
            !index_prefix(Index::PreapprovalByReceiver, &["ab"])
                .starts_with(&index_prefix(Index::PreapprovalByReceiver, &["a"]))
        );
    }
}
