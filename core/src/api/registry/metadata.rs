//! The registry's metadata: `GET /registry/metadata/v1/info`, `/instruments` and
//! `/instruments/{instrumentId}`, as the network's registry answers them
//! (`HttpTokenStandardMetadataHandler.scala` of `hyperledger-labs/splice`; shapes from
//! `token-standard/splice-api-token-metadata-v1/openapi/token-metadata-v1.yaml`).
//!
//! - The registry's admin (`adminId`) is the DSO party, read as `GET /v0/dso-party-id`
//!   reads it (the DSO rules, else the coin rules): none is a 404.
//! - The registry holds one instrument, the coin: its id, name and symbol are the
//!   configured currency word (`Coin`; `Amulet` under the network's names), its
//!   `decimals` 10, and its `supportedApis` the token standard APIs the coin implements.
//!   Its `totalSupply` and `totalSupplyAsOf` are the supply as of the latest closed
//!   round the history holds, derived at ingest as the network's registry derives it
//!   (the rule is in [`crate::state::registry::supply`]); both are left out when the
//!   history holds no closed round.
//! - `GET .../instruments` is one page: `pageSize`, when given, must be an integer from
//!   1 to 1000, and since no page token is ever handed out, a `pageToken` is a 400.
//! - `GET .../instruments/{instrumentId}` of another id is a 404 naming it.
//!
//! Store reads: 1 scan (limit 1) for the DSO party, 2 when no DSO rules are active; an
//! instrument adds 1 read of the supply record.

use alloc::format;
use alloc::string::String;

use serde_json::json;

use crate::api::http::{Response, query_param};
use crate::model::env::Env;
use crate::model::error::Error;
use crate::model::ids::{InstrumentId, PathParam};
use crate::state::registry::supply::{Supply, supply_key};
use crate::state::scan::read;
use crate::state::scan::{Kind, ScanTemplates};
use crate::storage::store::Store;

/// The most instruments a page may ask for.
pub const MAX_PAGE_SIZE: u32 = 1000;

/// `GET /registry/metadata/v1/info`.
pub async fn info<S: Store>(store: &S, env: &Env<'_>) -> Result<Response, Error> {
    let admin = admin(store, env).await?;
    Ok(Response::ok(&json!({
        "adminId": admin,
        "supportedApis": {"splice-api-token-metadata-v1": 1},
    })))
}

/// `GET /registry/metadata/v1/instruments?pageSize=&pageToken=`.
pub async fn instruments<S: Store>(store: &S, env: &Env<'_>, query: &str) -> Result<Response, Error> {
    if let Some(raw) = query_param(query, "pageSize")? {
        match raw.parse::<u32>() {
            Ok(n) if (1..=MAX_PAGE_SIZE).contains(&n) => {}
            _ => {
                return Err(Error::BadRequest(format!(
                    "query parameter pageSize: expected an integer from 1 to {MAX_PAGE_SIZE}, got {raw:?}"
                )));
            }
        }
    }
    if let Some(token) = query_param(query, "pageToken")? {
        return Err(Error::BadRequest(format!(
            "query parameter pageToken: {token:?} is not a token this registry handed out (its one instrument fits one page)"
        )));
    }
    admin(store, env).await?;
    Ok(Response::ok(&json!({ "instruments": [instrument(store, env).await?] })))
}

/// `GET /registry/metadata/v1/instruments/{instrumentId}`.
pub async fn instrument_by_id<S: Store>(
    store: &S,
    env: &Env<'_>,
    instrument_id: PathParam<InstrumentId>,
) -> Result<Response, Error> {
    let instrument_id = instrument_id?;
    if instrument_id.as_str() != env.config.names.coin {
        return Err(Error::NotFound(format!("No instrument with id {instrument_id} found")));
    }
    admin(store, env).await?;
    Ok(Response::ok(&instrument(store, env).await?))
}

/// The coin as an `Instrument`, with its total supply when the history holds one: one
/// read.
async fn instrument<S: Store>(store: &S, env: &Env<'_>) -> Result<serde_json::Value, Error> {
    let coin: &String = &env.config.names.coin;
    let supply = Supply::read(store.get(&supply_key()).await?.as_deref())?.total();
    let mut instrument = serde_json::Map::new();
    instrument.insert("id".into(), json!(coin));
    instrument.insert("name".into(), json!(coin));
    instrument.insert("symbol".into(), json!(coin));
    if let Some(supply) = supply {
        instrument.insert("totalSupply".into(), json!(supply.amount));
        instrument.insert("totalSupplyAsOf".into(), json!(format!("{}", supply.as_of)));
    }
    instrument.insert("decimals".into(), json!(10));
    instrument.insert(
        "supportedApis".into(),
        json!({
            "splice-api-token-metadata-v1": 1,
            "splice-api-token-holding-v1": 1,
            "splice-api-token-transfer-instruction-v1": 1,
            "splice-api-token-allocation-v1": 1,
            "splice-api-token-allocation-instruction-v1": 1,
        }),
    );
    Ok(serde_json::Value::Object(instrument))
}

/// The registry's admin, the DSO party: from the DSO rules, else the coin rules.
async fn admin<S: Store>(store: &S, env: &Env<'_>) -> Result<String, Error> {
    let templates = ScanTemplates::new(&env.config.names);
    for kind in [Kind::DsoRules, Kind::CoinRules] {
        if let Some(entry) = read::latest(store, kind).await? {
            return entry.payload()?.get("dso").and_then(serde_json::Value::as_str).map(String::from).ok_or_else(
                || Error::Internal(format!("{} {} names no dso party", templates.name(kind), entry.contract_id)),
            );
        }
    }
    Err(Error::NotFound(format!(
        "no active {} or {} contract: the registry knows no admin (DSO party) yet",
        templates.name(Kind::DsoRules),
        templates.name(Kind::CoinRules)
    )))
}
