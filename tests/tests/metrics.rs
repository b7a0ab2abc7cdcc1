//! What an operator sees of `ledger-node serve`: the metrics on their own listener
//! (`--metrics-listen`), checked by Prometheus's own linter (`promtool`), and the
//! structured log lines on standard error.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ledger_node_tests::native::{NativeNode, Serve};

/// The admin token of the node under test: it must never reach the log.
const ADMIN_TOKEN: &str = "admin-token-never-logged-4f1c";

/// A wallet token (a JWT, unsigned by any key the node knows): it must never reach the
/// log either.
const WALLET_TOKEN: &str = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzZWNyZXQtc3ViamVjdCJ9.c2lnbmF0dXJlLW5ldmVyLWxvZ2dlZA";

/// The body cache's bound the nodes under test are given, through the environment.
const BODY_CACHE_BYTES: u64 = 8 * 1024 * 1024;

/// A running `ledger-node serve`, with its API's and its metrics' addresses and its
/// standard error as it is written.
struct Node {
    process: NativeNode,
    base: String,
    metrics: String,
}

impl Node {
    /// Starts a node over a store in `db` with JSON logs and metrics on a port of their
    /// own, and the scheduled jobs off.
    fn start(db: &std::path::Path) -> Node {
        Node::start_with(db, 0, "jwt-secret-never-logged", &[])
    }

    /// Starts a node over a store in `db` that runs its scheduled jobs every
    /// `tick_seconds` (0: never), checks wallet tokens with the HS256 `jwt_secret`, and
    /// takes the further `serve` arguments `extra`.
    fn start_with(db: &std::path::Path, tick_seconds: u32, jwt_secret: &str, extra: &[&str]) -> Node {
        let process = Serve::new(db)
            .tick_seconds(tick_seconds)
            .metrics()
            .args(extra)
            .env("LEDGER_NODE_ADMIN_TOKEN", ADMIN_TOKEN)
            .env("LEDGER_NODE_JWT_HS256_SECRET", jwt_secret)
            .env("LEDGER_NODE_JWT_MAX_TTL_HOURS", "1000000")
            .env(ledger_node::logs::FORMAT, "json")
            .env(ledger_node::config::BODY_CACHE_BYTES, BODY_CACHE_BYTES.to_string())
            .start();
        let base = process.base.clone();
        let metrics = process.metrics.clone().expect("started with its metrics on a port of their own");
        Node { process, base, metrics }
    }

    /// The metrics, as the node's metrics listener serves them now.
    fn scrape(&self) -> String {
        let mut response = agent().get(format!("{}/metrics", self.metrics)).call().expect("GET /metrics");
        response.body_mut().read_to_string().expect("the metrics")
    }

    /// The log lines written so far.
    fn lines(&self) -> Vec<String> {
        self.process.lines()
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::new_with_config(ureq::Agent::config_builder().http_status_as_error(false).build())
}

/// A request sent, and what came back: the status and the `x-request-id` header.
#[derive(Debug)]
struct Sent {
    method: &'static str,
    route: &'static str,
    status: u16,
    request_id: String,
}

/// Sends `method path` with `body` (and the admin token, if `admin`), expecting
/// `status`; `route` is the template it should be counted under.
fn send(node: &Node, method: &'static str, path: &str, route: &'static str, body: Option<&str>, status: u16) -> Sent {
    let url = format!("{}{path}", node.base);
    let response = match (method, body) {
        ("GET", _) => agent().get(&url).header("authorization", format!("Bearer {WALLET_TOKEN}")).call(),
        (_, Some(body)) => agent()
            .post(&url)
            .header("authorization", format!("Bearer {ADMIN_TOKEN}"))
            .content_type("application/x-ndjson")
            .send(body),
        (_, None) => agent().post(&url).send_empty(),
    }
    .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    assert_eq!(response.status().as_u16(), status, "{method} {path}");
    let request_id = response
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("{method} {path} has no x-request-id"))
        .to_owned();
    Sent { method, route, status, request_id }
}

/// A small demo history, and the id of one update in it.
fn history() -> (String, String) {
    let output = ledger_node_tests::ledger_node()
        .args(["demo", "--updates", "3", "--seed", "5"])
        .output()
        .expect("running ledger-node demo");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let history = String::from_utf8(output.stdout).expect("UTF-8");
    let update_id = history
        .lines()
        .find_map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).ok()?;
            Some(record.get("update")?.get("update_id")?.as_str()?.to_owned())
        })
        .expect("an update in the demo history");
    (history, update_id)
}

/// What the node is asked in both tests, and the ids the paths carried.
fn exercise(node: &Node) -> (Vec<Sent>, Vec<String>) {
    let (history, update_id) = history();
    let unknown_id = "1220feedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedface";
    let party = "alice::1220aaaabbbbccccddddeeeeffff00001111222233334444555566667777";
    let sent = vec![
        send(node, "POST", "/v0/admin/ingest", "/v0/admin/ingest", Some(&history), 200),
        send(node, "POST", "/v0/admin/ingest", "/v0/admin/ingest", Some("{\"not\": \"a record\"}\n"), 400),
        send(node, "POST", "/v0/admin/store-check", "/v0/admin/store-check", Some(""), 200),
        send(node, "GET", &format!("/v2/updates/{update_id}"), "/v2/updates/{update_id}", None, 200),
        send(node, "GET", &format!("/api/scan/v2/updates/{unknown_id}"), "/api/scan/v2/updates/{update_id}", None, 404),
        send(
            node,
            "GET",
            &format!("/v0/transfer-preapprovals/by-party/{party}"),
            "/v0/transfer-preapprovals/by-party/{party}",
            None,
            404,
        ),
        send(node, "GET", &format!("/no/such/{unknown_id}"), "other", None, 404),
        send(node, "GET", &format!("/v2/updates/{update_id}/extra"), "other", None, 404),
        send(node, "GET", "/metrics", "other", None, 404),
        send(node, "GET", "/api/validator/status", "/api/validator/status", None, 200),
        send(node, "POST", "/version", "/version", None, 405),
    ];
    (sent, vec![update_id, unknown_id.to_owned(), party.to_owned()])
}

/// The samples of the text `metrics`: name, labels, value.
fn samples(metrics: &str) -> Vec<(String, BTreeMap<String, String>, f64)> {
    metrics
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').expect("a sample is a series and a value");
            let (name, labels) = match series.split_once('{') {
                Some((name, labels)) => (name, labels.strip_suffix('}').expect("labels end with }")),
                None => (series, ""),
            };
            let labels = labels
                .split("\",")
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (key, value) = pair.split_once("=\"").expect("a label is key=\"value\"");
                    (key.to_owned(), value.trim_end_matches('"').to_owned())
                })
                .collect();
            (name.to_owned(), labels, value.parse().expect("a sample's value is a number"))
        })
        .collect()
}

/// The connections open to `node`'s API, as its metrics say now.
fn open_connections(node: &Node) -> f64 {
    value(&samples(&node.scrape()), "ledger_node_connections_open")
}

/// The value of the sample `name` without labels.
fn value(samples: &[(String, BTreeMap<String, String>, f64)], name: &str) -> f64 {
    samples
        .iter()
        .find(|(n, labels, _)| n == name && labels.is_empty())
        .map(|(_, _, v)| *v)
        .unwrap_or_else(|| panic!("no sample {name}"))
}

#[test]
fn metrics_count_requests_by_route_template_and_pass_promtool() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let node = Node::start(&dir.path().join("node.store"));
    let (sent, ids) = exercise(&node);
    let mut response = agent().get(format!("{}/metrics", node.metrics)).call().expect("GET /metrics");
    assert_eq!(response.status(), 200);
    let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).map(str::to_owned);
    assert_eq!(content_type.as_deref(), Some("text/plain; version=0.0.4; charset=utf-8"));
    let text = response.body_mut().read_to_string().expect("the metrics");
    // The metrics listener serves nothing else.
    assert_eq!(agent().get(format!("{}/version", node.metrics)).call().expect("GET").status(), 404);

    let promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut promtool = promtool.expect("promtool (Debian package prometheus; scripts/setup installs it)");
    promtool.stdin.take().expect("a piped stdin").write_all(text.as_bytes()).expect("writing to promtool");
    let checked = promtool.wait_with_output().expect("promtool");
    assert!(
        checked.status.success(),
        "promtool check metrics: {}{}\n{text}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );

    let samples = samples(&text);
    let mut counted: BTreeMap<(String, String, String), f64> = BTreeMap::new();
    for (name, labels, value) in &samples {
        if name == "ledger_node_http_requests_total" {
            let key = (labels["method"].clone(), labels["route"].clone(), labels["status"].clone());
            *counted.entry(key).or_default() += value;
        }
    }
    let mut expected: BTreeMap<(String, String, String), f64> = BTreeMap::new();
    for s in &sent {
        *expected.entry((s.method.to_owned(), s.route.to_owned(), s.status.to_string())).or_default() += 1.0;
    }
    assert_eq!(counted, expected, "{text}");
    let observed: f64 = samples
        .iter()
        .filter(|(name, _, _)| name == "ledger_node_http_request_duration_seconds_count")
        .map(|(_, _, v)| v)
        .sum();
    assert_eq!(observed, sent.len() as f64);

    // No label value of the request metrics carries an id sent in a path.
    for (name, labels, _) in samples.iter().filter(|(name, _, _)| name.starts_with("ledger_node_http_")) {
        for value in labels.values() {
            for id in &ids {
                assert!(!value.contains(id.as_str()), "{name} has the id {id} in a label: {value}");
            }
        }
    }

    assert_eq!(value(&samples, "ledger_node_ingest_batches_total"), 1.0);
    assert_eq!(value(&samples, "ledger_node_ingest_updates_total"), 3.0);
    assert_eq!(value(&samples, "ledger_node_ingest_refused_batches_total"), 1.0);
    let kinds: BTreeMap<String, f64> = samples
        .iter()
        .filter(|(name, _, _)| name == "ledger_node_ingest_records_total")
        .map(|(_, labels, v)| (labels["kind"].clone(), *v))
        .collect();
    assert_eq!(kinds.get("update"), Some(&3.0), "{text}");
    assert!(kinds.values().sum::<f64>() >= 3.0, "{text}");
    assert_eq!(value(&samples, "ledger_node_connections_accept_failures_total"), 0.0);
    assert!(value(&samples, "ledger_node_store_compactions") >= 0.0);
    assert!(value(&samples, "ledger_node_store_compaction_time_seconds") >= 0.0);
    assert!(value(&samples, "ledger_node_process_anonymous_memory_bytes") > 0.0);
    assert!(value(&samples, "ledger_node_store_disk_bytes") > 0.0);
    assert!(value(&samples, "ledger_node_process_resident_memory_bytes") > 0.0);
    assert!(value(&samples, "ledger_node_instances_idle") >= 1.0);
    assert!(value(&samples, "ledger_node_instances_idle_memory_bytes") > 1_000_000.0);
    assert_eq!(value(&samples, "ledger_node_instances_busy"), 0.0);
    // The storage check remembered and recalled through the body cache, and its last
    // range delete forgot everything; the update read after it was rendered and kept.
    assert!(value(&samples, "ledger_node_body_cache_hits_total") >= 4.0, "{text}");
    assert!(value(&samples, "ledger_node_body_cache_misses_total") >= 3.0, "{text}");
    assert!(value(&samples, "ledger_node_body_cache_bytes") > 0.0, "{text}");
    assert_eq!(value(&samples, "ledger_node_body_cache_limit_bytes"), BODY_CACHE_BYTES as f64);
    // This scrape's own connection is to the other listener; the clients' connections
    // to the API are counted closed once the node has seen them close, which may come
    // a moment after their answers.
    let started = Instant::now();
    while open_connections(&node) != 0.0 {
        assert!(started.elapsed() < Duration::from_secs(10), "connections stay open: {}", node.scrape());
        std::thread::sleep(Duration::from_millis(20));
    }

    // `GET /status` names both ports, in the network's `NodeStatus`.
    let port = |base: &str| base.rsplit(':').next().and_then(|p| p.parse::<u16>().ok()).expect("a port");
    let status = agent()
        .get(format!("{}/status", node.base))
        .call()
        .expect("GET /status")
        .body_mut()
        .read_to_string()
        .expect("a body");
    let status: serde_json::Value = serde_json::from_str(&status).expect("a JSON body");
    assert_eq!(
        status["success"]["ports"],
        serde_json::json!({"public": port(&node.base), "metrics": port(&node.metrics)}),
        "{status}"
    );
}

#[test]
fn every_request_is_one_json_log_line_with_its_id_and_no_token_is_logged() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let node = Node::start(&dir.path().join("node.store"));
    let (sent, ids) = exercise(&node);
    let started = Instant::now();
    let lines = loop {
        let lines = node.lines();
        let requests = lines.iter().filter(|line| line.contains(r#""message":"request""#)).count();
        if requests >= sent.len() || started.elapsed() > Duration::from_secs(10) {
            break lines;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let events: Vec<serde_json::Value> = lines
        .iter()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("a log line is not JSON ({e}): {line}")))
        .collect();
    let requests: BTreeMap<String, &serde_json::Value> = events
        .iter()
        .filter(|event| event["message"] == "request")
        .map(|event| (event["request_id"].as_str().expect("a request_id").to_owned(), event))
        .collect();
    assert_eq!(requests.len(), sent.len(), "{lines:#?}");
    for s in &sent {
        let event = requests.get(&s.request_id).unwrap_or_else(|| panic!("no log line for {s:?}: {lines:#?}"));
        assert_eq!(event["method"], s.method, "{event}");
        assert_eq!(event["route"], s.route, "{event}");
        assert_eq!(event["status"], s.status, "{event}");
        assert_eq!(event["level"], "INFO", "{event}");
        assert!(event["duration_ms"].as_f64().is_some_and(|ms| ms >= 0.0), "{event}");
        assert!(event["timestamp"].is_string(), "{event}");
    }
    assert!(events.iter().any(|event| event["message"] == "ingest batch applied" && event["updates"] == 3));
    let log = lines.join("\n");
    for secret in [ADMIN_TOKEN, WALLET_TOKEN, "jwt-secret-never-logged"] {
        assert!(!log.contains(secret), "the log carries a secret: {log}");
    }
    for id in &ids {
        assert!(!requests.values().any(|event| event["route"].as_str().is_some_and(|r| r.contains(id.as_str()))));
    }
}

/// Every line of `lines` as a JSON object.
fn events(lines: &[String]) -> Vec<serde_json::Value> {
    lines
        .iter()
        .map(|line| match serde_json::from_str(line) {
            Ok(event @ serde_json::Value::Object(_)) => event,
            _ => panic!("a log line is not a JSON object: {line}"),
        })
        .collect()
}

#[test]
fn the_scheduled_jobs_report_expired_and_pending_wallet_requests_in_metrics_and_log() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let node = Node::start_with(&dir.path().join("node.store"), 1, "test-hs256-secret", &[]);
    let records = concat!(
        r#"{"wallet_user":{"user_id":"alice","party_id":"alice::1220"}}"#,
        "\n",
        r#"{"topology":{"synchronizer_id":"sync::1","party_id":"validator::1","participant_ids":["PAR::v::1"]}}"#,
        "\n"
    );
    send(&node, "POST", "/v0/admin/ingest", "/v0/admin/ingest", Some(records), 200);
    // HS256 (test-hs256-secret), sub alice, exp 2099.
    let token = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSIsImV4cCI6NDA3MDkwODgwMH0.ibqqgiITmv5mzwHPIk8p9RbVCCl4x-kXp_nGdRy0F5Q";
    // One request already due (2024), two not yet (2096).
    for (tracking_id, expires_at) in
        [("due", 1_704_067_200_000_000_i64), ("later-1", 4_000_000_000_000_000), ("later-2", 4_000_000_000_000_000)]
    {
        let body = serde_json::json!({
            "receiving_validator_party_id": "validator::1", "domain_id": "sync::1", "traffic_amount": 10,
            "tracking_id": tracking_id, "expires_at": expires_at,
        });
        let created = agent()
            .post(format!("{}/v0/wallet/buy-traffic-requests", node.base))
            .header("authorization", &format!("Bearer {token}"))
            .send(body.to_string())
            .expect("POST a buy-traffic request");
        assert_eq!(created.status(), 200, "{tracking_id}");
    }
    let started = Instant::now();
    let samples = loop {
        let text = node.scrape();
        let samples = samples(&text);
        if value(&samples, "ledger_node_wallet_expired_requests_total") >= 1.0 {
            break samples;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "the timer expired nothing: {text}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(value(&samples, "ledger_node_wallet_expired_requests_total"), 1.0);
    assert_eq!(value(&samples, "ledger_node_wallet_pending_requests"), 2.0);
    assert_eq!(value(&samples, "ledger_node_scheduled_job_failures_total"), 0.0);

    let lines = node.lines();
    let runs: Vec<serde_json::Value> =
        events(&lines).into_iter().filter(|event| event["message"] == "scheduled jobs").collect();
    assert!(
        runs.iter().any(|run| run["expired_requests"] == 1 && run["pending_requests"] == 2 && run["skipped"] == 0),
        "{lines:#?}"
    );
    let log = lines.join("\n");
    for secret in [ADMIN_TOKEN, token, "test-hs256-secret"] {
        assert!(!log.contains(secret), "the log carries a secret: {log}");
    }
}

#[test]
fn a_follower_s_lag_falls_to_zero_once_it_has_caught_up_with_its_upstream() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let upstream = Node::start(&dir.path().join("upstream.store"));
    let (history, _) = history();
    send(&upstream, "POST", "/v0/admin/ingest", "/v0/admin/ingest", Some(&history), 200);
    // The update with the newest record time.
    let (_, newest) = history
        .lines()
        .filter_map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).ok()?;
            let update = record.get("update")?;
            Some((update["record_time"].as_str()?.to_owned(), update["update_id"].as_str()?.to_owned()))
        })
        .max()
        .expect("an update in the demo history");

    // No upstream token: the follower reads the upstream's public API only.
    let follower = Node::start_with(
        &dir.path().join("follower.store"),
        0,
        "jwt-secret-never-logged",
        &["--upstream", upstream.base.as_str(), "--poll-seconds", "1"],
    );
    let started = Instant::now();
    let samples = loop {
        let text = follower.scrape();
        let samples = samples(&text);
        if value(&samples, "ledger_node_follow_last_caught_up_timestamp_seconds") > 0.0 {
            break samples;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "the follower did not catch up: {:#?}", follower.lines());
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(value(&samples, "ledger_node_follow_position_record_time_seconds") > 0.0);
    assert_eq!(value(&samples, "ledger_node_follow_lag_seconds"), 0.0);
    let held = agent().get(format!("{}/v2/updates/{newest}", follower.base)).call().expect("GET the newest update");
    assert_eq!(held.status(), 200, "the follower holds the upstream's newest update");
    assert!(value(&samples, "ledger_node_follow_pages_total") >= 1.0);
    // One upstream agrees with itself: no upstream is counted as disagreeing.
    assert!(!samples.iter().any(|(name, _, _)| name == "ledger_node_follow_disagreements_total"));
}
