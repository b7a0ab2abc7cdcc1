//! A chain of followers: node A (`ledger-node serve`) holds a demo history, node B
//! (native) follows A with `ledger-node follow --once`, and the worker under
//! `wrangler dev` follows B with its cron trigger. Every read endpoint must then
//! answer byte for byte the same on the three.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use ledger_node_tests::native::Serve;
use serde_json::{Value, json};

use super::scenario::{ADMIN_TOKEN, Outgoing};
use super::targets::HttpClient;
use super::worker::WorkerTarget;

/// Update records of the chain's demo history: enough for pages, a hard migration with
/// import updates, and several cron runs of the worker's follower.
const UPDATES: u64 = 1_500;

/// A `ledger-node serve` process, with a client.
pub struct NativeNode {
    /// Killed when dropped.
    _process: ledger_node_tests::native::NativeNode,
    /// Its client.
    pub client: HttpClient,
    /// Its base URL.
    pub base: String,
}

/// The binary, with no `LEDGER_NODE_*` variable inherited.
pub fn ledger_node() -> Command {
    ledger_node_tests::ledger_node()
}

/// Serves `db` on a port the kernel picks, with the test admin token.
pub fn serve(db: &Path) -> NativeNode {
    serve_with(db, &[], &[])
}

/// [`serve`], with more arguments and variables.
pub fn serve_with(db: &Path, args: &[&str], envs: &[(&str, &str)]) -> NativeNode {
    let mut serve = Serve::new(db).args(args).env("LEDGER_NODE_ADMIN_TOKEN", ADMIN_TOKEN);
    for (name, value) in envs {
        serve = serve.env(name, value);
    }
    let process = serve.start();
    let base = process.base.clone();
    NativeNode { _process: process, client: HttpClient::new(base.clone()), base }
}

/// Runs `ledger-node` with `args` to its end; panics with its output if it fails.
pub fn run(args: &[&str], envs: &[(&str, &str)]) -> String {
    let output = ledger_node().args(args).envs(envs.iter().copied()).output().expect("running ledger-node");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "ledger-node {args:?} failed: {stderr}");
    stderr
}

/// Writes the demo history of `updates` update records to `path`, and returns its lines.
pub fn demo(path: &Path, updates: u64) -> Vec<Value> {
    let output = ledger_node().args(["demo", "--updates", &updates.to_string()]).output().expect("ledger-node demo");
    assert!(output.status.success());
    std::fs::write(path, &output.stdout).expect("writing the demo history");
    output
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("JSON"))
        .collect()
}

/// Node A serving a demo history (ingested from a file with `ledger-node ingest`), and
/// where the store of a node B goes. Dropped in field order: A stops before its
/// directory goes.
pub struct ServedDemo {
    /// Node A.
    pub a: NativeNode,
    /// The history, record by record.
    pub history: Vec<Value>,
    /// B's store, not created yet.
    pub b_db: PathBuf,
    /// The directory of the history file and both stores.
    pub dir: tempfile::TempDir,
}

/// A demo history of `updates` update records, ingested into node A, served.
pub fn served_demo(updates: u64) -> ServedDemo {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let history_file = dir.path().join("demo.ndjson");
    let history = demo(&history_file, updates);
    let (a_db, b_db) = (dir.path().join("a.store"), dir.path().join("b.store"));
    run(&["ingest", "--db", a_db.to_str().expect("UTF-8"), history_file.to_str().expect("UTF-8")], &[]);
    ServedDemo { a: serve(&a_db), history, b_db, dir }
}

fn get(target: &str) -> Outgoing {
    Outgoing { method: "GET".into(), target: target.into(), headers: Vec::new(), body: Vec::new() }
}

fn post(target: &str, body: &Value) -> Outgoing {
    Outgoing {
        method: "POST".into(),
        target: target.into(),
        headers: vec![("content-type".into(), "application/json".into())],
        body: serde_json::to_vec(body).expect("JSON"),
    }
}

fn admin(mut outgoing: Outgoing) -> Outgoing {
    outgoing.headers.push(("authorization".into(), format!("Bearer {ADMIN_TOKEN}")));
    outgoing
}

/// Every read the history's data reaches, but the stream pages ([`same_stream`]).
pub fn reads(history: &[Value]) -> Vec<Outgoing> {
    let mut reads = Vec::new();
    let mut contracts = Vec::new();
    let mut instructions = Vec::new();
    let mut synchronizers = std::collections::BTreeSet::new();
    for (n, line) in history.iter().enumerate() {
        if let Some(update) = line.get("update") {
            let id = update["update_id"].as_str().expect("an update id");
            reads.push(get(&format!("/v2/updates/{id}?daml_value_encoding=protobuf_json")));
            if n % 7 == 0 {
                reads.push(get(&format!("/v2/updates/{id}?daml_value_encoding=compact_json")));
                reads.push(get(&format!("/v1/updates/{id}?daml_value_encoding=protobuf_json")));
                reads.push(get(&format!("/v1/updates/{id}")));
            }
            let events = update.get("events_by_id").and_then(Value::as_object).into_iter().flat_map(|m| m.values());
            let assigned = update.pointer("/event/created_event").into_iter();
            for event in events.chain(assigned) {
                if event["event_type"] == "created_event" {
                    let contract_id = event["contract_id"].as_str().expect("a contract id").to_owned();
                    if event["template_id"].as_str().is_some_and(|t| t.ends_with(":CoinTransferInstruction")) {
                        instructions.push(contract_id.clone());
                    }
                    contracts.push(contract_id);
                }
            }
            if let Some(synchronizer) = update["synchronizer_id"].as_str() {
                synchronizers.insert(synchronizer.to_owned());
            }
        }
        if let Some(topology) = line.get("topology") {
            let (synchronizer, party) = (topology["synchronizer_id"].as_str(), topology["party_id"].as_str());
            let (synchronizer, party) = (synchronizer.expect("a synchronizer"), party.expect("a party"));
            reads.push(get(&format!("/v0/domains/{synchronizer}/parties/{party}/participant-id")));
            reads.push(get(&format!("/v1/domains/{synchronizer}/parties/{party}/participant-id")));
        }
    }
    for id in &instructions {
        for choice in ["reject", "accept", "withdraw"] {
            reads.push(post(&format!("/registry/transfer-instruction/v2/{id}/choice-contexts/{choice}"), &json!({})));
        }
    }
    for chunk in contracts.chunks(1000) {
        reads.push(admin(post("/v0/admin/export/blobs", &json!({ "contract_ids": chunk }))));
    }
    for migration_id in 0..3 {
        reads.push(post("/v0/backfilling/migration-info", &json!({ "migration_id": migration_id })));
        let imports = json!({ "migration_id": migration_id, "after_update_id": "", "limit": 1000 });
        reads.push(post("/v0/backfilling/import-updates", &imports));
        for synchronizer in &synchronizers {
            let before = json!({
                "migration_id": migration_id,
                "synchronizer_id": synchronizer,
                "before": "2099-01-01T00:00:00Z",
                "count": 100,
            });
            reads.push(post("/v0/backfilling/updates-before", &before));
        }
        for after in ["2020-01-01T00:00:00Z", "2025-01-06T12:00:00Z"] {
            reads.push(get(&format!(
                "/v0/state/acs/snapshot-timestamp-after?after={after}&migration_id={migration_id}"
            )));
        }
    }
    for target in [
        "/v0/backfilling/status",
        "/v0/roll-forward-lsu",
        "/v0/closed-rounds",
        "/v0/coin-price/votes",
        "/v0/internal/reward-accounting-process/rounds/earliest-available",
    ] {
        reads.push(get(target));
    }
    reads.push(admin(post("/v0/admin/export/state", &json!({}))));
    reads
}

/// Asserts that `read` answers the same on every node.
pub fn same_answer(nodes: &[(&str, &HttpClient)], read: &Outgoing) -> Vec<u8> {
    let (first_name, first) = nodes[0];
    let expected = first.send(read);
    for (name, node) in &nodes[1..] {
        let got = node.send(read);
        assert!(
            got.status == expected.status && got.body == expected.body,
            "{} {}: {first_name} answered {} {}, {name} answered {} {}",
            read.method,
            read.target,
            expected.status,
            String::from_utf8_lossy(&expected.body[..expected.body.len().min(300)]),
            got.status,
            String::from_utf8_lossy(&got.body[..got.body.len().min(300)]),
        );
    }
    expected.body
}

/// Pages through the stream of `path` in `encoding` on every node, page by page.
pub fn same_stream(nodes: &[(&str, &HttpClient)], path: &str, encoding: &str, page_size: u32) -> usize {
    let mut after: Option<Value> = None;
    let mut items = 0;
    loop {
        let mut body = json!({ "page_size": page_size, "daml_value_encoding": encoding });
        if let Some(after) = &after {
            body["after"] = after.clone();
        }
        let page: Value = serde_json::from_slice(&same_answer(nodes, &post(path, &body))).expect("a JSON page");
        let transactions = page["transactions"].as_array().expect("transactions");
        let Some(last) = transactions.last() else { return items };
        items += transactions.len();
        let migration_id =
            last["migration_id"].as_i64().or_else(|| last.pointer("/event/migration_id").and_then(Value::as_i64));
        after = Some(json!({
            "after_migration_id": migration_id.expect("a migration id"),
            "after_record_time": last["record_time"],
        }));
    }
}

/// The chain A → B (native) → the worker, then every read compared.
pub fn a_history_crosses_a_chain_of_followers_byte_for_byte() {
    let served = served_demo(UPDATES);
    let (a, history, b_db) = (&served.a, &served.history, &served.b_db);
    let summary = run(
        &["follow", "--once", "--upstream", &a.base, "--db", b_db.to_str().expect("UTF-8")],
        &[("LEDGER_NODE_UPSTREAM_TOKEN", ADMIN_TOKEN)],
    );
    assert!(summary.contains("caught up"), "{summary}");
    let b = serve(b_db);

    let worker = WorkerTarget::start_with(&[
        ("LEDGER_NODE_UPSTREAM_URL".into(), b.base.clone()),
        ("LEDGER_NODE_UPSTREAM_TOKEN".into(), ADMIN_TOKEN.into()),
    ]);
    let state = admin(post("/v0/admin/export/state", &json!({})));
    let caught_up = |worker: &WorkerTarget| worker.client().send(&state).body == b.client.send(&state).body;
    let mut runs = 0;
    while !caught_up(&worker) {
        runs += 1;
        assert!(runs <= 10, "the worker did not catch up with B in {} cron runs", runs - 1);
        let fired = worker.client().send(&get("/__scheduled?cron=*+*+*+*+*"));
        assert_eq!(fired.status, 200, "firing the cron trigger: {}", String::from_utf8_lossy(&fired.body));
    }
    // One more run after catching up changes nothing.
    worker.client().send(&get("/__scheduled?cron=*+*+*+*+*"));

    let nodes = [("A", &a.client), ("B", &b.client), ("the worker", worker.client())];
    for read in reads(history) {
        same_answer(&nodes, &read);
    }
    let items = same_stream(&nodes, "/v2/updates", "protobuf_json", 100);
    assert!(items > 1000, "{items} items in the stream");
    same_stream(&nodes, "/v2/updates", "compact_json", 333);
    same_stream(&nodes, "/v1/updates", "protobuf_json", 1000);
}

/// A follower killed with SIGKILL at moments spread over its run, and started again
/// each time, ends with exactly the upstream's history: no gap, no duplicate.
pub fn a_follower_killed_at_any_moment_resumes_without_gap_or_duplicate() {
    let served = served_demo(3_000);
    let (a, history, b_db) = (&served.a, &served.history, &served.b_db);
    let follow = || {
        ledger_node()
            .args(["follow", "--once", "--page-size", "50", "--upstream", &a.base, "--db"])
            .arg(b_db)
            .env("LEDGER_NODE_UPSTREAM_TOKEN", ADMIN_TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting ledger-node follow")
    };
    // Kill times spread by a fixed pseudo-random sequence, so a failure reproduces.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut killed = 0;
    for _ in 0..8 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut child = follow();
        std::thread::sleep(Duration::from_millis(150 + seed % 600));
        if child.try_wait().expect("polling the follower").is_some() {
            break;
        }
        child.kill().expect("SIGKILL");
        child.wait().expect("reaping the follower");
        killed += 1;
    }
    assert!(killed >= 2, "the follower finished before it could be killed twice ({killed})");
    let status = follow().wait().expect("the last run");
    assert!(status.success(), "the last run of the follower failed");
    let b = serve(b_db);
    let nodes = [("A", &a.client), ("B", &b.client)];
    for read in reads(history) {
        same_answer(&nodes, &read);
    }
    same_stream(&nodes, "/v2/updates", "protobuf_json", 1000);
}

/// Upstream failures stop `ledger-node follow` with a message naming them.
pub fn follow_stops_on_upstream_errors_with_a_clear_message() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("b.store");
    let db = db.to_str().expect("UTF-8");
    let fails = |upstream: &str, token: &str| {
        let output = ledger_node()
            .args(["follow", "--once", "--upstream", upstream, "--db", db])
            .env("LEDGER_NODE_UPSTREAM_TOKEN", token)
            .output()
            .expect("running ledger-node follow");
        assert!(!output.status.success(), "following {upstream} succeeded");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let closed = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port");
    let message = fails(&format!("http://{closed}"), ADMIN_TOKEN);
    assert!(message.contains("cannot connect"), "{message}");
    let message = fails("https://scan.example", ADMIN_TOKEN);
    assert!(message.contains("https"), "{message}");
    let a_db = dir.path().join("a.store");
    let a = serve(&a_db);
    let message = fails(&a.base, "not-the-token");
    assert!(message.contains("401") && message.contains("admin token"), "{message}");
}

/// A follower whose last group holds an update that differs from the upstream's stops
/// at it, and applies nothing of the page prepared and sent beside it.
pub fn a_conflict_stops_the_follower_and_nothing_after_it_is_applied() {
    let served = served_demo(1_000);
    let (a, history, b_db) = (&served.a, &served.history, &served.b_db);
    // B holds the history's first 200 or so updates, up to a transaction, which it holds
    // changed.
    let updates: Vec<&Value> = history.iter().filter(|line| line.get("update").is_some()).collect();
    let last =
        (199..updates.len()).find(|&i| updates[i]["update"].get("workflow_id").is_some()).expect("a transaction");
    let mut held: Vec<Value> = updates[..=last].iter().map(|line| (*line).clone()).collect();
    let changed = held.last_mut().expect("an update");
    changed["update"]["workflow_id"] = json!("changed-on-b");
    let changed_id = changed["update"]["update_id"].as_str().expect("an id").to_owned();
    let next_id =
        updates.get(last + 1).and_then(|u| u["update"]["update_id"].as_str()).expect("a next update").to_owned();
    let held_file = served.dir.path().join("held.ndjson");
    let lines: Vec<String> = held.iter().map(Value::to_string).collect();
    std::fs::write(&held_file, lines.join("\n")).expect("writing B's history");
    run(&["ingest", "--db", b_db.to_str().expect("UTF-8"), held_file.to_str().expect("UTF-8")], &[]);

    let output = ledger_node()
        .args(["follow", "--once", "--page-size", "50", "--upstream", &a.base, "--db", b_db.to_str().expect("UTF-8")])
        .env("LEDGER_NODE_UPSTREAM_TOKEN", ADMIN_TOKEN)
        .output()
        .expect("running ledger-node follow");
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "following past a conflict succeeded: {message}");
    assert!(message.contains("409") && message.contains(&changed_id), "{message}");
    let b = serve(b_db);
    let next = b.client.send(&get(&format!("/v2/updates/{next_id}")));
    assert_eq!(next.status, 404, "the update after the conflict was applied");
}

/// Ingests `lines` (NDJSON records) into `node` through its admin endpoint.
fn ingest_over_http(node: &NativeNode, lines: &[String]) {
    let mut request = admin(post("/v0/admin/ingest", &json!(null)));
    request.headers = vec![
        ("content-type".into(), "application/x-ndjson".into()),
        ("authorization".into(), format!("Bearer {ADMIN_TOKEN}")),
    ];
    request.body = lines.join("\n").into_bytes();
    let answer = node.client.send(&request);
    assert_eq!(answer.status, 200, "{}", String::from_utf8_lossy(&answer.body));
}

/// A demo history of 1,200 updates in two halves (NDJSON lines), node A serving an
/// empty store, and where node B's store goes.
struct Halves {
    dir: tempfile::TempDir,
    history: Vec<Value>,
    a: NativeNode,
    b_db: PathBuf,
    first: Vec<String>,
    second: Vec<String>,
}

fn halves() -> Halves {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let history = demo(&dir.path().join("demo.ndjson"), 1_200);
    let (a_db, b_db) = (dir.path().join("a.store"), dir.path().join("b.store"));
    let a = serve(&a_db);
    let mut first: Vec<String> = history.iter().map(Value::to_string).collect();
    let second = first.split_off(first.len() / 2);
    Halves { dir, history, a, b_db, first, second }
}

/// History the upstream backfills after its follower passed it comes across: A takes
/// the later half of a demo history, B follows it, then A takes the earlier half (the
/// first half of migration 0, on the synchronizer B already holds later updates of),
/// and B follows again, with pages small enough to take several going back.
pub fn a_follower_takes_history_its_upstream_backfills() {
    let Halves { dir: _dir, history, a, b_db, first: earlier, second: later } = halves();
    let ingest = |part: &[String]| ingest_over_http(&a, part);
    let follow = || {
        let b_db = b_db.to_str().expect("UTF-8");
        let summary = run(
            &["follow", "--once", "--page-size", "50", "--upstream", &a.base, "--db", b_db],
            &[("LEDGER_NODE_UPSTREAM_TOKEN", ADMIN_TOKEN)],
        );
        assert!(summary.contains("caught up"), "{summary}");
    };
    ingest(&later);
    follow();
    ingest(&earlier);
    follow();
    let b = serve(&b_db);
    let nodes = [("A", &a.client), ("B", &b.client)];
    for read in reads(&history) {
        same_answer(&nodes, &read);
    }
    let items = same_stream(&nodes, "/v2/updates", "protobuf_json", 1000);
    assert!(items > 1000, "{items} items in the stream");
    same_stream(&nodes, "/v1/updates", "compact_json", 77);
}

/// `ledger-node serve --upstream` serves while it follows: it catches up, then takes
/// what the upstream ingests later, and answers as the upstream does.
pub fn serve_keeps_following_its_upstream() {
    // A gets the first half of its history before B starts, the rest after.
    let Halves { dir: _dir, history, a, b_db, first, second } = halves();
    let ingest = |part: &[String]| ingest_over_http(&a, part);
    ingest(&first);
    let b = serve_with(
        &b_db,
        &["--upstream", &a.base, "--poll-seconds", "1"],
        &[("LEDGER_NODE_UPSTREAM_TOKEN", ADMIN_TOKEN)],
    );
    let state = admin(post("/v0/admin/export/state", &json!({})));
    let caught_up = || {
        for _ in 0..120 {
            if a.client.send(&state).body == b.client.send(&state).body {
                return;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        panic!("serve --upstream did not catch up within 30 s");
    };
    caught_up();
    ingest(&second);
    caught_up();
    let nodes = [("A", &a.client), ("B", &b.client)];
    for read in reads(&history) {
        same_answer(&nodes, &read);
    }
    same_stream(&nodes, "/v2/updates", "protobuf_json", 1000);
}
