//! The wallet through the core's entry point, over the memory store.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::Cell;

use jwt_compact::alg::{Hs256, Hs256Key};
use jwt_compact::{AlgorithmExt, Claims, Header};
use serde_json::{Value as Json, json};

use crate::api::http::{Body, Method, Request, Response};
use crate::model::config::{self, Config};
use crate::model::env::Env;
use crate::model::error::StoreError;
use crate::model::time::Timestamp;
use crate::service::handle;
use crate::storage::exec::block_on;
use crate::storage::store::{Entry, MemoryStore, Scan, Store, WriteBatch, WriteError};

use crate::state::wallet::record::{BuyTrafficRecord, State};

const SECRET: &str = "wallet-test-secret";
const ADMIN: &str = "admin-token";
/// 2026-01-01T00:00:00Z.
const NOW: i64 = 1_767_225_600_000_000;
const FAR_FUTURE: i64 = 4_070_908_800_000_000;
/// Tokens expire in 2200, after every time the tests set; the configuration allows
/// tokens that long-lived.
const TOKEN_EXPIRY_SECONDS: i64 = 7_258_118_400;

fn config() -> Config {
    Config::from_pairs([
        (config::JWT_HS256_SECRET, SECRET),
        (config::ADMIN_TOKEN, ADMIN),
        (config::JWT_MAX_TTL_HOURS, "2000000"),
    ])
    .unwrap()
}

fn token(sub: &str) -> String {
    let mut claims = Claims::new(json!({ "sub": sub }));
    claims.expiration = chrono::DateTime::from_timestamp(TOKEN_EXPIRY_SECONDS, 0);
    Hs256.token(&Header::empty(), &claims, &Hs256Key::new(SECRET)).unwrap()
}

/// A node over a memory store at a settable time, with fresh entropy per request.
struct Node<S = MemoryStore> {
    store: S,
    config: Config,
    now: Cell<i64>,
    requests: Cell<u64>,
}

impl Node {
    fn new() -> Self {
        Node::over(MemoryStore::new())
    }
}

impl<S: Store> Node<S> {
    fn over(store: S) -> Self {
        let node = Node { store, config: config(), now: Cell::new(NOW), requests: Cell::new(0) };
        node.ingest(&[
            json!({"wallet_user": {"user_id": "alice", "party_id": "alice::1220"}}),
            json!({"wallet_user": {"user_id": "bob", "party_id": "bob::1220"}}),
            json!({"topology": {"synchronizer_id": "sync::1", "party_id": "validator::1", "participant_ids": ["PAR::p1::f"]}}),
            json!({"topology": {"synchronizer_id": "sync::1", "party_id": "shared::1", "participant_ids": ["PAR::p1::f", "PAR::p2::f"]}}),
            json!({"topology": {"synchronizer_id": "sync::2", "party_id": "other::1", "participant_ids": []}}),
        ]);
        node
    }

    fn send(&self, method: Method, target: &str, auth: Option<&str>, body: Option<&Json>) -> (u16, Json) {
        let response = self.respond(method, target, auth, body);
        (response.status, serde_json::from_slice(&response.body).unwrap_or(Json::Null))
    }

    /// The whole response, log included.
    fn respond(&self, method: Method, target: &str, auth: Option<&str>, body: Option<&Json>) -> Response {
        let mut request = Request::new(method, target);
        if let Some(token) = auth {
            request.headers.push(("authorization".into(), alloc::format!("Bearer {token}")));
        }
        if let Some(body) = body {
            request.body = Body::Complete(body.to_string().into_bytes());
        }
        self.requests.set(self.requests.get() + 1);
        let mut entropy = [0u8; 32];
        entropy[..8].copy_from_slice(&self.requests.get().to_le_bytes());
        let env = Env { now: Timestamp::from_micros(self.now.get()).unwrap(), entropy, config: &self.config };
        block_on(handle(&request, &env, &self.store))
    }

    fn ingest(&self, records: &[Json]) -> (u16, Json) {
        let mut request = Request::new(Method::Post, "/v0/admin/ingest");
        request.headers.push(("authorization".into(), alloc::format!("Bearer {ADMIN}")));
        let body: String = records.iter().map(|r| r.to_string() + "\n").collect();
        request.body = Body::Complete(body.into_bytes());
        let env = Env { now: Timestamp::from_micros(self.now.get()).unwrap(), entropy: [0; 32], config: &self.config };
        let response = block_on(handle(&request, &env, &self.store));
        (response.status, serde_json::from_slice(&response.body).unwrap_or(Json::Null))
    }

    fn submit(&self, user: &str, body: &Json) -> (u16, Json) {
        self.send(Method::Post, "/v0/wallet/buy-traffic-requests", Some(&token(user)), Some(body))
    }

    fn status(&self, user: &str, tracking_id: &str) -> (u16, Json) {
        let path = alloc::format!("/v0/wallet/buy-traffic-requests/{tracking_id}/status");
        self.send(Method::Post, &path, Some(&token(user)), None)
    }

    fn tick(&self) -> (u16, Json) {
        self.send(Method::Post, "/v0/admin/tick", Some(ADMIN), None)
    }

    fn list(&self, query: &str) -> (u16, Json) {
        self.send(Method::Get, &alloc::format!("/v0/admin/wallet/buy-traffic-requests{query}"), Some(ADMIN), None)
    }
}

fn request_body(tracking_id: &str, expires_at: i64) -> Json {
    json!({
        "receiving_validator_party_id": "validator::1",
        "domain_id": "sync::1",
        "traffic_amount": 1000,
        "tracking_id": tracking_id,
        "expires_at": expires_at,
    })
}

fn outcome_update(update_id: &str, contract_id: &str, choice: &str, argument: Json) -> Json {
    json!({"update": {
        "update_id": update_id, "migration_id": 0, "workflow_id": "", "record_time": "2025-06-01T00:00:00Z",
        "synchronizer_id": "sync::1", "effective_at": "2025-06-01T00:00:00Z",
        "root_event_ids": [alloc::format!("{update_id}:0")],
        "events_by_id": { alloc::format!("{update_id}:0"): {
            "event_type": "exercised_event", "event_id": alloc::format!("{update_id}:0"),
            "contract_id": contract_id,
            "template_id": "pkg:Platform.Wallet.BuyTrafficRequest:BuyTrafficRequest", "package_name": "wallet",
            "choice": choice, "choice_argument": argument, "child_event_ids": [],
            "exercise_result": {"unit": {}}, "consuming": true, "acting_parties": ["validator::1"]
        }}
    }})
}

fn created_contract_id(node: &Node<impl Store>, tracking_id: &str) -> String {
    let (status, body) = node.submit("alice", &request_body(tracking_id, FAR_FUTURE));
    assert_eq!(status, 200, "{body}");
    let id = body["request_contract_id"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 66);
    assert!(id.starts_with("00") && id.chars().all(|c| c.is_ascii_hexdigit()));
    id
}

#[test]
fn a_submission_is_recorded_listed_and_reported_as_created() {
    let node = Node::new();
    let id = created_contract_id(&node, "t-1");
    assert_eq!(node.status("alice", "t-1"), (200, json!({"status": "created"})));
    let item = json!({
        "tracking_id": "t-1", "user_id": "alice", "request_contract_id": id,
        "receiving_validator_party_id": "validator::1", "domain_id": "sync::1",
        "traffic_amount": 1000, "expires_at": FAR_FUTURE, "status": "created",
    });
    assert_eq!(node.list(""), (200, json!({"requests": [item.clone()]})));
    assert_eq!(node.list("?status=created"), (200, json!({"requests": [item]})));
    assert_eq!(node.list("?status=completed"), (200, json!({"requests": []})));
    assert_eq!(node.list("?status=failed"), (200, json!({"requests": []})));
    assert_eq!(node.list("?status=done").0, 400);
}

#[test]
fn the_request_is_an_active_contract_of_the_buy_traffic_template() {
    let node = Node::new();
    let id = created_contract_id(&node, "t-1");
    let record = block_on(crate::state::ledger::contracts::read(&node.store, &id)).unwrap().unwrap();
    let created = record.creation().expect("active");
    assert_eq!(created.template_id.as_str(), "ledger-node-wallet:Platform.Wallet.BuyTrafficRequest:BuyTrafficRequest");
    assert_eq!(created.payload["trackingId"], "t-1");
    assert_eq!(created.payload["endUserParty"], "alice::1220");
    assert_eq!(created.payload["trafficAmount"], "1000");
    assert_eq!(created.payload["expiresAt"], "2099-01-01T00:00:00.000000Z");
}

#[test]
fn a_tracking_id_is_used_once_per_user() {
    let node = Node::new();
    created_contract_id(&node, "t-1");
    let (status, body) = node.submit("alice", &request_body("t-1", FAR_FUTURE));
    assert_eq!(status, 409, "{body}");
    assert!(body["error"].as_str().unwrap().contains("status created"));
    // Another user's tracking ids are their own.
    assert_eq!(node.submit("bob", &request_body("t-1", FAR_FUTURE)).0, 200);
    assert_eq!(node.status("bob", "t-1").0, 200);
    assert_eq!(node.status("bob", "t-2").0, 404);
    assert_eq!(node.list("").1["requests"].as_array().unwrap().len(), 2);
}

#[test]
fn a_failed_submission_leaves_its_tracking_id_free() {
    let node = Node::new();
    let mut bad = request_body("t-1", FAR_FUTURE);
    bad["domain_id"] = json!("sync::unknown");
    assert_eq!(node.submit("alice", &bad).0, 400);
    assert_eq!(node.status("alice", "t-1").0, 404);
    created_contract_id(&node, "t-1");
}

#[test]
fn authentication_comes_before_parsing_and_the_user_must_be_onboarded() {
    let node = Node::new();
    let (status, body) = node.send(Method::Post, "/v0/wallet/buy-traffic-requests", None, Some(&json!("junk")));
    assert_eq!(status, 401, "{body}");
    let (status, _) = node.send(Method::Post, "/v0/wallet/buy-traffic-requests", Some("not-a-jwt"), Some(&json!({})));
    assert_eq!(status, 401);
    let (status, body) = node.submit("mallory", &json!("junk"));
    assert_eq!(status, 403, "{body}");
    assert!(body["error"].as_str().unwrap().contains("mallory"));
    assert_eq!(node.status("mallory", "t-1").0, 403);
    assert_eq!(node.submit("alice", &json!("junk")).0, 400);
    // The admin token is not a wallet token, and the admin list needs the admin token.
    assert_eq!(node.send(Method::Post, "/v0/wallet/buy-traffic-requests", Some(ADMIN), Some(&json!({}))).0, 401);
    let (status, _) = node.send(Method::Get, "/v0/admin/wallet/buy-traffic-requests", Some(&token("alice")), None);
    assert_eq!(status, 401);
    assert_eq!(node.send(Method::Post, "/v0/admin/tick", None, None).0, 401);
}

#[test]
fn validation_needs_a_known_synchronizer_and_exactly_one_hosting_participant() {
    let node = Node::new();
    let with = |field: &str, value: Json| {
        let mut body = request_body("t-1", FAR_FUTURE);
        body[field] = value;
        let (status, body) = node.submit("alice", &body);
        assert_eq!(status, 400, "{body}");
        body["error"].as_str().unwrap().to_string()
    };
    assert!(with("domain_id", json!("sync::9")).contains("not a synchronizer this node knows"));
    assert!(with("receiving_validator_party_id", json!("nobody::1")).contains("not hosted"));
    assert!(with("receiving_validator_party_id", json!("shared::1")).contains("hosted on 2 participants"));
    let mut body = request_body("t-1", FAR_FUTURE);
    body["domain_id"] = json!("sync::2");
    body["receiving_validator_party_id"] = json!("other::1");
    assert!(node.submit("alice", &body).1["error"].as_str().unwrap().contains("not hosted"));
    assert!(with("traffic_amount", json!(0)).starts_with("traffic_amount"));
    assert!(with("expires_at", json!(-5)).starts_with("expires_at"));
    assert!(with("tracking_id", json!("")).starts_with("tracking_id"));
    assert!(with("tracking_id", json!(5)).starts_with("tracking_id: expected a string"));
    assert_eq!(node.list("").1["requests"], json!([]));
}

#[test]
fn the_ledger_completes_rejects_and_expires_requests() {
    let node = Node::new();
    let done = created_contract_id(&node, "done");
    let cancelled = created_contract_id(&node, "cancelled");
    let plain = created_contract_id(&node, "plain");
    let expired = created_contract_id(&node, "expired");
    let reason = json!({"record": {"fields": [{"label": "reason", "value": {"text": "out of funds"}}]}});
    let no_reason = json!({"record": {"fields": []}});
    let (status, body) = node.ingest(&[
        outcome_update("u-1", &done, "BuyTrafficRequest_Complete", json!({"record": {"fields": []}})),
        outcome_update("u-2", &cancelled, "BuyTrafficRequest_Cancel", reason),
        outcome_update("u-3", &plain, "BuyTrafficRequest_Cancel", no_reason),
        outcome_update("u-4", &expired, "BuyTrafficRequest_Expire", json!({"record": {"fields": []}})),
        outcome_update("u-5", "00unrelated", "BuyTrafficRequest_Complete", json!({"unit": {}})),
    ]);
    assert_eq!(status, 200, "{body}");
    assert_eq!(node.status("alice", "done").1, json!({"status": "completed", "transaction_id": "u-1"}));
    assert_eq!(
        node.status("alice", "cancelled").1,
        json!({"status": "failed", "failure_reason": "rejected", "rejection_reason": "out of funds"})
    );
    assert_eq!(node.status("alice", "plain").1, json!({"status": "failed", "failure_reason": "rejected"}));
    assert_eq!(node.status("alice", "expired").1, json!({"status": "failed", "failure_reason": "expired"}));
    assert_eq!(node.list("?status=created").1["requests"], json!([]));
    assert_eq!(node.list("?status=completed").1["requests"].as_array().unwrap().len(), 1);
    assert_eq!(node.list("?status=failed").1["requests"].as_array().unwrap().len(), 3);
    // Consumed: archived in the active contract set.
    let record = block_on(crate::state::ledger::contracts::read(&node.store, &done)).unwrap().unwrap();
    assert!(!record.is_active());
    // Still 409 for a used tracking id.
    assert_eq!(node.submit("alice", &request_body("done", FAR_FUTURE)).0, 409);
}

#[test]
fn the_tick_expires_due_requests_and_the_ledger_still_wins_afterwards() {
    let node = Node::new();
    let past = 1_704_067_200_000_000; // 2024
    let (status, body) = node.submit("alice", &request_body("old", past));
    assert_eq!(status, 200, "{body}");
    let old = body["request_contract_id"].as_str().unwrap().to_string();
    created_contract_id(&node, "new");
    node.submit("bob", &request_body("old", NOW - 1));
    node.submit("bob", &request_body("exact", NOW));
    assert_eq!(node.tick(), (200, json!({"expired_requests": 2})));
    assert_eq!(node.tick(), (200, json!({"expired_requests": 0})));
    assert_eq!(node.status("alice", "old").1, json!({"status": "failed", "failure_reason": "expired"}));
    assert_eq!(node.status("bob", "old").1["status"], "failed");
    assert_eq!(node.status("bob", "exact").1["status"], "created");
    assert_eq!(node.status("alice", "new").1["status"], "created");
    // The validator completed it after all: the ledger's word wins.
    node.ingest(&[outcome_update("late", &old, "BuyTrafficRequest_Complete", json!({"unit": {}}))]);
    assert_eq!(node.status("alice", "old").1, json!({"status": "completed", "transaction_id": "late"}));
    // And a later tick does not undo it, nor does a second ledger outcome.
    node.now.set(FAR_FUTURE + 1);
    assert_eq!(node.tick().1, json!({"expired_requests": 2}));
    node.ingest(&[outcome_update("later", &old, "BuyTrafficRequest_Expire", json!({"unit": {}}))]);
    assert_eq!(node.status("alice", "old").1, json!({"status": "completed", "transaction_id": "late"}));
    let statuses: Vec<Json> =
        node.list("").1["requests"].as_array().unwrap().iter().map(|r| r["status"].clone()).collect();
    // By user, then tracking id: alice/new, alice/old, bob/exact, bob/old.
    assert_eq!(statuses, [json!("failed"), json!("completed"), json!("failed"), json!("failed")]);
}

#[test]
fn the_tick_expires_more_requests_than_fit_in_one_batch() {
    let node = Node::new();
    let count = crate::state::wallet::outcome::TICK_PAGE as usize + 3;
    for i in 0..count {
        assert_eq!(node.submit("alice", &request_body(&alloc::format!("t-{i}"), 1_000 + i as i64)).0, 200);
    }
    assert_eq!(node.tick().1, json!({"expired_requests": count}));
    assert_eq!(node.list("?status=created").1["requests"], json!([]));
}

/// Something done to the store from outside.
type Hook<'a> = &'a dyn Fn(&MemoryStore);

/// A store that commits an ingest batch (as another request would) just before the
/// first write it is asked for.
struct IngestFirst<'a> {
    inner: MemoryStore,
    before_first_write: Cell<Option<Hook<'a>>>,
}

impl Store for IngestFirst<'_> {
    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get(key).await
    }
    async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.inner.get_many(keys).await
    }
    async fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        self.inner.scan(scan).await
    }
    async fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        if let Some(hook) = self.before_first_write.take() {
            hook(&self.inner);
        }
        self.inner.write(batch).await
    }
    fn recall(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.inner.recall(key)
    }
    fn remember(&self, key: &[u8], value: &[u8]) {
        self.inner.remember(key, value);
    }
}

#[test]
fn an_ingest_committed_during_the_tick_makes_it_start_over_and_keeps_the_ledgers_word() {
    let node = Node::new();
    let id = {
        let (status, body) = node.submit("alice", &request_body("t-1", 5));
        assert_eq!(status, 200);
        body["request_contract_id"].as_str().unwrap().to_string()
    };
    // Run the tick over the same state, with the ledger's completion landing between its
    // reads and its write.
    let racing = Node { store: node.store, config: config(), now: Cell::new(NOW), requests: Cell::new(100) };
    let complete = outcome_update("u-1", &id, "BuyTrafficRequest_Complete", json!({"unit": {}}));
    let hook = |store: &MemoryStore| {
        let body = alloc::format!("{complete}\n");
        block_on(crate::ingest::ingest(body.as_bytes(), store, &config())).unwrap();
    };
    let store = IngestFirst { inner: racing.store, before_first_write: Cell::new(Some(&hook)) };
    let racing = Node { store, config: config(), now: Cell::new(NOW), requests: Cell::new(200) };
    assert_eq!(racing.tick().1, json!({"expired_requests": 0}));
    assert_eq!(racing.status("alice", "t-1").1, json!({"status": "completed", "transaction_id": "u-1"}));
}

/// A store whose reads of wallet requests lag its writes (a read replica).
struct LaggingReads(MemoryStore);

impl Store for LaggingReads {
    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        if key.first() == Some(&crate::storage::keys::WALLET_REQUEST) {
            return Ok(None);
        }
        self.0.get(key).await
    }
    async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.0.get_many(keys).await
    }
    async fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        self.0.scan(scan).await
    }
    async fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        self.0.write(batch).await
    }
    fn recall(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.0.recall(key)
    }
    fn remember(&self, key: &[u8], value: &[u8]) {
        self.0.remember(key, value);
    }
}

#[test]
fn a_claim_that_cannot_be_read_back_yet_is_being_processed() {
    let node = Node::over(LaggingReads(MemoryStore::new()));
    assert_eq!(node.submit("alice", &request_body("t-1", FAR_FUTURE)).0, 200);
    let (status, body) = node.submit("alice", &request_body("t-1", FAR_FUTURE));
    assert_eq!(status, 429, "{body}");
    assert!(body["error"].as_str().unwrap().contains("being processed"));
}

#[test]
fn tracking_ids_with_reserved_characters_are_percent_decoded_in_the_status_path() {
    let node = Node::new();
    assert_eq!(node.submit("alice", &request_body("a/b c", FAR_FUTURE)).0, 200);
    assert_eq!(node.status("alice", "a%2Fb%20c").1, json!({"status": "created"}));
    assert_eq!(node.status("alice", "%zz").0, 400);
}

#[test]
fn the_token_is_checked_before_a_bad_tracking_id_in_the_status_path() {
    let node = Node::new();
    let long = "t".repeat(513);
    for tracking_id in ["%zz", long.as_str()] {
        let path = alloc::format!("/v0/wallet/buy-traffic-requests/{tracking_id}/status");
        for auth in [None, Some("not-a-token")] {
            let (status, body) = node.send(Method::Post, &path, auth, None);
            assert_eq!(status, 401, "{tracking_id} {auth:?}: {body}");
        }
        let (status, body) = node.status("alice", tracking_id);
        assert_eq!(status, 400, "{body}");
        assert!(body["error"].as_str().unwrap().contains("tracking_id"), "{body}");
    }
}

/// A created request of `user` with `tracking_id`, due at `expires_at`.
fn stored_request(user: &str, tracking_id: &str, expires_at: i64) -> BuyTrafficRecord {
    BuyTrafficRecord {
        tracking_id: tracking_id.into(),
        user_id: user.into(),
        request_contract_id: alloc::format!("00{user}{tracking_id}"),
        receiving_validator_party_id: "validator::1".into(),
        domain_id: "sync::1".into(),
        traffic_amount: 1000,
        expires_at,
        created_at: 1,
        state: State::Created,
    }
}

/// Puts a request's record (as `value`) and its entry in the created index straight
/// into the store, as an earlier build or a corrupted backend might have left them.
fn put_raw(store: &MemoryStore, record: &BuyTrafficRecord, value: &[u8]) {
    let mut batch = WriteBatch::new();
    batch.put(record.key(), value.to_vec()).put(record.index_key(), record.key());
    store.write_now(&batch).unwrap();
}

fn tick_report(node: &Node) -> crate::state::wallet::outcome::TickReport {
    let env = Env { now: Timestamp::from_micros(node.now.get()).unwrap(), entropy: [0; 32], config: &node.config };
    block_on(crate::state::wallet::outcome::tick(&env, &node.store)).unwrap()
}

#[test]
fn tick_skips_an_unreadable_record_and_expires_the_others() {
    let node = Node::new();
    for tracking_id in ["a", "b", "c"] {
        assert_eq!(node.submit("alice", &request_body(tracking_id, 1_000)).0, 200);
    }
    put_raw(&node.store, &stored_request("mallory", "corrupt", 500), b"{not json");
    // The tick's answer is its count alone; the skipped record is in the log.
    let response = node.respond(Method::Post, "/v0/admin/tick", Some(ADMIN), None);
    assert_eq!(response.status, 200);
    assert_eq!(serde_json::from_slice::<Json>(&response.body).unwrap(), json!({"expired_requests": 3}));
    let log = response.log.unwrap();
    assert!(
        log.starts_with(
            "skipped the wallet request of user \"mallory\" with tracking_id \"corrupt\": its record is unreadable"
        ),
        "{log}"
    );
    assert_eq!(log.lines().count(), 1);
    for tracking_id in ["a", "b", "c"] {
        assert_eq!(node.status("alice", tracking_id).1["status"], "failed");
    }
    // The record is left as it was, and skipped again by the next tick.
    let report = tick_report(&node);
    assert_eq!(report.expired_requests, 0);
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(serde_json::to_value(&report).unwrap(), json!({"expired_requests": 0}));
    // The admin list answers without it, and names it in the log.
    let response = node.respond(Method::Get, "/v0/admin/wallet/buy-traffic-requests", Some(ADMIN), None);
    assert_eq!(response.status, 200);
    let body: Json = serde_json::from_slice(&response.body).unwrap();
    let listed: Vec<&str> =
        body["requests"].as_array().unwrap().iter().map(|r| r["tracking_id"].as_str().unwrap()).collect();
    assert_eq!(listed, ["a", "b", "c"]);
    assert!(response.log.unwrap().contains("\"corrupt\": its record is unreadable"));
    let response = node.respond(Method::Get, "/v0/admin/wallet/buy-traffic-requests?status=created", Some(ADMIN), None);
    assert_eq!(
        (response.status, serde_json::from_slice::<Json>(&response.body).unwrap()),
        (200, json!({"requests": []}))
    );
    assert!(response.log.unwrap().contains("\"corrupt\""));
    // Without anything skipped, there is no log.
    assert_eq!(
        node.respond(Method::Get, "/v0/admin/wallet/buy-traffic-requests?status=failed", Some(ADMIN), None).log,
        None
    );
}

#[test]
fn an_index_entry_without_its_record_is_skipped_and_left_alone() {
    let node = Node::new();
    assert_eq!(node.submit("alice", &request_body("a", 1_000)).0, 200);
    let orphan = stored_request("bob", "gone", 500);
    node.store.write_now(WriteBatch::new().put(orphan.index_key(), orphan.key())).unwrap();
    let report = tick_report(&node);
    assert_eq!(report.expired_requests, 1);
    assert_eq!(
        report.skipped,
        ["skipped the wallet request of user \"bob\" with tracking_id \"gone\": it is indexed but not recorded"]
    );
    assert!(node.store.get_now(&orphan.index_key()).is_some());
}

#[test]
fn the_tick_moves_past_a_page_of_skipped_records_within_one_tick() {
    let node = Node::new();
    let corrupt = crate::state::wallet::outcome::TICK_PAGE as i64 + 6;
    for i in 0..corrupt {
        put_raw(&node.store, &stored_request("mallory", &alloc::format!("bad-{i:03}"), 10 + i), b"[]");
    }
    for i in 0..3 {
        assert_eq!(node.submit("alice", &request_body(&alloc::format!("t-{i}"), 1_000 + i)).0, 200);
    }
    let report = tick_report(&node);
    assert_eq!(report.expired_requests, 3);
    assert_eq!(report.skipped.len(), corrupt as usize);
    assert_eq!(node.list("?status=created").1["requests"], json!([]));
}

/// A store that counts scans and remembers the largest limit asked for.
struct Counting {
    inner: MemoryStore,
    scans: Cell<u32>,
    largest_limit: Cell<u32>,
    /// The limit of every scan, in order.
    limits: core::cell::RefCell<Vec<u32>>,
}

impl Store for Counting {
    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get(key).await
    }
    async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.inner.get_many(keys).await
    }
    async fn scan(&self, scan: &Scan) -> Result<Vec<Entry>, StoreError> {
        self.scans.set(self.scans.get() + 1);
        self.largest_limit.set(self.largest_limit.get().max(scan.limit));
        self.limits.borrow_mut().push(scan.limit);
        self.inner.scan(scan).await
    }
    async fn write(&self, batch: &WriteBatch) -> Result<(), WriteError> {
        self.inner.write(batch).await
    }
    fn recall(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.inner.recall(key)
    }
    fn remember(&self, key: &[u8], value: &[u8]) {
        self.inner.remember(key, value);
    }
}

#[test]
fn the_admin_list_reads_in_pages_up_to_its_limit() {
    let store = Counting {
        inner: MemoryStore::new(),
        scans: Cell::new(0),
        largest_limit: Cell::new(0),
        limits: Default::default(),
    };
    let total = super::LIST_LIMIT as usize + 5;
    for i in 0..total {
        let record = stored_request("alice", &alloc::format!("t-{i:04}"), FAR_FUTURE);
        put_raw(&store.inner, &record, &record.to_bytes().unwrap());
    }
    let node = Node::over(store);
    for query in ["", "?status=created"] {
        node.store.scans.set(0);
        let (status, body) = node.list(query);
        assert_eq!(status, 200);
        assert_eq!(body["requests"].as_array().unwrap().len(), super::LIST_LIMIT as usize, "{query}");
        assert_eq!(node.store.scans.get(), super::LIST_LIMIT / super::LIST_PAGE, "{query}");
    }
    assert_eq!(node.store.largest_limit.get(), super::LIST_PAGE);
}

#[test]
fn the_tick_reads_small_pages_and_leaves_what_is_over_its_rounds_to_the_next_tick() {
    let store = Counting {
        inner: MemoryStore::new(),
        scans: Cell::new(0),
        largest_limit: Cell::new(0),
        limits: Default::default(),
    };
    let per_tick = crate::state::wallet::outcome::TICK_PAGE as usize * crate::state::wallet::outcome::TICK_ROUNDS;
    for i in 0..per_tick + 10 {
        let record = stored_request("alice", &alloc::format!("t-{i:05}"), 1_000);
        put_raw(&store.inner, &record, &record.to_bytes().unwrap());
    }
    let node = Node::over(store);
    assert_eq!(node.tick().1, json!({"expired_requests": per_tick}));
    // Expiry pages are small; only the read-only count of what is pending (at the end)
    // reads larger ones.
    use crate::state::wallet::outcome::{PENDING_PAGE, TICK_PAGE};
    let limits = node.store.limits.take();
    let expiring = limits.iter().take_while(|limit| **limit != PENDING_PAGE).count();
    assert!(limits[..expiring].iter().all(|limit| *limit <= TICK_PAGE), "{limits:?}");
    assert!(limits[expiring..].iter().all(|limit| *limit == PENDING_PAGE), "{limits:?}");
    assert_eq!(node.tick().1, json!({"expired_requests": 10}));
}

#[test]
fn requests_with_huge_tracking_ids_are_refused_and_every_tick_still_succeeds() {
    // Regression: a 900 KB tracking id was recorded, and then every tick failed.
    let node = Node::new();
    let huge = "t".repeat(900_000);
    for i in 0..20 {
        let (status, body) = node.submit("alice", &request_body(&alloc::format!("{huge}{i}"), 1_000));
        assert_eq!(status, 400);
        assert_eq!(
            body["error"],
            alloc::format!(
                "tracking_id is {} bytes long; ids are at most 512 bytes",
                900_000 + alloc::format!("{i}").len()
            )
        );
    }
    assert_eq!(node.submit("alice", &request_body("due", 1_000)).0, 200);
    assert_eq!(node.list("").1["requests"].as_array().unwrap().len(), 1);
    // The status path is measured after decoding, and names the parameter.
    let (status, body) = node.status("alice", &"%74".repeat(513));
    assert_eq!(status, 400);
    assert_eq!(body["error"], "tracking_id is 513 bytes long; ids are at most 512 bytes");
    // One recorded by an earlier build is skipped, briefly named, and the others expire.
    put_raw(
        &node.store,
        &stored_request("alice", &huge, 500),
        &stored_request("alice", &huge, 500).to_bytes().unwrap(),
    );
    let response = node.respond(Method::Post, "/v0/admin/tick", Some(ADMIN), None);
    assert_eq!(
        (response.status, serde_json::from_slice::<Json>(&response.body).unwrap()),
        (200, json!({"expired_requests": 1}))
    );
    let log = response.log.unwrap();
    assert!(log.len() < 300, "{log}");
    assert!(log.ends_with("its tracking_id is over 512 bytes (recorded before ids were bounded)"), "{log}");
    assert_eq!(node.tick(), (200, json!({"expired_requests": 0})));
}

#[test]
fn ids_of_512_bytes_are_accepted_by_submit_and_status() {
    let node = Node::new();
    let tracking_id = "t".repeat(512);
    assert_eq!(node.submit("alice", &request_body(&tracking_id, FAR_FUTURE)).0, 200);
    assert_eq!(node.status("alice", &tracking_id), (200, json!({"status": "created"})));
    for field in ["receiving_validator_party_id", "domain_id"] {
        let mut body = request_body("t-2", FAR_FUTURE);
        body[field] = json!("x".repeat(513));
        let (status, body) = node.submit("alice", &body);
        assert_eq!(status, 400);
        assert_eq!(body["error"], alloc::format!("{field} is 513 bytes long; ids are at most 512 bytes"));
    }
}

#[test]
fn a_token_whose_subject_is_over_512_bytes_is_401() {
    let node = Node::new();
    let (status, body) = node.submit(&"u".repeat(513), &request_body("t-1", FAR_FUTURE));
    assert_eq!(status, 401);
    assert_eq!(body["error"], "the token's subject (sub) is 513 bytes long; ids are at most 512 bytes");
}

#[test]
fn two_authorization_headers_are_refused_for_wallet_and_admin_calls() {
    let node = Node::new();
    let valid = alloc::format!("Bearer {}", token("alice"));
    for (method, target, credential) in [
        (Method::Post, "/v0/wallet/buy-traffic-requests", valid.clone()),
        (Method::Post, "/v0/wallet/buy-traffic-requests/t-1/status", valid),
        (Method::Post, "/v0/admin/tick", alloc::format!("Bearer {ADMIN}")),
    ] {
        let mut request = Request::new(method, target);
        request.headers.push(("authorization".into(), credential.clone()));
        request.headers.push(("Authorization".into(), credential));
        request.body = Body::Complete(request_body("t-1", FAR_FUTURE).to_string().into_bytes());
        let env = Env { now: Timestamp::from_micros(NOW).unwrap(), entropy: [7; 32], config: &node.config };
        let response = block_on(handle(&request, &env, &node.store));
        assert_eq!(response.status, 401, "{target}");
        let body: Json = serde_json::from_slice(&response.body).unwrap();
        assert!(body["error"].as_str().unwrap().starts_with("more than one Authorization header"), "{body}");
    }
    assert_eq!(node.list("").1["requests"], json!([]));
}

/// Puts a created request's record and every index entry of it straight into the
/// store, as a submission writes them (without a submission's cost).
fn put_created(store: &MemoryStore, record: &BuyTrafficRecord) {
    let mut batch = WriteBatch::new();
    batch.put(record.key(), record.to_bytes().unwrap());
    for index_key in record.index_keys() {
        batch.put(index_key, record.key());
    }
    store.write_now(&batch).unwrap();
}

#[test]
fn one_users_backlog_of_due_requests_does_not_hold_up_anyone_elses_expiry() {
    let node = Node::new();
    // Alice has three ticks' worth of due requests, all due before Bob's.
    let per_tick = crate::state::wallet::outcome::TICK_PAGE as usize * crate::state::wallet::outcome::TICK_ROUNDS;
    for i in 0..3 * per_tick {
        put_created(&node.store, &stored_request("alice", &alloc::format!("t-{i:05}"), 1_000 + i as i64));
    }
    assert_eq!(node.submit("bob", &request_body("mine", NOW - 1)).0, 200);
    node.tick();
    assert_eq!(node.status("bob", "mine").1["status"], "failed", "Bob's request waits behind Alice's");
    assert_eq!(node.list("?status=created").1["requests"].as_array().unwrap().len(), super::LIST_LIMIT as usize);
}

#[test]
fn the_tick_goes_round_the_users_so_every_ones_due_requests_expire_within_a_few_ticks() {
    let node = Node::new();
    let per_tick = crate::state::wallet::outcome::TICK_PAGE as usize * crate::state::wallet::outcome::TICK_ROUNDS;
    for i in 0..3 * per_tick {
        put_created(&node.store, &stored_request("alice", &alloc::format!("t-{i:05}"), 1_000 + i as i64));
    }
    // More users than one tick visits, each with one request due after all of Alice's.
    let users: Vec<String> =
        (0..crate::state::wallet::outcome::TICK_USERS + 6).map(|n| alloc::format!("u{n:03}")).collect();
    for user in &users {
        put_created(&node.store, &stored_request(user, "mine", NOW - 1));
    }
    let created = |user: &str| {
        let key = crate::state::wallet::record::record_key(user, "mine");
        let record = BuyTrafficRecord::from_bytes(&node.store.get_now(&key).unwrap()).unwrap();
        record.state == State::Created
    };
    // The first tick visits Alice and the users after her, as many as it may.
    node.tick();
    let waiting: Vec<&String> = users.iter().filter(|u| created(u)).collect();
    assert_eq!(waiting, users[crate::state::wallet::outcome::TICK_USERS - 1..].iter().collect::<Vec<_>>());
    // The next goes on from there, and round to the start.
    node.tick();
    assert!(
        users.iter().all(|u| !created(u)),
        "still waiting: {:?}",
        users.iter().filter(|u| created(u)).collect::<Vec<_>>()
    );
    assert!(!node.list("?status=created").1["requests"].as_array().unwrap().is_empty(), "Alice's backlog is left");
}

#[test]
fn the_tick_reports_the_requests_still_pending_after_its_expiries() {
    let node = Node::new();
    assert_eq!(tick_report(&node).pending_requests, 0);
    node.submit("alice", &request_body("due", NOW - 1));
    node.submit("alice", &request_body("later", FAR_FUTURE));
    node.submit("bob", &request_body("later", FAR_FUTURE));
    let report = tick_report(&node);
    assert_eq!((report.expired_requests, report.pending_requests), (1, 2));
    // Counted for the operator, not answered to the caller.
    assert_eq!(serde_json::to_value(&report).unwrap(), json!({"expired_requests": 1}));
    node.now.set(FAR_FUTURE + 1);
    let report = tick_report(&node);
    assert_eq!((report.expired_requests, report.pending_requests), (2, 0));
}

#[test]
fn the_pending_count_reads_every_page_up_to_its_limit() {
    use crate::state::wallet::outcome::{PENDING_LIMIT, PENDING_PAGE};
    let node = Node::new();
    let over = PENDING_LIMIT + u64::from(PENDING_PAGE) + 5;
    let mut batch = WriteBatch::new();
    for i in 0..over {
        let record = stored_request("alice", &alloc::format!("t-{i:06}"), FAR_FUTURE);
        batch.put(record.index_key(), record.key());
        if i == u64::from(PENDING_PAGE) + 2 {
            node.store.write_now(&batch).unwrap();
            assert_eq!(tick_report(&node).pending_requests, i + 1);
        }
    }
    node.store.write_now(&batch).unwrap();
    assert_eq!(tick_report(&node).pending_requests, PENDING_LIMIT);
}
