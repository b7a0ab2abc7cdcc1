//! The guarded commit: how every write that first reads the state commits without
//! locks, on any store.
//!
//! Ingest batches and the scheduled jobs read state, decide, and write, staging both in
//! a [`Stage`] (the batch's reads see its own writes). Each write is guarded by the
//! *ingest generation*, `G n`, the number of such writes committed so far: an attempt
//! reads `n` before its reads, and its write batch deletes `G n` and puts `G n+1` if
//! absent. If another write committed in between, `G n+1` is present, the store refuses
//! the whole batch, and the attempt is prepared again on the new state, up to
//! [`ATTEMPTS`] times. An attempt that changes nothing writes nothing, generation
//! included.

use alloc::vec::Vec;

use crate::model::error::Error;
use crate::storage::keys::{self, Key};
use crate::storage::stage::Stage;
use crate::storage::store::{Scan, Store, WriteError, write_failed};

/// How often a write is prepared again when others commit while it is prepared.
pub const ATTEMPTS: usize = 5;

/// Prepares a write with `attempt` and commits it guarded by the ingest generation,
/// preparing it again when another write committed in between. `attempt` returns its
/// stage and its result; `None` when every attempt was overtaken.
pub async fn guarded<'s, S, T>(
    store: &'s S,
    mut attempt: impl AsyncFnMut() -> Result<(Stage<'s, S>, T), Error>,
) -> Result<Option<T>, Error>
where
    S: Store,
{
    for _ in 0..ATTEMPTS {
        let generation = current_generation(store).await?;
        let (mut stage, value) = attempt().await?;
        if stage.is_empty() {
            return Ok(Some(value));
        }
        let next = generation_key(generation.saturating_add(1));
        if generation > 0 {
            stage.first().delete(generation_key(generation));
        }
        stage.first().put_if_absent(next.clone(), Vec::new());
        match store.write(&stage.into_batch()).await {
            Ok(()) => return Ok(Some(value)),
            Err(WriteError::PreconditionFailed { key }) if key == next => continue,
            Err(e) => return Err(write_failed(e)),
        }
    }
    Ok(None)
}

/// The key of generation `generation`.
fn generation_key(generation: i64) -> Vec<u8> {
    Key::new(keys::GENERATION).i64(generation).into_bytes()
}

/// The number of guarded writes committed so far.
async fn current_generation<S: Store>(store: &S) -> Result<i64, Error> {
    let latest = store.scan(&Scan::prefix(&[keys::GENERATION], 1).reversed()).await?;
    Ok(latest.first().and_then(|(key, _)| keys::decode_i64(key, 1)).unwrap_or(0))
}
