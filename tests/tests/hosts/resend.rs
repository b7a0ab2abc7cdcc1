//! A demo history sent twice: the second time every update is already held, and the
//! batch reads their stored bodies to compare (many at once: at the edge, past KV).

use serde_json::Value;

use crate::scenario::{ADMIN_TOKEN, Outgoing, Target};

/// Updates in the history: more than one read takes through the worker's KV tier.
const UPDATES: u64 = 300;

fn send(target: &mut dyn Target, method: &str, path: &str, body: Vec<u8>) -> (u16, Value) {
    let outgoing = Outgoing {
        method: method.into(),
        target: path.into(),
        headers: vec![("authorization".into(), format!("Bearer {ADMIN_TOKEN}"))],
        body,
    };
    let received = target.send(&outgoing);
    let body = serde_json::from_slice(&received.body)
        .unwrap_or_else(|e| panic!("{}: {method} {path}: not JSON ({e})", target.name()));
    (received.status, body)
}

/// Ingests a demo history, then the same history again: nothing is applied the second
/// time, every update counts as unchanged, and the bodies served are the same.
pub fn a_re_sent_history_changes_nothing(target: &mut dyn Target) {
    let mut history = Vec::new();
    ledger_node::demo::write(&ledger_node::demo::Options::new(UPDATES, 11), &mut history).expect("a demo history");
    let first_id = history
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .find_map(|record| Some(record.get("update")?.get("update_id")?.as_str()?.to_owned()))
        .expect("an update in the history");
    let name = target.name().to_owned();

    let (status, first) = send(target, "POST", "/v0/admin/ingest", history.clone());
    assert_eq!(status, 200, "{name}: {first}");
    assert_eq!(first["applied"]["update"], UPDATES, "{name}: {first}");
    let path = format!("/v2/updates/{first_id}?ledger_value_encoding=protobuf_json");
    let (_, served) = send(target, "GET", &path, Vec::new());

    let (status, again) = send(target, "POST", "/v0/admin/ingest", history);
    assert_eq!(status, 200, "{name}: {again}");
    assert_eq!((&again["applied"]["update"], &again["unchanged"]), (&0.into(), &UPDATES.into()), "{name}: {again}");
    let (status, served_again) = send(target, "GET", &path, Vec::new());
    assert_eq!(status, 200, "{name}");
    assert_eq!(served_again, served, "{name}");
}
