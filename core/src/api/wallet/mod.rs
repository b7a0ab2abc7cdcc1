//! The wallet: buy-traffic requests (`POST /v0/wallet/buy-traffic-requests` and its status route).
//!
//! | method | path | auth | answers |
//! |---|---|---|---|
//! | POST | `/v0/wallet/buy-traffic-requests` | wallet JWT | `{"request_contract_id"}`; 400, 401, 403, 409, 429 |
//! | POST | `/v0/wallet/buy-traffic-requests/{tracking_id}/status` | wallet JWT | `{"status", ...}`; 401, 403, 404 |
//! | GET | `/v0/admin/wallet/buy-traffic-requests[?status=]` | admin token | `{"requests":[...]}`; 400 |
//! | POST | `/v0/admin/tick` | admin token | `{"expired_requests": n}` |
//!
//! **Who.** [`jwt`] verifies the bearer token; its subject must be an onboarded wallet
//! user (`W user_id`, from `wallet_user` ingest records), else 403. The user's party is
//! the request contract's `endUserParty`.
//!
//! **Exactly once.** Tracking ids belong to the user: the request is stored under
//! `X user_id tracking_id`. A submission that passed every check writes, in ONE atomic
//! batch, the record with a put-if-absent precondition on that key (the claim), the
//! index from its contract id (`Y`, put-if-absent too), its index entries (`Z`: by
//! status, and in its user's queue) and
//! the contract itself in the active contract set (`C`, template
//! `{root}.Wallet.BuyTrafficRequest:BuyTrafficRequest`, see [`contract_record`]). There
//! is no read-then-write: of concurrent submissions of one tracking id, the store lets
//! exactly one batch through. A loser reads the claim once:
//!
//! - the record is there (created, completed or failed): **409**, naming its status;
//! - it is not: **429**, "being processed". Because claim and request are one batch, a
//!   claim without its request never exists in the store; the only way to lose the
//!   race and then not see the winner is a read that does not yet observe the winning
//!   write (a backend whose reads may lag its writes, such as a read replica), or a
//!   precondition failure on the contract-id keys (a contract-id collision). Either
//!   way the right advice is the interface's: check the status endpoint and resubmit if it
//!   answers 404.
//!
//! A submission that fails before its batch commits (a 400, a 401, a storage error)
//! records nothing, so its tracking id may be used again, as the interface's first rule asks.
//! An earlier request that the ledger rejected or that expired keeps its tracking id:
//! the client uses a fresh one for a new purchase (rule 2).
//!
//! **Validation** ([`request`]), each a 400 naming the field, in this order:
//! `traffic_amount` > 0, `expires_at` > 0, ids non-empty and at most
//! [`MAX_ID_BYTES`](crate::model::ids::MAX_ID_BYTES) bytes, `domain_id` a synchronizer the node
//! knows (`S`), the receiving party hosted on exactly one participant there (`P`; none
//! or several: 400). An `expires_at` in the past is accepted; the next tick expires the
//! request. The user id is bounded the same way: a token whose subject is longer is a
//! 401 ([`jwt`]), and a tracking id in the status path is measured after decoding.
//!
//! **Outcome** ([`crate::state::wallet::outcome`]): the ledger completes, rejects or expires the request at
//! ingest ([`crate::state::wallet::outcome::LedgerOutcomes`], a projection of the ledger); the node's tick
//! expires created requests whose `expires_at` passed, in guarded commits
//! ([`crate::storage::commit`]). The ledger's word wins over the node's expiry, even when it
//! arrives after it.
//!
//! **Store reads per endpoint** (independent of history size):
//!
//! | endpoint | reads | writes |
//! |---|---|---|
//! | submit | 1 get (`W`), 1 get_many (`S`, `P`); on a lost race 1 more get (`X`) | 1 batch |
//! | status | 1 get_many (`W`, `X`) | none |
//! | admin list | per page of up to [`LIST_PAGE`], at most [`LIST_LIMIT`] in all: 1 scan of `X`, or 1 scan of `Z` of one status and 1 get_many | none |
//! | tick | 1 get of its cursor; per user visited, at most [`crate::state::wallet::outcome::TICK_USERS`]: 1 scan of `Z` for the user, and for one with due requests a page as below; then per page of up to [`crate::state::wallet::outcome::TICK_PAGE`], at most [`crate::state::wallet::outcome::TICK_ROUNDS`] pages: 1 generation scan, 1 scan of `Z`, 1 get_many; then, to count the pending requests, up to [`crate::state::wallet::outcome::PENDING_LIMIT`] / [`crate::state::wallet::outcome::PENDING_PAGE`] scans of the created index | 1 batch per page with expiries; 1 put of the cursor when it moved |
//! | ingest | `Y` of every outcome choice, prefetched with the batch; 1 get per request found | in the batch |
//!
//! The admin list answers at most [`LIST_LIMIT`] requests: created ones by expiry,
//! soonest first; the others by user and tracking id. The validator's automation works
//! through the created ones, which leave the list as they complete.
//!
//! **Jobs that read many records** (the tick and the admin list) read them in pages of
//! bounded size, one store call each, never all at once. A record they cannot read
//! (missing, unparsable, or holding an id over the limit because an earlier build
//! recorded it) is skipped: the job leaves it untouched, goes on with the others, and
//! names it in one short line for the operator's log ([`TickReport::skipped`](crate::state::wallet::outcome::TickReport::skipped); the
//! response's [`log`](Response::log) of the tick and of the list). One bad record never
//! fails the whole job.

pub mod request;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::state::wallet::record::{BuyTrafficRecord, State, Status, contract_index_key, record_key};
use request::{BuyTraffic, BuyTrafficBody};

use crate::api::auth::{self, jwt};
use crate::api::http::{self, Request, Response};
use crate::model::env::Env;
use crate::model::error::Error;
use crate::model::ids::{PathParam, TrackingId};
use crate::model::names::TemplateNames;
use crate::model::time::Timestamp;
use crate::model::update::TemplateId;
use crate::state::ledger::contracts::{self, ContractRecord, Creation};
use crate::state::network;
use crate::storage::keys::{self, Key};
use crate::storage::store::{Entry, Scan, Store, WriteBatch, WriteError, key_after};

/// Most requests the admin list answers.
pub const LIST_LIMIT: u32 = 1000;
/// Entries the admin list reads per store call.
pub const LIST_PAGE: u32 = 100;

/// The package id of request contracts the node records itself (the node matches
/// templates by qualified name and ignores package ids).
pub const WALLET_PACKAGE_ID: &str = "ledger-node-wallet";

/// A verified wallet user.
#[derive(Debug, Clone, PartialEq, Eq)]
struct WalletUser {
    user_id: String,
    party_id: String,
}

/// The JWT's subject, after signature and claims checks (401 otherwise).
fn subject(request: &Request, env: &Env<'_>) -> Result<String, Error> {
    let token = auth::bearer_token(request)?;
    Ok(jwt::authenticate(token, env.config, env.now)?.0)
}

/// The wallet user `user_id`, given the value of its `W` key (403 when absent).
fn onboarded(user_id: String, party: Option<Vec<u8>>) -> Result<WalletUser, Error> {
    let party = party.ok_or_else(|| {
        Error::Forbidden(format!("{user_id:?} is not an onboarded wallet user; the token's subject must be one"))
    })?;
    let party_id =
        String::from_utf8(party).map_err(|_| Error::Internal(format!("wallet user {user_id}: unreadable party id")))?;
    Ok(WalletUser { user_id, party_id })
}

/// `POST /v0/wallet/buy-traffic-requests`.
pub async fn submit<S: Store>(request: &Request, body: &[u8], env: &Env<'_>, store: &S) -> Result<Response, Error> {
    let user_id = subject(request, env)?;
    let party = store.get(&network::wallet_user_key(&user_id)).await?;
    let user = onboarded(user_id, party)?;
    let body = BuyTrafficBody::parse(body)?.check()?;
    let synchronizer_key = network::synchronizer_key(&body.domain_id);
    let hosting_key = network::hosting_key(&body.domain_id, &body.receiving_validator_party_id);
    let found = store.get_many(&[&synchronizer_key, &hosting_key]).await?;
    let mut found = found.into_iter();
    if found.next().flatten().is_none() {
        return Err(Error::BadRequest(format!("domain_id {:?} is not a synchronizer this node knows", body.domain_id)));
    }
    check_hosting(&body, found.next().flatten())?;

    let contract_id = contract_id(&env.entropy);
    let record = BuyTrafficRecord {
        tracking_id: body.tracking_id.as_str().into(),
        user_id: user.user_id.clone(),
        request_contract_id: contract_id.clone(),
        receiving_validator_party_id: body.receiving_validator_party_id.as_str().into(),
        domain_id: body.domain_id.as_str().into(),
        traffic_amount: body.traffic_amount,
        expires_at: body.expires_at.micros(),
        created_at: env.now.micros(),
        state: State::Created,
    };
    let key = record.key();
    let names = TemplateNames::new(&env.config.names);
    let contract = contract_record(&record, &user.party_id, body.expires_at, env.now, &names)?;
    let contract = contracts::encode(&contract_id, &contract)?;
    let mut batch = WriteBatch::new();
    batch
        .put_if_absent(key.clone(), record.to_bytes()?)
        .put_if_absent(contract_index_key(&contract_id), key.clone())
        .put_if_absent(contracts::contract_key(&contract_id), contract);
    for index_key in record.index_keys() {
        batch.put(index_key, key.clone());
    }
    match store.write(&batch).await {
        Ok(()) => Ok(Response::ok(&serde_json::json!({ "request_contract_id": contract_id }))),
        Err(WriteError::PreconditionFailed { .. }) => Err(match store.get(&key).await? {
            Some(existing) => {
                let existing = BuyTrafficRecord::from_bytes(&existing)?;
                Error::Conflict(format!(
                    "a request with tracking_id {:?} was already created (request contract {}, status {}); \
                     check its status endpoint, and use a fresh tracking_id for a new purchase",
                    body.tracking_id,
                    existing.request_contract_id,
                    existing.state.status().as_str()
                ))
            }
            None => Error::TooManyRequests(format!(
                "a request with tracking_id {:?} is being processed; check its status endpoint and resubmit if it answers 404",
                body.tracking_id
            )),
        }),
        Err(WriteError::Store(e)) => Err(Error::Store(e)),
    }
}

/// The receiving party must be hosted on exactly one participant of the synchronizer.
fn check_hosting(body: &BuyTraffic, hosting: Option<Vec<u8>>) -> Result<(), Error> {
    let participants: Vec<String> = match hosting {
        Some(bytes) => {
            network::StoredHosting::decode(&bytes)
                .map_err(|e| {
                    Error::Internal(format!("unreadable hosting of {}: {e}", body.receiving_validator_party_id))
                })?
                .participant_ids
        }
        None => Vec::new(),
    };
    match participants.len() {
        1 => Ok(()),
        0 => Err(Error::BadRequest(format!(
            "receiving_validator_party_id {:?} is not hosted on any participant of synchronizer {:?}",
            body.receiving_validator_party_id, body.domain_id
        ))),
        n => Err(Error::BadRequest(format!(
            "receiving_validator_party_id {:?} is hosted on {n} participants of synchronizer {:?}; \
             buying traffic needs a party hosted on exactly one",
            body.receiving_validator_party_id, body.domain_id
        ))),
    }
}

/// A fresh contract id from the request's entropy: `00` and 64 hex digits.
fn contract_id(entropy: &[u8; 32]) -> String {
    use core::fmt::Write as _;
    let mut id = String::with_capacity(66);
    id.push_str("00");
    for byte in entropy {
        // Writing to a String cannot fail.
        let _ = write!(id, "{byte:02x}");
    }
    id
}

/// The request as a contract of the active contract set: template
/// `ledger-node-wallet:{root}.Wallet.BuyTrafficRequest:BuyTrafficRequest`, created now on
/// the request's synchronizer, payload (compact JSON) `endUserParty`,
/// `receivingValidatorPartyId`, `synchronizerId`, `trafficAmount`, `trackingId`,
/// `expiresAt`. The ledger's consuming choices on it archive it at ingest.
pub fn contract_record(
    record: &BuyTrafficRecord,
    end_user_party: &str,
    expires_at: Timestamp,
    now: Timestamp,
    names: &TemplateNames,
) -> Result<ContractRecord, Error> {
    let template_id = format!("{WALLET_PACKAGE_ID}:{}", names.buy_traffic_request);
    // The configured names spell a qualified name of two non-empty parts.
    let template_id = TemplateId::parse(&template_id)
        .map_err(|e| Error::Internal(format!("request contract template {template_id:?}: {e}")))?;
    Ok(ContractRecord::Created(Creation {
        template_id,
        payload: serde_json::json!({
            "endUserParty": end_user_party,
            "receivingValidatorPartyId": record.receiving_validator_party_id,
            "synchronizerId": record.domain_id,
            "trafficAmount": format!("{}", record.traffic_amount),
            "trackingId": record.tracking_id,
            "expiresAt": format!("{expires_at}"),
        }),
        created_at: now,
        blob: None,
        synchronizer_id: record.domain_id.clone(),
        import: false,
        package_name: String::from(WALLET_PACKAGE_ID),
    }))
}

/// `POST /v0/wallet/buy-traffic-requests/{tracking_id}/status`: the token is checked
/// before the tracking id in the path.
pub async fn status<S: Store>(
    request: &Request,
    tracking_id: PathParam<TrackingId>,
    env: &Env<'_>,
    store: &S,
) -> Result<Response, Error> {
    let user_id = subject(request, env)?;
    let tracking_id = tracking_id?;
    let key = record_key(&user_id, &tracking_id);
    let mut found = store.get_many(&[&network::wallet_user_key(&user_id), &key]).await?.into_iter();
    let party = found.next().flatten();
    onboarded(user_id, party)?;
    let record = found.next().flatten().ok_or_else(|| {
        Error::NotFound(format!("no buy-traffic request with tracking_id {tracking_id:?} was made by this user"))
    })?;
    Ok(Response::ok(&BuyTrafficRecord::from_bytes(&record)?.status_body()))
}

/// `GET /v0/admin/wallet/buy-traffic-requests[?status=created|completed|failed]`; the
/// caller checked the admin token. Reads at most [`LIST_LIMIT`] entries, [`LIST_PAGE`]
/// a store call; a record it cannot read is left out of the answer and named in the
/// response's [`log`](Response::log).
pub async fn list<S: Store>(query: &str, store: &S) -> Result<Response, Error> {
    let status = match http::query_param(query, "status")? {
        None => None,
        Some(text) => Some(Status::parse(&text).ok_or_else(|| {
            Error::BadRequest(format!("status must be one of created, completed, failed; not {text:?}"))
        })?),
    };
    let prefix = match status {
        None => Key::new(keys::WALLET_REQUEST).into_bytes(),
        Some(status) => status.index_prefix(),
    };
    let mut scan = Scan::prefix(&prefix, LIST_PAGE);
    let mut requests = Vec::new();
    let mut skipped = Vec::new();
    let mut read = 0;
    while read < LIST_LIMIT {
        scan.limit = LIST_PAGE.min(LIST_LIMIT - read);
        let page = store.scan(&scan).await?;
        // A page holds at most `scan.limit` entries, a u32.
        read += u32::try_from(page.len()).unwrap_or(u32::MAX);
        let full = page.len() >= scan.limit as usize;
        if let Some((last, _)) = page.last() {
            scan.start = key_after(last);
        }
        for (key, bytes) in stored_records(store, status, page).await? {
            match BuyTrafficRecord::from_stored(&key, bytes.as_deref()) {
                Ok(record) if status.is_none_or(|s| s == record.state.status()) => requests.push(record.list_item()),
                Ok(_) => {}
                Err(line) => skipped.push(line),
            }
        }
        if !full {
            break;
        }
    }
    Ok(Response::ok(&serde_json::json!({ "requests": requests })).with_log_lines(&skipped))
}

/// The records of a page of the admin list, with their `X` keys: the page itself when
/// it is a scan of the records, else the records its index entries name (one
/// `get_many`).
async fn stored_records<S: Store>(
    store: &S,
    status: Option<Status>,
    page: Vec<Entry>,
) -> Result<Vec<(Vec<u8>, Option<Vec<u8>>)>, Error> {
    if status.is_none() {
        return Ok(page.into_iter().map(|(key, value)| (key, Some(value))).collect());
    }
    if page.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<&[u8]> = page.iter().map(|(_, key)| key.as_slice()).collect();
    let values = store.get_many(&keys).await?;
    Ok(page.into_iter().map(|(_, key)| key).zip(values).collect())
}

#[cfg(test)]
mod tests;
