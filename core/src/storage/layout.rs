//! The logical layout version of the keyspace: which build's data a store holds.
//!
//! The keyspace ([`crate::storage::keys`], and the modules that own its tables) is the core's,
//! and the same in every backend. A build reads only the layout it writes, so a store
//! carries the version of that layout, [`VERSION`], under [`KEY`], and every host runs
//! [`check`] on its store before it serves from it (the native host when it opens a
//! store, the worker once per isolate):
//!
//! - a store holding none of the node's data gets this build's version, and the names
//!   the node is configured with ([`Names`]: the module root and the currency word);
//! - a store holding this build's version and the configured names passes;
//! - a store holding another version, or the node's data without a version (written by
//!   a build from before the version was stored), is refused with a [`Refused`] error
//!   that names both versions and what to do: ingest the history again into a new store;
//! - a store ingested under other names is refused with a [`Refused::Names`] error that
//!   names both spellings. The names decide which templates the derived state follows
//!   (closed rounds, price votes, the registry's contracts) at ingest, so a store read
//!   under other names would answer as if those contracts never existed: silently
//!   empty rounds and votes, not an error.
//!
//! [`VERSION`] changes with every change of the keyspace that a build of the earlier
//! version would misread, or that would misread what such a build wrote: a new table
//! the queries rely on being complete, a changed key or value encoding, a table moved.
//! It says nothing about how a backend stores the keys physically: the native store
//! keeps a version of its own for that.
//!
//! The names are kept under [`NAMES_KEY`], written with the version in one batch (the
//! value: `root=<root> coin=<coin>`). Both keys begin with `0x00`, a byte no table tag
//! is (the tags are ASCII capitals and
//! the scratch space is `0xff`), so no table's scan meets them. The reset
//! ([`crate::api::admin::reset`]) writes them again in the batch that empties the store, so a
//! reset store still says what it is. A store holds the node's data when it holds an
//! ingest generation ([`crate::storage::keys::GENERATION`]): every ingest batch and scheduled job
//! that writes anything writes one, and the wallet writes only for users that ingest
//! created. On a store with a version the check is one read of both keys; on one
//! without, that read and a scan of the generation's table (limit 1), then the write of
//! the version and the names.
//!
//! Version 2 added the names; a store of version 1 does not say which names it was
//! ingested under, and is refused as another layout. Version 3 stores a contract's
//! record in one strict form ([`crate::state::ledger::contracts`]): a created contract's
//! fields flat, without the nesting and the `archived` flag that version 2 kept; and it
//! adds the contracts a validator and a wallet read ([`crate::state::scan`]), which a
//! store of version 2 does not hold. Version 4 stores a hosting a follower learned from
//! its upstreams with the time it learned it ([`crate::state::network::StoredHosting`]),
//! keeps a reassigned contract's reassignments as one record of where it is
//! (`R contract_id`) instead of one key per event, and adds the token registry's index
//! and the coin's total supply ([`crate::state::registry`]): forms a build of version 3
//! cannot read. Version 5 stores each update once, in its binary form, instead of its
//! two JSON bodies ([`crate::state::ledger::updates`]), and keeps the contracts a
//! follower of the network's public API is still to take a blob for
//! ([`crate::state::blobs`]), which a store of version 4 lacks.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::model::config::Names;
use crate::model::error::StoreError;
use crate::storage::keys;
use crate::storage::store::{Scan, Store, WriteBatch, WriteError};

/// The layout version this build reads and writes.
pub const VERSION: u32 = 5;

/// Where a store keeps its layout version (the value: the version in decimal ASCII).
pub const KEY: &[u8] = b"\x00layout";

/// Where a store keeps the names it was ingested under (the value: [`stored_names`]).
pub const NAMES_KEY: &[u8] = b"\x00names";

/// What [`check`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    /// The store held none of the node's data; it now holds [`VERSION`].
    Stamped,
    /// The store holds [`VERSION`].
    Current,
}

/// Why a store is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The store holds another layout version (as stored, when it is not a number).
    Other {
        /// The stored version.
        found: String,
    },
    /// The store holds the node's data but no layout version.
    Unversioned,
    /// The store was ingested under other names than the configured ones.
    Names {
        /// The names the store holds, as stored (`None`: it holds none).
        stored: Option<String>,
        /// The configured names, spelled as they would be stored.
        configured: String,
    },
    /// The store could not be read or written.
    Store(StoreError),
}

/// What an operator does about a store of another layout.
const ADVICE: &str = "ingest the history again into a new store (natively a new --db directory; for the worker, \
                      a new D1 database), or run a build that reads this store's layout";

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Other { found } => write!(
                f,
                "the store holds the node's data in layout version {found}, and this build reads layout version \
                 {VERSION} only: {ADVICE}"
            ),
            Refused::Unversioned => write!(
                f,
                "the store holds the node's data without a layout version (a build from before layout versions \
                 wrote it), and this build reads layout version {VERSION} only: {ADVICE}"
            ),
            Refused::Names { stored: Some(stored), configured } => write!(
                f,
                "the store was ingested under the names {stored}, and this node is configured with {configured} \
                 ({} and {}): serve it with the names it was ingested under, or ingest the history again \
                 into a new store under these",
                crate::model::config::NAMES_ROOT,
                crate::model::config::NAMES_COIN
            ),
            Refused::Names { stored: None, configured } => write!(
                f,
                "the store holds layout version {VERSION} but no record of the names it was ingested under, so \
                 it cannot be served under {configured}: {ADVICE}"
            ),
            Refused::Store(e) => write!(f, "reading the store's layout version: {e}"),
        }
    }
}

impl From<StoreError> for Refused {
    fn from(e: StoreError) -> Self {
        Refused::Store(e)
    }
}

/// The stored form of [`VERSION`].
fn stored_version() -> Vec<u8> {
    alloc::format!("{VERSION}").into_bytes()
}

/// The stored form of `names`: `root=<root> coin=<coin>` (configured names are ASCII
/// letters, digits and `_`, so the form is unambiguous).
pub fn stored_names(names: &Names) -> String {
    alloc::format!("root={} coin={}", names.root, names.coin)
}

/// The stored version and names against [`VERSION`] and `names`.
fn compare(version: &[u8], stored_names_value: Option<&[u8]>, names: &Names) -> Result<Checked, Refused> {
    let text = String::from_utf8_lossy(version);
    match text.parse::<u32>() {
        Ok(VERSION) => {}
        Ok(other) => return Err(Refused::Other { found: alloc::format!("{other}") }),
        Err(_) => return Err(Refused::Other { found: alloc::format!("{text:?}") }),
    }
    let configured = stored_names(names);
    match stored_names_value {
        Some(stored) if stored == configured.as_bytes() => Ok(Checked::Current),
        stored => Err(Refused::Names { stored: stored.map(|s| String::from_utf8_lossy(s).into_owned()), configured }),
    }
}

/// Adds the layout version and `names` to `batch` (after whatever it deletes).
pub fn stamp(batch: &mut WriteBatch, names: &Names) {
    batch.put(KEY.to_vec(), stored_version());
    batch.put(NAMES_KEY.to_vec(), stored_names(names).into_bytes());
}

/// Reads the stored version and names, and compares them when there is a version.
async fn read<S: Store>(store: &S, names: &Names) -> Result<Option<Result<Checked, Refused>>, Refused> {
    let mut stored = store.get_many(&[KEY, NAMES_KEY]).await?.into_iter();
    let (version, stored_names_value) = (stored.next().flatten(), stored.next().flatten());
    Ok(version.map(|version| compare(&version, stored_names_value.as_deref(), names)))
}

/// Checks `store`'s layout version and names against this build's and `names`, giving
/// an empty store both: see the module's docs. Safe to run from several processes (or
/// isolates) at once: the version and names are written only if the version is
/// absent, and a store another one stamped meanwhile is read again.
pub async fn check<S: Store>(store: &S, names: &Names) -> Result<Checked, Refused> {
    if let Some(checked) = read(store, names).await? {
        return checked;
    }
    if !store.scan(&Scan::prefix(&[keys::GENERATION], 1)).await?.is_empty() {
        return Err(Refused::Unversioned);
    }
    let mut batch = WriteBatch::new();
    batch.put_if_absent(KEY.to_vec(), stored_version());
    batch.put(NAMES_KEY.to_vec(), stored_names(names).into_bytes());
    match store.write(&batch).await {
        Ok(()) => Ok(Checked::Stamped),
        Err(WriteError::PreconditionFailed { .. }) => match read(store, names).await? {
            Some(checked) => checked,
            None => Err(Refused::Store(StoreError::new("the layout version was present, then absent"))),
        },
        Err(WriteError::Store(e)) => Err(Refused::Store(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::exec::block_on;
    use crate::storage::store::MemoryStore;

    fn default_names() -> Names {
        crate::Config::default().names
    }

    fn amulet() -> Names {
        Names { root: "Splice".into(), coin: "Amulet".into() }
    }

    fn put(store: &MemoryStore, key: &[u8], value: &[u8]) {
        let mut batch = WriteBatch::new();
        batch.put(key.to_vec(), value.to_vec());
        block_on(store.write(&batch)).expect("written");
    }

    #[test]
    fn a_store_without_data_gets_this_version_and_then_passes() {
        let store = MemoryStore::new();
        assert_eq!(block_on(check(&store, &default_names())), Ok(Checked::Stamped));
        assert_eq!(store.get_now(KEY), Some(alloc::format!("{VERSION}").into_bytes()));
        assert_eq!(store.get_now(NAMES_KEY), Some(b"root=Platform coin=Coin".to_vec()));
        assert_eq!(block_on(check(&store, &default_names())), Ok(Checked::Current));
        assert_eq!(block_on(check(&store, &default_names())), Ok(Checked::Current));
    }

    #[test]
    fn the_scratch_space_alone_is_no_data() {
        let store = MemoryStore::new();
        put(&store, b"\xffstore-check/00/a", b"");
        assert_eq!(block_on(check(&store, &default_names())), Ok(Checked::Stamped));
    }

    #[test]
    fn another_version_is_refused_naming_both_and_what_to_do() {
        let store = MemoryStore::new();
        put(&store, KEY, b"7");
        put(&store, NAMES_KEY, b"root=Platform coin=Coin");
        let refused = block_on(check(&store, &default_names())).expect_err("refused");
        assert_eq!(refused, Refused::Other { found: "7".into() });
        let message = alloc::format!("{refused}");
        assert!(message.contains("layout version 7"), "{message}");
        assert!(message.contains(&alloc::format!("layout version {VERSION} only")), "{message}");
        assert!(message.contains("ingest the history again into a new store"), "{message}");
        assert_eq!(store.get_now(KEY), Some(b"7".to_vec()), "the store is left as it was");

        put(&store, KEY, b"v2\x00");
        let message = alloc::format!("{}", block_on(check(&store, &default_names())).expect_err("refused"));
        assert!(message.contains("layout version \"v2\\0\""), "{message}");
    }

    #[test]
    fn a_store_ingested_under_other_names_is_refused_naming_both() {
        let store = MemoryStore::new();
        assert_eq!(block_on(check(&store, &amulet())), Ok(Checked::Stamped));
        assert_eq!(store.get_now(NAMES_KEY), Some(b"root=Splice coin=Amulet".to_vec()));
        assert_eq!(block_on(check(&store, &amulet())), Ok(Checked::Current));

        let refused = block_on(check(&store, &default_names())).expect_err("refused");
        assert_eq!(
            refused,
            Refused::Names {
                stored: Some("root=Splice coin=Amulet".into()),
                configured: "root=Platform coin=Coin".into()
            }
        );
        let message = alloc::format!("{refused}");
        assert!(message.contains("ingested under the names root=Splice coin=Amulet"), "{message}");
        assert!(message.contains("configured with root=Platform coin=Coin"), "{message}");
        assert!(message.contains("LEDGER_NODE_NAMES_ROOT"), "{message}");
        assert_eq!(store.get_now(NAMES_KEY), Some(b"root=Splice coin=Amulet".to_vec()), "left as it was");
        // Only the currency word differs: still refused.
        let other_coin = Names { root: "Splice".into(), coin: "Coin".into() };
        assert!(matches!(block_on(check(&store, &other_coin)), Err(Refused::Names { .. })));
    }

    #[test]
    fn a_version_without_names_is_refused() {
        let store = MemoryStore::new();
        put(&store, KEY, alloc::format!("{VERSION}").as_bytes());
        let refused = block_on(check(&store, &default_names())).expect_err("refused");
        assert_eq!(refused, Refused::Names { stored: None, configured: "root=Platform coin=Coin".into() });
        assert!(alloc::format!("{refused}").contains("no record of the names"), "{refused}");
    }

    #[test]
    fn data_without_a_version_is_refused_and_left_as_it_was() {
        let store = MemoryStore::new();
        put(&store, &keys::Key::new(keys::GENERATION).i64(3).into_bytes(), b"");
        let refused = block_on(check(&store, &default_names())).expect_err("refused");
        assert_eq!(refused, Refused::Unversioned);
        let message = alloc::format!("{refused}");
        assert!(message.contains("without a layout version"), "{message}");
        assert!(message.contains(&alloc::format!("layout version {VERSION} only")), "{message}");
        assert!(message.contains("ingest the history again into a new store"), "{message}");
        assert_eq!(store.get_now(KEY), None);
    }

    #[test]
    fn an_ingested_store_holds_data_and_a_reset_keeps_the_version() {
        use crate::{Body, Config, Env, Method, Request};
        let store = MemoryStore::new();
        let config = Config { admin_token: Some("t".into()), allow_reset: true, ..Config::default() };
        let env = Env { now: crate::model::time::Timestamp::UNIX_EPOCH, entropy: [0; 32], config: &config };
        let mut ingest = Request::new(Method::Post, "/v0/admin/ingest");
        ingest.headers.push(("authorization".into(), "Bearer t".into()));
        ingest.body = Body::Complete(b"{\"wallet_user\":{\"user_id\":\"u\",\"party_id\":\"p\"}}\n".to_vec());
        let response = block_on(crate::handle(&ingest, &env, &store));
        assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
        // An ingest into a store without a version: data, refused.
        assert_eq!(block_on(check(&store, &default_names())), Err(Refused::Unversioned));

        let mut reset = Request::new(Method::Post, "/v0/admin/reset");
        reset.headers.push(("authorization".into(), "Bearer t".into()));
        let response = block_on(crate::handle(&reset, &env, &store));
        assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
        // The reset store says what it is, names included, and an ingest into it keeps passing.
        assert_eq!(store.get_now(NAMES_KEY), Some(b"root=Platform coin=Coin".to_vec()));
        assert_eq!(block_on(check(&store, &default_names())), Ok(Checked::Current));
        let response = block_on(crate::handle(&ingest, &env, &store));
        assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
        assert_eq!(block_on(check(&store, &default_names())), Ok(Checked::Current));
    }
}
