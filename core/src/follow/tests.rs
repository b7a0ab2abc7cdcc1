use alloc::borrow::ToOwned;
use alloc::string::ToString;
use alloc::vec;

use serde_json::{Value, json};

use super::*;
use crate::api::export::Hosting;
use crate::model::config::Config;
use crate::model::env::Env;
use crate::model::time::Timestamp;
use crate::service::handle;
use crate::storage::exec::block_on;
use crate::storage::store::MemoryStore;

const TOKEN: &str = "admin-token";

/// A node over a memory store, reached through its handler with the admin token.
struct Node {
    store: MemoryStore,
    config: Config,
}

impl Node {
    fn new() -> Self {
        Node { store: MemoryStore::new(), config: Config { admin_token: Some(TOKEN.into()), ..Config::default() } }
    }

    fn answer(&self, mut request: Request) -> Response {
        request.headers.push(("authorization".into(), format!("Bearer {TOKEN}")));
        let env = Env { now: Timestamp::UNIX_EPOCH, entropy: [7; 32], config: &self.config };
        block_on(handle(&request, &env, &self.store))
    }

    fn call(&self, method: Method, target: &str, body: &str) -> (u16, String) {
        let mut request = Request::new(method, target);
        request.body = Body::Complete(body.as_bytes().to_vec());
        let response = self.answer(request);
        (response.status, String::from_utf8(response.body).expect("a UTF-8 body"))
    }

    fn ingest(&self, records: &[Value]) {
        let batch: Vec<String> = records.iter().map(Value::to_string).collect();
        let (status, body) = self.call(Method::Post, "/v0/admin/ingest", &batch.join("\n"));
        assert_eq!(status, 200, "{body}");
    }
}

impl Link for Node {
    async fn send(&self, request: Request) -> Result<Response, String> {
        Ok(self.answer(request))
    }
}

fn created(update_id: &str, n: u32, contract_id: &str, blob: Option<&str>) -> (String, Value) {
    let event_id = format!("{update_id}:{n}");
    let mut event = json!({
        "event_type": "created_event",
        "event_id": event_id,
        "contract_id": contract_id,
        "template_id": "pkg0:Platform.Coin:Coin",
        "package_name": "platform",
        "create_arguments": {"record": {"fields": [{"label": "owner", "value": {"party": "alice::1220"}}]}},
        "created_at": "2024-01-01T00:00:00.000000Z",
        "signatories": ["dso::1220"],
        "observers": []
    });
    if let Some(blob) = blob {
        event["created_event_blob"] = json!(blob);
    }
    (event_id, event)
}

fn archived(update_id: &str, n: u32, contract_id: &str) -> (String, Value) {
    let event_id = format!("{update_id}:{n}");
    let event = json!({
        "event_type": "exercised_event",
        "event_id": event_id,
        "contract_id": contract_id,
        "template_id": "pkg0:Platform.Coin:Coin",
        "package_name": "platform",
        "choice": "Archive",
        "choice_argument": {"record": {}},
        "child_event_ids": [],
        "exercise_result": {"unit": {}},
        "consuming": true,
        "acting_parties": ["alice::1220"]
    });
    (event_id, event)
}

fn update(id: &str, migration_id: i64, record_time: &str, events: Vec<(String, Value)>) -> Value {
    let roots: Vec<&String> = events.iter().map(|(id, _)| id).collect();
    let by_id: serde_json::Map<String, Value> = events.iter().cloned().collect();
    json!({"update": {
        "update_id": id,
        "migration_id": migration_id,
        "workflow_id": "",
        "record_time": record_time,
        "synchronizer_id": "global-domain::1220aa",
        "effective_at": record_time,
        "root_event_ids": roots,
        "events_by_id": by_id,
    }})
}

const IMPORT_TIME: &str = "0001-01-01T00:00:00.000000Z";

/// A history of two migrations: blobs on active, archived and imported contracts, a
/// group of two updates at one record time, import updates, and every network record.
fn history() -> Vec<Value> {
    vec![
        update(
            "u-a",
            0,
            "2024-01-01T00:00:01.000000Z",
            vec![created("u-a", 0, "c-a", Some("AAEC")), created("u-a", 1, "c-b", Some("AAED"))],
        ),
        update("u-b", 0, "2024-01-01T00:00:02.000000Z", vec![archived("u-b", 0, "c-a")]),
        update("u-c", 0, "2024-01-01T00:00:02.000000Z", vec![created("u-c", 0, "c-c", None)]),
        update("00i1", 1, IMPORT_TIME, vec![created("00i1", 0, "00i1", Some("AAEF"))]),
        update("00i2", 1, IMPORT_TIME, vec![created("00i2", 0, "00i2", Some("AAEA"))]),
        update("u-d", 1, "2024-01-02T00:00:00.000000Z", vec![created("u-d", 0, "c-d", Some("AQID"))]),
        json!({"topology": {"synchronizer_id": "s1", "party_id": "p1", "participant_ids": ["n1"]}}),
        json!({"topology": {"synchronizer_id": "s1", "party_id": "p2", "participant_ids": ["n1", "n2"]}}),
        json!({"backfill": {"migration_id": 0, "complete": true, "import_updates_complete": true}}),
        json!({"roll_forward_lsu": {
            "upgradeTime": "2025-01-01T00:00:00Z",
            "currentPhysicalSynchronizerId": "global-domain::1220aa::1",
            "successorPhysicalSynchronizerId": "global-domain::1220aa::2"
        }}),
    ]
}

/// Requests whose answers must be the same on a follower as on its upstream.
fn reads() -> Vec<(Method, String, String)> {
    let mut reads = Vec::new();
    for id in ["u-a", "u-b", "u-c", "00i1", "00i2", "u-d"] {
        for version in ["v1", "v2"] {
            for encoding in ["compact_json", "protobuf_json"] {
                let target = format!("/{version}/updates/{id}?daml_value_encoding={encoding}");
                reads.push((Method::Get, target, String::new()));
            }
        }
    }
    for version in ["v1", "v2"] {
        for encoding in ["compact_json", "protobuf_json"] {
            let body = format!(r#"{{"page_size": 1000, "daml_value_encoding": "{encoding}"}}"#);
            reads.push((Method::Post, format!("/{version}/updates"), body));
        }
    }
    for migration_id in [0, 1] {
        let body = format!(r#"{{"migration_id": {migration_id}, "after_update_id": "", "limit": 1000}}"#);
        reads.push((Method::Post, "/v0/backfilling/import-updates".into(), body));
        reads.push((
            Method::Post,
            "/v0/backfilling/migration-info".into(),
            format!(r#"{{"migration_id": {migration_id}}}"#),
        ));
    }
    let contracts = r#"{"contract_ids": ["c-a", "c-b", "c-c", "c-d", "00i1", "00i2"]}"#;
    reads.push((Method::Post, "/v0/admin/export/blobs".into(), contracts.into()));
    reads.push((Method::Post, "/v0/admin/export/state".into(), String::new()));
    for target in [
        "/v0/backfilling/status",
        "/v0/roll-forward-lsu",
        "/v1/domains/s1/parties/p1/participant-id",
        "/v1/domains/s1/parties/p3/participant-id",
    ] {
        reads.push((Method::Get, target.into(), String::new()));
    }
    reads
}

fn assert_same(upstream: &Node, follower: &Node) {
    for (method, target, body) in reads() {
        let (theirs, ours) =
            (upstream.call(method.clone(), &target, &body), follower.call(method.clone(), &target, &body));
        assert_eq!(theirs, ours, "{} {target} {body}", method.as_str());
    }
}

fn upstream() -> Node {
    let node = Node::new();
    node.ingest(&history());
    node
}

#[test]
fn a_follower_answers_every_read_as_its_upstream_does() {
    let (upstream, follower) = (upstream(), Node::new());
    let report = block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
    assert!(report.caught_up);
    assert_eq!(report.summary.applied.update, 6);
    assert_eq!(
        report.position,
        Some(Position { after_migration_id: 1, after_record_time: "2024-01-02T00:00:00.000000Z".into() })
    );
    assert_same(&upstream, &follower);
    // The archived contract's blob is not kept anywhere; the others came across.
    let (_, blobs) =
        follower.call(Method::Post, "/v0/admin/export/blobs", r#"{"contract_ids": ["c-a", "c-b", "00i1"]}"#);
    assert_eq!(
        blobs,
        r#"{"blobs":[{"contract_id":"c-b","created_event_blob":"AAED"},{"contract_id":"00i1","created_event_blob":"AAEF"}]}"#
    );
    // Nothing new upstream: a second call applies nothing.
    let again = block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
    assert_eq!((again.caught_up, again.pages, again.summary.applied.update), (true, 0, 0));
    assert_eq!(again.summary.unchanged, 1, "the last group is read again, and found unchanged");
}

/// A link to a node that notes the contract ids asked of its blob export.
struct Noting<'a> {
    node: &'a Node,
    asked: core::cell::RefCell<Vec<String>>,
}

impl Link for Noting<'_> {
    async fn send(&self, request: Request) -> Result<Response, String> {
        if request.path == "/v0/admin/export/blobs"
            && let Body::Complete(body) = &request.body
        {
            let body: Value = serde_json::from_slice(body).expect("a JSON body");
            let ids = body["contract_ids"].as_array().expect("contract ids").iter();
            self.asked.borrow_mut().extend(ids.map(|id| id.as_str().expect("an id").to_owned()));
        }
        Ok(self.node.answer(request))
    }
}

#[test]
fn a_contract_archived_within_its_page_is_not_asked_for_and_one_archived_later_is() {
    let upstream = upstream();
    // One page holds c-a's creation (u-a) and archive (u-b): nothing to ask for it.
    let (noting, follower) = (Noting { node: &upstream, asked: Default::default() }, Node::new());
    block_on(sync(&noting, &follower, &Limits::default())).expect("following");
    assert_eq!(noting.asked.into_inner(), ["c-b", "c-c", "c-d", "00i1", "00i2"]);
    assert_same(&upstream, &follower);
    // Pages of one update: c-a's page does not show its archive, so it is asked for,
    // and the upstream has no blob for it.
    let (noting, follower) = (Noting { node: &upstream, asked: Default::default() }, Node::new());
    let limits = Limits { page_size: 1, ..Limits::default() };
    while !block_on(sync(&noting, &follower, &limits)).expect("following").caught_up {}
    assert!(noting.asked.borrow().contains(&"c-a".to_owned()), "{:?}", noting.asked);
    assert_same(&upstream, &follower);
}

#[test]
fn a_follower_of_a_follower_and_one_page_at_a_time_end_the_same() {
    let (upstream, first, second) = (upstream(), Node::new(), Node::new());
    block_on(sync(&upstream, &first, &Limits::default())).expect("following");
    let limits = Limits { page_size: 1, max_pages: 1, ..Limits::default() };
    let mut calls = 0;
    while !block_on(sync(&first, &second, &limits)).expect("following").caught_up {
        calls += 1;
        assert!(calls < 20, "never caught up");
    }
    // Pages of one: u-a, the group u-b and u-c whole, the imports one by one, u-d.
    assert_eq!(calls, 5);
    assert_same(&upstream, &second);
}

#[test]
fn pipelined_pages_in_any_budget_end_the_same() {
    let upstream = upstream();
    for (page_size, max_pages) in [(1, 1), (1, 2), (1, 3), (2, 5), (500, u32::MAX)] {
        let follower = Node::new();
        let limits = Limits { page_size, max_pages, pipelined: true, ..Limits::default() };
        let mut calls = 0;
        while !block_on(sync(&upstream, &follower, &limits)).expect("following").caught_up {
            calls += 1;
            assert!(calls < 20, "never caught up with pages of {page_size}, {max_pages} a call");
        }
        assert_same(&upstream, &follower);
    }
}

#[test]
fn a_blob_lost_upstream_since_is_no_conflict_when_the_last_group_is_read_again() {
    let history = history();
    let (upstream, follower) = (Node::new(), Node::new());
    // The follower takes u-a with the blob of c-a; then the upstream archives c-a,
    // and no longer has that blob when the follower reads u-a's group again.
    upstream.ingest(&history[..1]);
    block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
    upstream.ingest(&history[1..]);
    let report = block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
    assert_eq!(report.summary.unchanged, 1, "u-a read again");
    assert_same(&upstream, &follower);
}

/// `update` on `synchronizer` instead.
fn on(synchronizer: &str, mut update: Value) -> Value {
    update["update"]["synchronizer_id"] = json!(synchronizer);
    update
}

/// Updates of migrations 0 and 1, on the usual synchronizer and on another, from
/// before everything of [`history`] in their migration, with a group of three at
/// one record time.
fn earlier() -> Vec<Value> {
    vec![
        update("e-1", 0, "2023-06-01T00:00:00.000000Z", vec![created("e-1", 0, "c-e1", Some("AAEB"))]),
        update("e-2", 0, "2023-07-01T00:00:00.000000Z", vec![created("e-2", 0, "c-e2", None)]),
        update("e-3", 0, "2023-07-01T00:00:00.000000Z", vec![created("e-3", 0, "c-e3", None)]),
        update("e-4", 0, "2023-07-01T00:00:00.000000Z", vec![archived("e-4", 0, "c-e1")]),
        on("other::1220bb", update("e-5", 0, "2023-08-01T00:00:00.000000Z", vec![created("e-5", 0, "c-e5", None)])),
        update("e-6", 1, "2024-01-01T12:00:00.000000Z", vec![created("e-6", 0, "c-e6", Some("AAEC"))]),
    ]
}

fn stream_ids(node: &Node) -> Vec<String> {
    let (_, page) = node.call(Method::Post, "/v2/updates", r#"{"page_size": 1000}"#);
    let page: Value = serde_json::from_str(&page).expect("a page");
    page["transactions"].as_array().expect("items").iter().map(|i| i["update_id"].as_str().unwrap().into()).collect()
}

#[test]
fn history_the_upstream_backfills_behind_the_follower_comes_across() {
    for limits in [
        Limits::default(),
        Limits { page_size: 1, max_pages: 1, ..Limits::default() },
        Limits { page_size: 2, max_pages: 3, pipelined: true, ..Limits::default() },
    ] {
        let (upstream, follower) = (upstream(), Node::new());
        block_on(sync(&upstream, &follower, &limits)).expect("following");
        while !block_on(sync(&upstream, &follower, &limits)).expect("following").caught_up {}
        upstream.ingest(&earlier());
        let mut calls = 0;
        loop {
            let report = block_on(sync(&upstream, &follower, &limits)).expect("following");
            if report.caught_up {
                break;
            }
            calls += 1;
            assert!(calls < 30, "never caught up with {limits:?}");
        }
        assert_same(&upstream, &follower);
        let ids = stream_ids(&follower);
        assert_eq!(ids, ["e-1", "e-2", "e-3", "e-4", "e-5", "u-a", "u-b", "u-c", "e-6", "u-d"], "{limits:?}");
        for id in ["e-1", "e-4", "e-5", "e-6"] {
            let target = format!("/v2/updates/{id}");
            assert_eq!(upstream.call(Method::Get, &target, ""), follower.call(Method::Get, &target, ""));
        }
    }
}

/// A link to a node that ingests `late` into it when first asked for migration info,
/// as if they arrived while the follower compared its history with the upstream's.
struct Growing<'a> {
    node: &'a Node,
    late: core::cell::RefCell<Vec<Value>>,
}

impl Link for Growing<'_> {
    async fn send(&self, request: Request) -> Result<Response, String> {
        if request.path == "/v0/backfilling/migration-info" {
            let late = core::mem::take(&mut *self.late.borrow_mut());
            if !late.is_empty() {
                self.node.ingest(&late);
            }
        }
        Ok(self.node.answer(request))
    }
}

#[test]
fn updates_the_upstream_adds_at_its_end_meanwhile_are_left_to_the_stream() {
    let (upstream, follower) = (upstream(), Node::new());
    // The second lands on a synchronizer the follower holds nothing of: looking back
    // from its latest update would take it, and the stream would then start after
    // it, past the first.
    let late = vec![
        update("l-1", 1, "2024-02-01T00:00:00.000000Z", vec![created("l-1", 0, "c-l1", None)]),
        on("other::1220bb", update("l-2", 1, "2024-02-02T00:00:00.000000Z", vec![created("l-2", 0, "c-l2", None)])),
    ];
    let growing = Growing { node: &upstream, late: late.into() };
    block_on(sync(&growing, &follower, &Limits::default())).expect("following");
    assert!(!stream_ids(&follower).contains(&"l-2".to_owned()), "taken from behind: {:?}", stream_ids(&follower));
    block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
    assert_same(&upstream, &follower);
    assert_eq!(stream_ids(&follower).last().map(String::as_str), Some("l-2"));
    assert!(stream_ids(&follower).contains(&"l-1".to_owned()));
}

#[test]
fn hosting_changes_and_removals_come_across() {
    let (upstream, follower) = (upstream(), Node::new());
    block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
    upstream.ingest(&[
        json!({"topology": {"synchronizer_id": "s1", "party_id": "p1", "participant_ids": []}}),
        json!({"topology": {"synchronizer_id": "s1", "party_id": "p2", "participant_ids": ["n2"]}}),
        json!({"topology": {"synchronizer_id": "s1", "party_id": "p3", "participant_ids": ["n3"]}}),
        json!({"roll_forward_lsu": null}),
    ]);
    let report = block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
    assert_eq!((report.summary.applied.topology, report.summary.applied.roll_forward_lsu), (3, 1));
    assert_same(&upstream, &follower);
}

#[test]
fn an_update_that_conflicts_with_one_held_stops_the_follower_with_nothing_of_its_page_applied() {
    let (upstream, follower) = (upstream(), Node::new());
    let mut other = update("u-c", 0, "2024-01-01T00:00:02.000000Z", vec![created("u-c", 0, "c-c", None)]);
    other["update"]["workflow_id"] = json!("elsewhere");
    follower.ingest(&[other]);
    let error = block_on(sync(&upstream, &follower, &Limits::default())).expect_err("a conflict");
    let message = error.to_string();
    assert!(
        message.contains("(409)") && message.contains("u-c") && message.contains("nothing of it was applied"),
        "{message}"
    );
    // u-b came in the same page, in the group of the update held.
    assert_eq!(follower.call(Method::Get, "/v2/updates/u-b", "").0, 404);
}

/// An upstream that answers `POST /v2/updates` with `answer` and forwards the rest.
struct Faulty<'a> {
    upstream: &'a Node,
    answer: Result<(u16, &'static str), &'static str>,
}

impl Link for Faulty<'_> {
    async fn send(&self, request: Request) -> Result<Response, String> {
        if request.path != "/v2/updates" {
            return self.upstream.send(request).await;
        }
        let (status, body) = self.answer.map_err(String::from)?;
        Ok(Response::json(status, body.as_bytes().to_vec()))
    }
}

#[test]
fn upstream_failures_stop_the_follower_with_a_message_naming_them() {
    let upstream = upstream();
    type Answer = Result<(u16, &'static str), &'static str>;
    let cases: [(Answer, &str); 4] = [
        (Err("connection refused"), "the upstream: POST /v2/updates: connection refused"),
        (
            Ok((503, r#"{"error": "the store cannot be read"}"#)),
            "the upstream answered POST /v2/updates with 503: the store cannot be read",
        ),
        (Ok((200, r#"{"items": []}"#)), "the upstream answered POST /v2/updates with a malformed body"),
        (
            Ok((200, r#"{"transactions": [{"update_id": "x"}]}"#)),
            "the upstream's POST /v2/updates answered a malformed page: item 0",
        ),
    ];
    for (answer, expected) in cases {
        let follower = Node::new();
        let error = block_on(sync(&Faulty { upstream: &upstream, answer }, &follower, &Limits::default()))
            .expect_err("a failure");
        assert!(error.to_string().starts_with(expected), "{error}");
        assert_eq!(follower.call(Method::Post, "/v2/updates", r#"{"page_size": 10}"#).1, r#"{"transactions":[]}"#);
    }
}

#[test]
fn an_upstream_that_refuses_the_export_names_the_token() {
    // The follower sends a token the upstream does not take.
    let stranger = Node { config: Config { admin_token: Some("another".into()), ..Config::default() }, ..upstream() };
    let error = block_on(sync(&stranger, &Node::new(), &Limits::default())).expect_err("a refusal");
    assert!(error.to_string().contains("401") && error.to_string().contains("admin token"), "{error}");
}

/// An upstream that answers some requests its own way (`answer`, given the request and
/// what the real upstream answers it) and forwards the rest; it stops answering after
/// `patience` requests, so a follower that would ask without end gets an error saying
/// so instead.
struct Hostile<'a, F> {
    upstream: &'a Node,
    answer: F,
    asked: core::cell::Cell<u32>,
    patience: u32,
}

const TIRED: &str = "the test's upstream stopped answering a follower that kept asking";

impl<'a, F: Fn(&Request, Response) -> Response> Hostile<'a, F> {
    fn new(upstream: &'a Node, patience: u32, answer: F) -> Self {
        Hostile { upstream, answer, asked: core::cell::Cell::new(0), patience }
    }
}

impl<F: Fn(&Request, Response) -> Response> Link for Hostile<'_, F> {
    async fn send(&self, request: Request) -> Result<Response, String> {
        self.asked.set(self.asked.get() + 1);
        if self.asked.get() > self.patience {
            return Err(TIRED.into());
        }
        let real = self.upstream.answer(request.clone());
        Ok((self.answer)(&request, real))
    }
}

#[test]
fn an_upstream_that_answers_indented_json_is_followed_the_same() {
    let upstream = upstream();
    let indented = Hostile::new(&upstream, 1_000, |_, mut real| {
        if let Ok(value) = serde_json::from_slice::<Value>(&real.body) {
            real.body = serde_json::to_vec_pretty(&value).expect("JSON");
        }
        real
    });
    let follower = Node::new();
    let report = block_on(sync(&indented, &follower, &Limits::default())).expect("following");
    assert!(report.caught_up);
    assert_eq!(report.summary.applied.update, 6);
    assert_same(&upstream, &follower);
}

fn request_json(request: &Request) -> Value {
    match &request.body {
        Body::Complete(body) if !body.is_empty() => serde_json::from_slice(body).expect("a JSON body"),
        _ => json!({}),
    }
}

fn json_response(value: &Value) -> Response {
    Response::json(200, value.to_string().into_bytes())
}

/// `response`, an export state page, with `topology` and `topology_next` instead.
fn with_hosting(response: Response, topology: Vec<Hosting>, next: Option<HostingKey>) -> Response {
    let mut state: State = serde_json::from_slice(&response.body).expect("a state page");
    state.topology = topology;
    state.topology_next = next;
    json_response(&serde_json::to_value(&state).expect("a state"))
}

fn hosting(party: u32) -> Hosting {
    Hosting {
        synchronizer_id: "s9".into(),
        party_id: format!("p{party:08}"),
        participant_ids: vec!["n1".into()],
        learned_at: None,
    }
}

#[test]
fn an_upstream_that_pages_hosting_without_moving_on_stops_the_follower_naming_the_request() {
    let upstream = upstream();
    // Every page, whatever it was asked from, is the same one, with a next page.
    let same_page = Hostile::new(&upstream, 300, |request: &Request, real| {
        if request.path != "/v0/admin/export/state" {
            return real;
        }
        with_hosting(real, vec![hosting(1)], Some(hosting(1).key()))
    });
    let error = block_on(sync(&same_page, &Node::new(), &Limits::default())).expect_err("a page that stays");
    let message = error.to_string();
    assert!(
        message.starts_with(
            "the upstream answered POST /v0/admin/export/state for hosting records after (s9, p00000001) \
             with a page that does not move on: (s9, p00000001) is not after (s9, p00000001)"
        ),
        "{message}"
    );
    // Pages with a next page but no records.
    let empty_pages = Hostile::new(&upstream, 300, |request: &Request, real| {
        if request.path != "/v0/admin/export/state" {
            return real;
        }
        with_hosting(real, vec![], Some(hosting(1).key()))
    });
    let error = block_on(sync(&empty_pages, &Node::new(), &Limits::default())).expect_err("pages without records");
    let message = error.to_string();
    assert!(
        message.starts_with(
            "the upstream answered POST /v0/admin/export/state for hosting records from the start \
             with a page that does not move on: no records, and topology_next (s9, p00000001)"
        ),
        "{message}"
    );
}

#[test]
fn hosting_from_an_upstream_that_pages_without_end_is_applied_as_it_comes() {
    let upstream = upstream();
    // Pages of 1000 new hosting records each, without end.
    let endless = Hostile::new(&upstream, 60, |request: &Request, real| {
        if request.path != "/v0/admin/export/state" {
            return real;
        }
        let start = match request_json(request)["topology_after"]["party_id"].as_str() {
            Some(party) => party[1..].parse::<u32>().expect("a party of the test") + 1,
            None => 0,
        };
        let page: Vec<Hosting> = (start..start + 1000).map(hosting).collect();
        let next = page.last().map(Hosting::key);
        with_hosting(real, page, next)
    });
    let follower = Node::new();
    let error = block_on(sync(&endless, &follower, &Limits::default())).expect_err("the test's upstream tires");
    assert!(error.to_string().ends_with(TIRED), "{error}");
    // What came before it stopped is held: the records were not all kept to the end.
    for party in [0, 1000, 40_000] {
        let target = format!("/v1/domains/s9/parties/p{party:08}/participant-id");
        let (status, body) = follower.call(Method::Get, &target, "");
        assert_eq!((status, body.as_str()), (200, r#"{"participant_ids":["n1"]}"#), "{target}");
    }
}

/// An upstream whose migration info names `previous(m)` as the migration before each
/// migration `m`; it holds no update of a migration before 0.
fn with_previous(
    upstream: &Node,
    patience: u32,
    previous: impl Fn(i64) -> i64,
) -> Hostile<'_, impl Fn(&Request, Response) -> Response> {
    Hostile::new(upstream, patience, move |request: &Request, real: Response| {
        if request.path != "/v0/backfilling/migration-info" {
            return real;
        }
        let migration_id = request_json(request)["migration_id"].as_i64().expect("a migration id");
        let mut info: Value = if migration_id < 0 {
            json!({"migration_id": migration_id, "complete": true, "import_updates_complete": true, "record_time_range": []})
        } else {
            serde_json::from_slice(&real.body).expect("migration info")
        };
        info["previous_migration_id"] = json!(previous(migration_id));
        json_response(&info)
    })
}

#[test]
fn an_upstream_whose_migrations_go_round_stops_the_follower_naming_the_request() {
    let upstream = upstream();
    /// The migration an upstream names as the one before `m`.
    type Previous = fn(i64) -> i64;
    let itself: Previous = |m| m;
    let the_other: Previous = |m| 1 - m;
    for (previous, named) in [
        (itself, "for migration 1 with previous_migration_id 1, which is not an earlier migration"),
        (the_other, "for migration 0 with previous_migration_id 1, which is not an earlier migration"),
    ] {
        let follower = Node::new();
        block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
        let hostile = with_previous(&upstream, 300, previous);
        let error = block_on(sync(&hostile, &follower, &Limits::default())).expect_err("a walk that goes round");
        let message = error.to_string();
        assert_eq!(message, format!("the upstream answered POST /v0/backfilling/migration-info {named}"));
    }
}

#[test]
fn an_upstream_whose_migrations_go_back_without_end_stops_the_follower_naming_the_request() {
    let upstream = upstream();
    let follower = Node::new();
    block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
    let hostile = with_previous(&upstream, 5000, |m| m - 1);
    let error = block_on(sync(&hostile, &follower, &Limits::default())).expect_err("a walk without end");
    let message = error.to_string();
    assert!(
        message.starts_with("the upstream answered POST /v0/backfilling/migration-info for migration ")
            && message.ends_with("after 1000 migrations; a node holds at most 1000"),
        "{message}"
    );
}

#[test]
fn an_upstream_whose_stream_page_goes_back_stops_the_follower_naming_the_request() {
    let upstream = upstream();
    // Every stream page is u-b then u-a, an earlier update: after it the position is
    // u-a's, from where the same page comes again.
    let (_, page) =
        upstream.call(Method::Post, "/v2/updates", r#"{"page_size": 10, "daml_value_encoding": "protobuf_json"}"#);
    let page: Value = serde_json::from_str(&page).expect("a page");
    let items = page["transactions"].as_array().expect("items");
    let backwards = json!({"transactions": [items[1], items[0]]});
    let hostile =
        Hostile::new(
            &upstream,
            300,
            |request: &Request, real| {
                if request.path == "/v2/updates" { json_response(&backwards) } else { real }
            },
        );
    let error = block_on(sync(&hostile, &Node::new(), &Limits::default())).expect_err("a page that goes back");
    assert_eq!(
        error.to_string(),
        "the upstream answered POST /v2/updates with update u-a of migration 0 at 2024-01-01T00:00:01.000000Z \
         after update u-b of migration 0 at 2024-01-01T00:00:02.000000Z: a page's updates must ascend by \
         migration id and record time"
    );
}

#[test]
fn an_upstream_whose_import_updates_do_not_move_on_stops_the_follower_naming_the_request() {
    let upstream = upstream();
    // The first page of migration 1's import updates, whatever it is asked after.
    let (_, page) = upstream.call(
        Method::Post,
        "/v0/backfilling/import-updates",
        r#"{"migration_id": 1, "after_update_id": "", "limit": 1}"#,
    );
    let first: Value = serde_json::from_str(&page).expect("a page");
    let hostile = Hostile::new(&upstream, 300, |request: &Request, real| {
        if request.path == "/v0/backfilling/import-updates" { json_response(&first) } else { real }
    });
    let limits = Limits { page_size: 1, ..Limits::default() };
    let error = block_on(sync(&hostile, &Node::new(), &limits)).expect_err("a page that stays");
    assert_eq!(
        error.to_string(),
        r#"the upstream answered POST /v0/backfilling/import-updates for migration 1 after "00i1" with a page ending at "00i1", which is not after it"#
    );
}

/// A link to a node that answers as the network's Scan nodes do: no admin or export
/// endpoints (404), no `created_event_blob` in any update it renders, and its
/// `protobuf_json` values without record labels. `tamper` rewrites what it answers.
struct Scan<'a> {
    node: &'a Node,
    tamper: fn(String) -> String,
}

impl<'a> Scan<'a> {
    fn new(node: &'a Node) -> Self {
        Scan { node, tamper: |body| body }
    }
}

impl Link for Scan<'_> {
    async fn send(&self, request: Request) -> Result<Response, String> {
        if request.path.starts_with("/v0/admin/") {
            return Ok(Response::json(404, br#"{"error":"not found"}"#.to_vec()));
        }
        let updates = request.path.starts_with("/v2/updates")
            || request.path.starts_with("/v1/updates")
            || request.path.starts_with("/v0/backfilling/import-updates")
            || request.path.starts_with("/v0/backfilling/updates-before");
        let protobuf = request.path.starts_with("/v0/backfilling/")
            || request.query.contains("protobuf_json")
            || request_json(&request)["daml_value_encoding"] == "protobuf_json";
        let mut response = self.node.answer(request);
        if updates && response.status == 200 {
            let mut body: Value = serde_json::from_slice(&response.body).expect("a JSON body");
            strip(&mut body, protobuf);
            response.body = (self.tamper)(body.to_string()).into_bytes();
        }
        Ok(response)
    }
}

/// Removes every `created_event_blob`, and every record field's `label` when `labels`.
fn strip(value: &mut Value, labels: bool) {
    match value {
        Value::Object(object) => {
            object.shift_remove("created_event_blob");
            if labels
                && object.contains_key("value")
                && object.len() == 2
                && object.get("label").is_some_and(Value::is_string)
            {
                object.shift_remove("label");
            }
            object.values_mut().for_each(|v| strip(v, labels));
        }
        Value::Array(values) => values.iter_mut().for_each(|v| strip(v, labels)),
        _ => {}
    }
}

fn contract(update_id: &str, record_time: &str, cid: &str, template: &str, fields: Value, blob: &str) -> Value {
    let event_id = format!("{update_id}:0");
    let event = json!({
        "event_type": "created_event", "event_id": event_id, "contract_id": cid,
        "template_id": format!("pkg0:{template}"), "package_name": "platform",
        "create_arguments": {"record": {"fields": fields}},
        "created_at": record_time, "signatories": ["dso::1220"], "observers": [],
        "created_event_blob": blob
    });
    update(update_id, 1, record_time, vec![(event_id, event)])
}

/// An update creating a locked coin and the transfer instruction that holds it.
fn transfer() -> Value {
    let at = "2024-01-03T00:00:02.000000Z";
    let mut locked = contract("u-ti", at, "locked", "Platform.Coin:LockedCoin", json!([]), "AQED");
    let ti = contract(
        "u-ti",
        at,
        "ti",
        "Platform.CoinTransferInstruction:CoinTransferInstruction",
        json!([{"label": "lockedCoin", "value": {"contractId": "locked"}}]),
        "AQEE",
    );
    let mut event = ti["update"]["events_by_id"]["u-ti:0"].clone();
    event["event_id"] = json!("u-ti:1");
    locked["update"]["events_by_id"]["u-ti:1"] = event;
    locked["update"]["root_event_ids"] = json!(["u-ti:0", "u-ti:1"]);
    locked
}

/// The history of [`history`], and the contracts the registry discloses, with values of
/// every shape the labels must be carried through.
fn disclosing_history() -> Vec<Value> {
    let mut records = history();
    let nested = json!([
        {"label": "dso", "value": {"party": "dso::1220"}},
        {"label": "config", "value": {"optional": {"value": {"optional": {"value": {"record": {"fields": [
            {"label": "fee", "value": {"numeric": "0.0300000000"}},
            {"label": "steps", "value": {"list": {"elements": [{"variant": {"constructor": "Step", "value": {"record": {"fields": [
                {"label": "at", "value": {"timestamp": "1704067200000000"}}
            ]}}}}]}}},
            {"label": "names", "value": {"textMap": {"entries": [{"key": "k", "value": {"record": {"fields": [{"label": "day", "value": {"date": 19723}}]}}}]}}},
            {"label": "byKey", "value": {"genMap": {"entries": [{"key": {"record": {"fields": [{"label": "n", "value": {"int64": "1"}}]}}, "value": {"enum": {"constructor": "On"}}}]}}}
        ]}}}}}}}
    ]);
    records.extend([
        contract("u-rules", "2024-01-03T00:00:00.000000Z", "rules", "Platform.CoinRules:CoinRules", nested, "AQEB"),
        contract(
            "u-round",
            "2024-01-03T00:00:01.000000Z",
            "round-1",
            "Platform.Round:OpenMiningRound",
            json!([
                {"label": "round", "value": {"record": {"fields": [{"label": "number", "value": {"int64": "1"}}]}}},
                {"label": "opensAt", "value": {"timestamp": "0"}},
                {"label": "targetClosesAt", "value": {"timestamp": "600000000"}},
                {"label": "tickDuration", "value": {"record": {"fields": [
                    {"label": "microseconds", "value": {"int64": "150000000"}}
                ]}}}
            ]),
            "AQEC",
        ),
        // The locked coin and the instruction are created by one transaction, as on the network.
        transfer(),
    ]);
    records
}

/// The reads a public follower must answer as its upstream: every read of [`reads`]
/// but the export endpoints and party hosting (not copied in public mode), and the
/// Scan contract endpoints and the registry context, blobs included.
fn public_reads() -> Vec<(Method, String, String)> {
    let mut reads: Vec<_> = reads()
        .into_iter()
        .filter(|(_, target, _)| !target.starts_with("/v0/admin/") && !target.contains("/parties/"))
        .collect();
    for id in ["u-rules", "u-round", "u-ti"] {
        for encoding in ["compact_json", "protobuf_json"] {
            reads.push((Method::Get, format!("/v2/updates/{id}?daml_value_encoding={encoding}"), String::new()));
        }
    }
    for target in ["/v0/coin-rules", "/registry/transfer-instruction/v2/ti/choice-contexts/accept"] {
        reads.push((Method::Post, target.into(), "{}".into()));
    }
    reads.push((Method::Post, "/v0/open-and-issuing-mining-rounds".into(), ROUNDS.into()));
    reads
}

const ROUNDS: &str = r#"{"cached_open_mining_round_contract_ids":[],"cached_issuing_round_contract_ids":[]}"#;

fn assert_same_public(upstream: &Node, follower: &Node) {
    for (method, target, body) in public_reads() {
        let (theirs, ours) =
            (upstream.call(method.clone(), &target, &body), follower.call(method.clone(), &target, &body));
        if !target.contains("/updates") && !target.starts_with("/v0/backfilling/") && !target.starts_with("/v0/roll") {
            assert!(theirs.0 == 200 && theirs.1.contains("AQE"), "a read that shows blobs: {theirs:?}");
        }
        assert_eq!(theirs, ours, "{} {target} {body}", method.as_str());
    }
}

fn disclosing_upstream() -> Node {
    let node = Node::new();
    node.ingest(&disclosing_history());
    node
}

#[test]
fn a_follower_of_a_public_scan_answers_every_read_as_its_upstream_does() {
    let upstream = disclosing_upstream();
    let follower = Node::new();
    let report = block_on(sync(&Scan::new(&upstream), &follower, &Limits::default())).expect("following");
    assert!(report.caught_up && report.public);
    assert_eq!(report.summary.applied.update, 9);
    assert_eq!(report.upstream_record_time.as_deref(), Some("2024-01-03T00:00:02.000000Z"));
    assert_same_public(&upstream, &follower);
    // A page at a time ends the same.
    let paged = Node::new();
    let limits = Limits { page_size: 1, max_pages: 2, ..Limits::default() };
    while !block_on(sync(&Scan::new(&upstream), &paged, &limits)).expect("following").caught_up {}
    assert_same_public(&upstream, &paged);
}

#[test]
fn an_upstream_tampering_with_an_update_is_outvoted_by_the_others_and_reported() {
    let upstream = disclosing_upstream();
    let honest = Scan::new(&upstream);
    let tampering = Scan { node: &upstream, tamper: |body| body.replace("dso::1220", "mallory::1220") };
    let upstreams = [Scan::new(&upstream), tampering, honest, Scan::new(&upstream)];
    let follower = Node::new();
    let report = block_on(sync_all(&upstreams, &follower, &Limits::default())).expect("following");
    assert!(report.caught_up);
    assert_same_public(&upstream, &follower);
    let tampered: Vec<&Disagreement> = report.disagreements.iter().filter(|d| d.upstreams == [1]).collect();
    assert!(!tampered.is_empty(), "{:?}", report.disagreements);
    assert!(tampered.iter().any(|d| d.update_ids.iter().any(|id| id == "u-rules")), "{:?}", report.disagreements);
    assert!(report.disagreements.iter().all(|d| d.upstreams == [1]), "{:?}", report.disagreements);
}

#[test]
fn without_enough_upstreams_agreeing_the_disputed_update_is_never_applied() {
    let upstream = disclosing_upstream();
    let tampering = Scan { node: &upstream, tamper: |body| body.replace("\"lockedCoin\"", "\"stolenCoin\"") };
    let upstreams = [Scan::new(&upstream), tampering];
    let follower = Node::new();
    let limits = Limits { agree: Some(2), ..Limits::default() };
    let error = block_on(sync_all(&upstreams, &follower, &limits)).expect_err("no quorum");
    assert!(error.to_string().contains("no 2 of the 2 upstreams"), "{error}");
    assert!(error.to_string().contains("u-ti"), "{error}");
    let (status, _) = follower.call(Method::Get, "/v2/updates/u-ti", "");
    assert_eq!(status, 404);
    // The updates before it, which both sent alike, were applied.
    let (status, _) = follower.call(Method::Get, "/v2/updates/u-round", "");
    assert_eq!(status, 200);
}

/// What `link` answers `GET target`.
fn get_from(link: &impl Link, target: &str) -> (u16, String) {
    let response = block_on(link.send(Request::new(Method::Get, target))).expect("an answer");
    (response.status, String::from_utf8(response.body).expect("a UTF-8 body"))
}

/// The reads of update `id` by id, in each version and encoding.
fn update_reads(id: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for version in ["v1", "v2"] {
        for encoding in ["compact_json", "protobuf_json"] {
            targets.push(format!("/{version}/updates/{id}?daml_value_encoding={encoding}"));
        }
    }
    targets
}

#[test]
fn a_value_the_upstream_could_not_decode_is_stored_and_served_in_both_encodings_as_the_upstream_did() {
    let upstream = disclosing_upstream();
    // The transfer instruction's arguments, as the network renders a value its codec
    // cannot decode: the fallback object in compact_json, the typed value without
    // labels in protobuf_json.
    let fallback = Scan {
        node: &upstream,
        tamper: |body| body.replace(r#""lockedCoin":"locked""#, r#""error":"no codec for ti","value":["locked"]"#),
    };
    let follower = Node::new();
    let report = block_on(sync(&fallback, &follower, &Limits::default())).expect("following");
    assert!(report.caught_up);
    let compact = "/v2/updates/u-ti?daml_value_encoding=compact_json";
    let (status, theirs) = get_from(&fallback, compact);
    assert!(status == 200 && theirs.contains(r#""create_arguments":{"error":"no codec for ti","value":["locked"]}"#));
    assert_eq!(follower.call(Method::Get, compact, ""), (200, theirs), "compact_json, byte for byte");
    let protobuf = "/v2/updates/u-ti?daml_value_encoding=protobuf_json";
    let theirs: Value = serde_json::from_str(&get_from(&fallback, protobuf).1).expect("an update");
    let value = theirs["events_by_id"]["u-ti:1"]["create_arguments"].to_string();
    assert_eq!(value, r#"{"record":{"fields":[{"value":{"contractId":"locked"}}]}}"#, "no label");
    let (status, ours) = follower.call(Method::Get, protobuf, "");
    assert!(status == 200 && ours.contains(&format!(r#""create_arguments":{value},"#)), "{ours}");
    // The stream pages show it the same way.
    for encoding in ["compact_json", "protobuf_json"] {
        let body = format!(r#"{{"page_size": 1000, "daml_value_encoding": "{encoding}"}}"#);
        let (_, page) = follower.call(Method::Post, "/v2/updates", &body);
        let expected =
            if encoding == "compact_json" { r#"{"error":"no codec for ti","value":["locked"]}"# } else { &value };
        assert!(page.contains(&format!(r#""create_arguments":{expected},"#)), "{encoding}: {page}");
    }
    // Following again finds it unchanged; a follower of the follower, with its token,
    // serves it as the follower does.
    let again = block_on(sync(&fallback, &follower, &Limits::default())).expect("following");
    assert_eq!((again.summary.applied.update, again.summary.unchanged), (0, 1));
    let second = Node::new();
    block_on(sync(&follower, &second, &Limits::default())).expect("following a follower");
    for target in update_reads("u-ti").iter().chain(&update_reads("u-round")) {
        assert_eq!(follower.call(Method::Get, target, ""), second.call(Method::Get, target, ""), "{target}");
    }
}

#[test]
fn an_undecoded_value_ingested_again_is_unchanged_and_with_another_rendering_a_conflict() {
    let node = Node::new();
    let record = |error: &str| {
        let mut record = update("u-x", 0, "2024-01-01T00:00:01.000000Z", vec![created("u-x", 0, "c-x", None)]);
        record["update"]["events_by_id"]["u-x:0"]["create_arguments"] = json!({"undecoded": {
            "protobuf_json": {"record": {"fields": [{"value": {"party": "alice::1220"}}]}},
            "compact_json": {"error": error, "value": ["alice::1220"]},
        }});
        record.to_string()
    };
    let (status, body) = node.call(Method::Post, "/v0/admin/ingest", &record("no codec"));
    assert_eq!(status, 200, "{body}");
    let (_, compact) = node.call(Method::Get, "/v2/updates/u-x?daml_value_encoding=compact_json", "");
    assert!(compact.contains(r#""create_arguments":{"error":"no codec","value":["alice::1220"]}"#), "{compact}");
    let (_, typed) = node.call(Method::Get, "/v2/updates/u-x?daml_value_encoding=protobuf_json", "");
    assert!(typed.contains(r#""create_arguments":{"record":{"fields":[{"value":{"party":"alice::1220"}}]}}"#));
    let (status, body) = node.call(Method::Post, "/v0/admin/ingest", &record("no codec"));
    assert!(status == 200 && body.contains(r#""unchanged":1"#), "{body}");
    let (status, body) = node.call(Method::Post, "/v0/admin/ingest", &record("another reason"));
    assert!(status == 409 && body.contains("u-x"), "{body}");
}

/// A public upstream whose registry serves no choice contexts.
struct WithoutRegistry<'a>(Scan<'a>);

impl Link for WithoutRegistry<'_> {
    async fn send(&self, request: Request) -> Result<Response, String> {
        if request.path.starts_with("/registry/") {
            return Ok(Response::json(404, br#"{"error":"not found"}"#.to_vec()));
        }
        self.0.send(request).await
    }
}

#[test]
fn a_context_needing_a_blob_the_upstream_never_disclosed_is_a_503_naming_the_contract() {
    let upstream = disclosing_upstream();
    let follower = Node::new();
    block_on(sync(&WithoutRegistry(Scan::new(&upstream)), &follower, &Limits::default())).expect("following");
    let (status, body) =
        follower.call(Method::Post, "/registry/transfer-instruction/v2/ti/choice-contexts/accept", "{}");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("contract locked (Platform.Coin:LockedCoin)"), "{body}");
    // The coin rules and the open round came from the contract endpoints all the same.
    for (target, body) in [("/v0/coin-rules", "{}"), ("/v0/open-and-issuing-mining-rounds", ROUNDS)] {
        assert_eq!(upstream.call(Method::Post, target, body), follower.call(Method::Post, target, body), "{target}");
    }
}

/// A link to a node that notes the update ids of every ingest batch it is sent, in
/// order.
struct Recording<'a> {
    node: &'a Node,
    ids: core::cell::RefCell<Vec<String>>,
}

impl<'a> Recording<'a> {
    fn new(node: &'a Node) -> Self {
        Recording { node, ids: Default::default() }
    }

    /// The ids noted so far, and forgets them.
    fn take(&self) -> Vec<String> {
        self.ids.take()
    }
}

impl Link for Recording<'_> {
    async fn send(&self, request: Request) -> Result<Response, String> {
        let response = self.node.answer(request.clone());
        if request.path == "/v0/admin/ingest"
            && response.status == 200
            && let Body::Complete(body) = &request.body
        {
            for line in body.split(|b| *b == b'\n').filter(|line| !line.is_empty()) {
                let record: Value = serde_json::from_slice(line).expect("an ingest line");
                if let Some(id) = record["update"]["update_id"].as_str() {
                    self.ids.borrow_mut().push(id.into());
                }
            }
        }
        Ok(response)
    }
}

fn backfilling_complete(node: &Node) -> bool {
    let (status, body) = node.call(Method::Get, "/v0/backfilling/status", "");
    assert_eq!(status, 200, "{body}");
    serde_json::from_str::<Value>(&body).expect("a status")["complete"].as_bool().expect("complete")
}

/// `node` with [`earlier`] history and a backfill record for every migration, so that
/// its history is whole.
fn whole(node: Node) -> Node {
    node.ingest(&earlier());
    node.ingest(&[json!({"backfill": {"migration_id": 1, "complete": true, "import_updates_complete": true}})]);
    assert!(backfilling_complete(&node));
    node
}

#[test]
fn a_follower_started_at_the_current_migration_takes_its_imports_and_newest_updates_then_backfills_the_rest() {
    for public in [false, true] {
        // A public upstream discloses blobs; its newest update is u-ti.
        let (upstream, newest) = match public {
            true => (whole(disclosing_upstream()), "u-ti"),
            false => (whole(upstream()), "u-d"),
        };
        let (follower, scan) = (Node::new(), Scan::new(&upstream));
        let local = Recording::new(&follower);
        let limits = Limits { start: Start::Current, page_size: 1, max_pages: 1, ..Limits::default() };
        let step = |limits: &Limits| match public {
            true => block_on(sync(&scan, &local, limits)).expect("following"),
            false => block_on(sync(&upstream, &local, limits)).expect("following"),
        };
        // The current migration's import updates, one a call, then its newest update.
        for expected in ["00i1", "00i2", newest] {
            assert!(!step(&limits).caught_up);
            assert_eq!(local.take(), [expected], "public: {public}");
            assert!(!backfilling_complete(&follower), "the history before is not in yet");
        }
        // Then the history before it, newest first: the rest of migration 1, then
        // migration 0 going back from its newest updates, a group whole.
        let mut calls = 0;
        let mut backfilled = Vec::new();
        while !step(&limits).caught_up {
            backfilled.extend(local.take());
            calls += 1;
            assert!(calls < 40, "never caught up");
        }
        backfilled.extend(local.take());
        let position = |id: &str| backfilled.iter().position(|b| b == id).unwrap_or_else(|| panic!("{id} taken"));
        assert!(position("e-6") < position("u-c") && position("u-c") < position("u-a"), "{backfilled:?}");
        assert!(position("u-a") < position("e-1"), "{backfilled:?}");
        assert!(backfilling_complete(&follower), "whole once backfilled");
        match public {
            true => assert_same_public(&upstream, &follower),
            false => assert_same(&upstream, &follower),
        }
        assert_eq!(stream_ids(&follower), stream_ids(&upstream));
    }
}

#[test]
fn a_follower_that_holds_updates_goes_on_from_its_position_whatever_its_start() {
    let upstream = whole(upstream());
    // Started from genesis and stopped after its first update: started again at the
    // current migration, it goes on with the stream after it.
    let follower = Node::new();
    let local = Recording::new(&follower);
    let one = Limits { page_size: 1, max_pages: 1, ..Limits::default() };
    block_on(sync(&upstream, &local, &one)).expect("following");
    assert_eq!(local.take(), ["e-1"]);
    block_on(sync(&upstream, &local, &Limits { start: Start::Current, ..one.clone() })).expect("following");
    assert_eq!(local.take(), ["e-1", "e-2", "e-3", "e-4"], "its last update read again, then the group after it");
    // Started at the current migration and stopped after its newest update: started
    // again from genesis, it backfills rather than take the stream from its beginning.
    let follower = Node::new();
    let local = Recording::new(&follower);
    for _ in 0..3 {
        block_on(sync(&upstream, &local, &Limits { start: Start::Current, ..one.clone() })).expect("following");
    }
    assert_eq!(local.take(), ["00i1", "00i2", "u-d"]);
    block_on(sync(&upstream, &local, &one)).expect("following");
    assert_eq!(local.take(), ["u-d", "e-6"], "its last update read again, then the newest before it");
    while !block_on(sync(&upstream, &local, &Limits::default())).expect("following").caught_up {}
    assert_same(&upstream, &follower);
}

#[test]
fn the_start_is_named_current_or_genesis() {
    assert_eq!("current".parse::<Start>(), Ok(Start::Current));
    assert_eq!("genesis".parse::<Start>(), Ok(Start::Genesis));
    assert_eq!(Start::default(), Start::Genesis);
    assert_eq!("now".parse::<Start>(), Err("the start is `current` or `genesis`, not \"now\"".into()));
}

/// A link that counts the hosting lookups (`participant-id` reads) sent through it, by
/// version, and answers those of `lie_about` with another participant.
struct Lookups<L> {
    inner: L,
    v0: core::cell::Cell<u32>,
    v1: core::cell::Cell<u32>,
    lie_about: Option<&'static str>,
}

impl<L> Lookups<L> {
    fn new(inner: L) -> Self {
        Lookups { inner, v0: Default::default(), v1: Default::default(), lie_about: None }
    }

    /// The v0 and v1 lookups since the last call.
    fn take(&self) -> (u32, u32) {
        (self.v0.take(), self.v1.take())
    }
}

impl<L: Link> Link for Lookups<L> {
    async fn send(&self, request: Request) -> Result<Response, String> {
        if request.path.ends_with("/participant-id") {
            let counter = if request.path.starts_with("/v0/") { &self.v0 } else { &self.v1 };
            counter.set(counter.get() + 1);
            if let Some(party) = self.lie_about
                && request.path.contains(party)
            {
                return Ok(Response::json(200, br#"{"participant_id":"mallory::1220"}"#.to_vec()));
            }
        }
        self.inner.send(request).await
    }
}

const GLOBAL: &str = "global-domain::1220aa";

/// [`disclosing_history`] with an update that shows alice and bob, and the hosting of
/// the DSO party (two participants) and alice; bob is hosted nowhere.
fn hosting_upstream() -> Node {
    let node = disclosing_upstream();
    let mut shown = update("u-h", 1, "2024-01-04T00:00:00.000000Z", vec![created("u-h", 0, "c-h", None)]);
    shown["update"]["events_by_id"]["u-h:0"]["observers"] = json!(["alice::1220", "bob::1220"]);
    node.ingest(&[
        shown,
        json!({"topology": {"synchronizer_id": GLOBAL, "party_id": "dso::1220", "participant_ids": ["n2", "n3"]}}),
        json!({"topology": {"synchronizer_id": GLOBAL, "party_id": "alice::1220", "participant_ids": ["n1"]}}),
    ]);
    node
}

/// Asserts that `follower` answers the hosting of every party the history shows as
/// `upstream` does.
fn assert_same_hosting(upstream: &Node, follower: &Node) {
    for party in ["dso::1220", "alice::1220", "bob::1220"] {
        for version in ["v0", "v1"] {
            let target = format!("/{version}/domains/{GLOBAL}/parties/{party}/participant-id");
            assert_eq!(upstream.call(Method::Get, &target, ""), follower.call(Method::Get, &target, ""), "{target}");
        }
    }
}

/// `seconds` after the Unix epoch.
fn at(seconds: i64) -> Timestamp {
    Timestamp::from_micros(seconds * 1_000_000).expect("a time")
}

#[test]
fn a_public_follower_learns_the_hosting_of_the_parties_it_sees_and_asks_again_after_its_lifetime() {
    let upstream = hosting_upstream();
    let scan = Lookups::new(Scan::new(&upstream));
    let follower = Node::new();
    let limits = |now: i64| Limits { now: at(now), ..Limits::default() };
    let report = block_on(sync(&scan, &follower, &limits(1_000))).expect("following");
    assert!(report.caught_up);
    // Three parties seen, on the one synchronizer seen: the DSO party's two
    // participants asked again of v1, bob's 404 remembered.
    assert_eq!(scan.take(), (3, 1));
    assert_same_hosting(&upstream, &follower);
    let (status, _) = follower.call(Method::Get, &format!("/v0/domains/{GLOBAL}/parties/bob::1220/participant-id"), "");
    assert_eq!(status, 404);
    // Within the lifetime nothing is asked again, and a change upstream lags.
    upstream.ingest(&[
        json!({"topology": {"synchronizer_id": GLOBAL, "party_id": "alice::1220", "participant_ids": ["n9"]}}),
        json!({"topology": {"synchronizer_id": GLOBAL, "party_id": "bob::1220", "participant_ids": ["n1"]}}),
    ]);
    block_on(sync(&scan, &follower, &limits(1_300))).expect("following");
    assert_eq!(scan.take(), (0, 0));
    let alice = format!("/v0/domains/{GLOBAL}/parties/alice::1220/participant-id");
    assert_eq!(follower.call(Method::Get, &alice, "").1, r#"{"participant_id":"n1"}"#);
    // Past it, every one is asked again, and the follower answers as the upstream.
    block_on(sync(&scan, &follower, &limits(1_301))).expect("following");
    assert_eq!(scan.take(), (3, 1));
    assert_same_hosting(&upstream, &follower);
    assert_eq!(follower.call(Method::Get, &alice, "").1, r#"{"participant_id":"n9"}"#);
}

#[test]
fn hosting_lookups_are_bounded_per_call_and_the_parties_seen_are_kept_for_the_next() {
    let upstream = hosting_upstream();
    let scan = Lookups::new(Scan::new(&upstream));
    let follower = Node::new();
    let limits = Limits { hosting_lookups: 1, now: at(1_000), ..Limits::default() };
    for _ in 0..3 {
        block_on(sync(&scan, &follower, &limits)).expect("following");
        assert_eq!(scan.take().0, 1, "one lookup a call");
    }
    assert_same_hosting(&upstream, &follower);
    block_on(sync(&scan, &follower, &limits)).expect("following");
    assert_eq!(scan.take(), (0, 0), "nothing left to ask");
}

#[test]
fn an_upstream_lying_about_a_hosting_is_outvoted_and_reported() {
    let upstream = hosting_upstream();
    let mut liar = Lookups::new(Scan::new(&upstream));
    liar.lie_about = Some("alice");
    let upstreams = [Lookups::new(Scan::new(&upstream)), liar, Lookups::new(Scan::new(&upstream))];
    let follower = Node::new();
    let limits = Limits { agree: Some(2), now: at(1_000), ..Limits::default() };
    let report = block_on(sync_all(&upstreams, &follower, &limits)).expect("following");
    assert_same_hosting(&upstream, &follower);
    let lied: Vec<&Disagreement> = report.disagreements.iter().filter(|d| d.request.contains("alice")).collect();
    assert_eq!(lied.len(), 1, "{:?}", report.disagreements);
    assert_eq!(lied[0].upstreams, [1]);
    // Without a quorum nothing is learned of it.
    let upstreams = [Lookups::new(Scan::new(&upstream)), upstreams.into_iter().nth(1).expect("the liar")];
    let follower = Node::new();
    let error = block_on(sync_all(&upstreams, &follower, &limits)).expect_err("no quorum");
    assert!(error.to_string().contains("alice::1220/participant-id"), "{error}");
    let (status, _) =
        follower.call(Method::Get, &format!("/v1/domains/{GLOBAL}/parties/alice::1220/participant-id"), "");
    assert_eq!(status, 404);
}

#[test]
fn a_follower_with_a_token_copies_learned_hostings_as_they_are() {
    let upstream = hosting_upstream();
    let (public, second) = (Node::new(), Node::new());
    block_on(sync(&Scan::new(&upstream), &public, &Limits { now: at(1_000), ..Limits::default() })).expect("following");
    block_on(sync(&public, &second, &Limits::default())).expect("following a follower");
    assert_same_hosting(&upstream, &second);
    let state = |node: &Node| node.call(Method::Post, "/v0/admin/export/state", "");
    assert_eq!(state(&public), state(&second));
    assert!(state(&second).1.contains(r#""learned_at":"1970-01-01T00:16:40.000000Z""#), "{}", state(&second).1);
}

/// An update of migration `migration_id` creating closed round `round` as contract `cid`
/// with `blob`: a contract that no request of a page's own discloses, only
/// `GET /v0/closed-rounds`.
fn closed_round(update_id: &str, migration_id: i64, record_time: &str, cid: &str, blob: &str) -> Value {
    let number =
        json!([{"label": "round", "value": {"record": {"fields": [{"label": "number", "value": {"int64": "3"}}]}}}]);
    let mut update = contract(update_id, record_time, cid, "Platform.Round:ClosedMiningRound", number, blob);
    update["update"]["migration_id"] = json!(migration_id);
    update
}

/// [`disclosing_upstream`] with closed round `closed-1` (blob `AQEF`), created in the
/// first migration.
fn upstream_with_a_closed_round() -> Node {
    let node = disclosing_upstream();
    node.ingest(&[closed_round("u-closed", 0, "2024-01-01T00:00:03.000000Z", "closed-1", "AQEF")]);
    node
}

/// The closed rounds `node` answers.
fn closed_rounds(node: &Node) -> String {
    let (status, body) = node.call(Method::Get, "/v0/closed-rounds", "");
    assert_eq!(status, 200, "{body}");
    body
}

#[test]
fn a_contract_created_before_a_follower_s_start_gets_its_blob_once_caught_up() {
    let upstream = whole(upstream_with_a_closed_round());
    let follower = Node::new();
    let limits = Limits { start: Start::Current, page_size: 1, max_pages: 1, ..Limits::default() };
    let mut calls = 0;
    while !block_on(sync(&Scan::new(&upstream), &follower, &limits)).expect("following").caught_up {
        calls += 1;
        assert!(calls < 40, "never caught up");
        // While the follower catches up, the round it holds waits for its blob.
        assert!(!closed_rounds(&follower).contains("AQEF"));
    }
    assert!(closed_rounds(&upstream).contains(r#""created_event_blob":"AQEF""#));
    assert_eq!(closed_rounds(&follower), closed_rounds(&upstream));
    assert_same_public(&upstream, &follower);
    // Nothing waits any more.
    let (_, sought) = follower.call(Method::Post, "/v0/admin/export/sought-blobs", "{}");
    assert_eq!(sought, r#"{"contracts":[],"next":null}"#);
}

/// A link to a Scan whose `GET /v0/closed-rounds` answers 404 while `hidden`, counting
/// those requests, and, when `forged`, shows another blob for every closed round.
struct ClosedRounds<'a> {
    scan: Scan<'a>,
    hidden: core::cell::Cell<bool>,
    forged: bool,
    asked: core::cell::Cell<u32>,
}

impl<'a> ClosedRounds<'a> {
    fn new(node: &'a Node) -> Self {
        ClosedRounds { scan: Scan::new(node), hidden: Default::default(), forged: false, asked: Default::default() }
    }
}

impl Link for ClosedRounds<'_> {
    async fn send(&self, request: Request) -> Result<Response, String> {
        if request.path != "/v0/closed-rounds" {
            return self.scan.send(request).await;
        }
        self.asked.set(self.asked.get() + 1);
        if self.hidden.get() {
            return Ok(Response::json(404, br#"{"error":"not found"}"#.to_vec()));
        }
        let mut response = self.scan.send(request).await?;
        if self.forged {
            response.body = String::from_utf8_lossy(&response.body).replace("AQEF", "AQEA").into_bytes();
        }
        Ok(response)
    }
}

#[test]
fn a_contract_no_endpoint_discloses_is_not_asked_again_before_its_lifetime() {
    let upstream = upstream_with_a_closed_round();
    let scan = ClosedRounds::new(&upstream);
    scan.hidden.set(true);
    let follower = Node::new();
    let limits = |now: i64| Limits { now: at(now), blob_lifetime_seconds: 300, ..Limits::default() };
    assert!(block_on(sync(&scan, &follower, &limits(1_000))).expect("following").caught_up);
    assert_eq!(scan.asked.take(), 1);
    assert!(closed_rounds(&follower).contains(r#""contract_id":"closed-1","payload""#));
    assert!(closed_rounds(&follower).contains(r#""created_event_blob":"""#), "kept without a blob");
    let (_, sought) = follower.call(Method::Post, "/v0/admin/export/sought-blobs", "{}");
    assert!(sought.contains(r#""contract_id":"closed-1""#) && sought.contains(r#""sought_at":"1970-01-01T00:16:40"#));
    // Within the lifetime it is not asked again, even once an endpoint would disclose it.
    scan.hidden.set(false);
    block_on(sync(&scan, &follower, &limits(1_299))).expect("following");
    assert_eq!(scan.asked.take(), 0);
    assert!(!closed_rounds(&follower).contains("AQEF"));
    // Past it, it is asked again, and takes its blob.
    block_on(sync(&scan, &follower, &limits(1_301))).expect("following");
    assert_eq!(scan.asked.take(), 1);
    assert_eq!(closed_rounds(&follower), closed_rounds(&upstream));
    block_on(sync(&scan, &follower, &limits(5_000))).expect("following");
    assert_eq!(scan.asked.take(), 0, "a contract that has its blob is asked for no more");
}

#[test]
fn a_blob_the_upstreams_disagree_on_is_not_taken_and_one_outvoted_is() {
    let upstream = upstream_with_a_closed_round();
    let honest = || ClosedRounds::new(&upstream);
    let forger = ClosedRounds { forged: true, ..ClosedRounds::new(&upstream) };
    // Two upstreams that must agree, one forging: nothing is taken, and following goes on.
    let follower = Node::new();
    let limits = Limits { agree: Some(2), ..Limits::default() };
    let report = block_on(sync_all(&[honest(), forger], &follower, &limits)).expect("following");
    assert!(report.caught_up);
    assert!(report.disagreements.iter().any(|d| d.request == "GET /v0/closed-rounds"), "{:?}", report.disagreements);
    let held = closed_rounds(&follower);
    assert!(!held.contains("AQEF") && !held.contains("AQEA"), "{held}");
    // Of three, two honest: the forger is outvoted, and the blob taken is the honest one.
    let forger = ClosedRounds { forged: true, ..ClosedRounds::new(&upstream) };
    let follower = Node::new();
    let report = block_on(sync_all(&[honest(), forger, honest()], &follower, &limits)).expect("following");
    let forged = report.disagreements.iter().find(|d| d.request == "GET /v0/closed-rounds").expect("the forger");
    assert_eq!(forged.upstreams, [1]);
    assert_eq!(closed_rounds(&follower), closed_rounds(&upstream));
}

#[test]
fn a_blob_record_gives_a_held_contract_its_blob_once_and_another_blob_is_a_conflict() {
    let node = Node::new();
    node.ingest(&[closed_round("u-closed", 0, "2024-01-01T00:00:03.000000Z", "closed-1", "AQEF")]);
    let mut without = closed_round("u-closed-2", 0, "2024-01-01T00:00:04.000000Z", "closed-2", "");
    without["update"]["events_by_id"]["u-closed-2:0"]
        .as_object_mut()
        .expect("an event")
        .shift_remove("created_event_blob");
    node.ingest(&[without]);
    let blob = |cid: &str, blob: &str| json!({"blob": {"contract_id": cid, "created_event_blob": blob}}).to_string();
    let ingest = |line: String| node.call(Method::Post, "/v0/admin/ingest", &line);
    // A contract held without a blob takes it, in every read that shows it.
    let (status, summary) = ingest(blob("closed-2", "AQEA"));
    assert_eq!((status, summary.contains(r#""blob":1"#)), (200, true), "{summary}");
    assert!(
        closed_rounds(&node)
            .contains(r#""contract_id":"closed-2","payload":{"round":{"number":"3"}},"created_event_blob":"AQEA""#)
    );
    // The same blob again changes nothing; another is a conflict; a contract not held
    // takes nothing.
    assert_eq!(
        ingest(blob("closed-2", "AQEA")).1,
        r#"{"applied":{"update":0,"topology":0,"backfill":0,"roll_forward_lsu":0,"wallet_user":0},"unchanged":0}"#
    );
    let (status, body) = ingest(blob("closed-1", "AQEB"));
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("contract closed-1 is held with another created-event blob"), "{body}");
    assert!(!ingest(blob("nowhere", "AQEB")).1.contains(r#""blob""#));
    let (status, body) = ingest(r#"{"blob": {"contract_id": "closed-2"}}"#.into());
    assert_eq!(status, 400, "{body}");
}
