//! The SVs' sequencers and scans, from their node states, and the last migration.
//!
//! Each SV's `SvNodeState` (`Splice.DSO.SvState`) holds, per synchronizer id, the
//! configuration of its nodes there (`state.synchronizerNodes`). As the network's
//! handler does (`listDsoSequencers`, `listDsoScans` of `HttpScanHandler.scala`):
//!
//! - `GET /v0/dso-sequencers` lists, per synchronizer, each SV's `sequencer` that has
//!   an `availableAfter`, with its `migrationId`, `sequencerId`, `url` and the SV's
//!   name; one whose URL is not an `http` or `https` URL with a host is left out.
//! - `GET /v0/scans` lists, per synchronizer, each SV's `scan` (`publicUrl`) with the
//!   SV's name.
//!
//! Synchronizers come in the order of their ids, SVs in the order of their node
//! states' creation. (The network's newer `physicalSynchronizers` and legacy sequencer
//! configurations are not read.)
//!
//! `GET /v0/migrations/last` answers the highest migration id the node holds a
//! non-import update of, `{"migration_id": n}`; a 404 before the first.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Value, json};

use crate::api::http::Response;
use crate::model::error::Error;
use crate::model::time::Timestamp;
use crate::state::scan::read;
use crate::state::scan::{Kind, ScanTemplates};
use crate::storage::keys;
use crate::storage::store::{Scan, Store};

use super::rules::map_entries;

/// Per synchronizer id, what `pick` makes of each SV's configuration there (the SV's
/// name, its node configuration).
async fn per_synchronizer<S: Store>(
    store: &S,
    templates: &ScanTemplates,
    pick: impl Fn(&str, &Value) -> Option<Value>,
) -> Result<BTreeMap<String, Vec<Value>>, Error> {
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for state in read::list(store, Kind::SvNodeState, templates).await? {
        let payload = state.payload()?;
        let name = payload.get("svName").and_then(Value::as_str).unwrap_or_default();
        let nodes = payload.get("state").and_then(|s| s.get("synchronizerNodes"));
        for (synchronizer, config) in map_entries(nodes) {
            if let Some(item) = pick(name, config) {
                out.entry(synchronizer.into()).or_default().push(item);
            }
        }
    }
    Ok(out)
}

/// Whether `url` is an `http` or `https` URL with a host.
fn valid_url(url: &str) -> bool {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
    rest.and_then(|rest| rest.split(['/', '?', '#']).next()).is_some_and(|host| !host.is_empty() && !host.contains(' '))
}

/// `GET /v0/dso-sequencers`.
pub async fn sequencers<S: Store>(store: &S, templates: &ScanTemplates) -> Result<Response, Error> {
    let found = per_synchronizer(store, templates, |name, config| {
        let sequencer = config.get("sequencer").filter(|s| !s.is_null())?;
        let text = |field: &str| sequencer.get(field).and_then(Value::as_str);
        let available_after = Timestamp::parse(text("availableAfter")?).ok()?;
        let migration_id: i64 = text("migrationId")?.parse().ok()?;
        let url = text("url").filter(|url| valid_url(url))?;
        Some(json!({
            "migrationId": migration_id,
            "id": text("sequencerId")?,
            "url": url,
            "svName": name,
            "availableAfter": format!("{available_after}"),
        }))
    })
    .await?;
    let domains: Vec<Value> =
        found.into_iter().map(|(domain, sequencers)| json!({"domainId": domain, "sequencers": sequencers})).collect();
    Ok(Response::ok(&json!({ "domainSequencers": domains })))
}

/// `GET /v0/scans`.
pub async fn scans<S: Store>(store: &S, templates: &ScanTemplates) -> Result<Response, Error> {
    let found = per_synchronizer(store, templates, |name, config| {
        let url = config.get("scan")?.get("publicUrl")?.as_str()?;
        Some(json!({"publicUrl": url, "svName": name}))
    })
    .await?;
    let domains: Vec<Value> =
        found.into_iter().map(|(domain, scans)| json!({"domainId": domain, "scans": scans})).collect();
    Ok(Response::ok(&json!({ "scans": domains })))
}

/// `GET /v0/migrations/last`: one reverse scan of the migrations with data.
pub async fn last_migration<S: Store>(store: &S) -> Result<Response, Error> {
    let last = store.scan(&Scan::prefix(&[keys::MIGRATION_RANGE], 1).reversed()).await?;
    match last.first().and_then(|(key, _)| keys::decode_i64(key, 1)) {
        Some(migration_id) => Ok(Response::ok(&json!({ "migration_id": migration_id }))),
        None => Err(Error::NotFound("no migration has data yet: the node holds no update".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequencer_urls_must_be_http_with_a_host() {
        for url in ["https://sequencer.sv1.example.com", "http://10.0.0.1:5008/x"] {
            assert!(valid_url(url), "{url}");
        }
        for url in ["", "sequencer.example.com", "https://", "ftp://x", "https:///path", "https://a b"] {
            assert!(!valid_url(url), "{url}");
        }
    }
}
