//! The demo's tests: every history is a well-formed, consistent ingest stream in the
//! core's canonical form.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use ledger_node_core::ingest::parse_lines;
use ledger_node_core::model::time::Timestamp;
use ledger_node_core::model::update::{Blob, Event as LedgerEvent, ReassignmentEvent, Update};
use ledger_node_core::model::value::{Encoding, Value};
use serde_json::Value as Json;

use super::*;

fn generate(updates: u64, seed: u64) -> (Vec<u8>, Summary) {
    let mut out = Vec::new();
    let summary = write(&Options::new(updates, seed), &mut out).unwrap();
    (out, summary)
}

/// The records of a history: `(kind, payload)`, checked by the core's line parser.
fn records(bytes: &[u8]) -> Vec<(&'static str, Json)> {
    let lines = parse_lines(bytes).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(lines.len(), bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()).count(), "one record per line");
    lines.into_iter().map(|l| (l.kind, serde_json::to_value(&l.payload).unwrap())).collect()
}

fn updates(bytes: &[u8]) -> Vec<Update> {
    records(bytes)
        .into_iter()
        .filter(|(kind, _)| *kind == "update")
        .map(|(_, json)| Update::parse(&(&json).into()).unwrap_or_else(|e| panic!("{e}: {json}")))
        .collect()
}

#[test]
fn a_seed_names_one_history_byte_for_byte() {
    let (a, _) = generate(2_000, 7);
    let (b, _) = generate(2_000, 7);
    assert!(a == b, "two runs with one seed differ");
    let (c, _) = generate(2_000, 8);
    assert!(a != c, "two seeds give the same history");
    let (d, _) = generate(2_000, 7);
    assert_eq!(a.iter().filter(|b| **b == b'\n').count(), d.iter().filter(|b| **b == b'\n').count());
}

#[test]
fn every_line_is_an_ingest_record_and_every_update_parses_canonically() {
    let (bytes, summary) = generate(3_000, 1);
    let text = std::str::from_utf8(&bytes).unwrap();
    let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
    for (line, (kind, payload)) in text.lines().zip(records(&bytes)) {
        *kinds.entry(kind).or_default() += 1;
        match kind {
            "update" => {
                let update = Update::parse(&(&payload).into()).unwrap_or_else(|e| panic!("{e}: {line}"));
                // Written in the canonical ingest form: the core writes it back
                // byte for byte.
                let raw = line.strip_prefix(r#"{"update":"#).and_then(|l| l.strip_suffix('}')).unwrap();
                assert_eq!(raw, update.ingest_text());
            }
            "topology" => {
                let keys: Vec<&str> = payload.as_object().unwrap().keys().map(String::as_str).collect();
                assert_eq!(keys, ["synchronizer_id", "party_id", "participant_ids"]);
                assert!(!payload["participant_ids"].as_array().unwrap().is_empty());
            }
            "wallet_user" => {
                assert!(payload["user_id"].is_string() && payload["party_id"].is_string());
                assert_eq!(payload.as_object().unwrap().len(), 2);
            }
            "backfill" => {
                assert!(payload["migration_id"].is_i64());
                assert_eq!(payload["complete"], Json::Bool(true));
                assert_eq!(payload["import_updates_complete"], Json::Bool(true));
                assert_eq!(payload.as_object().unwrap().len(), 3);
            }
            "roll_forward_lsu" => {
                let upgrade = payload["upgradeTime"].as_str().unwrap();
                assert!(Timestamp::parse(upgrade).is_ok());
                let current = payload["currentPhysicalSynchronizerId"].as_str().unwrap();
                let successor = payload["successorPhysicalSynchronizerId"].as_str().unwrap();
                assert!(current.starts_with("global-domain::1220"), "{current}");
                assert_ne!(current, successor);
            }
            other => panic!("unexpected kind {other}"),
        }
    }
    assert_eq!(kinds["update"], 3_000);
    assert_eq!(kinds["update"], summary.updates());
    assert_eq!(kinds["topology"], summary.topology);
    assert_eq!(kinds["wallet_user"], summary.wallet_user);
    assert_eq!(kinds["backfill"], 2);
    assert_eq!(kinds["roll_forward_lsu"], 1);
}

#[test]
fn the_core_ingests_the_whole_history_and_again_changes_nothing() {
    let (bytes, summary) = generate(2_000, 1);
    let store = ledger_node_core::storage::store::MemoryStore::new();
    let config = ledger_node_core::Config::default();
    let ingest = |body: &[u8]| {
        ledger_node_core::storage::exec::block_on(ledger_node_core::ingest::ingest(body, &store, &config))
            .unwrap_or_else(|e| panic!("{e:?}"))
    };
    let first = ingest(&bytes);
    assert_eq!(first.applied.update, summary.updates());
    assert_eq!(first.applied.topology, summary.topology);
    assert_eq!(first.applied.wallet_user, summary.wallet_user);
    assert_eq!(first.applied.backfill, summary.backfill);
    assert_eq!(first.applied.roll_forward_lsu, 1);
    assert_eq!(first.unchanged, 0);
    let again = ingest(&bytes);
    assert_eq!(again.applied.update, 0);
    assert_eq!(again.unchanged, summary.updates());
}

#[test]
fn updates_counts_exactly_the_update_records() {
    for n in [0, 1, 2, 3, 4, 10, 999, 1_000, 1_001] {
        let (bytes, summary) = generate(n, 3);
        let updates = updates(&bytes);
        assert_eq!(updates.len() as u64, n, "--updates {n}");
        assert_eq!(summary.updates(), n);
    }
}

#[test]
fn zero_updates_print_no_update_lines() {
    let (bytes, summary) = generate(0, 1);
    let records = records(&bytes);
    assert!(records.iter().all(|(kind, _)| *kind != "update"));
    assert!(records.iter().any(|(kind, _)| *kind == "topology"));
    assert_eq!(summary.updates(), 0);
    assert_eq!(summary.backfill, 1);
}

#[test]
fn update_ids_are_unique_and_look_like_ledger_ids() {
    let (bytes, _) = generate(5_000, 11);
    let updates = updates(&bytes);
    let mut seen = HashSet::new();
    for update in &updates {
        assert!(seen.insert(update.id().to_owned()), "{} twice", update.id());
        let hex = if update.is_import() { update.id().strip_prefix("00") } else { update.id().strip_prefix("1220") };
        assert!(hex.is_some_and(|h| h.len() >= 64), "{} is not a ledger id", update.id());
    }
}

#[test]
fn record_times_increase_except_for_imports() {
    let (bytes, _) = generate(3_000, 5);
    let mut last = Timestamp::MIN;
    for update in updates(&bytes) {
        if update.is_import() {
            assert_eq!(update.record_time(), Timestamp::MIN);
            continue;
        }
        assert!(update.record_time() > last, "{} goes back in time", update.id());
        last = update.record_time();
        if let Some(t) = update.as_transaction() {
            assert!(t.effective_at <= t.record_time);
        }
    }
    // 2025-01-06T08:00:00Z, then a few seconds apart: 3,000 updates cross at least
    // two 3-hour snapshot boundaries (09:00, 12:00, 15:00, ...).
    assert!(last.micros() > START + 6 * HOUR, "{last:?}");
}

fn value_types(value: &Value, types: &mut BTreeSet<&'static str>) {
    types.insert(value.type_name());
    match value {
        Value::Record(record) => {
            for field in &record.fields {
                value_types(&field.value, types);
            }
        }
        Value::Variant { value, .. } => value_types(value, types),
        Value::List(elements) => elements.iter().for_each(|v| value_types(v, types)),
        Value::Optional(Some(inner)) => value_types(inner, types),
        Value::TextMap(entries) => entries.iter().for_each(|(_, v)| value_types(v, types)),
        Value::GenMap(entries) => entries.iter().for_each(|(k, v)| {
            value_types(k, types);
            value_types(v, types);
        }),
        _ => {}
    }
}

#[test]
fn every_value_type_appears() {
    let (bytes, _) = generate(1_000, 2);
    let mut types = BTreeSet::new();
    for update in updates(&bytes) {
        let Some(t) = update.as_transaction() else {
            continue;
        };
        for event in t.events_by_id.values() {
            match event {
                LedgerEvent::Created(c) => {
                    value_types(&c.create_arguments, &mut types);
                    assert!(c.created_event_blob.is_some());
                }
                LedgerEvent::Exercised(e) => {
                    value_types(&e.choice_argument, &mut types);
                    value_types(&e.exercise_result, &mut types);
                }
            }
        }
    }
    assert_eq!(types, ledger_node_core::model::value::TYPES.into_iter().collect());
}

#[test]
fn a_large_history_has_a_hard_migration_with_imports() {
    let (bytes, summary) = generate(3_000, 1);
    let updates = updates(&bytes);
    assert!(summary.imports > 20, "{summary:?}");
    let first_import = updates.iter().position(Update::is_import).unwrap();
    let imports = &updates[first_import..first_import + summary.imports as usize];
    for import in imports {
        let t = import.as_transaction().unwrap();
        assert!(t.is_import());
        assert_eq!(t.migration_id, 1);
        assert_eq!(t.events_by_id.len(), 1);
        let event = t.events_by_id.values().next().unwrap();
        assert!(matches!(event, LedgerEvent::Created(_)));
        assert_eq!(event.contract_id(), t.update_id, "an import's id is its contract id");
    }
    assert!(updates[..first_import].iter().all(|u| u.migration_id() == 0));
    let after = &updates[first_import + imports.len()..];
    assert!(after.len() > 1_000);
    assert!(after.iter().all(|u| u.migration_id() == 1 && !u.is_import()));
    let (small, summary) = generate(MIGRATION_MIN_UPDATES - 1, 1);
    assert_eq!(summary.imports, 0);
    assert!(self::updates(&small).iter().all(|u| u.migration_id() == 0));
}

/// What the replay knows about a contract.
struct Known {
    template: String,
    arguments: Json,
    created_at: Timestamp,
    blob: Option<Blob>,
    synchronizer: String,
    archived: bool,
    last_counter: i64,
    /// Reassignments with one half seen: counter -> (unassigned, assigned).
    halves: HashMap<i64, (bool, bool)>,
}

impl Known {
    fn in_flight(&self) -> bool {
        self.halves.values().any(|(u, a)| u != a)
    }
}

/// Replays a history and checks that it is a consistent ledger: contracts are
/// created once, exercised only while active, on their synchronizer and not in
/// flight; reassignment counters increase and assignments carry the contract as
/// created; imports re-create exactly the active contracts.
#[test]
fn the_history_is_a_consistent_ledger() {
    let (bytes, _) = generate(6_000, 9);
    let mut known: HashMap<String, Known> = HashMap::new();
    let mut imports_checked = false;
    let mut imported = BTreeSet::new();
    let updates = updates(&bytes);
    for (index, update) in updates.iter().enumerate() {
        match update {
            Update::Transaction(t) if t.is_import() => {
                let LedgerEvent::Created(c) = t.events_by_id.values().next().unwrap() else {
                    panic!("an import creates");
                };
                let k = &known[&c.contract_id];
                assert!(!k.archived && !k.in_flight());
                assert_eq!(k.synchronizer, t.synchronizer_id);
                assert_eq!(k.created_at, c.created_at);
                assert_eq!(k.arguments, c.create_arguments.render(Encoding::ProtobufJson));
                imported.insert(c.contract_id.clone());
                let next_is_import = updates.get(index + 1).is_some_and(Update::is_import);
                if !next_is_import {
                    let active: BTreeSet<String> =
                        known.iter().filter(|(_, k)| !k.archived).map(|(id, _)| id.clone()).collect();
                    assert_eq!(imported, active, "imports re-create the active contracts");
                    imports_checked = true;
                }
            }
            Update::Transaction(t) => {
                for event in t.events_in_order() {
                    match event {
                        LedgerEvent::Created(c) => {
                            assert!(!known.contains_key(&c.contract_id), "created twice");
                            if c.template_id.qualified_name()
                                == "Platform.CoinTransferInstruction:CoinTransferInstruction"
                            {
                                let locked =
                                    c.create_arguments.lookup(&["lockedCoin"]).and_then(Value::as_contract_id).unwrap();
                                assert_eq!(
                                    known[locked].template.split_once(':').unwrap().1,
                                    "Platform.Coin:LockedCoin"
                                );
                            }
                            known.insert(
                                c.contract_id.clone(),
                                Known {
                                    template: c.template_id.as_str().to_owned(),
                                    arguments: c.create_arguments.render(Encoding::ProtobufJson),
                                    created_at: c.created_at,
                                    blob: c.created_event_blob.clone(),
                                    synchronizer: t.synchronizer_id.clone(),
                                    archived: false,
                                    last_counter: 0,
                                    halves: HashMap::new(),
                                },
                            );
                        }
                        LedgerEvent::Exercised(e) => {
                            let k =
                                known.get_mut(&e.contract_id).unwrap_or_else(|| panic!("{} is unknown", e.contract_id));
                            assert!(!k.archived, "{} exercised after archival", e.contract_id);
                            assert!(!k.in_flight(), "{} exercised in flight", e.contract_id);
                            assert_eq!(k.synchronizer, t.synchronizer_id);
                            assert_eq!(k.template, e.template_id.as_str());
                            k.archived |= e.consuming;
                        }
                    }
                }
            }
            Update::Reassignment(r) => {
                let id = r.event.contract_id();
                let k = known.get_mut(id).unwrap();
                assert!(!k.archived);
                let counter = r.event.reassignment_counter();
                let halves = k.halves.entry(counter).or_default();
                match &r.event {
                    ReassignmentEvent::Unassignment(u) => {
                        assert!(!halves.0);
                        halves.0 = true;
                        assert_eq!(u.source_synchronizer, k.synchronizer);
                    }
                    ReassignmentEvent::Assignment(a) => {
                        assert!(!halves.1);
                        halves.1 = true;
                        let c = &a.created_event;
                        assert_eq!(a.source_synchronizer, k.synchronizer);
                        assert_eq!(k.template, c.template_id.as_str());
                        assert_eq!(k.created_at, c.created_at);
                        assert_eq!(k.blob, c.created_event_blob);
                        assert_eq!(k.arguments, c.create_arguments.render(Encoding::ProtobufJson));
                        assert_eq!(c.event_id, format!("{}:0", r.update_id));
                    }
                }
                if *halves == (true, true) {
                    let target = match &r.event {
                        ReassignmentEvent::Unassignment(u) => u.target_synchronizer.clone(),
                        ReassignmentEvent::Assignment(a) => a.target_synchronizer.clone(),
                    };
                    k.synchronizer = target;
                } else {
                    assert!(counter > k.last_counter, "counters increase");
                    k.last_counter = counter;
                }
            }
        }
    }
    assert!(imports_checked);
    let in_flight: Vec<&Known> = known.values().filter(|k| k.in_flight()).collect();
    assert!(
        in_flight.iter().any(|k| k.template.ends_with(":Platform.Coin:LockedCoin")),
        "a locked coin is left in flight at the end"
    );
    let reassigned = known.values().filter(|k| k.last_counter > 0).count();
    assert!(reassigned > 10, "{reassigned} contracts reassigned");
}

/// The state the node derives at the end of a history has every case of the
/// endpoints: open and closed rounds, one vote per SV, instructions whose locked
/// coin is active and some whose locked coin is gone, and a multi-hosted party.
#[test]
fn some_instructions_lose_their_locked_coin() {
    let (bytes, _) = generate(4_000, 1);
    let expired = updates(&bytes)
        .iter()
        .filter_map(Update::as_transaction)
        .flat_map(|t| t.events_by_id.values())
        .filter(|e| matches!(e, LedgerEvent::Exercised(x) if x.choice == "LockedCoin_ExpireLock"))
        .count();
    assert!(expired > 0);
}

/// The bodies of `GET /v0/closed-rounds` and of the price votes path of a node
/// configured with `names` that ingested `history`.
fn rounds_and_votes(history: &[u8], names: &ledger_node_core::model::config::Names) -> (Json, Json) {
    use ledger_node_core::{Env, Method, Request, storage::exec::block_on};
    let store = ledger_node_core::storage::store::MemoryStore::new();
    let config = ledger_node_core::Config { names: names.clone(), ..ledger_node_core::Config::default() };
    block_on(ledger_node_core::ingest::ingest(history, &store, &config)).unwrap_or_else(|e| panic!("{e:?}"));
    let env = Env {
        now: Timestamp::from_micros(START + 400 * 24 * 3_600_000_000).unwrap(),
        entropy: [0; 32],
        config: &config,
    };
    let get = |path: &str| {
        let response = block_on(ledger_node_core::handle(&Request::new(Method::Get, path), &env, &store));
        assert_eq!(response.status, 200, "{path}: {}", String::from_utf8_lossy(&response.body));
        serde_json::from_slice::<Json>(&response.body).unwrap()
    };
    let api = ledger_node_core::model::names::ApiNames::new(names);
    (get("/v0/closed-rounds"), get(&api.price_votes_path))
}

#[test]
fn a_history_generated_under_the_networks_names_serves_its_rounds_and_votes_under_them() {
    let splice = ledger_node_core::model::config::Names { root: "Splice".into(), coin: "Amulet".into() };
    let mut spelled = Vec::new();
    write(&Options { names: splice.clone(), ..Options::new(1_500, 3) }, &mut spelled).unwrap();
    let (default, _) = generate(1_500, 3);
    let text = std::str::from_utf8(&spelled).unwrap();
    assert!(text.contains(":Splice.AmuletRules:AmuletRules\""), "the rules are spelled the network's way");
    assert!(text.contains("\"lockedAmulet\""), "labels are spelled the network's way");
    assert!(!text.contains("Platform") && !text.contains("Coin"), "no default spelling is left");

    // Under its own names, a node derives the same state from either history: the
    // spelling changes identifiers, never data (blobs, ids, times).
    let (rounds, votes) = rounds_and_votes(&spelled, &splice);
    let (default_rounds, default_votes) = rounds_and_votes(&default, &ledger_node_core::Config::default().names);
    assert!(!rounds["rounds"].as_array().unwrap().is_empty(), "{rounds}");
    // The same rounds (ids, payloads, blobs, times), their template ids spelled each way.
    assert_eq!(rounds.to_string().replace(":Splice.Round:", ":Platform.Round:"), default_rounds.to_string());
    let votes = votes["amulet_price_votes"].as_array().unwrap();
    assert!(!votes.is_empty(), "no votes");
    assert_eq!(votes.len(), default_votes["coin_price_votes"].as_array().unwrap().len());
    assert!(votes.iter().all(|vote| vote.to_string().contains("Splice.DSO.AmuletPrice:AmuletPriceVote")), "{votes:?}");
    // Read under other names, the same history derives no rounds at all: why a store
    // records the names it was ingested under.
    let (rounds, _) = rounds_and_votes(&spelled, &ledger_node_core::Config::default().names);
    assert!(rounds["rounds"].as_array().unwrap().is_empty(), "{rounds}");
}

#[test]
fn allocations_are_made_and_each_is_executed_cancelled_or_withdrawn() {
    let (bytes, _) = generate(3_000, 1);
    let text = std::str::from_utf8(&bytes).unwrap();
    for choice in
        ["AllocationFactory_Allocate", "Allocation_ExecuteTransfer", "Allocation_Cancel", "Allocation_Withdraw"]
    {
        assert!(text.contains(&format!(r#""choice":"{choice}""#)), "no {choice} in the history");
    }
    assert!(text.contains("Platform.CoinAllocation:CoinAllocation"));
    assert!(text.contains(r#""label":"settleBefore""#) || text.contains(r#""settleBefore""#));
}
