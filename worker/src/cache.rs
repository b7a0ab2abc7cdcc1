//! A cache of update bodies in front of D1: the worker's [`Store`].
//!
//! Update bodies (keys of table `U`, [`ledger_node_core::keys`]) never change once
//! written: ingesting different content under a held update id is a 409 that writes
//! nothing. Only a write that deletes them (`POST /v0/admin/reset`) takes them back.
//! [`CachedStore`] reads a body from, in order,
//!
//! 1. the isolate's memory ([`memory`]): up to [`MEMORY_BYTES`], least recently used
//!    evicted first, filled by reads that went further and by writes of bodies;
//! 2. KV (the `CACHE` binding, shared by every isolate), under
//!    `body/<generation>/<key>`; a body read from D1 is put there after the response
//!    ([`CachedStore::flush_to_kv`]). Without the binding this tier is skipped;
//! 3. D1, which is authoritative.
//!
//! Absent keys are never cached (an update may be ingested later), and every key
//! outside `U`, every scan and every write go straight to D1. A read of many bodies at
//! once skips KV ([`KV_BODIES_PER_READ`]).
//!
//! ## Generations
//!
//! D1 keeps the cache *generation*, a random token in the one-row table
//! `cache_generation` (`migrations/0002_create_cache_generation.sql`). A write that
//! deletes bodies replaces it in the same D1 transaction, so KV entries written under
//! the old token are never read again. The isolate that wrote clears its memory and
//! takes the new token at once; every other isolate reads the token from D1 again when
//! the one it holds is [`memory::GENERATION_TTL_MS`] old, and clears its memory when it
//! changed. So after a reset, the isolate that made it serves no old body, and other
//! isolates stop within about a second.
//!
//! A body is read after the generation it is filed under was read, so an old body never
//! lands under a new token; a write of bodies reads the generation in its own
//! transaction and fills the memory under it; a fill that began before the memory was
//! cleared is dropped ([`memory`]'s epochs). The generation lives outside the `kv`
//! table because a reset deletes the whole of that.

mod memory;

use std::cell::RefCell;
use std::future::Future;

use futures_util::future::join_all;
use ledger_node_core::keys;
use ledger_node_core::store::{Entry, Op, Scan, Store, StoreError, WriteBatch, WriteError, prefix_end};
use ledger_node_core::time::Timestamp;
use serde::Deserialize;
use worker::kv::KvStore;
use worker::{D1Result, console_error};

use crate::d1::D1Store;
use memory::{IsolateCache, View};

/// The KV namespace binding of the second tier (`wrangler.toml`).
pub const KV_BINDING: &str = "CACHE";

/// The most bytes of bodies one isolate keeps in memory (an isolate has 128 MB).
pub const MEMORY_BYTES: usize = 32 << 20;

/// KV refuses longer keys; a body whose KV key would be longer skips that tier.
const MAX_KV_KEY_BYTES: usize = 512;

/// KV refuses larger values.
const MAX_KV_VALUE_BYTES: usize = 25 << 20;

/// The most bodies one read takes through KV. A read of more (an ingest batch reading
/// the bodies of the updates it re-sends) goes past KV both ways, to D1 in one round
/// trip: a Worker invocation may make at most 1,000 KV operations, and one a body
/// would be thousands.
const KV_BODIES_PER_READ: usize = 32;

thread_local! {
    /// The isolate's cache. Workers run one thread per isolate; the cell is borrowed
    /// only inside [`isolate`], which never awaits, so the borrow cannot clash.
    static ISOLATE: RefCell<IsolateCache> = RefCell::new(IsolateCache::new(MEMORY_BYTES));
}

/// Runs `f` on the isolate's cache.
fn isolate<R>(f: impl FnOnce(&mut IsolateCache) -> R) -> R {
    ISOLATE.with(|cell| f(&mut cell.borrow_mut()))
}

/// Whether `key` is an update body's, the only keys cached.
fn is_body(key: &[u8]) -> bool {
    key.first() == Some(&keys::UPDATE)
}

/// Whether `op` may delete a body.
fn deletes_bodies(op: &Op) -> bool {
    let bodies_end = prefix_end(&[keys::UPDATE]);
    match op {
        Op::Delete { key } => is_body(key),
        Op::DeleteRange { start, end } => {
            bodies_end.as_deref().is_none_or(|bodies_end| start.as_slice() < bodies_end)
                && end.as_deref().is_none_or(|end| end > [keys::UPDATE].as_slice())
        }
        Op::Put { .. } | Op::PutIfAbsent { .. } => false,
    }
}

/// The KV key of a body: `body/<generation>/<key>`, the key's bytes outside printable
/// ASCII (and `%`) written `%XX`. `None` if KV would refuse it.
fn kv_key(generation: &str, key: &[u8]) -> Option<String> {
    let mut name = format!("body/{generation}/");
    for &byte in key {
        if byte.is_ascii_graphic() && byte != b'%' {
            name.push(char::from(byte));
        } else {
            name.push_str(&format!("%{byte:02X}"));
        }
    }
    (name.len() <= MAX_KV_KEY_BYTES).then_some(name)
}

/// Reads the generation.
const READ_GENERATION: &str = "SELECT generation FROM cache_generation WHERE id = 0";

/// Replaces the generation with a fresh random one, and returns it.
const NEW_GENERATION: &str =
    "UPDATE cache_generation SET generation = lower(hex(randomblob(8))) WHERE id = 0 RETURNING generation";

/// A row of `cache_generation`.
#[derive(Deserialize)]
struct GenerationRow {
    generation: String,
}

/// The node's store in the worker: D1 with update bodies cached in memory and KV. See
/// the [module docs](self).
#[derive(Debug)]
pub struct CachedStore {
    d1: D1Store,
    kv: Option<KvStore>,
    /// The request's time, in milliseconds since the Unix epoch.
    now: u64,
    /// Bodies read from D1, to put into KV: `(KV key, body)`.
    kv_puts: RefCell<Vec<(String, Vec<u8>)>>,
}

impl CachedStore {
    /// The store over `d1`, with `kv` as the shared tier if bound, for a request
    /// that arrived at `now`.
    pub fn new(d1: D1Store, kv: Option<KvStore>, now: Timestamp) -> Self {
        let now = u64::try_from(now.micros() / 1000).unwrap_or_default();
        CachedStore { d1, kv, now, kv_puts: RefCell::new(Vec::new()) }
    }

    /// Puts the bodies this store read from D1 into KV; `None` if there are none. Run
    /// after the response (`Context::wait_until`), it costs the request nothing;
    /// failures are logged.
    pub fn flush_to_kv(&self) -> Option<impl Future<Output = ()> + 'static> {
        let puts = self.kv_puts.take();
        let kv = self.kv.clone()?;
        (!puts.is_empty()).then_some(async move {
            for (name, body) in puts {
                let put = match kv.put_bytes(&name, &body) {
                    Ok(put) => put.execute().await,
                    Err(e) => Err(e),
                };
                if let Err(e) = put {
                    console_error!("body cache: putting {name} into KV: {e}");
                }
            }
        })
    }

    /// The view to read bodies with: the generation, read again from D1 when the one
    /// held is too old. `None` when a reset overtook that read (read past the caches).
    async fn view(&self) -> Result<Option<View>, StoreError> {
        let (view, epoch) = isolate(|cache| (cache.view(self.now), cache.epoch()));
        if view.is_some() {
            return Ok(view);
        }
        let generation = self
            .d1
            .database()
            .prepare(READ_GENERATION)
            .first::<String>(Some("generation"))
            .await
            .map_err(|e| StoreError::new(format!("D1: reading the cache generation: {e}")))?
            .ok_or_else(|| {
                StoreError::new("D1: the table cache_generation is empty; apply the migrations in worker/migrations")
            })?;
        Ok(isolate(|cache| {
            cache.learned(generation, self.now, epoch)?;
            cache.view(self.now)
        }))
    }

    /// The values of `keys`, bodies through the caches.
    async fn read(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let Some(view) = self.view().await? else {
            return self.d1.get_many(keys).await;
        };
        let mut found: Vec<Option<Vec<u8>>> =
            isolate(|cache| keys.iter().map(|key| if is_body(key) { cache.get(key) } else { None }).collect());
        let kv = self.kv.as_ref().filter(|_| keys.iter().filter(|key| is_body(key)).count() <= KV_BODIES_PER_READ);

        // KV, for the bodies memory did not have.
        if let Some(kv) = kv {
            let wanted: Vec<(usize, String)> = missing(keys, &found)
                .filter(|(_, key)| is_body(key))
                .filter_map(|(at, key)| Some((at, kv_key(&view.generation, key)?)))
                .collect();
            let reads = join_all(wanted.iter().map(|(_, name)| kv.get(name).bytes())).await;
            for ((at, name), read) in wanted.into_iter().zip(reads) {
                let body = match read {
                    Ok(body) => body,
                    Err(e) => {
                        console_error!("body cache: reading {name} from KV: {e}");
                        None
                    }
                };
                if let (Some(body), Some(slot), Some(key)) = (body, found.get_mut(at), keys.get(at)) {
                    isolate(|cache| cache.fill(view.epoch, key.to_vec(), body.clone()));
                    *slot = Some(body);
                }
            }
        }

        // D1, for the rest.
        let rest: Vec<(usize, &[u8])> = missing(keys, &found).collect();
        if rest.is_empty() {
            return Ok(found);
        }
        let rest_keys: Vec<&[u8]> = rest.iter().map(|(_, key)| *key).collect();
        let values = self.d1.get_many(&rest_keys).await?;
        for ((at, key), value) in rest.into_iter().zip(values) {
            if let Some(body) = &value
                && is_body(key)
            {
                isolate(|cache| cache.fill(view.epoch, key.to_vec(), body.clone()));
                if kv.is_some()
                    && body.len() <= MAX_KV_VALUE_BYTES
                    && let Some(name) = kv_key(&view.generation, key)
                {
                    self.kv_puts.borrow_mut().push((name, body.clone()));
                }
            }
            if let Some(slot) = found.get_mut(at) {
                *slot = value;
            }
        }
        Ok(found)
    }

    /// Applies `batch`, which deletes bodies, together with a new generation.
    async fn write_deleting_bodies(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        let new_generation = self.d1.database().prepare(NEW_GENERATION);
        let written = self.d1.write_with(batch, vec![new_generation]).await;
        let generation = written.as_deref().ok().and_then(generation_of);
        isolate(|cache| cache.bodies_deleted(generation, self.now));
        written.map(drop)
    }
}

/// The positions and keys of `keys` whose value is not `found` yet.
fn missing<'a, 'k>(keys: &'a [&'k [u8]], found: &'a [Option<Vec<u8>>]) -> impl Iterator<Item = (usize, &'k [u8])> + 'a {
    keys.iter().zip(found).enumerate().filter(|(_, (_, value))| value.is_none()).map(|(at, (key, _))| (at, *key))
}

impl Store for CachedStore {
    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        if !is_body(key) {
            return self.d1.get(key).await;
        }
        Ok(self.read(&[key]).await?.into_iter().next().flatten())
    }

    async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        if !keys.iter().any(|key| is_body(key)) {
            return self.d1.get_many(keys).await;
        }
        self.read(keys).await
    }

    async fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        self.d1.scan(scan).await
    }

    async fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        if batch.ops.iter().any(deletes_bodies) {
            return self.write_deleting_bodies(batch).await;
        }
        let bodies = || {
            batch.ops.iter().filter_map(|op| match op {
                Op::Put { key, value } | Op::PutIfAbsent { key, value } if is_body(key) => Some((key, value)),
                _ => None,
            })
        };
        if bodies().next().is_none() {
            return self.d1.write(batch).await;
        }
        // The generation is read in the write's transaction: the bodies written belong
        // to it, and a fresh isolate need not drop them at its first read.
        let epoch = isolate(|cache| cache.epoch());
        let results = self.d1.write_with(batch, vec![self.d1.database().prepare(READ_GENERATION)]).await?;
        if let Some(generation) = generation_of(&results) {
            isolate(|cache| {
                if let Some(epoch) = cache.learned(generation, self.now, epoch) {
                    for (key, value) in bodies() {
                        cache.fill(epoch, key.clone(), value.clone());
                    }
                }
            });
        }
        Ok(())
    }
}

/// The generation in the rows of the first of `results`.
fn generation_of(results: &[D1Result]) -> Option<String> {
    let rows = results.first()?.results::<GenerationRow>().ok()?;
    rows.into_iter().next().map(|row| row.generation)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body_key(id: &str, encoding: u8) -> Vec<u8> {
        keys::Key::new(keys::UPDATE).str(id).byte(encoding).into_bytes()
    }

    #[test]
    fn only_update_bodies_are_cached() {
        assert!(is_body(&body_key("tx-1", 0)));
        assert!(!is_body(&keys::Key::new(keys::UPDATE_HASH).str("tx-1").into_bytes()));
        assert!(!is_body(&[keys::GENERATION]));
        assert!(!is_body(b""));
    }

    #[test]
    fn deletes_that_reach_the_bodies_are_recognised() {
        let range =
            |start: &[u8], end: Option<&[u8]>| Op::DeleteRange { start: start.to_vec(), end: end.map(<[u8]>::to_vec) };
        // The reset.
        assert!(deletes_bodies(&range(b"", None)));
        assert!(deletes_bodies(&range(b"T", Some(b"V"))));
        assert!(deletes_bodies(&range(b"U", Some(b"U\x01"))));
        assert!(deletes_bodies(&Op::Delete { key: body_key("tx-1", 1) }));
        // The storage check's scratch range, and neighbours of U.
        assert!(!deletes_bodies(&range(&[0xff, b's'], Some(&[0xff, b't']))));
        assert!(!deletes_bodies(&range(b"", Some(b"U"))));
        assert!(!deletes_bodies(&range(b"V", None)));
        assert!(!deletes_bodies(&Op::Delete { key: b"H".to_vec() }));
        assert!(!deletes_bodies(&Op::Put { key: body_key("tx-1", 0), value: vec![] }));
    }

    #[test]
    fn kv_keys_carry_the_generation_and_escape_the_key() {
        assert_eq!(kv_key("0a1b", &body_key("tx-1", 1)), Some("body/0a1b/Utx-1%00%01%01".to_owned()));
        assert_eq!(kv_key("g", b"U%/ z"), Some("body/g/U%25/%20z".to_owned()));
        assert_eq!(kv_key("g", &[b'U'; 600]), None);
    }
}
