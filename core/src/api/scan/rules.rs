//! The DSO's singletons and the rounds: the party of the DSO, the coin rules, the
//! external party coin rules, the ANS rules, the open and issuing rounds, and the DSO's
//! summary (`GET /v0/dso`).
//!
//! Rules of the network's handler (`HttpScanHandler.scala`), in order:
//!
//! - **Singletons** are the latest active contract of their template (then the highest
//!   contract id). None active is a 404 that names the template.
//! - **Cached contracts**: a request naming `cached_*_contract_id` gets the contract
//!   left out when that id is the current contract's, and in full otherwise (an
//!   outdated cache). The cached domain id decides nothing: `domain_id` is always the
//!   synchronizer the contract is on now, and absent while it is in flight.
//! - **Rounds** (`POST /v0/open-and-issuing-mining-rounds`): every active open and
//!   issuing round, keyed by contract id, each without its contract when the request
//!   lists it as cached; a cached id that is no longer active is simply not a key. The
//!   time to live is the smallest of the open and summarizing rounds' `tickDuration`
//!   and half of each issuing round's `targetClosesAt - opensAt`, so that a client
//!   polls again before a round it does not know yet opens. With no such round the
//!   network's handler fails; the node answers a 404 that says so.
//! - **The DSO's summary** (`GET /v0/dso`): the DSO rules, the coin rules, the open
//!   round with the highest number (opened or not), and the node state of each SV the
//!   DSO rules list; `voting_threshold` is the network's governance threshold of the
//!   SVs' number n, `ceil((n + f + 1) / 2)` with `f = floor((n - 1) / 3)`. The node is
//!   no SV: `sv_party_id` and `sv_user` name the DSO's delegate (`dsoDelegate`) and its
//!   name in the rules, the SV that acts for the DSO, or the DSO itself when the rules
//!   name no delegate.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::Value;

use crate::api::http::Response;
use crate::model::error::Error;
use crate::model::json::Object;
use crate::model::time::Timestamp;
use crate::state::scan::read::{self, Entry};
use crate::state::scan::{Kind, ScanTemplates};
use crate::storage::store::Store;

use super::{array, body_object, object, optional_text, string};

/// One of the cached singleton endpoints: its kind and its field names.
#[derive(Debug, Clone)]
pub struct Rules {
    kind: Kind,
    cached_id: String,
    cached_domain: String,
    update: String,
}

impl Rules {
    fn named(kind: Kind, word: &str) -> Self {
        Rules {
            kind,
            cached_id: format!("cached_{word}_rules_contract_id"),
            cached_domain: format!("cached_{word}_rules_domain_id"),
            update: format!("{word}_rules_update"),
        }
    }

    /// `POST /v0/{coin}-rules`, `coin` in lower case.
    pub fn coin(coin: &str) -> Self {
        Rules::named(Kind::CoinRules, coin)
    }

    /// `POST /v0/external-party-{coin}-rules`.
    pub fn external_party(coin: &str) -> Self {
        Rules::named(Kind::ExternalPartyCoinRules, &format!("external_party_{coin}"))
    }

    /// `POST /v0/ans-rules`.
    pub fn ans() -> Self {
        Rules::named(Kind::AnsRules, "ans")
    }
}

/// The active singleton of `kind`, or the 404 that names its template.
async fn singleton<S: Store>(store: &S, templates: &ScanTemplates, kind: Kind) -> Result<Entry, Error> {
    read::latest(store, kind)
        .await?
        .ok_or_else(|| Error::NotFound(format!("no active {} contract", templates.name(kind))))
}

/// The text at `path` of a payload.
fn text<'v>(payload: &'v Value, path: &[&str]) -> Option<&'v str> {
    path.iter().try_fold(payload, |value, label| value.get(label))?.as_str()
}

/// `GET /v0/dso-party-id`: the `dso` of the DSO rules, or of the coin rules while no
/// DSO rules are active.
pub async fn dso_party_id<S: Store>(store: &S, templates: &ScanTemplates) -> Result<Response, Error> {
    for kind in [Kind::DsoRules, Kind::CoinRules] {
        if let Some(entry) = read::latest(store, kind).await? {
            let payload = entry.payload()?;
            let dso = text(&payload, &["dso"]).ok_or_else(|| {
                Error::Internal(format!("{} {} names no dso party", templates.name(kind), entry.contract_id))
            })?;
            return Ok(Response::ok(&serde_json::json!({ "dso_party_id": dso })));
        }
    }
    Err(Error::NotFound(format!(
        "no active {} or {} contract: the node knows no DSO party yet",
        templates.name(Kind::DsoRules),
        templates.name(Kind::CoinRules)
    )))
}

/// `POST /v0/{coin}-rules`, `/v0/external-party-{coin}-rules` and `/v0/ans-rules`.
pub async fn rules<S: Store>(
    store: &S,
    templates: &ScanTemplates,
    rules: Rules,
    body: &[u8],
) -> Result<Response, Error> {
    let what =
        format!("JSON object with the optional fields {} and {} ({{}} will do)", rules.cached_id, rules.cached_domain);
    let request = body_object(body, &what)?;
    let cached = optional_text(&request, &rules.cached_id)?;
    optional_text(&request, &rules.cached_domain)?;
    let entry = singleton(store, templates, rules.kind).await?;
    let is_cached = cached.as_deref() == Some(entry.contract_id.as_str());
    let update = entry.with_state(store, is_cached).await?;
    Ok(Response::json(200, object(&[(&rules.update, &update)])))
}

/// The contract ids of the array field `field` of the request, required.
fn cached_ids(request: &Object<'_>, field: &str) -> Result<BTreeSet<String>, Error> {
    let items = request
        .get(field)
        .ok_or_else(|| Error::BadRequest(format!("{field}: required (an array of contract ids; [] will do)")))?
        .as_array()
        .ok_or_else(|| Error::BadRequest(format!("{field}: expected an array of contract ids")))?;
    items
        .iter()
        .map(|item| {
            item.as_str().map(String::from).ok_or_else(|| Error::BadRequest(format!("{field}: expected contract ids")))
        })
        .collect()
}

/// `{cid: MaybeCachedContractWithState, ..}` of `rounds`, those in `cached` without
/// their contract: one read per round, for its state.
async fn round_map<S: Store>(store: &S, rounds: &[Entry], cached: &BTreeSet<String>) -> Result<Vec<u8>, Error> {
    let mut out = Vec::from(*b"{");
    for (index, round) in rounds.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&string(&round.contract_id));
        out.push(b':');
        out.extend_from_slice(&round.with_state(store, cached.contains(&round.contract_id)).await?);
    }
    out.push(b'}');
    Ok(out)
}

/// A relative time's microseconds (`{"microseconds": "n"}` in compact JSON).
fn microseconds(payload: &Value, field: &str) -> Option<i64> {
    text(payload, &[field, "microseconds"])?.parse().ok()
}

fn timestamp(payload: &Value, field: &str) -> Option<i64> {
    Timestamp::parse(text(payload, &[field])?).ok().map(|t| t.micros())
}

/// `POST /v0/open-and-issuing-mining-rounds`.
pub async fn open_and_issuing_rounds<S: Store>(
    store: &S,
    templates: &ScanTemplates,
    body: &[u8],
) -> Result<Response, Error> {
    let request = body_object(
        body,
        "JSON object with cached_open_mining_round_contract_ids and cached_issuing_round_contract_ids",
    )?;
    let cached_open = cached_ids(&request, "cached_open_mining_round_contract_ids")?;
    let cached_issuing = cached_ids(&request, "cached_issuing_round_contract_ids")?;
    let open = read::list(store, Kind::OpenRound, templates).await?;
    let issuing = read::list(store, Kind::IssuingRound, templates).await?;
    let summarizing = read::list(store, Kind::SummarizingRound, templates).await?;
    let mut lives = Vec::new();
    for round in open.iter().chain(&summarizing) {
        lives.extend(microseconds(&round.payload()?, "tickDuration"));
    }
    for round in &issuing {
        let payload = round.payload()?;
        if let (Some(opens), Some(closes)) = (timestamp(&payload, "opensAt"), timestamp(&payload, "targetClosesAt")) {
            lives.push(closes.saturating_sub(opens) / 2);
        }
    }
    let Some(ttl) = lives.into_iter().min() else {
        return Err(Error::NotFound(format!(
            "no active {}, {} or {} with its timing fields: no time to live to give",
            templates.name(Kind::OpenRound),
            templates.name(Kind::SummarizingRound),
            templates.name(Kind::IssuingRound)
        )));
    };
    let open = round_map(store, &open, &cached_open).await?;
    let issuing = round_map(store, &issuing, &cached_issuing).await?;
    let ttl = format!("{ttl}");
    Ok(Response::json(
        200,
        object(&[
            ("time_to_live_in_microseconds", ttl.as_bytes()),
            ("open_mining_rounds", &open),
            ("issuing_mining_rounds", &issuing),
        ]),
    ))
}

/// The parties of a Daml map field (`[[k, v], ..]` in compact JSON, or an object), with
/// their values.
pub(super) fn map_entries(value: Option<&Value>) -> Vec<(&str, &Value)> {
    match value {
        Some(Value::Array(pairs)) => pairs
            .iter()
            .filter_map(|pair| match pair.as_array()?.as_slice() {
                [key, value] => Some((key.as_str()?, value)),
                _ => None,
            })
            .collect(),
        Some(Value::Object(map)) => map.iter().map(|(key, value)| (key.as_str(), value)).collect(),
        _ => Vec::new(),
    }
}

/// The network's governance threshold of `n` SVs.
fn voting_threshold(n: u64) -> u64 {
    let f = n.saturating_sub(1) / 3;
    (n + f + 1).div_ceil(2)
}

/// `GET /v0/dso`; `coin` (the currency word in lower case) names the coin rules' field.
pub async fn dso_info<S: Store>(store: &S, templates: &ScanTemplates, coin: &str) -> Result<Response, Error> {
    let dso_rules = singleton(store, templates, Kind::DsoRules).await?;
    let coin_rules = singleton(store, templates, Kind::CoinRules).await?;
    let rounds = read::list(store, Kind::OpenRound, templates).await?;
    let mut latest: Option<(i64, &Entry)> = None;
    for round in &rounds {
        let number = text(&round.payload()?, &["round", "number"]).and_then(|n| n.parse::<i64>().ok());
        if let Some(number) = number
            && latest.is_none_or(|(highest, _)| number > highest)
        {
            latest = Some((number, round));
        }
    }
    let (_, latest) =
        latest.ok_or_else(|| Error::NotFound(format!("no active {}", templates.name(Kind::OpenRound))))?;
    let payload = dso_rules.payload()?;
    let dso = text(&payload, &["dso"]).unwrap_or_default();
    let svs = map_entries(payload.get("svs"));
    let delegate = text(&payload, &["dsoDelegate"]).unwrap_or(dso);
    let delegate_name = svs
        .iter()
        .find(|(party, _)| *party == delegate)
        .and_then(|(_, info)| info.get("name")?.as_str())
        .unwrap_or(delegate);
    let members: BTreeSet<&str> = svs.iter().map(|(party, _)| *party).collect();
    let mut states = Vec::new();
    for state in read::list(store, Kind::SvNodeState, templates).await? {
        if text(&state.payload()?, &["sv"]).is_some_and(|sv| members.contains(sv)) {
            states.push(state.with_state(store, false).await?);
        }
    }
    let threshold = format!("{}", voting_threshold(svs.len() as u64));
    let coin_rules_field = format!("{coin}_rules");
    Ok(Response::json(
        200,
        object(&[
            ("sv_user", &string(delegate_name)),
            ("sv_party_id", &string(delegate)),
            ("dso_party_id", &string(dso)),
            ("voting_threshold", threshold.as_bytes()),
            ("latest_mining_round", &latest.with_state(store, false).await?),
            (&coin_rules_field, &coin_rules.with_state(store, false).await?),
            ("dso_rules", &dso_rules.with_state(store, false).await?),
            ("sv_node_states", &array(states)),
        ]),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_voting_threshold_is_the_network_s_governance_threshold() {
        for (n, want) in [(1, 1), (2, 2), (3, 2), (4, 3), (5, 4), (7, 5), (10, 7), (13, 9)] {
            assert_eq!(voting_threshold(n), want, "{n} SVs");
        }
    }

    #[test]
    fn a_daml_map_reads_as_pairs_or_as_an_object() {
        let pairs = serde_json::json!([["sv1::1", {"name": "sv1"}], ["sv2::1", {"name": "sv2"}], ["bad"]]);
        let entries = map_entries(Some(&pairs));
        assert_eq!(entries.iter().map(|(k, _)| *k).collect::<Vec<_>>(), ["sv1::1", "sv2::1"]);
        let object = serde_json::json!({"a": 1});
        assert_eq!(map_entries(Some(&object)).len(), 1);
        assert!(map_entries(None).is_empty());
    }
}
