//! What becomes of a request: the ledger's word at ingest, and the node's own expiry.
//!
//! **The ledger** ([`LedgerOutcomes`], a [`Projection`] ingest applies to every new
//! update, event by event in execution order): an exercised event on a request's
//! contract id with choice `BuyTrafficRequest_Complete` completes it (transaction id:
//! the update's id), `BuyTrafficRequest_Cancel` rejects it (with the `reason` of the
//! choice argument), `BuyTrafficRequest_Expire` expires it.
//! The first such event the node ingests for a request is final: it replaces a state
//! the node's own expiry set, and later events on the same contract change nothing (a
//! consumed contract cannot be exercised again; a second one is inconsistent input).
//! The contract-id index `Y` is prefetched with the batch
//! ([`Projection::keys_read`]); the record itself is one more read per outcome found.
//!
//! **The node** ([`tick`]): every created request whose `expires_at` is before now
//! becomes expired, fairly among users: one user's backlog of due requests does not
//! hold up anyone else's. The tick first goes round the users' queues (a user's
//! created requests by expiry): from where the last tick stopped (its cursor), it
//! visits at most [`TICK_USERS`] users with created requests, in key order and round
//! to the start, and expires up to [`TICK_PAGE`] due requests of each. So a user's due
//! requests wait at most one tick per [`TICK_USERS`] users with created requests,
//! however many any of them has. Then it pages through the due part of the created
//! index in key order (by expiry), [`TICK_PAGE`] entries a page and at most
//! [`TICK_ROUNDS`] pages a tick (what is left waits for the next tick), which also
//! finds requests recorded before the queues existed. Per page, one range scan finds
//! the entries, one
//! `get_many` reads their records, and one write batch records the expiries, guarded
//! by the ingest generation like an ingest batch: if an ingest committed in between (it
//! may have brought the ledger's outcome of one of them), the page's batch is refused
//! and the page prepared again on the new state. So the node's expiry never overwrites
//! the ledger's word, and the ledger's word always overwrites the node's.
//!
//! A record the tick cannot use (missing, unparsable, or with an id over the limit:
//! [`BuyTrafficRecord::from_stored`]) is left as it is and reported in
//! [`TickReport::skipped`], one line each, and the tick goes on with the others. Each
//! page moves a cursor past its last entry, so a skipped entry is read once a tick and
//! never holds up the entries after it.
//!
//! Last, the tick counts the requests still created (awaiting the validator, due or
//! not: [`TickReport::pending_requests`]), for the operator's metrics: entries of the
//! created index, read in pages of [`PENDING_PAGE`] and counted up to
//! [`PENDING_LIMIT`], so a tick reads a bounded number of keys however large the
//! backlog.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::Serialize;

use super::record::{
    BuyTrafficRecord, State, Status, contract_index_key, created_before, cursor_key, queue_before, queue_entry,
    queue_prefix, queues_prefix,
};
use crate::model::env::Env;
use crate::model::error::Error;
use crate::model::update::{Event, ExercisedEvent, Update};
use crate::model::value::{Encoding, Value};
use crate::state::ledger::Archived;
use crate::state::projection::Projection;
use crate::storage::commit;
use crate::storage::stage::Stage;
use crate::storage::store::{Scan, Store, WriteBatch, WriteError, key_after, prefix_end};

/// The choice that completes a request.
pub const COMPLETE: &str = "BuyTrafficRequest_Complete";
/// The choice that rejects a request.
pub const CANCEL: &str = "BuyTrafficRequest_Cancel";
/// The choice that expires a request.
pub const EXPIRE: &str = "BuyTrafficRequest_Expire";

/// Entries of the created index the tick reads per page (and expires per write batch).
pub const TICK_PAGE: u32 = 64;
/// Pages of the created index per tick, so at most 4096 entries by expiry; what is
/// left is expired at the next tick.
pub const TICK_ROUNDS: usize = 64;
/// Users whose queues one tick visits, each for up to [`TICK_PAGE`] due requests.
pub const TICK_USERS: usize = 64;
/// Entries of the created index read per page when the tick counts pending requests.
pub const PENDING_PAGE: u32 = 1024;
/// The most pending requests a tick counts: a larger backlog is reported as this many.
pub const PENDING_LIMIT: u64 = 16 * PENDING_PAGE as u64;

fn is_outcome_choice(choice: &str) -> bool {
    matches!(choice, COMPLETE | CANCEL | EXPIRE)
}

/// The ledger's outcomes of the requests the node recorded: the requests that an
/// update's exercised events complete, reject or expire (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct LedgerOutcomes;

impl Projection for LedgerOutcomes {
    /// The contract-id index entry (`Y`) of every outcome choice's contract.
    fn keys_read<'a>(&'a self, update: &'a Update) -> impl Iterator<Item = Vec<u8>> + 'a {
        update.as_transaction().into_iter().flat_map(|tx| tx.events_by_id.values()).filter_map(|event| match event {
            Event::Exercised(x) if is_outcome_choice(&x.choice) => Some(contract_index_key(&x.contract_id)),
            _ => None,
        })
    }

    /// Each exercised event in execution order, so that of two outcomes of one request
    /// the first is the one kept.
    async fn apply<S: Store>(
        &self,
        stage: &mut Stage<'_, S>,
        update: &Update,
        _archived: &Archived<'_>,
    ) -> Result<(), Error> {
        let Some(tx) = update.as_transaction() else {
            return Ok(());
        };
        // Most transactions hold no outcome: they skip putting their events in order.
        if self.keys_read(update).next().is_none() {
            return Ok(());
        }
        for event in tx.events_in_order() {
            if let Event::Exercised(exercised) = event {
                apply_exercise(stage, &tx.update_id, exercised).await?;
            }
        }
        Ok(())
    }
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
async fn apply_exercise<S: Store>(
    stage: &mut Stage<'_, S>,
    update_id: &str,
    event: &ExercisedEvent,
) -> Result<(), Error> {
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
    for index_key in record.index_keys() {
        stage.delete(index_key);
    }
    record.state = state;
    for index_key in record.index_keys() {
        stage.put(index_key, record_key.clone());
    }
    stage.put(record_key, record.to_bytes()?);
    Ok(())
}

/// What the scheduled jobs did. Serialized (the body of `POST /v0/admin/tick`, and of
/// the component's `tick`), it is `{"expired_requests": n}`: the skipped records are
/// for the operator's log, not for the caller.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TickReport {
    /// Created requests whose expiry passed, now expired.
    pub expired_requests: u64,
    /// One line for the operator's log per record the jobs skipped because they could
    /// not read it, naming it briefly and saying why.
    #[serde(skip)]
    pub skipped: Vec<String>,
    /// Requests still created after the jobs ran (awaiting the validator), counted up
    /// to [`PENDING_LIMIT`]; for the operator's metrics, not for the caller.
    #[serde(skip)]
    pub pending_requests: u64,
}

/// Expires every created request whose `expires_at` is before `env.now`, page by page
/// (see the module docs), skipping the records it cannot read.
pub async fn tick<S: Store>(env: &Env<'_>, store: &S) -> Result<TickReport, Error> {
    let mut report = TickReport::default();
    round_of_queues(env, store, &mut report).await?;
    let mut scan = Scan {
        start: Status::Created.index_prefix(),
        end: Some(created_before(env.now.micros())),
        limit: TICK_PAGE,
        reverse: false,
    };
    for _ in 0..TICK_ROUNDS {
        let page = expire_page(store, &scan).await?;
        report.expired_requests += page.expired;
        report.skipped.extend(page.skipped);
        match page.last_key {
            Some(last) if page.read >= TICK_PAGE as usize => scan.start = key_after(&last),
            _ => break,
        }
    }
    report.pending_requests = count_created(store).await?;
    Ok(report)
}

/// The entries of the created index, counted up to [`PENDING_LIMIT`].
async fn count_created<S: Store>(store: &S) -> Result<u64, Error> {
    let prefix = Status::Created.index_prefix();
    let mut scan = Scan { end: prefix_end(&prefix), start: prefix, limit: PENDING_PAGE, reverse: false };
    let mut counted = 0;
    while counted < PENDING_LIMIT {
        let page = store.scan(&scan).await?;
        counted += page.len() as u64;
        match page.last() {
            Some((last, _)) if page.len() >= PENDING_PAGE as usize => scan.start = key_after(last),
            _ => break,
        }
    }
    Ok(counted.min(PENDING_LIMIT))
}

/// Visits up to [`TICK_USERS`] users' queues from the tick's cursor, round to the
/// start, expiring up to [`TICK_PAGE`] due requests of each, and moves the cursor on.
async fn round_of_queues<S: Store>(env: &Env<'_>, store: &S, report: &mut TickReport) -> Result<(), Error> {
    let queues = queues_prefix();
    let end = prefix_end(&queues);
    let cursor = cursor_key();
    let start = match store.get(&cursor).await? {
        Some(at) if at.starts_with(&queues) => at,
        _ => queues.clone(),
    };
    let mut at = start.clone();
    let mut wrapped = false;
    let mut visited = 0;
    while visited < TICK_USERS {
        let first = store.scan(&Scan { start: at.clone(), end: end.clone(), limit: 1, reverse: false }).await?;
        let Some((key, _)) = first.into_iter().next() else {
            if wrapped || start == queues {
                break;
            }
            // Round to the start, for the users before where this round began.
            (wrapped, at) = (true, queues.clone());
            continue;
        };
        if wrapped && key >= start {
            break;
        }
        visited += 1;
        let Some((user_id, expires_at)) = queue_entry(&key) else {
            report.skipped.push(alloc::format!("a wallet queue entry with an unreadable key ({} bytes)", key.len()));
            at = key_after(&key);
            continue;
        };
        let user = queue_prefix(&user_id);
        if expires_at < env.now.micros() {
            let due = Scan {
                start: user.clone(),
                end: Some(queue_before(&user_id, env.now.micros())),
                limit: TICK_PAGE,
                reverse: false,
            };
            let page = expire_page(store, &due).await?;
            report.expired_requests += page.expired;
            report.skipped.extend(page.skipped);
        }
        at = prefix_end(&user).unwrap_or_else(|| key_after(&key));
    }
    if at != start {
        let mut batch = WriteBatch::new();
        batch.put(cursor, at);
        store.write(&batch).await.map_err(|e| match e {
            WriteError::Store(e) => Error::Store(e),
            WriteError::PreconditionFailed { .. } => Error::Internal("the tick's cursor has no precondition".into()),
        })?;
    }
    Ok(())
}

/// What expiring one page did.
#[derive(Debug, Default)]
struct Page {
    /// Index entries read.
    read: usize,
    /// The last of them, where the next page starts after.
    last_key: Option<Vec<u8>>,
    /// Requests expired.
    expired: u64,
    /// Log lines of the records skipped.
    skipped: Vec<String>,
}

/// Expires the due requests of one page, the entries `scan` finds.
async fn expire_page<S: Store>(store: &S, scan: &Scan) -> Result<Page, Error> {
    let expired = commit::guarded(store, async || {
        let due = store.scan(scan).await?;
        let keys: Vec<&[u8]> = due.iter().map(|(_, record_key)| record_key.as_slice()).collect();
        let records = if keys.is_empty() { Vec::new() } else { store.get_many(&keys).await? };
        let mut page = Page { read: due.len(), last_key: due.last().map(|(key, _)| key.clone()), ..Page::default() };
        let mut stage = Stage::new(store);
        for ((index_key, record_key), bytes) in due.iter().zip(records) {
            let mut record = match BuyTrafficRecord::from_stored(record_key, bytes.as_deref()) {
                Ok(record) => record,
                Err(line) => {
                    page.skipped.push(line);
                    continue;
                }
            };
            stage.delete(index_key.clone());
            if record.state == State::Created {
                for index_key in record.index_keys() {
                    stage.delete(index_key);
                }
                record.state = State::Expired { by_ledger: false };
                stage.put(record.index_key(), record_key.clone());
                stage.put(record_key.clone(), record.to_bytes()?);
                page.expired += 1;
            }
        }
        Ok((stage, page))
    })
    .await?;
    expired.ok_or_else(|| {
        Error::Conflict(
            "ingest batches kept committing while the tick ran; it stopped (requests it expired before stay expired); retry"
                .into(),
        )
    })
}
