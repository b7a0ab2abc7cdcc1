//! What becomes of a request: the ledger's word at ingest, and the node's own expiry.
//!
//! **The ledger** ([`apply_exercise_event`], called from [`crate::ledger::apply_update`]): an
//! exercised event on a request's contract id with choice `BuyTrafficRequest_Complete`
//! completes it (transaction id: the update's id), `BuyTrafficRequest_Cancel` rejects it
//! (with the `reason` of the choice argument), `BuyTrafficRequest_Expire` expires it.
//! The first such event the node ingests for a request is final: it replaces a state
//! the node's own expiry set, and later events on the same contract change nothing (a
//! consumed contract cannot be exercised again; a second one is inconsistent input).
//! The contract-id index `Y` is prefetched with the batch ([`keys_read`]); the record
//! itself is one more read per outcome found.
//!
//! **The node** ([`tick`]): every created request whose `expires_at` is before now
//! becomes expired. One range scan of the created index finds them (at most
//! [`TICK_BATCH`] per write), one `get_many` reads them, and one write batch records
//! them, guarded by the ingest generation like an ingest batch: if an ingest committed
//! in between (it may have brought the ledger's outcome of one of them), the tick's
//! batch is refused and prepared again on the new state. So the node's expiry never
//! overwrites the ledger's word, and the ledger's word always overwrites the node's.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::Serialize;

use super::record::{BuyTrafficRecord, State, Status, contract_index_key, created_before};
use crate::admin;
use crate::error::Error;
use crate::ingest;
use crate::ledger::stage::Stage;
use crate::service::Env;
use crate::store::{Scan, Store, WriteError};
use crate::update::{Event, Update};
use crate::value::{Encoding, Value};

/// The choice that completes a request.
pub const COMPLETE: &str = "BuyTrafficRequest_Complete";
/// The choice that rejects a request.
pub const CANCEL: &str = "BuyTrafficRequest_Cancel";
/// The choice that expires a request.
pub const EXPIRE: &str = "BuyTrafficRequest_Expire";

/// Requests the tick expires per write batch.
pub const TICK_BATCH: u32 = 256;
/// Write batches per tick; what is left is expired at the next tick.
const TICK_ROUNDS: usize = 64;
/// Attempts per batch when ingests keep committing in between.
const ATTEMPTS: usize = 5;

fn is_outcome_choice(choice: &str) -> bool {
    matches!(choice, COMPLETE | CANCEL | EXPIRE)
}

/// The keys [`apply_exercise_event`] reads for `update`, to prefetch with the batch.
pub fn keys_read(update: &Update) -> impl Iterator<Item = Vec<u8>> + '_ {
    update.as_transaction().into_iter().flat_map(|tx| tx.events_by_id.values()).filter_map(|event| match event {
        Event::Exercised(x) if is_outcome_choice(&x.choice) => Some(contract_index_key(&x.contract_id)),
        _ => None,
    })
}

/// The `reason` of a cancel's choice argument, as text.
fn rejection_reason(argument: &Value) -> Option<String> {
    fn text(value: &Value) -> Option<String> {
        match value {
            Value::Text(s) => Some(s.clone()),
            Value::Optional(None) => None,
            Value::Optional(Some(inner)) => text(inner),
            other => Some(other.render(Encoding::CompactJson).to_string()),
        }
    }
    text(argument.as_record()?.get("reason")?)
}

/// Stages the ledger's outcome of a request, if `event` (of update `update_id`) is an
/// outcome choice exercised on a recorded request.
pub async fn apply_exercise_event<S: Store>(
    stage: &mut Stage<'_, S>,
    update_id: &str,
    event: &Event,
) -> Result<(), Error> {
    let Event::Exercised(event) = event else {
        return Ok(());
    };
    if !is_outcome_choice(&event.choice) {
        return Ok(());
    }
    let Some(record_key) = stage.get(&contract_index_key(&event.contract_id)).await? else {
        return Ok(());
    };
    let Some(bytes) = stage.get(&record_key).await? else {
        return Err(Error::Internal(alloc::format!(
            "wallet request of contract {} is indexed but not recorded",
            event.contract_id
        )));
    };
    let mut record = BuyTrafficRecord::from_bytes(&bytes)?;
    if record.state.is_ledger_outcome() {
        return Ok(());
    }
    let state = match event.choice.as_str() {
        COMPLETE => State::Completed { transaction_id: update_id.into() },
        CANCEL => State::Rejected { reason: rejection_reason(&event.choice_argument) },
        _ => State::Expired { by_ledger: true },
    };
    stage.delete(record.index_key());
    record.state = state;
    stage.put(record.index_key(), record_key.clone());
    stage.put(record_key, record.to_bytes());
    Ok(())
}

/// What the scheduled jobs did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TickReport {
    /// Created requests whose expiry passed, now expired.
    pub expired_requests: u64,
}

/// Expires every created request whose `expires_at` is before `env.now`.
pub async fn tick<S: Store>(env: &Env<'_>, store: &S) -> Result<TickReport, Error> {
    let mut report = TickReport::default();
    let scan = Scan {
        start: Status::Created.index_prefix(),
        end: Some(created_before(env.now.micros())),
        limit: TICK_BATCH,
        reverse: false,
    };
    for _ in 0..TICK_ROUNDS {
        let (expired, due) = expire_batch(store, &scan).await?;
        report.expired_requests += expired;
        if due < TICK_BATCH as usize {
            break;
        }
    }
    Ok(report)
}

/// Expires one batch of due requests; returns how many it expired and how many were due.
async fn expire_batch<S: Store>(store: &S, scan: &Scan) -> Result<(u64, usize), Error> {
    for _ in 0..ATTEMPTS {
        let generation = ingest::current_generation(store).await?;
        let due = store.scan(scan).await?;
        if due.is_empty() {
            return Ok((0, 0));
        }
        let keys: Vec<&[u8]> = due.iter().map(|(_, record_key)| record_key.as_slice()).collect();
        let records = store.get_many(&keys).await?;
        let mut stage = Stage::new(store);
        let mut expired = 0;
        for ((index_key, record_key), bytes) in due.iter().zip(records) {
            let Some(bytes) = bytes else {
                // An index entry without its record: drop it.
                stage.delete(index_key.clone());
                continue;
            };
            let mut record = BuyTrafficRecord::from_bytes(&bytes)?;
            stage.delete(index_key.clone());
            if record.state == State::Created {
                record.state = State::Expired { by_ledger: false };
                stage.put(record.index_key(), record_key.clone());
                stage.put(record_key.clone(), record.to_bytes());
                expired += 1;
            }
        }
        let next = ingest::generation_key(generation.saturating_add(1));
        if generation > 0 {
            stage.first().delete(ingest::generation_key(generation));
        }
        stage.first().put_if_absent(next.clone(), Vec::new());
        match store.write(&stage.into_batch()).await {
            Ok(()) => return Ok((expired, due.len())),
            Err(WriteError::PreconditionFailed { key }) if key == next => continue,
            Err(e) => return Err(admin::write_failed(e)),
        }
    }
    Err(Error::Conflict("ingest batches kept committing while the tick ran; nothing was expired; retry".into()))
}
