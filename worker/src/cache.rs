//! The worker's [`Store`]: D1 for the node's state, R2 for update bodies, and a cache
//! of the bodies in front of R2.
//!
//! Update bodies (keys of table `U`) are read one key at a time and never change once
//! written, as the core declares ([`ledger_node_core::storage::keys::TABLES`]): ingesting
//! different content under a held update id is a 409 that writes nothing. Only a reset
//! (`POST /v0/admin/reset`, which deletes every key) takes them back. They are most of
//! what the node stores, so they live in the R2 bucket bound as `BODIES` ([`crate::r2`])
//! and D1 keeps everything else. [`CachedStore`] reads a body from, in order,
//!
//! 1. the isolate's memory ([`memory`]): up to [`MEMORY_BYTES`], evicted by
//!    `quick_cache`'s policy (a body read again outlasts bodies read once), filled by
//!    reads that went further and by writes of a few bodies
//!    ([`MAX_BODIES_FILLED_BY_WRITE`]);
//! 2. KV (the `CACHE` binding, shared by every isolate), under
//!    `body/<generation>/<key>`; a body read from R2 is put there after the response
//!    ([`CachedStore::flush_to_kv`]). Without the binding this tier is skipped;
//! 3. R2, under `bodies/<generation>/<key>`, together with (in the same moment, one
//!    round trip) the update's hash in D1 (`H update_id`, [`ledger_node_core::state::ledger`]):
//!    a body is served only while D1 holds its update, so an object that a failed ingest
//!    left behind is never read.
//!
//! The same memory keeps the values the core remembers (its port's
//! [`Store::remember`] and [`Store::recall`], rendered bodies): up to
//! [`REMEMBERED_BYTES`], apart from the bodies ([`memory`] says why), never in KV or
//! R2. A value is kept only if the isolate's memory was not cleared since the first
//! read of the request that offered it (since that request's own last write that
//! forgets, after which it reads the new state), and a write of this isolate that may
//! remove data a value was computed from
//! ([`ledger_node_core::storage::store::forgets_remembered`]) forgets them all. Writes
//! of other isolates cannot reach this memory; the only one that can remove such data
//! is the reset, which replaces the generation, and this isolate stops recalling within
//! about a second of it, as it stops serving bodies (below).
//!
//! Absent keys are never cached (an update may be ingested later), and every key
//! outside `U`, every scan and every other write go to D1 alone. A read of many bodies
//! at once skips KV ([`KV_BODIES_PER_READ`]).
//!
//! ## Writes
//!
//! A write batch that puts bodies is applied in two steps: the bodies are put into R2
//! first, under the generation just read from D1, then the rest of the batch is one D1
//! transaction, which also checks that the generation is still the one the bodies were
//! put under (a reset in between rolls it back). So D1 never holds an update whose
//! body R2 lacks; an interrupted batch leaves at most objects that nothing serves, and
//! running it again puts the same bytes under the same names. (One case this order
//! does not cover: two ingests at once carrying *different* content for one new update
//! id. D1 takes one of them, and R2 may be left with the other's body under that id.
//! History comes from one upstream, where an update id names one content; the admin
//! must not feed two conflicting histories at once.) The only deletion of
//! bodies the core makes is the reset's, of every key: it replaces the generation,
//! which makes every object of the old one unreachable. A batch that would delete some
//! bodies but not all is refused.
//!
//! ## Generations
//!
//! D1 keeps the *generation*, a random token in the one-row table `cache_generation`
//! (`migrations/0002_create_cache_generation.sql`). It is part of every R2 object name
//! and every KV key of a body. A reset replaces it in its D1 transaction, so objects and
//! KV entries written under the old token are never read again. The isolate that reset
//! clears its memory and takes the new token at once; every other isolate reads the
//! token from D1 again when the one it holds is [`memory::GENERATION_TTL_MS`] old, and
//! clears its memory when it changed. So after a reset, the isolate that made it serves
//! no old body, and other isolates stop within about a second.
//!
//! A body is read after the generation it is filed under was read, so an old body never
//! lands under a new token; a write of bodies fills the memory under the generation it
//! put them under; a fill that began before the memory was cleared is dropped
//! ([`memory`]'s epochs). The generation lives outside the `kv` table because a reset
//! deletes the whole of that.

mod memory;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;

use futures_util::future::{join, join_all};
use ledger_node_core::model::error::StoreError;
use ledger_node_core::model::time::Timestamp;
use ledger_node_core::state::ledger::updates::hash_key;
use ledger_node_core::storage::keys;
use ledger_node_core::storage::store::{
    Entry, Op, Scan, Store, WriteBatch, WriteError, forgets_remembered, prefix_end,
};
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::kv::KvStore;
use worker::{D1PreparedStatement, D1Result, console_error};

use crate::d1::D1Store;
use crate::r2::{BodyBucket, escape_key};
use memory::{IsolateCache, View};

/// The KV namespace binding of the second tier (`wrangler.toml`).
pub const KV_BINDING: &str = "CACHE";

/// The most bytes of bodies one isolate keeps in memory (an isolate has 128 MB).
pub const MEMORY_BYTES: usize = 32 << 20;

/// The most bytes of remembered values (rendered bodies) one isolate keeps in memory,
/// beside [`MEMORY_BYTES`] of bodies.
pub const REMEMBERED_BYTES: usize = 16 << 20;

/// KV refuses longer keys; a body whose KV key would be longer skips that tier.
const MAX_KV_KEY_BYTES: usize = 512;

/// KV refuses larger values.
const MAX_KV_VALUE_BYTES: usize = 25 << 20;

/// The most bodies one read takes through KV. A read of more (an ingest batch reading
/// the bodies of the updates it re-sends) goes past KV both ways, to R2: a Worker
/// invocation may make at most 1,000 KV operations, and one a body would be thousands.
const KV_BODIES_PER_READ: usize = 32;

/// The most bodies a write puts into the isolate's memory as it writes them. A bulk
/// ingest writes thousands a request, which the memory tier would only churn through
/// (and an isolate holds 128 MB, for the tier, the request and the batch together);
/// its bodies reach the tiers when they are read.
const MAX_BODIES_FILLED_BY_WRITE: usize = 64;

thread_local! {
    /// The isolate's cache. Workers run one thread per isolate; the cell is borrowed
    /// only inside [`isolate`], which never awaits, so the borrow cannot clash.
    static ISOLATE: RefCell<IsolateCache> = RefCell::new(IsolateCache::new(MEMORY_BYTES, REMEMBERED_BYTES));
}

/// Runs `f` on the isolate's cache.
fn isolate<R>(f: impl FnOnce(&mut IsolateCache) -> R) -> R {
    ISOLATE.with(|cell| f(&mut cell.borrow_mut()))
}

/// The table whose values are kept in R2 and cached, not in D1: the update bodies,
/// most of the bytes the node stores. The tiers rely on the core reading it one key at
/// a time and never changing a value once written, as it declares
/// ([`ledger_node_core::storage::keys::TABLES`]); the build fails when it does not.
const BODIES: u8 = keys::UPDATE;

const _: () = assert!(
    matches!(keys::table(BODIES), Some(keys::Table { access: keys::Access::Point, immutable: true, .. })),
    "the worker keeps the values of a table in R2 that the core scans or changes"
);

/// Whether `key` is an update body's, the keys kept in R2.
fn is_body(key: &[u8]) -> bool {
    key.first() == Some(&BODIES)
}

/// The key of the hash of the update whose stored form is under `body_key`
/// (`U update_id`): present in D1 exactly when the update is held. `None` for a key of
/// `U` that names no update.
fn held_key(body_key: &[u8]) -> Option<Vec<u8>> {
    let (update_id, rest) = keys::decode_str(body_key.get(1..)?)?;
    rest.is_empty().then(|| hash_key(&update_id))
}

/// What an operation does to the bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyEffect {
    /// Nothing.
    None,
    /// Puts one.
    Put,
    /// Deletes every one (the reset).
    DeleteAll,
    /// Something bodies in R2 do not support, said why.
    Refused(&'static str),
}

/// What `op` does to the bodies.
fn body_effect(op: &Op) -> BodyEffect {
    let bodies_start = [keys::UPDATE];
    let bodies_end = prefix_end(&bodies_start);
    let partial = "update bodies are deleted all at once (a reset), never some of them";
    match op {
        Op::Put { key, .. } if is_body(key) => BodyEffect::Put,
        Op::PutIfAbsent { key, .. } if is_body(key) => {
            BodyEffect::Refused("update bodies are written with a put, never a put-if-absent")
        }
        Op::Delete { key } if is_body(key) => BodyEffect::Refused(partial),
        Op::DeleteRange { start, end } => {
            let from_first = start.as_slice() <= bodies_start.as_slice();
            let to_last = match (end, &bodies_end) {
                (None, _) => true,
                (Some(end), Some(bodies_end)) => end >= bodies_end,
                (Some(_), None) => false,
            };
            let before_last = bodies_end.as_deref().is_none_or(|bodies_end| start.as_slice() < bodies_end);
            let after_first = end.as_deref().is_none_or(|end| end > bodies_start.as_slice());
            match (from_first && to_last, before_last && after_first) {
                (true, _) => BodyEffect::DeleteAll,
                (false, true) => BodyEffect::Refused(partial),
                (false, false) => BodyEffect::None,
            }
        }
        Op::Put { .. } | Op::PutIfAbsent { .. } | Op::Delete { .. } => BodyEffect::None,
    }
}

/// The KV key of a body: `body/<generation>/<key>`, the key escaped as in R2's object
/// names ([`escape_key`]). `None` if KV would refuse it.
fn kv_key(generation: &str, key: &[u8]) -> Option<String> {
    let mut name = format!("body/{generation}/");
    escape_key(&mut name, key);
    (name.len() <= MAX_KV_KEY_BYTES).then_some(name)
}

/// Reads the generation.
const READ_GENERATION: &str = "SELECT generation FROM cache_generation WHERE id = 0";

/// Replaces the generation with a fresh random one, and returns it.
const NEW_GENERATION: &str =
    "UPDATE cache_generation SET generation = lower(hex(randomblob(8))) WHERE id = 0 RETURNING generation";

/// Fails (and so rolls back the transaction it is in) unless the generation is `?1`:
/// it then inserts a second row, which the table's `CHECK (id = 0)` refuses.
const GENERATION_IS: &str = "INSERT INTO cache_generation (id, generation) SELECT 1, ?1 \
     WHERE NOT EXISTS (SELECT 1 FROM cache_generation WHERE id = 0 AND generation = ?1)";

/// A row of `cache_generation`.
#[derive(Deserialize)]
struct GenerationRow {
    generation: String,
}

/// The node's store in the worker: D1, with update bodies in R2 and cached in memory
/// and KV. See the [module docs](self).
#[derive(Debug)]
pub struct CachedStore {
    d1: D1Store,
    bodies: BodyBucket,
    kv: Option<KvStore>,
    /// The request's time, in milliseconds since the Unix epoch.
    now: u64,
    /// Bodies read from R2, to put into KV: `(KV key, body)`.
    kv_puts: RefCell<Vec<(String, Vec<u8>)>>,
    /// The isolate's epoch before the request's first read (since its last write that
    /// forgets): what it remembers is kept only if the memory was not cleared since.
    /// `None`: no read yet.
    since: Cell<Option<u64>>,
}

impl CachedStore {
    /// The store over `d1` and `bodies`, with `kv` as the shared cache tier if bound,
    /// for a request that arrived at `now`.
    pub fn new(d1: D1Store, bodies: BodyBucket, kv: Option<KvStore>, now: Timestamp) -> Self {
        let now = u64::try_from(now.micros() / 1000).unwrap_or_default();
        CachedStore { d1, bodies, kv, now, kv_puts: RefCell::new(Vec::new()), since: Cell::new(None) }
    }

    /// Puts the bodies this store read from R2 into KV; `None` if there are none. Run
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

    /// A read begins: the request's first notes the isolate's epoch.
    fn reading(&self) {
        if self.since.get().is_none() {
            self.since.set(Some(isolate(|cache| cache.epoch())));
        }
    }

    /// The generation as D1 holds it now.
    async fn generation(&self) -> Result<String, StoreError> {
        self.d1
            .database()
            .prepare(READ_GENERATION)
            .first::<String>(Some("generation"))
            .await
            .map_err(|e| StoreError::new(format!("D1: reading the cache generation: {e}")))?
            .ok_or_else(|| {
                StoreError::new("D1: the table cache_generation is empty; apply the migrations in worker/migrations")
            })
    }

    /// The view to read bodies with: the generation, read again from D1 when the one
    /// held is too old, and whether the isolate's cache may be filled under it (not when
    /// a reset overtook that read).
    async fn view(&self) -> Result<(View, bool), StoreError> {
        let (view, epoch) = isolate(|cache| (cache.view(self.now), cache.epoch()));
        if let Some(view) = view {
            return Ok((view, true));
        }
        let generation = self.generation().await?;
        let learned = isolate(|cache| {
            cache.learned(generation.clone(), self.now, epoch)?;
            cache.view(self.now)
        });
        Ok(match learned {
            Some(view) => (view, true),
            None => (View { generation, epoch }, false),
        })
    }

    /// The values of `keys`, bodies through the caches and R2.
    async fn read(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let (view, fill) = self.view().await?;
        let mut found: Vec<Option<Vec<u8>>> = if fill {
            isolate(|cache| keys.iter().map(|key| if is_body(key) { cache.get(key) } else { None }).collect())
        } else {
            vec![None; keys.len()]
        };
        let kv =
            self.kv.as_ref().filter(|_| fill && keys.iter().filter(|key| is_body(key)).count() <= KV_BODIES_PER_READ);

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

        // The rest: bodies from R2 and, at the same time, from D1 the other keys and
        // whether each body's update is held.
        let rest: Vec<(usize, &[u8])> = missing(keys, &found).collect();
        if rest.is_empty() {
            return Ok(found);
        }
        let bodies: Vec<(usize, &[u8], Vec<u8>)> = rest
            .iter()
            .filter(|(_, key)| is_body(key))
            .filter_map(|&(at, key)| Some((at, key, held_key(key)?)))
            .collect();
        let body_keys: Vec<&[u8]> = bodies.iter().map(|(_, key, _)| *key).collect();
        let d1_keys: Vec<&[u8]> = rest
            .iter()
            .filter(|(_, key)| !is_body(key))
            .map(|(_, key)| *key)
            .chain(bodies.iter().map(|(_, _, held)| held.as_slice()))
            .collect();
        let (d1_values, r2_values) =
            join(async { if d1_keys.is_empty() { Ok(Vec::new()) } else { self.d1.get_many(&d1_keys).await } }, async {
                if body_keys.is_empty() {
                    Ok(Vec::new())
                } else {
                    self.bodies.get_many(&view.generation, &body_keys).await
                }
            })
            .await;
        let d1_values: BTreeMap<&[u8], Option<Vec<u8>>> = d1_keys.iter().copied().zip(d1_values?).collect();
        for &(at, key) in rest.iter().filter(|(_, key)| !is_body(key)) {
            if let Some(slot) = found.get_mut(at) {
                *slot = d1_values.get(key).cloned().flatten();
            }
        }
        for ((at, key, held), body) in bodies.iter().zip(r2_values?) {
            let (at, key) = (*at, *key);
            let held = d1_values.get(held.as_slice()).is_some_and(Option::is_some);
            let Some(body) = body.filter(|_| held) else { continue };
            if fill {
                isolate(|cache| cache.fill(view.epoch, key.to_vec(), body.clone()));
                if kv.is_some()
                    && body.len() <= MAX_KV_VALUE_BYTES
                    && let Some(name) = kv_key(&view.generation, key)
                {
                    self.kv_puts.borrow_mut().push((name, body.clone()));
                }
            }
            if let Some(slot) = found.get_mut(at) {
                *slot = Some(body);
            }
        }
        Ok(found)
    }

    /// Applies `batch`, which deletes every body, together with a new generation.
    async fn write_deleting_bodies(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        let new_generation = self.d1.database().prepare(NEW_GENERATION);
        let written = self.d1.write_with(batch, vec![new_generation]).await;
        let generation = written.as_deref().ok().and_then(generation_of);
        isolate(|cache| cache.bodies_deleted(generation, self.now));
        written.map(drop)
    }

    /// Applies `batch`, which puts bodies: them into R2, then the rest into D1.
    async fn write_with_bodies(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        let epoch = isolate(|cache| cache.epoch());
        let generation = self.generation().await?;
        let (bodies, rest): (Vec<&Op>, Vec<&Op>) = batch.ops.iter().partition(|op| body_effect(op) == BodyEffect::Put);
        let bodies: Vec<(&[u8], &[u8])> = bodies
            .into_iter()
            .filter_map(|op| match op {
                Op::Put { key, value } => Some((key.as_slice(), value.as_slice())),
                _ => None,
            })
            .collect();
        self.bodies.put_many(&generation, &bodies).await?;
        let rest = WriteBatch { ops: rest.into_iter().cloned().collect() };
        if let Err(error) = self.d1.write_with(&rest, vec![self.generation_is(&generation)?]).await {
            return Err(match error {
                WriteError::Store(e) if self.generation().await.is_ok_and(|now| now != generation) => {
                    WriteError::Store(StoreError::new(format!(
                        "the node was reset while this batch was written; nothing was applied ({e})"
                    )))
                }
                other => other,
            });
        }
        let fill = bodies.len() <= MAX_BODIES_FILLED_BY_WRITE;
        isolate(|cache| {
            if let Some(epoch) = cache.learned(generation, self.now, epoch)
                && fill
            {
                for (key, value) in bodies {
                    cache.fill(epoch, key.to_vec(), value.to_vec());
                }
            }
        });
        Ok(())
    }

    /// The statement that fails unless the generation is `generation` ([`GENERATION_IS`]).
    fn generation_is(&self, generation: &str) -> Result<D1PreparedStatement, StoreError> {
        self.d1
            .database()
            .prepare(GENERATION_IS)
            .bind(&[JsValue::from_str(generation)])
            .map_err(|e| StoreError::new(format!("D1: binding the generation check: {e}")))
    }
}

/// The positions and keys of `keys` whose value is not `found` yet.
fn missing<'a, 'k>(keys: &'a [&'k [u8]], found: &'a [Option<Vec<u8>>]) -> impl Iterator<Item = (usize, &'k [u8])> + 'a {
    keys.iter().zip(found).enumerate().filter(|(_, (_, value))| value.is_none()).map(|(at, (key, _))| (at, *key))
}

impl Store for CachedStore {
    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.reading();
        if !is_body(key) {
            return self.d1.get(key).await;
        }
        Ok(self.read(&[key]).await?.into_iter().next().flatten())
    }

    async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.reading();
        if !keys.iter().any(|key| is_body(key)) {
            return self.d1.get_many(keys).await;
        }
        self.read(keys).await
    }

    async fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        self.reading();
        self.d1.scan(scan).await
    }

    async fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        let effects: Vec<BodyEffect> = batch.ops.iter().map(body_effect).collect();
        if let Some(BodyEffect::Refused(why)) = effects.iter().find(|e| matches!(e, BodyEffect::Refused(_))) {
            return Err(StoreError::new(*why).into());
        }
        let puts = effects.contains(&BodyEffect::Put);
        let written = match (effects.contains(&BodyEffect::DeleteAll), puts) {
            (true, true) => Err(StoreError::new("a batch that deletes every update body cannot also put some").into()),
            (true, false) => self.write_deleting_bodies(batch).await,
            (false, true) => self.write_with_bodies(batch).await,
            (false, false) => self.d1.write(batch).await,
        };
        // Whatever the outcome: a failed write may still have been applied. The reads
        // before it no longer count: the next one notes the epoch again.
        if forgets_remembered(&batch.ops) {
            isolate(IsolateCache::forget_remembered);
            self.since.set(None);
        }
        written
    }

    fn recall(&self, key: &[u8]) -> Option<Vec<u8>> {
        isolate(|cache| cache.recall(self.now, key))
    }

    fn remember(&self, key: &[u8], value: &[u8]) {
        isolate(|cache| cache.remember(self.since.get().unwrap_or(cache.epoch()), key, value));
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

    fn body_key(id: &str) -> Vec<u8> {
        ledger_node_core::state::ledger::updates::form_key(id)
    }

    #[test]
    fn only_update_bodies_go_to_r2() {
        assert!(is_body(&body_key("tx-1")));
        assert!(!is_body(&keys::Key::new(keys::UPDATE_HASH).str("tx-1").into_bytes()));
        assert!(!is_body(&[keys::GENERATION]));
        assert!(!is_body(b""));
    }

    #[test]
    fn a_body_is_served_while_its_updates_hash_is_held() {
        assert_eq!(held_key(&body_key("tx-1")), Some(hash_key("tx-1")));
        assert_eq!(held_key(&body_key("a\0b")), Some(hash_key("a\0b")));
        assert_eq!(held_key(b"U"), None);
        assert_eq!(held_key(b"Utx-1"), None, "no end of the id");
        assert_eq!(held_key(b"Utx-1\0\x01\x00"), None, "more than an id");
    }

    #[test]
    fn what_a_write_does_to_the_bodies_is_recognised() {
        let range =
            |start: &[u8], end: Option<&[u8]>| Op::DeleteRange { start: start.to_vec(), end: end.map(<[u8]>::to_vec) };
        // The reset, and other ranges over the whole of U.
        assert_eq!(body_effect(&range(b"", None)), BodyEffect::DeleteAll);
        assert_eq!(body_effect(&range(b"T", Some(b"V"))), BodyEffect::DeleteAll);
        assert_eq!(body_effect(&range(b"U", Some(b"V"))), BodyEffect::DeleteAll);
        // Some bodies only.
        assert!(matches!(body_effect(&range(b"U", Some(b"U\x01"))), BodyEffect::Refused(_)));
        assert!(matches!(body_effect(&range(b"Ua", None)), BodyEffect::Refused(_)));
        assert!(matches!(body_effect(&Op::Delete { key: body_key("tx-1") }), BodyEffect::Refused(_)));
        let put_new = Op::PutIfAbsent { key: body_key("tx-1"), value: vec![] };
        assert!(matches!(body_effect(&put_new), BodyEffect::Refused(_)));
        // The storage check's scratch range, and neighbours of U.
        assert_eq!(body_effect(&range(&[0xff, b's'], Some(&[0xff, b't']))), BodyEffect::None);
        assert_eq!(body_effect(&range(b"", Some(b"U"))), BodyEffect::None);
        assert_eq!(body_effect(&range(b"V", None)), BodyEffect::None);
        assert_eq!(body_effect(&Op::Delete { key: b"H".to_vec() }), BodyEffect::None);
        assert_eq!(body_effect(&Op::Put { key: b"H".to_vec(), value: vec![] }), BodyEffect::None);
        assert_eq!(body_effect(&Op::Put { key: body_key("tx-1"), value: vec![] }), BodyEffect::Put);
    }

    #[test]
    fn kv_keys_carry_the_generation_and_escape_the_key() {
        assert_eq!(kv_key("0a1b", &body_key("tx-1")), Some("body/0a1b/Utx-1%00%01".to_owned()));
        assert_eq!(kv_key("g", b"U%/ z"), Some("body/g/U%25/%20z".to_owned()));
        assert_eq!(kv_key("g", &[b'U'; 600]), None);
    }
}
