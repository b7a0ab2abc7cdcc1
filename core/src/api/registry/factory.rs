//! The transfer factory: `POST /registry/transfer-instruction/{v1,v2}/transfer-factory`.
//!
//! A wallet about to transfer the coin asks which contract to exercise
//! `TransferFactory_Transfer` on, with which choice context, and what kind of transfer
//! that will be. The rules follow the network's registry
//! (`HttpTokenStandardTransferInstructionHandler.scala` and `scan/util/ChoiceContextBuilder.scala`
//! of `hyperledger-labs/splice`) and, for the checks of the transfer itself, the network's
//! own implementation of the choice (`amulet_transferFactory_transferImpl` in
//! `daml/splice-amulet/daml/Splice/ExternalPartyAmuletRules.daml`), so that a transfer the
//! ledger would refuse is refused here, before the wallet signs it.
//!
//! ## The rules, in the order they are checked
//!
//! 0. The body is a `GetFactoryRequest`: `choiceArguments` (required) holds the
//!    `TransferFactory_Transfer` arguments in the JSON API's encoding: `expectedAdmin`,
//!    and `transfer` with `sender`, `receiver`, `amount` (a decimal, as a string or a
//!    number), `instrumentId` (`admin`, `id`), `requestedAt`, `executeBefore`,
//!    `inputHoldingCids` (a list of contract ids) and an optional `meta`; `extraArgs` is
//!    optional. `excludeDebugFields` is an optional boolean. A missing field or one of the
//!    wrong type is a 400 naming its path (`choiceArguments.transfer.receiver`), as is a
//!    key of `extraArgs.meta.values` that the node sets in the context itself (its
//!    reserved keys, [`reserved_keys`]). What the network's choice refuses is a 400 too:
//!    an amount not above zero, no input holding, a `requestedAt` after now (a transfer
//!    dated in the future), an `executeBefore` not after now (an expired transfer).
//! 1. The coin rules must be active (else 404); their `dso` is the registry's admin.
//!    An `expectedAdmin` or an `instrumentId` other than that admin and the coin's
//!    instrument (`{admin: dso, id: <coin name>}`) is a 400 naming it.
//! 2. The factory is the active external party coin rules contract (else 404), and an
//!    open round must be in use (else 404; the rule of the choice contexts).
//! 3. The kind: `self` when the sender is the receiver; else `direct` when the receiver
//!    has an active transfer preapproval; else `offer`.
//! 4. The context values are `{coin}-rules`, `open-round`, `external-party-config-state`
//!    (when one is active), `featured-app-right` (the featured app right of the
//!    preapproval's `provider`, when the kind is `direct` and it has one) and
//!    `transfer-preapproval` (when `direct`); the disclosed contracts are those, in that
//!    order, then the factory. A disclosed contract being reassigned is a 409 naming it.
//!
//! Precedence: 400 (the body), then 404, then 400 (admin and instrument, which need the
//! coin rules), then 409.
//!
//! ## Store reads
//!
//! At most three calls, whatever the size of the history. Unless the transfer is to
//! oneself, one scan of the Scan state's lookup of transfer preapprovals by receiver
//! (`F`, [`crate::state::scan`]) for the receiver's latest one and its `provider`; one
//! `get_many` of the registry's standing contracts, with its featured app rights when
//! there is a provider ([`crate::state::registry`]); one `get_many` of the records of
//! every candidate (the standing contracts, the preapproval, the provider's featured
//! app rights) with where each is now ([`super::candidates`]). A self transfer is the
//! last two.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;
use serde_json::Map;

use super::candidates::{Active, Chosen, among, contract_id_value, disclose_all, latest, read_active};
use super::{ChoiceContext, EXTERNAL_PARTY_CONFIG_STATE, OPEN_ROUND, no_open_round, standing_names};
use crate::api::http::Response;
use crate::model::env::Env;
use crate::model::error::Error;
use crate::model::json::{Json, Object};
use crate::model::names::{ApiNames, TemplateNames};
use crate::model::time::Timestamp;
use crate::state::registry::{self, Featured, Standing};
use crate::state::scan::read;
use crate::state::scan::{Index, Kind, ScanTemplates};
use crate::storage::store::Store;

/// The context key of the receiver's transfer preapproval.
pub const TRANSFER_PREAPPROVAL: &str = "transfer-preapproval";
/// The context key of the preapproval provider's featured app right.
pub const FEATURED_APP_RIGHT: &str = "featured-app-right";

/// The context keys the factory sets itself, given the coin rules key; a key of
/// `extraArgs.meta.values` may not be one of them.
pub fn reserved_keys(rules_key: &str) -> [&str; 5] {
    [rules_key, OPEN_ROUND, EXTERNAL_PARTY_CONFIG_STATE, FEATURED_APP_RIGHT, TRANSFER_PREAPPROVAL]
}

/// The kind of transfer the factory will make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TransferKind {
    /// The sender is the receiver.
    #[serde(rename = "self")]
    SelfTransfer,
    /// The receiver has preapproved transfers to it.
    Direct,
    /// The receiver must accept.
    Offer,
}

/// A parsed `GetFactoryRequest` for `TransferFactory_Transfer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactoryRequest {
    /// `choiceArguments.expectedAdmin`.
    pub expected_admin: String,
    /// `choiceArguments.transfer.sender`.
    pub sender: String,
    /// `choiceArguments.transfer.receiver`.
    pub receiver: String,
    /// `choiceArguments.transfer.instrumentId.admin`.
    pub instrument_admin: String,
    /// `choiceArguments.transfer.instrumentId.id`.
    pub instrument_id: String,
    /// Whether to leave out every `debug*` field.
    pub exclude_debug_fields: bool,
}

impl FactoryRequest {
    /// Parses the body at `now` for a node whose coin rules key is `rules_key`; see the
    /// module docs for what is refused.
    pub fn parse(body: &[u8], rules_key: &str, now: Timestamp) -> Result<Self, Error> {
        let json = request_body(body)?;
        let (arguments, exclude_debug_fields) = choice_arguments(&json)?;
        let expected_admin = text(arguments, "expectedAdmin", "choiceArguments.expectedAdmin")?;
        let transfer = object(arguments, "transfer", "choiceArguments.transfer")?;
        let field = |name: &str| format!("choiceArguments.transfer.{name}");
        let sender = text(transfer, "sender", &field("sender"))?;
        let receiver = text(transfer, "receiver", &field("receiver"))?;
        let instrument = object(transfer, "instrumentId", &field("instrumentId"))?;
        let instrument_admin = text(instrument, "admin", &field("instrumentId.admin"))?;
        let instrument_id = text(instrument, "id", &field("instrumentId.id"))?;
        amount(transfer, &field("amount"))?;
        let requested_at =
            Timestamp::parse_named(&field("requestedAt"), &text(transfer, "requestedAt", &field("requestedAt"))?)?;
        let execute_before = Timestamp::parse_named(
            &field("executeBefore"),
            &text(transfer, "executeBefore", &field("executeBefore"))?,
        )?;
        let inputs = input_holdings(transfer, &field("inputHoldingCids"))?;
        match transfer.get("meta") {
            None | Some(Json::Null) => {}
            Some(Json::Object(meta)) => string_map(meta, &field("meta"))?,
            Some(_) => return Err(Error::BadRequest(format!("{}: expected an object", field("meta")))),
        }
        extra_args(arguments, &reserved_keys(rules_key))?;
        // The network's choice checks, in its order, after the fields' shapes.
        if requested_at > now {
            return Err(Error::BadRequest(format!(
                "{}: {requested_at} is in the future (now is {now}); a transfer cannot be requested later than now",
                field("requestedAt")
            )));
        }
        if execute_before <= now {
            return Err(Error::BadRequest(format!(
                "{}: {execute_before} is not in the future (now is {now}); the transfer has expired",
                field("executeBefore")
            )));
        }
        if inputs == 0 {
            return Err(Error::BadRequest(format!(
                "{}: at least one holding must be provided",
                field("inputHoldingCids")
            )));
        }
        Ok(FactoryRequest { expected_admin, sender, receiver, instrument_admin, instrument_id, exclude_debug_fields })
    }

    /// The kind of transfer, given whether the receiver has an active preapproval.
    pub fn kind(&self, preapproved: bool) -> TransferKind {
        if self.sender == self.receiver {
            TransferKind::SelfTransfer
        } else if preapproved {
            TransferKind::Direct
        } else {
            TransferKind::Offer
        }
    }
}

/// Checks `parent.amount`, a decimal above zero (a string or a number), at `path`.
pub(super) fn amount(parent: &Object<'_>, path: &str) -> Result<(), Error> {
    let amount = match parent.get("amount") {
        Some(Json::String(s)) => positive_decimal(s),
        Some(Json::Number(n)) => Some(match n {
            crate::model::json::Number::Unsigned(n) => *n > 0,
            crate::model::json::Number::Negative(_) => false,
            crate::model::json::Number::Float(f) => *f > 0.0,
        }),
        None | Some(Json::Null) => return Err(missing(path)),
        Some(_) => return Err(Error::BadRequest(format!("{path}: expected a decimal"))),
    };
    match amount {
        None => Err(Error::BadRequest(format!("{path}: expected a decimal"))),
        Some(false) => Err(Error::BadRequest(format!("{path}: the amount must be positive"))),
        Some(true) => Ok(()),
    }
}

/// Checks `parent.inputHoldingCids`, a list of contract ids at `path`; answers how many.
pub(super) fn input_holdings(parent: &Object<'_>, path: &str) -> Result<usize, Error> {
    let inputs = match parent.get("inputHoldingCids") {
        Some(Json::Array(inputs)) => inputs,
        None | Some(Json::Null) => return Err(missing(path)),
        Some(_) => return Err(Error::BadRequest(format!("{path}: expected a list of contract ids"))),
    };
    if inputs.iter().any(|input| input.as_str().is_none()) {
        return Err(Error::BadRequest(format!("{path}: expected a list of contract ids")));
    }
    Ok(inputs.len())
}

/// Checks `arguments.extraArgs` (optional): a `context` object and a `meta` whose
/// `values` are texts under none of the `reserved` keys.
pub(super) fn extra_args(arguments: &Object<'_>, reserved: &[&str]) -> Result<(), Error> {
    match arguments.get("extraArgs") {
        None | Some(Json::Null) => Ok(()),
        Some(Json::Object(extra)) => {
            if let Some(context) = extra.get("context").filter(|c| !c.is_null())
                && context.as_object().is_none()
            {
                return Err(bad("choiceArguments.extraArgs.context: expected an object"));
            }
            match extra.get("meta") {
                None | Some(Json::Null) => Ok(()),
                Some(Json::Object(meta)) => {
                    string_map(meta, "choiceArguments.extraArgs.meta")?;
                    if let Some(Json::Object(values)) = meta.get("values")
                        && let Some(key) = values.keys().find(|key| reserved.contains(key))
                    {
                        return Err(Error::BadRequest(format!(
                            "choiceArguments.extraArgs.meta.values[{key:?}]: reserved key; the node sets {key:?} in the choice context itself"
                        )));
                    }
                    Ok(())
                }
                Some(_) => Err(bad("choiceArguments.extraArgs.meta: expected an object")),
            }
        }
        Some(_) => Err(bad("choiceArguments.extraArgs: expected an object")),
    }
}

/// The JSON document of a `GetFactoryRequest` body: a 400 for an empty body or one
/// that is not JSON.
pub(super) fn request_body(body: &[u8]) -> Result<Json<'_>, Error> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(bad("request body required: a GetFactoryRequest JSON object with choiceArguments"));
    }
    Json::parse(body).map_err(|e| Error::BadRequest(format!("request body is not valid JSON: {e}")))
}

/// A `GetFactoryRequest`'s `choiceArguments` object, and whether it asks to leave out
/// every `debug*` field (`excludeDebugFields`, false when absent or null).
pub(super) fn choice_arguments<'o, 'a>(json: &'o Json<'a>) -> Result<(&'o Object<'a>, bool), Error> {
    let root = json.as_object().ok_or_else(|| bad("request body: expected a JSON object (GetFactoryRequest)"))?;
    let exclude_debug_fields = match root.get("excludeDebugFields") {
        None | Some(Json::Null) => false,
        Some(Json::Bool(b)) => *b,
        Some(_) => return Err(bad("excludeDebugFields: expected a boolean")),
    };
    Ok((object(root, "choiceArguments", "choiceArguments")?, exclude_debug_fields))
}

pub(super) fn bad(message: &str) -> Error {
    Error::BadRequest(message.into())
}

pub(super) fn missing(path: &str) -> Error {
    Error::BadRequest(format!("{path}: required"))
}

pub(super) fn object<'o, 'a>(parent: &'o Object<'a>, key: &str, path: &str) -> Result<&'o Object<'a>, Error> {
    match parent.get(key) {
        Some(Json::Object(object)) => Ok(object),
        None | Some(Json::Null) => Err(missing(path)),
        Some(_) => Err(Error::BadRequest(format!("{path}: expected an object"))),
    }
}

pub(super) fn text(parent: &Object<'_>, key: &str, path: &str) -> Result<String, Error> {
    match parent.get(key) {
        Some(Json::String(text)) => Ok(text.as_ref().into()),
        None | Some(Json::Null) => Err(missing(path)),
        Some(_) => Err(Error::BadRequest(format!("{path}: expected a string"))),
    }
}

/// A `Metadata` object, `{"values": {key: text}}`.
pub(super) fn string_map(meta: &Object<'_>, path: &str) -> Result<(), Error> {
    match meta.get("values") {
        None | Some(Json::Null) => Ok(()),
        Some(Json::Object(values)) => match values.iter().find(|(_, value)| value.as_str().is_none()) {
            Some((key, _)) => Err(Error::BadRequest(format!("{path}.values[{key:?}]: expected a string"))),
            None => Ok(()),
        },
        Some(_) => Err(Error::BadRequest(format!("{path}.values: expected an object of string values"))),
    }
}

/// Whether `text` is a decimal above zero (`Some`), or not a decimal (`None`): digits,
/// at most one point with digits on both sides, an optional leading sign.
fn positive_decimal(text: &str) -> Option<bool> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, text.get(1..)?),
        b'+' => (false, text.get(1..)?),
        _ => (false, text),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, "0"));
    let all_digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let nonzero = whole.bytes().chain(fraction.bytes()).any(|b| b != b'0');
    Some(nonzero && !negative)
}

/// The response body (`TransferFactoryWithChoiceContext`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TransferFactory {
    /// The contract to exercise the factory choice on: the external party coin rules.
    pub factory_id: String,
    /// The kind of transfer.
    pub transfer_kind: TransferKind,
    /// The context of the factory choice.
    pub choice_context: ChoiceContext,
}

/// `POST /registry/transfer-instruction/{v1,v2}/transfer-factory`.
pub async fn transfer_factory<S: Store>(store: &S, env: &Env<'_>, body: &[u8]) -> Result<Response, Error> {
    let api_names = ApiNames::new(&env.config.names);
    let request = FactoryRequest::parse(body, &api_names.rules_context_key, env.now)?;
    Ok(Response::ok(&build(store, env, &request).await?))
}

/// The factory and its context for `request`; see the module docs.
pub async fn build<S: Store>(store: &S, env: &Env<'_>, request: &FactoryRequest) -> Result<TransferFactory, Error> {
    let claim = AdminClaim {
        expected_admin: &request.expected_admin,
        instrument_admin: &request.instrument_admin,
        instrument_id: &request.instrument_id,
        instrument_path: "choiceArguments.transfer.instrumentId",
    };
    let receiver = (request.sender != request.receiver).then_some(request.receiver.as_str());
    let (factory_id, preapproved, choice_context) =
        factory_context(store, env, &claim, receiver, request.exclude_debug_fields).await?;
    Ok(TransferFactory { factory_id, transfer_kind: request.kind(preapproved), choice_context })
}

/// The admin and instrument a factory request names, and where the instrument is in its body.
#[derive(Debug, Clone, Copy)]
pub(super) struct AdminClaim<'r> {
    pub(super) expected_admin: &'r str,
    pub(super) instrument_admin: &'r str,
    pub(super) instrument_id: &'r str,
    pub(super) instrument_path: &'r str,
}

/// Steps 1, 2 and 4 of the module docs: the factory (the external party coin rules) and
/// its context, with the preapproval of `receiver` (and its provider's featured app
/// right) when one is given and has one. Answers the factory id, whether a preapproval
/// was found, and the context.
pub(super) async fn factory_context<S: Store>(
    store: &S,
    env: &Env<'_>,
    request: &AdminClaim<'_>,
    receiver: Option<&str>,
    exclude_debug_fields: bool,
) -> Result<(String, bool, ChoiceContext), Error> {
    let names = TemplateNames::new(&env.config.names);
    let templates = ScanTemplates::new(&env.config.names);
    let api_names = ApiNames::new(&env.config.names);
    let coin = &api_names.coin_word;
    // The receiver's preapproval, and its provider, whose featured app rights the
    // registry's index holds.
    let preapproval = match receiver {
        Some(receiver) => read::lookup(store, Index::PreapprovalByReceiver, &[receiver]).await?,
        None => None,
    };
    let provider = match &preapproval {
        Some(preapproval) => {
            preapproval.payload()?.get("provider").and_then(serde_json::Value::as_str).map(String::from)
        }
        None => None,
    };
    let (standing, featured) = read_index(store, provider.is_some()).await?;
    let featured_ids: Vec<&str> = provider.as_deref().map(|p| featured.of(p).collect()).unwrap_or_default();

    // One read of every candidate's record and location.
    let mut ids: Vec<&str> = standing.ids().collect();
    ids.extend(preapproval.iter().map(|entry| entry.contract_id.as_str()));
    ids.extend(featured_ids.iter().copied());
    let (active, _) = read_active(store, &ids, &[]).await?;
    let chosen = Chosen::of(&standing, &active, standing_names(&names, &templates), env.now)?;
    let coin_rules =
        chosen.coin_rules.ok_or_else(|| Error::NotFound(format!("no active {coin} rules ({})", names.coin_rules)))?;
    let dso = dso_of(coin_rules)?;
    if request.expected_admin != dso {
        return Err(Error::BadRequest(format!(
            "choiceArguments.expectedAdmin: {:?} is not this registry's admin {dso:?}",
            request.expected_admin
        )));
    }
    let instrument = &env.config.names.coin;
    if request.instrument_admin != dso || request.instrument_id != *instrument {
        return Err(Error::BadRequest(format!(
            "{}: {{admin: {:?}, id: {:?}}} is not this registry's instrument {{admin: {dso:?}, id: {instrument:?}}}",
            request.instrument_path, request.instrument_admin, request.instrument_id
        )));
    }
    let factory = chosen.factory.ok_or_else(|| no_factory(&templates, coin))?;
    let open_round = chosen.open_round.ok_or_else(|| no_open_round(&names))?;
    let config = chosen.config_state;
    let preapproval = preapproval.and_then(|entry| active.get(&entry.contract_id));
    let featured = latest(among(&active, featured_ids, templates.name(Kind::FeaturedAppRight))?);

    let mut values = Map::new();
    values.insert(api_names.rules_context_key.clone(), contract_id_value(&coin_rules.contract_id));
    values.insert(OPEN_ROUND.into(), contract_id_value(&open_round.contract_id));
    if let Some(config) = config {
        values.insert(EXTERNAL_PARTY_CONFIG_STATE.into(), contract_id_value(&config.contract_id));
    }
    if let Some(featured) = featured {
        values.insert(FEATURED_APP_RIGHT.into(), contract_id_value(&featured.contract_id));
    }
    if let Some(preapproval) = preapproval {
        values.insert(TRANSFER_PREAPPROVAL.into(), contract_id_value(&preapproval.contract_id));
    }
    let disclose = [Some(coin_rules), Some(open_round), config, featured, preapproval, Some(factory)];
    let disclosed = disclose_all(disclose.into_iter().flatten(), exclude_debug_fields)?;
    let context =
        ChoiceContext { choice_context_data: serde_json::json!({ "values": values }), disclosed_contracts: disclosed };
    Ok((factory.contract_id.clone(), preapproval.is_some(), context))
}

/// The registry's standing contracts, and its featured app rights when `featured`
/// (else none): one `get_many`.
pub(super) async fn read_index<S: Store>(store: &S, featured: bool) -> Result<(Standing, Featured), Error> {
    let mut keys = alloc::vec![registry::standing_key()];
    if featured {
        keys.push(registry::featured_key());
    }
    let key_refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let mut values = store.get_many(&key_refs).await?.into_iter();
    let standing = Standing::read(values.next().flatten().as_deref())?;
    Ok((standing, Featured::read(values.next().flatten().as_deref())?))
}

/// The 404 when no external party coin rules, the factory, are active.
pub(super) fn no_factory(templates: &ScanTemplates, coin: &str) -> Error {
    Error::NotFound(format!(
        "no active external party {coin} rules ({}): the factory",
        templates.name(Kind::ExternalPartyCoinRules)
    ))
}

/// The DSO party the coin rules name.
pub(crate) fn dso_of(coin_rules: &Active) -> Result<String, Error> {
    coin_rules
        .text("dso")
        .map(String::from)
        .ok_or_else(|| Error::Internal(format!("coin rules {} name no dso party", coin_rules.contract_id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::Config;
    use crate::storage::exec::block_on;
    use crate::storage::store::MemoryStore;
    use serde_json::{Value, json};

    use super::super::tests::{created, node, round};

    const NOW: &str = "2026-01-01T00:00:00Z";

    fn party(name: &str) -> Value {
        json!({"party": name})
    }

    /// Coin rules and the factory of `dso::1`, an open round, and Bob's preapproval
    /// whose provider has a featured app right.
    fn registry() -> Vec<Value> {
        let at = "2024-01-01T00:00:00.000000Z";
        alloc::vec![
            created(
                "u1",
                "rules",
                "Platform.CoinRules:CoinRules",
                at,
                json!([{"label": "dso", "value": party("dso::1")}])
            ),
            created(
                "u2",
                "factory",
                "Platform.ExternalPartyCoinRules:ExternalPartyCoinRules",
                at,
                json!([{"label": "dso", "value": party("dso::1")}]),
            ),
            round("u3", "r1", 1, 1_704_067_200_000_000),
            created(
                "u4",
                "preapproval",
                "Platform.CoinRules:TransferPreapproval",
                at,
                json!([
                    {"label": "receiver", "value": party("bob::1")},
                    {"label": "provider", "value": party("app::1")}
                ]),
            ),
            created(
                "u5",
                "featured",
                "Platform.Coin:FeaturedAppRight",
                at,
                json!([{"label": "provider", "value": party("app::1")}])
            ),
            created("u6", "config", "Platform.ExternalPartyConfigState:ExternalPartyConfigState", at, json!([])),
        ]
    }

    fn body(sender: &str, receiver: &str) -> Value {
        json!({"choiceArguments": {
            "expectedAdmin": "dso::1",
            "transfer": {
                "sender": sender, "receiver": receiver, "amount": "10.5",
                "instrumentId": {"admin": "dso::1", "id": "Coin"},
                "requestedAt": "2025-12-31T23:00:00Z", "executeBefore": "2026-01-02T00:00:00Z",
                "inputHoldingCids": ["h1"], "meta": {"values": {}}
            },
            "extraArgs": {"context": {"values": {}}, "meta": {"values": {}}}
        }})
    }

    fn factory(store: &MemoryStore, body: &Value) -> Result<TransferFactory, Error> {
        let config = Config::default();
        let now = Timestamp::parse(NOW).unwrap();
        let env = Env { now, entropy: [0; 32], config: &config };
        let request = FactoryRequest::parse(&serde_json::to_vec(body).unwrap(), "coin-rules", now)?;
        block_on(build(store, &env, &request))
    }

    fn disclosed(factory: &TransferFactory) -> Vec<&str> {
        factory.choice_context.disclosed_contracts.iter().map(|c| c.contract_id.as_str()).collect()
    }

    fn keys(factory: &TransferFactory) -> Vec<&str> {
        factory.choice_context.choice_context_data["values"].as_object().unwrap().keys().map(String::as_str).collect()
    }

    #[test]
    fn a_receiver_with_a_preapproval_is_a_direct_transfer_with_it_and_its_providers_featured_right() {
        let store = node(&registry());
        let answer = factory(&store, &body("alice::1", "bob::1")).unwrap();
        assert_eq!(answer.transfer_kind, TransferKind::Direct);
        assert_eq!(answer.factory_id, "factory");
        assert_eq!(disclosed(&answer), ["rules", "r1", "config", "featured", "preapproval", "factory"]);
        let want =
            ["coin-rules", "open-round", "external-party-config-state", "featured-app-right", "transfer-preapproval"];
        assert_eq!(keys(&answer), want);
        assert_eq!(answer.choice_context.choice_context_data["values"]["transfer-preapproval"]["value"], "preapproval");
        assert_eq!(serde_json::to_value(&answer).unwrap()["transferKind"], "direct");
    }

    #[test]
    fn a_receiver_without_a_preapproval_gets_an_offer_and_a_sender_paying_itself_a_self_transfer() {
        let store = node(&registry());
        let offer = factory(&store, &body("alice::1", "carol::1")).unwrap();
        assert_eq!(offer.transfer_kind, TransferKind::Offer);
        assert_eq!(disclosed(&offer), ["rules", "r1", "config", "factory"]);
        // Bob has a preapproval, but a transfer to oneself never uses it.
        let own = factory(&store, &body("bob::1", "bob::1")).unwrap();
        assert_eq!(own.transfer_kind, TransferKind::SelfTransfer);
        assert_eq!(disclosed(&own), ["rules", "r1", "config", "factory"]);
        assert_eq!(serde_json::to_value(&own).unwrap()["transferKind"], "self");
    }

    #[test]
    fn malformed_arguments_are_refused_naming_the_field() {
        let store = node(&registry());
        let mut cases: Vec<(Value, &str)> = Vec::new();
        let with = |path: &[&str], value: Value| {
            let mut body = body("alice::1", "bob::1");
            let mut at = &mut body["choiceArguments"];
            for key in &path[..path.len() - 1] {
                at = &mut at[*key];
            }
            match value {
                Value::Null => {
                    at.as_object_mut().unwrap().remove(path[path.len() - 1]);
                }
                value => at[path[path.len() - 1]] = value,
            }
            body
        };
        cases.push((json!({}), "choiceArguments: required"));
        cases.push((json!({"choiceArguments": []}), "choiceArguments: expected an object"));
        cases.push((with(&["transfer", "receiver"], Value::Null), "choiceArguments.transfer.receiver: required"));
        cases.push((with(&["transfer", "sender"], json!(7)), "choiceArguments.transfer.sender: expected a string"));
        cases.push((with(&["expectedAdmin"], Value::Null), "choiceArguments.expectedAdmin: required"));
        cases
            .push((with(&["transfer", "amount"], json!("ten")), "choiceArguments.transfer.amount: expected a decimal"));
        cases.push((with(&["transfer", "amount"], json!("0.0")), "amount must be positive"));
        cases.push((with(&["transfer", "inputHoldingCids"], json!([])), "at least one holding"));
        cases.push((with(&["transfer", "inputHoldingCids"], json!([1])), "inputHoldingCids: expected a list"));
        cases.push((with(&["transfer", "instrumentId", "id"], Value::Null), "instrumentId.id: required"));
        cases.push((
            with(&["transfer", "requestedAt"], json!("yesterday")),
            "choiceArguments.transfer.requestedAt must be",
        ));
        cases.push((
            with(&["extraArgs", "meta"], json!({"values": {"open-round": "x"}})),
            "choiceArguments.extraArgs.meta.values[\"open-round\"]: reserved key",
        ));
        cases.push((
            with(&["extraArgs", "meta"], json!({"values": {"coin-rules": "x"}})),
            "choiceArguments.extraArgs.meta.values[\"coin-rules\"]: reserved key",
        ));
        cases.push((
            with(&["transfer", "meta"], json!({"values": {"k": 1}})),
            "choiceArguments.transfer.meta.values[\"k\"]: expected a string",
        ));
        cases.push((
            json!({"choiceArguments": body("a", "b")["choiceArguments"], "excludeDebugFields": 1}),
            "excludeDebugFields",
        ));
        for (body, want) in cases {
            match factory(&store, &body) {
                Err(Error::BadRequest(message)) => assert!(message.contains(want), "{body}: {message}"),
                other => panic!("{body}: {other:?}"),
            }
        }
        match FactoryRequest::parse(b"", "coin-rules", Timestamp::parse(NOW).unwrap()) {
            Err(Error::BadRequest(message)) => assert!(message.contains("request body required"), "{message}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_expired_or_future_dated_transfer_is_refused_as_the_ledger_would() {
        let store = node(&registry());
        let mut expired = body("alice::1", "bob::1");
        expired["choiceArguments"]["transfer"]["executeBefore"] = json!("2025-12-31T23:59:59Z");
        let mut future = body("alice::1", "bob::1");
        future["choiceArguments"]["transfer"]["requestedAt"] = json!("2026-01-01T00:00:01Z");
        for (body, want) in
            [(expired, "executeBefore: 2025-12-31T23:59:59"), (future, "requestedAt: 2026-01-01T00:00:01")]
        {
            match factory(&store, &body) {
                Err(Error::BadRequest(message)) => assert!(message.contains(want), "{message}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn another_admin_or_instrument_is_refused_and_missing_rules_or_factory_are_not_found() {
        let store = node(&registry());
        let mut admin = body("alice::1", "bob::1");
        admin["choiceArguments"]["expectedAdmin"] = json!("mallory::1");
        let mut instrument = body("alice::1", "bob::1");
        instrument["choiceArguments"]["transfer"]["instrumentId"]["id"] = json!("Other");
        for (body, want) in
            [(admin, "choiceArguments.expectedAdmin"), (instrument, "choiceArguments.transfer.instrumentId")]
        {
            match factory(&store, &body) {
                Err(Error::BadRequest(message)) => assert!(message.starts_with(want), "{message}"),
                other => panic!("{other:?}"),
            }
        }
        let mut records = registry();
        records.remove(1);
        match factory(&node(&records), &body("alice::1", "bob::1")) {
            Err(Error::NotFound(message)) => assert!(message.contains("external party coin rules"), "{message}"),
            other => panic!("{other:?}"),
        }
        match factory(&node(&registry()[1..]), &body("alice::1", "bob::1")) {
            Err(Error::NotFound(message)) => assert!(message.starts_with("no active coin rules"), "{message}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_disclosed_contract_in_flight_is_a_conflict() {
        let mut records = registry();
        records.push(json!({"update": {
            "update_id": "u9", "offset": "000000000000000100", "record_time": "2024-02-01T00:00:00.000000Z",
            "event": {"submitter": "dso::1", "source_synchronizer": "sync::1", "migration_id": 0,
                "target_synchronizer": "sync::2", "unassign_id": "un1", "reassignment_counter": 1,
                "contract_id": "preapproval"}
        }}));
        let store = node(&records);
        match factory(&store, &body("alice::1", "bob::1")) {
            Err(Error::Conflict(message)) => assert!(message.contains("preapproval"), "{message}"),
            other => panic!("{other:?}"),
        }
    }
}
