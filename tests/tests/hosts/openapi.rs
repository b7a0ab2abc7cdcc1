//! The node's OpenAPI document, `core/openapi.json`, as the judge of every answer.
//!
//! [`Document::check`] takes a request as sent and the answer a host gave, finds the
//! operation by method and path (path templates match one non-empty segment per
//! `{param}`; the template with the most literal segments wins), the response by status
//! (or `default`), and validates the JSON body against that response's schema with the
//! `jsonschema` crate (draft 2020-12, the dialect of OpenAPI 3.1). The whole document is
//! registered as one resource, so the `#/components/...` references of a schema resolve
//! in it. `HEAD` is judged as `GET` with an empty body. The two answers to requests the
//! document does not declare are judged too: a path that no template matches must be a
//! 404, and a declared path with an undeclared method a 405 with an `Allow` header, both
//! with the `ErrorResponse` body.
//!
//! The scenario runner checks every answer of every host this way ([`super::scenario`]);
//! the tests below check the document itself: that it is a valid OpenAPI 3.1 document
//! (against the specification's own JSON schema, `fixtures/openapi-3.1.schema.json`,
//! from the npm package `@seriousme/openapi-schema-validator` 2.11.0), that its
//! references and schemas are sound, that it describes exactly the routes of the route
//! table in `core/src/api/route.rs`, that the node routes every path it declares, that every
//! operation has a unique `operationId` (the network's own where it has the operation,
//! [`NETWORK_IDS`]), that the aliases of an operation are copies of it, and that every
//! discriminator maps each tag to the variant that holds it.
//!
//! ## The network's own documents as a second judge
//!
//! [`Network`] judges the same answers by the network's own OpenAPI documents, the scan
//! API, the token standard's transfer instruction API and the validator's external
//! wallet API of `hyperledger-labs/splice` ([`NETWORK_ENTRIES`]), when a run names a
//! directory that holds them in their repository's layout: `LEDGER_NODE_NETWORK_OPENAPI`
//! (a checkout of that repository). They are not kept in this repository, which holds
//! no copy of the network's sources; without the variable the second judge is off, and
//! `the_network_s_own_documents_judge_the_answers_about_a_demo_history` (ignored by
//! default) is the test to run with it. The judge itself is tested on documents laid
//! out the same way (`fixtures/network-shaped/`).
//!
//! The documents are YAML in OpenAPI 3.0: each file is read with `serde_norway`,
//! registered at its repository path under one base URI, so that the relative `$ref`s
//! between files (`../../../../common/src/main/openapi/common-external.yaml#/...`)
//! resolve as in the repository, and the files those lead to are loaded too. Schemas are
//! validated as JSON Schema draft 4, on which OpenAPI 3.0's schemas are built, with
//! `nullable: true` rewritten to admit `null`. A request path is looked up without its
//! base (`/api/scan`, `/api/validator`: the documents' paths are relative to them). A
//! path, method or error status that the documents do not declare is not theirs to
//! judge (the node answers more statuses than they list); an undeclared success is an
//! error, and a declared status's body must match its schema.
//!
//! Which answers: the scenario suite runs under the default names, and the network's
//! documents spell the network's names. The judge therefore takes only the operations
//! whose shapes do not depend on the names, which is every operation it finds: the one
//! route whose path carries the coin word (`/v0/coin-price/votes`) matches no path of
//! the network's documents under the default names and is left to the node's own
//! document, and the registry's choice context declares its values as any object, so
//! the `coin-rules` key is not judged by name. Running the suite a second time under the
//! network's names would judge one more route at the cost of a whole suite; the Python
//! client (`tests/client/strict_models.py`) already walks a node configured with them.
//!
//! The documents' known flaws, answers the network's own nodes give that the documents
//! declare otherwise, are corrected in one place, [`NETWORK_FLAWS`], each with its
//! reason; a flaw that is no longer in the file fails the load.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::{Draft, Registry, Validator};
use serde_json::Value;

use super::scenario::{Outgoing, Received, Target};

/// The URI the document is registered under for `$ref` resolution.
const DOCUMENT_URI: &str = "urn:ledger-node:openapi";

/// Where the document lives.
fn document_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/openapi.json")
}

/// The HTTP methods an OpenAPI path item may declare.
const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// One segment of a path template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Param,
}

/// A path of the document, with the JSON pointer of its path item (after `$ref`s).
#[derive(Debug)]
struct Template {
    path: String,
    segments: Vec<Segment>,
    item: String,
}

impl Template {
    fn new(path: &str, item: String) -> Self {
        let segments =
            path.split('/')
                .skip(1)
                .map(|s| {
                    if s.starts_with('{') && s.ends_with('}') { Segment::Param } else { Segment::Literal(s.to_owned()) }
                })
                .collect();
        Template { path: path.to_owned(), segments, item }
    }

    /// The number of literal segments, when `path` matches.
    fn matches(&self, path: &str) -> Option<usize> {
        let parts: Vec<&str> = path.split('/').skip(1).collect();
        if !path.starts_with('/') || parts.len() != self.segments.len() {
            return None;
        }
        let mut literals = 0;
        for (segment, part) in self.segments.iter().zip(parts) {
            match segment {
                Segment::Literal(literal) if literal == part => literals += 1,
                Segment::Param if !part.is_empty() => {}
                _ => return None,
            }
        }
        Some(literals)
    }
}

/// The loaded document, its `$ref` registry and the validators built so far.
pub struct Document {
    json: Value,
    registry: Registry<'static>,
    templates: Vec<Template>,
    validators: Mutex<HashMap<String, Arc<Validator>>>,
}

impl std::fmt::Debug for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document").field("paths", &self.templates.len()).finish_non_exhaustive()
    }
}

/// `key` escaped as one JSON pointer token.
fn token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// `pointer` written as a URI fragment (characters outside the fragment set escaped).
fn fragment(pointer: &str) -> String {
    let mut out = String::with_capacity(pointer.len());
    for byte in pointer.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The first `limit` characters of `text`, marked when cut.
pub fn excerpt(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((at, _)) => format!("{}… ({} bytes)", &text[..at], text.len()),
        None => text.to_owned(),
    }
}

impl Document {
    /// The document, loaded once per test process.
    pub fn get() -> &'static Document {
        static DOCUMENT: OnceLock<Document> = OnceLock::new();
        DOCUMENT.get_or_init(|| Document::load().unwrap_or_else(|e| panic!("core/openapi.json: {e}")))
    }

    /// The document as served by a node configured with the network's names (`Splice`,
    /// `Amulet`): spelled by them, as `GET /openapi.json` serves it there.
    pub fn spelled_for_the_network() -> &'static Document {
        static DOCUMENT: OnceLock<Document> = OnceLock::new();
        DOCUMENT.get_or_init(|| {
            let names = ledger_node_core::model::config::Names { root: "Splice".into(), coin: "Amulet".into() };
            let served = Document::read()
                .map(|text| ledger_node_core::model::names::respell(&text, &names).into_owned())
                .and_then(|text| Document::parse(&text));
            served.unwrap_or_else(|e| panic!("core/openapi.json under the network's names: {e}"))
        })
    }

    fn read() -> Result<String, String> {
        let path = document_path();
        std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))
    }

    fn load() -> Result<Document, String> {
        Document::parse(&Document::read()?)
    }

    fn parse(text: &str) -> Result<Document, String> {
        let json: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let registry = Registry::new()
            .draft(Draft::Draft202012)
            .add(DOCUMENT_URI, json.clone())
            .and_then(|builder| builder.prepare())
            .map_err(|e| format!("registering it for $ref resolution: {e}"))?;
        let mut document = Document { json, registry, templates: Vec::new(), validators: Mutex::new(HashMap::new()) };
        let paths = document.json.get("paths").and_then(Value::as_object).ok_or("no paths object")?;
        let mut templates = Vec::new();
        for path in paths.keys() {
            let (item, _) = document.follow(format!("/paths/{}", token(path)))?;
            templates.push(Template::new(path, item));
        }
        document.templates = templates;
        Ok(document)
    }

    /// The value at `pointer`, following `$ref`s (local ones: `#/...`) to the end, with the
    /// pointer it was found at.
    fn follow(&self, mut pointer: String) -> Result<(String, &Value), String> {
        for _ in 0..16 {
            let value = self.json.pointer(&pointer).ok_or_else(|| format!("nothing at #{pointer}"))?;
            match value.get("$ref").and_then(Value::as_str) {
                Some(reference) => {
                    pointer = reference
                        .strip_prefix('#')
                        .ok_or_else(|| format!("#{pointer}: only local references are supported, not {reference}"))?
                        .to_owned();
                }
                None => return Ok((pointer, value)),
            }
        }
        Err(format!("#{pointer}: a chain of more than 16 references"))
    }

    /// A validator for the schema at `pointer`, built once.
    fn validator(&self, pointer: &str) -> Result<Arc<Validator>, String> {
        let mut validators = self.validators.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(validator) = validators.get(pointer) {
            return Ok(Arc::clone(validator));
        }
        let schema = serde_json::json!({ "$ref": format!("{DOCUMENT_URI}#{}", fragment(pointer)) });
        let validator = jsonschema::options()
            .with_draft(Draft::Draft202012)
            .with_registry(&self.registry)
            .should_validate_formats(true)
            .build(&schema)
            .map_err(|e| format!("the schema at #{pointer} does not compile: {e}"))?;
        let validator = Arc::new(validator);
        validators.insert(pointer.to_owned(), Arc::clone(&validator));
        Ok(validator)
    }

    /// Validates `instance` against the schema at `pointer`; the error lists what failed.
    fn validate(&self, pointer: &str, instance: &Value) -> Result<(), String> {
        let validator = self.validator(pointer)?;
        if validator.is_valid(instance) {
            return Ok(());
        }
        let evaluation = validator.evaluate(instance);
        let mut problems: Vec<String> = evaluation
            .iter_errors()
            .map(|entry| {
                let at = entry.schema_location.strip_prefix(DOCUMENT_URI).unwrap_or(entry.schema_location);
                format!("{entry} (schema {at})")
            })
            .collect();
        if problems.is_empty() {
            problems = validator.iter_errors(instance).map(|e| e.to_string()).collect();
        }
        let shown = problems.len().min(12);
        let more = if problems.len() > shown {
            format!("\n      … and {} more", problems.len() - shown)
        } else {
            String::new()
        };
        Err(format!("the body does not match #{pointer}:\n      {}{more}", problems[..shown].join("\n      ")))
    }

    /// The template that matches `path`, the most literal one first.
    fn template(&self, path: &str) -> Option<&Template> {
        self.templates
            .iter()
            .filter_map(|t| t.matches(path).map(|literals| (literals, t)))
            .max_by_key(|(literals, _)| *literals)
            .map(|(_, t)| t)
    }

    /// Whether the answer `received` to `method` on `target` (path and query) is one the
    /// document declares; the error says what does not match.
    pub fn check(&self, method: &str, target: &str, received: &Received) -> Result<(), String> {
        let path = target.split(['?', '#']).next().unwrap_or(target);
        let status = received.status;
        let Some(template) = self.template(path) else {
            if status == 404 {
                return self.check_body("/components/responses/NotFound", received, false);
            }
            return Err(format!(
                "no path of the document matches {path}; the node answered {status}, where only a 404 answers an undeclared path"
            ));
        };
        let head = method.eq_ignore_ascii_case("HEAD");
        let key = if head { "get".to_owned() } else { method.to_ascii_lowercase() };
        let (_, item) = self.follow(template.item.clone())?;
        let declared: Vec<&str> = METHODS.into_iter().filter(|m| item.get(*m).is_some()).collect();
        if !declared.contains(&key.as_str()) {
            if status != 405 {
                return Err(format!(
                    "{} declares no {method} operation (only {}); the node answered {status}, where only a 405 is expected",
                    template.path,
                    declared.join(", ").to_uppercase()
                ));
            }
            let allow = received.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("allow")).map(|(_, v)| v.as_str());
            let allowed = allow
                .unwrap_or("")
                .split(',')
                .map(|m| m.trim().to_ascii_lowercase())
                .any(|m| declared.contains(&m.as_str()));
            if !allowed {
                return Err(format!(
                    "a 405 for {} must have an Allow header naming its method ({}); it has {allow:?}",
                    template.path,
                    declared.join(", ").to_uppercase()
                ));
            }
            return self.check_body("/components/responses/MethodNotAllowed", received, false);
        }
        let operation = format!("{}/{key}", template.item);
        let responses = self.json.pointer(&format!("{operation}/responses")).and_then(Value::as_object);
        let responses = responses.ok_or_else(|| format!("{method} {} has no responses", template.path))?;
        let code = status.to_string();
        let response = if responses.contains_key(&code) {
            format!("{operation}/responses/{code}")
        } else if responses.contains_key("default") {
            format!("{operation}/responses/default")
        } else {
            return Err(format!(
                "{method} {} declares no {status} response (it declares {})",
                template.path,
                responses.keys().cloned().collect::<Vec<_>>().join(", ")
            ));
        };
        self.check_body(&response, received, head).map_err(|e| format!("{method} {} → {status}: {e}", template.path))
    }

    /// Whether `received` has the body the response at `pointer` declares.
    fn check_body(&self, pointer: &str, received: &Received, head: bool) -> Result<(), String> {
        let (pointer, response) = self.follow(pointer.to_owned())?;
        let content = response.get("content").and_then(Value::as_object);
        let Some(content) = content.filter(|c| !c.is_empty()) else {
            return if received.body.is_empty() {
                Ok(())
            } else {
                Err(format!("#{pointer} declares no body, and the answer has {} bytes", received.body.len()))
            };
        };
        if head {
            return if received.body.is_empty() {
                Ok(())
            } else {
                Err(format!("an answer to HEAD has no body, and this one has {} bytes", received.body.len()))
            };
        }
        let content_type = received
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
            .unwrap_or_default();
        let Some((media, _)) = content.iter().find(|(media, _)| media.eq_ignore_ascii_case(&content_type)) else {
            return Err(format!(
                "the content type is {content_type:?}, and #{pointer} declares {}",
                content.keys().cloned().collect::<Vec<_>>().join(", ")
            ));
        };
        let body: Value = serde_json::from_slice(&received.body).map_err(|e| format!("the body is not JSON: {e}"))?;
        self.validate(&format!("{pointer}/content/{}/schema", token(media)), &body)
    }

    /// Every operation of the document: (method in upper case, path, the operation's
    /// pointer, the operation).
    fn operations(&self) -> Vec<(String, String, String, &Value)> {
        let mut operations = Vec::new();
        for template in &self.templates {
            let (_, item) = self.follow(template.item.clone()).expect("followed at load");
            for method in METHODS {
                if let Some(operation) = item.get(method) {
                    let pointer = format!("{}/{method}", template.item);
                    operations.push((method.to_uppercase(), template.path.clone(), pointer, operation));
                }
            }
        }
        operations
    }
}

/// Checks the answer to a scenario request, in a message for the failure list.
pub fn judge(outgoing: &Outgoing, received: &Received) -> Result<(), String> {
    let body = || excerpt(&String::from_utf8_lossy(&received.body), 600);
    Document::get().check(&outgoing.method, &outgoing.target, received).map_err(|problem| {
        format!(
            "the answer does not match core/openapi.json: {problem}\n  status {}, body: {}",
            received.status,
            body()
        )
    })?;
    if let Some(network) = Network::get() {
        network.check(&outgoing.method, &outgoing.target, received).map_err(|problem| {
            format!(
                "the answer does not match the network's documents: {problem}\n  status {}, body: {}",
                received.status,
                body()
            )
        })?;
    }
    Ok(())
}

/// Every `$ref` under `value` (with the pointer it is at).
fn references<'v>(value: &'v Value, at: String, out: &mut Vec<(String, &'v str)>) {
    match value {
        Value::Object(map) => {
            for (key, sub) in map {
                if key == "$ref" {
                    if let Some(reference) = sub.as_str() {
                        out.push((at.clone(), reference));
                    }
                } else {
                    references(sub, format!("{at}/{}", token(key)), out);
                }
            }
        }
        Value::Array(items) => {
            for (index, sub) in items.iter().enumerate() {
                references(sub, format!("{at}/{index}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn the_document_is_a_valid_openapi_3_1_document() {
    let schema_path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hosts/fixtures/openapi-3.1.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&schema_path).expect("reading the fixture"))
        .expect("the fixture is JSON");
    let validator = jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .build(&schema)
        .expect("the OpenAPI 3.1 schema compiles");
    let document = Document::get();
    let errors: Vec<String> =
        validator.iter_errors(&document.json).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "core/openapi.json is not a valid OpenAPI 3.1 document:\n{}", errors.join("\n"));
    let version = document.json["openapi"].as_str().unwrap_or("");
    assert!(version.starts_with("3.1."), "openapi is {version:?}, want 3.1.x");
    assert_eq!(
        document.json["info"]["version"].as_str(),
        Some(env!("CARGO_PKG_VERSION")),
        "info.version must be the node's version"
    );
}

#[test]
fn every_reference_resolves_and_every_schema_compiles() {
    let document = Document::get();
    let mut refs = Vec::new();
    references(&document.json, String::new(), &mut refs);
    let broken: Vec<String> = refs
        .iter()
        .filter_map(|(at, reference)| match reference.strip_prefix('#') {
            Some(pointer) if document.json.pointer(pointer).is_some() => None,
            _ => Some(format!("#{at}: {reference}")),
        })
        .collect();
    assert!(broken.is_empty(), "references that do not resolve:\n{}", broken.join("\n"));
    let schemas = document.json["components"]["schemas"].as_object().expect("components/schemas");
    for name in schemas.keys() {
        document.validator(&format!("/components/schemas/{}", token(name))).unwrap_or_else(|e| panic!("{e}"));
    }
    assert!(document.validate("/components/schemas/ErrorResponse", &serde_json::json!({"error": "x"})).is_ok());
    assert!(document.validate("/components/schemas/ErrorResponse", &serde_json::json!({"error": 1})).is_err());
}

#[test]
fn every_operation_is_complete_and_every_error_is_an_error_response() {
    let document = Document::get();
    let mut problems = Vec::new();
    for (method, path, pointer, operation) in document.operations() {
        let at = format!("{method} {path}");
        let responses = operation["responses"].as_object().cloned().unwrap_or_default();
        if !responses.contains_key("200") {
            problems.push(format!("{at}: no 200 response"));
        }
        for code in ["413", "500"] {
            if !responses.contains_key(code) {
                problems.push(format!("{at}: no {code} response (every route has a body limit and can fail)"));
            }
        }
        for code in responses.keys().filter(|c| !c.starts_with('2')) {
            let schema = document
                .follow(format!("{pointer}/responses/{code}"))
                .ok()
                .and_then(|(p, r)| r.pointer("/content/application~1json/schema").map(|s| (p, s.clone())));
            if schema.as_ref().map(|(_, s)| s)
                != Some(&serde_json::json!({"$ref": "#/components/schemas/ErrorResponse"}))
            {
                problems.push(format!("{at}: the {code} response is not an ErrorResponse"));
            }
        }
        let admin = path.starts_with("/v0/admin/") && !PUBLIC_UNDER_ADMIN.contains(&path.as_str());
        let tags: Vec<&str> =
            operation["tags"].as_array().map(|t| t.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let security = &operation["security"];
        if admin {
            if operation["x-admin"] != Value::Bool(true) || !tags.contains(&"admin") {
                problems.push(format!("{at}: an admin operation needs tag admin and x-admin: true"));
            }
            if *security != serde_json::json!([{"adminBearerAuth": []}]) {
                problems.push(format!("{at}: an admin operation needs the adminBearerAuth security requirement"));
            }
            for code in ["401", "403"] {
                if !responses.contains_key(code) {
                    problems.push(format!("{at}: an admin operation answers {code}"));
                }
            }
        } else if operation.get("x-admin").is_some() || tags.contains(&"admin") {
            problems.push(format!("{at}: only /v0/admin/ operations are admin"));
        }
        if path.contains("/v0/wallet/") {
            if *security != serde_json::json!([{"walletUserAuth": []}]) {
                problems.push(format!("{at}: a wallet operation needs the walletUserAuth security requirement"));
            }
            for code in ["401", "403"] {
                if !responses.contains_key(code) {
                    problems.push(format!("{at}: a wallet operation answers {code}"));
                }
            }
        }
        // Every path parameter is declared, at the path item or the operation.
        let item_pointer = pointer.rsplit_once('/').map(|(item, _)| item.to_owned()).unwrap_or_default();
        let (_, item) = document.follow(item_pointer).expect("a path item");
        let mut declared = BTreeSet::new();
        for list in [item.get("parameters"), operation.get("parameters")].into_iter().flatten() {
            for parameter in list.as_array().into_iter().flatten() {
                let parameter = match parameter.get("$ref").and_then(Value::as_str) {
                    Some(reference) => document.json.pointer(&reference[1..]).unwrap_or(parameter),
                    None => parameter,
                };
                if parameter["in"] == "path" {
                    declared.insert(parameter["name"].as_str().unwrap_or("").to_owned());
                }
            }
        }
        let in_path: BTreeSet<String> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(str::to_owned)
            .collect();
        if declared != in_path {
            problems.push(format!("{at}: path parameters {in_path:?}, declared {declared:?}"));
        }
    }
    assert!(problems.is_empty(), "core/openapi.json:\n{}", problems.join("\n"));
}

/// The network's public reads whose paths start with `/v0/admin/` (its scan serves them
/// without credentials): not the node's own admin operations.
const PUBLIC_UNDER_ADMIN: [&str; 2] = ["/v0/admin/sv/voterequests", "/v0/admin/validator/licenses"];

/// The routes of the table in `core/src/api/route.rs`'s docs: (METHOD, path) at the root and
/// under each base path of the row, with `{coin}` spelled `coin` (the default) and every
/// path parameter written `{}`.
fn route_table() -> BTreeSet<(String, String)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/src/api/route.rs");
    let source = std::fs::read_to_string(&path).expect("reading core/src/api/route.rs");
    let mut routes = BTreeSet::new();
    for line in source.lines() {
        let Some(row) = line.strip_prefix("//! |") else { continue };
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Some(method) = cells.first().filter(|m| !m.is_empty() && m.chars().all(|c| c.is_ascii_uppercase())) else {
            continue;
        };
        let root = cells.get(1).map(|c| c.trim_matches('`')).unwrap_or("");
        let bases: Vec<&str> = cells
            .get(3)
            .map(|c| c.split(',').map(|b| b.trim().trim_matches('`')).filter(|b| !b.is_empty()).collect())
            .unwrap_or_default();
        for path in expand(&root.replace("{coin}", "coin")) {
            for base in std::iter::once("").chain(bases.iter().copied()) {
                routes.insert((method.to_string(), normalize(&format!("{base}{path}"))));
            }
        }
    }
    assert!(routes.len() > 20, "found only {} routes in the table of core/src/api/route.rs", routes.len());
    routes
}

/// `path` with a segment `{a,b,c}` expanded into one path per alternative.
fn expand(path: &str) -> Vec<String> {
    let mut paths = vec![String::new()];
    for segment in path.split('/').skip(1) {
        let options: Vec<&str> = match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(inner) if inner.contains(',') => inner.split(',').map(str::trim).collect(),
            _ => vec![segment],
        };
        paths = paths.iter().flat_map(|p| options.iter().map(move |o| format!("{p}/{o}"))).collect();
    }
    paths
}

/// `path` with every `{param}` written `{}`.
fn normalize(path: &str) -> String {
    path.split('/').map(|s| if s.starts_with('{') && s.ends_with('}') { "{}" } else { s }).collect::<Vec<_>>().join("/")
}

#[test]
fn the_document_describes_exactly_the_routes_of_the_route_table() {
    let table = route_table();
    let document: BTreeSet<(String, String)> =
        Document::get().operations().into_iter().map(|(method, path, ..)| (method, normalize(&path))).collect();
    let missing: Vec<_> = table.difference(&document).map(|(m, p)| format!("{m} {p}")).collect();
    let extra: Vec<_> = document.difference(&table).map(|(m, p)| format!("{m} {p}")).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "core/openapi.json and the route table of core/src/api/route.rs differ\n\
         routes missing from the document:\n  {}\npaths of the document the table does not list:\n  {}",
        missing.join("\n  "),
        extra.join("\n  ")
    );
}

#[test]
fn the_node_routes_every_path_of_the_document() {
    let mut target = super::targets::CoreTarget::new();
    let mut unrouted = BTreeMap::new();
    for (method, path, ..) in Document::get().operations() {
        let concrete: String =
            path.split('/').map(|s| if s.starts_with('{') { "x" } else { s }).collect::<Vec<_>>().join("/");
        let outgoing =
            Outgoing { method: method.clone(), target: concrete.clone(), headers: Vec::new(), body: Vec::new() };
        let received = target.send(&outgoing);
        let body = String::from_utf8_lossy(&received.body).into_owned();
        if received.status == 405 || (received.status == 404 && body.contains("no such endpoint")) {
            unrouted.insert(format!("{method} {path}"), format!("{}: {body}", received.status));
        }
    }
    assert!(unrouted.is_empty(), "paths of core/openapi.json the node does not route: {unrouted:#?}");
}

#[test]
fn the_judge_refuses_answers_the_document_does_not_declare() {
    let document = Document::get();
    let json = |status: u16, body: &str| Received {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: body.as_bytes().to_vec(),
    };
    assert!(
        document
            .check("GET", "/version", &json(200, r#"{"version":"0.1.0","commit_ts":"2024-01-01T00:00:00.000000Z"}"#))
            .is_ok()
    );
    // A field the schema does not have, a missing one, a timestamp written otherwise.
    assert!(
        document
            .check(
                "GET",
                "/version",
                &json(200, r#"{"version":"0.1.0","commit_ts":"2024-01-01T00:00:00.000000Z","x":1}"#)
            )
            .is_err()
    );
    assert!(document.check("GET", "/version", &json(200, r#"{"version":"0.1.0"}"#)).is_err());
    assert!(
        document
            .check("GET", "/version", &json(200, r#"{"version":"0.1.0","commit_ts":"2024-01-01T00:00:00Z"}"#))
            .is_err()
    );
    // A status the operation does not declare; an error that is not an ErrorResponse.
    assert!(document.check("GET", "/version", &json(404, r#"{"error":"x"}"#)).is_err());
    assert!(
        document
            .check("GET", "/v2/updates/u?ledger_value_encoding=protobuf_json", &json(404, r#"{"error":"x"}"#))
            .is_ok()
    );
    assert!(document.check("GET", "/v2/updates/u", &json(404, r#"{"message":"x"}"#)).is_err());
    // Undeclared paths and methods.
    assert!(document.check("GET", "/nowhere", &json(404, r#"{"error":"no such endpoint"}"#)).is_ok());
    assert!(document.check("GET", "/nowhere", &json(200, r#"{}"#)).is_err());
    let mut not_allowed = json(405, r#"{"error":"method not allowed"}"#);
    assert!(document.check("POST", "/version", &not_allowed).is_err(), "a 405 needs an Allow header");
    not_allowed.headers.push(("allow".into(), "GET".into()));
    assert!(document.check("POST", "/version", &not_allowed).is_ok());
    assert!(document.check("POST", "/version", &json(200, "{}")).is_err());
    // HEAD is GET without a body; a body of another content type is refused.
    let head =
        Received { status: 200, headers: vec![("content-type".into(), "application/json".into())], body: Vec::new() };
    assert!(document.check("HEAD", "/version", &head).is_ok());
    let text =
        Received { status: 200, headers: vec![("content-type".into(), "text/plain".into())], body: b"{}".to_vec() };
    assert!(document.check("GET", "/v0/roll-forward-lsu", &text).is_err());
}

/// Sends `method target` (with an optional JSON body and the admin token) to `core` and
/// judges the answer; returns it with its body parsed (`Value::Null` when empty).
fn judged(core: &mut super::targets::CoreTarget, method: &str, target: &str, body: Option<Value>) -> (u16, Value) {
    let mut headers = vec![("authorization".to_owned(), format!("Bearer {}", super::scenario::ADMIN_TOKEN))];
    let body = match body {
        Some(json) => {
            headers.push(("content-type".to_owned(), "application/json".to_owned()));
            serde_json::to_vec(&json).expect("a JSON value serializes")
        }
        None => Vec::new(),
    };
    let outgoing = Outgoing { method: method.to_owned(), target: target.to_owned(), headers, body };
    let received = core.send(&outgoing);
    judge(&outgoing, &received).unwrap_or_else(|problem| panic!("{method} {target}: {problem}"));
    let json =
        if received.body.is_empty() { Value::Null } else { serde_json::from_slice(&received.body).expect("JSON") };
    (received.status, json)
}

/// A path segment percent-encoded as a client would send it.
fn segment(id: &str) -> String {
    id.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Every read endpoint, over the demo network's history (a thousand updates: every
/// value type, reassignments, a hard migration with import updates, a party on two
/// participants), answers as the document says: richer data than the scenarios have.
#[test]
fn the_answers_about_a_demo_history_match_the_document() {
    let mut ndjson = Vec::new();
    ledger_node::demo::write(&ledger_node::demo::Options::new(1000, 1), &mut ndjson).expect("a demo history");
    let mut core = super::targets::CoreTarget::new();
    let outgoing = Outgoing {
        method: "POST".into(),
        target: "/v0/admin/ingest".into(),
        headers: vec![("authorization".into(), format!("Bearer {}", super::scenario::ADMIN_TOKEN))],
        body: ndjson.clone(),
    };
    let received = core.send(&outgoing);
    assert_eq!(received.status, 200, "ingest: {}", String::from_utf8_lossy(&received.body));
    judge(&outgoing, &received).unwrap_or_else(|problem| panic!("ingest: {problem}"));

    let mut updates = Vec::new();
    let mut hosting = Vec::new();
    let mut instructions = Vec::new();
    let mut transfer_commands = BTreeSet::new();
    for line in String::from_utf8(ndjson).expect("UTF-8").lines() {
        let record: Value = serde_json::from_str(line).expect("a JSON record");
        if let Some(update) = record.get("update") {
            updates.push(update["update_id"].as_str().expect("an update id").to_owned());
            for event in update["events_by_id"].as_object().into_iter().flat_map(|e| e.values()) {
                if event["template_id"].as_str().is_some_and(|t| t.ends_with(":CoinTransferInstruction")) {
                    instructions.push(event["contract_id"].as_str().expect("a contract id").to_owned());
                }
                if event["template_id"].as_str().is_some_and(|t| t.ends_with(":TransferCommand"))
                    && event["event_type"] == "created_event"
                {
                    let fields = event["create_arguments"]["record"]["fields"].as_array().expect("fields");
                    let value = |label: &str| &fields.iter().find(|f| f["label"] == label).expect(label)["value"];
                    let sender = value("sender")["party"].as_str().expect("a sender").to_owned();
                    transfer_commands.insert((sender, value("nonce")["int64"].as_str().expect("a nonce").to_owned()));
                }
            }
        } else if let Some(topology) = record.get("topology") {
            let id = |key: &str| topology[key].as_str().expect("an id").to_owned();
            hosting.push((id("synchronizer_id"), id("party_id")));
        }
    }
    for id in &updates {
        for version in ["v2", "v1"] {
            for encoding in ["compact_json", "protobuf_json"] {
                let target = format!("/{version}/updates/{}?ledger_value_encoding={encoding}", segment(id));
                assert_eq!(judged(&mut core, "GET", &target, None).0, 200, "{target}");
            }
        }
    }
    // The whole stream, a page at a time, in both versions.
    for (path, encoding) in [("/v2/updates", "protobuf_json"), ("/api/scan/v1/updates", "compact_json")] {
        let mut after = Value::Null;
        let mut seen = 0;
        loop {
            let body = serde_json::json!({"page_size": 100, "after": after, "daml_value_encoding": encoding});
            let (status, page) = judged(&mut core, "POST", path, Some(body));
            assert_eq!(status, 200);
            let items = page["transactions"].as_array().expect("transactions");
            let Some(last) = items.last() else { break };
            seen += items.len();
            let migration = last.get("migration_id").or_else(|| last["event"].get("migration_id"));
            after = serde_json::json!({"after_migration_id": migration, "after_record_time": last["record_time"]});
        }
        assert!(seen > 900, "{path}: {seen} updates in the stream");
    }
    for migration_id in [0, 1, 2] {
        let body = serde_json::json!({"migration_id": migration_id});
        judged(&mut core, "POST", "/v0/backfilling/migration-info", Some(body));
        let body = serde_json::json!({"migration_id": migration_id, "after_update_id": "", "limit": 1000});
        judged(&mut core, "POST", "/v0/backfilling/import-updates", Some(body));
        let target =
            format!("/v0/state/acs/snapshot-timestamp-after?after=2025-01-01T00:00:00Z&migration_id={migration_id}");
        judged(&mut core, "GET", &target, None);
    }
    for (synchronizer_id, party_id) in &hosting {
        let body = serde_json::json!({"migration_id": 1, "synchronizer_id": synchronizer_id, "before": "2100-01-01T00:00:00Z", "count": 1000});
        judged(&mut core, "POST", "/v0/backfilling/updates-before", Some(body));
        for version in ["v0", "v1"] {
            let target =
                format!("/{version}/domains/{}/parties/{}/participant-id", segment(synchronizer_id), segment(party_id));
            judged(&mut core, "GET", &target, None);
        }
    }
    for target in [
        "/version",
        "/livez",
        "/readyz",
        "/status",
        "/api/scan/status",
        "/api/validator/status",
        "/openapi.json",
        "/v0/backfilling/status",
        "/v0/closed-rounds",
        "/v0/coin-price/votes",
        "/v0/roll-forward-lsu",
        "/v0/internal/reward-accounting-process/rounds/earliest-available",
        "/v0/admin/wallet/buy-traffic-requests",
        "/v0/dso-party-id",
        "/v0/dso",
        "/v0/dso-sequencers",
        "/v0/scans",
        "/v0/migrations/last",
        "/v0/featured-apps",
        "/v0/unclaimed-development-fund-coupons",
        "/v0/admin/sv/voterequests",
        "/v0/admin/validator/licenses?limit=2",
        "/v0/ans-entries?page_size=100",
    ] {
        assert_eq!(judged(&mut core, "GET", target, None).0, 200, "{target}");
    }
    for (path, body) in [
        ("/v0/coin-rules", serde_json::json!({})),
        ("/v0/external-party-coin-rules", serde_json::json!({})),
        ("/v0/ans-rules", serde_json::json!({})),
        (
            "/v0/open-and-issuing-mining-rounds",
            serde_json::json!({"cached_open_mining_round_contract_ids": [], "cached_issuing_round_contract_ids": []}),
        ),
    ] {
        assert_eq!(judged(&mut core, "POST", path, Some(body)).0, 200, "{path}");
    }
    assert!(transfer_commands.len() >= 4, "{transfer_commands:?}");
    for (sender, nonce) in &transfer_commands {
        let target = format!("/v0/transfer-command/status?sender={}&nonce={nonce}", segment(sender));
        assert_eq!(judged(&mut core, "GET", &target, None).0, 200, "{target}");
    }
    let mut contexts = BTreeMap::new();
    for id in &instructions {
        for choice in ["reject", "withdraw", "accept"] {
            let target = format!("/registry/transfer-instruction/v2/{}/choice-contexts/{choice}", segment(id));
            let (status, _) = judged(&mut core, "POST", &target, Some(serde_json::json!({"meta": {"k": "v"}})));
            *contexts.entry((choice, status)).or_insert(0) += 1;
        }
    }
    for choice in ["reject", "withdraw", "accept"] {
        assert!(contexts.contains_key(&(choice, 200)), "no {choice} context answered 200: {contexts:?}");
    }
}

/// The network's own `operationId` of each operation the node shares with it, at the
/// path its clients use, as the network's documents name them (with the default names:
/// served under `Amulet`, `listCoinPriceVotes` is `listAmuletPriceVotes`, as the
/// network's). Read from the scan API (`apps/scan/src/main/openapi/scan.yaml` and the
/// common paths it refers to), the token standard's transfer instruction API and the
/// validator's wallet API of `hyperledger-labs/splice`. (The validator's probes are
/// `isLive` and `isReady` too, in its own document; in this one, which has both apps,
/// the scan's keep them and the validator's are `isLiveAtValidator`, `isReadyAtValidator`.)
const NETWORK_IDS: [(&str, &str, &str); 43] = [
    ("GET", "/api/scan/version", "getVersion"),
    ("GET", "/api/scan/livez", "isLive"),
    ("GET", "/api/scan/readyz", "isReady"),
    ("GET", "/api/scan/status", "getHealthStatus"),
    ("GET", "/api/scan/v2/updates/{update_id}", "getUpdateByIdV2"),
    ("GET", "/api/scan/v1/updates/{update_id}", "getUpdateByIdV1"),
    ("POST", "/api/scan/v2/updates", "getUpdateHistoryV2"),
    ("POST", "/api/scan/v1/updates", "getUpdateHistoryV1"),
    ("POST", "/api/scan/v0/backfilling/migration-info", "getMigrationInfo"),
    ("POST", "/api/scan/v0/backfilling/updates-before", "getUpdatesBefore"),
    ("POST", "/api/scan/v0/backfilling/import-updates", "getImportUpdates"),
    ("GET", "/api/scan/v0/backfilling/status", "getBackfillingStatus"),
    ("GET", "/api/scan/v0/state/acs/snapshot-timestamp-after", "getDateOfFirstSnapshotAfter"),
    ("GET", "/api/scan/v0/closed-rounds", "getClosedRounds"),
    ("GET", "/api/scan/v0/coin-price/votes", "listCoinPriceVotes"),
    ("GET", "/api/scan/v0/domains/{domain_id}/parties/{party_id}/participant-id", "getPartyToParticipant"),
    ("GET", "/api/scan/v1/domains/{domain_id}/parties/{party_id}/participant-id", "getPartyToParticipantV1"),
    ("GET", "/api/scan/v0/roll-forward-lsu", "getRollForwardLsu"),
    (
        "GET",
        "/api/scan/v0/internal/reward-accounting-process/rounds/earliest-available",
        "getRewardAccountingEarliestAvailableRound",
    ),
    (
        "POST",
        "/api/scan/registry/transfer-instruction/v2/{transferInstructionId}/choice-contexts/accept",
        "getTransferInstructionAcceptContext",
    ),
    (
        "POST",
        "/api/scan/registry/transfer-instruction/v2/{transferInstructionId}/choice-contexts/reject",
        "getTransferInstructionRejectContext",
    ),
    (
        "POST",
        "/api/scan/registry/transfer-instruction/v2/{transferInstructionId}/choice-contexts/withdraw",
        "getTransferInstructionWithdrawContext",
    ),
    ("GET", "/api/scan/v0/dso-party-id", "getDsoPartyId"),
    ("POST", "/api/scan/v0/coin-rules", "getCoinRules"),
    ("POST", "/api/scan/v0/external-party-coin-rules", "getExternalPartyCoinRules"),
    ("POST", "/api/scan/v0/ans-rules", "getAnsRules"),
    ("POST", "/api/scan/v0/open-and-issuing-mining-rounds", "getOpenAndIssuingMiningRounds"),
    ("GET", "/api/scan/v0/dso", "getDsoInfo"),
    ("GET", "/api/scan/v0/dso-sequencers", "listDsoSequencers"),
    ("GET", "/api/scan/v0/scans", "listDsoScans"),
    ("GET", "/api/scan/v0/transfer-preapprovals/by-party/{party}", "lookupTransferPreapprovalByParty"),
    ("GET", "/api/scan/v0/featured-apps", "listFeaturedAppRights"),
    ("GET", "/api/scan/v0/featured-apps/{provider_party_id}", "lookupFeaturedAppRight"),
    ("GET", "/api/scan/v0/transfer-command-counter/{party}", "lookupTransferCommandCounterByParty"),
    ("GET", "/api/scan/v0/transfer-command/status", "lookupTransferCommandStatus"),
    ("GET", "/api/scan/v0/ans-entries", "listAnsEntries"),
    ("GET", "/api/scan/v0/ans-entries/by-party/{party}", "lookupAnsEntryByParty"),
    ("GET", "/api/scan/v0/ans-entries/by-name/{name}", "lookupAnsEntryByName"),
    ("GET", "/api/scan/v0/unclaimed-development-fund-coupons", "listUnclaimedDevelopmentFundCoupons"),
    ("GET", "/api/scan/v0/admin/sv/voterequests", "listDsoRulesVoteRequests"),
    ("GET", "/api/scan/v0/admin/validator/licenses", "listValidatorLicenses"),
    ("POST", "/api/validator/v0/wallet/buy-traffic-requests", "createBuyTrafficRequest"),
    ("POST", "/api/validator/v0/wallet/buy-traffic-requests/{tracking_id}/status", "getBuyTrafficRequestStatus"),
];

/// The `operationId` an alias derives from its operation's id: `At{Base}` for the same
/// path at the root or under another base, `Legacy` for the earlier reward accounting
/// path.
fn derived_id(id: &str, primary: &str, alias: &str) -> String {
    let base = |path: &str| {
        ["/api/scan", "/api/validator"].into_iter().find(|b| path.starts_with(&format!("{b}/"))).unwrap_or("")
    };
    let legacy = if alias.contains("/v0/reward-accounting-process/") { "Legacy" } else { "" };
    let suffix = match base(alias) {
        b if b == base(primary) => "",
        "" => "AtRoot",
        "/api/scan" => "AtScan",
        _ => "AtValidator",
    };
    format!("{id}{legacy}{suffix}")
}

#[test]
fn every_operation_has_a_unique_id_and_the_network_s_own_where_it_has_the_operation() {
    let document = Document::get();
    let operations = document.operations();
    let mut ids: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut problems = Vec::new();
    for (method, path, _, operation) in &operations {
        match operation["operationId"].as_str() {
            Some(id) if !id.is_empty() => ids.entry(id).or_default().push(format!("{method} {path}")),
            _ => problems.push(format!("{method} {path}: no operationId")),
        }
    }
    for (id, at) in &ids {
        if at.len() > 1 {
            problems.push(format!("operationId {id} is used by {}", at.join(", ")));
        }
    }
    for (method, path, id) in NETWORK_IDS {
        let found = operations.iter().find(|(m, p, ..)| m == method && p == path);
        match found.map(|(.., operation)| operation["operationId"].as_str()) {
            Some(Some(got)) if got == id => {}
            other => problems.push(format!("{method} {path}: operationId {other:?}, the network's is {id}")),
        }
    }
    assert!(problems.is_empty(), "core/openapi.json:\n{}", problems.join("\n"));
}

/// Each operation is written once, under `components/pathItems`, with its own id, and
/// referenced from its primary path; every other path of the same route (the route at
/// the root or under another base, the earlier reward accounting path) carries a copy,
/// equal to it but for the `operationId`, which derives from the primary's.
#[test]
fn every_alias_is_a_copy_of_its_operation_with_a_derived_id() {
    let document = Document::get();
    let items = document.json["components"]["pathItems"].as_object().expect("components/pathItems");
    let paths = document.json["paths"].as_object().expect("paths");
    let mut problems = Vec::new();
    for (name, item) in items {
        let reference = format!("#/components/pathItems/{}", token(name));
        let primaries: Vec<&String> = paths.iter().filter(|(_, p)| p["$ref"] == *reference).map(|(p, _)| p).collect();
        let [primary] = primaries[..] else {
            problems.push(format!("{reference} is the path item of {} paths, not one", primaries.len()));
            continue;
        };
        let route = route_of(primary);
        for (path, alias) in paths.iter().filter(|(p, a)| *p != primary && a.get("$ref").is_none()) {
            if route_of(path) != route {
                continue;
            }
            let mut stripped = alias.clone();
            for method in METHODS {
                if let (Some(copy), Some(original)) = (stripped.get_mut(method), item.get(method)) {
                    let want = derived_id(original["operationId"].as_str().unwrap_or(""), primary, path);
                    if copy["operationId"] != *want {
                        problems.push(format!("{path}: operationId {}, want {want}", copy["operationId"]));
                    }
                    copy["operationId"] = original["operationId"].clone();
                }
            }
            if stripped != *item {
                problems.push(format!(
                    "{path} differs from {reference} (its primary path {primary}) in more than the operationId: \
                     copy the path item there and set its operationId"
                ));
            }
        }
    }
    let unreferenced: Vec<&String> = paths
        .iter()
        .filter(|(path, item)| {
            item.get("$ref").is_none()
                && !items.keys().any(|name| {
                    let reference = format!("#/components/pathItems/{}", token(name));
                    paths.iter().any(|(p, i)| i["$ref"] == *reference && route_of(p) == route_of(path))
                })
        })
        .map(|(p, _)| p)
        .collect();
    assert!(
        unreferenced.is_empty(),
        "paths that are no copy of an operation under components/pathItems: {unreferenced:?}"
    );
    assert!(problems.is_empty(), "core/openapi.json:\n{}", problems.join("\n"));
}

/// The route a path of the document belongs to: the path without its base, the earlier
/// reward accounting path as the current one.
fn route_of(path: &str) -> String {
    let bare = ["/api/scan", "/api/validator"]
        .into_iter()
        .find_map(|b| path.strip_prefix(b).filter(|rest| rest.starts_with('/')))
        .unwrap_or(path);
    bare.replace("/v0/reward-accounting-process/", "/v0/internal/reward-accounting-process/")
}

/// A discriminator is read by some validators and generators to pick the variant:
/// without a mapping they look for a schema named by the tag's value. So every
/// discriminator of the document has a mapping, that mapping lists exactly the `oneOf`
/// variants, and each maps the value its variant's tag property holds (`const`).
#[test]
fn every_discriminator_maps_each_tag_to_the_variant_that_has_it() {
    let document = Document::get();
    let schemas = document.json["components"]["schemas"].as_object().expect("components/schemas");
    let mut problems = Vec::new();
    let mut seen = 0;
    for (name, schema) in schemas {
        let Some(discriminator) = schema.get("discriminator") else { continue };
        seen += 1;
        let property = discriminator["propertyName"].as_str().unwrap_or("");
        let Some(mapping) = discriminator["mapping"].as_object() else {
            problems.push(format!("{name}: a discriminator without a mapping"));
            continue;
        };
        let variants: BTreeSet<&str> =
            schema["oneOf"].as_array().into_iter().flatten().filter_map(|v| v["$ref"].as_str()).collect();
        let mapped: BTreeSet<&str> = mapping.values().filter_map(Value::as_str).collect();
        if variants != mapped || variants.len() != schema["oneOf"].as_array().map_or(0, Vec::len) {
            problems.push(format!("{name}: oneOf {variants:?}, mapping {mapped:?}"));
        }
        for (tag, target) in mapping {
            let pointer = target.as_str().and_then(|t| t.strip_prefix('#')).unwrap_or("");
            let held = document.json.pointer(&format!("{pointer}/properties/{}", token(property)));
            let values: Vec<&Value> = match held {
                Some(p) if p.get("const").is_some() => vec![&p["const"]],
                Some(p) => p["enum"].as_array().map(|e| e.iter().collect()).unwrap_or_default(),
                None => Vec::new(),
            };
            if values != [&Value::String(tag.clone())] {
                problems.push(format!("{name}: {tag} maps to {target}, whose {property} holds {values:?}"));
            }
        }
    }
    assert!(seen >= 3, "only {seen} discriminators found");
    assert!(problems.is_empty(), "core/openapi.json:\n{}", problems.join("\n"));
}

/// The variable naming a directory that holds the network's own OpenAPI documents in
/// their repository's layout (a checkout of `hyperledger-labs/splice`).
pub const NETWORK_DOCUMENTS: &str = "LEDGER_NODE_NETWORK_OPENAPI";

/// The network's documents that judge answers, by their path in that repository: the
/// scan API, the token standard's transfer instruction API (served by scan under
/// `/api/scan/registry/...`) and the validator's external wallet API. The files they
/// refer to (`apps/common/src/main/openapi/*.yaml`) are loaded as their `$ref`s lead.
const NETWORK_ENTRIES: [&str; 3] = [
    "apps/scan/src/main/openapi/scan.yaml",
    "token-standard/splice-api-token-transfer-instruction-v2/openapi/transfer-instruction-v2.yaml",
    "apps/wallet/src/main/openapi/wallet-external.yaml",
];

/// The base URI the network's files are registered under, each at its repository path,
/// so that their relative `$ref`s (`../../../../common/src/main/openapi/common.yaml#/...`)
/// resolve as they do in the repository.
const NETWORK_BASE: &str = "https://network.invalid/";

/// The known flaws of the network's documents: answers that the network's own nodes
/// give, and so the node gives too, but that the documents declare otherwise. Each is
/// (file, JSON pointer, the schema put there instead, why). They are corrected here, in
/// one place, before any answer is judged; a flaw whose pointer is not in the file
/// fails the load, so the list cannot outlive the flaws.
const NETWORK_FLAWS: [(&str, &str, &str, &str); 3] = [
    (
        "apps/scan/src/main/openapi/scan.yaml",
        "/components/schemas/ExercisedEvent/properties/exercise_result",
        "{}",
        "the result of a choice is any Daml value: in compact_json a contract id, a number or a \
         text renders as a JSON string, a list as an array, an optional as null; only a record \
         is an object, as the declared type says",
    ),
    (
        "apps/scan/src/main/openapi/scan.yaml",
        "/components/schemas/ExercisedEvent/properties/choice_argument",
        "{}",
        "a choice argument is a Daml record, but compact_json renders a record of one field of \
         a non-record type as that field's value, which need not be an object",
    ),
    (
        "apps/scan/src/main/openapi/scan.yaml",
        "/components/schemas/TransferCommandContractStatus/oneOf",
        r##"[
            {"allOf": [{"$ref": "#/components/schemas/TransferCommandCreatedResponse"}, {"properties": {"status": {"enum": ["created"]}}}]},
            {"allOf": [{"$ref": "#/components/schemas/TransferCommandSentResponse"}, {"properties": {"status": {"enum": ["sent"]}}}]},
            {"allOf": [{"$ref": "#/components/schemas/TransferCommandFailedResponse"}, {"properties": {"status": {"enum": ["failed"]}}}]}
        ]"##,
        "the three statuses differ only by the value of `status`, which the document leaves to its \
         discriminator; JSON Schema's oneOf ignores a discriminator, so every status matches all \
         three schemas unless each is held to its mapped value",
    ),
];

/// One path of a network document: its template, and the file and pointer of its path
/// item.
#[derive(Debug)]
struct NetworkPath {
    template: Template,
    uri: String,
}

/// The network's documents, loaded, as a second judge of every answer.
pub struct Network {
    files: HashMap<String, Value>,
    registry: Registry<'static>,
    paths: Vec<NetworkPath>,
    validators: Mutex<HashMap<String, Arc<Validator>>>,
    judged: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network").field("files", &self.files.len()).field("paths", &self.paths.len()).finish()
    }
}

/// `reference` (a relative file path) resolved against the file `from`, both repository
/// paths.
fn resolve_path(from: &str, reference: &str) -> String {
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for part in reference.split('/') {
        match part {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            other => parts.push(other),
        }
    }
    parts.join("/")
}

/// Rewrites the OpenAPI 3.0 schema keyword that JSON Schema does not know into its
/// JSON Schema form, everywhere under `value`: `nullable: true` admits `null`.
fn json_schema_of_openapi_3_0(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for sub in map.values_mut() {
                json_schema_of_openapi_3_0(sub);
            }
            if map.remove("nullable") == Some(Value::Bool(true)) {
                let schema = Value::Object(std::mem::take(map));
                map.insert("anyOf".into(), serde_json::json!([schema, {"type": "null"}]));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(json_schema_of_openapi_3_0),
        _ => {}
    }
}

impl Network {
    /// The network's documents when [`NETWORK_DOCUMENTS`] names a directory; a directory
    /// that does not hold them is a panic, not a silent pass.
    pub fn get() -> Option<&'static Network> {
        static NETWORK: OnceLock<Option<Network>> = OnceLock::new();
        NETWORK
            .get_or_init(|| {
                let root = std::env::var_os(NETWORK_DOCUMENTS)?;
                let root = std::path::PathBuf::from(root);
                let entries: Vec<&str> = NETWORK_ENTRIES.into_iter().filter(|e| root.join(e).is_file()).collect();
                assert!(
                    !entries.is_empty(),
                    "{NETWORK_DOCUMENTS}={}: none of {NETWORK_ENTRIES:?} is there",
                    root.display()
                );
                Some(
                    Network::load(&root, &entries, &NETWORK_FLAWS)
                        .unwrap_or_else(|e| panic!("{NETWORK_DOCUMENTS}={}: {e}", root.display())),
                )
            })
            .as_ref()
    }

    /// Loads `entries` (repository paths under `root`) and every file their `$ref`s lead
    /// to, with `flaws` corrected.
    fn load(root: &std::path::Path, entries: &[&str], flaws: &[(&str, &str, &str, &str)]) -> Result<Network, String> {
        let mut files = HashMap::new();
        let mut queue: Vec<String> = entries.iter().map(|e| (*e).to_owned()).collect();
        while let Some(file) = queue.pop() {
            if files.contains_key(&file) {
                continue;
            }
            let path = root.join(&file);
            let text = std::fs::read_to_string(&path).map_err(|e| format!("reading {file}: {e}"))?;
            let mut json: Value = serde_norway::from_str(&text).map_err(|e| format!("{file} is not YAML: {e}"))?;
            for (flawed, pointer, schema, _) in flaws.iter().filter(|(f, ..)| *f == file) {
                let slot =
                    json.pointer_mut(pointer).ok_or_else(|| format!("{file}: the known flaw at {pointer} is gone"))?;
                *slot = serde_json::from_str(schema).map_err(|e| format!("{flawed}{pointer}: {e}"))?;
            }
            json_schema_of_openapi_3_0(&mut json);
            let mut refs = Vec::new();
            references(&json, String::new(), &mut refs);
            for (_, reference) in refs {
                let target = reference.split('#').next().unwrap_or("");
                if !target.is_empty() {
                    queue.push(resolve_path(&file, target));
                }
            }
            files.insert(file, json);
        }
        let mut builder = Registry::new().draft(Draft::Draft4);
        for (file, json) in &files {
            builder = builder.add(format!("{NETWORK_BASE}{file}"), json.clone()).map_err(|e| format!("{file}: {e}"))?;
        }
        let registry = builder.prepare().map_err(|e| format!("registering the files: {e}"))?;
        let mut network = Network {
            files,
            registry,
            paths: Vec::new(),
            validators: Mutex::new(HashMap::new()),
            judged: std::sync::atomic::AtomicUsize::new(0),
        };
        let mut paths = Vec::new();
        for entry in entries {
            let uri = format!("{NETWORK_BASE}{entry}");
            let declared =
                network.files[*entry].get("paths").and_then(Value::as_object).ok_or(format!("{entry}: no paths"))?;
            for path in declared.keys() {
                let (uri, item, _) = network.follow(&uri, &format!("/paths/{}", token(path)))?;
                paths.push(NetworkPath { template: Template::new(path, item), uri });
            }
        }
        network.paths = paths;
        Ok(network)
    }

    /// The value at `pointer` of the file at `uri`, following `$ref`s across files to
    /// the end: (file URI, pointer, value).
    fn follow(&self, uri: &str, pointer: &str) -> Result<(String, String, &Value), String> {
        let (mut uri, mut pointer) = (uri.to_owned(), pointer.to_owned());
        for _ in 0..16 {
            let file = uri.strip_prefix(NETWORK_BASE).unwrap_or(&uri);
            let json = self.files.get(file).ok_or_else(|| format!("no file {file}"))?;
            let value = json.pointer(&pointer).ok_or_else(|| format!("nothing at {file}#{pointer}"))?;
            match value.get("$ref").and_then(Value::as_str) {
                Some(reference) => {
                    let (target, fragment) = reference.split_once('#').unwrap_or((reference, ""));
                    if !target.is_empty() {
                        uri = format!("{NETWORK_BASE}{}", resolve_path(file, target));
                    }
                    pointer = fragment.to_owned();
                }
                None => return Ok((uri, pointer, value)),
            }
        }
        Err(format!("{uri}#{pointer}: a chain of more than 16 references"))
    }

    /// Judges the answer to `method target` by the network's documents: `Ok(false)` when
    /// they do not speak to it (a path, method or error status they do not declare),
    /// `Ok(true)` when its body is the one they declare, else what differs.
    pub fn check(&self, method: &str, target: &str, received: &Received) -> Result<bool, String> {
        let path = target.split(['?', '#']).next().unwrap_or(target);
        let path = ["/api/scan", "/api/validator"]
            .into_iter()
            .find_map(|base| path.strip_prefix(base).filter(|rest| rest.starts_with('/')))
            .unwrap_or(path);
        let found = self
            .paths
            .iter()
            .filter_map(|p| p.template.matches(path).map(|literals| (literals, p)))
            .max_by_key(|(literals, _)| *literals);
        let Some((_, found)) = found else { return Ok(false) };
        if method.eq_ignore_ascii_case("HEAD") {
            return Ok(false);
        }
        let (uri, item, _) = self.follow(&found.uri, &found.template.item)?;
        let operation = format!("{item}/{}", method.to_ascii_lowercase());
        let status = received.status.to_string();
        let at = format!(
            "{method} {} ({}#{operation})",
            found.template.path,
            uri.strip_prefix(NETWORK_BASE).unwrap_or(&uri)
        );
        let file = uri.strip_prefix(NETWORK_BASE).unwrap_or(&uri);
        let Some(responses) = self.files[file].pointer(&format!("{operation}/responses")) else { return Ok(false) };
        if responses.get(&status).is_none() {
            return if status.starts_with('2') { Err(format!("{at} declares no {status}")) } else { Ok(false) };
        }
        let (uri, response, value) = self.follow(&uri, &format!("{operation}/responses/{status}"))?;
        if value.pointer("/content/application~1json/schema").is_none() {
            return if received.body.is_empty() {
                Ok(true)
            } else {
                Err(format!("{at} → {status}: declares no body"))
            };
        }
        let body: Value =
            serde_json::from_slice(&received.body).map_err(|e| format!("{at}: the body is not JSON: {e}"))?;
        self.validate(&uri, &format!("{response}/content/application~1json/schema"), &body)
            .map_err(|e| format!("{at} → {status}: {e}"))?;
        self.judged.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(true)
    }

    /// Validates `instance` against the schema at `uri#pointer` (JSON Schema draft 4, the
    /// base of OpenAPI 3.0's schemas, with `nullable` rewritten).
    fn validate(&self, uri: &str, pointer: &str, instance: &Value) -> Result<(), String> {
        let key = format!("{uri}#{pointer}");
        let validator = {
            let mut validators = self.validators.lock().unwrap_or_else(|e| e.into_inner());
            match validators.get(&key) {
                Some(validator) => Arc::clone(validator),
                None => {
                    let schema = serde_json::json!({ "$ref": format!("{uri}#{}", fragment(pointer)) });
                    let validator = jsonschema::options()
                        .with_draft(Draft::Draft4)
                        .with_registry(&self.registry)
                        .should_validate_formats(true)
                        .build(&schema)
                        .map_err(|e| format!("the schema at {key} does not compile: {e}"))?;
                    let validator = Arc::new(validator);
                    validators.insert(key.clone(), Arc::clone(&validator));
                    validator
                }
            }
        };
        let problems: Vec<String> =
            validator.iter_errors(instance).take(12).map(|e| format!("{e} at {}", e.instance_path())).collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!("the body does not match {key}:\n      {}", problems.join("\n      ")))
        }
    }

    /// How many answers these documents judged so far.
    pub fn judged(&self) -> usize {
        self.judged.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[test]
fn the_network_judge_follows_relative_references_nullable_and_known_flaws() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hosts/fixtures/network-shaped");
    let entries = ["apps/api/openapi/api.yaml"];
    let result = "/components/schemas/Thing/properties/result";
    let flaws = [("apps/api/openapi/api.yaml", result, "{}", "any value")];
    let network = Network::load(&root, &entries, &flaws).unwrap_or_else(|e| panic!("{e}"));
    let json = |status: u16, body: &str| Received {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: body.as_bytes().to_vec(),
    };
    // A path item in the common file, under the base path and at the root.
    assert_eq!(network.check("GET", "/api/scan/version", &json(200, r#"{"version":"1"}"#)), Ok(true));
    assert!(network.check("GET", "/version", &json(200, r#"{"version":1}"#)).is_err());
    // A schema and a response in the common file; nullable; the corrected flaw.
    let thing = r#"{"id":"x","owner":null,"result":"a text"}"#;
    assert_eq!(network.check("GET", "/v0/things/x?y=1", &json(200, thing)), Ok(true));
    let short_owner = r#"{"id":"x","owner":"ab","result":{}}"#;
    assert!(network.check("GET", "/v0/things/x", &json(200, short_owner)).is_err());
    assert_eq!(network.check("GET", "/v0/things/x", &json(404, r#"{"error":"gone"}"#)), Ok(true));
    assert!(network.check("GET", "/v0/things/x", &json(404, r#"{"message":"gone"}"#)).is_err());
    // What the documents do not declare is not theirs to judge, but a success is.
    assert_eq!(network.check("GET", "/v0/things/x", &json(413, r#"{"error":"big"}"#)), Ok(false));
    assert_eq!(network.check("GET", "/nowhere", &json(200, "{}")), Ok(false));
    assert_eq!(network.check("POST", "/v0/things/x", &json(200, "{}")), Ok(false));
    assert!(network.check("GET", "/v0/things/x", &json(201, thing)).is_err());
    assert_eq!(network.judged(), 3);
    // Without the correction the flaw refuses the answer; a flaw that is gone fails the load.
    let strict = Network::load(&root, &entries, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert!(strict.check("GET", "/v0/things/x", &json(200, thing)).is_err());
    let gone = [("apps/api/openapi/api.yaml", "/components/schemas/Gone", "{}", "")];
    assert!(Network::load(&root, &entries, &gone).unwrap_err().contains("is gone"));
}

/// The network's own documents judge every answer about the demo history, when a run
/// supplies them ([`NETWORK_DOCUMENTS`]); the scenario suite is judged by them too then.
#[test]
#[ignore = "needs the network's documents: LEDGER_NODE_NETWORK_OPENAPI=<a checkout of hyperledger-labs/splice>"]
fn the_network_s_own_documents_judge_the_answers_about_a_demo_history() {
    let network = Network::get().unwrap_or_else(|| panic!("{NETWORK_DOCUMENTS} is not set"));
    the_answers_about_a_demo_history_match_the_document();
    assert!(network.judged() > 1000, "the network's documents judged only {} answers", network.judged());
}
