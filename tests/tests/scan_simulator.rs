//! The simulator of the network's Scan (`ledger_node_tests::scan_simulator`) against
//! the node behind it: what it rewrites, keeps and refuses, and its TLS and rate limits.

use std::sync::OnceLock;

use ledger_node_tests::scan_simulator::{self, Options, ScanSimulator};
use ledger_node_tests::tls::{self, TestCa};
use serde_json::{Value, json};

/// The simulator most tests share (no rate limit, nothing tampered), and the folder of
/// its CA, kept for the whole run.
fn shared() -> &'static ScanSimulator {
    static SHARED: OnceLock<(tempfile::TempDir, ScanSimulator)> = OnceLock::new();
    &SHARED
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("a folder");
            let simulator = ScanSimulator::start(dir.path(), Options::default()).expect("the simulator");
            (dir, simulator)
        })
        .1
}

/// One request to the simulator's front over TLS with `connector`.
fn front_with(
    connector: &tokio_rustls::TlsConnector,
    simulator: &ScanSimulator,
    method: &str,
    path: &str,
    body: &str,
) -> anyhow::Result<(u16, hyper::HeaderMap, String)> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(tls::request(connector, simulator.address(), method, path, body))
}

/// One request to the simulator's front, trusting its CA: status and body.
fn front(simulator: &ScanSimulator, method: &str, path: &str, body: &str) -> (u16, String) {
    let connector = simulator.ca().connector().expect("a client");
    let (status, _, body) = front_with(&connector, simulator, method, path, body).expect("an answer over TLS");
    (status, body)
}

/// One request to the node behind the front, over plain HTTP: status and body.
fn node(simulator: &ScanSimulator, method: &str, path: &str, body: &str) -> (u16, String) {
    let agent = ureq::Agent::new_with_config(ureq::Agent::config_builder().http_status_as_error(false).build());
    let url = format!("{}{path}", simulator.node_url());
    let answer = match method {
        "GET" => agent.get(&url).call(),
        _ => agent.post(&url).header("content-type", "application/json").send(body),
    };
    let mut answer = answer.expect("an answer from the node");
    (answer.status().as_u16(), answer.body_mut().read_to_string().expect("a body"))
}

fn parse(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// The update ids of a page.
fn ids(page: &Value) -> Vec<&str> {
    page["transactions"]
        .as_array()
        .expect("a page of updates")
        .iter()
        .map(|u| u["update_id"].as_str().expect("an update id"))
        .collect()
}

const PROTOBUF_PAGE: &str = r#"{"page_size": 100, "daml_value_encoding": "protobuf_json"}"#;

#[test]
fn its_protobuf_json_stream_has_no_record_labels_where_the_nodes_has_them() {
    let simulator = shared();
    let (status, theirs) = node(simulator, "POST", "/v2/updates", PROTOBUF_PAGE);
    assert_eq!(status, 200, "{theirs}");
    let (status, ours) = front(simulator, "POST", "/api/scan/v2/updates", PROTOBUF_PAGE);
    assert_eq!(status, 200, "{ours}");
    assert!(theirs.contains(r#""label":"#), "the node writes labels");
    assert!(!ours.contains(r#""label""#), "the network writes none: {ours}");
    let (theirs, ours) = (parse(&theirs), parse(&ours));
    assert_eq!(ids(&theirs), ids(&ours));
    assert!(ours.to_string().contains(r#"{"record":{"fields":[{"value":"#), "fields are {{value}} alone");
    // A page in compact_json is the node's as it is.
    let compact = r#"{"page_size": 100, "daml_value_encoding": "compact_json"}"#;
    assert_eq!(
        parse(&node(simulator, "POST", "/v2/updates", compact).1),
        parse(&front(simulator, "POST", "/v2/updates", compact).1)
    );
}

#[test]
fn the_backfilling_pages_and_an_update_by_id_are_protobuf_json_without_labels_or_blobs() {
    let simulator = shared();
    let (_, page) = front(simulator, "POST", "/v2/updates", PROTOBUF_PAGE);
    let page = parse(&page);
    let first = ids(&page)[0].to_owned();
    let by_id = format!("/v2/updates/{first}?daml_value_encoding=protobuf_json");
    let (status, theirs) = node(simulator, "GET", &by_id, "");
    assert_eq!(status, 200, "{theirs}");
    let (status, ours) = front(simulator, "GET", &by_id, "");
    assert_eq!(status, 200, "{ours}");
    assert_eq!(parse(&ours)["update_id"], json!(first));
    assert!(!ours.contains(r#""label""#) && !ours.contains("created_event_blob"), "{ours}");
    let first_update = &page["transactions"][0];
    let before = json!({
        "migration_id": first_update["migration_id"],
        "synchronizer_id": first_update["synchronizer_id"],
        "before": "2100-01-01T00:00:00Z",
        "count": 50,
    });
    let import = json!({"migration_id": first_update["migration_id"], "after_update_id": "", "limit": 50});
    for (path, body) in [("/v0/backfilling/updates-before", &before), ("/v0/backfilling/import-updates", &import)] {
        let (status, theirs) = node(simulator, "POST", path, &body.to_string());
        assert_eq!(status, 200, "{path}: {theirs}");
        let (status, ours) = front(simulator, "POST", path, &body.to_string());
        assert_eq!(status, 200, "{path}: {ours}");
        assert!(!ours.contains(r#""label""#) && !ours.contains("created_event_blob"), "{path}: {ours}");
        assert_eq!(ids(&parse(&theirs)), ids(&parse(&ours)), "{path}");
    }
    let updates_before = node(simulator, "POST", "/v0/backfilling/updates-before", &before.to_string()).1;
    assert!(updates_before.contains(r#""label":"#), "the node writes labels in its backfilling pages");
    let v1 = r#"{"page_size": 50, "daml_value_encoding": "protobuf_json"}"#;
    let (status, ours) = front(simulator, "POST", "/v1/updates", v1);
    assert_eq!(status, 200, "{ours}");
    assert!(!ours.contains(r#""label""#) && !ours.contains("created_event_blob"), "{ours}");
}

#[test]
fn admin_endpoints_are_not_found_except_the_two_public_reads() {
    let simulator = shared();
    for (method, path) in [
        ("POST", "/v0/admin/export/blobs"),
        ("POST", "/v0/admin/export/state"),
        ("POST", "/v0/admin/ingest"),
        ("GET", "/v0/admin/wallet/buy-traffic-requests"),
        ("POST", "/api/scan/v0/admin/export/blobs"),
    ] {
        let (status, body) = front(simulator, method, path, "{}");
        assert_eq!((status, body.as_str()), (404, scan_simulator::NOT_FOUND), "{method} {path}");
    }
    for path in ["/v0/admin/sv/voterequests", "/api/scan/v0/admin/validator/licenses"] {
        let (status, body) = front(simulator, "GET", path, "");
        assert_eq!(status, 200, "{path}: {body}");
    }
}

#[test]
fn a_contract_endpoint_keeps_its_blob() {
    let simulator = shared();
    let (status, theirs) = node(simulator, "POST", "/v0/coin-rules", "{}");
    assert_eq!(status, 200, "{theirs}");
    let (status, ours) = front(simulator, "POST", "/api/scan/v0/coin-rules", "{}");
    assert_eq!(status, 200, "{ours}");
    let ours = parse(&ours);
    assert!(ours["coin_rules_update"]["contract"]["created_event_blob"].is_string(), "{ours}");
    assert_eq!(ours, parse(&theirs));
}

#[test]
fn its_tls_is_trusted_through_its_ca_and_by_no_other() {
    let simulator = shared();
    let (status, body) = front(simulator, "GET", "/version", "");
    assert_eq!(status, 200, "{body}");
    let dir = tempfile::tempdir().expect("a folder");
    let stranger = TestCa::generate(dir.path()).expect("another CA").connector().expect("a client");
    let refused = front_with(&stranger, simulator, "GET", "/version", "").expect_err("a certificate of another CA");
    assert!(format!("{refused:#}").contains("UnknownIssuer"), "{refused:#}");
    let pem = std::fs::read_to_string(simulator.ca_file()).expect("the CA file");
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
}

#[test]
fn every_nth_request_is_answered_429_with_retry_after_on_demand() {
    let dir = tempfile::tempdir().expect("a folder");
    let options = Options { updates: 20, rate_limit_every: Some(3), retry_after_seconds: 2, ..Options::default() };
    let simulator = ScanSimulator::start(dir.path(), options).expect("the simulator");
    let connector = simulator.ca().connector().expect("a client");
    let statuses: Vec<(u16, Option<String>)> = (0..6)
        .map(|_| {
            let (status, headers, _) = front_with(&connector, &simulator, "GET", "/version", "").expect("an answer");
            (status, headers.get("retry-after").map(|v| v.to_str().unwrap_or_default().to_owned()))
        })
        .collect();
    let two = Some("2".to_owned());
    assert_eq!(statuses, [(200, None), (200, None), (429, two.clone()), (200, None), (200, None), (429, two)]);
}

#[test]
fn a_tampered_update_differs_in_both_encodings_and_no_other_does() {
    let dir = tempfile::tempdir().expect("a folder");
    let simulator =
        ScanSimulator::start(dir.path(), Options { updates: 20, ..Options::default() }).expect("the simulator");
    for encoding in ["compact_json", "protobuf_json"] {
        let body = json!({"page_size": 20, "daml_value_encoding": encoding}).to_string();
        simulator.tamper(None);
        let honest = parse(&front(&simulator, "POST", "/v2/updates", &body).1);
        let id = ids(&honest)[3].to_owned();
        simulator.tamper(Some(id.clone()));
        let tampered = parse(&front(&simulator, "POST", "/v2/updates", &body).1);
        let (honest, tampered) =
            (honest["transactions"].as_array().unwrap(), tampered["transactions"].as_array().unwrap());
        let differing: Vec<&str> = honest
            .iter()
            .zip(tampered)
            .filter(|(a, b)| a != b)
            .map(|(a, _)| a["update_id"].as_str().unwrap())
            .collect();
        assert_eq!(differing, [id.as_str()], "{encoding}");
        let by_id = front(&simulator, "GET", &format!("/v2/updates/{id}?daml_value_encoding={encoding}"), "").1;
        let at = parse(&by_id)["effective_at"].as_str().unwrap().to_owned();
        assert_ne!(Some(at.as_str()), honest[3]["effective_at"].as_str(), "{encoding}");
    }
}
