//! Allocations: the coin locked for a settlement that an app executes for several
//! parties at once (delivery versus payment).
//!
//! - `POST /registry/allocation-instruction/{v1,v2}/allocation-factory`: which contract
//!   to exercise `AllocationFactory_Allocate` on, with which choice context;
//! - `POST /registry/allocations/v1/{allocationId}/choice-contexts/{execute-transfer,withdraw,cancel}`
//!   and `POST /registry/allocations/v2/{allocationId}/choice-contexts/{withdraw,cancel}`:
//!   the context of a choice on an allocation.
//!
//! Followed from `hyperledger-labs/splice`: the APIs
//! (`token-standard/splice-api-token-allocation-instruction-v1/openapi/allocation-instruction-v1.yaml`,
//! `token-standard/splice-api-token-allocation-v1/openapi/allocation-v1.yaml`), the scan
//! app's handlers (`HttpTokenStandardAllocationInstructionHandler.scala`,
//! `HttpTokenStandardAllocationHandler.scala`, `scan/util/ChoiceContextBuilder.scala`),
//! and the coin's implementation (`daml/splice-amulet/daml/Splice/AmuletAllocation.daml`,
//! and `amulet_allocationFactoryV1_allocateImpl` in `ExternalPartyAmuletRules.daml`).
//!
//! ## Version 2
//!
//! The network's v2 APIs (`token-standard/splice-api-token-allocation-instruction-v2/openapi/allocation-instruction-v2.yaml`,
//! `token-standard/splice-api-token-allocation-v2/openapi/allocation-v2.yaml`) define
//! these paths, which its registry serves from the same handlers as v1, with the v1
//! shapes of request and answer:
//!
//! - `POST /registry/allocation-instruction/v2/allocation-factory`: the factory of the
//!   v2 `AllocationFactory_Allocate`. The network reads only the request's envelope
//!   (`choiceArguments` an object, `excludeDebugFields`), so does this node: the v2
//!   arguments are checked by the ledger. Its context holds only
//!   `external-party-config-state` (when one is active), disclosed before the factory;
//!   no coin rules are needed in the context, but their absence is a 404 as in v1.
//! - `POST /registry/allocations/v2/{allocationId}/choice-contexts/{withdraw,cancel}`:
//!   the v1 contexts of the same choices. The network builds them from its v1
//!   allocation template (`{root}.{coin}Allocation:{coin}Allocation`, which also
//!   implements the v2 interface), so does this node; an allocation of its v2-only
//!   template (`{root}.{coin}AllocationV2:{coin}AllocationV2`) is a 404 there, and here.
//!   v2 has no `execute-transfer` context: a v2 settlement goes through the factory
//!   below, not a choice on the allocation.
//!
//! The v2 settlement factory (`POST /registry/allocation/v2/settlement-factory`) is not
//! served: the only contracts it adds to the factory's context are the locked coins of
//! the named allocations of the v2-only template, whose choice argument the network's
//! preview API still reshapes from release to release (a list of allocation ids, then
//! of finalized allocations). A node that served it now would answer for a shape the
//! network no longer sends; it answers 404 (no such path) until the API settles.
//!
//! ## The allocation factory, in the order it checks
//!
//! 0. The body is a `GetFactoryRequest` whose `choiceArguments` are the
//!    `AllocationFactory_Allocate` arguments in the JSON API's encoding: `expectedAdmin`;
//!    `allocation` with `settlement` (`executor`, `settlementRef` with `id` and an
//!    optional `cid`, `requestedAt`, `allocateBefore`, `settleBefore`, an optional
//!    `meta`), `transferLegId` and `transferLeg` (`sender`, `receiver`, `amount`,
//!    `instrumentId` with `admin` and `id`, an optional `meta`); `requestedAt`;
//!    `inputHoldingCids`; an optional `extraArgs`. A missing field or one of the wrong
//!    type is a 400 naming its path, as is a key of `extraArgs.meta.values` that the
//!    factory sets in the context itself (`{coin}-rules`, `open-round`,
//!    `external-party-config-state`). Then what the network's choice refuses, in its
//!    order, is a 400: a settlement requested after now, an `allocateBefore` that is not
//!    after now (too late to allocate), an `allocateBefore` after the `settleBefore`, an
//!    amount not above zero, an allocation requested after now, no input holding.
//! 1. to 3. As the transfer factory ([`super::factory`]): the coin rules (404), the
//!    admin and the instrument (400), the external party coin rules as the factory and
//!    an open round in use (404), a disclosed contract being reassigned (409). The
//!    context is `{coin}-rules`, `open-round` and `external-party-config-state` (when one
//!    is active), disclosed in that order, then the factory: an allocation never uses a
//!    preapproval.
//!
//! ## The choice contexts
//!
//! 0. The body is a `GetChoiceContextRequest`, as for a transfer instruction
//!    ([`super::ContextRequest`]); its reserved keys add `featured-app-right`.
//! 1. `allocationId` must be an active allocation of the coin
//!    (`{root}.{coin}Allocation:{coin}Allocation`, the package id ignored): else 404.
//! 2. Its locked coin (payload field `locked{coin}`) no longer active: for withdraw and
//!    cancel the context is `expire-lock = false` and nothing is disclosed; for
//!    execute-transfer, which pays out of it, a 404 naming it.
//! 3. Otherwise the context of a transfer instruction's choice (see [`super`]): coin
//!    rules, open round, external party config state if any, `expire-lock = true`, with
//!    the locked coin disclosed; and for execute-transfer only, the featured app right
//!    of the settlement's `executor` when it has one (`featured-app-right`, disclosed
//!    last), since the executor is the one who may be featured for the settlement.
//!
//! Precedence: 400, then 404, then 409.
//!
//! ## Store reads
//!
//! Two calls each, whatever the size of the history. The factories: one `get` of the
//! registry's standing contracts ([`crate::state::registry`]), one `get_many` of their
//! records with where each is now ([`super::candidates`]). A context: one `get_many` of
//! the standing contracts and the allocation's record (with the featured app rights,
//! for execute-transfer), then one `get_many` of the records of the locked coin, the
//! standing contracts and the executor's featured app rights, with where each is now.
//!
//! The live allocations are also kept in the Scan state (`A`, kind
//! [`Kind::CoinAllocation`]); a context reads the allocation by id from the ledger.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;
use serde_json::Value;

use super::candidates::{Chosen, contract_id_value, disclose_all, read_active};
use super::factory::{
    self, AdminClaim, amount, bad, choice_arguments, extra_args, input_holdings, object, request_body, string_map, text,
};
use super::{
    ChoiceContext, ContextRequest, EXPIRE_LOCK, EXTERNAL_PARTY_CONFIG_STATE, LockedHolding, OPEN_ROUND, standing_names,
    two_step_context,
};
use crate::api::http::Response;
use crate::api::route::AllocationChoice;
use crate::model::env::Env;
use crate::model::error::Error;
use crate::model::ids::{ContractId, PathParam};
use crate::model::json::Json;
use crate::model::names::{ApiNames, TemplateNames};
use crate::model::time::Timestamp;
use crate::state::scan::{Kind, ScanTemplates};
use crate::storage::store::Store;

/// The context keys the allocation factory sets itself; a key of
/// `extraArgs.meta.values` may not be one of them.
pub fn factory_reserved_keys(rules_key: &str) -> [&str; 3] {
    [rules_key, OPEN_ROUND, EXTERNAL_PARTY_CONFIG_STATE]
}

/// The context keys an allocation's choice context sets itself; a `meta` key may not be
/// one of them.
pub fn context_reserved_keys(rules_key: &str) -> [&str; 5] {
    [rules_key, OPEN_ROUND, EXTERNAL_PARTY_CONFIG_STATE, EXPIRE_LOCK, factory::FEATURED_APP_RIGHT]
}

/// A parsed `GetFactoryRequest` for `AllocationFactory_Allocate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocationRequest {
    /// `choiceArguments.expectedAdmin`.
    pub expected_admin: String,
    /// `choiceArguments.allocation.transferLeg.instrumentId.admin`.
    pub instrument_admin: String,
    /// `choiceArguments.allocation.transferLeg.instrumentId.id`.
    pub instrument_id: String,
    /// Whether to leave out every `debug*` field.
    pub exclude_debug_fields: bool,
}

impl AllocationRequest {
    /// Parses the body at `now` for a node whose coin rules key is `rules_key`; see the
    /// module docs for what is refused.
    pub fn parse(body: &[u8], rules_key: &str, now: Timestamp) -> Result<Self, Error> {
        let json = request_body(body)?;
        let (arguments, exclude_debug_fields) = choice_arguments(&json)?;
        let expected_admin = text(arguments, "expectedAdmin", "choiceArguments.expectedAdmin")?;
        let allocation = object(arguments, "allocation", "choiceArguments.allocation")?;
        let path = |name: &str| format!("choiceArguments.allocation.{name}");
        let time = |parent, key: &str, at: &str| Timestamp::parse_named(at, &text(parent, key, at)?);

        let settlement = object(allocation, "settlement", &path("settlement"))?;
        text(settlement, "executor", &path("settlement.executor"))?;
        let reference = object(settlement, "settlementRef", &path("settlement.settlementRef"))?;
        text(reference, "id", &path("settlement.settlementRef.id"))?;
        match reference.get("cid") {
            None | Some(Json::Null) | Some(Json::String(_)) => {}
            Some(_) => {
                return Err(Error::BadRequest(format!("{}: expected a string", path("settlement.settlementRef.cid"))));
            }
        }
        let settlement_requested_at = time(settlement, "requestedAt", &path("settlement.requestedAt"))?;
        let allocate_before = time(settlement, "allocateBefore", &path("settlement.allocateBefore"))?;
        let settle_before = time(settlement, "settleBefore", &path("settlement.settleBefore"))?;
        optional_meta(settlement, &path("settlement.meta"))?;

        text(allocation, "transferLegId", &path("transferLegId"))?;
        let leg = object(allocation, "transferLeg", &path("transferLeg"))?;
        text(leg, "sender", &path("transferLeg.sender"))?;
        text(leg, "receiver", &path("transferLeg.receiver"))?;
        amount(leg, &path("transferLeg.amount"))?;
        let instrument = object(leg, "instrumentId", &path("transferLeg.instrumentId"))?;
        let instrument_admin = text(instrument, "admin", &path("transferLeg.instrumentId.admin"))?;
        let instrument_id = text(instrument, "id", &path("transferLeg.instrumentId.id"))?;
        optional_meta(leg, &path("transferLeg.meta"))?;

        let requested_at = time(arguments, "requestedAt", "choiceArguments.requestedAt")?;
        let inputs = input_holdings(arguments, "choiceArguments.inputHoldingCids")?;
        extra_args(arguments, &factory_reserved_keys(rules_key))?;

        // The network's choice checks, in its order, after the fields' shapes (the
        // amount's sign is checked with its shape).
        if settlement_requested_at > now {
            return Err(Error::BadRequest(format!(
                "{}: {settlement_requested_at} is in the future (now is {now}); a settlement cannot be requested later than now",
                path("settlement.requestedAt")
            )));
        }
        if allocate_before <= now {
            return Err(Error::BadRequest(format!(
                "{}: {allocate_before} is not in the future (now is {now}); it is too late to allocate",
                path("settlement.allocateBefore")
            )));
        }
        if allocate_before > settle_before {
            return Err(Error::BadRequest(format!(
                "{}: {allocate_before} is after settlement.settleBefore {settle_before}; allocating must end before settling does",
                path("settlement.allocateBefore")
            )));
        }
        if requested_at > now {
            return Err(Error::BadRequest(format!(
                "choiceArguments.requestedAt: {requested_at} is in the future (now is {now}); an allocation cannot be requested later than now"
            )));
        }
        if inputs == 0 {
            return Err(bad("choiceArguments.inputHoldingCids: at least one holding must be provided"));
        }
        Ok(AllocationRequest { expected_admin, instrument_admin, instrument_id, exclude_debug_fields })
    }
}

/// An optional `Metadata` object at `parent.meta`.
fn optional_meta(parent: &crate::model::json::Object<'_>, path: &str) -> Result<(), Error> {
    match parent.get("meta") {
        None | Some(Json::Null) => Ok(()),
        Some(Json::Object(meta)) => string_map(meta, path),
        Some(_) => Err(Error::BadRequest(format!("{path}: expected an object"))),
    }
}

/// The response body of the factory (`FactoryWithChoiceContext`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AllocationFactory {
    /// The contract to exercise the factory choice on: the external party coin rules.
    pub factory_id: String,
    /// The context of the factory choice.
    pub choice_context: ChoiceContext,
}

/// `POST /registry/allocation-instruction/v1/allocation-factory`.
pub async fn allocation_factory<S: Store>(store: &S, env: &Env<'_>, body: &[u8]) -> Result<Response, Error> {
    let api_names = ApiNames::new(&env.config.names);
    let request = AllocationRequest::parse(body, &api_names.rules_context_key, env.now)?;
    Ok(Response::ok(&build_factory(store, env, &request).await?))
}

/// The factory and its context for `request`; see the module docs.
pub async fn build_factory<S: Store>(
    store: &S,
    env: &Env<'_>,
    request: &AllocationRequest,
) -> Result<AllocationFactory, Error> {
    let claim = AdminClaim {
        expected_admin: &request.expected_admin,
        instrument_admin: &request.instrument_admin,
        instrument_id: &request.instrument_id,
        instrument_path: "choiceArguments.allocation.transferLeg.instrumentId",
    };
    let (factory_id, _, choice_context) =
        factory::factory_context(store, env, &claim, None, request.exclude_debug_fields).await?;
    Ok(AllocationFactory { factory_id, choice_context })
}

/// `POST /registry/allocation-instruction/v2/allocation-factory` (module docs).
pub async fn allocation_factory_v2<S: Store>(store: &S, env: &Env<'_>, body: &[u8]) -> Result<Response, Error> {
    let json = request_body(body)?;
    let (_, exclude_debug_fields) = choice_arguments(&json)?;
    Ok(Response::ok(&build_factory_v2(store, env, exclude_debug_fields).await?))
}

/// The v2 factory and its context (module docs).
pub async fn build_factory_v2<S: Store>(
    store: &S,
    env: &Env<'_>,
    exclude_debug_fields: bool,
) -> Result<AllocationFactory, Error> {
    let names = TemplateNames::new(&env.config.names);
    let templates = ScanTemplates::new(&env.config.names);
    let coin = ApiNames::new(&env.config.names).coin_word;
    let (standing, _) = factory::read_index(store, false).await?;
    let ids: Vec<&str> = standing.ids().collect();
    let (active, _) = read_active(store, &ids, &[]).await?;
    let chosen = Chosen::of(&standing, &active, standing_names(&names, &templates), env.now)?;
    chosen.coin_rules.ok_or_else(|| Error::NotFound(format!("no active {coin} rules ({})", names.coin_rules)))?;
    let factory = chosen.factory.ok_or_else(|| factory::no_factory(&templates, &coin))?;
    let mut values = serde_json::Map::new();
    if let Some(config) = chosen.config_state {
        values.insert(EXTERNAL_PARTY_CONFIG_STATE.into(), contract_id_value(&config.contract_id));
    }
    let disclosed = disclose_all(chosen.config_state.into_iter().chain([factory]), exclude_debug_fields)?;
    let choice_context =
        ChoiceContext { choice_context_data: serde_json::json!({ "values": values }), disclosed_contracts: disclosed };
    Ok(AllocationFactory { factory_id: factory.contract_id.clone(), choice_context })
}

/// `POST /registry/allocations/{v1,v2}/{allocationId}/choice-contexts/{choice}`: the
/// body is checked before the id in the path.
pub async fn choice_context<S: Store>(
    store: &S,
    env: &Env<'_>,
    allocation_id: PathParam<ContractId>,
    choice: AllocationChoice,
    body: &[u8],
) -> Result<Response, Error> {
    let api_names = ApiNames::new(&env.config.names);
    let request = ContextRequest::parse_reserving(body, &context_reserved_keys(&api_names.rules_context_key))?;
    let allocation_id = allocation_id?;
    Ok(Response::ok(&build_context(store, env, &allocation_id, choice, &request).await?))
}

/// The choice context of the allocation `allocation_id`; see the module docs.
pub async fn build_context<S: Store>(
    store: &S,
    env: &Env<'_>,
    allocation_id: &str,
    choice: AllocationChoice,
    request: &ContextRequest,
) -> Result<ChoiceContext, Error> {
    let names = TemplateNames::new(&env.config.names);
    let coin = ApiNames::new(&env.config.names).coin_word;
    let templates = ScanTemplates::new(&env.config.names);
    let template = templates.name(Kind::CoinAllocation);
    let execute = choice == AllocationChoice::ExecuteTransfer;
    let (standing, featured, allocation) = super::read_holder(store, allocation_id, execute).await?;
    let payload = allocation
        .filter(|creation| creation.template_id.qualified_name() == template)
        .map(|creation| creation.payload)
        .ok_or_else(|| Error::NotFound(format!("no active {coin} allocation {allocation_id} ({template})")))?;
    let locked_coin_id = payload.get(&names.locked_coin_field).and_then(Value::as_str).ok_or_else(|| {
        Error::NotFound(format!(
            "{coin} allocation {allocation_id} names no locked {coin} (payload field {})",
            names.locked_coin_field
        ))
    })?;
    let executor = payload.pointer("/allocation/settlement/executor").and_then(Value::as_str);
    let lock = LockedHolding {
        description: format!("{coin} allocation {allocation_id}"),
        locked_coin_id: locked_coin_id.into(),
        required: execute,
        featured: executor
            .filter(|_| execute)
            .map_or_else(Vec::new, |executor| featured.of(executor).map(String::from).collect()),
    };
    two_step_context(store, env, &lock, &standing, request).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::Config;
    use crate::storage::exec::block_on;
    use crate::storage::store::MemoryStore;
    use alloc::vec::Vec;
    use serde_json::json;

    use super::super::tests::{created, node, round};

    const NOW: &str = "2026-01-01T00:00:00Z";
    const AT: &str = "2024-01-01T00:00:00.000000Z";

    fn party(name: &str) -> Value {
        json!({"party": name})
    }

    fn allocation(update_id: &str, cid: &str, locked: &str, executor: &str) -> Value {
        created(
            update_id,
            cid,
            "Platform.CoinAllocation:CoinAllocation",
            AT,
            json!([
                {"label": "lockedCoin", "value": {"contractId": locked}},
                {"label": "allocation", "value": {"record": {"fields": [
                    {"label": "settlement", "value": {"record": {"fields": [
                        {"label": "executor", "value": party(executor)},
                        {"label": "settleBefore", "value": {"timestamp": "4070908800000000"}}
                    ]}}},
                    {"label": "transferLegId", "value": {"text": "leg-0"}}
                ]}}}
            ]),
        )
    }

    /// Coin rules and the factory of `dso::1`, an open round, a config state, the
    /// featured app right of `venue::1`, a locked coin and its allocation executed by
    /// `venue::1`.
    fn registry() -> Vec<Value> {
        alloc::vec![
            created(
                "u1",
                "rules",
                "Platform.CoinRules:CoinRules",
                AT,
                json!([{"label": "dso", "value": party("dso::1")}])
            ),
            created(
                "u2",
                "factory",
                "Platform.ExternalPartyCoinRules:ExternalPartyCoinRules",
                AT,
                json!([{"label": "dso", "value": party("dso::1")}]),
            ),
            round("u3", "r1", 1, 1_704_067_200_000_000),
            created("u4", "config", "Platform.ExternalPartyConfigState:ExternalPartyConfigState", AT, json!([])),
            created(
                "u5",
                "featured",
                "Platform.Coin:FeaturedAppRight",
                AT,
                json!([{"label": "provider", "value": party("venue::1")}])
            ),
            created("u6", "locked", "Platform.Coin:LockedCoin", AT, json!([])),
            allocation("u7", "alloc", "locked", "venue::1"),
        ]
    }

    fn env_at(config: &Config) -> Env<'_> {
        Env { now: Timestamp::parse(NOW).unwrap(), entropy: [0; 32], config }
    }

    fn context(store: &MemoryStore, choice: AllocationChoice) -> Result<ChoiceContext, Error> {
        let config = Config::default();
        block_on(build_context(store, &env_at(&config), "alloc", choice, &ContextRequest::default()))
    }

    fn ids(context: &ChoiceContext) -> Vec<&str> {
        context.disclosed_contracts.iter().map(|c| c.contract_id.as_str()).collect()
    }

    #[test]
    fn execute_transfer_carries_the_locked_coin_and_the_executor_s_featured_app_right() {
        let store = node(&registry());
        let ctx = context(&store, AllocationChoice::ExecuteTransfer).unwrap();
        assert_eq!(ids(&ctx), ["rules", "r1", "config", "locked", "featured"]);
        let values = ctx.choice_context_data["values"].as_object().unwrap();
        let keys: Vec<&str> = values.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["coin-rules", "open-round", "external-party-config-state", "expire-lock", "featured-app-right"]
        );
        assert_eq!(values["featured-app-right"], json!({"tag": "AV_ContractId", "value": "featured"}));
        assert_eq!(values["expire-lock"], json!({"tag": "AV_Bool", "value": true}));
    }

    #[test]
    fn withdraw_and_cancel_unlock_the_coin_without_featuring_anyone() {
        let store = node(&registry());
        for choice in [AllocationChoice::Withdraw, AllocationChoice::Cancel] {
            let ctx = context(&store, choice).unwrap();
            assert_eq!(ids(&ctx), ["rules", "r1", "config", "locked"], "{choice:?}");
            assert!(ctx.choice_context_data["values"].get("featured-app-right").is_none());
        }
    }

    #[test]
    fn a_gone_locked_coin_expires_nothing_for_withdraw_and_cancel_and_is_not_found_for_execute() {
        let mut records = registry();
        records.remove(5);
        let store = node(&records);
        for choice in [AllocationChoice::Withdraw, AllocationChoice::Cancel] {
            let ctx = context(&store, choice).unwrap();
            assert_eq!(ctx.choice_context_data, json!({"values": {"expire-lock": {"tag": "AV_Bool", "value": false}}}));
            assert!(ctx.disclosed_contracts.is_empty());
        }
        match context(&store, AllocationChoice::ExecuteTransfer) {
            Err(Error::NotFound(message)) => {
                assert_eq!(message, "locked coin locked of coin allocation alloc is no longer active")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_executor_without_a_featured_app_right_is_not_featured() {
        let mut records = registry();
        records[6] = allocation("u7", "alloc", "locked", "other::1");
        let ctx = context(&node(&records), AllocationChoice::ExecuteTransfer).unwrap();
        assert_eq!(ids(&ctx), ["rules", "r1", "config", "locked"]);
    }

    #[test]
    fn an_unknown_or_archived_allocation_or_another_template_is_not_found() {
        let store = node(&registry());
        let config = Config::default();
        for id in ["nothing", "locked", "rules"] {
            match block_on(build_context(
                &store,
                &env_at(&config),
                id,
                AllocationChoice::Withdraw,
                &ContextRequest::default(),
            )) {
                Err(Error::NotFound(message)) => assert!(
                    message.starts_with(&format!(
                        "no active coin allocation {id} (Platform.CoinAllocation:CoinAllocation)"
                    )),
                    "{message}"
                ),
                other => panic!("{id}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_context_refuses_its_own_keys_in_meta_including_the_featured_app_right() {
        for key in ["featured-app-right", "expire-lock", "coin-rules"] {
            let body = format!(r#"{{"meta":{{"{key}":"x"}}}}"#);
            match ContextRequest::parse_reserving(body.as_bytes(), &context_reserved_keys("coin-rules")) {
                Err(Error::BadRequest(message)) => assert!(message.contains("reserved key"), "{message}"),
                other => panic!("{key}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_disclosed_contract_in_flight_is_a_conflict() {
        let mut records = registry();
        records.push(json!({"update": {
            "update_id": "u9", "offset": "000000000000000100", "record_time": "2024-02-01T00:00:00.000000Z",
            "event": {"submitter": "dso::1", "source_synchronizer": "sync::1", "migration_id": 0,
                "target_synchronizer": "sync::2", "unassign_id": "un1", "reassignment_counter": 1,
                "contract_id": "locked"}
        }}));
        match context(&node(&records), AllocationChoice::Cancel) {
            Err(Error::Conflict(message)) => assert!(message.contains("locked"), "{message}"),
            other => panic!("{other:?}"),
        }
    }

    fn body() -> Value {
        json!({"choiceArguments": {
            "expectedAdmin": "dso::1",
            "allocation": {
                "settlement": {
                    "executor": "venue::1",
                    "settlementRef": {"id": "trade-7", "cid": null},
                    "requestedAt": "2025-12-31T23:00:00Z",
                    "allocateBefore": "2026-01-01T06:00:00Z",
                    "settleBefore": "2026-01-02T00:00:00Z",
                    "meta": {"values": {}}
                },
                "transferLegId": "leg-0",
                "transferLeg": {
                    "sender": "alice::1", "receiver": "bob::1", "amount": "10.0",
                    "instrumentId": {"admin": "dso::1", "id": "Coin"}, "meta": {"values": {}}
                }
            },
            "requestedAt": "2025-12-31T23:30:00Z",
            "inputHoldingCids": ["h1"],
            "extraArgs": {"context": {"values": {}}, "meta": {"values": {}}}
        }})
    }

    fn allocate(store: &MemoryStore, body: &Value) -> Result<AllocationFactory, Error> {
        let config = Config::default();
        let env = env_at(&config);
        let request = AllocationRequest::parse(&serde_json::to_vec(body).unwrap(), "coin-rules", env.now)?;
        block_on(build_factory(store, &env, &request))
    }

    #[test]
    fn the_factory_is_the_external_party_coin_rules_with_rules_round_and_config() {
        let answer = allocate(&node(&registry()), &body()).unwrap();
        assert_eq!(answer.factory_id, "factory");
        assert_eq!(ids(&answer.choice_context), ["rules", "r1", "config", "factory"]);
        let json = serde_json::to_value(&answer).unwrap();
        assert_eq!(json["choiceContext"]["choiceContextData"]["values"]["open-round"]["value"], "r1");
        assert!(json.get("transferKind").is_none());
    }

    fn with(path: &[&str], value: Value) -> Value {
        let mut body = body();
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
    }

    #[test]
    fn malformed_arguments_and_what_the_choice_refuses_are_bad_requests_naming_the_field() {
        let store = node(&registry());
        let cases = [
            (json!({}), "choiceArguments: required"),
            (with(&["allocation"], Value::Null), "choiceArguments.allocation: required"),
            (
                with(&["allocation", "settlement", "executor"], json!(1)),
                "allocation.settlement.executor: expected a string",
            ),
            (
                with(&["allocation", "settlement", "settlementRef", "cid"], json!(1)),
                "settlementRef.cid: expected a string",
            ),
            (with(&["allocation", "transferLegId"], Value::Null), "choiceArguments.allocation.transferLegId: required"),
            (
                with(&["allocation", "transferLeg", "amount"], json!("-1")),
                "transferLeg.amount: the amount must be positive",
            ),
            (
                with(&["allocation", "transferLeg", "meta"], json!({"values": {"k": 1}})),
                "transferLeg.meta.values[\"k\"]",
            ),
            (with(&["allocation", "settlement", "settleBefore"], json!("soon")), "settlement.settleBefore must be"),
            (with(&["inputHoldingCids"], json!("h1")), "choiceArguments.inputHoldingCids: expected a list"),
            (
                with(&["extraArgs", "meta"], json!({"values": {"open-round": "x"}})),
                "values[\"open-round\"]: reserved key",
            ),
            (
                with(&["allocation", "settlement", "requestedAt"], json!("2026-01-01T00:00:01Z")),
                "settlement.requestedAt: 2026-01-01T00:00:01",
            ),
            (
                with(&["allocation", "settlement", "allocateBefore"], json!("2026-01-01T00:00:00Z")),
                "it is too late to allocate",
            ),
            (
                with(&["allocation", "settlement", "allocateBefore"], json!("2026-01-03T00:00:00Z")),
                "is after settlement.settleBefore",
            ),
            (with(&["requestedAt"], json!("2026-01-02T00:00:00Z")), "choiceArguments.requestedAt: 2026-01-02"),
            (with(&["inputHoldingCids"], json!([])), "at least one holding"),
        ];
        for (body, want) in cases {
            match allocate(&store, &body) {
                Err(Error::BadRequest(message)) => assert!(message.contains(want), "{body}: {message}"),
                other => panic!("{body}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_bad_body_comes_before_missing_rules_and_missing_rules_before_a_wrong_admin() {
        let bare = node(&registry()[2..]);
        match allocate(&bare, &with(&["requestedAt"], Value::Null)) {
            Err(Error::BadRequest(message)) => assert!(message.contains("requestedAt: required"), "{message}"),
            other => panic!("{other:?}"),
        }
        match allocate(&bare, &with(&["expectedAdmin"], json!("mallory::1"))) {
            Err(Error::NotFound(message)) => assert!(message.starts_with("no active coin rules"), "{message}"),
            other => panic!("{other:?}"),
        }
        let store = node(&registry());
        match allocate(&store, &with(&["allocation", "transferLeg", "instrumentId", "id"], json!("Other"))) {
            Err(Error::BadRequest(message)) => {
                assert!(message.starts_with("choiceArguments.allocation.transferLeg.instrumentId:"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        let mut records = registry();
        records.remove(1);
        match allocate(&node(&records), &body()) {
            Err(Error::NotFound(message)) => assert!(message.contains("external party coin rules"), "{message}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ingest_keeps_the_live_allocations_and_drops_a_settled_one() {
        let store = node(&registry());
        let templates = ScanTemplates::new(&Config::default().names);
        let live = block_on(crate::state::scan::read::list(&store, Kind::CoinAllocation, &templates)).unwrap();
        assert_eq!(live.iter().map(|e| e.contract_id.as_str()).collect::<Vec<_>>(), ["alloc"]);
        let mut records = registry();
        records.push(json!({"update": {
            "update_id": "u8", "migration_id": 0, "workflow_id": "",
            "record_time": "2024-01-02T00:00:00.000000Z", "synchronizer_id": "sync::1",
            "effective_at": "2024-01-02T00:00:00.000000Z", "root_event_ids": ["u8:0"],
            "events_by_id": {"u8:0": {
                "event_type": "exercised_event", "event_id": "u8:0", "contract_id": "alloc",
                "template_id": "pkg:Platform.CoinAllocation:CoinAllocation", "package_name": "platform",
                "choice": "Allocation_ExecuteTransfer", "choice_argument": {"unit": {}}, "child_event_ids": [],
                "exercise_result": {"unit": {}}, "consuming": true, "acting_parties": ["venue::1"],
                "interface_id": null
            }}
        }}));
        let store = node(&records);
        assert!(block_on(crate::state::scan::read::list(&store, Kind::CoinAllocation, &templates)).unwrap().is_empty());
        assert!(matches!(context(&store, AllocationChoice::Cancel), Err(Error::NotFound(_))));
    }

    fn allocate_v2(store: &MemoryStore, body: &[u8]) -> Result<Response, Error> {
        let config = Config::default();
        block_on(allocation_factory_v2(store, &env_at(&config), body))
    }

    #[test]
    fn the_v2_factory_discloses_the_config_state_and_the_factory_without_rules_or_round() {
        let store = node(&registry());
        let answer = allocate_v2(&store, br#"{"choiceArguments": {"anything": "v2 arguments"}}"#).unwrap();
        let answer: Value = serde_json::from_slice(&answer.body).unwrap();
        assert_eq!(answer["factoryId"], "factory");
        assert_eq!(
            answer["choiceContext"]["choiceContextData"],
            json!({"values": {"external-party-config-state": {"tag": "AV_ContractId", "value": "config"}}})
        );
        let disclosed: Vec<&str> = answer["choiceContext"]["disclosedContracts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["contractId"].as_str().unwrap())
            .collect();
        assert_eq!(disclosed, ["config", "factory"]);
        // Without a config state: the factory alone.
        let mut records = registry();
        records.remove(3);
        let answer = allocate_v2(&node(&records), br#"{"choiceArguments": {}, "excludeDebugFields": true}"#).unwrap();
        let answer: Value = serde_json::from_slice(&answer.body).unwrap();
        assert_eq!(answer["choiceContext"]["choiceContextData"], json!({"values": {}}));
        assert_eq!(answer["choiceContext"]["disclosedContracts"][0]["contractId"], "factory");
        assert!(answer["choiceContext"]["disclosedContracts"][0].get("debugPayload").is_none());
    }

    #[test]
    fn the_v2_factory_reads_the_envelope_and_needs_the_rules_and_the_factory() {
        let store = node(&registry());
        for (body, want) in [
            (&b""[..], "request body required"),
            (b"{}", "choiceArguments: required"),
            (br#"{"choiceArguments": []}"#, "choiceArguments: expected an object"),
            (br#"{"choiceArguments": {}, "excludeDebugFields": "yes"}"#, "excludeDebugFields"),
        ] {
            match allocate_v2(&store, body) {
                Err(Error::BadRequest(message)) => assert!(message.contains(want), "{message}"),
                other => panic!("{other:?}"),
            }
        }
        let ok = br#"{"choiceArguments": {}}"#;
        match allocate_v2(&node(&registry()[1..]), ok) {
            Err(Error::NotFound(message)) => assert!(message.starts_with("no active coin rules"), "{message}"),
            other => panic!("{other:?}"),
        }
        let mut records = registry();
        records.remove(1);
        match allocate_v2(&node(&records), ok) {
            Err(Error::NotFound(message)) => assert!(message.contains("the factory"), "{message}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_allocation_of_the_v2_only_template_has_no_context_as_on_the_network() {
        let mut records = registry();
        records.push(created(
            "u8",
            "alloc-v2",
            "Platform.CoinAllocationV2:CoinAllocationV2",
            AT,
            json!([{"label": "lockedCoin", "value": {"optional": {"value": {"contractId": "locked"}}}}]),
        ));
        let store = node(&records);
        let config = Config::default();
        for choice in [AllocationChoice::Withdraw, AllocationChoice::Cancel] {
            match block_on(build_context(&store, &env_at(&config), "alloc-v2", choice, &ContextRequest::default())) {
                Err(Error::NotFound(message)) => {
                    assert!(message.starts_with("no active coin allocation alloc-v2"), "{message}")
                }
                other => panic!("{other:?}"),
            }
        }
    }
}
