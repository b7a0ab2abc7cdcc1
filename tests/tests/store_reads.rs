//! Every endpoint answers in a bounded number of store round trips, whatever the size
//! of the history: each is a round trip to D1 at the edge. The component's calls to its
//! `store` import are counted per request, over a demo history.

use std::sync::Arc;

use ledger_node::backend::MemoryBackend;
use ledger_node::host::{self, Node, Options, Request, StoreCalls};

const ADMIN: &str = "store-reads-admin";

fn node() -> Node {
    let options = Options { config: vec![("LEDGER_NODE_ADMIN_TOKEN".into(), ADMIN.into())], fixed_clock: None };
    let engine = host::engine().expect("an engine");
    let component = wasmtime::component::Component::new(&engine, host::COMPONENT).expect("the component");
    Node::from_component(&engine, &component, Arc::new(MemoryBackend::new()), options).expect("a node")
}

fn request(method: &str, target: &str, body: Option<Vec<u8>>) -> Request {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Request {
        method: method.into(),
        path: path.into(),
        query: query.into(),
        headers: vec![("authorization".into(), format!("Bearer {ADMIN}"))],
        body: Some(body.unwrap_or_default()),
    }
}

fn call(node: &Node, method: &str, target: &str) -> (u16, StoreCalls) {
    let (response, calls) =
        node.instance().expect("an instance").handle_counted(&request(method, target, None)).expect("handled");
    (response.status, calls)
}

/// POSTs `body` to `path`, which must answer 200: its JSON body, and the store calls
/// it made.
fn post_json(node: &Node, path: &str, body: serde_json::Value) -> (serde_json::Value, StoreCalls) {
    let (response, calls) = node
        .instance()
        .expect("an instance")
        .handle_counted(&request("POST", path, Some(body.to_string().into_bytes())))
        .expect("handled");
    assert_eq!(response.status, 200, "{path}: {}", String::from_utf8_lossy(&response.body));
    (serde_json::from_slice(&response.body).expect("JSON"), calls)
}

/// A demo history of `updates` updates, and some of its update ids.
fn demo(updates: usize) -> (Vec<u8>, Vec<String>) {
    let mut history = Vec::new();
    let options = ledger_node::demo::Options::new(updates as u64, 3);
    ledger_node::demo::write(&options, &mut history).expect("generating a demo history");
    let ids = history
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<serde_json::Value>(line).ok())
        .filter_map(|record| Some(record.get("update")?.get("update_id")?.as_str()?.to_owned()))
        .step_by(97)
        .collect();
    (history, ids)
}

/// A node holding a demo history of `updates` updates, ingested in one batch, and some
/// of its update ids.
fn ingested(updates: usize) -> (Node, Vec<String>) {
    let node = node();
    let (history, ids) = demo(updates);
    let (response, calls) = node
        .instance()
        .expect("an instance")
        .handle_counted(&request("POST", "/v0/admin/ingest", Some(history)))
        .expect("ingest");
    assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
    assert_eq!(calls.write, 1, "an ingest batch is one atomic write: {calls:?}");
    (node, ids)
}

#[test]
fn an_update_is_served_from_one_store_read_and_then_from_the_body_cache() {
    let (node, ids) = ingested(1500);
    assert!(ids.len() > 10);
    for id in &ids {
        // The first read of each encoding reads the update's stored form and renders
        // it; version 1 of the same encoding, and any read again, find the rendered
        // body in the host's cache and read nothing.
        for (target, gets) in [
            (format!("/v2/updates/{id}"), 1),
            (format!("/v2/updates/{id}?ledger_value_encoding=protobuf_json"), 1),
            (format!("/v1/updates/{id}"), 0),
            (format!("/v2/updates/{id}"), 0),
        ] {
            let (status, calls) = call(&node, "GET", &target);
            assert_eq!(status, 200, "{target}");
            assert_eq!(calls, StoreCalls { get: gets, ..StoreCalls::default() }, "{target}");
        }
    }
    assert_eq!(call(&node, "GET", "/version").1, StoreCalls::default());
}

#[test]
fn a_re_sent_batch_reads_its_held_updates_in_bounded_round_trips() {
    let node = node();
    let (history, _) = demo(1500);
    let ingest = |history: &[u8]| {
        node.instance()
            .expect("an instance")
            .handle_counted(&request("POST", "/v0/admin/ingest", Some(history.to_vec())))
            .expect("ingest")
    };
    let (first, first_calls) = ingest(&history);
    assert_eq!(first.status, 200, "{}", String::from_utf8_lossy(&first.body));
    let (again, calls) = ingest(&history);
    assert_eq!(again.status, 200, "{}", String::from_utf8_lossy(&again.body));
    let summary: serde_json::Value = serde_json::from_slice(&again.body).expect("a JSON summary");
    assert_eq!(summary["unchanged"], 1500, "{summary}");
    // Held updates are compared with their stored bodies, read in chunks of 512 keys
    // by one more prefetch: never one read an update. (The history's topology and
    // wallet records are written again, in the batch's one write.)
    assert_eq!((calls.get, calls.write), (0, 1), "{calls:?}");
    assert!(calls.get_many <= first_calls.get_many + 1500u32.div_ceil(512), "{calls:?} after {first_calls:?}");
}

/// A page of the history stream, a page of import updates and a page of updates
/// before a time each cost a fixed number of store reads, at whatever point of the
/// history they start and whatever its size.
#[test]
fn a_page_of_the_history_stream_costs_a_bounded_number_of_store_reads() {
    let (node, _) = ingested(1500);
    let post = |path: &str, body: serde_json::Value| {
        let (body, calls) = post_json(&node, path, body);
        (body["transactions"].as_array().expect("transactions").clone(), calls)
    };
    // Walk the whole stream, 100 a page.
    let (mut pages, mut seen, mut after) = (0, 0, serde_json::Value::Null);
    let mut transaction = None;
    loop {
        let mut body = serde_json::json!({"page_size": 100, "daml_value_encoding": "protobuf_json"});
        if !after.is_null() {
            body["after"] = after.clone();
        }
        let (items, calls) = post("/v2/updates", body);
        // One scan of the index, one get-many of the bodies (two scans only when a
        // group of equal record times is larger than the page, which the demo has not).
        assert_eq!(calls, StoreCalls { scan: 1, get_many: u32::from(!items.is_empty()), ..StoreCalls::default() });
        let Some(last) = items.last() else { break };
        transaction = transaction.or_else(|| items.iter().find(|item| item.get("synchronizer_id").is_some()).cloned());
        // A reassignment carries its migration id in its event.
        let migration_id = last.get("migration_id").unwrap_or(&last["event"]["migration_id"]);
        after = serde_json::json!({"after_migration_id": migration_id, "after_record_time": last["record_time"]});
        seen += items.len();
        pages += 1;
    }
    assert!(pages > 10 && seen > 1000, "{pages} pages, {seen} updates");

    // One scan of the index and one get-many of the stored forms of the bodies not
    // rendered yet; none when the walk rendered them all (the updates before a time); a
    // page with no items one get instead, which finds that the migration has data.
    let page_calls = |items: &[serde_json::Value], rendered: bool| StoreCalls {
        scan: 1,
        get_many: u32::from(!items.is_empty() && !rendered),
        get: u32::from(items.is_empty()),
        ..StoreCalls::default()
    };
    let body = serde_json::json!({"migration_id": 0, "after_update_id": "", "limit": 100});
    let (items, calls) = post("/v0/backfilling/import-updates", body);
    assert_eq!(calls, page_calls(&items, false), "import updates");
    let transaction = transaction.expect("a transaction in the stream");
    for before in ["2100-01-01T00:00:00Z", "1970-01-01T00:00:00Z"] {
        let body = serde_json::json!({
            "migration_id": transaction["migration_id"],
            "synchronizer_id": transaction["synchronizer_id"],
            "before": before,
            "count": 100,
        });
        let (items, calls) = post("/v0/backfilling/updates-before", body);
        assert_eq!(items.is_empty(), before.starts_with("1970"), "updates before {before}");
        assert_eq!(calls, page_calls(&items, true), "updates before {before}");
    }
}

/// What a follower reads from its upstream besides the stream: the export state and a
/// request of blobs cost a fixed number of store reads, whatever the size of the history
/// (the state's depends on the number of migrations only).
#[test]
fn the_export_endpoints_cost_a_bounded_number_of_store_reads() {
    for updates in [1100, 3000] {
        let (node, _) = ingested(updates);
        let post = |path: &str, body: serde_json::Value| post_json(&node, path, body);
        let (state, calls) = post("/v0/admin/export/state", serde_json::json!({}));
        let migrations_with_imports = state["import_updates"].as_array().expect("import_updates").len() as u32;
        assert!(migrations_with_imports >= 1, "the demo has a hard migration: {state}");
        // The stream's end, two scans per migration with import updates and one that
        // finds none, the backfill records, the hosting page; one get of the plan.
        let scans = 1 + 2 * migrations_with_imports + 1 + 1 + 1;
        assert_eq!(calls, StoreCalls { scan: scans, get: 1, ..StoreCalls::default() }, "{updates} updates");
        let ids: Vec<String> = (0..1000).map(|n| format!("00contract-{n}")).collect();
        let (_, calls) = post("/v0/admin/export/blobs", serde_json::json!({ "contract_ids": ids }));
        assert_eq!(calls, StoreCalls { get_many: 1, ..StoreCalls::default() }, "{updates} updates");
    }
}

/// The scan reads of a validator and a wallet (`core/src/api/scan`) each cost a fixed
/// number of store reads, whatever the size of the history: a scan of one kind's or one
/// key's prefix, and one get per contract answered with the synchronizer it is on now.
#[test]
fn the_scan_reads_of_a_validator_and_a_wallet_cost_a_fixed_number_of_store_reads() {
    for updates in [400, 1500] {
        let (node, _) = ingested(updates);
        let scans = |n: u32| StoreCalls { scan: n, ..StoreCalls::default() };
        let scans_gets = |scan: u32, get: u32| StoreCalls { scan, get, ..StoreCalls::default() };
        let get = |target: &str| {
            let (response, calls) =
                node.instance().expect("an instance").handle_counted(&request("GET", target, None)).expect("handled");
            assert_eq!(response.status, 200, "{target}: {}", String::from_utf8_lossy(&response.body));
            (serde_json::from_slice::<serde_json::Value>(&response.body).expect("JSON"), calls)
        };
        let (dso, calls) = get("/v0/dso-party-id");
        assert_eq!(calls, scans(1), "dso-party-id");
        assert!(dso["dso_party_id"].as_str().is_some_and(|p| p.starts_with("DSO::")), "{dso}");
        // The singleton, and where it is now.
        for path in ["/v0/coin-rules", "/v0/external-party-coin-rules", "/v0/ans-rules"] {
            let (_, calls) = post_json(&node, path, serde_json::json!({}));
            assert_eq!(calls, scans_gets(1, 1), "{path}");
        }
        // Three lists, and one read per open or issuing round for where it is.
        let body =
            serde_json::json!({"cached_open_mining_round_contract_ids": [], "cached_issuing_round_contract_ids": []});
        let (rounds, calls) = post_json(&node, "/v0/open-and-issuing-mining-rounds", body);
        let held = |field: &str| rounds[field].as_object().map_or(0, |m| m.len() as u32);
        let (open, issuing) = (held("open_mining_rounds"), held("issuing_mining_rounds"));
        assert!(open >= 3 && issuing >= 1, "{rounds}");
        assert_eq!(calls, scans_gets(3, open + issuing), "open and issuing rounds");
        // The rules, the coin rules, the open rounds, the node states; each answered
        // contract's state.
        let (info, calls) = get("/v0/dso");
        let states = info["sv_node_states"].as_array().map_or(0, |s| s.len() as u32);
        assert_eq!(states, 4, "{info}");
        assert_eq!(calls, scans_gets(4, 3 + states), "dso");
        for target in ["/v0/dso-sequencers", "/v0/scans", "/v0/migrations/last", "/v0/featured-apps"] {
            assert_eq!(get(target).1, scans(1), "{target}");
        }
        for target in ["/v0/admin/sv/voterequests", "/v0/admin/validator/licenses?limit=2"] {
            assert_eq!(get(target).1, scans(1), "{target}");
        }
        let (coupons, calls) = get("/v0/unclaimed-development-fund-coupons");
        let held = coupons["unclaimed-development-fund-coupons"].as_array().map_or(0, |c| c.len() as u32);
        assert_eq!((held, calls), (2, scans_gets(1, held)), "development fund coupons");
        // Lookups: one scan of the key's prefix, and the state of what a lookup answers
        // with it.
        let (apps, _) = get("/v0/featured-apps");
        let provider = apps["featured_apps"][0]["payload"]["provider"].as_str().expect("a provider").to_owned();
        assert_eq!(get(&format!("/v0/featured-apps/{provider}")).1, scans(1), "featured app of {provider}");
        // A page the ledger's entries fill is one scan; one they leave room in reads the
        // DSO rules too, for the entries derived from them; so do lookups, first.
        let (entries, calls) = get("/v0/ans-entries?page_size=1");
        assert_eq!(calls, scans(1), "a page of ans entries the ledger fills");
        assert_eq!(get("/v0/ans-entries?page_size=10").1, scans(2), "ans entries and the DSO's");
        let entry = &entries["entries"][0];
        let (user, name) = (entry["user"].as_str().expect("a user"), entry["name"].as_str().expect("a name"));
        assert_eq!(get(&format!("/v0/ans-entries/by-party/{user}")).1, scans(2), "ans entry of {user}");
        assert_eq!(get(&format!("/v0/ans-entries/by-name/{name}")).1, scans(2), "ans entry {name}");
        let (_, calls) = get(&format!("/v0/transfer-preapprovals/by-party/{user}"));
        assert_eq!(calls, scans_gets(1, 1), "preapproval of {user}");
        let (request, _) = get("/v0/admin/validator/licenses?limit=1");
        assert!(request["next_page_token"].is_i64(), "{request}");
        // Transfer commands: one scan of the sender and nonce's prefix, archived ones
        // with their status.
        let sender = transfer_command_sender(updates);
        for nonce in 0..4 {
            let (commands, calls) = get(&format!("/v0/transfer-command/status?sender={sender}&nonce={nonce}"));
            assert!(commands["transfer_commands_by_contract_id"].as_object().is_some_and(|m| !m.is_empty()));
            assert_eq!(calls, scans(1), "transfer commands of {sender} with nonce {nonce}");
        }
    }
}

/// The sender of the transfer commands of the demo history of `updates` updates.
fn transfer_command_sender(updates: usize) -> String {
    let (history, _) = demo(updates);
    let text = String::from_utf8(history).expect("UTF-8");
    let line = text.lines().find(|line| line.contains(":TransferCommand\"")).expect("a transfer command");
    let record: serde_json::Value = serde_json::from_str(line).expect("a JSON record");
    let events = record["update"]["events_by_id"].as_object().expect("events");
    let command = events
        .values()
        .find(|e| {
            e["event_type"] == "created_event"
                && e["template_id"].as_str().is_some_and(|t| t.ends_with(":TransferCommand"))
        })
        .expect("a transfer command's creation");
    let fields = command["create_arguments"]["record"]["fields"].as_array().expect("fields");
    let sender = fields.iter().find(|f| f["label"] == "sender").expect("a sender");
    sender["value"]["party"].as_str().expect("a party").to_owned()
}

/// The token standard registry: every call in at most three store calls, whatever the
/// size of the history. The metadata: one scan for the admin, and one get of the total
/// supply for an instrument. The factories: a scan of the receiver's preapproval (unless
/// a self transfer), one `get_many` of the registry's index of standing contracts (and
/// featured app rights, for a receiver's preapproval), one `get_many` of every
/// candidate's record and location.
#[test]
fn the_registry_s_calls_cost_a_fixed_number_of_store_reads() {
    let (node, _) = ingested(1500);
    let scans = |n: u32| StoreCalls { scan: n, ..StoreCalls::default() };
    let get = |target: &str| {
        let (response, calls) =
            node.instance().expect("an instance").handle_counted(&request("GET", target, None)).expect("handled");
        assert_eq!(response.status, 200, "{target}: {}", String::from_utf8_lossy(&response.body));
        (serde_json::from_slice::<serde_json::Value>(&response.body).expect("JSON"), calls)
    };
    let (info, calls) = get("/registry/metadata/v1/info");
    assert_eq!(calls, scans(1), "registry info");
    for target in ["/registry/metadata/v1/instruments", "/registry/metadata/v1/instruments/Coin"] {
        let (instrument, calls) = get(target);
        assert_eq!(calls, StoreCalls { scan: 1, get: 1, ..StoreCalls::default() }, "{target}");
        assert!(instrument.to_string().contains("totalSupplyAsOf"), "the demo closes rounds: {instrument}");
    }
    let dso = info["adminId"].as_str().expect("an admin").to_owned();
    let (entries, _) = get("/v0/ans-entries?page_size=1");
    let user = entries["entries"][0]["user"].as_str().expect("a user").to_owned();
    let (preapproval, _) = get(&format!("/v0/transfer-preapprovals/by-party/{user}"));
    assert!(preapproval["transfer_preapproval"]["contract"]["payload"]["provider"].is_string(), "{preapproval}");
    let body = |sender: &str, receiver: &str| {
        serde_json::json!({"choiceArguments": {
            "expectedAdmin": dso,
            "transfer": {"sender": sender, "receiver": receiver, "amount": "1.0",
                "instrumentId": {"admin": dso, "id": "Coin"},
                "requestedAt": "2020-01-01T00:00:00Z", "executeBefore": "2999-01-01T00:00:00Z",
                "inputHoldingCids": ["h"], "meta": {"values": {}}},
            "extraArgs": {"context": {"values": {}}, "meta": {"values": {}}}}})
    };
    for path in
        ["/registry/transfer-instruction/v1/transfer-factory", "/registry/transfer-instruction/v2/transfer-factory"]
    {
        for (sender, receiver, kind, lookups) in [
            ("nobody::1", user.as_str(), "direct", 1),
            ("nobody::1", "nobody::2", "offer", 1),
            ("nobody::1", "nobody::1", "self", 0),
        ] {
            let (answer, calls) = post_json(&node, path, body(sender, receiver));
            assert_eq!(answer["transferKind"], kind, "{answer}");
            assert!(answer["choiceContext"]["disclosedContracts"].as_array().is_some_and(|d| d.len() >= 3), "{answer}");
            assert_eq!(calls, StoreCalls { scan: lookups, get_many: 2, ..StoreCalls::default() }, "{path} {kind}");
        }
    }
}

/// The contracts of a template (by the end of its id) of a demo history still live at its
/// end, oldest first.
fn live_contracts(history: &[u8], template_suffix: &str) -> Vec<String> {
    let mut live: Vec<String> = Vec::new();
    for record in history.split(|b| *b == b'\n').filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok()) {
        let Some(events) = record.get("update").and_then(|u| u.get("events_by_id")).and_then(|e| e.as_object()) else {
            continue;
        };
        for event in events.values() {
            let id = event["contract_id"].as_str().unwrap_or_default().to_owned();
            match event["event_type"].as_str() {
                Some("created_event")
                    if event["template_id"].as_str().is_some_and(|t| t.ends_with(template_suffix)) =>
                {
                    live.push(id)
                }
                Some("exercised_event") if event["consuming"] == true => live.retain(|a| *a != id),
                _ => {}
            }
        }
    }
    live
}

/// A node that ingested a demo history of 1500 updates, and its live contracts of
/// `template_suffix`.
fn ingested_with_live(template_suffix: &str) -> (Node, Vec<String>) {
    let node = node();
    let (history, _) = demo(1500);
    let live = live_contracts(&history, template_suffix);
    assert!(!live.is_empty(), "the demo history leaves no {template_suffix} live");
    let (response, _) = node
        .instance()
        .expect("an instance")
        .handle_counted(&request("POST", "/v0/admin/ingest", Some(history)))
        .expect("ingest");
    assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
    (node, live)
}

fn disclosed(answer: &serde_json::Value) -> usize {
    answer["disclosedContracts"].as_array().map_or(0, Vec::len)
}

/// Every choice context: one `get_many` of the registry's index and the contract's
/// record, one `get_many` of the records and locations of the locked coin and of every
/// candidate, whatever the choice and the version.
#[test]
fn the_transfer_instruction_contexts_cost_two_store_calls() {
    let (node, live) = ingested_with_live(":Platform.CoinTransferInstruction:CoinTransferInstruction");
    let two = StoreCalls { get_many: 2, ..StoreCalls::default() };
    let mut locked = 0;
    for id in &live {
        for version in ["v1", "v2"] {
            for choice in ["reject", "withdraw"] {
                let path = format!("/registry/transfer-instruction/{version}/{id}/choice-contexts/{choice}");
                let (response, calls) = node
                    .instance()
                    .expect("an instance")
                    .handle_counted(&request("POST", &path, Some(b"{}".to_vec())))
                    .expect("handled");
                // A locked coin being reassigned is a 409, after the same reads.
                assert!([200, 409].contains(&response.status), "{path}: {}", String::from_utf8_lossy(&response.body));
                assert_eq!(calls, two, "{path}");
                let answer: serde_json::Value = serde_json::from_slice(&response.body).expect("JSON");
                locked += usize::from(disclosed(&answer) >= 3);
            }
        }
    }
    assert!(locked > 0, "no live instruction of the demo still holds its locked coin");
    let (response, calls) = node
        .instance()
        .expect("an instance")
        .handle_counted(&request(
            "POST",
            "/registry/transfer-instruction/v2/00nothing/choice-contexts/accept",
            Some(b"{}".to_vec()),
        ))
        .expect("handled");
    assert_eq!(response.status, 404);
    assert_eq!(calls, StoreCalls { get_many: 1, ..StoreCalls::default() }, "an unknown instruction");
}

#[test]
fn the_allocation_calls_cost_two_store_calls() {
    let (node, live) = ingested_with_live(":Platform.CoinAllocation:CoinAllocation");
    let two = StoreCalls { get_many: 2, ..StoreCalls::default() };
    for id in &live {
        for path in [
            format!("/registry/allocations/v1/{id}/choice-contexts/withdraw"),
            format!("/registry/allocations/v1/{id}/choice-contexts/cancel"),
            format!("/registry/allocations/v1/{id}/choice-contexts/execute-transfer"),
            format!("/registry/allocations/v2/{id}/choice-contexts/withdraw"),
            format!("/registry/allocations/v2/{id}/choice-contexts/cancel"),
        ] {
            let (answer, calls) = post_json(&node, &path, serde_json::json!({}));
            assert!(disclosed(&answer) >= 3, "{answer}");
            assert_eq!(calls, two, "{path}");
        }
    }
    let (info, _) = get_json(&node, "/registry/metadata/v1/info");
    let dso = info["adminId"].as_str().expect("an admin").to_owned();
    let body = serde_json::json!({"choiceArguments": {
        "expectedAdmin": dso,
        "allocation": {
            "settlement": {"executor": dso, "settlementRef": {"id": "t"}, "requestedAt": "2020-01-01T00:00:00Z",
                "allocateBefore": "2998-01-01T00:00:00Z", "settleBefore": "2999-01-01T00:00:00Z"},
            "transferLegId": "0",
            "transferLeg": {"sender": "nobody::1", "receiver": "nobody::2", "amount": "1.0",
                "instrumentId": {"admin": dso, "id": "Coin"}}},
        "requestedAt": "2020-01-01T00:00:00Z", "inputHoldingCids": ["h"]}});
    for path in [
        "/registry/allocation-instruction/v1/allocation-factory",
        "/registry/allocation-instruction/v2/allocation-factory",
    ] {
        let (answer, calls) = post_json(&node, path, body.clone());
        assert!(disclosed(&answer["choiceContext"]) >= 1, "{answer}");
        assert_eq!(calls, two, "{path}");
    }
}

fn get_json(node: &Node, target: &str) -> (serde_json::Value, StoreCalls) {
    let (response, calls) =
        node.instance().expect("an instance").handle_counted(&request("GET", target, None)).expect("handled");
    assert_eq!(response.status, 200, "{target}: {}", String::from_utf8_lossy(&response.body));
    (serde_json::from_slice(&response.body).expect("JSON"), calls)
}
