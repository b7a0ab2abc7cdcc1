//! The scenario format: request in, expected status and body out.
//!
//! Scenario files live in `tests/scenarios/*.json`:
//!
//! ```json
//! { "scenarios": [ { "name": "sentence_naming_the_behaviour",
//!     "steps": [ { "request": { "method": "GET", "path": "/version" },
//!                  "expect": { "status": 200, "body": { "version": "$version", "commit_ts": "$timestamp" } } } ] } ] }
//! ```
//!
//! A request has `method`, `path` (with any query string), optional `headers` (an
//! object), `auth` (`"admin"` sends the test admin token, `{"bearer": "..."}` any
//! token) and at most one body: `json` (a value, sent as JSON), `ndjson` (an array of
//! records, one per line), `text` (sent verbatim) or `filler_bytes` (that many newline
//! bytes, for size limits). An expectation has `status`, optionally `body` (a matcher)
//! and `headers` (an object of header values that must be present).
//!
//! Body matchers are JSON compared exactly (objects must have exactly the listed keys),
//! except these strings: `"$any"` (any value), `"$timestamp"` (an RFC 3339 UTC
//! timestamp with six fractional digits), `"$version"` (the crate version),
//! `"$contains:TEXT"` (a string containing TEXT) and `"$capture:NAME"` (any string,
//! remembered as NAME; captured again, it must be the same string). Later steps of the
//! scenario may use `{{NAME}}` in their path, header values and bodies, which is
//! replaced by the captured text: a step can act on an id the node made up, such as a
//! request contract id.
//!
//! Every scenario starts from an empty node configured with [`test_config`]. Besides
//! its expectation, every answer must be one the node's OpenAPI document declares
//! ([`openapi::judge`]): its status for the operation, and a body of its schema.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::openapi;

/// The admin token every host is configured with in tests.
pub const ADMIN_TOKEN: &str = "test-admin-token";

/// The configuration every host runs the scenarios with.
pub fn test_config() -> Vec<(String, String)> {
    [
        ("LEDGER_NODE_ADMIN_TOKEN", ADMIN_TOKEN),
        ("LEDGER_NODE_ALLOW_RESET", "true"),
        ("LEDGER_NODE_JWT_HS256_SECRET", "test-hs256-secret"),
        ("LEDGER_NODE_SNAPSHOT_PERIOD_HOURS", "3"),
        // The scenarios' tokens expire in 2099, against a clock fixed in 2024.
        ("LEDGER_NODE_JWT_MAX_TTL_HOURS", "1000000"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

/// A file of scenarios.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// The scenarios, run in order, each on an empty node.
    pub scenarios: Vec<Scenario>,
}

/// One scenario: steps run in order against one node.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// What the scenario shows, as a sentence in snake case.
    pub name: String,
    /// The steps.
    pub steps: Vec<Step>,
}

/// A request and what must come back.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The request.
    pub request: RequestSpec,
    /// The expected response.
    pub expect: Expect,
}

/// A request, as written in a scenario.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestSpec {
    /// The method.
    pub method: String,
    /// The path, with any query string.
    pub path: String,
    /// Extra headers.
    #[serde(default)]
    pub headers: serde_json::Map<String, Value>,
    /// Credentials to send.
    #[serde(default)]
    pub auth: Option<Auth>,
    /// A JSON body.
    #[serde(default)]
    pub json: Option<Value>,
    /// An NDJSON body, one record per element.
    #[serde(default)]
    pub ndjson: Option<Vec<Value>>,
    /// A verbatim body.
    #[serde(default)]
    pub text: Option<String>,
    /// A body of this many newline bytes.
    #[serde(default)]
    pub filler_bytes: Option<usize>,
}

/// Credentials of a scenario request.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Auth {
    /// `"admin"`: the test admin token.
    Named(String),
    /// `{"bearer": "..."}`
    Bearer {
        /// The token.
        bearer: String,
    },
}

/// The expected response.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The status.
    pub status: u16,
    /// A matcher for the JSON body.
    #[serde(default)]
    pub body: Option<Value>,
    /// Headers that must be present with these values.
    #[serde(default)]
    pub headers: serde_json::Map<String, Value>,
}

/// A request ready to send.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The method.
    pub method: String,
    /// The path and query.
    pub target: String,
    /// Headers.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// A response as received.
#[derive(Debug, Clone)]
pub struct Received {
    /// The status.
    pub status: u16,
    /// Headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// Something that answers scenario requests: a host under test.
pub trait Target {
    /// The host's name, for messages.
    fn name(&self) -> &str;
    /// Makes the node empty again.
    fn reset(&mut self);
    /// Sends one request.
    fn send(&mut self, request: &Outgoing) -> Received;
}

impl RequestSpec {
    /// The request as it goes on the wire.
    pub fn outgoing(&self) -> Outgoing {
        let mut headers: Vec<(String, String)> = self
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
            .collect();
        match &self.auth {
            Some(Auth::Named(name)) if name == "admin" => {
                headers.push(("authorization".into(), format!("Bearer {ADMIN_TOKEN}")))
            }
            Some(Auth::Named(other)) => {
                panic!("unknown auth {other:?}; use \"admin\" or {{\"bearer\": ...}}")
            }
            Some(Auth::Bearer { bearer }) => headers.push(("authorization".into(), format!("Bearer {bearer}"))),
            None => {}
        }
        let bodies = [self.json.is_some(), self.ndjson.is_some(), self.text.is_some(), self.filler_bytes.is_some()];
        assert!(bodies.iter().filter(|b| **b).count() <= 1, "{} {}: at most one body", self.method, self.path);
        let body = if let Some(json) = &self.json {
            headers.push(("content-type".into(), "application/json".into()));
            serde_json::to_vec(json).expect("a JSON value serializes")
        } else if let Some(records) = &self.ndjson {
            headers.push(("content-type".into(), "application/x-ndjson".into()));
            records
                .iter()
                .map(|r| serde_json::to_string(r).expect("a JSON value serializes") + "\n")
                .collect::<String>()
                .into_bytes()
        } else if let Some(text) = &self.text {
            text.clone().into_bytes()
        } else if let Some(n) = self.filler_bytes {
            vec![b'\n'; n]
        } else {
            Vec::new()
        };
        Outgoing { method: self.method.clone(), target: self.path.clone(), headers, body }
    }
}

/// Loads every scenario file, sorted by file name.
pub fn load_all() -> Vec<(String, Scenario)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut all = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        let parsed: ScenarioFile = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("?").to_owned();
        all.extend(parsed.scenarios.into_iter().map(|s| (stem.clone(), s)));
    }
    assert!(!all.is_empty(), "no scenarios found in {}", dir.display());
    all
}

/// Runs every scenario against `target`; panics with every failure listed.
pub fn run_all(target: &mut dyn Target) {
    let scenarios = load_all();
    let mut failures = Vec::new();
    for (file, scenario) in &scenarios {
        eprintln!("{}: {file}/{}", target.name(), scenario.name);
        target.reset();
        let mut captures = Captures::new();
        for (index, step) in scenario.steps.iter().enumerate() {
            let outgoing = step.request.outgoing().substitute(&captures);
            let received = target.send(&outgoing);
            // The scenario's expectation, then the document: every answer of every host
            // must be one `core/openapi.json` declares.
            let checked =
                check(&step.expect, &received, &mut captures).and_then(|()| openapi::judge(&outgoing, &received));
            if let Err(problem) = checked {
                failures.push(format!(
                    "{file}/{} step {} ({} {}): {problem}",
                    scenario.name,
                    index + 1,
                    step.request.method,
                    step.request.path
                ));
                break;
            }
        }
    }
    eprintln!("{}: {} scenarios, {} failed", target.name(), scenarios.len(), failures.len());
    assert!(failures.is_empty(), "{}: {} scenario(s) failed:\n{}", target.name(), failures.len(), failures.join("\n"));
}

/// Strings captured by `"$capture:NAME"` matchers, by name.
pub type Captures = std::collections::BTreeMap<String, String>;

impl Outgoing {
    /// The request with every `{{NAME}}` replaced by its captured string.
    pub fn substitute(mut self, captures: &Captures) -> Self {
        let replace = |text: &str| {
            captures.iter().fold(text.to_owned(), |text, (name, value)| text.replace(&format!("{{{{{name}}}}}"), value))
        };
        if captures.is_empty() {
            return self;
        }
        self.target = replace(&self.target);
        for (_, value) in &mut self.headers {
            *value = replace(value);
        }
        if let Ok(body) = std::str::from_utf8(&self.body) {
            self.body = replace(body).into_bytes();
        }
        self
    }
}

fn check(expect: &Expect, received: &Received, captures: &mut Captures) -> Result<(), String> {
    let body_text = String::from_utf8_lossy(&received.body);
    if received.status != expect.status {
        return Err(format!("status {} (want {}), body {body_text}", received.status, expect.status));
    }
    for (name, want) in &expect.headers {
        let got = received.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
        if got != want.as_str() {
            return Err(format!("header {name}: {got:?}, want {want}"));
        }
    }
    if let Some(matcher) = &expect.body {
        let body: Value =
            serde_json::from_slice(&received.body).map_err(|e| format!("body is not JSON ({e}): {body_text}"))?;
        matches(matcher, &body, "$", captures).map_err(|e| format!("{e}\n  body: {body_text}"))?;
    }
    Ok(())
}

/// Whether `value` matches `matcher` (see the module docs).
pub fn matches(matcher: &Value, value: &Value, path: &str, captures: &mut Captures) -> Result<(), String> {
    match (matcher, value) {
        (Value::String(m), _) if m == "$any" => Ok(()),
        (Value::String(m), Value::String(v)) if m.starts_with("$capture:") => {
            let name = &m["$capture:".len()..];
            match captures.get(name) {
                Some(seen) if seen != v => Err(format!("{path}: {v:?} is not {seen:?}, captured earlier as {name}")),
                _ => {
                    captures.insert(name.to_owned(), v.clone());
                    Ok(())
                }
            }
        }
        (Value::String(m), Value::String(v)) if m == "$timestamp" => {
            if ledger_node_core::model::time::Timestamp::parse(v).is_ok_and(|t| t.to_string() == *v) {
                Ok(())
            } else {
                Err(format!("{path}: {v:?} is not an RFC 3339 UTC timestamp with six fractional digits"))
            }
        }
        (Value::String(m), Value::String(v)) if m == "$version" => {
            if v == env!("CARGO_PKG_VERSION") {
                Ok(())
            } else {
                Err(format!("{path}: {v:?} is not the crate version"))
            }
        }
        (Value::String(m), Value::String(v)) if m.starts_with("$contains:") => {
            let needle = &m["$contains:".len()..];
            if v.contains(needle) { Ok(()) } else { Err(format!("{path}: {v:?} does not contain {needle:?}")) }
        }
        (Value::Object(m), Value::Object(v)) => {
            for key in v.keys() {
                if !m.contains_key(key) {
                    return Err(format!("{path}: unexpected field {key:?}"));
                }
            }
            for (key, sub) in m {
                let got = v.get(key).ok_or_else(|| format!("{path}: missing field {key:?}"))?;
                matches(sub, got, &format!("{path}.{key}"), captures)?;
            }
            Ok(())
        }
        (Value::Array(m), Value::Array(v)) => {
            if m.len() != v.len() {
                return Err(format!("{path}: {} elements, want {}", v.len(), m.len()));
            }
            m.iter().zip(v).enumerate().try_for_each(|(i, (m, v))| matches(m, v, &format!("{path}[{i}]"), captures))
        }
        _ if matcher == value => Ok(()),
        _ => Err(format!("{path}: got {value}, want {matcher}")),
    }
}
