//! What the token registry ([`crate::api::registry`]) reads besides the ledger, kept at
//! ingest so that each of its calls is a few reads of known keys, whatever the size of
//! the history.
//!
//! - [`RegistryIndex`] (this module): which contracts the registry may disclose
//!   without being asked for them by id.
//! - [`supply`]: the coin's total supply as of the latest closed round.
//!
//! ## The index
//!
//! Keys (table `r`, see [`crate::storage::keys`]), each one record:
//!
//! - `r 0`: the standing contracts ([`Standing`]): the ids of every active coin rules,
//!   external party coin rules (the factory of transfers and allocations), external
//!   party config state and open mining round. Every choice context and factory reads
//!   it.
//! - `r 1`: the featured app rights ([`Featured`]): for each provider, the ids of its
//!   active featured app rights. The contexts that may feature a party read it. The Scan
//!   state finds them by provider too (`F`, [`crate::state::scan`]), but with a scan,
//!   which cannot join the keys a context reads in one `get_many`; this record can.
//!
//! Both hold ids only. A contract's template, payload, blob and package name stay in
//! its ledger record (`C`), and where it is now in its reassignment record (`R`,
//! [`crate::state::ledger::contracts::Reassigned`]); a reader asks for both keys of
//! every candidate in one `get_many` and chooses among the candidates as the ledger
//! has them. So nothing the registry discloses is a copy: a blob a follower takes from
//! its upstream arrives in the created event it ingests, through the same ingest as
//! any history, and a contract whose record holds no blob is still answered as one
//! the node does not hold (503).
//!
//! A contract is in the index exactly while its ledger record is active and of one of
//! the templates above (matched by qualified name): it joins when a created event
//! (or an assignment, or an import) makes it active and leaves when a consuming
//! exercise archives it, in whatever order the updates are ingested. The records stay
//! small on a real network: one coin rules contract, one factory, one config state, a
//! handful of open rounds and a few hundred featured app rights.

pub mod supply;

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::model::config::Names;
use crate::model::error::Error;
use crate::model::update::Update;
use crate::state::ledger::{self, Archived, ContractRecord, contracts};
use crate::state::projection::Projection;
use crate::storage::keys::{self, Key};
use crate::storage::stage::Stage;
use crate::storage::store::Store;

/// The key of the standing contracts.
pub fn standing_key() -> Vec<u8> {
    Key::new(keys::REGISTRY).byte(0).into_bytes()
}

/// The key of the featured app rights.
pub fn featured_key() -> Vec<u8> {
    Key::new(keys::REGISTRY).byte(1).into_bytes()
}

/// The ids of the active contracts every registry context chooses from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Standing {
    /// Coin rules (`{root}.{coin}Rules:{coin}Rules`).
    pub coin_rules: BTreeSet<String>,
    /// External party coin rules (`{root}.ExternalParty{coin}Rules:ExternalParty{coin}Rules`).
    pub factories: BTreeSet<String>,
    /// External party config states (`{root}.ExternalPartyConfigState:ExternalPartyConfigState`).
    pub config_states: BTreeSet<String>,
    /// Open mining rounds (`{root}.Round:OpenMiningRound`).
    pub open_rounds: BTreeSet<String>,
}

/// The ids of the active featured app rights (`{root}.{coin}:FeaturedAppRight`), by
/// the `provider` of their payload.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Featured {
    /// Provider to the ids of its rights.
    pub providers: BTreeMap<String, BTreeSet<String>>,
}

impl Featured {
    /// The ids of `provider`'s active featured app rights.
    pub fn of(&self, provider: &str) -> impl Iterator<Item = &str> {
        self.providers.get(provider).into_iter().flatten().map(String::as_str)
    }
}

/// A stored record of the index: one JSON object, its one writer and reader.
trait Record: Serialize + for<'de> Deserialize<'de> + Default {
    /// What the record holds, for messages.
    const WHAT: &'static str;

    /// The record as stored.
    fn encode(&self) -> Result<Vec<u8>, Error> {
        serde_json::to_vec(self).map_err(|e| Error::Internal(format!("writing the registry's {}: {e}", Self::WHAT)))
    }

    /// The record stored as `bytes`, empty when nothing is stored; one that does not read
    /// is an internal error, never an empty record.
    fn decode(bytes: Option<&[u8]>) -> Result<Self, Error> {
        match bytes {
            None => Ok(Self::default()),
            Some(bytes) => serde_json::from_slice(bytes)
                .map_err(|e| Error::Internal(format!("an unreadable record of the registry's {}: {e}", Self::WHAT))),
        }
    }
}

impl Record for Standing {
    const WHAT: &'static str = "standing contracts";
}

impl Record for Featured {
    const WHAT: &'static str = "featured app rights";
}

impl Standing {
    /// The record stored as `bytes` (`None`: nothing stored, no standing contract).
    pub fn read(bytes: Option<&[u8]>) -> Result<Self, Error> {
        Self::decode(bytes)
    }

    /// Every id it holds.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        [&self.coin_rules, &self.factories, &self.config_states, &self.open_rounds]
            .into_iter()
            .flatten()
            .map(String::as_str)
    }
}

impl Featured {
    /// The record stored as `bytes` (`None`: nothing stored, no featured app right).
    pub fn read(bytes: Option<&[u8]>) -> Result<Self, Error> {
        Self::decode(bytes)
    }
}

/// The templates the index follows, by role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    CoinRules,
    Factory,
    ConfigState,
    OpenRound,
    FeaturedAppRight,
}

/// The qualified names of the templates the index follows, spelled by the configured
/// names: with the network's (`Splice`, `Amulet`) they are the network's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryTemplates {
    names: [(Role, String); 5],
}

impl RegistryTemplates {
    /// The names as `names` spells them.
    pub fn new(names: &Names) -> Self {
        let Names { root, coin } = names;
        RegistryTemplates {
            names: [
                (Role::CoinRules, format!("{root}.{coin}Rules:{coin}Rules")),
                (Role::Factory, format!("{root}.ExternalParty{coin}Rules:ExternalParty{coin}Rules")),
                (Role::ConfigState, format!("{root}.ExternalPartyConfigState:ExternalPartyConfigState")),
                (Role::OpenRound, format!("{root}.Round:OpenMiningRound")),
                (Role::FeaturedAppRight, format!("{root}.{coin}:FeaturedAppRight")),
            ],
        }
    }

    fn role(&self, qualified_name: &str) -> Option<Role> {
        self.names.iter().find(|(_, name)| name == qualified_name).map(|(role, _)| *role)
    }
}

/// The registry's index of standing contracts and featured app rights (module docs).
#[derive(Debug, Clone, Copy)]
pub struct RegistryIndex<'n> {
    templates: &'n RegistryTemplates,
}

impl<'n> RegistryIndex<'n> {
    /// The index of the templates `templates` names.
    pub fn new(templates: &'n RegistryTemplates) -> Self {
        RegistryIndex { templates }
    }

    /// The contracts `update` creates, assigns or archives that the index follows.
    fn touched<'u>(&'u self, update: &'u Update) -> impl Iterator<Item = (&'u str, Role)> + 'u {
        ledger::touched_contracts(update).filter_map(|(id, name)| Some((id, self.templates.role(name)?)))
    }
}

impl Projection for RegistryIndex<'_> {
    /// The records of the roles `update` touches (the contracts' own records are the
    /// ledger's reads).
    fn keys_read<'a>(&'a self, update: &'a Update) -> impl Iterator<Item = Vec<u8>> + 'a {
        let (mut standing, mut featured) = (false, false);
        for (_, role) in self.touched(update) {
            match role {
                Role::FeaturedAppRight => featured = true,
                _ => standing = true,
            }
        }
        standing.then(standing_key).into_iter().chain(featured.then(featured_key))
    }

    async fn apply<S: Store>(
        &self,
        stage: &mut Stage<'_, S>,
        update: &Update,
        archived: &Archived<'_>,
    ) -> Result<(), Error> {
        let touched: Vec<(&str, Role)> = self.touched(update).collect();
        if touched.is_empty() {
            return Ok(());
        }
        let mut standing = Standing::decode(stage.get(&standing_key()).await?.as_deref())?;
        let mut featured = Featured::decode(stage.get(&featured_key()).await?.as_deref())?;
        let (held_standing, held_featured) = (standing.clone(), featured.clone());
        for (contract_id, _) in touched {
            // What the ledger holds after the update: the contract's role while active.
            let active = match archived.creation(contract_id) {
                Some(_) => None,
                None => match stage.get(&contracts::contract_key(contract_id)).await? {
                    Some(bytes) => match contracts::decode(contract_id, &bytes)? {
                        ContractRecord::Created(creation) => Some(creation),
                        ContractRecord::Archived => None,
                    },
                    None => None,
                },
            };
            for set in [
                &mut standing.coin_rules,
                &mut standing.factories,
                &mut standing.config_states,
                &mut standing.open_rounds,
            ] {
                set.remove(contract_id);
            }
            featured.providers.retain(|_, ids| {
                ids.remove(contract_id);
                !ids.is_empty()
            });
            let Some(creation) = active else { continue };
            let id = String::from(contract_id);
            match self.templates.role(creation.template_id.qualified_name()) {
                Some(Role::CoinRules) => standing.coin_rules.insert(id),
                Some(Role::Factory) => standing.factories.insert(id),
                Some(Role::ConfigState) => standing.config_states.insert(id),
                Some(Role::OpenRound) => standing.open_rounds.insert(id),
                Some(Role::FeaturedAppRight) => match creation.payload.get("provider").and_then(|p| p.as_str()) {
                    Some(provider) => featured.providers.entry(provider.into()).or_default().insert(id),
                    // A right that names no provider can feature nobody.
                    None => false,
                },
                None => false,
            };
        }
        if standing != held_standing {
            stage.put(standing_key(), standing.encode()?);
        }
        if featured != held_featured {
            stage.put(featured_key(), featured.encode()?);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::Config;
    use crate::storage::exec::block_on;
    use crate::storage::store::MemoryStore;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    fn created(update_id: &str, cid: &str, template: &str, fields: Value) -> Value {
        json!({"update": {
            "update_id": update_id, "migration_id": 0, "workflow_id": "",
            "record_time": "2024-01-01T00:00:00.000000Z", "synchronizer_id": "sync::1",
            "effective_at": "2024-01-01T00:00:00.000000Z", "root_event_ids": [format!("{update_id}:0")],
            "events_by_id": {format!("{update_id}:0"): {
                "event_type": "created_event", "event_id": format!("{update_id}:0"), "contract_id": cid,
                "template_id": format!("pkg:{template}"), "package_name": "platform",
                "create_arguments": {"record": {"fields": fields}},
                "created_at": "2024-01-01T00:00:00.000000Z", "signatories": ["dso::1"], "observers": []
            }}
        }})
    }

    fn archived(update_id: &str, cid: &str, template: &str) -> Value {
        json!({"update": {
            "update_id": update_id, "migration_id": 0, "workflow_id": "",
            "record_time": "2024-01-02T00:00:00.000000Z", "synchronizer_id": "sync::1",
            "effective_at": "2024-01-02T00:00:00.000000Z", "root_event_ids": [format!("{update_id}:0")],
            "events_by_id": {format!("{update_id}:0"): {
                "event_type": "exercised_event", "event_id": format!("{update_id}:0"), "contract_id": cid,
                "template_id": format!("pkg:{template}"), "package_name": "platform", "choice": "Archive",
                "choice_argument": {"record": {"fields": []}}, "exercise_result": {"unit": {}},
                "consuming": true, "acting_parties": ["dso::1"], "child_event_ids": []
            }}
        }})
    }

    fn ingest(store: &MemoryStore, records: &[Value]) {
        let body: String = records.iter().map(|r| format!("{r}\n")).collect();
        block_on(crate::ingest::ingest(body.as_bytes(), store, &Config::default())).unwrap();
    }

    fn standing(store: &MemoryStore) -> Standing {
        Standing::read(block_on(store.get(&standing_key())).unwrap().as_deref()).unwrap()
    }

    fn featured(store: &MemoryStore) -> Featured {
        Featured::read(block_on(store.get(&featured_key())).unwrap().as_deref()).unwrap()
    }

    fn set(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|id| String::from(*id)).collect()
    }

    fn right(update_id: &str, cid: &str, provider: &str) -> Value {
        created(
            update_id,
            cid,
            "Platform.Coin:FeaturedAppRight",
            json!([{"label": "provider", "value": {"party": provider}}]),
        )
    }

    #[test]
    fn active_contracts_of_each_role_are_indexed_and_archived_ones_leave() {
        let store = MemoryStore::new();
        ingest(
            &store,
            &[
                created("u1", "rules", "Platform.CoinRules:CoinRules", json!([])),
                created("u2", "factory", "Platform.ExternalPartyCoinRules:ExternalPartyCoinRules", json!([])),
                created("u3", "config", "Platform.ExternalPartyConfigState:ExternalPartyConfigState", json!([])),
                created("u4", "r1", "Platform.Round:OpenMiningRound", json!([])),
                created("u5", "r2", "Platform.Round:OpenMiningRound", json!([])),
                created("u6", "other", "Platform.Coin:Coin", json!([])),
                right("u7", "f1", "app::1"),
                right("u8", "f2", "app::1"),
                right("u9", "f3", "app::2"),
            ],
        );
        let want = Standing {
            coin_rules: set(&["rules"]),
            factories: set(&["factory"]),
            config_states: set(&["config"]),
            open_rounds: set(&["r1", "r2"]),
        };
        assert_eq!(standing(&store), want);
        assert_eq!(featured(&store).of("app::1").collect::<Vec<_>>(), ["f1", "f2"]);
        ingest(
            &store,
            &[
                archived("u10", "r1", "Platform.Round:OpenMiningRound"),
                archived("u11", "f3", "Platform.Coin:FeaturedAppRight"),
            ],
        );
        assert_eq!(standing(&store).open_rounds, set(&["r2"]));
        assert_eq!(featured(&store).providers.keys().collect::<Vec<_>>(), ["app::1"], "an emptied provider goes");
    }

    #[test]
    fn a_contract_archived_before_its_creation_is_ingested_never_joins() {
        let store = MemoryStore::new();
        ingest(&store, &[archived("u2", "r1", "Platform.Round:OpenMiningRound")]);
        ingest(&store, &[created("u1", "r1", "Platform.Round:OpenMiningRound", json!([]))]);
        assert_eq!(standing(&store), Standing::default());
        // Created and archived in one batch.
        let store = MemoryStore::new();
        ingest(
            &store,
            &[
                created("u1", "f1", "Platform.Coin:FeaturedAppRight", json!([])),
                archived("u2", "f1", "Platform.Coin:FeaturedAppRight"),
            ],
        );
        assert_eq!(featured(&store), Featured::default());
        assert_eq!(block_on(store.get(&featured_key())).unwrap(), None, "nothing written for nothing changed");
    }

    #[test]
    fn the_network_s_names_index_the_network_s_templates() {
        let templates = RegistryTemplates::new(&Names { root: "Splice".into(), coin: "Amulet".into() });
        assert_eq!(templates.role("Splice.AmuletRules:AmuletRules"), Some(Role::CoinRules));
        assert_eq!(templates.role("Splice.ExternalPartyAmuletRules:ExternalPartyAmuletRules"), Some(Role::Factory));
        assert_eq!(templates.role("Splice.Amulet:FeaturedAppRight"), Some(Role::FeaturedAppRight));
        assert_eq!(templates.role("Platform.CoinRules:CoinRules"), None);
    }

    #[test]
    fn an_unreadable_record_is_an_internal_error_naming_it() {
        match Standing::read(Some(br#"{"coin_rules":[],"colour":1}"#)) {
            Err(Error::Internal(message)) => assert!(message.contains("standing contracts"), "{message}"),
            other => panic!("{other:?}"),
        }
    }

    proptest! {
        #[test]
        fn records_read_back_as_written(
            ids in proptest::collection::vec(("\\PC{0,12}", 0..4usize), 0..12),
            providers in proptest::collection::btree_map("\\PC{1,8}", proptest::collection::btree_set("\\PC{1,8}", 1..4), 0..4),
        ) {
            let mut standing = Standing::default();
            for (id, role) in ids {
                [&mut standing.coin_rules, &mut standing.factories, &mut standing.config_states, &mut standing.open_rounds][role].insert(id);
            }
            prop_assert_eq!(Standing::read(Some(&standing.encode().unwrap())).unwrap(), standing);
            let featured = Featured { providers };
            prop_assert_eq!(Featured::read(Some(&featured.encode().unwrap())).unwrap(), featured);
        }
    }
}
