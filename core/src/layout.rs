//! The logical layout version of the keyspace: which build's data a store holds.
//!
//! The keyspace ([`crate::keys`], and the modules that own its tables) is the core's,
//! and the same in every backend. A build reads only the layout it writes, so a store
//! carries the version of that layout, [`VERSION`], under [`KEY`], and every host runs
//! [`check`] on its store before it serves from it (the native host when it opens a
//! store, the worker once per isolate):
//!
//! - a store holding none of the node's data gets this build's version;
//! - a store holding this build's version passes;
//! - a store holding another version, or the node's data without a version (written by
//!   a build from before the version was stored), is refused with a [`Refused`] error
//!   that names both versions and what to do: ingest the history again into a new store.
//!
//! [`VERSION`] changes with every change of the keyspace that a build of the earlier
//! version would misread, or that would misread what such a build wrote: a new table
//! the queries rely on being complete, a changed key or value encoding, a table moved.
//! It says nothing about how a backend stores the keys physically: the native store
//! keeps a version of its own for that.
//!
//! The key begins with `0x00`, a byte no table tag is (the tags are ASCII capitals and
//! the scratch space is `0xff`), so no table's scan meets it. The reset
//! ([`crate::admin::reset`]) writes it again in the batch that empties the store, so a
//! reset store still says what it is. A store holds the node's data when it holds an
//! ingest generation ([`crate::keys::GENERATION`]): every ingest batch and scheduled job
//! that writes anything writes one, and the wallet writes only for users that ingest
//! created. On a store with a version the check is one read; on one without, one read
//! and a scan of the generation's table (limit 1), then the write of the version.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::keys;
use crate::store::{Scan, Store, StoreError, WriteBatch, WriteError};

/// The layout version this build reads and writes.
pub const VERSION: u32 = 1;

/// Where a store keeps its layout version (the value: the version in decimal ASCII).
pub const KEY: &[u8] = b"\x00layout";

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

/// `stored` against [`VERSION`].
fn compare(stored: &[u8]) -> Result<Checked, Refused> {
    let text = String::from_utf8_lossy(stored);
    match text.parse::<u32>() {
        Ok(VERSION) => Ok(Checked::Current),
        Ok(other) => Err(Refused::Other { found: alloc::format!("{other}") }),
        Err(_) => Err(Refused::Other { found: alloc::format!("{text:?}") }),
    }
}

/// Adds the layout version to `batch` (after whatever it deletes).
pub fn stamp(batch: &mut WriteBatch) {
    batch.put(KEY.to_vec(), stored_version());
}

/// Checks `store`'s layout version, giving an empty store this build's: see the
/// module's docs. Safe to run from several processes (or isolates) at once: the
/// version is written only if absent, and a store another one stamped meanwhile is
/// read again.
pub async fn check<S: Store>(store: &S) -> Result<Checked, Refused> {
    if let Some(stored) = store.get(KEY).await? {
        return compare(&stored);
    }
    if !store.scan(&Scan::prefix(&[keys::GENERATION], 1)).await?.is_empty() {
        return Err(Refused::Unversioned);
    }
    let mut batch = WriteBatch::new();
    batch.put_if_absent(KEY.to_vec(), stored_version());
    match store.write(&batch).await {
        Ok(()) => Ok(Checked::Stamped),
        Err(WriteError::PreconditionFailed { .. }) => match store.get(KEY).await? {
            Some(stored) => compare(&stored),
            None => Err(Refused::Store(StoreError::new("the layout version was present, then absent"))),
        },
        Err(WriteError::Store(e)) => Err(Refused::Store(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::block_on;
    use crate::store::MemoryStore;

    fn put(store: &MemoryStore, key: &[u8], value: &[u8]) {
        let mut batch = WriteBatch::new();
        batch.put(key.to_vec(), value.to_vec());
        block_on(store.write(&batch)).expect("written");
    }

    #[test]
    fn a_store_without_data_gets_this_version_and_then_passes() {
        let store = MemoryStore::new();
        assert_eq!(block_on(check(&store)), Ok(Checked::Stamped));
        assert_eq!(store.get_now(KEY), Some(alloc::format!("{VERSION}").into_bytes()));
        assert_eq!(block_on(check(&store)), Ok(Checked::Current));
        assert_eq!(block_on(check(&store)), Ok(Checked::Current));
    }

    #[test]
    fn the_scratch_space_alone_is_no_data() {
        let store = MemoryStore::new();
        put(&store, b"\xffstore-check/00/a", b"");
        assert_eq!(block_on(check(&store)), Ok(Checked::Stamped));
    }

    #[test]
    fn another_version_is_refused_naming_both_and_what_to_do() {
        let store = MemoryStore::new();
        put(&store, KEY, b"7");
        let refused = block_on(check(&store)).expect_err("refused");
        assert_eq!(refused, Refused::Other { found: "7".into() });
        let message = alloc::format!("{refused}");
        assert!(message.contains("layout version 7"), "{message}");
        assert!(message.contains(&alloc::format!("layout version {VERSION} only")), "{message}");
        assert!(message.contains("ingest the history again into a new store"), "{message}");
        assert_eq!(store.get_now(KEY), Some(b"7".to_vec()), "the store is left as it was");

        put(&store, KEY, b"v2\x00");
        let message = alloc::format!("{}", block_on(check(&store)).expect_err("refused"));
        assert!(message.contains("layout version \"v2\\0\""), "{message}");
    }

    #[test]
    fn data_without_a_version_is_refused_and_left_as_it_was() {
        let store = MemoryStore::new();
        put(&store, &keys::Key::new(keys::GENERATION).i64(3).into_bytes(), b"");
        let refused = block_on(check(&store)).expect_err("refused");
        assert_eq!(refused, Refused::Unversioned);
        let message = alloc::format!("{refused}");
        assert!(message.contains("without a layout version"), "{message}");
        assert!(message.contains(&alloc::format!("layout version {VERSION} only")), "{message}");
        assert!(message.contains("ingest the history again into a new store"), "{message}");
        assert_eq!(store.get_now(KEY), None);
    }

    #[test]
    fn an_ingested_store_holds_data_and_a_reset_keeps_the_version() {
        use crate::{Body, Env, Method, Request, config::Config};
        let store = MemoryStore::new();
        let config = Config { admin_token: Some("t".into()), allow_reset: true, ..Config::default() };
        let env = Env { now: crate::time::Timestamp::UNIX_EPOCH, entropy: [0; 32], config: &config };
        let mut ingest = Request::new(Method::Post, "/v0/admin/ingest");
        ingest.headers.push(("authorization".into(), "Bearer t".into()));
        ingest.body = Body::Complete(b"{\"wallet_user\":{\"user_id\":\"u\",\"party_id\":\"p\"}}\n".to_vec());
        let response = block_on(crate::handle(&ingest, &env, &store));
        assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
        // An ingest into a store without a version: data, refused.
        assert_eq!(block_on(check(&store)), Err(Refused::Unversioned));

        let mut reset = Request::new(Method::Post, "/v0/admin/reset");
        reset.headers.push(("authorization".into(), "Bearer t".into()));
        let response = block_on(crate::handle(&reset, &env, &store));
        assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
        // The reset store says what it is, and an ingest into it keeps passing.
        assert_eq!(block_on(check(&store)), Ok(Checked::Current));
        let response = block_on(crate::handle(&ingest, &env, &store));
        assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
        assert_eq!(block_on(check(&store)), Ok(Checked::Current));
    }
}
