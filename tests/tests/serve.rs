//! `ledger-node serve`, the binary, as an operator runs it.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(db: &std::path::Path, env: &[(&str, &str)]) -> Server {
    serve_with(db, env, &[])
}

/// Starts `ledger-node serve` on a port the kernel picks (`--listen 127.0.0.1:0`) and
/// learns the address from the line it prints once it listens, so that tests running
/// side by side can never race for a port.
fn serve_with(db: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ledger-node"));
    command.args(["serve", "--listen", "127.0.0.1:0", "--db"]).arg(db).args(args);
    for name in ledger_node_core::config::NAMES {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting ledger-node");
    let stderr = child.stderr.take().expect("a piped stderr");
    let (address, listening) = std::sync::mpsc::channel();
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let log_writer = std::sync::Arc::clone(&log);
    // Reads stderr to its end, so the server never blocks on a full pipe.
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(base) = line.strip_prefix("ledger-node: serving on ") {
                let _ = address.send(base.to_owned());
            }
            if let Ok(mut log) = log_writer.lock() {
                log.push_str(&line);
                log.push('\n');
            }
        }
    });
    match listening.recv_timeout(Duration::from_secs(60)) {
        Ok(base) => Server { child, base },
        Err(_) => {
            let status = child.try_wait().ok().flatten();
            let _ = child.kill();
            let log = log.lock().map(|l| l.clone()).unwrap_or_default();
            panic!("ledger-node serve did not start listening (exit status {status:?}): {log}");
        }
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::new_with_config(ureq::Agent::config_builder().http_status_as_error(false).build())
}

#[test]
fn serve_answers_version_and_admin_requests_over_http() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = serve(&dir.path().join("node.sqlite"), &[("LEDGER_NODE_ADMIN_TOKEN", "secret")]);
    let mut response = agent().get(format!("{}/version", server.base)).call().expect("GET /version");
    assert_eq!(response.status(), 200);
    let body: serde_json::Value =
        serde_json::from_slice(&response.body_mut().read_to_vec().expect("a body")).expect("JSON");
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
    let commit_ts = body["commit_ts"].as_str().expect("commit_ts is a string");
    assert!(ledger_node_core::time::Timestamp::parse(commit_ts).is_ok(), "{commit_ts}");

    let ingest = format!("{}/v0/admin/ingest", server.base);
    assert_eq!(agent().post(&ingest).send("").expect("POST").status(), 401);
    let ok = agent().post(&ingest).header("authorization", "Bearer secret").send("\n").expect("POST");
    assert_eq!(ok.status(), 200);
    assert!(dir.path().join("node.sqlite").exists(), "the SQLite file is created");
}

#[test]
fn admin_endpoints_answer_403_when_no_admin_token_is_configured() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = serve(&dir.path().join("node.sqlite"), &[]);
    let mut response = agent()
        .post(format!("{}/v0/admin/ingest", server.base))
        .header("authorization", "Bearer x")
        .send("")
        .expect("POST");
    assert_eq!(response.status(), 403);
    let body = response.body_mut().read_to_string().expect("a body");
    assert!(body.contains("LEDGER_NODE_ADMIN_TOKEN is not set"), "{body}");
}

#[test]
fn a_bad_configuration_value_stops_the_node_naming_the_variable() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let output = Command::new(env!("CARGO_BIN_EXE_ledger-node"))
        .args(["serve", "--listen", "127.0.0.1:0", "--db"])
        .arg(dir.path().join("node.sqlite"))
        .env("LEDGER_NODE_SNAPSHOT_PERIOD_HOURS", "often")
        .output()
        .expect("running ledger-node");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("LEDGER_NODE_SNAPSHOT_PERIOD_HOURS"), "{stderr}");
}

#[test]
fn the_timer_of_serve_expires_buy_traffic_requests_past_their_expiry() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let env = [("LEDGER_NODE_ADMIN_TOKEN", "secret"), ("LEDGER_NODE_JWT_HS256_SECRET", "test-hs256-secret")];
    let server = serve_with(&dir.path().join("node.sqlite"), &env, &["--tick-seconds", "1"]);
    let records = concat!(
        r#"{"wallet_user":{"user_id":"alice","party_id":"alice::1220"}}"#,
        "\n",
        r#"{"topology":{"synchronizer_id":"sync::1","party_id":"validator::1","participant_ids":["PAR::v::1"]}}"#,
        "\n"
    );
    let ingest = agent()
        .post(format!("{}/v0/admin/ingest", server.base))
        .header("authorization", "Bearer secret")
        .send(records)
        .expect("POST /v0/admin/ingest");
    assert_eq!(ingest.status(), 200);
    // HS256 (test-hs256-secret), sub alice, exp 2099.
    let token = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSIsImV4cCI6NDA3MDkwODgwMH0.ibqqgiITmv5mzwHPIk8p9RbVCCl4x-kXp_nGdRy0F5Q";
    let body = serde_json::json!({
        "receiving_validator_party_id": "validator::1", "domain_id": "sync::1", "traffic_amount": 10,
        "tracking_id": "t-1", "expires_at": 1_704_067_200_000_000_i64,
    });
    let created = agent()
        .post(format!("{}/v0/wallet/buy-traffic-requests", server.base))
        .header("authorization", &format!("Bearer {token}"))
        .send(body.to_string())
        .expect("POST a buy-traffic request");
    assert_eq!(created.status(), 200);
    let started = Instant::now();
    loop {
        let mut status = agent()
            .post(format!("{}/v0/wallet/buy-traffic-requests/t-1/status", server.base))
            .header("authorization", &format!("Bearer {token}"))
            .send("")
            .expect("POST status");
        let status: serde_json::Value =
            serde_json::from_slice(&status.body_mut().read_to_vec().expect("a body")).expect("JSON");
        if status["status"] == "failed" {
            assert_eq!(status, serde_json::json!({"status": "failed", "failure_reason": "expired"}));
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "the timer did not expire the request: {status}");
        std::thread::sleep(Duration::from_millis(200));
    }
}
