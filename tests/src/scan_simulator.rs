//! A simulator of the network's Scan, for the follower's tests: a real node serving a
//! demo history, behind an HTTPS front that answers the way a Scan node of the network
//! does.
//!
//! The node is the native one (`ledger_node::host::Node` running the component, served
//! by `ledger_node::server` on a loopback port of its own) fed the demo history
//! (`ledger_node::demo`). The front ([`ScanSimulator::start`]) listens on another
//! loopback port with a certificate signed by a CA made at start ([`ScanSimulator::ca_file`]),
//! and passes every request on to the node, except that:
//!
//! - **The update stream has the network's form.** On the history endpoints
//!   (`/v2/updates`, `/v1/updates`, their by-id reads, `/v0/backfilling/import-updates`
//!   and `/v0/backfilling/updates-before`), no `created_event_blob` is written, and
//!   values in `protobuf_json` carry no record labels. The network keeps values without
//!   labels (`RemoveFieldLabels` in `ScanHttpEncodings.scala`) and prints them with
//!   protobuf's canonical JSON printer (`ValueJsonCodecProtobuf.scala`), which leaves
//!   out every field at its default: a record field is `{"value": V}` (no `label`), and
//!   an empty `fields`, `elements` or `entries`, or a text-map entry's empty `key`, is
//!   absent. The created event the network writes has no blob field
//!   (`ScanHttpEncodings.javaToHttpCreatedEvent`). The backfilling endpoints are always
//!   `protobuf_json`; the others in the encoding their request names (`compact_json`
//!   when it names none).
//! - **Contract reads keep their blobs:** `/v0/{coin}-rules`, the rounds, and the
//!   registry's choice contexts are passed on as the node answers them.
//! - **No admin endpoints:** every `/v0/admin/...` path is `404` (with the text of
//!   pekko-http's default rejection), except the two public reads of the network,
//!   `/v0/admin/sv/voterequests` and `/v0/admin/validator/licenses`. The export
//!   endpoints are among the 404s.
//! - **Rate limits on demand:** with [`Options::rate_limit_every`] = N, every Nth
//!   request is answered `429` with `Retry-After: ` [`Options::retry_after_seconds`].
//! - **One tampered update on demand:** with [`Options::tamper`], the update of that id
//!   has its `effective_at` one second later, in every encoding and on every endpoint
//!   that shows it (as a Scan node that disagrees with the others would).
//!
//! Paths are the node's (`/v2/updates`) or under the network's base (`/api/scan/v2/updates`).
//! The network's forms follow `hyperledger-labs/splice`:
//! `apps/scan/src/main/openapi/scan.yaml`,
//! `apps/scan/src/main/scala/org/lfdecentralizedtrust/splice/scan/admin/http/ScanHttpEncodings.scala`
//! and `apps/common/src/main/scala/org/lfdecentralizedtrust/splice/util/ValueJsonCodecProtobuf.scala`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::TokioIo;
use serde_json::Value;

use crate::tls::{self, Answer, Received, TestCa};

/// The admin token of the simulated node (the front never passes it on: admin paths
/// end at the front).
pub const ADMIN_TOKEN: &str = "simulator-admin";

/// What the simulator serves and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// Updates of the demo history.
    pub updates: u64,
    /// The demo history's seed.
    pub seed: u64,
    /// Every Nth request (counting from 1) is answered 429.
    pub rate_limit_every: Option<u64>,
    /// The `Retry-After` of those 429s, in seconds.
    pub retry_after_seconds: u64,
    /// The id of an update to show tampered from the start ([`ScanSimulator::tamper`]
    /// changes it).
    pub tamper: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options { updates: 200, seed: 1, rate_limit_every: None, retry_after_seconds: 1, tamper: None }
    }
}

/// A running simulator; it stops when dropped.
#[derive(Debug)]
pub struct ScanSimulator {
    address: SocketAddr,
    node_address: SocketAddr,
    ca: TestCa,
    requests: Arc<AtomicU64>,
    tampered: Arc<Mutex<Option<String>>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for ScanSimulator {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl ScanSimulator {
    /// Generates the history, ingests it into a node in memory, and starts the node and
    /// the HTTPS front on loopback ports; the CA certificate is written to `dir/ca.pem`.
    pub fn start(dir: &Path, options: Options) -> anyhow::Result<ScanSimulator> {
        use ledger_node::backend::MemoryBackend;
        use ledger_node::host::{self, Node};
        let config = vec![(ledger_node_core::model::config::ADMIN_TOKEN.to_owned(), ADMIN_TOKEN.to_owned())];
        let node =
            Node::new(&host::engine()?, Arc::new(MemoryBackend::new()), host::Options { config, fixed_clock: None })?;
        let mut history = Vec::new();
        ledger_node::demo::write(&ledger_node::demo::Options::new(options.updates, options.seed), &mut history)?;
        ledger_node::ingest::run(&node, ADMIN_TOKEN, &history[..], &mut ledger_node::ingest::Quiet)?;
        let ca = TestCa::generate(dir)?;
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
        let (node_listener, node_address) =
            runtime.block_on(ledger_node::server::bind(SocketAddr::from(([127, 0, 0, 1], 0))))?;
        runtime.spawn(ledger_node::server::serve(
            node_listener,
            Arc::new(node),
            ledger_node::server::Limits::default(),
            std::future::pending(),
        ));
        let (listener, address) = runtime.block_on(tls::bind())?;
        let requests = Arc::new(AtomicU64::new(0));
        let tampered = Arc::new(Mutex::new(options.tamper.clone()));
        let front = Front {
            node: node_address,
            options: Arc::new(options),
            requests: Arc::clone(&requests),
            tampered: Arc::clone(&tampered),
        };
        runtime.spawn(tls::serve(listener, ca.acceptor(), move |received| front.clone().answer(received)));
        Ok(ScanSimulator { address, node_address, ca, requests, tampered, runtime: Some(runtime) })
    }

    /// The front's root URL, `https://localhost:PORT`.
    pub fn url(&self) -> String {
        format!("https://localhost:{}", self.address.port())
    }

    /// The front's address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The node behind the front, over plain HTTP (`http://127.0.0.1:PORT`): what the
    /// node itself answers.
    pub fn node_url(&self) -> String {
        format!("http://{}", self.node_address)
    }

    /// The PEM file of the CA that signed the front's certificate.
    pub fn ca_file(&self) -> &Path {
        self.ca.ca_file()
    }

    /// The CA.
    pub fn ca(&self) -> &TestCa {
        &self.ca
    }

    /// Requests the front has received.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// A path of the CA file, owned.
    pub fn ca_path(&self) -> PathBuf {
        self.ca.ca_file().to_owned()
    }

    /// From now on, shows the update `id` tampered (see the module docs); `None`: none.
    pub fn tamper(&self, id: Option<String>) {
        *self.tampered.lock().unwrap_or_else(PoisonError::into_inner) = id;
    }
}

/// The text of pekko-http's default answer to a path no route matches.
pub const NOT_FOUND: &str = "The requested resource could not be found.";

/// The admin reads the network's Scan serves to anyone.
const PUBLIC_ADMIN_READS: [&str; 2] = ["/v0/admin/sv/voterequests", "/v0/admin/validator/licenses"];

/// The front: what it passes on, refuses and rewrites.
#[derive(Debug, Clone)]
struct Front {
    node: SocketAddr,
    options: Arc<Options>,
    requests: Arc<AtomicU64>,
    tampered: Arc<Mutex<Option<String>>>,
}

/// How a history endpoint's answer is rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum History {
    /// Values in `compact_json`: blobs dropped.
    Compact,
    /// Values in `protobuf_json`: blobs and record labels dropped, defaults omitted.
    Protobuf,
}

impl Front {
    async fn answer(self, received: Received) -> Answer {
        let n = self.requests.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(every) = self.options.rate_limit_every
            && every > 0
            && n.is_multiple_of(every)
        {
            let seconds = self.options.retry_after_seconds.to_string();
            return tls::answer(429, &[("retry-after", &seconds), ("content-type", "text/plain")], "Too Many Requests");
        }
        let path = received.uri.path();
        let route = path.strip_prefix("/api/scan").unwrap_or(path);
        if route.starts_with("/v0/admin/") && !PUBLIC_ADMIN_READS.contains(&route) {
            return tls::answer(404, &[("content-type", "text/plain; charset=UTF-8")], NOT_FOUND);
        }
        let history = history_form(route, &received);
        match self.pass_on(&received).await {
            Ok((status, content_type, body)) => {
                let body = match history {
                    Some(form) if status == 200 => self.rewrite(&body, form).unwrap_or(body),
                    _ => body,
                };
                tls::answer(status, &[("content-type", &content_type)], body)
            }
            Err(e) => tls::answer(502, &[("content-type", "text/plain")], format!("the node behind the front: {e}")),
        }
    }

    /// Sends `received` to the node: its status, content type and body.
    async fn pass_on(&self, received: &Received) -> anyhow::Result<(u16, String, Bytes)> {
        let stream = tokio::net::TcpStream::connect(self.node).await?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        let path_and_query = received.uri.path_and_query().map_or("/", |p| p.as_str());
        let mut request = hyper::Request::builder().method(received.method.clone()).uri(path_and_query);
        for (name, value) in &received.headers {
            if name != hyper::header::AUTHORIZATION {
                request = request.header(name, value);
            }
        }
        let answer = sender.send_request(request.body(Full::new(received.body.clone()))?).await?;
        let status = answer.status().as_u16();
        let content_type = answer
            .headers()
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("application/json")
            .to_owned();
        let body = answer.into_body().collect().await?.to_bytes();
        Ok((status, content_type, body))
    }

    /// The node's answer `body` of a history endpoint, in the network's form.
    fn rewrite(&self, body: &[u8], form: History) -> Option<Bytes> {
        let mut json: Value = serde_json::from_slice(body).ok()?;
        network_form(&mut json, form);
        let tampered = self.tampered.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(id) = tampered {
            tamper(&mut json, &id);
        }
        Some(Bytes::from(serde_json::to_vec(&json).ok()?))
    }
}

/// Whether `route` is a history endpoint, and in which encoding its request asks.
fn history_form(route: &str, received: &Received) -> Option<History> {
    let asked = || -> History {
        let from_body = serde_json::from_slice::<Value>(&received.body).ok().and_then(|body| {
            ["daml_value_encoding", "ledger_value_encoding"]
                .iter()
                .find_map(|name| body.get(name).and_then(Value::as_str).map(str::to_owned))
        });
        let from_query = received.uri.query().and_then(|query| {
            query.split('&').find_map(|pair| {
                let (name, value) = pair.split_once('=')?;
                matches!(name, "daml_value_encoding" | "ledger_value_encoding").then(|| value.to_owned())
            })
        });
        match from_body.or(from_query).as_deref() {
            Some("protobuf_json") => History::Protobuf,
            _ => History::Compact,
        }
    };
    match route {
        "/v0/backfilling/import-updates" | "/v0/backfilling/updates-before" => Some(History::Protobuf),
        "/v2/updates" | "/v1/updates" => Some(asked()),
        _ if route.starts_with("/v2/updates/") || route.starts_with("/v1/updates/") => Some(asked()),
        _ => None,
    }
}

/// Rewrites a history answer (a page or one update) in place: no blob anywhere, and in
/// `protobuf_json` the values of every event as the network prints them.
fn network_form(json: &mut Value, form: History) {
    match json {
        Value::Object(object) => {
            object.remove("created_event_blob");
            for (key, value) in object.iter_mut() {
                let is_value = matches!(key.as_str(), "create_arguments" | "choice_argument" | "exercise_result");
                if is_value && form == History::Protobuf {
                    protobuf_without_defaults(value);
                } else if !is_value {
                    network_form(value, form);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| network_form(item, form)),
        _ => {}
    }
}

/// A `protobuf_json` value as protobuf's canonical printer writes a value stored
/// without labels: no `label`, no empty `fields`, `elements` or `entries`, no empty
/// text-map `key`.
fn protobuf_without_defaults(value: &mut Value) {
    let Some(object) = value.as_object_mut() else { return };
    for (kind, inner) in object.iter_mut() {
        let Some(inner) = inner.as_object_mut() else { continue };
        let repeated = match kind.as_str() {
            "record" => "fields",
            "list" => "elements",
            "textMap" | "genMap" => "entries",
            "variant" | "optional" => {
                if let Some(v) = inner.get_mut("value") {
                    protobuf_without_defaults(v);
                }
                continue;
            }
            _ => continue,
        };
        let empty = inner.get(repeated).and_then(Value::as_array).is_some_and(Vec::is_empty);
        if empty {
            inner.remove(repeated);
            continue;
        }
        let Some(items) = inner.get_mut(repeated).and_then(Value::as_array_mut) else { continue };
        for item in items {
            if kind == "list" {
                protobuf_without_defaults(item);
                continue;
            }
            let Some(entry) = item.as_object_mut() else { continue };
            if kind == "record" {
                entry.remove("label");
            }
            if kind == "textMap" && entry.get("key").and_then(Value::as_str) == Some("") {
                entry.remove("key");
            }
            if kind == "genMap"
                && let Some(key) = entry.get_mut("key")
            {
                protobuf_without_defaults(key);
            }
            if let Some(v) = entry.get_mut("value") {
                protobuf_without_defaults(v);
            }
        }
    }
}

/// Moves the `effective_at` of the update `id` one second on, wherever in `json` it is.
fn tamper(json: &mut Value, id: &str) {
    match json {
        Value::Object(object) => {
            if object.get("update_id").and_then(Value::as_str) == Some(id)
                && let Some(Value::String(at)) = object.get_mut("effective_at")
                && let Some(later) = one_second_later(at)
            {
                *at = later;
                return;
            }
            object.values_mut().for_each(|v| tamper(v, id));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| tamper(v, id)),
        _ => {}
    }
}

/// `YYYY-MM-DDTHH:MM:SS.ffffffZ` one second later.
fn one_second_later(at: &str) -> Option<String> {
    let time = ledger_node_core::model::time::Timestamp::parse(at).ok()?;
    let later = ledger_node_core::model::time::Timestamp::from_micros(time.micros() + 1_000_000).ok()?;
    Some(later.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn protobuf_values_lose_their_labels_and_their_empty_defaults() {
        let mut value = json!({"record": {"fields": [
            {"label": "owner", "value": {"party": "p"}},
            {"label": "tags", "value": {"list": {"elements": []}}},
            {"label": "inner", "value": {"variant": {"constructor": "C", "value": {"record": {"fields": []}}}}},
            {"label": "meta", "value": {"textMap": {"entries": [{"key": "", "value": {"text": "x"}}]}}},
            {"label": "some", "value": {"optional": {"value": {"record": {"fields": [{"label": "a", "value": {"int64": "0"}}]}}}}}
        ]}});
        protobuf_without_defaults(&mut value);
        assert_eq!(
            value,
            json!({"record": {"fields": [
                {"value": {"party": "p"}},
                {"value": {"list": {}}},
                {"value": {"variant": {"constructor": "C", "value": {"record": {}}}}},
                {"value": {"textMap": {"entries": [{"value": {"text": "x"}}]}}},
                {"value": {"optional": {"value": {"record": {"fields": [{"value": {"int64": "0"}}]}}}}}
            ]}})
        );
    }
}
