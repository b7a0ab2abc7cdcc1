//! Every read a node serves, planned from its own OpenAPI document so that none is
//! forgotten: each operation of the document (`GET /openapi.json`) is either read here,
//! with parameters from the history and from the reference node's own answers, or
//! left out with the reason ([`LEFT_OUT`]); an operation this plan does not know fails
//! the test that walks it. The history stream, the import updates and the updates
//! before a time are paged ([`Paged`]): each page's request follows from the one before.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::client::{Answer, Client};

/// One request.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Read {
    /// `GET` or `POST`.
    pub method: &'static str,
    /// Path and query.
    pub target: String,
    /// A JSON body (POST).
    pub body: Option<String>,
}

impl Read {
    pub fn get(target: impl Into<String>) -> Read {
        Read { method: "GET", target: target.into(), body: None }
    }

    pub fn post(target: impl Into<String>, body: &Value) -> Read {
        Read { method: "POST", target: target.into(), body: Some(body.to_string()) }
    }
}

/// The operations no read of this plan covers, and why.
pub const LEFT_OUT: &[(&str, &str, &str)] = &[
    ("POST", "/v0/wallet/buy-traffic-requests", "the wallet's answers are each node's own"),
    ("POST", "/v0/wallet/buy-traffic-requests/{tracking_id}/status", "the wallet's answers are each node's own"),
    ("GET", "/status", "a node's id and uptime are its process's own"),
];

/// The operations whose reads depend on party hosting, which a public follower learns
/// from its upstream and may serve late (read by a test of their own).
pub const HOSTING: &[&str] = &[
    "/v0/domains/{domain_id}/parties/{party_id}/participant-id",
    "/v1/domains/{domain_id}/parties/{party_id}/participant-id",
];

/// A paged read: the first page's request, and how the next is made from an answer.
#[derive(Debug, Clone)]
pub enum Paged {
    /// `POST /v{1,2}/updates` in one encoding, `after` the last item of a page.
    Stream { path: &'static str, encoding: &'static str, page_size: u32 },
    /// `POST /v0/backfilling/import-updates` of a migration, `after_update_id` the last.
    Imports { migration_id: i64, limit: u32 },
    /// `POST /v0/backfilling/updates-before` of a migration and synchronizer, `before`
    /// the earliest record time of a page.
    Before { migration_id: i64, synchronizer_id: String, count: u32 },
}

impl Paged {
    /// The request of the page after the one that answered `previous` (`None`: the
    /// first page); `None` when `previous` was the last.
    pub fn next(&self, previous: Option<&Value>) -> Option<Read> {
        let items = previous.map(|page| page["transactions"].as_array().cloned().unwrap_or_default());
        if items.as_ref().is_some_and(Vec::is_empty) {
            return None;
        }
        let last = items.as_ref().and_then(|items| items.last().cloned());
        match self {
            Paged::Stream { path, encoding, page_size } => {
                let mut body = json!({"page_size": page_size, "daml_value_encoding": encoding});
                if let Some(last) = last {
                    let migration_id = last.get("migration_id").or_else(|| last.pointer("/event/migration_id"));
                    let migration_id = migration_id.unwrap_or_else(|| panic!("an update without a migration: {last}"));
                    body["after"] =
                        json!({"after_migration_id": migration_id, "after_record_time": last["record_time"]});
                }
                Some(Read::post(*path, &body))
            }
            Paged::Imports { migration_id, limit } => {
                let after = last.map_or(Value::from(""), |last| last["update_id"].clone());
                let body = json!({"migration_id": migration_id, "after_update_id": after, "limit": limit});
                Some(Read::post("/v0/backfilling/import-updates", &body))
            }
            Paged::Before { migration_id, synchronizer_id, count } => {
                let before = match items {
                    None => Value::from("2100-01-01T00:00:00Z"),
                    Some(items) => items.iter().filter_map(|u| u["record_time"].as_str()).min()?.into(),
                };
                let body = json!({
                    "migration_id": migration_id, "synchronizer_id": synchronizer_id,
                    "before": before, "count": count,
                });
                Some(Read::post("/v0/backfilling/updates-before", &body))
            }
        }
    }
}

/// What the plan fills parameters with: gathered from the history and from the
/// reference node.
#[derive(Debug, Default)]
pub struct Facts {
    /// Every update id of the history.
    pub update_ids: Vec<String>,
    /// Every (synchronizer, party) a topology record of the history hosts.
    pub hosted: BTreeSet<(String, String)>,
    /// Every synchronizer of the history.
    pub synchronizers: BTreeSet<String>,
    /// The transfer instructions created in the history.
    pub instructions: Vec<String>,
    /// The allocations created in the history.
    pub allocations: Vec<String>,
    /// (sender, nonce) of each transfer command of the history.
    pub transfer_commands: BTreeSet<(String, String)>,
    /// The providers of featured app rights.
    pub providers: BTreeSet<String>,
    /// The receivers of transfer preapprovals.
    pub preapproved: BTreeSet<String>,
    /// Record times of the history's updates (import updates' left out), in order.
    pub record_times: Vec<String>,
}

impl Facts {
    /// What `history` (its ingest records) holds.
    pub fn of(history: &[Value]) -> Facts {
        let mut facts = Facts::default();
        for line in history {
            if let Some(topology) = line.get("topology") {
                let text = |key: &str| topology[key].as_str().unwrap_or_default().to_owned();
                facts.hosted.insert((text("synchronizer_id"), text("party_id")));
            }
            let Some(update) = line.get("update") else { continue };
            facts.update_ids.push(update["update_id"].as_str().expect("an update id").to_owned());
            if let Some(synchronizer) = update["synchronizer_id"].as_str() {
                facts.synchronizers.insert(synchronizer.to_owned());
            }
            if let Some(time) = update["record_time"].as_str()
                && !time.starts_with("0001-")
            {
                facts.record_times.push(time.to_owned());
            }
            let events = update.get("events_by_id").and_then(Value::as_object).into_iter().flat_map(|m| m.values());
            for event in events.chain(update.pointer("/event/created_event")) {
                if event["event_type"] != "created_event" {
                    continue;
                }
                let id = event["contract_id"].as_str().expect("a contract id").to_owned();
                let template = event["template_id"].as_str().unwrap_or_default();
                let arguments = &event["create_arguments"];
                let party = |label: &str| field(arguments, label).and_then(|v| v["party"].as_str()).map(str::to_owned);
                match template.rsplit(':').next().unwrap_or_default() {
                    "CoinTransferInstruction" => facts.instructions.push(id),
                    "CoinAllocation" => facts.allocations.push(id),
                    "TransferCommand" => {
                        let nonce = field(arguments, "nonce").and_then(|v| v["int64"].as_str()).map(str::to_owned);
                        if let (Some(sender), Some(nonce)) = (party("sender"), nonce) {
                            facts.transfer_commands.insert((sender, nonce));
                        }
                    }
                    "FeaturedAppRight" => facts.providers.extend(party("provider")),
                    "TransferPreapproval" => facts.preapproved.extend(party("receiver")),
                    _ => {}
                }
            }
        }
        facts.record_times.sort();
        facts
    }

    /// Every party a topology record hosts.
    pub fn parties(&self) -> BTreeSet<&str> {
        self.hosted.iter().map(|(_, party)| party.as_str()).collect()
    }
}

/// The value of the record field `label` of a labelled `protobuf_json` record.
fn field<'a>(record: &'a Value, label: &str) -> Option<&'a Value> {
    record.pointer("/record/fields")?.as_array()?.iter().find(|f| f["label"] == label).map(|f| &f["value"])
}

/// Which reads a plan holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// Every read but party hosting's.
    AllButHosting,
    /// Party hosting's ([`HOSTING`]).
    Hosting,
}

/// The plan: single reads, and paged ones.
#[derive(Debug, Default, Clone)]
pub struct Plan {
    pub reads: Vec<Read>,
    pub paged: Vec<Paged>,
}

impl Plan {
    /// This plan with the reads of updates by id of every `n`th update of `facts` only
    /// (the pages hold every update, in both encodings and both versions).
    pub fn every_nth_update_by_id(&self, facts: &Facts, n: usize) -> Plan {
        let kept: BTreeSet<&str> = facts.update_ids.iter().step_by(n).map(String::as_str).collect();
        let all: BTreeSet<&str> = facts.update_ids.iter().map(String::as_str).collect();
        let reads = self
            .reads
            .iter()
            .filter(|read| {
                let path = read.target.split('?').next().unwrap_or_default();
                let path = path.strip_prefix("/api/scan").unwrap_or(path);
                match path.strip_prefix("/v2/updates/").or_else(|| path.strip_prefix("/v1/updates/")) {
                    Some(id) => kept.contains(id) || !all.contains(id),
                    None => true,
                }
            })
            .cloned()
            .collect();
        Plan { reads, paged: self.paged.clone() }
    }
}

/// Every operation of `reference`'s OpenAPI document, as (method, path template), the
/// base path (`/api/scan`, `/api/validator`) kept.
pub fn operations(reference: &Client) -> Vec<(String, String)> {
    let document = reference.get("/openapi.json").json();
    let paths = document["paths"].as_object().expect("the OpenAPI document's paths");
    let mut operations = Vec::new();
    for (path, item) in paths {
        for method in item.as_object().expect("a path item").keys() {
            if matches!(method.as_str(), "get" | "post" | "put" | "delete" | "patch") {
                operations.push((method.to_uppercase(), path.clone()));
            }
        }
    }
    operations
}

/// The plan of the operations of `reference`'s document `which` names, but
/// [`LEFT_OUT`]'s; panics naming an operation it does not know.
pub fn every_read(reference: &Client, facts: &Facts, which: Which) -> Plan {
    let mut plan = Plan::default();
    for (method, path) in operations(reference) {
        let (base, template) = ["/api/scan", "/api/validator"]
            .iter()
            .find_map(|base| path.strip_prefix(base).map(|rest| (*base, rest)))
            .unwrap_or(("", path.as_str()));
        if LEFT_OUT.iter().any(|(m, p, _)| *m == method && *p == template) {
            continue;
        }
        if HOSTING.contains(&template) != (which == Which::Hosting) {
            continue;
        }
        let Some(Planned { reads, paged }) = reads_of(&method, template, reference, facts) else {
            panic!(
                "the OpenAPI document has {method} {path}, which this suite neither reads nor leaves out with a \
                 reason: add it to reads_of or LEFT_OUT"
            );
        };
        plan.reads.extend(reads.into_iter().map(|mut read| {
            read.target.insert_str(0, base);
            read
        }));
        if base.is_empty() {
            plan.paged.extend(paged);
        }
    }
    plan.reads.sort();
    plan.reads.dedup();
    plan
}

/// What one operation is read with.
#[derive(Debug, Default)]
struct Planned {
    reads: Vec<Read>,
    paged: Vec<Paged>,
}

impl From<Vec<Read>> for Planned {
    fn from(reads: Vec<Read>) -> Self {
        Planned { reads, paged: Vec::new() }
    }
}

/// The reads of the operation `method template`; `None` for one this plan does not know.
fn reads_of(method: &str, template: &str, reference: &Client, facts: &Facts) -> Option<Planned> {
    let parties = facts.parties();
    let each_party =
        |prefix: &str| -> Vec<Read> { parties.iter().map(|p| Read::get(format!("{prefix}{p}"))).collect() };
    let empty = json!({});
    let planned: Planned = match (method, template) {
        ("GET", "/version" | "/openapi.json" | "/livez" | "/readyz") => vec![Read::get(template)].into(),
        ("GET", "/v2/updates/{update_id}" | "/v1/updates/{update_id}") => {
            let prefix = template.trim_end_matches("{update_id}");
            let mut reads = Vec::new();
            for id in &facts.update_ids {
                reads.push(Read::get(format!("{prefix}{id}")));
                reads.push(Read::get(format!("{prefix}{id}?ledger_value_encoding=protobuf_json")));
            }
            reads.push(Read::get(format!("{prefix}no-such-update")));
            reads.into()
        }
        ("POST", "/v2/updates" | "/v1/updates") => {
            let path = if template == "/v2/updates" { "/v2/updates" } else { "/v1/updates" };
            let paged = vec![
                Paged::Stream { path, encoding: "protobuf_json", page_size: 100 },
                Paged::Stream { path, encoding: "compact_json", page_size: 77 },
            ];
            Planned { reads: Vec::new(), paged }
        }
        ("POST", "/v0/backfilling/migration-info") => {
            migrations(reference).map(|m| Read::post(template, &json!({"migration_id": m}))).collect::<Vec<_>>().into()
        }
        ("POST", "/v0/backfilling/import-updates") => {
            let paged = migrations(reference).map(|migration_id| Paged::Imports { migration_id, limit: 40 }).collect();
            Planned { reads: Vec::new(), paged }
        }
        ("POST", "/v0/backfilling/updates-before") => {
            let mut paged = Vec::new();
            for migration_id in migrations(reference) {
                for synchronizer_id in &facts.synchronizers {
                    paged.push(Paged::Before { migration_id, synchronizer_id: synchronizer_id.clone(), count: 60 });
                }
            }
            Planned { reads: Vec::new(), paged }
        }
        ("GET", "/v0/state/acs/snapshot-timestamp-after") => {
            let times = &facts.record_times;
            let picks =
                ["2000-01-01T00:00:00Z", times[0].as_str(), times[times.len() / 2].as_str(), "2100-01-01T00:00:00Z"];
            let mut reads = Vec::new();
            for migration_id in migrations(reference) {
                for after in picks {
                    reads.push(Read::get(format!("{template}?after={after}&migration_id={migration_id}")));
                }
            }
            reads.into()
        }
        (
            "GET",
            "/v0/backfilling/status"
            | "/v0/closed-rounds"
            | "/v0/coin-price/votes"
            | "/v0/roll-forward-lsu"
            | "/v0/dso-party-id"
            | "/v0/dso"
            | "/v0/dso-sequencers"
            | "/v0/scans"
            | "/v0/migrations/last"
            | "/v0/featured-apps"
            | "/v0/unclaimed-development-fund-coupons"
            | "/v0/admin/sv/voterequests"
            | "/v0/internal/reward-accounting-process/rounds/earliest-available"
            | "/v0/reward-accounting-process/rounds/earliest-available"
            | "/registry/metadata/v1/info"
            | "/registry/metadata/v1/instruments",
        ) => vec![Read::get(template)].into(),
        ("POST", "/v0/coin-rules" | "/v0/external-party-coin-rules" | "/v0/ans-rules") => {
            vec![Read::post(template, &empty)].into()
        }
        ("POST", "/v0/open-and-issuing-mining-rounds") => {
            let body = json!({"cached_open_mining_round_contract_ids": [], "cached_issuing_round_contract_ids": []});
            vec![Read::post(template, &body)].into()
        }
        ("GET", "/v0/domains/{domain_id}/parties/{party_id}/participant-id")
        | ("GET", "/v1/domains/{domain_id}/parties/{party_id}/participant-id") => {
            let version = &template[..3];
            let mut reads: Vec<Read> = facts
                .hosted
                .iter()
                .map(|(domain, party)| Read::get(format!("{version}/domains/{domain}/parties/{party}/participant-id")))
                .collect();
            let domain = facts.synchronizers.first().expect("a synchronizer");
            reads.push(Read::get(format!("{version}/domains/{domain}/parties/nobody::1220/participant-id")));
            reads.into()
        }
        ("GET", "/v0/transfer-preapprovals/by-party/{party}") => {
            each_party("/v0/transfer-preapprovals/by-party/").into()
        }
        ("GET", "/v0/transfer-command-counter/{party}") => each_party("/v0/transfer-command-counter/").into(),
        ("GET", "/v0/ans-entries/by-party/{party}") => each_party("/v0/ans-entries/by-party/").into(),
        ("GET", "/v0/featured-apps/{provider_party_id}") => {
            let mut reads: Vec<Read> =
                facts.providers.iter().map(|p| Read::get(format!("/v0/featured-apps/{p}"))).collect();
            reads.extend(each_party("/v0/featured-apps/"));
            reads.into()
        }
        ("GET", "/v0/transfer-command/status") => {
            let mut reads: Vec<Read> = facts
                .transfer_commands
                .iter()
                .map(|(sender, nonce)| Read::get(format!("{template}?sender={sender}&nonce={nonce}")))
                .collect();
            reads.push(Read::get(format!("{template}?sender=nobody::1220&nonce=0")));
            reads.into()
        }
        ("GET", "/v0/ans-entries") => {
            let mut reads =
                vec![Read::get(format!("{template}?page_size=1000")), Read::get(format!("{template}?page_size=2"))];
            reads.push(Read::get(format!("{template}?name_prefix=a&page_size=10")));
            reads.into()
        }
        ("GET", "/v0/ans-entries/by-name/{name}") => {
            let entries = reference.get("/v0/ans-entries?page_size=1000").json();
            let names = entries["entries"].as_array().into_iter().flatten().filter_map(|e| e["name"].as_str());
            let mut reads: Vec<Read> = names.map(|name| Read::get(format!("/v0/ans-entries/by-name/{name}"))).collect();
            reads.push(Read::get("/v0/ans-entries/by-name/no-such-name"));
            reads.into()
        }
        ("GET", "/v0/admin/validator/licenses") => {
            let first = reference.get("/v0/admin/validator/licenses?limit=1").json();
            let mut reads = vec![Read::get(template), Read::get(format!("{template}?limit=1"))];
            if let Some(token) = first.get("next_page_token") {
                reads.push(Read::get(format!("{template}?limit=1&after={token}")));
            }
            reads.into()
        }
        ("GET", "/registry/metadata/v1/instruments/{instrumentId}") => vec![
            Read::get("/registry/metadata/v1/instruments/Coin"),
            Read::get("/registry/metadata/v1/instruments/Other"),
        ]
        .into(),
        ("POST", "/registry/transfer-instruction/v1/{transferInstructionId}/choice-contexts/accept")
        | ("POST", "/registry/transfer-instruction/v1/{transferInstructionId}/choice-contexts/reject")
        | ("POST", "/registry/transfer-instruction/v1/{transferInstructionId}/choice-contexts/withdraw")
        | ("POST", "/registry/transfer-instruction/v2/{transferInstructionId}/choice-contexts/accept")
        | ("POST", "/registry/transfer-instruction/v2/{transferInstructionId}/choice-contexts/reject")
        | ("POST", "/registry/transfer-instruction/v2/{transferInstructionId}/choice-contexts/withdraw") => {
            let each = facts.instructions.iter().map(|id| template.replace("{transferInstructionId}", id));
            each.map(|target| Read::post(target, &empty)).collect::<Vec<_>>().into()
        }
        ("POST", "/registry/allocations/v1/{allocationId}/choice-contexts/execute-transfer")
        | ("POST", "/registry/allocations/v1/{allocationId}/choice-contexts/withdraw")
        | ("POST", "/registry/allocations/v1/{allocationId}/choice-contexts/cancel")
        | ("POST", "/registry/allocations/v2/{allocationId}/choice-contexts/withdraw")
        | ("POST", "/registry/allocations/v2/{allocationId}/choice-contexts/cancel") => {
            let each = facts.allocations.iter().map(|id| template.replace("{allocationId}", id));
            each.map(|target| Read::post(target, &empty)).collect::<Vec<_>>().into()
        }
        (
            "POST",
            "/registry/transfer-instruction/v1/transfer-factory" | "/registry/transfer-instruction/v2/transfer-factory",
        ) => {
            let admin = admin(reference);
            let sender = parties.first().expect("a party");
            let mut receivers = parties.clone();
            receivers.extend(facts.preapproved.iter().map(String::as_str));
            receivers
                .iter()
                .map(|receiver| Read::post(template, &transfer(&admin, sender, receiver)))
                .collect::<Vec<_>>()
                .into()
        }
        ("POST", "/registry/allocation-instruction/v1/allocation-factory") => {
            let admin = admin(reference);
            let sender = parties.first().expect("a party");
            parties
                .iter()
                .map(|receiver| Read::post(template, &allocation(&admin, sender, receiver)))
                .collect::<Vec<_>>()
                .into()
        }
        ("POST", "/registry/allocation-instruction/v2/allocation-factory") => {
            let admin = admin(reference);
            parties.iter().map(|owner| Read::post(template, &allocation_v2(&admin, owner))).collect::<Vec<_>>().into()
        }
        _ => return None,
    };
    Some(planned)
}

/// Migration 0 to one past the reference's last.
fn migrations(reference: &Client) -> impl Iterator<Item = i64> {
    let last = reference.get("/v0/migrations/last").json()["migration_id"].as_i64().unwrap_or(0);
    0..=last + 1
}

/// The registry's admin, as the reference names it.
fn admin(reference: &Client) -> String {
    let info = reference.get("/registry/metadata/v1/info").json();
    info["adminId"].as_str().expect("the registry's admin").to_owned()
}

/// A transfer factory's request of 10 coins from `sender` to `receiver`.
fn transfer(admin: &str, sender: &str, receiver: &str) -> Value {
    json!({
        "choiceArguments": {
            "expectedAdmin": admin,
            "transfer": {
                "sender": sender, "receiver": receiver, "amount": "10.0",
                "instrumentId": {"admin": admin, "id": "Coin"},
                "requestedAt": "2020-01-01T00:00:00Z", "executeBefore": "2999-01-01T00:00:00Z",
                "inputHoldingCids": ["holding-1"], "meta": {"values": {}},
            },
            "extraArgs": {"context": {"values": {}}, "meta": {"values": {}}},
        }
    })
}

/// A version 1 allocation factory's request of a leg of 10 coins from `sender` to
/// `receiver`.
fn allocation(admin: &str, sender: &str, receiver: &str) -> Value {
    json!({
        "choiceArguments": {
            "expectedAdmin": admin,
            "allocation": {
                "settlement": {
                    "executor": admin, "settlementRef": {"id": "trade-1", "cid": null},
                    "requestedAt": "2020-01-01T00:00:00Z", "allocateBefore": "2999-01-01T00:00:00Z",
                    "settleBefore": "2999-01-02T00:00:00Z", "meta": {"values": {}},
                },
                "transferLegId": "leg-0",
                "transferLeg": {
                    "sender": sender, "receiver": receiver, "amount": "10.0",
                    "instrumentId": {"admin": admin, "id": "Coin"}, "meta": {"values": {}},
                },
            },
            "requestedAt": "2020-01-01T00:00:00Z",
            "inputHoldingCids": ["holding-1"],
            "extraArgs": {"context": {"values": {}}, "meta": {"values": {}}},
        },
        "excludeDebugFields": true,
    })
}

/// A version 2 allocation factory's request of `owner`'s allocation to a settlement
/// `admin` executes.
fn allocation_v2(admin: &str, owner: &str) -> Value {
    json!({
        "choiceArguments": {
            "expectedAdmin": admin,
            "settlement": {
                "executors": [admin], "settlementRef": {"id": "trade-1", "cid": null},
                "requestedAt": "2020-01-01T00:00:00Z", "allocateBefore": "2999-01-01T00:00:00Z",
                "settleBefore": "2999-01-02T00:00:00Z", "meta": {"values": {}},
            },
            "allocation": {"authorizer": {"owner": owner, "provider": null, "id": ""}, "transferLegSides": []},
            "requestedAt": "2020-01-01T00:00:00Z",
            "inputHoldingCids": ["holding-1"],
            "actors": [owner],
            "extraArgs": {"context": {"values": {}}, "meta": {"values": {}}},
        },
        "excludeDebugFields": true,
    })
}

/// The answer of a paged read's every page on `client`, following `client`'s own
/// answers.
pub fn pages(client: &Client, paged: &Paged) -> Vec<(Read, Answer)> {
    let mut pages = Vec::new();
    let mut previous: Option<Value> = None;
    while let Some(read) = paged.next(previous.as_ref()) {
        let answer = client.send(&read);
        previous = (answer.status == 200).then(|| answer.json());
        let stop = previous.is_none();
        pages.push((read, answer));
        if stop || pages.len() > 10_000 {
            break;
        }
    }
    pages
}
