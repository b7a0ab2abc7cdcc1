//! Lookups by party or by name, and the DSO's public lists: each one scan within one
//! key's prefix or one kind's, whatever the size of the history ([`crate::state::scan`]).
//!
//! As the network's handler answers (`HttpScanHandler.scala`):
//!
//! - a transfer preapproval or transfer command counter of a party that has none is a
//!   404 (`No TransferPreapproval found for party: p`; for the counter, which means the
//!   nonce to use is 0, `…, use 0 for the nonce`); several active ones answer the
//!   latest created;
//! - the status of a sender's transfer commands with a nonce
//!   ([`crate::state::scan::transfer_commands`]) is a map by contract id, the newest
//!   [`MAX_PER_NONCE`](crate::state::scan::transfer_commands::MAX_PER_NONCE); none is a 404
//!   (`Couldn't find transfer command for sender s with nonce n created in the last 24h`,
//!   as the network words it, though the node keeps them all). `sender` and `nonce`
//!   (an int64) are required query parameters;
//! - a provider without a featured app right is a 200 without `featured_app_right`;
//! - ANS entries are those not yet expired (`expiresAt` after now): the list is in name
//!   order from `name_prefix`, at most `page_size` (1 to [`MAX_PAGE`]; a scan of that
//!   many keys, expired ones left out of it); by party, the first of the party's entries
//!   in name order; by name, the latest of that name. None is a 404
//!   (`No ans entry found for party: p`, `… for name: n`).
//! - Besides the entries on the ledger, the DSO and each SV have an entry derived from
//!   the active DSO rules, as the network's `DsoAnsResolver.scala` makes them: the
//!   DSO's is named `dso.<acronym>`, an SV's `<its name in lower case>.sv.<acronym>`
//!   (the acronym is `LEDGER_NODE_NAMES_ANS` in lower case), with an empty `url` and
//!   `description` and without `contract_id` or `expires_at`. A lookup by party or by
//!   name answers the derived entry first; while no DSO rules are active it is a 404
//!   (`No DsoRules contract found`). The list appends the derived entries whose names
//!   start with `name_prefix` (the DSO's first, then the SVs' in the order of the rules'
//!   `svs`) to the entries on the ledger, as many as fit in `page_size`.
//! - validator licenses come newest first (then by contract id, highest first), `limit`
//!   (1 to [`MAX_PAGE`], 1000 by default) a page; `next_page_token`, when there are
//!   more, is passed back as `after`. It counts the creation time of the page's last
//!   license, in microseconds, a thousand times, plus how many licenses of that
//!   microsecond were answered: the next page is one scan that passes over those.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Value, json};

use crate::api::http::{Response, query_param};
use crate::model::env::Env;
use crate::model::error::Error;
use crate::model::ids::{EntryName, PartyId};
use crate::model::time::Timestamp;
use crate::state::scan::read::{self, Entry};
use crate::state::scan::transfer_commands;
use crate::state::scan::{Index, Kind, ScanTemplates, index_prefix};
use crate::storage::store::Store;

use super::rules::map_entries;
use super::{array, object};

/// Largest `page_size` of the ANS entries and `limit` of the validator licenses.
pub const MAX_PAGE: u32 = 1000;

/// Most of one party's ANS entries read to find its first one not expired.
pub const MAX_ENTRIES_PER_PARTY: u32 = 100;

/// `GET /v0/transfer-preapprovals/by-party/{party}`.
pub async fn transfer_preapproval<S: Store>(store: &S, party: PartyId) -> Result<Response, Error> {
    let found = read::lookup(store, Index::PreapprovalByReceiver, &[&party]).await?;
    let entry = found.ok_or_else(|| Error::NotFound(format!("No TransferPreapproval found for party: {party}")))?;
    Ok(Response::json(200, object(&[("transfer_preapproval", &entry.with_state(store, false).await?)])))
}

/// `GET /v0/transfer-command-counter/{party}`.
pub async fn transfer_command_counter<S: Store>(store: &S, party: PartyId) -> Result<Response, Error> {
    let found = read::lookup(store, Index::CounterBySender, &[&party]).await?;
    let entry = found.ok_or_else(|| {
        Error::NotFound(format!("No TransferCommandCounter found for party: {party}, use 0 for the nonce"))
    })?;
    Ok(Response::json(200, object(&[("transfer_command_counter", &entry.with_state(store, false).await?)])))
}

/// `GET /v0/transfer-command/status?sender=&nonce=`.
pub async fn transfer_command_status<S: Store>(store: &S, query: &str) -> Result<Response, Error> {
    let required = |name: &str| {
        query_param(query, name)?.ok_or_else(|| Error::BadRequest(format!("query parameter {name}: required")))
    };
    let sender = PartyId::parse("query parameter sender", &required("sender")?)?;
    let raw = required("nonce")?;
    let nonce = raw
        .parse::<i64>()
        .map_err(|_| Error::BadRequest(format!("query parameter nonce: expected an integer (int64), got {raw:?}")))?;
    let found = transfer_commands::lookup(store, &sender, nonce).await?;
    if found.is_empty() {
        return Err(Error::NotFound(format!(
            "Couldn't find transfer command for sender {sender} with nonce {nonce} created in the last 24h"
        )));
    }
    let mut map = Vec::from(*b"{");
    for (index, (contract_id, entry)) in found.iter().enumerate() {
        if index > 0 {
            map.push(b',');
        }
        map.extend_from_slice(&super::string(contract_id));
        map.push(b':');
        map.extend_from_slice(entry);
    }
    map.push(b'}');
    Ok(Response::json(200, object(&[("transfer_commands_by_contract_id", &map)])))
}

/// `GET /v0/featured-apps`.
pub async fn featured_apps<S: Store>(store: &S, templates: &ScanTemplates) -> Result<Response, Error> {
    let apps = read::list(store, Kind::FeaturedAppRight, templates).await?;
    Ok(Response::json(200, object(&[("featured_apps", &array(apps.into_iter().map(|e| e.json)))])))
}

/// `GET /v0/featured-apps/{provider_party_id}`.
pub async fn featured_app<S: Store>(store: &S, provider: PartyId) -> Result<Response, Error> {
    let body = match read::lookup(store, Index::FeaturedAppByProvider, &[&provider]).await? {
        Some(entry) => object(&[("featured_app_right", &entry.json)]),
        None => b"{}".to_vec(),
    };
    Ok(Response::json(200, body))
}

/// `GET /v0/unclaimed-development-fund-coupons`: one more read per coupon, for its state.
pub async fn development_fund_coupons<S: Store>(store: &S, templates: &ScanTemplates) -> Result<Response, Error> {
    let mut coupons = Vec::new();
    for coupon in read::list(store, Kind::DevelopmentFundCoupon, templates).await? {
        coupons.push(coupon.with_state(store, false).await?);
    }
    Ok(Response::json(200, object(&[("unclaimed-development-fund-coupons", &array(coupons))])))
}

/// `GET /v0/admin/sv/voterequests`.
pub async fn vote_requests<S: Store>(store: &S, templates: &ScanTemplates) -> Result<Response, Error> {
    let requests = read::list(store, Kind::VoteRequest, templates).await?;
    Ok(Response::json(200, object(&[("dso_rules_vote_requests", &array(requests.into_iter().map(|e| e.json)))])))
}

/// The integer query parameter `name`, within `1..=MAX_PAGE`; absent is `None`.
fn page_param(query: &str, name: &str) -> Result<Option<u32>, Error> {
    let Some(raw) = query_param(query, name)? else { return Ok(None) };
    match raw.parse::<u32>() {
        Ok(n) if (1..=MAX_PAGE).contains(&n) => Ok(Some(n)),
        _ => Err(Error::BadRequest(format!(
            "query parameter {name}: expected an integer from 1 to {MAX_PAGE}, got {raw:?}"
        ))),
    }
}

/// How many licenses created in one microsecond a page token can count past.
const PER_MICROSECOND: i64 = 1000;

/// `GET /v0/admin/validator/licenses?after=&limit=`.
pub async fn validator_licenses<S: Store>(store: &S, query: &str) -> Result<Response, Error> {
    let limit = page_param(query, "limit")?.unwrap_or(MAX_PAGE);
    let after = match query_param(query, "after")? {
        None => None,
        Some(raw) => Some(raw.parse::<i64>().map_err(|_| {
            Error::BadRequest(format!("query parameter after: expected a next_page_token (an integer), got {raw:?}"))
        })?),
    };
    // A token is the creation time of the last license answered, and how many of that
    // microsecond were answered so far: the next page starts after them.
    let (before, skip) = match after {
        Some(token) => (Some(token.div_euclid(PER_MICROSECOND)), token.rem_euclid(PER_MICROSECOND) as u32),
        None => (None, 0),
    };
    let end = before.map(|micros| micros.saturating_add(1));
    let mut found = read::newest_before(store, Kind::ValidatorLicense, end, limit + skip + 1).await?;
    let skipped = found.iter().take(skip as usize).take_while(|(created, _)| Some(*created) == before).count();
    found.drain(..skipped);
    let more = found.len() > limit as usize;
    found.truncate(limit as usize);
    let mut next = None;
    if more && let Some((last, _)) = found.last() {
        let on_page = found.iter().filter(|(created, _)| created == last).count() as i64;
        let earlier = if Some(*last) == before { skipped as i64 } else { 0 };
        let counted = on_page + earlier;
        let token = last.checked_mul(PER_MICROSECOND).and_then(|t| t.checked_add(counted));
        next = Some(token.filter(|_| counted < PER_MICROSECOND).ok_or_else(|| {
            Error::Unsupported(format!(
                "more than {} validator licenses were created in one microsecond; they cannot be paged",
                PER_MICROSECOND - 1
            ))
        })?);
    }
    let licenses = array(found.into_iter().map(|(_, entry)| entry.json));
    let mut fields: Vec<(&str, &[u8])> = alloc::vec![("validator_licenses", licenses.as_slice())];
    let token = next.map(|n| format!("{n}"));
    if let Some(token) = &token {
        fields.push(("next_page_token", token.as_bytes()));
    }
    Ok(Response::json(200, object(&fields)))
}

/// An ANS entry as the network answers it (`AnsEntry`), if it has not expired by `now`.
fn ans_entry(entry: &Entry, now: Timestamp) -> Result<Option<Value>, Error> {
    let payload = entry.payload()?;
    let text = |field: &str| payload.get(field).and_then(Value::as_str).unwrap_or_default();
    let expires_at = Timestamp::parse(text("expiresAt")).ok();
    if expires_at.is_some_and(|at| at <= now) {
        return Ok(None);
    }
    let mut out = json!({
        "contract_id": entry.contract_id,
        "user": text("user"),
        "name": text("name"),
        "url": text("url"),
        "description": text("description"),
    });
    if let (Some(at), Some(map)) = (expires_at, out.as_object_mut()) {
        map.insert("expires_at".into(), Value::String(format!("{at}")));
    }
    Ok(Some(out))
}

/// The ANS entries derived from the active DSO rules, as (user, name): the DSO's, then
/// each SV's in the order of the rules' `svs`; `None` while no DSO rules are active.
async fn dso_entries<S: Store>(store: &S, acronym: &str) -> Result<Option<Vec<(String, String)>>, Error> {
    let Some(rules) = read::latest(store, Kind::DsoRules).await? else { return Ok(None) };
    let payload = rules.payload()?;
    let unreadable = |what: &str| Error::Internal(format!("DSO rules {}: {what}", rules.contract_id));
    let dso = payload.get("dso").and_then(Value::as_str).ok_or_else(|| unreadable("no dso party"))?;
    let mut entries = alloc::vec![(String::from(dso), format!("dso.{acronym}"))];
    for (sv, info) in map_entries(payload.get("svs")) {
        let name = info.get("name").and_then(Value::as_str).ok_or_else(|| unreadable("an SV without a name"))?;
        entries.push((String::from(sv), format!("{}.sv.{acronym}", name.to_lowercase())));
    }
    Ok(Some(entries))
}

/// Whether `name` has the form the network resolves to an SV's derived entry:
/// letters, digits, `_` or `-`, then `.sv.<acronym>`.
fn is_sv_entry_name(name: &str, acronym: &str) -> bool {
    let suffix = format!(".sv.{acronym}");
    name.strip_suffix(suffix.as_str())
        .is_some_and(|head| !head.is_empty() && head.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
}

/// A derived entry as the network answers it: no contract, no expiry.
fn dso_entry((user, name): &(String, String)) -> Value {
    json!({ "user": user, "name": name, "url": "", "description": "" })
}

/// The derived entries, or the 404 the network answers while no DSO rules are active.
async fn dso_entries_or_404<S: Store>(store: &S, env: &Env<'_>) -> Result<Vec<(String, String)>, Error> {
    dso_entries(store, &env.config.ans_acronym)
        .await?
        .ok_or_else(|| Error::NotFound(String::from("No DsoRules contract found")))
}

/// `GET /v0/ans-entries?name_prefix=&page_size=`.
pub async fn ans_entries<S: Store>(store: &S, env: &Env<'_>, query: &str) -> Result<Response, Error> {
    let page_size = page_param(query, "page_size")?
        .ok_or_else(|| Error::BadRequest(format!("query parameter page_size: required (1 to {MAX_PAGE})")))?;
    let name_prefix = query_param(query, "name_prefix")?.unwrap_or_default();
    crate::model::ids::check_id("name_prefix", &name_prefix)?;
    let start = read::text_prefix(index_prefix(Index::AnsEntryByName, &[]), &name_prefix);
    let mut entries = Vec::new();
    for entry in read::range(store, Index::AnsEntryByName, start, page_size).await? {
        entries.extend(ans_entry(&entry, env.now)?);
    }
    let room = page_size as usize - entries.len();
    if room > 0 {
        let derived = dso_entries(store, &env.config.ans_acronym).await?.unwrap_or_default();
        let matching = derived.iter().filter(|(_, name)| name.starts_with(name_prefix.as_str()));
        entries.extend(matching.take(room).map(dso_entry));
    }
    Ok(Response::ok(&json!({ "entries": entries })))
}

/// `GET /v0/ans-entries/by-party/{party}`.
pub async fn ans_entry_by_party<S: Store>(store: &S, env: &Env<'_>, party: PartyId) -> Result<Response, Error> {
    let derived = dso_entries_or_404(store, env).await?;
    if let Some(found) = derived.iter().find(|(user, _)| user.as_str() == &*party) {
        return Ok(Response::ok(&json!({ "entry": dso_entry(found) })));
    }
    let start = index_prefix(Index::AnsEntryByUser, &[&party]);
    for entry in read::range(store, Index::AnsEntryByUser, start, MAX_ENTRIES_PER_PARTY).await? {
        if let Some(found) = ans_entry(&entry, env.now)? {
            return Ok(Response::ok(&json!({ "entry": found })));
        }
    }
    Err(Error::NotFound(format!("No ans entry found for party: {party}")))
}

/// `GET /v0/ans-entries/by-name/{name}`.
pub async fn ans_entry_by_name<S: Store>(store: &S, env: &Env<'_>, name: EntryName) -> Result<Response, Error> {
    let derived = dso_entries_or_404(store, env).await?;
    let resolvable = |(index, (_, derived_name)): &(usize, &(String, String))| {
        derived_name.as_str() == &*name && (*index == 0 || is_sv_entry_name(&name, &env.config.ans_acronym))
    };
    if let Some((_, found)) = derived.iter().enumerate().find(resolvable) {
        return Ok(Response::ok(&json!({ "entry": dso_entry(found) })));
    }
    let found = match read::lookup(store, Index::AnsEntryByName, &[&name]).await? {
        Some(entry) => ans_entry(&entry, env.now)?,
        None => None,
    };
    let entry: Value = found.ok_or_else(|| Error::NotFound(format!("No ans entry found for name: {name}")))?;
    Ok(Response::ok(&json!({ "entry": entry })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use crate::storage::exec::block_on;
    use crate::storage::store::MemoryStore;
    use alloc::string::{String, ToString};
    use alloc::vec;

    const TEMPLATE: &str = "pkg:Platform.ExternalPartyCoinRules:TransferCommand";

    /// A transaction `id` at second `second` whose root events are `events` (each
    /// given its event id `id:n`).
    fn transaction(id: &str, second: u32, events: Vec<Value>) -> String {
        let record_time = format!("2024-01-01T00:00:{second:02}Z");
        let mut by_id = serde_json::Map::new();
        let mut roots = Vec::new();
        for (n, mut event) in events.into_iter().enumerate() {
            let event_id = format!("{id}:{n}");
            event["event_id"] = json!(event_id);
            if event["event_type"] == "created_event" {
                event["created_at"] = json!(record_time);
            }
            roots.push(json!(event_id));
            by_id.insert(event_id, event);
        }
        let update = json!({"update": {
            "update_id": id, "migration_id": 0, "workflow_id": "", "record_time": record_time,
            "synchronizer_id": "s::1", "effective_at": record_time, "root_event_ids": roots, "events_by_id": by_id
        }});
        format!("{update}\n")
    }

    fn created(contract_id: &str, sender: &str, nonce: i64) -> Value {
        json!({
            "event_type": "created_event", "contract_id": contract_id, "template_id": TEMPLATE,
            "package_name": "p", "create_arguments": {"record": {"fields": [
                {"label": "sender", "value": {"party": sender}},
                {"label": "nonce", "value": {"int64": nonce.to_string()}}
            ]}},
            "signatories": [sender], "observers": [], "created_event_blob": "YmxvYg=="
        })
    }

    fn exercised(contract_id: &str, choice: &str, result: Value) -> Value {
        json!({
            "event_type": "exercised_event", "contract_id": contract_id, "template_id": TEMPLATE,
            "package_name": "p", "choice": choice, "choice_argument": {"record": {"fields": []}},
            "child_event_ids": [], "exercise_result": result, "consuming": true, "acting_parties": ["d::1"]
        })
    }

    /// A `TransferCommand_Send` result of constructor `tag` with `value`.
    fn sent(contract_id: &str, tag: &str, value: Value) -> Value {
        let result = json!({"record": {"fields": [
            {"label": "result", "value": {"variant": {"constructor": tag, "value": value}}},
            {"label": "sender", "value": {"party": "alice::1"}},
            {"label": "nonce", "value": {"int64": "0"}}
        ]}});
        exercised(contract_id, "TransferCommand_Send", result)
    }

    fn store(lines: &[String]) -> MemoryStore {
        let store = MemoryStore::new();
        block_on(crate::ingest::ingest(lines.concat().as_bytes(), &store, &Config::default())).expect("ingested");
        store
    }

    fn status(store: &MemoryStore, query: &str) -> (u16, Value) {
        let response = block_on(transfer_command_status(store, query)).unwrap_or_else(Error::into_response);
        (response.status, serde_json::from_slice(&response.body).expect("a JSON body"))
    }

    fn statuses(body: &Value) -> Vec<(String, Value)> {
        let map = body["transfer_commands_by_contract_id"].as_object().expect("a map");
        map.iter().map(|(cid, entry)| (cid.clone(), entry["status"].clone())).collect()
    }

    #[test]
    fn a_transfer_command_status_follows_its_creation_and_the_exercise_that_archives_it() {
        let failure = json!({"record": {"fields": [{"label": "reason", "value": {"variant": {
            "constructor": "ITR_Other", "value": {"text": "cool reason"}}}}]}});
        let success = json!({"record": {"fields": [{"label": "result", "value": {"record": {"fields": []}}}]}});
        let store = store(&[
            transaction("t1", 1, vec![created("c-pending", "alice::1", 0), created("c-sent", "alice::1", 0)]),
            transaction("t2", 2, vec![created("c-failed", "alice::1", 0), created("c-withdrawn", "alice::1", 0)]),
            transaction("t3", 3, vec![created("c-expired", "alice::1", 0), created("c-other", "alice::1", 1)]),
            transaction("t4", 4, vec![sent("c-sent", "TransferCommandResultSuccess", success)]),
            transaction("t5", 5, vec![sent("c-failed", "TransferCommandResultFailure", failure)]),
            transaction("t6", 6, vec![exercised("c-withdrawn", "TransferCommand_Withdraw", json!({"unit": {}}))]),
            transaction("t7", 7, vec![exercised("c-expired", "TransferCommand_Expire", json!({"unit": {}}))]),
        ]);
        let (code, body) = status(&store, "sender=alice%3A%3A1&nonce=0");
        assert_eq!(code, 200, "{body}");
        let failed = |kind: &str, reason: &str| json!({"status": "failed", "failure_kind": kind, "reason": reason});
        assert_eq!(
            statuses(&body),
            // Newest first, then by contract id, highest first.
            [
                ("c-expired".into(), failed("expired", "The TransferCommand has expired")),
                ("c-withdrawn".into(), failed("withdrawn", "The TransferCommand has been withdrawn by the sender")),
                ("c-failed".into(), failed("failed", "ITR_Other(cool reason)")),
                ("c-sent".into(), json!({"status": "sent"})),
                ("c-pending".into(), json!({"status": "created"})),
            ]
        );
        let contract = &body["transfer_commands_by_contract_id"]["c-failed"]["contract"];
        assert_eq!(contract["contract_id"], "c-failed");
        assert_eq!(contract["template_id"], TEMPLATE);
        assert_eq!(contract["payload"], json!({"sender": "alice::1", "nonce": "0"}));
        assert_eq!(contract["created_event_blob"], "YmxvYg==");
        assert_eq!(contract["created_at"], "2024-01-01T00:00:02.000000Z");
        let (_, other) = status(&store, "nonce=1&sender=alice::1");
        assert_eq!(statuses(&other), [("c-other".into(), json!({"status": "created"}))]);
    }

    #[test]
    fn a_transfer_command_created_and_sent_in_one_transaction_is_sent() {
        let success = json!({"record": {"fields": []}});
        let store = store(&[transaction(
            "t1",
            1,
            vec![created("c1", "alice::1", 3), sent("c1", "TransferCommandResultSuccess", success)],
        )]);
        assert_eq!(statuses(&status(&store, "sender=alice::1&nonce=3").1), [("c1".into(), json!({"status": "sent"}))]);
    }

    #[test]
    fn no_transfer_command_of_the_sender_and_nonce_is_a_404_in_the_network_s_words() {
        let store = store(&[transaction("t1", 1, vec![created("c1", "alice::1", 0)])]);
        for query in ["sender=alice::1&nonce=1", "sender=bob::1&nonce=0", "sender=alice::&nonce=0"] {
            let (code, body) = status(&store, query);
            assert_eq!(code, 404, "{query}");
            assert!(body["error"].as_str().unwrap().starts_with("Couldn't find transfer command for sender "));
        }
        assert_eq!(
            status(&store, "sender=alice::1&nonce=1").1,
            json!({"error": "Couldn't find transfer command for sender alice::1 with nonce 1 created in the last 24h"})
        );
    }

    #[test]
    fn a_missing_or_malformed_sender_or_nonce_is_a_400_naming_it() {
        let store = MemoryStore::new();
        let long = "p".repeat(600);
        for (query, named) in [
            ("nonce=0", "query parameter sender"),
            ("sender=a::1", "query parameter nonce"),
            ("sender=a::1&nonce=x", "query parameter nonce"),
            ("sender=a::1&nonce=1.5", "query parameter nonce"),
            ("sender=a::1&nonce=9223372036854775808", "query parameter nonce"),
            ("sender=a::1&nonce=0&nonce=1", "query parameter nonce"),
            (&*alloc::format!("sender={long}&nonce=0"), "query parameter sender"),
        ] {
            let (code, body) = status(&store, query);
            assert_eq!(code, 400, "{query}");
            assert!(body["error"].as_str().unwrap().starts_with(named), "{query}: {body}");
        }
    }

    #[test]
    fn a_send_result_of_no_known_constructor_refuses_the_batch() {
        let store = MemoryStore::new();
        let lines = [
            transaction("t1", 1, vec![created("c1", "alice::1", 0)]),
            transaction("t2", 2, vec![sent("c1", "Surprise", json!({"unit": {}}))]),
        ];
        let refused = block_on(crate::ingest::ingest(lines.concat().as_bytes(), &store, &Config::default()));
        assert!(matches!(refused, Err(Error::BadRequest(message)) if message.contains("TransferCommand_Send")));
        assert_eq!(status(&store, "sender=alice::1&nonce=0").0, 404, "nothing half-applied");
    }

    #[test]
    fn only_names_of_the_network_s_form_resolve_to_an_sv_s_entry() {
        assert!(is_sv_entry_name("digital-asset_2.sv.cns", "cns"));
        assert!(!is_sv_entry_name("global synchronizer.sv.cns", "cns"));
        assert!(!is_sv_entry_name(".sv.cns", "cns"));
        assert!(!is_sv_entry_name("sv1.sv.ans", "cns"));
    }

    #[test]
    fn page_parameters_are_integers_within_bounds_and_named_when_not() {
        assert_eq!(page_param("limit=5", "limit"), Ok(Some(5)));
        assert_eq!(page_param("", "limit"), Ok(None));
        for query in ["limit=0", "limit=-1", "limit=x", "limit=1001", "limit="] {
            match page_param(query, "limit") {
                Err(Error::BadRequest(message)) => assert!(message.starts_with("query parameter limit"), "{message}"),
                other => panic!("{query}: {other:?}"),
            }
        }
    }
}
