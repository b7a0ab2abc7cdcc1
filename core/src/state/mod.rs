//! The state layer: what ingest keeps, derived from the ledger, with no request or
//! response of its own (the API serves it: [`crate::api`]).
//!
//! - [`ledger`]: every update as stored, and the active contract set.
//! - [`projection`]: the shape of what else ingest keeps. [`Projection`]s of the
//!   ledger keep it, each applied by ingest to every new update after the ledger has
//!   stored it and updated the active contract set, with the keys they read
//!   prefetched (the one list is [`crate::ingest::projections`]): [`Migrations`] (with
//!   the snapshot index it feeds), [`Rounds`], [`PriceVotes`] (here), the ledger's
//!   outcomes of wallet requests ([`wallet::outcome::LedgerOutcomes`]), the contracts a
//!   validator and a wallet read ([`scan`]), and what the token registry reads
//!   ([`registry`]: the contracts it chooses from, and the coin's total supply).
//! - [`blobs`]: the blobs a follower takes after their contracts, and the contracts
//!   still waiting for one.
//! - [`network`]: the network records (topology, backfill, the roll-forward plan,
//!   wallet users) that come in beside updates, each replacing the state it names.
//! - [`wallet`]: buy-traffic requests as stored, and what becomes of them.
//!
//! Contract lists (closed rounds, votes) store each listed contract already rendered
//! ([`listed`]), so serving a list parses no JSON.

pub mod blobs;
pub mod ledger;
pub mod listed;
pub mod migrations;
pub mod network;
pub mod projection;
pub mod registry;
pub mod rounds;
pub mod scan;
pub mod snapshots;
pub mod votes;
pub mod wallet;

use alloc::vec::Vec;

use crate::model::error::Error;
use crate::model::names::TemplateNames;
use crate::model::update::Update;
use crate::state::projection::Projection;
use crate::storage::stage::Stage;
use crate::storage::store::Store;
use ledger::Archived;

/// Each migration's record time ranges, import updates and history stream indexes
/// ([`migrations`]), and the first-snapshot index its range decides ([`snapshots`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Migrations;

impl Projection for Migrations {
    fn keys_read<'a>(&'a self, update: &'a Update) -> impl Iterator<Item = Vec<u8>> + 'a {
        migrations::keys_read(update).into_iter()
    }

    async fn apply<S: Store>(
        &self,
        stage: &mut Stage<'_, S>,
        update: &Update,
        _archived: &Archived<'_>,
    ) -> Result<(), Error> {
        if let Some((before, after)) = migrations::apply_update(stage, update).await? {
            snapshots::note_range(stage, update.migration_id(), before, after);
        }
        Ok(())
    }
}

/// The rounds with complete reward accounting, from the rounds' creations, and the
/// list of active closed rounds ([`rounds`]).
#[derive(Debug, Clone, Copy)]
pub struct Rounds<'n> {
    names: &'n TemplateNames,
}

impl<'n> Rounds<'n> {
    /// The rounds, of the templates `names` names.
    pub fn new(names: &'n TemplateNames) -> Self {
        Rounds { names }
    }
}

impl Projection for Rounds<'_> {
    fn keys_read<'a>(&'a self, update: &'a Update) -> impl Iterator<Item = Vec<u8>> + 'a {
        rounds::keys_read(update, self.names)
    }

    async fn apply<S: Store>(
        &self,
        stage: &mut Stage<'_, S>,
        update: &Update,
        archived: &Archived<'_>,
    ) -> Result<(), Error> {
        rounds::note_round_creations(stage, update, self.names).await?;
        for (contract_id, qualified_name) in ledger::touched_contracts(update) {
            if qualified_name == self.names.closed_round {
                rounds::sync_closed_round(stage, contract_id, archived).await?;
            }
        }
        Ok(())
    }
}

/// The list of active price votes ([`votes`]).
#[derive(Debug, Clone, Copy)]
pub struct PriceVotes<'n> {
    names: &'n TemplateNames,
}

impl<'n> PriceVotes<'n> {
    /// The votes, of the template `names` names.
    pub fn new(names: &'n TemplateNames) -> Self {
        PriceVotes { names }
    }
}

impl Projection for PriceVotes<'_> {
    /// None besides the contract records, which the ledger's own reads prefetch.
    fn keys_read<'a>(&'a self, _update: &'a Update) -> impl Iterator<Item = Vec<u8>> + 'a {
        core::iter::empty()
    }

    async fn apply<S: Store>(
        &self,
        stage: &mut Stage<'_, S>,
        update: &Update,
        archived: &Archived<'_>,
    ) -> Result<(), Error> {
        for (contract_id, qualified_name) in ledger::touched_contracts(update) {
            if qualified_name == self.names.price_vote {
                votes::sync_vote(stage, contract_id, archived).await?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::string::String;

    use crate::model::config::{Config, Names};
    use crate::storage::exec::block_on;
    use crate::storage::store::MemoryStore;

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
        let field = crate::model::names::ApiNames::new(&config.names).price_votes_field;
        String::from_utf8(block_on(crate::api::state::price_votes(&store, &field)).unwrap().body).unwrap()
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
            String::from_utf8(block_on(crate::api::state::price_votes(store, "coin_price_votes")).unwrap().body)
                .unwrap()
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
        let record = block_on(crate::state::ledger::contracts::read(&store, "00v")).unwrap().expect("a tombstone");
        assert_eq!(record, crate::state::ledger::ContractRecord::Archived);
    }
}
