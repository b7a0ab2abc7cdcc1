//! Reading what [`super::ScanState`] keeps: a singleton, a list of one kind, a lookup,
//! each one scan, and where a contract is now, one more.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::model::error::Error;
use crate::state::ledger::contracts::{self, Location};
use crate::storage::store::{Scan, Store};

use super::{Index, Kind, ScanTemplates, contract_id_of, index_prefix, kind_prefix};

/// Most contracts of one kind a list reads ([`list`]). A network has a few of each
/// (rounds, node states) or a few hundred (featured apps, vote requests); more than
/// this is a 500 that names the kind, never a silently shortened list.
pub const MAX_LIST: u32 = 1000;

/// A stored entry of `A` or `F`: the synchronizer the contract was created on (its
/// length as two big-endian bytes, then the text) and the contract's rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The contract id.
    pub contract_id: String,
    /// The synchronizer the contract was created on, or first assigned to.
    pub created_on: String,
    /// The contract as a `Contract` object, JSON.
    pub json: Vec<u8>,
}

impl Entry {
    /// The stored form of a contract created on `created_on`, rendered as `json`.
    pub fn encode(created_on: &str, json: &[u8]) -> Vec<u8> {
        let length = u16::try_from(created_on.len()).unwrap_or(u16::MAX);
        let created_on = created_on.get(..usize::from(length)).unwrap_or("");
        let mut bytes = Vec::with_capacity(2 + created_on.len() + json.len());
        bytes.extend_from_slice(&length.to_be_bytes());
        bytes.extend_from_slice(created_on.as_bytes());
        bytes.extend_from_slice(json);
        bytes
    }

    /// The entry stored as `bytes` under `key`, whose fixed part (before the creation
    /// time) is `prefix_len` bytes.
    fn decode(key: &[u8], prefix_len: usize, bytes: &[u8]) -> Result<Self, Error> {
        let unreadable = || Error::Internal(format!("an unreadable scan state entry under {key:?}"));
        let contract_id = contract_id_of(key, prefix_len).ok_or_else(unreadable)?;
        let length = bytes.get(..2).and_then(|b| <[u8; 2]>::try_from(b).ok()).ok_or_else(unreadable)?;
        let end = 2 + usize::from(u16::from_be_bytes(length));
        let created_on = bytes.get(2..end).and_then(|b| core::str::from_utf8(b).ok()).ok_or_else(unreadable)?;
        let json = bytes.get(end..).ok_or_else(unreadable)?.to_vec();
        Ok(Entry { contract_id, created_on: created_on.into(), json })
    }

    /// The contract's payload (compact JSON), parsed.
    pub fn payload(&self) -> Result<serde_json::Value, Error> {
        let contract: serde_json::Value = serde_json::from_slice(&self.json)
            .map_err(|e| Error::Internal(format!("contract {}: an unreadable rendering: {e}", self.contract_id)))?;
        Ok(contract.get("payload").cloned().unwrap_or(serde_json::Value::Null))
    }

    /// Where the contract is now: its synchronizer (`Some`), or in flight (`None`). One
    /// store read.
    pub async fn synchronizer<S: Store>(&self, store: &S) -> Result<Option<String>, Error> {
        Ok(match contracts::location_from(store, &self.contract_id, &self.created_on).await? {
            Location::On(synchronizer) => Some(synchronizer),
            Location::InFlight => None,
        })
    }

    /// `{"contract": C, "domain_id": d}` (a `ContractWithState`; without `domain_id` when
    /// in flight), or without `contract` when `cached` (a `MaybeCachedContractWithState`
    /// whose contract the client holds). One store read, for the state.
    pub async fn with_state<S: Store>(&self, store: &S, cached: bool) -> Result<Vec<u8>, Error> {
        let synchronizer = self.synchronizer(store).await?;
        let mut out = Vec::with_capacity(self.json.len() + 96);
        out.push(b'{');
        if !cached {
            out.extend_from_slice(b"\"contract\":");
            out.extend_from_slice(&self.json);
        }
        if let Some(synchronizer) = synchronizer {
            if !cached {
                out.push(b',');
            }
            out.extend_from_slice(b"\"domain_id\":");
            out.extend_from_slice(&serde_json::to_vec(&synchronizer).map_err(|e| Error::Internal(format!("{e}")))?);
        }
        out.push(b'}');
        Ok(out)
    }
}

/// The singleton of `kind`: its latest creation (then its highest contract id), in one
/// reverse scan of limit 1.
pub async fn latest<S: Store>(store: &S, kind: Kind) -> Result<Option<Entry>, Error> {
    let prefix = kind_prefix(kind);
    let found = store.scan(&Scan::prefix(&prefix, 1).reversed()).await?;
    found.first().map(|(key, bytes)| Entry::decode(key, prefix.len(), bytes)).transpose()
}

/// Every active contract of `kind`, oldest first, in one scan; more than [`MAX_LIST`] is
/// a 500 that names the template (from `templates`).
pub async fn list<S: Store>(store: &S, kind: Kind, templates: &ScanTemplates) -> Result<Vec<Entry>, Error> {
    let prefix = kind_prefix(kind);
    let found = store.scan(&Scan::prefix(&prefix, MAX_LIST + 1)).await?;
    if found.len() > MAX_LIST as usize {
        return Err(Error::Internal(format!(
            "more than {MAX_LIST} active {} contracts; a list reads at most {MAX_LIST}",
            templates.name(kind)
        )));
    }
    found.iter().map(|(key, bytes)| Entry::decode(key, prefix.len(), bytes)).collect()
}

/// The contract of `index` under the key `texts`, the latest created if several are
/// active: one reverse scan of limit 1 within that key's prefix.
pub async fn lookup<S: Store>(store: &S, index: Index, texts: &[&str]) -> Result<Option<Entry>, Error> {
    let prefix = index_prefix(index, texts);
    let found = store.scan(&Scan::prefix(&prefix, 1).reversed()).await?;
    found.first().map(|(key, bytes)| Entry::decode(key, prefix.len(), bytes)).transpose()
}

/// Up to `limit` contracts of `index` whose keys start with `start` (an
/// [`index_prefix`], maybe extended by [`text_prefix`]): one scan, in key order.
pub async fn range<S: Store>(store: &S, index: Index, start: Vec<u8>, limit: u32) -> Result<Vec<Entry>, Error> {
    let end = crate::storage::store::prefix_end(&start);
    let scan = Scan { start, end, limit, reverse: false };
    let found = store.scan(&scan).await?;
    found
        .iter()
        .map(|(key, bytes)| {
            let fixed = fixed_len(key, index).ok_or_else(|| Error::Internal(format!("an unreadable {index:?} key")))?;
            Entry::decode(key, fixed, bytes)
        })
        .collect()
}

/// The length of the fixed part of a key of `index` (tag, index, its key texts).
fn fixed_len(key: &[u8], index: Index) -> Option<usize> {
    let mut at = 2;
    for _ in index.fields() {
        let (_, rest) = crate::storage::keys::decode_str(key.get(at..)?)?;
        at = key.len() - rest.len();
    }
    Some(at)
}

/// The escaped bytes of `text` as a key component without its terminator: every key
/// whose component starts with `text` starts with these bytes after its prefix.
pub fn text_prefix(mut key: Vec<u8>, text: &str) -> Vec<u8> {
    let component = crate::storage::keys::Key::new(0).str(text).into_bytes();
    // A component ends with the terminator 0x00 0x01.
    key.extend_from_slice(component.get(1..component.len().saturating_sub(2)).unwrap_or(&[]));
    key
}

/// Up to `limit` active contracts of `kind` created before `before` microseconds (all
/// when `None`), newest first, each with its creation time: one reverse scan.
pub async fn newest_before<S: Store>(
    store: &S,
    kind: Kind,
    before: Option<i64>,
    limit: u32,
) -> Result<Vec<(i64, Entry)>, Error> {
    let prefix = kind_prefix(kind);
    let end = match before {
        Some(micros) => crate::storage::keys::Key::new(crate::storage::keys::SCAN_CONTRACT)
            .byte(kind as u8)
            .i64(micros)
            .into_bytes(),
        None => crate::storage::store::prefix_end(&prefix).unwrap_or_default(),
    };
    let scan = Scan { start: prefix.clone(), end: Some(end), limit, reverse: true };
    let found = store.scan(&scan).await?;
    found
        .iter()
        .map(|(key, bytes)| {
            let created = crate::storage::keys::decode_i64(key, prefix.len())
                .ok_or_else(|| Error::Internal(format!("an unreadable {kind:?} key")))?;
            Ok((created, Entry::decode(key, prefix.len(), bytes)?))
        })
        .collect()
}
