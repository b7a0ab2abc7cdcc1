//! The contracts a registry call chooses among, read as the ledger has them: their
//! records (`C`) and where each is now (`R`), for any number of them in one `get_many`.
//!
//! The ids come from the registry's index ([`crate::state::registry`]): the standing
//! contracts (coin rules, factories, external party config states, open rounds) and a
//! provider's featured app rights; the choices among them are made here, on the
//! ledger's records:
//!
//! - a singleton (coin rules, the factory, the config state, a featured app right) is
//!   the one created last, then the one with the highest contract id;
//! - the open round in use is the one with the highest `round.number` whose `opensAt`
//!   is not after now (then the highest contract id); a round whose payload does not
//!   carry both is not a candidate.
//!
//! The index keeps a handful of each on a real network. More than
//! [`MAX_CANDIDATES`] of one template breaks that assumption; the call is then a 500
//! that names the template, never an answer chosen from part of them.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Value as Json, json};

use super::DisclosedContract;
use crate::model::error::Error;
use crate::model::time::Timestamp;
use crate::state::ledger::contracts::{self, ContractRecord, Creation, Location};
use crate::state::registry::Standing;
use crate::storage::store::Store;

/// The most active contracts of one template a registry call chooses among.
pub const MAX_CANDIDATES: usize = 100;

/// An active contract: its id, its creation, and where it is now.
#[derive(Debug, Clone)]
pub(crate) struct Active {
    pub(crate) contract_id: String,
    pub(crate) creation: Creation,
    pub(crate) location: Location,
}

impl Active {
    /// The qualified name of its template.
    pub(crate) fn qualified_name(&self) -> &str {
        self.creation.template_id.qualified_name()
    }

    /// The order singletons are chosen by: latest creation, then highest contract id.
    fn recency(&self) -> (Timestamp, &str) {
        (self.creation.created_at, &self.contract_id)
    }

    /// Its payload's text at `field`.
    pub(crate) fn text(&self, field: &str) -> Option<&str> {
        self.creation.payload.get(field).and_then(Json::as_str)
    }
}

/// The active contracts among `ids`, by id, each with where it is now: one `get_many`
/// of their records and reassignment records, with `extra` keys asked for in the same
/// call (their values come back in order). An id the ledger does not hold as active is
/// left out.
pub(crate) async fn read_active<S: Store>(
    store: &S,
    ids: &[&str],
    extra: &[Vec<u8>],
) -> Result<(BTreeMap<String, Active>, Vec<Option<Vec<u8>>>), Error> {
    let mut keys: Vec<Vec<u8>> = Vec::with_capacity(2 * ids.len() + extra.len());
    for id in ids {
        keys.push(contracts::contract_key(id));
        keys.push(contracts::reassignment_key(id));
    }
    keys.extend_from_slice(extra);
    let key_refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let mut values = store.get_many(&key_refs).await?.into_iter();
    let mut active = BTreeMap::new();
    for id in ids {
        let (record, reassigned) = (values.next().flatten(), values.next().flatten());
        let Some(record) = record else { continue };
        let ContractRecord::Created(creation) = contracts::decode(id, &record)? else { continue };
        let location = contracts::location_of(id, &creation.synchronizer_id, reassigned.as_deref())?;
        active.insert(String::from(*id), Active { contract_id: String::from(*id), creation, location });
    }
    Ok((active, values.collect()))
}

/// The active contracts of `active` among `ids` (at most [`MAX_CANDIDATES`], else a
/// 500 naming `template`).
pub(crate) fn among<'a>(
    active: &'a BTreeMap<String, Active>,
    ids: impl IntoIterator<Item = &'a str>,
    template: &str,
) -> Result<Vec<&'a Active>, Error> {
    let ids: Vec<&str> = ids.into_iter().collect();
    if ids.len() > MAX_CANDIDATES {
        return Err(Error::Internal(format!(
            "more than {MAX_CANDIDATES} active {template} contracts; the registry chooses among at most {MAX_CANDIDATES}"
        )));
    }
    Ok(ids.into_iter().filter_map(|id| active.get(id)).collect())
}

/// The singleton among `contracts`: latest creation, then highest contract id.
pub(crate) fn latest(contracts: Vec<&Active>) -> Option<&Active> {
    contracts.into_iter().max_by(|a, b| a.recency().cmp(&b.recency()))
}

/// The open round in use among `rounds` at `now` (module docs).
pub(crate) fn open_round_in_use(rounds: Vec<&Active>, now: Timestamp) -> Option<&Active> {
    rounds
        .into_iter()
        .filter_map(|round| {
            let payload = &round.creation.payload;
            let number: i64 = payload.get("round")?.get("number")?.as_str()?.parse().ok()?;
            let opens_at = Timestamp::parse(payload.get("opensAt")?.as_str()?).ok()?;
            (opens_at <= now).then_some((number, round))
        })
        .max_by(|(n, a), (m, b)| (n, &a.contract_id).cmp(&(m, &b.contract_id)))
        .map(|(_, round)| round)
}

/// The standing contracts a context discloses, chosen as of `now` among the active
/// ones of `standing` (module docs); the templates name them in a 500.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chosen<'a> {
    pub(crate) coin_rules: Option<&'a Active>,
    pub(crate) factory: Option<&'a Active>,
    pub(crate) config_state: Option<&'a Active>,
    pub(crate) open_round: Option<&'a Active>,
}

/// The qualified names of the standing templates, for messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StandingNames<'n> {
    pub(crate) coin_rules: &'n str,
    pub(crate) factory: &'n str,
    pub(crate) config_state: &'n str,
    pub(crate) open_round: &'n str,
}

impl<'a> Chosen<'a> {
    /// The choices among `active`, of the ids `standing` holds.
    pub(crate) fn of(
        standing: &'a Standing,
        active: &'a BTreeMap<String, Active>,
        names: StandingNames<'_>,
        now: Timestamp,
    ) -> Result<Self, Error> {
        let ids = |set: &'a alloc::collections::BTreeSet<String>| set.iter().map(String::as_str);
        Ok(Chosen {
            coin_rules: latest(among(active, ids(&standing.coin_rules), names.coin_rules)?),
            factory: latest(among(active, ids(&standing.factories), names.factory)?),
            config_state: latest(among(active, ids(&standing.config_states), names.config_state)?),
            open_round: open_round_in_use(among(active, ids(&standing.open_rounds), names.open_round)?, now),
        })
    }
}

/// `{"tag": "AV_ContractId", "value": contract_id}`.
pub(crate) fn contract_id_value(contract_id: &str) -> Json {
    json!({"tag": "AV_ContractId", "value": contract_id})
}

/// `active` as a disclosed contract, on its synchronizer now: a 409 when it is being
/// reassigned, a 503 when this node does not hold its created event blob (a follower
/// of a public upstream that has not disclosed it).
pub(crate) fn disclosed_contract(active: &Active, exclude_debug: bool) -> Result<DisclosedContract, Error> {
    let synchronizer_id = match &active.location {
        Location::On(synchronizer) => synchronizer.clone(),
        Location::InFlight => {
            return Err(Error::Conflict(format!(
                "contract {} ({}) is being reassigned between synchronizers; retry once it is assigned",
                active.contract_id,
                active.qualified_name()
            )));
        }
    };
    let Creation { template_id, payload, created_at, blob, package_name, .. } = &active.creation;
    let Some(blob) = blob else {
        return Err(Error::NotHeld(format!(
            "this node does not hold the created event blob of contract {} ({}); retry later",
            active.contract_id,
            template_id.qualified_name()
        )));
    };
    let debug = !exclude_debug;
    Ok(DisclosedContract {
        template_id: template_id.as_str().into(),
        contract_id: active.contract_id.clone(),
        created_event_blob: blob.as_str().into(),
        synchronizer_id,
        debug_package_name: debug.then(|| package_name.clone()),
        debug_payload: debug.then(|| payload.clone()),
        debug_created_at: debug.then(|| format!("{created_at}")),
    })
}

/// Every contract of `contracts` disclosed, in order; the first that cannot be is the
/// error.
pub(crate) fn disclose_all<'a>(
    contracts: impl IntoIterator<Item = &'a Active>,
    exclude_debug: bool,
) -> Result<Vec<DisclosedContract>, Error> {
    contracts.into_iter().map(|active| disclosed_contract(active, exclude_debug)).collect()
}
