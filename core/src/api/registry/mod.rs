//! Token registry: what a token standard wallet asks the registry of the network's coin
//! (the token standard's off-ledger APIs, `token-standard/splice-api-token-*/openapi/*.yaml`
//! of `hyperledger-labs/splice`):
//!
//! - [`metadata`]: `GET /registry/metadata/v1/{info,instruments,instruments/{id}}`;
//! - [`factory`]: `POST /registry/transfer-instruction/{v1,v2}/transfer-factory`;
//! - [`allocation`]: `POST /registry/allocation-instruction/{v1,v2}/allocation-factory`,
//!   `POST /registry/allocations/v1/{allocationId}/choice-contexts/{execute-transfer,withdraw,cancel}`
//!   and `POST /registry/allocations/v2/{allocationId}/choice-contexts/{withdraw,cancel}`;
//! - [`candidates`]: how every context and factory reads and chooses the contracts it
//!   discloses, in one call;
//! - this module: the choice contexts of a transfer instruction, under both `v1` and `v2`
//!   (`POST /registry/transfer-instruction/{v1,v2}/{id}/choice-contexts/{choice}`), one
//!   context for both versions.
//!
//! The network's registry is its scan app's token standard handlers
//! (`apps/scan/src/main/scala/org/lfdecentralizedtrust/splice/scan/admin/http/HttpTokenStandard*Handler.scala`
//! and `apps/scan/.../scan/util/ChoiceContextBuilder.scala`); the rules below are theirs.
//!
//! ## Choice contexts
//!
//! `POST /registry/transfer-instruction/{v1,v2}/{id}/choice-contexts/{reject,withdraw,accept}`
//! answers the extra data a wallet needs to exercise that choice on the transfer
//! instruction `id`: `choiceContextData` (`{"values": {key: AnyValue}}`) and the contracts
//! to disclose to the participant that submits it.
//!
//! ## The rules, in the order they are checked
//!
//! 0. The body is a `GetChoiceContextRequest` ([`ContextRequest::parse`]); anything else,
//!    or a `meta` key that the node sets itself ([`reserved_keys`]), is a 400.
//! 1. `id` must be an active transfer instruction (matched by qualified template name,
//!    the package id ignored): else 404.
//! 2. Its locked coin (payload field `locked<Coin>`) no longer active: for reject and
//!    withdraw the context is `expire-lock = false` and nothing is disclosed (there is no
//!    lock left to expire); for accept, which needs the coin, a 404 that names it.
//! 3. Otherwise the values are `{coin}-rules` (`coin-rules` by default, `amulet-rules`
//!    for the coin `Amulet`: the configured currency word in lower case,
//!    [`crate::model::names::ApiNames`]), `open-round` (the open round in use: the
//!    active open round with the highest `round.number` whose `opensAt` is not after
//!    now; none is a 404), `external-party-config-state` (only when one is active) and
//!    `expire-lock = true`, and the disclosed contracts are, in this order, coin rules,
//!    open round, external party config state (if any) and the locked coin. Coin rules and
//!    the external party config state are singletons: when several are active, the one
//!    created last wins, then the highest contract id. No active coin rules is a 404.
//!    A disclosed contract being reassigned (unassigned, not yet assigned) is a 409 that
//!    names it; one whose created event blob this node does not hold (a follower of a
//!    public upstream that has not disclosed it) is a 503 that names it.
//! 4. `meta` entries join the values as `{"tag":"AV_Text","value":v}` on every path.
//!
//! Precedence: 400, then 404, then 409. The three choices share one context (accept only
//! differs in step 2). The context depends on nothing but the instruction id and `meta`
//! (and which contracts are active), never on other choice arguments, so clients can
//! prefetch it when they chain several token standard actions into one transaction.
//!
//! ## Body decisions
//!
//! - The body is required: an empty body is a 400 that says `{}` will do. A key repeated
//!   in one of its objects is a 400 naming the key, as in every request body.
//! - Unknown fields are ignored, so a client written against a later minor version of the
//!   registry API still gets an answer; `null` for `meta` or `excludeDebugFields` means
//!   absent (generated clients often serialize an unset option as `null`).
//! - `meta` entries come out sorted by key, so that equal requests get equal contexts.
//! - `excludeDebugFields: true` drops `debugPackageName`, `debugPayload` and
//!   `debugCreatedAt` from every disclosed contract.
//!
//! ## Store reads
//!
//! Two calls, whatever the size of the history: one `get_many` of the registry's
//! standing contracts ([`crate::state::registry`]) and the instruction's record, then one
//! `get_many` of the records of the locked coin and of every standing contract, with
//! where each is now ([`candidates`]). A 404 for the instruction is the first call
//! alone.

pub mod allocation;
pub mod candidates;
pub mod factory;
pub mod metadata;

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;
use serde_json::{Map, Value as Json, json};

use crate::api::http::{Request, Response};
use crate::api::route::{RegistryApi, RegistryRoute, TransferChoice};
use crate::model::env::Env;
use crate::model::error::Error;
use crate::model::ids::{ContractId, PathParam};
use crate::model::names::{ApiNames, TemplateNames};
use crate::state::ledger::contracts::{self, Creation};
use crate::state::registry::{self, Featured, Standing};
use crate::state::scan::{Kind, ScanTemplates};
use crate::storage::store::Store;
use candidates::{Chosen, StandingNames, among, contract_id_value, disclose_all, latest, read_active};

/// Context keys the node sets itself, given its coin rules key (`coin-rules` by
/// default); a `meta` key may not be one of them.
pub fn reserved_keys(rules_key: &str) -> [&str; 4] {
    [rules_key, OPEN_ROUND, EXTERNAL_PARTY_CONFIG_STATE, EXPIRE_LOCK]
}

pub(crate) const OPEN_ROUND: &str = "open-round";
pub(crate) const EXTERNAL_PARTY_CONFIG_STATE: &str = "external-party-config-state";
pub(crate) const EXPIRE_LOCK: &str = "expire-lock";

/// A parsed `GetChoiceContextRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextRequest {
    /// Metadata to add to the context, sorted by key; no key is reserved.
    pub meta: BTreeMap<String, String>,
    /// Whether to leave out every `debug*` field.
    pub exclude_debug_fields: bool,
}

impl ContextRequest {
    /// Parses the request body for a node whose coin rules key is `rules_key`; see the
    /// module docs for what is accepted.
    pub fn parse(body: &[u8], rules_key: &str) -> Result<Self, Error> {
        Self::parse_reserving(body, &reserved_keys(rules_key))
    }

    /// Parses the request body of a context whose node-set keys are `reserved`.
    pub fn parse_reserving(body: &[u8], reserved: &[&str]) -> Result<Self, Error> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(bad("request body required: a GetChoiceContextRequest JSON object; {} will do"));
        }
        // The node's own reader: a key repeated in an object is refused, not resolved.
        let json = crate::model::json::Json::parse(body)
            .map_err(|e| Error::BadRequest(format!("request body is not valid JSON: {e}")))?;
        let Some(object) = json.as_object() else {
            return Err(bad("request body: expected a JSON object (GetChoiceContextRequest)"));
        };
        let mut request = ContextRequest::default();
        match object.get("excludeDebugFields") {
            None | Some(crate::model::json::Json::Null) => {}
            Some(crate::model::json::Json::Bool(b)) => request.exclude_debug_fields = *b,
            Some(_) => return Err(bad("excludeDebugFields: expected a boolean")),
        }
        match object.get("meta") {
            None | Some(crate::model::json::Json::Null) => {}
            Some(crate::model::json::Json::Object(meta)) => {
                for (key, value) in meta.iter() {
                    let Some(value) = value.as_str() else {
                        return Err(Error::BadRequest(format!("meta[{key:?}]: expected a string")));
                    };
                    if reserved.contains(&key) {
                        return Err(Error::BadRequest(format!(
                            "meta[{key:?}]: reserved key; the node sets {key:?} in the choice context itself"
                        )));
                    }
                    request.meta.insert(key.into(), value.into());
                }
            }
            Some(_) => return Err(bad("meta: expected an object of string values")),
        }
        Ok(request)
    }
}

fn bad(message: &str) -> Error {
    Error::BadRequest(message.into())
}

/// The response body (`ChoiceContext`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChoiceContext {
    /// `{"values": {key: AnyValue}}`.
    pub choice_context_data: Json,
    /// The contracts to disclose.
    pub disclosed_contracts: Vec<DisclosedContract>,
}

/// A contract to disclose (`DisclosedContract`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DisclosedContract {
    /// The full template id, as ingested.
    pub template_id: String,
    /// The contract id.
    pub contract_id: String,
    /// The created event blob as ingested; empty when none was given.
    pub created_event_blob: String,
    /// The synchronizer the contract is assigned to now.
    pub synchronizer_id: String,
    /// The package name of the created event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub debug_package_name: Option<String>,
    /// The create arguments in `compact_json`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub debug_payload: Option<Json>,
    /// The ledger effective time of the creation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub debug_created_at: Option<String>,
}

/// Serves one registry call of [`RegistryRoute`].
pub async fn handle<S: Store>(
    route: RegistryRoute,
    request: &Request,
    body: &[u8],
    env: &Env<'_>,
    store: &S,
) -> Result<Response, Error> {
    match route {
        RegistryRoute::Info => metadata::info(store, env).await,
        RegistryRoute::Instruments => metadata::instruments(store, env, &request.query).await,
        RegistryRoute::Instrument { instrument_id } => metadata::instrument_by_id(store, env, instrument_id).await,
        RegistryRoute::TransferFactory { api: _ } => factory::transfer_factory(store, env, body).await,
        RegistryRoute::ChoiceContextV1 { transfer_instruction_id, choice } => {
            choice_context(store, env, transfer_instruction_id, choice, body).await
        }
        RegistryRoute::AllocationFactory { api: RegistryApi::V1 } => {
            allocation::allocation_factory(store, env, body).await
        }
        RegistryRoute::AllocationFactory { api: RegistryApi::V2 } => {
            allocation::allocation_factory_v2(store, env, body).await
        }
        RegistryRoute::AllocationContext { api: _, allocation_id, choice } => {
            allocation::choice_context(store, env, allocation_id, choice, body).await
        }
    }
}

/// `POST /registry/transfer-instruction/{v1,v2}/{id}/choice-contexts/{choice}`: the body is
/// checked before the id in the path.
pub async fn choice_context<S: Store>(
    store: &S,
    env: &Env<'_>,
    instruction_id: PathParam<ContractId>,
    choice: TransferChoice,
    body: &[u8],
) -> Result<Response, Error> {
    let api_names = ApiNames::new(&env.config.names);
    let request = ContextRequest::parse(body, &api_names.rules_context_key)?;
    let instruction_id = instruction_id?;
    let context = build(store, env, &instruction_id, choice, &request).await?;
    Ok(Response::ok(&context))
}

/// The choice context for `instruction_id`; see the module docs.
pub async fn build<S: Store>(
    store: &S,
    env: &Env<'_>,
    instruction_id: &str,
    choice: TransferChoice,
    request: &ContextRequest,
) -> Result<ChoiceContext, Error> {
    let names = TemplateNames::new(&env.config.names);
    let coin = ApiNames::new(&env.config.names).coin_word;
    let (standing, _, instruction) = read_holder(store, instruction_id, false).await?;
    let payload = instruction
        .filter(|creation| creation.template_id.qualified_name() == names.transfer_instruction)
        .map(|creation| creation.payload)
        .ok_or_else(|| {
            Error::NotFound(format!("no active transfer instruction {instruction_id} ({})", names.transfer_instruction))
        })?;
    let locked_coin_id = payload.get(&names.locked_coin_field).and_then(Json::as_str).ok_or_else(|| {
        Error::NotFound(format!(
            "transfer instruction {instruction_id} names no locked {coin} (payload field {})",
            names.locked_coin_field
        ))
    })?;
    let lock = LockedHolding {
        description: format!("transfer instruction {instruction_id}"),
        locked_coin_id: locked_coin_id.into(),
        required: choice == TransferChoice::Accept,
        featured: Vec::new(),
    };
    two_step_context(store, env, &lock, &standing, request).await
}

/// What a choice context on a contract that holds a locked coin (a transfer
/// instruction, an allocation) reads first, in one `get_many`: the standing contracts,
/// the featured app rights when `featured` (else none), and the holder's creation
/// (`None` unless its record is active).
pub(crate) async fn read_holder<S: Store>(
    store: &S,
    holder_id: &str,
    featured: bool,
) -> Result<(Standing, Featured, Option<Creation>), Error> {
    let mut keys = alloc::vec![registry::standing_key(), contracts::contract_key(holder_id)];
    if featured {
        keys.push(registry::featured_key());
    }
    let key_refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let mut values = store.get_many(&key_refs).await?.into_iter();
    let standing = Standing::read(values.next().flatten().as_deref())?;
    let holder = match values.next().flatten() {
        Some(bytes) => contracts::decode(holder_id, &bytes)?.creation().cloned(),
        None => None,
    };
    let featured = Featured::read(values.next().flatten().as_deref())?;
    Ok((standing, featured, holder))
}

/// The coin a two-step transfer holds locked (a transfer instruction's, an
/// allocation's), and what its choice needs around it.
#[derive(Debug, Clone)]
pub(crate) struct LockedHolding {
    /// What holds the lock, for messages (`transfer instruction 00ab`).
    pub(crate) description: String,
    /// The locked coin's contract id.
    pub(crate) locked_coin_id: String,
    /// Whether the choice needs the coin (a transfer out of it): then its absence is a 404.
    pub(crate) required: bool,
    /// The ids of the featured app rights of the party the context may feature (none:
    /// it features nobody).
    pub(crate) featured: Vec<String>,
}

/// The context of a choice that completes or aborts a two-step transfer out of a
/// locked coin: steps 2 to 4 of the module docs, with the latest of `lock`'s featured
/// app rights (value `featured-app-right`, disclosed last) when one is active. One
/// `get_many`: the locked coin, the standing contracts and the featured app rights,
/// with where each is now.
pub(crate) async fn two_step_context<S: Store>(
    store: &S,
    env: &Env<'_>,
    lock: &LockedHolding,
    standing: &Standing,
    request: &ContextRequest,
) -> Result<ChoiceContext, Error> {
    let names = TemplateNames::new(&env.config.names);
    let templates = ScanTemplates::new(&env.config.names);
    let coin = ApiNames::new(&env.config.names).coin_word;
    let locked_coin_id = lock.locked_coin_id.as_str();
    let mut ids: Vec<&str> = alloc::vec![locked_coin_id];
    ids.extend(standing.ids());
    ids.extend(lock.featured.iter().map(String::as_str));
    let (active, _) = read_active(store, &ids, &[]).await?;
    let Some(locked_coin) = active.get(locked_coin_id) else {
        if lock.required {
            return Err(Error::NotFound(format!(
                "locked {coin} {locked_coin_id} of {} is no longer active",
                lock.description
            )));
        }
        let mut values = Map::new();
        values.insert(EXPIRE_LOCK.into(), json!({"tag": "AV_Bool", "value": false}));
        return Ok(ChoiceContext { choice_context_data: with_meta(values, request), disclosed_contracts: Vec::new() });
    };

    let chosen = Chosen::of(standing, &active, standing_names(&names, &templates), env.now)?;
    let coin_rules =
        chosen.coin_rules.ok_or_else(|| Error::NotFound(format!("no active {coin} rules ({})", names.coin_rules)))?;
    let open_round = chosen.open_round.ok_or_else(|| no_open_round(&names))?;
    let featured_template = templates.name(Kind::FeaturedAppRight);
    let featured = latest(among(&active, lock.featured.iter().map(String::as_str), featured_template)?);

    let mut values = Map::new();
    values.insert(ApiNames::new(&env.config.names).rules_context_key, contract_id_value(&coin_rules.contract_id));
    values.insert(OPEN_ROUND.into(), contract_id_value(&open_round.contract_id));
    if let Some(config) = chosen.config_state {
        values.insert(EXTERNAL_PARTY_CONFIG_STATE.into(), contract_id_value(&config.contract_id));
    }
    values.insert(EXPIRE_LOCK.into(), json!({"tag": "AV_Bool", "value": true}));
    if let Some(featured) = featured {
        values.insert(factory::FEATURED_APP_RIGHT.into(), contract_id_value(&featured.contract_id));
    }

    let disclose = [Some(coin_rules), Some(open_round), chosen.config_state, Some(locked_coin), featured];
    let disclosed = disclose_all(disclose.into_iter().flatten(), request.exclude_debug_fields)?;
    Ok(ChoiceContext { choice_context_data: with_meta(values, request), disclosed_contracts: disclosed })
}

/// The qualified names of the standing templates, as `names` and `templates` spell them.
pub(crate) fn standing_names<'n>(names: &'n TemplateNames, templates: &'n ScanTemplates) -> StandingNames<'n> {
    StandingNames {
        coin_rules: &names.coin_rules,
        factory: templates.name(Kind::ExternalPartyCoinRules),
        config_state: &names.external_party_config,
        open_round: &names.open_round,
    }
}

/// The 404 when no open round is in use.
pub(crate) fn no_open_round(names: &TemplateNames) -> Error {
    Error::NotFound(format!(
        "no open mining round in use: no active {} has opened yet (opensAt not after now)",
        names.open_round
    ))
}

/// `{"values": values + meta}`.
fn with_meta(mut values: Map<String, Json>, request: &ContextRequest) -> Json {
    for (key, value) in &request.meta {
        values.insert(key.clone(), json!({"tag": "AV_Text", "value": value}));
    }
    json!({ "values": values })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::Config;
    use crate::model::time::Timestamp;
    use crate::storage::exec::block_on;
    use crate::storage::store::MemoryStore;

    fn parse(body: &str) -> Result<ContextRequest, Error> {
        ContextRequest::parse(body.as_bytes(), "coin-rules")
    }

    #[test]
    fn an_empty_object_is_a_request_with_defaults() {
        assert_eq!(parse("{}"), Ok(ContextRequest::default()));
        assert_eq!(parse(r#"{"meta":null,"excludeDebugFields":null}"#), Ok(ContextRequest::default()));
    }

    #[test]
    fn meta_and_exclude_debug_fields_are_read_and_unknown_fields_ignored() {
        let request = parse(r#"{"meta":{"b":"2","a":"1"},"excludeDebugFields":true,"later":1}"#).unwrap();
        assert!(request.exclude_debug_fields);
        assert_eq!(request.meta.into_iter().collect::<Vec<_>>(), [("a".into(), "1".into()), ("b".into(), "2".into())]);
    }

    #[test]
    fn malformed_bodies_are_refused_naming_the_problem() {
        let cases = [
            ("", "request body required"),
            ("  \n", "request body required"),
            ("{", "not valid JSON"),
            ("[]", "expected a JSON object"),
            (r#"{"excludeDebugFields":"yes"}"#, "excludeDebugFields: expected a boolean"),
            (r#"{"meta":[]}"#, "meta: expected an object"),
            (r#"{"meta":{"k":1}}"#, "meta[\"k\"]: expected a string"),
            (r#"{"meta":{"expire-lock":"x"}}"#, "meta[\"expire-lock\"]: reserved key"),
            (r#"{"meta":{"k":"1","k":"2"}}"#, "the key \"k\" appears twice in one object"),
            (r#"{"meta":{},"meta":{"k":"2"}}"#, "the key \"meta\" appears twice in one object"),
            (r#"{"meta":{"coin-rules":"x"}}"#, "meta[\"coin-rules\"]: reserved key"),
        ];
        for (body, want) in cases {
            match parse(body) {
                Err(Error::BadRequest(message)) => assert!(message.contains(want), "{body:?}: {message}"),
                other => panic!("{body:?}: {other:?}"),
            }
        }
    }

    pub(super) fn created(update_id: &str, cid: &str, template: &str, created_at: &str, fields: Json) -> Json {
        json!({"update": {
            "update_id": update_id, "migration_id": 0, "workflow_id": "",
            "record_time": "2024-01-01T00:00:00.000000Z", "synchronizer_id": "sync::1",
            "effective_at": created_at, "root_event_ids": [format!("{update_id}:0")],
            "events_by_id": {format!("{update_id}:0"): {
                "event_type": "created_event", "event_id": format!("{update_id}:0"), "contract_id": cid,
                "template_id": format!("pkg:{template}"), "package_name": "platform",
                "create_arguments": {"record": {"fields": fields}},
                "created_at": created_at, "signatories": ["dso::1"], "observers": [],
                "created_event_blob": "AAEC"
            }}
        }})
    }

    pub(super) fn round(update_id: &str, cid: &str, number: i64, opens_at_micros: i64) -> Json {
        created(
            update_id,
            cid,
            "Platform.Round:OpenMiningRound",
            "2024-01-01T00:00:00.000000Z",
            json!([
                {"label": "round", "value": {"record": {"fields": [
                    {"label": "number", "value": {"int64": format!("{number}")}}
                ]}}},
                {"label": "opensAt", "value": {"timestamp": format!("{opens_at_micros}")}}
            ]),
        )
    }

    pub(super) fn node(records: &[Json]) -> MemoryStore {
        node_named(records, &Config::default())
    }

    /// A node that ingested `records` under `config`'s names.
    pub(super) fn node_named(records: &[Json], config: &Config) -> MemoryStore {
        let store = MemoryStore::new();
        let body: String = records.iter().map(|r| format!("{r}\n")).collect();
        block_on(crate::ingest::ingest(body.as_bytes(), &store, config)).unwrap();
        store
    }

    fn context(store: &MemoryStore, choice: TransferChoice) -> Result<ChoiceContext, Error> {
        context_with(store, choice, Config::default())
    }

    fn context_with(store: &MemoryStore, choice: TransferChoice, config: Config) -> Result<ChoiceContext, Error> {
        let now = Timestamp::parse("2026-01-01T00:00:00Z").unwrap();
        let env = Env { now, entropy: [0; 32], config: &config };
        block_on(build(store, &env, "ti", choice, &ContextRequest::default()))
    }

    fn basics() -> Vec<Json> {
        let at = "2024-01-01T00:00:00.000000Z";
        alloc::vec![
            created("u1", "rules-old", "Platform.CoinRules:CoinRules", "2024-01-01T00:00:00.000000Z", json!([])),
            created("u2", "rules-new", "Platform.CoinRules:CoinRules", "2024-06-01T00:00:00.000000Z", json!([])),
            created("u3", "coin", "Platform.Coin:LockedCoin", at, json!([])),
            created(
                "u4",
                "ti",
                "Platform.CoinTransferInstruction:CoinTransferInstruction",
                at,
                json!([{"label": "lockedCoin", "value": {"contractId": "coin"}}]),
            ),
            // Opened in 2024, 2025 and 2099: round 8 is the one in use on 2026-01-01.
            round("u5", "r7", 7, 1_704_067_200_000_000),
            round("u6", "r8", 8, 1_735_689_600_000_000),
            round("u7", "r9", 9, 4_070_908_800_000_000),
        ]
    }

    #[test]
    fn the_latest_coin_rules_and_the_highest_open_round_already_open_are_chosen() {
        let store = node(&basics());
        let ctx = context(&store, TransferChoice::Reject).unwrap();
        let ids: Vec<&str> = ctx.disclosed_contracts.iter().map(|c| c.contract_id.as_str()).collect();
        assert_eq!(ids, ["rules-new", "r8", "coin"]);
        assert_eq!(ctx.choice_context_data["values"]["open-round"]["value"], "r8");
        assert_eq!(ctx.choice_context_data["values"]["expire-lock"]["value"], true);
        assert_eq!(ctx.disclosed_contracts[0].debug_package_name.as_deref(), Some("platform"));
    }

    #[test]
    fn an_unreadable_stored_candidate_is_an_internal_error_naming_it_not_the_oldest() {
        let store = node(&basics());
        let key = contracts::contract_key("rules-new");
        let held = String::from_utf8(store.get_now(&key).unwrap()).unwrap();
        let mut batch = crate::storage::store::WriteBatch::new();
        batch.put(key, held.replace("2024-06-01T00:00:00.000000Z", "June 2024").into_bytes());
        block_on(store.write(&batch)).unwrap();
        match context(&store, TransferChoice::Reject) {
            Err(error @ Error::Internal(_)) => {
                assert_eq!(error.status(), 500);
                let message = format!("{error}");
                assert!(message.starts_with("contract rules-new: unreadable stored record: created_at"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_gone_locked_coin_expires_nothing_for_reject_and_is_not_found_for_accept() {
        let mut records = basics();
        records.remove(2);
        let store = node(&records);
        let ctx = context(&store, TransferChoice::Withdraw).unwrap();
        assert_eq!(ctx.choice_context_data, json!({"values": {"expire-lock": {"tag": "AV_Bool", "value": false}}}));
        assert!(ctx.disclosed_contracts.is_empty());
        match context(&store, TransferChoice::Accept) {
            Err(Error::NotFound(message)) => assert!(message.contains("locked coin coin"), "{message}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn another_spelling_reads_its_own_templates_and_locked_coin_field() {
        let at = "2024-01-01T00:00:00.000000Z";
        let mut config = Config::default();
        config.names = crate::model::config::Names { root: "Splice".into(), coin: "Amulet".into() };
        let records = [
            created("u1", "rules", "Splice.AmuletRules:AmuletRules", at, json!([])),
            created("u2", "coin", "Splice.Amulet:LockedAmulet", at, json!([])),
            created(
                "u3",
                "ti",
                "Splice.AmuletTransferInstruction:AmuletTransferInstruction",
                at,
                json!([{"label": "lockedAmulet", "value": {"contractId": "coin"}}]),
            ),
            created(
                "u4",
                "r1",
                "Splice.Round:OpenMiningRound",
                at,
                json!([
                    {"label": "round", "value": {"record": {"fields": [{"label": "number", "value": {"int64": "1"}}]}}},
                    {"label": "opensAt", "value": {"timestamp": "1704067200000000"}}
                ]),
            ),
        ];
        let store = node_named(&records, &config);
        let ctx = context_with(&store, TransferChoice::Accept, config).unwrap();
        let ids: Vec<&str> = ctx.disclosed_contracts.iter().map(|c| c.contract_id.as_str()).collect();
        assert_eq!(ids, ["rules", "r1", "coin"]);
        let values = ctx.choice_context_data["values"].as_object().unwrap();
        assert_eq!(values["amulet-rules"], json!({"tag": "AV_ContractId", "value": "rules"}));
        assert!(!values.contains_key("coin-rules"));
        // Under the default names the same history holds no transfer instruction.
        assert!(matches!(context(&node(&records), TransferChoice::Accept), Err(Error::NotFound(_))));
    }

    #[test]
    fn messages_name_the_configured_coin() {
        let amulet = Config {
            names: crate::model::config::Names { root: "Splice".into(), coin: "Amulet".into() },
            ..Config::default()
        };
        let message = |result: Result<ChoiceContext, Error>| match result {
            Err(Error::NotFound(message)) => message,
            other => panic!("{other:?}"),
        };
        let at = "2024-01-01T00:00:00.000000Z";
        let instruction = |field: &str| {
            created(
                "u1",
                "ti",
                "Splice.AmuletTransferInstruction:AmuletTransferInstruction",
                at,
                json!([{"label": field, "value": {"contractId": "gone"}}]),
            )
        };
        // The locked amulet is gone; the instruction names none; there are no amulet rules.
        let gone = message(context_with(
            &node_named(&[instruction("lockedAmulet")], &amulet),
            TransferChoice::Accept,
            amulet.clone(),
        ));
        assert!(gone.starts_with("locked amulet gone of transfer instruction ti"), "{gone}");
        let unnamed = message(context_with(
            &node_named(&[instruction("other")], &amulet),
            TransferChoice::Accept,
            amulet.clone(),
        ));
        assert!(unnamed.contains("names no locked amulet (payload field lockedAmulet)"), "{unnamed}");
        let held = created("u2", "gone", "Splice.Amulet:LockedAmulet", at, json!([]));
        let no_rules = message(context_with(
            &node_named(&[instruction("lockedAmulet"), held], &amulet),
            TransferChoice::Accept,
            amulet.clone(),
        ));
        assert!(no_rules.starts_with("no active amulet rules (Splice.AmuletRules:AmuletRules)"), "{no_rules}");
        for message in [gone, unnamed, no_rules] {
            assert!(!message.to_ascii_lowercase().contains("coin"), "{message}");
        }
    }

    #[test]
    fn the_reserved_coin_rules_key_follows_the_coin() {
        let amulet = |body: &str| ContextRequest::parse(body.as_bytes(), "amulet-rules");
        match amulet(r#"{"meta":{"amulet-rules":"x"}}"#) {
            Err(Error::BadRequest(message)) => {
                assert!(message.contains("meta[\"amulet-rules\"]: reserved key"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        // Not a key this node sets: it is the client's metadata.
        let request = amulet(r#"{"meta":{"coin-rules":"x"}}"#).unwrap();
        assert_eq!(request.meta.get("coin-rules").map(String::as_str), Some("x"));
    }
}
