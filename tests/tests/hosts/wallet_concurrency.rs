//! Exactly-once submission under concurrency: many submissions of
//! one tracking id at once, over HTTP, give exactly one 200 and one recorded request;
//! every other answer is a 409 or a 429. And the worker's cron trigger expires requests
//! like `POST /v0/admin/tick` does.

use serde_json::{Value, json};

use super::scenario::{ADMIN_TOKEN, Outgoing};
use super::targets::HttpClient;

/// An HS256 token (secret `test-hs256-secret`, the hosts' test configuration) for the
/// wallet user `alice`, expiring in 2099.
pub(super) const ALICE: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSIsImV4cCI6NDA3MDkwODgwMH0.ibqqgiITmv5mzwHPIk8p9RbVCCl4x-kXp_nGdRy0F5Q";

pub(super) fn request(method: &str, target: &str, bearer: &str, body: Option<&Value>) -> Outgoing {
    let mut headers = vec![("authorization".to_owned(), format!("Bearer {bearer}"))];
    if body.is_some() {
        headers.push(("content-type".to_owned(), "application/json".to_owned()));
    }
    Outgoing {
        method: method.into(),
        target: target.into(),
        headers,
        body: body.map(|b| serde_json::to_vec(b).expect("JSON serializes")).unwrap_or_default(),
    }
}

fn json_of(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(body)))
}

/// Onboards `alice` and hosts `validator::1220` once on `global-domain::1220aa`.
pub fn set_up(client: &HttpClient) {
    let records = [
        json!({"wallet_user": {"user_id": "alice", "party_id": "alice::1220"}}),
        json!({"topology": {"synchronizer_id": "global-domain::1220aa", "party_id": "validator::1220", "participant_ids": ["PAR::validator::1220bb"]}}),
    ];
    let body: String = records.iter().map(|r| r.to_string() + "\n").collect();
    let outgoing = Outgoing {
        method: "POST".into(),
        target: "/v0/admin/ingest".into(),
        headers: vec![("authorization".into(), format!("Bearer {ADMIN_TOKEN}"))],
        body: body.into_bytes(),
    };
    let received = client.send(&outgoing);
    assert_eq!(received.status, 200, "setting up: {}", String::from_utf8_lossy(&received.body));
}

pub(super) fn submission(tracking_id: &str, expires_at: i64) -> Value {
    json!({
        "receiving_validator_party_id": "validator::1220",
        "domain_id": "global-domain::1220aa",
        "traffic_amount": 1_000_000,
        "tracking_id": tracking_id,
        "expires_at": expires_at,
    })
}

/// The recorded requests with `tracking_id`, from the admin list.
fn recorded(client: &HttpClient, tracking_id: &str) -> Vec<Value> {
    let list = client.send(&request("GET", "/v0/admin/wallet/buy-traffic-requests", ADMIN_TOKEN, None));
    assert_eq!(list.status, 200, "{}", String::from_utf8_lossy(&list.body));
    let list = json_of(&list.body);
    let requests = list["requests"].as_array().expect("a requests array");
    requests.iter().filter(|r| r["tracking_id"] == tracking_id).cloned().collect()
}

/// Sends `n` submissions of one fresh tracking id at once and checks that exactly one
/// request came of them.
pub fn one_request_from_concurrent_submissions(client: &HttpClient, n: usize) {
    let tracking_id = format!("concurrent-{n}");
    let body = submission(&tracking_id, 4_070_908_800_000_000);
    let outgoing = request("POST", "/v0/wallet/buy-traffic-requests", ALICE, Some(&body));
    let barrier = std::sync::Barrier::new(n);
    let answers: Vec<(u16, Value)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    let received = client.send(&outgoing);
                    (received.status, json_of(&received.body))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a submitting thread")).collect()
    });
    let created: Vec<&Value> = answers.iter().filter(|(s, _)| *s == 200).map(|(_, b)| b).collect();
    assert_eq!(created.len(), 1, "{n} concurrent submissions: want exactly one 200, got {answers:?}");
    let others: Vec<&(u16, Value)> = answers.iter().filter(|(s, _)| *s != 200).collect();
    assert!(others.iter().all(|(s, _)| *s == 409 || *s == 429), "{n} concurrent submissions: {others:?}");
    let recorded = recorded(client, &tracking_id);
    assert_eq!(recorded.len(), 1, "{n} concurrent submissions recorded {recorded:?}");
    assert_eq!(recorded[0]["request_contract_id"], created[0]["request_contract_id"]);
    let conflicts = others.iter().filter(|(s, _)| *s == 409).count();
    eprintln!(
        "{n} concurrent submissions: 1 created, {conflicts} conflicts (409), {} busy (429)",
        others.len() - conflicts
    );
}

/// The worker's cron trigger (`wrangler dev --test-scheduled`) expires a request whose
/// expiry passed.
pub fn the_cron_trigger_expires_due_requests(client: &HttpClient) {
    let body = submission("due-for-the-cron", 1_704_067_200_000_000);
    let created = client.send(&request("POST", "/v0/wallet/buy-traffic-requests", ALICE, Some(&body)));
    assert_eq!(created.status, 200, "{}", String::from_utf8_lossy(&created.body));
    let status_path = "/v0/wallet/buy-traffic-requests/due-for-the-cron/status";
    let before = client.send(&request("POST", status_path, ALICE, None));
    assert_eq!(json_of(&before.body), json!({"status": "created"}));
    let trigger = Outgoing {
        method: "GET".into(),
        target: "/__scheduled?cron=*+*+*+*+*".into(),
        headers: Vec::new(),
        body: Vec::new(),
    };
    let fired = client.send(&trigger);
    assert_eq!(fired.status, 200, "firing the cron trigger: {}", String::from_utf8_lossy(&fired.body));
    let after = client.send(&request("POST", status_path, ALICE, None));
    assert_eq!(json_of(&after.body), json!({"status": "failed", "failure_reason": "expired"}));
}
