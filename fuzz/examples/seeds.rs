//! Writes the seed corpora of the fuzz targets (`scripts/fuzz seeds` runs it):
//!
//! ```text
//! seeds <demo.ndjson> <tests/scenarios> <route.rs> <corpus dir>
//! ```
//!
//! - `ingest_line`: lines of the demo history, a few of each kind and the smallest, and
//!   the NDJSON bodies of the scenario suite;
//! - `json_body`: the scenarios' JSON bodies and the ledger values of the demo's events;
//! - `request`: every scenario request, and every route of the routes table (the
//!   `route.rs` module docs) with its parameters taken from the demo history;
//! - `jwt`: the scenarios' wallet tokens, as sent and as header and claims to sign;
//! - `follow`: the answers of a node holding the demo's network records and its first
//!   few updates to a follower starting from nothing, recorded, for a few lengths of
//!   that history.
//!
//! Each corpus is a few dozen small files, named by the hash of their bytes, so that
//! writing them again changes nothing.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ledger_node_core::follow::{self, Limits, Link};
use ledger_node_core::storage::exec::block_on;
use ledger_node_core::storage::store::MemoryStore;
use ledger_node_core::{Body, Method, Request, Response};
use ledger_node_fuzz::{
    ADMIN_TOKEN, FOLLOW_MAX_PAGES, FOLLOW_PAGE_SIZE, admin_post, encode_request, join_answers, serve,
};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The largest seed kept, in bytes (but for the follower's exchanges).
const MAX_SEED: usize = 4096;
/// The most seeds of one target.
const MAX_FILES: usize = 40;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [demo, scenarios, routes, out] = args.as_slice() else {
        eprintln!("usage: seeds <demo.ndjson> <scenarios dir> <route.rs> <corpus dir>");
        std::process::exit(2);
    };
    let demo = std::fs::read_to_string(demo).expect("the demo history is readable");
    let demo: Vec<&str> = demo.lines().filter(|l| !l.trim().is_empty()).collect();
    let requests = scenario_requests(Path::new(scenarios));
    let out = PathBuf::from(out);

    let mut corpus = Corpus::new(&out, "ingest_line");
    for line in smallest_of_each_kind(&demo, 6) {
        corpus.add(line.as_bytes());
    }
    corpus.add(demo.iter().take(4).copied().collect::<Vec<_>>().join("\n").as_bytes());
    for request in &requests {
        if request.header("content-type") == Some("application/x-ndjson") {
            corpus.add(body(request));
        }
    }
    corpus.finish();

    let mut corpus = Corpus::new(&out, "json_body");
    for request in &requests {
        if request.header("content-type") == Some("application/json") {
            corpus.add(body(request));
        }
    }
    for value in demo_values(&demo).into_iter().take(20) {
        corpus.add(value.as_bytes());
    }
    corpus.finish();

    let mut corpus = Corpus::new(&out, "request");
    for request in &requests {
        corpus.add(&encode_request(request));
    }
    for request in route_table_requests(&std::fs::read_to_string(routes).expect("route.rs is readable"), &demo) {
        corpus.add(&encode_request(&request));
    }
    corpus.finish();

    let mut corpus = Corpus::new(&out, "jwt");
    for request in &requests {
        let Some(token) = request.header("authorization").and_then(|a| a.strip_prefix("Bearer ")) else { continue };
        if token == ADMIN_TOKEN {
            continue;
        }
        corpus.add(token.as_bytes());
        let parts: Vec<Vec<u8>> = token.split('.').take(2).filter_map(base64url_decode).collect();
        if let [header, claims] = parts.as_slice()
            && header.first() == Some(&b'{')
        {
            corpus.add(&[header.as_slice(), b"\n", claims.as_slice()].concat());
        }
    }
    corpus.finish();

    let mut corpus = Corpus::of_size(&out, "follow", usize::MAX);
    let (updates, records): (Vec<&str>, Vec<&str>) = demo.iter().partition(|line| line.starts_with("{\"update\""));
    for count in [12, 5, 2, 0] {
        let history: Vec<&str> = records.iter().chain(updates.iter().take(count)).copied().collect();
        corpus.add(&recorded_follow(&history));
    }
    corpus.finish();
}

/// A corpus being gathered, then written: at most [`MAX_FILES`] seeds of at most
/// `max_bytes` each, spread evenly over those offered, in files named by the hash of
/// their bytes.
struct Corpus {
    dir: PathBuf,
    max_bytes: usize,
    seeds: Vec<Vec<u8>>,
}

impl Corpus {
    /// The corpus of `target`, emptied.
    fn new(out: &Path, target: &str) -> Self {
        Corpus::of_size(out, target, MAX_SEED)
    }

    /// The corpus of `target`, emptied, of seeds up to `max_bytes`.
    fn of_size(out: &Path, target: &str, max_bytes: usize) -> Self {
        let dir = out.join(target);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the corpus directory can be made");
        Corpus { dir, max_bytes, seeds: Vec::new() }
    }

    fn add(&mut self, seed: &[u8]) {
        if seed.len() <= self.max_bytes && !self.seeds.iter().any(|s| s == seed) {
            self.seeds.push(seed.to_vec());
        }
    }

    fn finish(self) {
        let step = self.seeds.len().div_ceil(MAX_FILES).max(1);
        let chosen: Vec<&Vec<u8>> = self.seeds.iter().step_by(step).collect();
        for seed in &chosen {
            let name: String = Sha256::digest(seed).iter().take(10).map(|b| format!("{b:02x}")).collect();
            std::fs::write(self.dir.join(name), seed).expect("a seed can be written");
        }
        let bytes: usize = chosen.iter().map(|s| s.len()).sum();
        println!("seeds: {} files, {bytes} bytes, in {}", chosen.len(), self.dir.display());
    }
}

/// Every request of the scenario suite, as its hosts send it (small ones only).
fn scenario_requests(dir: &Path) -> Vec<Request> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the scenarios directory is readable")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut requests = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a scenario file is readable");
        let suite: Value = serde_json::from_str(&text).expect("a scenario file is JSON");
        let steps = suite["scenarios"].as_array().into_iter().flatten().flat_map(|s| s["steps"].as_array()).flatten();
        for spec in steps.filter_map(|step| step.get("request")) {
            if let Some(request) = scenario_request(spec)
                && encode_request(&request).len() <= MAX_SEED
            {
                requests.push(request);
            }
        }
    }
    requests
}

/// One scenario request (`tests/tests/hosts/scenario.rs`, `RequestSpec`).
fn scenario_request(spec: &Value) -> Option<Request> {
    let mut request = Request::new(Method::parse(spec["method"].as_str()?), spec["path"].as_str()?);
    for (name, value) in spec["headers"].as_object().into_iter().flatten() {
        request.headers.push((name.clone(), value.as_str().map_or_else(|| value.to_string(), str::to_owned)));
    }
    match &spec["auth"] {
        Value::String(admin) if admin == "admin" => {
            request.headers.push(("authorization".into(), format!("Bearer {ADMIN_TOKEN}")));
        }
        Value::Object(bearer) => {
            request.headers.push(("authorization".into(), format!("Bearer {}", bearer.get("bearer")?.as_str()?)));
        }
        _ => {}
    }
    let body = if let Some(json) = spec.get("json") {
        request.headers.push(("content-type".into(), "application/json".into()));
        json.to_string().into_bytes()
    } else if let Some(records) = spec["ndjson"].as_array() {
        request.headers.push(("content-type".into(), "application/x-ndjson".into()));
        records.iter().map(|r| r.to_string() + "\n").collect::<String>().into_bytes()
    } else if let Some(text) = spec["text"].as_str() {
        text.as_bytes().to_vec()
    } else {
        Vec::new()
    };
    request.body = Body::Complete(body);
    Some(request)
}

fn body(request: &Request) -> &[u8] {
    match &request.body {
        Body::Complete(body) => body,
        Body::TooLarge => &[],
    }
}

/// The `count` smallest lines of each kind of record (transactions and reassignments
/// apart), and the first of each.
fn smallest_of_each_kind<'a>(lines: &[&'a str], count: usize) -> Vec<&'a str> {
    let kind = |line: &str| -> String {
        let record: Value = serde_json::from_str(line).unwrap_or_default();
        let name = record.as_object().and_then(|o| o.keys().next().cloned()).unwrap_or_default();
        let reassignment = record["update"].get("event").is_some();
        format!("{name}{}", if reassignment { " reassignment" } else { "" })
    };
    let kinds: BTreeSet<String> = lines.iter().map(|l| kind(l)).collect();
    let mut chosen = Vec::new();
    for wanted in kinds {
        let mut of_kind: Vec<&str> = lines.iter().copied().filter(|l| kind(l) == wanted).collect();
        chosen.push(of_kind[0]);
        of_kind.sort_by_key(|l| l.len());
        chosen.extend(of_kind.into_iter().take(count));
    }
    chosen
}

/// The ledger values of the demo's events (create and choice arguments, results).
fn demo_values(lines: &[&str]) -> Vec<String> {
    let mut values = BTreeSet::new();
    for line in lines {
        let record: Value = serde_json::from_str(line).unwrap_or_default();
        for event in record["update"]["events_by_id"].as_object().into_iter().flat_map(|e| e.values()) {
            for field in ["create_arguments", "choice_argument", "exercise_result"] {
                if let Some(value) = event.get(field) {
                    values.insert(value.to_string());
                }
            }
        }
    }
    let mut values: Vec<String> = values.into_iter().collect();
    values.sort_by_key(String::len);
    values
}

/// A request for every row of the routes table in `route_rs`'s module docs, its path
/// parameters taken from the demo history.
fn route_table_requests(route_rs: &str, demo: &[&str]) -> Vec<Request> {
    let mut update_id = String::from("u-1");
    let mut synchronizer = String::from("global-domain::1220aa");
    let mut party = String::from("alice::1220");
    let mut contract = String::from("00aa");
    for line in demo {
        let record: Value = serde_json::from_str(line).unwrap_or_default();
        let update = &record["update"];
        if let Some(events) = update["events_by_id"].as_object() {
            update_id = update["update_id"].as_str().unwrap_or(&update_id).to_owned();
            synchronizer = update["synchronizer_id"].as_str().unwrap_or(&synchronizer).to_owned();
            if let Some(event) = events.values().find(|e| e["event_type"] == "created_event") {
                contract = event["contract_id"].as_str().unwrap_or(&contract).to_owned();
                party = event["signatories"][0].as_str().unwrap_or(&party).to_owned();
            }
            break;
        }
    }
    let mut requests = Vec::new();
    for row in route_rs.lines().filter_map(|l| l.strip_prefix("//! | ")) {
        let cells: Vec<&str> = row.split(" | ").collect();
        let (Some(method), Some(path)) = (cells.first(), cells.get(1).and_then(|p| p.strip_prefix('`'))) else {
            continue;
        };
        let Some(path) = path.strip_suffix('`') else { continue };
        let path = path
            .replace("{update_id}", &update_id)
            .replace("{domain_id}", &synchronizer)
            .replace("{party_id}", &party)
            .replace("{id}", &contract)
            .replace("{tracking_id}", "t-1")
            .replace("{coin}", "coin")
            .replace("{reject,accept,withdraw}", "accept");
        let mut request = Request::new(Method::parse(method), &path);
        if path.starts_with("/v0/admin/") {
            request.headers.push(("authorization".into(), format!("Bearer {ADMIN_TOKEN}")));
        }
        if *method == "POST" {
            request.headers.push(("content-type".into(), "application/json".into()));
            request.body = Body::Complete(b"{}".to_vec());
        }
        requests.push(request);
    }
    requests
}

/// A link to a node that records the bodies it answers.
struct Recording {
    store: MemoryStore,
    answers: RefCell<Vec<Vec<u8>>>,
}

impl Link for Recording {
    async fn send(&self, mut request: Request) -> Result<Response, String> {
        request.headers.push(("authorization".into(), format!("Bearer {ADMIN_TOKEN}")));
        let response = serve(&request, &self.store);
        self.answers.borrow_mut().push(response.body.clone());
        Ok(response)
    }
}

/// The answers of a node holding `history` to a follower that starts from nothing,
/// with the fuzz target's limits.
fn recorded_follow(history: &[&str]) -> Vec<u8> {
    let upstream = Recording { store: MemoryStore::new(), answers: RefCell::new(Vec::new()) };
    let ingested = serve(&admin_post("/v0/admin/ingest", history.join("\n").into_bytes()), &upstream.store);
    assert_eq!(ingested.status, 200, "the demo history ingests");
    upstream.answers.borrow_mut().clear();
    let local = Recording { store: MemoryStore::new(), answers: RefCell::new(Vec::new()) };
    let limits =
        Limits { page_size: FOLLOW_PAGE_SIZE, max_pages: FOLLOW_MAX_PAGES, pipelined: false, ..Limits::default() };
    block_on(follow::sync(&upstream, &local, &limits)).expect("a follower follows a demo node");
    join_answers(&upstream.answers.borrow())
}

/// Base64url without padding, decoded.
fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for c in text.bytes() {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        bits = bits << 6 | u32::from(value);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    Some(out)
}
