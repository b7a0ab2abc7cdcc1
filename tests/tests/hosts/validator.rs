//! The network's validator app, in its `trust-single` mode, against the node: its calls
//! to a scan replayed in the order its start-up and its triggers make them, on a node
//! configured with the network's names (`Splice`, `Amulet`) that holds a demo history
//! spelled with them.
//!
//! The order is the validator app's (`hyperledger-labs/splice`,
//! `apps/validator/src/main/scala/org/lfdecentralizedtrust/splice/validator/ValidatorApp.scala`,
//! through its scan connection,
//! `apps/scan/src/main/scala/org/lfdecentralizedtrust/splice/scan/admin/api/client/ScanConnection.scala`
//! and `BftScanConnection.scala`): at start-up the DSO party (opening the connection),
//! the coin rules and their synchronizer (registering the synchronizer), the last
//! migration and the SVs' sequencers (connecting to them), and the coin rules again
//! with the one it holds (vetting packages); then its automation and its wallet poll
//! the open and issuing rounds (again with the ids it holds, as its cache does), read
//! the DSO's rules, look up preapprovals and featured app rights, list vote requests,
//! and read the external party coin rules, the ANS rules and ANS entries; and the
//! external party's transfer flow reads its transfer command counter and polls the
//! status of its transfer commands. Every answer is also judged by the node's OpenAPI document as a
//! node with those names serves it.

use serde_json::{Value, json};

use super::openapi;
use super::scenario::{ADMIN_TOKEN, Outgoing, Target};

/// The network's names.
pub fn network_names() -> Vec<(String, String)> {
    [("LEDGER_NODE_NAMES_ROOT", "Splice"), ("LEDGER_NODE_NAMES_COIN", "Amulet"), ("LEDGER_NODE_NAMES_ANS", "CNS")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// Sends one request and judges its answer by the document; the status and the body.
fn send(target: &mut dyn Target, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut headers = Vec::new();
    let body = match body {
        Some(json) => {
            headers.push(("content-type".to_owned(), "application/json".to_owned()));
            serde_json::to_vec(&json).expect("JSON")
        }
        None => Vec::new(),
    };
    let outgoing = Outgoing { method: method.into(), target: path.into(), headers, body };
    let received = target.send(&outgoing);
    openapi::Document::spelled_for_the_network().check(method, path, &received).unwrap_or_else(|problem| {
        panic!("{}: {method} {path}: the answer does not match the document: {problem}", target.name())
    });
    let json = serde_json::from_slice(&received.body).unwrap_or(Value::Null);
    (received.status, json)
}

/// `path` answers 200; its body.
fn ok(target: &mut dyn Target, method: &str, path: &str, body: Option<Value>) -> Value {
    let (status, json) = send(target, method, path, body);
    assert_eq!(status, 200, "{}: {method} {path}: {json}", target.name());
    json
}

/// Ingests a demo history spelled with the network's names; the external party that
/// sends its transfer commands.
fn ingest_demo(target: &mut dyn Target) -> String {
    let options = ledger_node::demo::Options {
        names: ledger_node_core::model::config::Names { root: "Splice".into(), coin: "Amulet".into() },
        ..ledger_node::demo::Options::new(400, 7)
    };
    let mut history = Vec::new();
    ledger_node::demo::write(&options, &mut history).expect("a demo history");
    let sender = transfer_command_sender(&history);
    let outgoing = Outgoing {
        method: "POST".into(),
        target: "/v0/admin/ingest".into(),
        headers: vec![("authorization".into(), format!("Bearer {ADMIN_TOKEN}"))],
        body: history,
    };
    let received = target.send(&outgoing);
    assert_eq!(received.status, 200, "{}: ingest: {}", target.name(), String::from_utf8_lossy(&received.body));
    sender
}

/// The sender of the transfer commands created in `history`.
fn transfer_command_sender(history: &[u8]) -> String {
    let text = std::str::from_utf8(history).expect("UTF-8");
    for line in text.lines().filter(|line| line.contains(":TransferCommand\"")) {
        let record: Value = serde_json::from_str(line).expect("a JSON record");
        let events = record["update"]["events_by_id"].as_object().into_iter().flat_map(|e| e.values());
        for event in events.filter(|e| e["event_type"] == "created_event") {
            if event["template_id"].as_str().is_some_and(|t| t.ends_with(":TransferCommand")) {
                let fields = event["create_arguments"]["record"]["fields"].as_array().expect("fields");
                let sender = fields.iter().find(|f| f["label"] == "sender").expect("a sender");
                return sender["value"]["party"].as_str().expect("a party").to_owned();
            }
        }
    }
    panic!("the demo history has no transfer command")
}

/// The contract id of a `MaybeCachedContractWithState`'s contract.
fn contract_id(update: &Value) -> &str {
    update["contract"]["contract_id"].as_str().unwrap_or_else(|| panic!("a contract: {update}"))
}

/// Replays the validator app's calls against `target`, a node configured with
/// [`network_names`] (emptied first).
pub fn a_validator_starts_and_runs_its_triggers_against_the_node(target: &mut dyn Target) {
    target.reset();
    let external_party = ingest_demo(target);
    let scan = "/api/scan/v0";

    // Start-up.
    let dso = ok(target, "GET", &format!("{scan}/dso-party-id"), None)["dso_party_id"].as_str().map(str::to_owned);
    let dso = dso.expect("the DSO party");
    assert!(dso.starts_with("DSO::"), "{dso}");
    let rules = ok(target, "POST", &format!("{scan}/amulet-rules"), Some(json!({})))["amulet_rules_update"].clone();
    assert!(rules["contract"]["template_id"].as_str().is_some_and(|t| t.ends_with(":Splice.AmuletRules:AmuletRules")));
    assert!(rules["domain_id"].as_str().is_some_and(|d| d.starts_with("global-domain::")), "{rules}");
    assert!(rules["contract"]["created_event_blob"].as_str().is_some_and(|b| !b.is_empty()), "{rules}");
    let migration = ok(target, "GET", &format!("{scan}/migrations/last"), None);
    assert_eq!(migration, json!({"migration_id": 0}));
    let sequencers = ok(target, "GET", &format!("{scan}/dso-sequencers"), None);
    let domains = sequencers["domainSequencers"].as_array().expect("domainSequencers");
    assert_eq!(domains.len(), 1, "{sequencers}");
    assert_eq!(domains[0]["sequencers"].as_array().map(Vec::len), Some(4), "one per SV: {sequencers}");
    assert_eq!(domains[0]["domainId"], rules["domain_id"]);
    let scans = ok(target, "GET", &format!("{scan}/scans"), None);
    assert_eq!(scans["scans"][0]["scans"].as_array().map(Vec::len), Some(4), "{scans}");

    // Vetting its packages, it asks for the coin rules again with the one it holds: the
    // contract is left out; with an outdated one, it comes in full.
    let held = json!({"cached_amulet_rules_contract_id": contract_id(&rules), "cached_amulet_rules_domain_id": rules["domain_id"]});
    let cached = ok(target, "POST", &format!("{scan}/amulet-rules"), Some(held));
    assert_eq!(cached, json!({"amulet_rules_update": {"domain_id": rules["domain_id"]}}));
    let stale = json!({"cached_amulet_rules_contract_id": "an-older-one"});
    let fresh = ok(target, "POST", &format!("{scan}/amulet-rules"), Some(stale));
    assert_eq!(fresh["amulet_rules_update"], rules);

    // The automation's and the wallet's polling.
    let none = json!({"cached_open_mining_round_contract_ids": [], "cached_issuing_round_contract_ids": []});
    let rounds = ok(target, "POST", &format!("{scan}/open-and-issuing-mining-rounds"), Some(none));
    let open: Vec<String> = rounds["open_mining_rounds"].as_object().expect("open rounds").keys().cloned().collect();
    let issuing: Vec<String> =
        rounds["issuing_mining_rounds"].as_object().expect("issuing rounds").keys().cloned().collect();
    assert_eq!(open.len(), 3, "{rounds}");
    assert!(!issuing.is_empty(), "{rounds}");
    assert_eq!(rounds["time_to_live_in_microseconds"], json!(600_000_000), "the tick: {rounds}");
    let cached = json!({"cached_open_mining_round_contract_ids": open, "cached_issuing_round_contract_ids": ["gone"]});
    let again = ok(target, "POST", &format!("{scan}/open-and-issuing-mining-rounds"), Some(cached));
    for (id, round) in again["open_mining_rounds"].as_object().expect("open rounds") {
        assert!(round.get("contract").is_none() && round["domain_id"].is_string(), "{id} is cached: {round}");
    }
    for (id, round) in again["issuing_mining_rounds"].as_object().expect("issuing rounds") {
        assert_eq!(round["contract"]["contract_id"], json!(id), "{id} is not cached: {round}");
    }

    let info = ok(target, "GET", &format!("{scan}/dso"), None);
    assert_eq!(info["dso_party_id"], json!(dso));
    assert_eq!(info["voting_threshold"], json!(3), "four SVs: {info}");
    assert_eq!(info["amulet_rules"]["contract"]["contract_id"], json!(contract_id(&rules)));
    assert_eq!(info["sv_node_states"].as_array().map(Vec::len), Some(4));
    let users: Vec<String> = {
        let entries = ok(target, "GET", &format!("{scan}/ans-entries?page_size=10"), None);
        let entries = entries["entries"].as_array().expect("entries").clone();
        // The two entries on the ledger, then the DSO's and the four SVs' from the DSO rules.
        let names: Vec<&str> = entries.iter().map(|e| e["name"].as_str().expect("a name")).collect();
        assert_eq!(names[2..], ["dso.cns", "sv1.sv.cns", "sv2.sv.cns", "sv3.sv.cns", "sv4.sv.cns"], "{entries:?}");
        assert!(entries[2..].iter().all(|e| e.get("contract_id").is_none() && e["url"] == json!("")));
        assert_eq!(entries[2]["user"], json!(dso));
        entries[..2].iter().map(|e| e["user"].as_str().expect("a user").to_owned()).collect()
    };
    let sv = ok(target, "GET", &format!("{scan}/ans-entries/by-name/sv2.sv.cns"), None);
    assert_eq!(
        ok(
            target,
            "GET",
            &format!("{scan}/ans-entries/by-party/{}", sv["entry"]["user"].as_str().expect("a user")),
            None
        ),
        sv
    );
    let page = ok(target, "GET", &format!("{scan}/ans-entries?page_size=3&name_prefix=sv"), None);
    let names: Vec<&str> =
        page["entries"].as_array().expect("entries").iter().map(|e| e["name"].as_str().expect("a name")).collect();
    assert_eq!(names, ["sv1.sv.cns", "sv2.sv.cns", "sv3.sv.cns"]);
    let preapproval = ok(target, "GET", &format!("{scan}/transfer-preapprovals/by-party/{}", users[0]), None);
    assert_eq!(preapproval["transfer_preapproval"]["contract"]["payload"]["receiver"], json!(users[0]));
    let (status, missing) = send(target, "GET", &format!("{scan}/transfer-preapprovals/by-party/{}", users[1]), None);
    assert_eq!(status, 404, "{missing}");
    assert_eq!(missing["error"], json!(format!("No TransferPreapproval found for party: {}", users[1])));
    let apps = ok(target, "GET", &format!("{scan}/featured-apps"), None);
    let provider = apps["featured_apps"][0]["payload"]["provider"].as_str().expect("a provider").to_owned();
    let right = ok(target, "GET", &format!("{scan}/featured-apps/{provider}"), None);
    assert_eq!(right["featured_app_right"], apps["featured_apps"][0]);
    assert_eq!(ok(target, "GET", &format!("{scan}/featured-apps/{}", users[0]), None), json!({}));
    let votes = ok(target, "GET", &format!("{scan}/admin/sv/voterequests"), None);
    assert_eq!(votes["dso_rules_vote_requests"].as_array().map(Vec::len), Some(1), "{votes}");
    // Validator licenses, a page at a time, though all were created in one transaction.
    let all = ok(target, "GET", &format!("{scan}/admin/validator/licenses"), None);
    assert!(all.get("next_page_token").is_none(), "{all}");
    let ids = |page: &Value| -> Vec<String> {
        let licenses = page["validator_licenses"].as_array().expect("licenses");
        licenses.iter().map(|l| l["contract_id"].as_str().expect("an id").to_owned()).collect()
    };
    for limit in [1, 2] {
        let (mut paged, mut after) = (Vec::new(), String::new());
        loop {
            let page = ok(target, "GET", &format!("{scan}/admin/validator/licenses?limit={limit}{after}"), None);
            paged.extend(ids(&page));
            match page.get("next_page_token") {
                Some(token) => after = format!("&after={token}"),
                None => break,
            }
        }
        assert_eq!(paged, ids(&all), "pages of {limit}");
    }
    assert_eq!(ids(&all).len(), 3);

    let external = ok(target, "POST", &format!("{scan}/external-party-amulet-rules"), Some(json!({})));
    let template = &external["external_party_amulet_rules_update"]["contract"]["template_id"];
    assert!(
        template.as_str().is_some_and(|t| t.ends_with(":Splice.ExternalPartyAmuletRules:ExternalPartyAmuletRules"))
    );
    let ans = ok(target, "POST", &format!("{scan}/ans-rules"), Some(json!({})));
    assert!(
        ans["ans_rules_update"]["contract"]["template_id"]
            .as_str()
            .is_some_and(|t| t.ends_with(":Splice.Ans:AnsRules"))
    );
    let entry = ok(target, "GET", &format!("{scan}/ans-entries/by-party/{}", users[0]), None);
    let name = entry["entry"]["name"].as_str().expect("a name").to_owned();
    assert_eq!(ok(target, "GET", &format!("{scan}/ans-entries/by-name/{name}"), None), entry);

    // The external party's transfer flow: its counter's next nonce, then the status of
    // the transfer commands it sent with each nonce.
    let counter = ok(target, "GET", &format!("{scan}/transfer-command-counter/{external_party}"), None);
    let next = counter["transfer_command_counter"]["contract"]["payload"]["nextNonce"].as_str().map(str::to_owned);
    assert_eq!(next.as_deref(), Some("3"), "{counter}");
    let statuses = |target: &mut dyn Target, nonce: u32| -> Vec<Value> {
        let path = format!("{scan}/transfer-command/status?sender={external_party}&nonce={nonce}");
        let answer = ok(target, "GET", &path, None);
        let commands = answer["transfer_commands_by_contract_id"].as_object().expect("a map").clone();
        commands
            .into_iter()
            .map(|(id, command)| {
                assert_eq!(command["contract"]["contract_id"], json!(id));
                assert!(
                    command["contract"]["template_id"]
                        .as_str()
                        .is_some_and(|t| t.ends_with(":Splice.ExternalPartyAmuletRules:TransferCommand")),
                    "{command}"
                );
                command["status"].clone()
            })
            .collect()
    };
    assert_eq!(statuses(target, 0), [json!({"status": "sent"})]);
    let mut failed: Vec<String> =
        statuses(target, 1).iter().map(|s| s["failure_kind"].as_str().unwrap_or("").to_owned()).collect();
    failed.sort();
    assert_eq!(failed, ["failed", "withdrawn"]);
    let mut expired: Vec<String> = statuses(target, 2).iter().map(|s| s["status"].to_string()).collect();
    expired.sort();
    assert_eq!(expired, ["\"failed\"", "\"sent\""]);
    assert_eq!(statuses(target, 3), [json!({"status": "created"})]);
    let (status, missing) =
        send(target, "GET", &format!("{scan}/transfer-command/status?sender={external_party}&nonce=4"), None);
    assert_eq!(status, 404, "{missing}");

    // The network's spelling only.
    assert_eq!(send(target, "POST", &format!("{scan}/coin-rules"), Some(json!({}))).0, 404);
}
