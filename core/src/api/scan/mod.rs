//! The network's scan reads of a validator and a wallet ([`ScanRoute`]), answered from
//! what [`crate::state::scan`] keeps, with the shapes and status codes of the
//! network's scan API (`apps/scan/src/main/openapi/scan.yaml` of
//! `hyperledger-labs/splice`, and its handler,
//! `apps/scan/src/main/scala/org/lfdecentralizedtrust/splice/scan/admin/http/HttpScanHandler.scala`).
//!
//! | endpoint | module | store reads |
//! |---|---|---|
//! | `GET /v0/dso-party-id` | [`rules`] | 1 scan (limit 1; 2 when no DSO rules are active) |
//! | `POST /v0/{coin}-rules`, `/v0/external-party-{coin}-rules`, `/v0/ans-rules` | [`rules`] | 1 scan (limit 1), 1 for the state |
//! | `POST /v0/open-and-issuing-mining-rounds` | [`rules`] | 3 scans, 1 per open or issuing round for its state |
//! | `GET /v0/dso` | [`rules`] | 4 scans, 1 per contract answered for its state |
//! | `GET /v0/dso-sequencers`, `GET /v0/scans` | [`network`] | 1 scan |
//! | `GET /v0/migrations/last` | [`network`] | 1 scan (limit 1) |
//! | `GET /v0/transfer-preapprovals/by-party/{party}` | [`lookups`] | 1 scan (limit 1) in the party's prefix, 1 for the state |
//! | `GET /v0/featured-apps/{provider_party_id}` | [`lookups`] | 1 scan (limit 1) in the party's prefix |
//! | `GET /v0/featured-apps` | [`lookups`] | 1 scan |
//! | `GET /v0/transfer-command-counter/{party}` | [`lookups`] | 1 scan (limit 1) in the party's prefix, 1 for the state |
//! | `GET /v0/transfer-command/status` | [`lookups`] | 1 scan (limit 100) in the sender and nonce's prefix |
//! | `GET /v0/ans-entries` | [`lookups`] | 1 scan (limit `page_size`) in the name prefix's range; 1 more (limit 1) for the DSO rules when the page has room |
//! | `GET /v0/ans-entries/by-party/{party}`, `/by-name/{name}` | [`lookups`] | 1 scan (limit 1) for the DSO rules, 1 in the key's prefix |
//! | `GET /v0/unclaimed-development-fund-coupons` | [`lookups`] | 1 scan, 1 per coupon for its state |
//! | `GET /v0/admin/sv/voterequests` | [`lookups`] | 1 scan |
//! | `GET /v0/admin/validator/licenses` | [`lookups`] | 1 scan (limit `limit` + 1) |
//!
//! Request bodies are read with the node's strict reader: a body that is not a JSON
//! object, a field of the wrong type or a repeated key is a 400 naming it; unknown
//! fields are ignored, and `null` means absent, as generated clients send them.

pub mod lookups;
pub mod network;
pub mod rules;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::api::http::{Request, Response};
use crate::api::route::ScanRoute;
use crate::model::env::Env;
use crate::model::error::Error;
use crate::model::json::{Json, Object};
use crate::state::scan::ScanTemplates;
use crate::storage::store::Store;

/// Serves one scan read.
pub async fn handle<S: Store>(
    route: ScanRoute,
    request: &Request,
    body: &[u8],
    env: &Env<'_>,
    store: &S,
) -> Result<Response, Error> {
    let templates = ScanTemplates::new(&env.config.names);
    let coin = env.config.names.coin.to_ascii_lowercase();
    let query = request.query.as_str();
    use ScanRoute::*;
    match route {
        DsoPartyId => rules::dso_party_id(store, &templates).await,
        CoinRules => rules::rules(store, &templates, rules::Rules::coin(&coin), body).await,
        ExternalPartyCoinRules => rules::rules(store, &templates, rules::Rules::external_party(&coin), body).await,
        AnsRules => rules::rules(store, &templates, rules::Rules::ans(), body).await,
        OpenAndIssuingRounds => rules::open_and_issuing_rounds(store, &templates, body).await,
        DsoInfo => rules::dso_info(store, &templates, &coin).await,
        DsoSequencers => network::sequencers(store, &templates).await,
        DsoScans => network::scans(store, &templates).await,
        LastMigration => network::last_migration(store).await,
        TransferPreapproval { party } => lookups::transfer_preapproval(store, party?).await,
        FeaturedApps => lookups::featured_apps(store, &templates).await,
        FeaturedApp { provider_party_id } => lookups::featured_app(store, provider_party_id?).await,
        TransferCommandCounter { party } => lookups::transfer_command_counter(store, party?).await,
        TransferCommandStatus => lookups::transfer_command_status(store, query).await,
        AnsEntries => lookups::ans_entries(store, env, query).await,
        AnsEntryByParty { party } => lookups::ans_entry_by_party(store, env, party?).await,
        AnsEntryByName { name } => lookups::ans_entry_by_name(store, env, name?).await,
        DevelopmentFundCoupons => lookups::development_fund_coupons(store, &templates).await,
        VoteRequests => lookups::vote_requests(store, &templates).await,
        ValidatorLicenses => lookups::validator_licenses(store, query).await,
    }
}

/// A request body: a JSON object, read strictly (module docs); `what` describes it.
fn body_object<'b>(body: &'b [u8], what: &str) -> Result<Object<'b>, Error> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(Error::BadRequest(format!("request body required: a {what}")));
    }
    match Json::parse(body).map_err(|e| Error::BadRequest(format!("request body is not valid JSON: {e}")))? {
        Json::Object(object) => Ok(object),
        _ => Err(Error::BadRequest(format!("request body: expected a {what}"))),
    }
}

/// The optional text field `field` of `object`: absent or `null` is `None`, anything
/// but a string a 400 naming the field.
fn optional_text(object: &Object<'_>, field: &str) -> Result<Option<String>, Error> {
    match object.get(field) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(text)) => Ok(Some(text.as_ref().into())),
        Some(_) => Err(Error::BadRequest(format!("{field}: expected a string"))),
    }
}

/// `{"k1":v1,"k2":v2,..}` from fields whose values are JSON already.
fn object(fields: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::with_capacity(fields.iter().map(|(k, v)| k.len() + v.len() + 4).sum::<usize>() + 2);
    out.push(b'{');
    for (index, (key, value)) in fields.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
        out.extend_from_slice(value);
    }
    out.push(b'}');
    out
}

/// `[e1,e2,..]` from elements that are JSON already.
fn array(elements: impl IntoIterator<Item = Vec<u8>>) -> Vec<u8> {
    let mut out = Vec::from(*b"[");
    for (index, element) in elements.into_iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&element);
    }
    out.push(b']');
    out
}

/// `text` as a JSON string.
fn string(text: &str) -> Vec<u8> {
    // A string always serializes.
    serde_json::to_vec(text).unwrap_or_default()
}
