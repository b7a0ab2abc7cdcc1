//! Mining rounds: the earliest round with complete reward accounting and the
//! closed rounds still in post-close processing, which [`crate::api::state`] serves.
//!
//! Keys (see [`crate::storage::keys`]):
//!
//! - `E round kind` (empty; kind 0 open, 1 closed): the node holds the creation of
//!   that round's `OpenMiningRound` (or `ClosedMiningRound`) as a created event of a
//!   non-import transaction. An assignment's created event does not count: it is not
//!   the round's creation.
//! - `Q round` (empty): both flags of the round are set, whatever order they came in;
//!   the earliest available round is the first `Q` key (one scan, limit 1).
//! - `D round contract_id` (the contract rendered for the list, [`super::listed`]):
//!   active `ClosedMiningRound` contracts by `round.number`, removed when archived.
//!   Serving the list is one scan.
//!
//! A round contract whose payload has no int64 `round.number` is not a round the node
//! can place, and is left out of both.

use alloc::vec::Vec;

use crate::model::error::Error;
use crate::model::names::TemplateNames;
use crate::model::update::{CreatedEvent, Event, Update};
use crate::model::value::Value;
use crate::state::ledger::Archived;
use crate::storage::keys::{self, Key};
use crate::storage::stage::Stage;
use crate::storage::store::Store;

use super::listed::ListedContract;

/// Most closed rounds `GET /v0/closed-rounds` lists. The network archives a closed
/// round once its rewards are processed, so only a handful are ever active.
pub const MAX_CLOSED_ROUNDS: u32 = 1000;

const OPEN: u8 = 0;
const CLOSED: u8 = 1;

fn flag_key(round: i64, kind: u8) -> Vec<u8> {
    Key::new(keys::ROUND_SEEN).i64(round).byte(kind).into_bytes()
}

fn complete_key(round: i64) -> Vec<u8> {
    Key::new(keys::ROUND_COMPLETE).i64(round).into_bytes()
}

fn closed_key(round: i64, contract_id: &str) -> Vec<u8> {
    Key::new(keys::CLOSED_ROUND).i64(round).str(contract_id).into_bytes()
}

/// The round creations of `update` that count for reward accounting: created events
/// of open and closed rounds in a non-import transaction, as (round, kind).
fn round_creations<'u>(update: &'u Update, names: &'u TemplateNames) -> impl Iterator<Item = (i64, u8)> + 'u {
    let events = match update.as_transaction() {
        Some(tx) if !tx.is_import() => Some(tx.events_by_id.values()),
        _ => None,
    };
    events.into_iter().flatten().filter_map(|event| match event {
        Event::Created(created) => {
            let name = created.template_id.qualified_name();
            let kind = if name == names.open_round {
                OPEN
            } else if name == names.closed_round {
                CLOSED
            } else {
                return None;
            };
            Some((round_number(created)?, kind))
        }
        Event::Exercised(_) => None,
    })
}

fn round_number(created: &CreatedEvent) -> Option<i64> {
    created.create_arguments.lookup(&["round", "number"]).and_then(Value::as_int64)
}

/// The flags [`note_round_creations`] reads.
pub fn keys_read<'u>(update: &'u Update, names: &'u TemplateNames) -> impl Iterator<Item = Vec<u8>> + 'u {
    round_creations(update, names).flat_map(|(round, _)| [flag_key(round, OPEN), flag_key(round, CLOSED)])
}

/// Sets the flags of the round creations in `update`, and marks rounds whose open and
/// closed creations are now both held.
pub async fn note_round_creations<S: Store>(
    stage: &mut Stage<'_, S>,
    update: &Update,
    names: &TemplateNames,
) -> Result<(), Error> {
    let creations: Vec<(i64, u8)> = round_creations(update, names).collect();
    for (round, kind) in creations {
        stage.put(flag_key(round, kind), Vec::new());
        let other = if kind == OPEN { CLOSED } else { OPEN };
        if stage.get(&flag_key(round, other)).await?.is_some() {
            stage.put(complete_key(round), Vec::new());
        }
    }
    Ok(())
}

/// Brings the closed-round list in line with the record of `contract_id`, a
/// `ClosedMiningRound`: listed while active, removed once archived.
pub async fn sync_closed_round<S: Store>(
    stage: &mut Stage<'_, S>,
    contract_id: &str,
    archived: &Archived<'_>,
) -> Result<(), Error> {
    let Some(listed) = ListedContract::read(stage, contract_id, archived).await? else {
        return Ok(());
    };
    // Compact JSON renders an int64 as its decimal text.
    let Some(round) = listed.payload_text(&["round", "number"]).and_then(|n| n.parse::<i64>().ok()) else {
        return Ok(());
    };
    if listed.active {
        stage.put(closed_key(round, contract_id), listed.json);
    } else {
        stage.delete(closed_key(round, contract_id));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_keys_sort_by_round_number() {
        assert!(complete_key(-1) < complete_key(0));
        assert!(complete_key(9) < complete_key(10));
        assert!(closed_key(9, "zz") < closed_key(10, "aa"));
        assert_eq!(keys::decode_i64(&complete_key(42), 1), Some(42));
    }
}
