//! The worker under `wrangler dev`, with local D1, R2 and KV
//! (`ledger_node_tests::wrangler`, which says how it is built and started), as a target
//! of the scenario suite. Between scenarios the node is emptied with `POST
//! /v0/admin/reset`.
//!
//! Besides the scenarios: the worker refuses to serve without its bucket or over a
//! database of another layout, and a read right after a bulk ingest on a busy machine
//! answers within a few seconds ([`a_read_after_a_bulk_ingest_is_not_held`]; the crate
//! docs of the worker say why it once did not).

use std::time::{Duration, Instant};

use ledger_node_tests::wrangler::{Launch, WranglerDev};

use super::scenario::{self, ADMIN_TOKEN, Outgoing, Received, Target, test_config};
use super::targets::HttpClient;

/// A running `wrangler dev`, with the test configuration, and its client.
pub struct WorkerTarget {
    dev: WranglerDev,
    client: HttpClient,
    port: u16,
}

impl WorkerTarget {
    /// Builds the worker, applies the D1 migrations to fresh local state and starts
    /// `wrangler dev`.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// [`WorkerTarget::start`], with `vars` set besides the test configuration.
    pub fn start_with(vars: &[(String, String)]) -> Self {
        Self::launch(Launch { vars: vars.to_vec(), ..Launch::default() }, |status| status == 200)
    }

    /// Starts `wrangler dev` from a `wrangler.toml` without its table `table` (such as
    /// `[[r2_buckets]]`), and waits for its first answer, whatever its status.
    pub fn start_without(table: &str) -> Self {
        Self::launch(Launch { without: Some(table.to_owned()), ..Launch::default() }, |_| true)
    }

    /// Starts `wrangler dev` over a D1 database into which the SQL `sql` was executed
    /// after the migrations, and waits for its first answer, whatever its status.
    pub fn start_over(sql: &str) -> Self {
        Self::launch(Launch { sql: Some(sql.to_owned()), ..Launch::default() }, |_| true)
    }

    /// [`WorkerTarget::start`], with wrangler writing the worker's `console.log` lines
    /// to its log too (the others write only warnings and errors).
    pub fn start_logging() -> Self {
        Self::launch(Launch { log_level: "log".into(), ..Launch::default() }, |status| status == 200)
    }

    /// Starts `launch` with the test configuration before its variables, and waits
    /// until `GET /version` answers a status `ready` takes.
    fn launch(mut launch: Launch, ready: impl Fn(u16) -> bool) -> Self {
        launch.vars = [test_config(), launch.vars].concat();
        let mut dev = launch.start();
        dev.wait_until(ready);
        let (client, port) = (HttpClient::new(dev.base()), dev.port);
        WorkerTarget { dev, client, port }
    }

    /// The client of the running worker, for tests that send requests concurrently.
    pub fn client(&self) -> &HttpClient {
        &self.client
    }

    fn log_text(&self) -> String {
        self.dev.log_text()
    }
}

impl Target for WorkerTarget {
    fn name(&self) -> &str {
        "worker under wrangler dev + D1"
    }

    fn reset(&mut self) {
        let reset = Outgoing {
            method: "POST".into(),
            target: "/v0/admin/reset".into(),
            headers: vec![("authorization".into(), format!("Bearer {ADMIN_TOKEN}"))],
            body: Vec::new(),
        };
        let received = self.client.send(&reset);
        assert_eq!(received.status, 200, "resetting the worker: {}", String::from_utf8_lossy(&received.body));
    }

    fn send(&mut self, outgoing: &Outgoing) -> Received {
        self.client.send(outgoing)
    }
}

/// Without its R2 bucket the worker serves nothing: every request, the probes included,
/// is a 503 naming the missing binding (it never falls back to keeping bodies in D1).
pub fn the_worker_refuses_to_serve_without_its_bucket() {
    let worker = WorkerTarget::start_without("[[r2_buckets]]");
    for target in ["/version", "/livez", "/v2/updates/some-id"] {
        let probe = Outgoing { method: "GET".into(), target: target.into(), headers: Vec::new(), body: Vec::new() };
        let answer = worker.client().send(&probe);
        let body = String::from_utf8_lossy(&answer.body);
        assert_eq!(answer.status, 503, "{target}: {body}");
        assert!(body.contains("BODIES"), "{target}: the error names the binding: {body}");
    }
}

/// A D1 database of another layout version, holding the node's data without one, or
/// ingested under other names than the worker's, is refused: every request, the probes
/// and admin ingest included, is a 503 naming both versions (or both names) and what to
/// do, and the database is left as it was.
pub fn the_worker_refuses_a_database_of_another_layout() {
    use ledger_node_core::storage::keys::{GENERATION, Key};
    use ledger_node_core::storage::layout;
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let generation = Key::new(GENERATION).i64(1).into_bytes();
    let version_only = format!("this build reads layout version {} only", layout::VERSION);
    let cases = [
        (
            format!("INSERT INTO kv (k, v) VALUES (x'{}', x'{}')", hex(layout::KEY), hex(b"999")),
            vec!["layout version 999", version_only.as_str(), "ingest the history again into a new store"],
        ),
        (
            format!("INSERT INTO kv (k, v) VALUES (x'{}', x'')", hex(&generation)),
            vec!["without a layout version", version_only.as_str(), "ingest the history again into a new store"],
        ),
        (
            format!(
                "INSERT INTO kv (k, v) VALUES (x'{}', x'{}'), (x'{}', x'{}')",
                hex(layout::KEY),
                hex(layout::VERSION.to_string().as_bytes()),
                hex(layout::NAMES_KEY),
                hex(b"root=Splice coin=Amulet")
            ),
            vec![
                "ingested under the names root=Splice coin=Amulet",
                "configured with root=Platform coin=Coin",
                "ingest the history again into a new store",
            ],
        ),
    ];
    for (sql, fragments) in cases {
        let worker = WorkerTarget::start_over(&sql);
        let ingest = Outgoing {
            method: "POST".into(),
            target: "/v0/admin/ingest".into(),
            headers: vec![("authorization".into(), format!("Bearer {ADMIN_TOKEN}"))],
            body: b"{\"wallet_user\":{\"user_id\":\"u\",\"party_id\":\"p\"}}\n".to_vec(),
        };
        let probes = ["/version", "/livez", "/readyz"].map(|target| Outgoing {
            method: "GET".into(),
            target: target.into(),
            headers: Vec::new(),
            body: Vec::new(),
        });
        // Twice: the refusal is the isolate's for its life.
        for outgoing in probes.iter().chain([&ingest]).chain(probes.iter()) {
            let answer = worker.client().send(outgoing);
            let body = String::from_utf8_lossy(&answer.body);
            assert_eq!(answer.status, 503, "{}: {body}", outgoing.target);
            let error = serde_json::from_slice::<serde_json::Value>(&answer.body).expect("a JSON body")["error"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_default();
            assert!(fragments.iter().all(|f| error.contains(f)), "{}: {body}", outgoing.target);
        }
    }
}

/// Updates in the history a read follows: a small one first, then two small batches,
/// then the rest in one batch (the shape of the history that showed the stall).
const BULK_HISTORY_UPDATES: u64 = 760;
/// Updates in the first, small, batch.
const BULK_FIRST_UPDATES: usize = 80;
/// How long a read after a bulk ingest may take: it reads one body, so anything near
/// this is a read held by something else.
const READ_BOUND: Duration = Duration::from_secs(5);

/// Busy loops on every core until `stop` is set or `deadline` passes: the bulk ingest
/// runs on a busy machine, where a read after it was held until some other event
/// reached the runtime (about 30 s, or for good).
fn keep_the_machine_busy(
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
    deadline: Instant,
) -> Vec<std::thread::JoinHandle<()>> {
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
    (0..cores * 2)
        .map(|_| {
            let stop = std::sync::Arc::clone(stop);
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < deadline {
                    for _ in 0..100_000 {
                        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                    }
                }
            })
        })
        .collect()
}

/// A read right after a bulk ingest answers within [`READ_BOUND`], on a busy machine,
/// twice (the node reset in between).
pub fn a_read_after_a_bulk_ingest_is_not_held() {
    let mut worker = WorkerTarget::start();
    let mut history = Vec::new();
    ledger_node::demo::write(&ledger_node::demo::Options::new(BULK_HISTORY_UPDATES, 50), &mut history)
        .expect("a demo history");
    let lines: Vec<&[u8]> = history.split(|b| *b == b'\n').filter(|line| !line.is_empty()).collect();
    let update_id = |line: &[u8]| -> Option<String> {
        let record: serde_json::Value = serde_json::from_slice(line).ok()?;
        Some(record.get("update")?.get("update_id")?.as_str()?.to_owned())
    };
    let updates: Vec<usize> = (0..lines.len()).filter(|&at| update_id(lines[at]).is_some()).collect();
    let (first_end, small_end) = (updates[BULK_FIRST_UPDATES], updates[BULK_FIRST_UPDATES + 6]);
    let batch = |range: std::ops::Range<usize>| -> Vec<u8> {
        lines[range].iter().flat_map(|line| line.iter().copied().chain([b'\n'])).collect()
    };
    let batches = [
        batch(0..first_end),
        batch(first_end..first_end + 3),
        batch(first_end + 3..small_end),
        batch(small_end..lines.len()),
    ];
    let read_id = update_id(lines[small_end + 20]).expect("an update in the bulk batch");
    let reader = ureq::Agent::new_with_config(
        ureq::Agent::config_builder().http_status_as_error(false).timeout_global(Some(READ_BOUND * 2)).build(),
    );
    let url = format!("http://127.0.0.1:{}/v2/updates/{read_id}", worker.port);

    for round in 1..=2 {
        scenario::Target::reset(&mut worker);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let busy = keep_the_machine_busy(&stop, Instant::now() + Duration::from_secs(40));
        for (at, body) in batches.iter().enumerate() {
            let ingest = Outgoing {
                method: "POST".into(),
                target: "/v0/admin/ingest".into(),
                headers: vec![("authorization".into(), format!("Bearer {ADMIN_TOKEN}"))],
                body: body.clone(),
            };
            let answer = worker.client().send(&ingest);
            assert_eq!(answer.status, 200, "round {round}, batch {at}: {}", String::from_utf8_lossy(&answer.body));
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        busy.into_iter().for_each(|thread| thread.join().expect("a busy loop"));

        let started = Instant::now();
        let status = reader.get(&url).call().map(|answer| answer.status().as_u16());
        let took = started.elapsed();
        assert!(
            matches!(status, Ok(200)) && took < READ_BOUND,
            "round {round}: the read after the bulk ingest answered {status:?} after {took:?} (bound {READ_BOUND:?})"
        );
    }
}

/// The worker's log lines: every line of wrangler's output that holds a JSON object
/// with a `message` (wrangler prefixes an error line with a marker of its own), parsed.
fn json_log_lines(log: &str) -> Vec<serde_json::Value> {
    log.lines()
        .filter(|line| line.contains("\"message\":"))
        .map(|line| {
            let object = line.find('{').and_then(|at| line.get(at..)).unwrap_or(line);
            match serde_json::from_str(object.trim_end()) {
                Ok(event @ serde_json::Value::Object(_)) => event,
                _ => panic!("a log line of the worker is not a JSON object: {line}"),
            }
        })
        .collect()
}

/// Every request is one JSON log line with its id (the one `x-request-id` carries), its
/// method, route template, status and duration; every run of the cron trigger is one
/// JSON line with what the scheduled jobs did; no line carries the admin token or a
/// wallet token.
pub fn the_worker_logs_requests_and_scheduled_runs_as_json_lines_without_tokens() {
    use super::wallet_concurrency::{ALICE, request, submission};
    let worker = WorkerTarget::start_logging();
    let client = worker.client();
    super::wallet_concurrency::set_up(client);
    let unknown_id = "1220feedfacefeedfacefeedface";
    let sends = [
        (request("GET", "/version", ALICE, None), "/version", 200),
        (request("GET", &format!("/v2/updates/{unknown_id}"), ALICE, None), "/v2/updates/{update_id}", 404),
        (
            request("GET", &format!("/api/scan/v2/updates/{unknown_id}"), ALICE, None),
            "/api/scan/v2/updates/{update_id}",
            404,
        ),
        (request("POST", "/version", ALICE, None), "/version", 405),
        (request("GET", &format!("/no/such/{unknown_id}"), ALICE, None), "other", 404),
        (request("POST", "/v0/admin/tick", ADMIN_TOKEN, None), "/v0/admin/tick", 200),
        (request("POST", "/v0/admin/tick", "not-the-admin-token", None), "/v0/admin/tick", 401),
        (
            request(
                "POST",
                "/v0/wallet/buy-traffic-requests",
                ALICE,
                Some(&submission("logged", 4_070_908_800_000_000)),
            ),
            "/v0/wallet/buy-traffic-requests",
            200,
        ),
    ];
    let mut sent = Vec::new();
    for (outgoing, route, status) in &sends {
        let received = client.send(outgoing);
        assert_eq!(
            received.status,
            *status,
            "{} {}: {}",
            outgoing.method,
            outgoing.target,
            String::from_utf8_lossy(&received.body)
        );
        let id = received
            .headers
            .iter()
            .find(|(name, _)| name == "x-request-id")
            .map(|(_, value)| value.clone())
            .unwrap_or_else(|| panic!("{} {} has no x-request-id", outgoing.method, outgoing.target));
        sent.push((id, outgoing.method.clone(), *route, *status));
    }
    let trigger = Outgoing {
        method: "GET".into(),
        target: "/__scheduled?cron=*+*+*+*+*".into(),
        headers: Vec::new(),
        body: Vec::new(),
    };
    assert_eq!(client.send(&trigger).status, 200, "firing the cron trigger");

    let started = Instant::now();
    let (log, events) = loop {
        let log = worker.log_text();
        let events = json_log_lines(&log);
        let logged = |id: &str| events.iter().any(|e| e["request_id"] == id);
        let ran = events.iter().any(|e| e["message"] == "scheduled run");
        if (ran && sent.iter().all(|(id, ..)| logged(id))) || started.elapsed() > Duration::from_secs(30) {
            break (log, events);
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    for event in &events {
        assert!(event["level"].is_string() && event["message"].is_string(), "{event}");
    }
    for (id, method, route, status) in &sent {
        let event = events
            .iter()
            .find(|e| e["message"] == "request" && e["request_id"] == id.as_str())
            .unwrap_or_else(|| panic!("no log line of {method} {route} (id {id}):\n{log}"));
        assert_eq!(event["method"], method.as_str(), "{event}");
        assert_eq!(event["route"], *route, "{event}");
        assert_eq!(event["status"], *status, "{event}");
        assert!(event["duration_ms"].as_f64().is_some_and(|ms| ms >= 0.0), "{event}");
        assert_eq!(event["level"], "INFO", "{event}");
    }
    let ids: std::collections::BTreeSet<&str> = events.iter().filter_map(|e| e["request_id"].as_str()).collect();
    assert_eq!(ids.len(), events.iter().filter(|e| e["message"] == "request").count(), "request ids repeat:\n{log}");
    let run =
        events.iter().find(|e| e["message"] == "scheduled run").unwrap_or_else(|| panic!("no scheduled run:\n{log}"));
    assert_eq!(
        (&run["expired_requests"], &run["pending_requests"], &run["skipped"], &run["following"]),
        (&serde_json::json!(0), &serde_json::json!(1), &serde_json::json!([]), &serde_json::json!(false)),
        "{run}"
    );
    // The path's id is in wrangler's own lines, never in the worker's.
    assert!(events.iter().all(|e| !e.to_string().contains(unknown_id)), "{log}");
    for secret in [ADMIN_TOKEN, ALICE] {
        assert!(!log.contains(secret), "the worker's log carries a token:\n{log}");
    }
}
