//! Network state derived at ingest, and the endpoints that serve it.
//!
//! Ingest calls [`apply_update`] for every new update (after the ledger has stored it
//! and updated the active contract set), with the keys of [`keys_read`] prefetched, so
//! that each endpoint answers from keys it can read directly or scan with a small limit:
//!
//! | endpoint | module | store reads |
//! |---|---|---|
//! | `GET .../rounds/earliest-available` | [`rounds`] | 1 scan (limit 1) |
//! | `POST /v0/backfilling/migration-info` | [`migrations`] | 3 scans and 1 get |
//! | `GET /v0/state/acs/snapshot-timestamp-after` | [`snapshots`] | 1 get and 1 scan (limit 1) |
//! | `GET /v0/closed-rounds` | [`rounds`] | 1 scan (limit [`rounds::MAX_CLOSED_ROUNDS`]) |
//! | `GET /v0/{coin}-price/votes` | [`votes`] | one scan (limit 1) per SV with an active vote, plus 1 |
//! | `GET /v0/domains/{d}/parties/{p}/participant-id` | [`hosting`] | 1 get |
//! | `GET /v1/domains/{d}/parties/{p}/participant-id` | [`hosting`] | 1 get |
//! | `GET /v0/roll-forward-lsu` | [`hosting`] | 1 get |
//!
//! Contract lists (closed rounds, votes) store each listed contract already rendered
//! ([`listed`]), so serving a list parses no JSON.

pub mod hosting;
pub mod listed;
pub mod migrations;
pub mod rounds;
pub mod snapshots;
pub mod votes;

use alloc::vec::Vec;

use crate::error::Error;
use crate::ledger::Archived;
use crate::stage::Stage;
use crate::names::TemplateNames;
use crate::store::Store;
use crate::update::Update;

/// The store keys [`apply_update`] reads for `update` (besides the contract records,
/// which [`crate::ledger::keys_read`] prefetches), to prefetch in one round trip.
pub fn keys_read(update: &Update, names: &TemplateNames) -> Vec<Vec<u8>> {
    let mut keys = migrations::keys_read(update);
    keys.extend(rounds::keys_read(update, names));
    keys
}

/// Derives this module's state from `update`, which the ledger has just stored as new,
/// archiving the contracts of `archived`.
pub async fn apply_update<S: Store>(
    stage: &mut Stage<'_, S>,
    update: &Update,
    names: &TemplateNames,
    archived: &Archived<'_>,
) -> Result<(), Error> {
    if let Some((before, after)) = migrations::apply_update(stage, update).await? {
        snapshots::note_range(stage, update.migration_id(), before, after);
    }
    rounds::note_round_creations(stage, update, names).await?;
    for (contract_id, qualified_name) in crate::ledger::touched_contracts(update) {
        if qualified_name == names.closed_round {
            rounds::sync_closed_round(stage, contract_id, archived).await?;
        } else if qualified_name == names.price_vote {
            votes::sync_vote(stage, contract_id, archived).await?;
        }
    }
    Ok(())
}

/// The record of `contract_id` as the batch sees it; for a contract the update
/// archived (`archived`), the record it had, with its creation, marked archived.
async fn read_record<S: Store>(
    stage: &mut Stage<'_, S>,
    contract_id: &str,
    archived: &Archived<'_>,
) -> Result<Option<crate::ledger::ContractRecord>, Error> {
    let parse = |bytes: &[u8]| {
        serde_json::from_slice::<crate::ledger::ContractRecord>(bytes)
            .map_err(|e| Error::Internal(alloc::format!("contract {contract_id}: unreadable record: {e}")))
    };
    if let Some(before) = archived.record(contract_id) {
        return parse(before).map(|record| Some(crate::ledger::ContractRecord { archived: true, ..record }));
    }
    match stage.get(&crate::ledger::contracts::contract_key(contract_id)).await? {
        Some(bytes) => parse(&bytes).map(Some),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::string::String;

    use crate::config::{Config, Names};
    use crate::exec::block_on;
    use crate::store::MemoryStore;

    fn vote_batch(template: &str) -> String {
        let update = serde_json::json!({"update": {
            "update_id": "tx-1", "migration_id": 0, "workflow_id": "", "record_time": "2024-01-01T00:00:00Z",
            "synchronizer_id": "sync", "effective_at": "2024-01-01T00:00:00Z", "root_event_ids": ["tx-1:0"],
            "events_by_id": {"tx-1:0": {
                "event_type": "created_event", "event_id": "tx-1:0", "contract_id": "00v", "template_id": template,
                "package_name": "p", "created_at": "2024-01-01T00:00:00Z", "signatories": [], "observers": [],
                "create_arguments": {"record": {"fields": [{"label": "sv", "value": {"party": "sv1"}}]}}}}}});
        serde_json::to_string(&update).unwrap()
    }

    fn votes_after_ingest(config: &Config, template: &str) -> String {
        let store = MemoryStore::new();
        block_on(crate::ingest::ingest(vote_batch(template).as_bytes(), &store, config)).unwrap();
        let field = crate::names::ApiNames::new(&config.names).price_votes_field;
        String::from_utf8(block_on(super::votes::latest(&store, &field)).unwrap().body).unwrap()
    }

    #[test]
    fn derived_state_follows_the_configured_template_names() {
        let config = Config { names: Names { root: "Splice".into(), coin: "Amulet".into() }, ..Config::default() };
        let body = votes_after_ingest(&config, "pkg:Splice.DSO.AmuletPrice:AmuletPriceVote");
        assert!(body.starts_with(r#"{"amulet_price_votes":[{"#), "{body}");
        assert!(body.contains(r#""contract_id":"00v""#), "{body}");
        let body = votes_after_ingest(&config, "pkg:Platform.DSO.CoinPrice:CoinPriceVote");
        assert_eq!(body, r#"{"amulet_price_votes":[]}"#);
        let body = votes_after_ingest(&Config::default(), "pkg:Platform.DSO.CoinPrice:CoinPriceVote");
        assert!(body.contains(r#""contract_id":"00v""#), "{body}");
    }

    /// An update that archives vote `00v` (consuming exercise `update_id:0`).
    fn archive_line(update_id: &str) -> String {
        let update = serde_json::json!({"update": {
            "update_id": update_id, "migration_id": 0, "workflow_id": "", "record_time": "2024-01-01T00:00:01Z",
            "synchronizer_id": "sync", "effective_at": "2024-01-01T00:00:01Z", "root_event_ids": [format!("{update_id}:0")],
            "events_by_id": {format!("{update_id}:0"): {
                "event_type": "exercised_event", "event_id": format!("{update_id}:0"), "contract_id": "00v",
                "template_id": "pkg:Platform.DSO.CoinPrice:CoinPriceVote", "package_name": "p", "choice": "Archive",
                "choice_argument": {"record": {"fields": []}}, "exercise_result": {"unit": {}}, "consuming": true,
                "acting_parties": [], "child_event_ids": []}}}});
        serde_json::to_string(&update).unwrap()
    }

    #[test]
    fn an_archived_vote_leaves_the_list_whether_created_in_its_batch_or_an_earlier_one() {
        let template = "pkg:Platform.DSO.CoinPrice:CoinPriceVote";
        let config = Config::default();
        let votes = |store: &MemoryStore| {
            String::from_utf8(block_on(super::votes::latest(store, "coin_price_votes")).unwrap().body).unwrap()
        };
        // Created and archived in one batch.
        let store = MemoryStore::new();
        let batch = format!("{}\n{}", vote_batch(template), archive_line("tx-2"));
        block_on(crate::ingest::ingest(batch.as_bytes(), &store, &config)).unwrap();
        assert_eq!(votes(&store), r#"{"coin_price_votes":[]}"#);
        // Created in one batch, archived in the next: the archived record keeps no
        // payload, and the list entry still goes.
        let store = MemoryStore::new();
        block_on(crate::ingest::ingest(vote_batch(template).as_bytes(), &store, &config)).unwrap();
        assert!(votes(&store).contains(r#""contract_id":"00v""#));
        block_on(crate::ingest::ingest(archive_line("tx-2").as_bytes(), &store, &config)).unwrap();
        assert_eq!(votes(&store), r#"{"coin_price_votes":[]}"#);
        let record = block_on(crate::ledger::contracts::read(&store, "00v")).unwrap().expect("a tombstone");
        assert_eq!((record.created, record.archived), (None, true));
    }
}
