//! Import updates, and history from before what this node holds: the parts of following
//! that page through the upstream's backfilling endpoints.
//!
//! Both endpoints answer items in the version-1 shape, as the network's do: a
//! transaction carries the legacy `offset`, which ingest does not take, so it is dropped
//! ([`super::pages::without_offset`]) and the rest read as a stream item. Updates-before answers
//! newest first; its pages are applied oldest first, as the upstream applied them.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::pages::Item;
use super::{FollowError, Follower, Link, Side, read, to_vec};
use crate::api::route::UpdateApi;
use crate::model::time::Timestamp;

impl<U: Link, L: Link> Follower<'_, U, L> {
    /// Applies the upstream's import updates of `migration_id` after the last one held
    /// here, up to `last`, or until the upstream's list ends when `last` is unknown (a
    /// public upstream, for which a migration without data is a 404 and holds none);
    /// false when the page budget ran out first.
    pub(super) async fn imports(&mut self, migration_id: i64, last: Option<&str>) -> Result<bool, FollowError> {
        loop {
            let held = self.imported.get(&migration_id).cloned().unwrap_or_default();
            if last.is_some_and(|last| held.as_str() >= last) {
                return Ok(true);
            }
            if self.report.pages >= self.limits.max_pages {
                return Ok(false);
            }
            let body = serde_json::json!({
                "migration_id": migration_id,
                "after_update_id": held,
                "limit": self.limits.page_size,
            });
            const PATH: &str = "/v0/backfilling/import-updates";
            if last.is_none() && !self.has_data(migration_id).await? {
                return Ok(true);
            }
            let page = self.page(PATH, &body, UpdateApi::V1).await?;
            let Some(end) = page.last().map(|item| item.update.id().to_owned()) else {
                // The upstream's list ended before the last id its state named: it was
                // reset in between. The next call starts again from its new state.
                return Ok(true);
            };
            if end <= held {
                return Err(FollowError(format!(
                    "the upstream answered POST {PATH} for migration {migration_id} after {held:?} with a page ending at \
                     {end:?}, which is not after it"
                )));
            }
            if page.iter().any(|item| !item.update.is_import() || item.update.migration_id() != migration_id) {
                return Err(FollowError(format!(
                    "the upstream answered POST {PATH} for migration {migration_id} with an update that is not one of its import updates"
                )));
            }
            let batch = self.with_blobs(page).await?;
            let applied = self.ingest(batch, "a page of the upstream's POST /v0/backfilling/import-updates").await?;
            self.report.summary.add(&applied);
            self.report.pages += 1;
            self.imported.insert(migration_id, end);
        }
    }

    /// Applies the updates the upstream holds from before the earliest this node holds
    /// of their migration and synchronizer: history the upstream backfilled after this
    /// node had followed past that point. Pages go back in time from this node's earliest
    /// update (`POST /v0/backfilling/updates-before`), so each page applied is progress
    /// the next call keeps. Only history up to this node's stream position is taken:
    /// what the upstream adds after it is the stream's. False when the page budget ran
    /// out first.
    pub(super) async fn earlier_history(&mut self) -> Result<bool, FollowError> {
        let Some(position) = self.report.position.clone() else { return Ok(true) };
        let end = time(&position.after_record_time, "this node's stream position")?;
        let mut migration = Some(position.after_migration_id);
        let mut walked = 0;
        while let Some(migration_id) = migration {
            let Some(theirs) = self.migration_info(Side::Upstream, migration_id).await? else { break };
            let ours = self.migration_info(Side::Local, migration_id).await?;
            for range in &theirs.record_time_range {
                let synchronizer = range.synchronizer_id.as_str();
                let first = time(&range.min, "the upstream's migration info")?;
                let held = ours.iter().flat_map(|o| &o.record_time_range).find(|r| r.synchronizer_id == synchronizer);
                let mut before = match held {
                    Some(held) => time(&held.min, "this node's migration info")?,
                    None => later(time(&range.max, "the upstream's migration info")?),
                };
                if migration_id == position.after_migration_id {
                    before = before.min(later(end));
                }
                while first < before {
                    if self.report.pages >= self.limits.max_pages {
                        return Ok(false);
                    }
                    let mut page = self.updates_before(migration_id, synchronizer, before, None).await?;
                    // Newest first, so the oldest is the last; the smallest, whatever the order.
                    let Some(oldest) = page.iter().map(|item| item.update.record_time()).min() else { break };
                    if page.len() >= self.limits.page_size as usize {
                        // The page may have cut the group at its oldest record time: take
                        // that group whole.
                        let group =
                            self.updates_before(migration_id, synchronizer, later(oldest), Some(oldest)).await?;
                        page.retain(|item| item.update.record_time() > oldest);
                        page.extend(group);
                    }
                    // Applied oldest first, in the order of the upstream's stream.
                    page.sort_by(|a, b| {
                        (a.update.record_time(), a.update.id()).cmp(&(b.update.record_time(), b.update.id()))
                    });
                    let batch = self.with_blobs(page).await?;
                    let what = "a page of the upstream's POST /v0/backfilling/updates-before";
                    let applied = self.ingest(batch, what).await?;
                    self.report.summary.add(&applied);
                    self.report.pages += 1;
                    before = oldest;
                }
            }
            migration = previous(migration_id, theirs.previous_migration_id, &mut walked)?;
        }
        Ok(true)
    }

    /// The upstream's most recent updates of `migration_id` and `synchronizer` before
    /// `before` (and at or after `at_or_after`), a page of them, in the upstream's
    /// order (newest first).
    async fn updates_before(
        &self,
        migration_id: i64,
        synchronizer: &str,
        before: Timestamp,
        at_or_after: Option<Timestamp>,
    ) -> Result<Vec<Item>, FollowError> {
        let mut body = serde_json::json!({
            "migration_id": migration_id,
            "synchronizer_id": synchronizer,
            "before": before.to_string(),
            "count": if at_or_after.is_some() { crate::api::history::MAX_PAGE } else { self.limits.page_size },
        });
        if let Some(at_or_after) = at_or_after {
            body["at_or_after"] = serde_json::json!(at_or_after.to_string());
        }
        const PATH: &str = "/v0/backfilling/updates-before";
        let page = self.page(PATH, &body, UpdateApi::V1).await?;
        let stray = page.iter().find(|item| {
            let update = &item.update;
            let time = update.record_time();
            update.is_import()
                || update.migration_id() != migration_id
                || time >= before
                || at_or_after.is_some_and(|t| time < t)
        });
        if let Some(item) = stray {
            return Err(FollowError(format!(
                "the upstream answered POST {PATH} for migration {migration_id} before {before} with update {}, which is not one of those",
                item.update.id()
            )));
        }
        Ok(page)
    }

    /// Whether the upstreams hold an update of `migration_id` (their migration info is
    /// not a 404).
    async fn has_data(&self, migration_id: i64) -> Result<bool, FollowError> {
        Ok(self.migration_info(Side::Upstream, migration_id).await?.is_some())
    }

    /// `side`'s `POST /v0/backfilling/migration-info` of `migration_id`; `None` when it
    /// holds no update of that migration.
    pub(super) async fn migration_info(
        &self,
        side: Side,
        migration_id: i64,
    ) -> Result<Option<MigrationInfo>, FollowError> {
        const PATH: &str = "/v0/backfilling/migration-info";
        let body = to_vec(&serde_json::json!({ "migration_id": migration_id }))?;
        let response = self.post(side, PATH, body).await?;
        if response.status == 404 {
            return Ok(None);
        }
        read(side, PATH, &response).map(Some)
    }
}

/// The parts of `POST /v0/backfilling/migration-info`'s answer the follower reads.
#[derive(serde::Deserialize)]
pub(super) struct MigrationInfo {
    /// Whether the node holds every update of the migration (its backfill record).
    #[serde(default)]
    pub(super) complete: bool,
    /// Whether it holds every import update of the migration.
    #[serde(default)]
    pub(super) import_updates_complete: bool,
    /// The migration before it that holds updates.
    #[serde(default)]
    previous_migration_id: Option<i64>,
    /// The record times it holds, by synchronizer.
    pub(super) record_time_range: Vec<SynchronizerRange>,
}

/// The earliest and latest record time of a migration's updates on one synchronizer.
#[derive(serde::Deserialize)]
pub(super) struct SynchronizerRange {
    pub(super) synchronizer_id: String,
    pub(super) min: String,
    pub(super) max: String,
}

/// The migration the walk back goes to after `migration_id`, the upstream's
/// `previous_migration_id` of it: it must be an earlier one (so the walk cannot go round
/// a cycle), and the walk takes at most [`crate::api::history::MAX_MIGRATIONS`] steps.
fn previous(migration_id: i64, previous: Option<i64>, walked: &mut u32) -> Result<Option<i64>, FollowError> {
    const PATH: &str = "/v0/backfilling/migration-info";
    *walked += 1;
    match previous {
        Some(previous) if previous >= migration_id => Err(FollowError(format!(
            "the upstream answered POST {PATH} for migration {migration_id} with previous_migration_id {previous}, \
             which is not an earlier migration"
        ))),
        Some(previous) if *walked >= crate::api::history::MAX_MIGRATIONS => Err(FollowError(format!(
            "the upstream answered POST {PATH} for migration {migration_id} with previous_migration_id {previous}, \
             after {walked} migrations; a node holds at most {}",
            crate::api::history::MAX_MIGRATIONS
        ))),
        previous => Ok(previous),
    }
}

/// `text`, a record time that `source` gave.
fn time(text: &str, source: &str) -> Result<Timestamp, FollowError> {
    Timestamp::parse(text)
        .map_err(|e| FollowError(format!("{source} holds a record time {text:?} that is not one: {e}")))
}

/// The microsecond after `time` (the last one, at the end of time).
fn later(time: Timestamp) -> Timestamp {
    Timestamp::from_micros(time.micros().saturating_add(1)).unwrap_or(Timestamp::MAX)
}
