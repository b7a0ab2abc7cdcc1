//! Following another node: keeping this node's history current from an upstream node.
//!
//! [`sync`] is the follower, written once for every host: the native
//! `ledger-node follow` and the worker's scheduled follower only supply two [`Link`]s,
//! one to the upstream (over HTTP, with the upstream's admin token) and one to this node
//! (its own handler, with an admin token of the host's), and call it in a loop or once
//! per run.
//!
//! **What comes across.** Updates come from the upstream's public history stream
//! (`POST /v2/updates`, `protobuf_json`) and its import updates
//! (`POST /v0/backfilling/import-updates`); what those leave out comes from the
//! upstream's export endpoints ([`crate::export`], admin token): the created-event blobs
//! of contracts the upstream still holds active (the blobs the registry discloses; an
//! archived contract's blob is not kept by any node), the backfill records, the
//! roll-forward plan and party hosting. Wallet users and buy-traffic requests are each
//! node's own and are not copied. Everything is applied through this node's ordinary
//! ingest (`POST /v0/admin/ingest`): atomic, idempotent, and a 409 for an update that
//! differs from the one held under its id.
//!
//! **Position.** A follower's position in the stream is the last (migration id, record
//! time) of its own stream index, its position in a migration's import updates is the
//! largest import update id it holds, and where its history of a migration and
//! synchronizer starts is the earliest record time it holds there: all are the data
//! itself, written by the atomic ingest of each page, so a follower killed at any
//! moment resumes exactly where its last page was applied, without gap or duplicate.
//! This holds while the follower is fed by following alone, and the upstream's history
//! grows at its ends, as a network node's does: new updates after the last, backfilled
//! history before the first of its migration and synchronizer. An update ingested
//! upstream between two the follower holds, or an import update with an id below the
//! largest it holds of that migration, is not seen by it.
//!
//! **Order.** One call: the import updates of the migrations up to the one the stream
//! position is in; then stream pages, each cut at a change of migration id, the import
//! updates of a migration applied before its first stream page; once the stream is
//! caught up, import updates that arrived late; then, going back from the position, the
//! history the upstream holds from before the follower's first update of each migration
//! and synchronizer (`POST /v0/backfilling/updates-before`, newest page first), as a
//! network node backfills; then backfill, roll-forward and hosting records that differ
//! from this node's (a hosting the upstream no longer has is removed). So a follower
//! applies a history in the order the upstream's ingest did, and once caught up answers
//! every read but the wallet's as the upstream does.

use alloc::borrow::ToOwned;
use alloc::collections::{BTreeMap, BTreeSet, VecDeque};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::exec::join;
use crate::export::{self, Blobs, Hosting, HostingKey, Position, State};
use crate::http::{Body, Method, Request, Response};
use crate::ingest::Summary;
use crate::json::Json;
use crate::time::Timestamp;
use crate::update::{Blob, Event, Update};

/// The variable naming a follower's upstream node, where the host reads one from its
/// configuration (the worker; the native command takes `--upstream`).
pub const UPSTREAM_URL: &str = "LEDGER_NODE_UPSTREAM_URL";
/// The variable holding the upstream's admin token, which its export endpoints need.
pub const UPSTREAM_TOKEN: &str = "LEDGER_NODE_UPSTREAM_TOKEN";

/// One side of the follower: sends a request to a node and returns its response.
///
/// The hosts run the follower on one thread, so the future need not be `Send`.
#[allow(async_fn_in_trait)]
pub trait Link {
    /// Sends `request`. `Err` means no response came (the node is unreachable, the
    /// connection broke, the answer took too long), described for the operator.
    async fn send(&self, request: Request) -> Result<Response, String>;
}

/// How much one call of [`sync`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Updates asked for in one page (1 to [`crate::history::MAX_PAGE`]).
    pub page_size: u32,
    /// Most pages of updates (stream and import pages) one call applies; the call then
    /// returns with [`Report::caught_up`] false and the next call goes on.
    pub max_pages: u32,
    /// Whether two stream pages may be in ingest at once. Only for a local link that
    /// applies concurrent ingest requests in the order they were sent (the order their
    /// futures are first polled) and refuses every one after one that failed, as the
    /// native host's turns do: otherwise a later page could land without an earlier one,
    /// and the position, which is the data, would pass over the gap.
    pub pipelined: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { page_size: 500, max_pages: u32::MAX, pipelined: false }
    }
}

/// What one call of [`sync`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// What this node's ingest applied, added up over the call's batches.
    pub summary: Summary,
    /// Pages of updates applied that moved the follower on (a page that only checked
    /// the last group it held does not count).
    pub pages: u32,
    /// Whether the follower reached the upstream's end (and copied its network
    /// records); false when [`Limits::max_pages`] stopped it first.
    pub caught_up: bool,
    /// The stream position after the call.
    pub position: Option<Position>,
}

/// Why following stopped; nothing of the page or records at fault was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowError(String);

impl fmt::Display for FollowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl core::error::Error for FollowError {}

/// Brings this node (`local`) up to date with `upstream`, within `limits`; see the
/// module docs.
pub async fn sync<U: Link, L: Link>(upstream: &U, local: &L, limits: &Limits) -> Result<Report, FollowError> {
    let page_size = limits.page_size.clamp(1, crate::history::MAX_PAGE);
    let mut follower = Follower {
        upstream,
        local,
        limits: Limits { page_size, ..*limits },
        report: Report::default(),
        imported: BTreeMap::new(),
    };
    follower.run().await?;
    Ok(follower.report)
}

/// Which node a request went to, for messages.
#[derive(Debug, Clone, Copy)]
enum Side {
    Upstream,
    Local,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Upstream => "the upstream",
            Side::Local => "this node",
        })
    }
}

struct Follower<'a, U, L> {
    upstream: &'a U,
    local: &'a L,
    limits: Limits,
    report: Report,
    /// The largest import update id held here, by migration.
    imported: BTreeMap<i64, String>,
}

/// An update of a page, and its text as the upstream sent it.
struct Item {
    update: Update,
    text: alloc::boxed::Box<RawValue>,
}

/// A page of the stream, ready for ingest.
struct Prepared {
    /// The migration all its updates belong to.
    migration_id: i64,
    /// The position of its last update.
    position: Position,
    /// Its ingest batch.
    batch: Vec<u8>,
}

/// `{"transactions": [...]}`, items left as text.
#[derive(serde::Deserialize)]
struct Page {
    transactions: Vec<alloc::boxed::Box<RawValue>>,
}

impl<U: Link, L: Link> Follower<'_, U, L> {
    async fn run(&mut self) -> Result<(), FollowError> {
        let upstream_state = self.state(Side::Upstream, None).await?;
        let local_state = self.state(Side::Local, None).await?;
        self.report.position = local_state.stream_position.clone();
        self.imported = local_state.import_updates.iter().map(|i| (i.migration_id, i.last_update_id.clone())).collect();
        let upstream_imports: Vec<(i64, String)> =
            upstream_state.import_updates.iter().map(|i| (i.migration_id, i.last_update_id.clone())).collect();

        let mut current = self.report.position.as_ref().map(|p| p.after_migration_id);
        for (migration_id, last) in &upstream_imports {
            if current.is_some_and(|c| *migration_id <= c) && !self.imports(*migration_id, last).await? {
                return Ok(());
            }
        }
        // The first page starts at the last group held, not after it: ingest finds it
        // unchanged, or refuses an update of it that differs from the one held, and
        // takes updates the upstream added to it since. While pages are applied here,
        // the next ones are fetched and prepared; pipelined, two are applied at once.
        let depth = if self.limits.pipelined { 2 } else { 1 };
        let after = self.report.position.as_ref().map(Position::at_group);
        let mut ready = self.prepare_pages(after, depth).await?;
        while let Some(migration_id) = ready.first().map(|page| page.migration_id) {
            if self.report.pages >= self.limits.max_pages {
                return Ok(());
            }
            if current != Some(migration_id) {
                if let Some((_, last)) = upstream_imports.iter().find(|(m, _)| *m == migration_id)
                    && (!self.imports(migration_id, last).await? || self.report.pages >= self.limits.max_pages)
                {
                    return Ok(());
                }
                current = Some(migration_id);
            }
            // The pages to apply now: of this migration, within the budget. A page that
            // only checked the last group held is not progress.
            let mut now = Vec::new();
            let mut pages = self.report.pages;
            let mut position = self.report.position.clone();
            while let Some(page) = ready.first() {
                let progress = position.as_ref() != Some(&page.position);
                if page.migration_id != migration_id
                    || (!now.is_empty() && pages + u32::from(progress) > self.limits.max_pages)
                {
                    break;
                }
                pages += u32::from(progress);
                position = Some(page.position.clone());
                now.push(ready.remove(0));
            }
            // Prefetch goes on after the pages already prepared.
            let last = ready.last().map(|page| page.position.clone()).or_else(|| position.clone());
            let wanted = depth.saturating_sub(ready.len());
            let more = pages < self.limits.max_pages && wanted > 0;
            let batches: Vec<Vec<u8>> = now.iter_mut().map(|page| core::mem::take(&mut page.batch)).collect();
            let applying = self.ingest_pages(batches);
            let (applied, prepared) = if more {
                let (applied, prepared) = join(applying, self.prepare_pages(last, wanted)).await;
                (applied, Some(prepared))
            } else {
                (applying.await, None)
            };
            for (page, applied) in now.iter().zip(applied) {
                self.report.summary.add(&applied?);
                if self.report.position.as_ref() != Some(&page.position) {
                    self.report.pages += 1;
                }
                self.report.position = Some(page.position.clone());
            }
            match prepared {
                Some(prepared) => ready.extend(prepared?),
                None if ready.is_empty() => return Ok(()),
                None => {}
            }
        }
        for (migration_id, last) in &upstream_imports {
            if !self.imports(*migration_id, last).await? {
                return Ok(());
            }
        }
        if !self.earlier_history().await? {
            return Ok(());
        }
        self.network_records(upstream_state, local_state).await?;
        self.report.caught_up = true;
        Ok(())
    }

    /// Applies the upstream's import updates of `migration_id` after the last one held
    /// here, up to `last`; false when the page budget ran out first.
    async fn imports(&mut self, migration_id: i64, last: &str) -> Result<bool, FollowError> {
        loop {
            let held = self.imported.get(&migration_id).cloned().unwrap_or_default();
            if held.as_str() >= last {
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
            let page = self.page(PATH, &body).await?;
            let Some(end) = page.last().map(|item| item.update.id().to_owned()) else {
                // The upstream's list ended before the last id its state named: it was
                // reset in between. The next call starts again from its new state.
                return Ok(true);
            };
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
    async fn earlier_history(&mut self) -> Result<bool, FollowError> {
        let Some(position) = self.report.position.clone() else { return Ok(true) };
        let end = time(&position.after_record_time, "this node's stream position")?;
        let mut migration = Some(position.after_migration_id);
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
                    let Some(oldest) = page.first().map(|item| item.update.record_time()) else { break };
                    if page.len() >= self.limits.page_size as usize {
                        // The page may have cut the group at its oldest record time: take
                        // that group whole.
                        let group =
                            self.updates_before(migration_id, synchronizer, later(oldest), Some(oldest)).await?;
                        page.retain(|item| item.update.record_time() > oldest);
                        page.splice(0..0, group);
                    }
                    let batch = self.with_blobs(page).await?;
                    let what = "a page of the upstream's POST /v0/backfilling/updates-before";
                    let applied = self.ingest(batch, what).await?;
                    self.report.summary.add(&applied);
                    self.report.pages += 1;
                    before = oldest;
                }
            }
            migration = theirs.previous_migration_id;
        }
        Ok(true)
    }

    /// The upstream's most recent updates of `migration_id` and `synchronizer` before
    /// `before` (and at or after `at_or_after`), a page of them, in ascending order.
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
            "count": if at_or_after.is_some() { crate::history::MAX_PAGE } else { self.limits.page_size },
        });
        if let Some(at_or_after) = at_or_after {
            body["at_or_after"] = serde_json::json!(at_or_after.to_string());
        }
        const PATH: &str = "/v0/backfilling/updates-before";
        let page = self.page(PATH, &body).await?;
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

    /// `side`'s `POST /v0/backfilling/migration-info` of `migration_id`; `None` when it
    /// holds no update of that migration.
    async fn migration_info(&self, side: Side, migration_id: i64) -> Result<Option<MigrationInfo>, FollowError> {
        const PATH: &str = "/v0/backfilling/migration-info";
        let body = to_vec(&serde_json::json!({ "migration_id": migration_id }))?;
        let response = self.post(side, PATH, body).await?;
        if response.status == 404 {
            return Ok(None);
        }
        read(side, PATH, &response).map(Some)
    }

    /// The page of the upstream's stream after `after`.
    async fn stream_page(&self, after: Option<&Position>) -> Result<Vec<Item>, FollowError> {
        let mut body = serde_json::json!({
            "page_size": self.limits.page_size,
            "daml_value_encoding": "protobuf_json",
        });
        if let Some(after) = after {
            body["after"] = serde_json::json!(after);
        }
        let page = self.page("/v2/updates", &body).await?;
        if let (Some(after), Some(Item { update: first, .. })) = (after, page.first()) {
            let time = first.record_time().to_string();
            if (first.migration_id(), time.as_str()) <= (after.after_migration_id, after.after_record_time.as_str())
                || first.is_import()
            {
                return Err(FollowError(format!(
                    "the upstream answered POST /v2/updates after migration {} at {} with update {} of migration {} at {time}, \
                     which is not after it",
                    after.after_migration_id,
                    after.after_record_time,
                    first.id(),
                    first.migration_id()
                )));
            }
        }
        Ok(page)
    }

    /// A page of updates from the upstream's `path`, parsed.
    async fn page(&self, path: &str, body: &serde_json::Value) -> Result<Vec<Item>, FollowError> {
        let page: Page = self.call(Side::Upstream, path, to_vec(body)?).await?;
        let mut line = Vec::new();
        page.transactions
            .into_iter()
            .enumerate()
            .map(|(index, text)| {
                let malformed = |problem: String| {
                    FollowError(format!(
                        "the upstream's POST {path} answered a malformed page: item {index}: {problem}"
                    ))
                };
                // Items are ingest records but for their blobs: the fast reader takes
                // them, and the strict parser names what is wrong with one it declines.
                line.clear();
                line.extend_from_slice(b"{\"update\":");
                line.extend_from_slice(text.get().as_bytes());
                line.push(b'}');
                let update = match crate::update::fast::update_line(&line) {
                    Some(update) => update,
                    None => {
                        let json = Json::parse(text.get().as_bytes()).map_err(|e| malformed(e.to_string()))?;
                        Update::parse(&json).map_err(|e| malformed(e.to_string()))?
                    }
                };
                Ok(Item { update, text })
            })
            .collect()
    }

    /// Up to `count` consecutive stream pages after `after`, prepared; fewer at the
    /// end of the stream.
    async fn prepare_pages(&self, mut after: Option<Position>, count: usize) -> Result<Vec<Prepared>, FollowError> {
        let mut pages = Vec::with_capacity(count);
        while pages.len() < count {
            let Some(page) = self.prepare(after.as_ref()).await? else { break };
            after = Some(page.position.clone());
            pages.push(page);
        }
        Ok(pages)
    }

    /// Applies the batches of one or two stream pages here, at once when there are two
    /// (the first sent first), and says what each did.
    async fn ingest_pages(&self, mut batches: Vec<Vec<u8>>) -> Vec<Result<Summary, FollowError>> {
        const WHAT: &str = "a page of the upstream's POST /v2/updates";
        match (batches.pop(), batches.pop()) {
            (Some(second), Some(first)) => {
                let (first, second) = join(self.ingest(first, WHAT), self.ingest(second, WHAT)).await;
                alloc::vec![first, second]
            }
            (Some(only), None) => alloc::vec![self.ingest(only, WHAT).await],
            _ => Vec::new(),
        }
    }

    /// The upstream's stream page after `after`, cut where its migration id changes,
    /// prepared for ingest; `None` at the end of the stream.
    async fn prepare(&self, after: Option<&Position>) -> Result<Option<Prepared>, FollowError> {
        let page = self.stream_page(after).await?;
        let Some(migration_id) = page.first().map(|item| item.update.migration_id()) else { return Ok(None) };
        let page: Vec<Item> = page.into_iter().take_while(|item| item.update.migration_id() == migration_id).collect();
        let Some(position) = page.last().map(|item| Position {
            after_migration_id: migration_id,
            after_record_time: item.update.record_time().to_string(),
        }) else {
            return Ok(None);
        };
        Ok(Some(Prepared { migration_id, position, batch: self.with_blobs(page).await? }))
    }

    /// `items` as one ingest batch, with the blobs the upstream holds for their created
    /// events filled in. An item none of whose events has a blob upstream goes as the
    /// upstream sent it: it is already an ingest record.
    ///
    /// The upstream holds blobs of active contracts only, and it has applied every
    /// update of the page: a contract that an update of the page archives has none
    /// there, and is not asked for. Most contracts live briefly, so this leaves few.
    async fn with_blobs(&self, mut items: Vec<Item>) -> Result<Vec<u8>, FollowError> {
        let archived: BTreeSet<String> =
            items.iter().flat_map(|item| archived_contracts(&item.update)).map(ToOwned::to_owned).collect();
        let ids: Vec<String> = items
            .iter_mut()
            .flat_map(|item| item.update.created_events_mut())
            .filter(|e| e.created_event_blob.is_none() && !archived.contains(&e.contract_id))
            .map(|e| e.contract_id.clone())
            .collect();
        let mut blobs = BTreeMap::new();
        for chunk in ids.chunks(export::MAX_CONTRACT_IDS) {
            let body = to_vec(&serde_json::json!({ "contract_ids": chunk }))?;
            let found: Blobs = self.call(Side::Upstream, "/v0/admin/export/blobs", body).await?;
            for blob in found.blobs {
                let parsed = Blob::parse(&blob.created_event_blob).map_err(|e| {
                    FollowError(format!(
                        "the upstream's POST /v0/admin/export/blobs answered a malformed blob for contract {}: {e:?}",
                        blob.contract_id
                    ))
                })?;
                blobs.insert(blob.contract_id, parsed);
            }
        }
        let mut batch = String::with_capacity(items.iter().map(|item| item.text.get().len() + 12).sum());
        for item in &mut items {
            let mut filled = false;
            for event in item.update.created_events_mut() {
                if event.created_event_blob.is_none()
                    && let Some(blob) = blobs.get(&event.contract_id)
                {
                    event.created_event_blob = Some(blob.clone());
                    filled = true;
                }
            }
            batch.push_str("{\"update\":");
            if filled {
                batch.push_str(&item.update.ingest_text());
            } else {
                batch.push_str(item.text.get());
            }
            batch.push_str("}\n");
        }
        Ok(batch.into_bytes())
    }

    /// Copies the backfill, roll-forward and hosting records that differ from this
    /// node's, and removes the hostings the upstream no longer has.
    async fn network_records(&mut self, upstream: State, local: State) -> Result<(), FollowError> {
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for record in &upstream.backfill {
            if !local.backfill.contains(record) {
                lines.push(record_line("backfill", record)?);
            }
        }
        if upstream.roll_forward_lsu != local.roll_forward_lsu {
            lines.push(record_line("roll_forward_lsu", &upstream.roll_forward_lsu)?);
        }
        let mut theirs = Hostings::new(Side::Upstream, upstream);
        let mut ours = Hostings::new(Side::Local, local);
        loop {
            let a = theirs.peek(self).await?.map(Hosting::key);
            let b = ours.peek(self).await?.map(Hosting::key);
            let (copy, remove) = match (a, b) {
                (None, None) => break,
                (Some(_), None) => (true, false),
                (None, Some(_)) => (false, true),
                (Some(a), Some(b)) => (a <= b, a >= b),
            };
            let hosting = if copy { theirs.buffer.pop_front() } else { None };
            let held = if remove { ours.buffer.pop_front() } else { None };
            match (hosting, held) {
                // Held with the same participants: nothing to do.
                (Some(hosting), Some(held)) if hosting == held => {}
                (Some(hosting), _) => lines.push(record_line("topology", &hosting)?),
                (None, Some(held)) => {
                    lines.push(record_line("topology", &Hosting { participant_ids: Vec::new(), ..held })?)
                }
                (None, None) => {}
            }
        }
        for chunk in lines.chunks(1000) {
            let applied = self.ingest(chunk.join(&b'\n'), "the upstream's network records").await?;
            self.report.summary.add(&applied);
        }
        Ok(())
    }

    /// A page of `side`'s export state, hosting records after `topology_after`.
    async fn state(&self, side: Side, topology_after: Option<&HostingKey>) -> Result<State, FollowError> {
        let body = to_vec(&serde_json::json!({ "topology_after": topology_after }))?;
        self.call(side, "/v0/admin/export/state", body).await
    }

    /// Applies `batch` here; what it did.
    async fn ingest(&self, batch: Vec<u8>, what: &str) -> Result<Summary, FollowError> {
        let request = request("/v0/admin/ingest", batch, "application/x-ndjson");
        let response = self.local.send(request).await.map_err(|e| FollowError(format!("this node: {e}")))?;
        if response.status != 200 {
            return Err(FollowError(format!(
                "this node refused {what} ({}): {}; nothing of it was applied",
                response.status,
                error_text(&response)
            )));
        }
        serde_json::from_slice(&response.body)
            .map_err(|e| FollowError(format!("this node's ingest answered an unreadable summary: {e}")))
    }

    /// POSTs `body` (JSON) to `side`'s `path` and reads a 200's body as `T`.
    async fn call<T: DeserializeOwned>(&self, side: Side, path: &str, body: Vec<u8>) -> Result<T, FollowError> {
        let response = self.post(side, path, body).await?;
        read(side, path, &response)
    }

    /// POSTs `body` (JSON) to `side`'s `path`; an error when no answer came.
    async fn post(&self, side: Side, path: &str, body: Vec<u8>) -> Result<Response, FollowError> {
        let request = request(path, body, "application/json");
        match side {
            Side::Upstream => self.upstream.send(request).await,
            Side::Local => self.local.send(request).await,
        }
        .map_err(|e| FollowError(format!("{side}: POST {path}: {e}")))
    }
}

/// `side`'s answer to `POST path`, a 200's body read as `T`.
fn read<T: DeserializeOwned>(side: Side, path: &str, response: &Response) -> Result<T, FollowError> {
    if response.status != 200 {
        let hint = match (side, response.status) {
            (Side::Upstream, 401 | 403) if path.starts_with("/v0/admin/") => {
                "; a follower needs the upstream's admin token for its export endpoints"
            }
            _ => "",
        };
        return Err(FollowError(format!(
            "{side} answered POST {path} with {}: {}{hint}",
            response.status,
            error_text(response)
        )));
    }
    serde_json::from_slice(&response.body)
        .map_err(|e| FollowError(format!("{side} answered POST {path} with a malformed body: {e}")))
}

/// The parts of `POST /v0/backfilling/migration-info`'s answer the follower reads.
#[derive(serde::Deserialize)]
struct MigrationInfo {
    /// The migration before it that holds updates.
    #[serde(default)]
    previous_migration_id: Option<i64>,
    /// The record times it holds, by synchronizer.
    record_time_range: Vec<SynchronizerRange>,
}

/// The earliest and latest record time of a migration's updates on one synchronizer.
#[derive(serde::Deserialize)]
struct SynchronizerRange {
    synchronizer_id: String,
    min: String,
    max: String,
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

/// The hosting records of one side, fetched a page at a time.
struct Hostings {
    side: Side,
    buffer: VecDeque<Hosting>,
    next: Option<HostingKey>,
}

impl Hostings {
    fn new(side: Side, first: State) -> Self {
        Hostings { side, buffer: first.topology.into(), next: first.topology_next }
    }

    /// The next record, fetching the next page when this one is used up.
    async fn peek<U: Link, L: Link>(&mut self, follower: &Follower<'_, U, L>) -> Result<Option<&Hosting>, FollowError> {
        if self.buffer.is_empty()
            && let Some(after) = self.next.take()
        {
            let page = follower.state(self.side, Some(&after)).await?;
            self.buffer = page.topology.into();
            self.next = page.topology_next;
        }
        Ok(self.buffer.front())
    }
}

/// The contracts that `update` archives: those of its consuming exercised events.
fn archived_contracts(update: &Update) -> impl Iterator<Item = &str> {
    update.as_transaction().into_iter().flat_map(|t| t.events_by_id.values()).filter_map(|event| match event {
        Event::Exercised(exercised) if exercised.consuming => Some(exercised.contract_id.as_str()),
        _ => None,
    })
}

/// `{"<kind>": record}`.
fn record_line(kind: &str, record: &impl Serialize) -> Result<Vec<u8>, FollowError> {
    to_vec(&BTreeMap::from([(kind, record)]))
}

fn request(path: &str, body: Vec<u8>, content_type: &str) -> Request {
    let mut request = Request::new(Method::Post, path);
    request.headers.push(("content-type".into(), content_type.into()));
    request.body = Body::Complete(body);
    request
}

/// `value` as JSON, for a request body or an ingest line; one that does not serialize
/// stops the follower rather than send an empty body.
fn to_vec(value: &impl Serialize) -> Result<Vec<u8>, FollowError> {
    crate::json::write::to_vec(value).map_err(|e| FollowError(format!("writing a request to send: {e}")))
}

/// A response's `error` field, or the start of its body.
fn error_text(response: &Response) -> String {
    #[derive(serde::Deserialize)]
    struct Refusal {
        error: String,
    }
    match serde_json::from_slice::<Refusal>(&response.body) {
        Ok(refusal) => refusal.error,
        Err(_) => {
            let text = String::from_utf8_lossy(&response.body[..response.body.len().min(200)]).into_owned();
            if text.is_empty() { "(no body)".into() } else { text }
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use serde_json::{Value, json};

    use super::*;
    use crate::config::Config;
    use crate::env::Env;
    use crate::exec::block_on;
    use crate::service::handle;
    use crate::store::MemoryStore;
    use crate::time::Timestamp;

    const TOKEN: &str = "admin-token";

    /// A node over a memory store, reached through its handler with the admin token.
    struct Node {
        store: MemoryStore,
        config: Config,
    }

    impl Node {
        fn new() -> Self {
            Node { store: MemoryStore::new(), config: Config { admin_token: Some(TOKEN.into()), ..Config::default() } }
        }

        fn answer(&self, mut request: Request) -> Response {
            request.headers.push(("authorization".into(), format!("Bearer {TOKEN}")));
            let env = Env { now: Timestamp::UNIX_EPOCH, entropy: [7; 32], config: &self.config };
            block_on(handle(&request, &env, &self.store))
        }

        fn call(&self, method: Method, target: &str, body: &str) -> (u16, String) {
            let mut request = Request::new(method, target);
            request.body = Body::Complete(body.as_bytes().to_vec());
            let response = self.answer(request);
            (response.status, String::from_utf8(response.body).expect("a UTF-8 body"))
        }

        fn ingest(&self, records: &[Value]) {
            let batch: Vec<String> = records.iter().map(Value::to_string).collect();
            let (status, body) = self.call(Method::Post, "/v0/admin/ingest", &batch.join("\n"));
            assert_eq!(status, 200, "{body}");
        }
    }

    impl Link for Node {
        async fn send(&self, request: Request) -> Result<Response, String> {
            Ok(self.answer(request))
        }
    }

    fn created(update_id: &str, n: u32, contract_id: &str, blob: Option<&str>) -> (String, Value) {
        let event_id = format!("{update_id}:{n}");
        let mut event = json!({
            "event_type": "created_event",
            "event_id": event_id,
            "contract_id": contract_id,
            "template_id": "pkg0:Platform.Coin:Coin",
            "package_name": "platform",
            "create_arguments": {"record": {"fields": [{"label": "owner", "value": {"party": "alice::1220"}}]}},
            "created_at": "2024-01-01T00:00:00.000000Z",
            "signatories": ["dso::1220"],
            "observers": []
        });
        if let Some(blob) = blob {
            event["created_event_blob"] = json!(blob);
        }
        (event_id, event)
    }

    fn archived(update_id: &str, n: u32, contract_id: &str) -> (String, Value) {
        let event_id = format!("{update_id}:{n}");
        let event = json!({
            "event_type": "exercised_event",
            "event_id": event_id,
            "contract_id": contract_id,
            "template_id": "pkg0:Platform.Coin:Coin",
            "package_name": "platform",
            "choice": "Archive",
            "choice_argument": {"record": {}},
            "child_event_ids": [],
            "exercise_result": {"unit": {}},
            "consuming": true,
            "acting_parties": ["alice::1220"]
        });
        (event_id, event)
    }

    fn update(id: &str, migration_id: i64, record_time: &str, events: Vec<(String, Value)>) -> Value {
        let roots: Vec<&String> = events.iter().map(|(id, _)| id).collect();
        let by_id: serde_json::Map<String, Value> = events.iter().cloned().collect();
        json!({"update": {
            "update_id": id,
            "migration_id": migration_id,
            "workflow_id": "",
            "record_time": record_time,
            "synchronizer_id": "global-domain::1220aa",
            "effective_at": record_time,
            "root_event_ids": roots,
            "events_by_id": by_id,
        }})
    }

    const IMPORT_TIME: &str = "0001-01-01T00:00:00.000000Z";

    /// A history of two migrations: blobs on active, archived and imported contracts, a
    /// group of two updates at one record time, import updates, and every network record.
    fn history() -> Vec<Value> {
        vec![
            update(
                "u-a",
                0,
                "2024-01-01T00:00:01.000000Z",
                vec![created("u-a", 0, "c-a", Some("AAEC")), created("u-a", 1, "c-b", Some("AAED"))],
            ),
            update("u-b", 0, "2024-01-01T00:00:02.000000Z", vec![archived("u-b", 0, "c-a")]),
            update("u-c", 0, "2024-01-01T00:00:02.000000Z", vec![created("u-c", 0, "c-c", None)]),
            update("00i1", 1, IMPORT_TIME, vec![created("00i1", 0, "00i1", Some("AAEF"))]),
            update("00i2", 1, IMPORT_TIME, vec![created("00i2", 0, "00i2", Some("AAEA"))]),
            update("u-d", 1, "2024-01-02T00:00:00.000000Z", vec![created("u-d", 0, "c-d", Some("AQID"))]),
            json!({"topology": {"synchronizer_id": "s1", "party_id": "p1", "participant_ids": ["n1"]}}),
            json!({"topology": {"synchronizer_id": "s1", "party_id": "p2", "participant_ids": ["n1", "n2"]}}),
            json!({"backfill": {"migration_id": 0, "complete": true, "import_updates_complete": true}}),
            json!({"roll_forward_lsu": {
                "upgradeTime": "2025-01-01T00:00:00Z",
                "currentPhysicalSynchronizerId": "global-domain::1220aa::1",
                "successorPhysicalSynchronizerId": "global-domain::1220aa::2"
            }}),
        ]
    }

    /// Requests whose answers must be the same on a follower as on its upstream.
    fn reads() -> Vec<(Method, String, String)> {
        let mut reads = Vec::new();
        for id in ["u-a", "u-b", "u-c", "00i1", "00i2", "u-d"] {
            for version in ["v1", "v2"] {
                for encoding in ["compact_json", "protobuf_json"] {
                    let target = format!("/{version}/updates/{id}?daml_value_encoding={encoding}");
                    reads.push((Method::Get, target, String::new()));
                }
            }
        }
        for version in ["v1", "v2"] {
            for encoding in ["compact_json", "protobuf_json"] {
                let body = format!(r#"{{"page_size": 1000, "daml_value_encoding": "{encoding}"}}"#);
                reads.push((Method::Post, format!("/{version}/updates"), body));
            }
        }
        for migration_id in [0, 1] {
            let body = format!(r#"{{"migration_id": {migration_id}, "after_update_id": "", "limit": 1000}}"#);
            reads.push((Method::Post, "/v0/backfilling/import-updates".into(), body));
            reads.push((
                Method::Post,
                "/v0/backfilling/migration-info".into(),
                format!(r#"{{"migration_id": {migration_id}}}"#),
            ));
        }
        let contracts = r#"{"contract_ids": ["c-a", "c-b", "c-c", "c-d", "00i1", "00i2"]}"#;
        reads.push((Method::Post, "/v0/admin/export/blobs".into(), contracts.into()));
        reads.push((Method::Post, "/v0/admin/export/state".into(), String::new()));
        for target in [
            "/v0/backfilling/status",
            "/v0/roll-forward-lsu",
            "/v1/domains/s1/parties/p1/participant-id",
            "/v1/domains/s1/parties/p3/participant-id",
        ] {
            reads.push((Method::Get, target.into(), String::new()));
        }
        reads
    }

    fn assert_same(upstream: &Node, follower: &Node) {
        for (method, target, body) in reads() {
            let (theirs, ours) =
                (upstream.call(method.clone(), &target, &body), follower.call(method.clone(), &target, &body));
            assert_eq!(theirs, ours, "{} {target} {body}", method.as_str());
        }
    }

    fn upstream() -> Node {
        let node = Node::new();
        node.ingest(&history());
        node
    }

    #[test]
    fn a_follower_answers_every_read_as_its_upstream_does() {
        let (upstream, follower) = (upstream(), Node::new());
        let report = block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
        assert!(report.caught_up);
        assert_eq!(report.summary.applied.update, 6);
        assert_eq!(
            report.position,
            Some(Position { after_migration_id: 1, after_record_time: "2024-01-02T00:00:00.000000Z".into() })
        );
        assert_same(&upstream, &follower);
        // The archived contract's blob is not kept anywhere; the others came across.
        let (_, blobs) =
            follower.call(Method::Post, "/v0/admin/export/blobs", r#"{"contract_ids": ["c-a", "c-b", "00i1"]}"#);
        assert_eq!(
            blobs,
            r#"{"blobs":[{"contract_id":"c-b","created_event_blob":"AAED"},{"contract_id":"00i1","created_event_blob":"AAEF"}]}"#
        );
        // Nothing new upstream: a second call applies nothing.
        let again = block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
        assert_eq!((again.caught_up, again.pages, again.summary.applied.update), (true, 0, 0));
        assert_eq!(again.summary.unchanged, 1, "the last group is read again, and found unchanged");
    }

    /// A link to a node that notes the contract ids asked of its blob export.
    struct Noting<'a> {
        node: &'a Node,
        asked: core::cell::RefCell<Vec<String>>,
    }

    impl Link for Noting<'_> {
        async fn send(&self, request: Request) -> Result<Response, String> {
            if request.path == "/v0/admin/export/blobs"
                && let Body::Complete(body) = &request.body
            {
                let body: Value = serde_json::from_slice(body).expect("a JSON body");
                let ids = body["contract_ids"].as_array().expect("contract ids").iter();
                self.asked.borrow_mut().extend(ids.map(|id| id.as_str().expect("an id").to_owned()));
            }
            Ok(self.node.answer(request))
        }
    }

    #[test]
    fn a_contract_archived_within_its_page_is_not_asked_for_and_one_archived_later_is() {
        let upstream = upstream();
        // One page holds c-a's creation (u-a) and archive (u-b): nothing to ask for it.
        let (noting, follower) = (Noting { node: &upstream, asked: Default::default() }, Node::new());
        block_on(sync(&noting, &follower, &Limits::default())).expect("following");
        assert_eq!(noting.asked.into_inner(), ["c-b", "c-c", "c-d", "00i1", "00i2"]);
        assert_same(&upstream, &follower);
        // Pages of one update: c-a's page does not show its archive, so it is asked for,
        // and the upstream has no blob for it.
        let (noting, follower) = (Noting { node: &upstream, asked: Default::default() }, Node::new());
        let limits = Limits { page_size: 1, ..Limits::default() };
        while !block_on(sync(&noting, &follower, &limits)).expect("following").caught_up {}
        assert!(noting.asked.borrow().contains(&"c-a".to_owned()), "{:?}", noting.asked);
        assert_same(&upstream, &follower);
    }

    #[test]
    fn a_follower_of_a_follower_and_one_page_at_a_time_end_the_same() {
        let (upstream, first, second) = (upstream(), Node::new(), Node::new());
        block_on(sync(&upstream, &first, &Limits::default())).expect("following");
        let limits = Limits { page_size: 1, max_pages: 1, ..Limits::default() };
        let mut calls = 0;
        while !block_on(sync(&first, &second, &limits)).expect("following").caught_up {
            calls += 1;
            assert!(calls < 20, "never caught up");
        }
        // Pages of one: u-a, the group u-b and u-c whole, the imports one by one, u-d.
        assert_eq!(calls, 5);
        assert_same(&upstream, &second);
    }

    #[test]
    fn pipelined_pages_in_any_budget_end_the_same() {
        let upstream = upstream();
        for (page_size, max_pages) in [(1, 1), (1, 2), (1, 3), (2, 5), (500, u32::MAX)] {
            let follower = Node::new();
            let limits = Limits { page_size, max_pages, pipelined: true };
            let mut calls = 0;
            while !block_on(sync(&upstream, &follower, &limits)).expect("following").caught_up {
                calls += 1;
                assert!(calls < 20, "never caught up with pages of {page_size}, {max_pages} a call");
            }
            assert_same(&upstream, &follower);
        }
    }

    #[test]
    fn a_blob_lost_upstream_since_is_no_conflict_when_the_last_group_is_read_again() {
        let history = history();
        let (upstream, follower) = (Node::new(), Node::new());
        // The follower takes u-a with the blob of c-a; then the upstream archives c-a,
        // and no longer has that blob when the follower reads u-a's group again.
        upstream.ingest(&history[..1]);
        block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
        upstream.ingest(&history[1..]);
        let report = block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
        assert_eq!(report.summary.unchanged, 1, "u-a read again");
        assert_same(&upstream, &follower);
    }

    /// `update` on `synchronizer` instead.
    fn on(synchronizer: &str, mut update: Value) -> Value {
        update["update"]["synchronizer_id"] = json!(synchronizer);
        update
    }

    /// Updates of migrations 0 and 1, on the usual synchronizer and on another, from
    /// before everything of [`history`] in their migration, with a group of three at
    /// one record time.
    fn earlier() -> Vec<Value> {
        vec![
            update("e-1", 0, "2023-06-01T00:00:00.000000Z", vec![created("e-1", 0, "c-e1", Some("AAEB"))]),
            update("e-2", 0, "2023-07-01T00:00:00.000000Z", vec![created("e-2", 0, "c-e2", None)]),
            update("e-3", 0, "2023-07-01T00:00:00.000000Z", vec![created("e-3", 0, "c-e3", None)]),
            update("e-4", 0, "2023-07-01T00:00:00.000000Z", vec![archived("e-4", 0, "c-e1")]),
            on("other::1220bb", update("e-5", 0, "2023-08-01T00:00:00.000000Z", vec![created("e-5", 0, "c-e5", None)])),
            update("e-6", 1, "2024-01-01T12:00:00.000000Z", vec![created("e-6", 0, "c-e6", Some("AAEC"))]),
        ]
    }

    fn stream_ids(node: &Node) -> Vec<String> {
        let (_, page) = node.call(Method::Post, "/v2/updates", r#"{"page_size": 1000}"#);
        let page: Value = serde_json::from_str(&page).expect("a page");
        page["transactions"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["update_id"].as_str().unwrap().into())
            .collect()
    }

    #[test]
    fn history_the_upstream_backfills_behind_the_follower_comes_across() {
        for limits in [
            Limits::default(),
            Limits { page_size: 1, max_pages: 1, ..Limits::default() },
            Limits { page_size: 2, max_pages: 3, pipelined: true },
        ] {
            let (upstream, follower) = (upstream(), Node::new());
            block_on(sync(&upstream, &follower, &limits)).expect("following");
            while !block_on(sync(&upstream, &follower, &limits)).expect("following").caught_up {}
            upstream.ingest(&earlier());
            let mut calls = 0;
            loop {
                let report = block_on(sync(&upstream, &follower, &limits)).expect("following");
                if report.caught_up {
                    break;
                }
                calls += 1;
                assert!(calls < 30, "never caught up with {limits:?}");
            }
            assert_same(&upstream, &follower);
            let ids = stream_ids(&follower);
            assert_eq!(ids, ["e-1", "e-2", "e-3", "e-4", "e-5", "u-a", "u-b", "u-c", "e-6", "u-d"], "{limits:?}");
            for id in ["e-1", "e-4", "e-5", "e-6"] {
                let target = format!("/v2/updates/{id}");
                assert_eq!(upstream.call(Method::Get, &target, ""), follower.call(Method::Get, &target, ""));
            }
        }
    }

    /// A link to a node that ingests `late` into it when first asked for migration info,
    /// as if they arrived while the follower compared its history with the upstream's.
    struct Growing<'a> {
        node: &'a Node,
        late: core::cell::RefCell<Vec<Value>>,
    }

    impl Link for Growing<'_> {
        async fn send(&self, request: Request) -> Result<Response, String> {
            if request.path == "/v0/backfilling/migration-info" {
                let late = core::mem::take(&mut *self.late.borrow_mut());
                if !late.is_empty() {
                    self.node.ingest(&late);
                }
            }
            Ok(self.node.answer(request))
        }
    }

    #[test]
    fn updates_the_upstream_adds_at_its_end_meanwhile_are_left_to_the_stream() {
        let (upstream, follower) = (upstream(), Node::new());
        // The second lands on a synchronizer the follower holds nothing of: looking back
        // from its latest update would take it, and the stream would then start after
        // it, past the first.
        let late = vec![
            update("l-1", 1, "2024-02-01T00:00:00.000000Z", vec![created("l-1", 0, "c-l1", None)]),
            on("other::1220bb", update("l-2", 1, "2024-02-02T00:00:00.000000Z", vec![created("l-2", 0, "c-l2", None)])),
        ];
        let growing = Growing { node: &upstream, late: late.into() };
        block_on(sync(&growing, &follower, &Limits::default())).expect("following");
        assert!(!stream_ids(&follower).contains(&"l-2".to_owned()), "taken from behind: {:?}", stream_ids(&follower));
        block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
        assert_same(&upstream, &follower);
        assert_eq!(stream_ids(&follower).last().map(String::as_str), Some("l-2"));
        assert!(stream_ids(&follower).contains(&"l-1".to_owned()));
    }

    #[test]
    fn hosting_changes_and_removals_come_across() {
        let (upstream, follower) = (upstream(), Node::new());
        block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
        upstream.ingest(&[
            json!({"topology": {"synchronizer_id": "s1", "party_id": "p1", "participant_ids": []}}),
            json!({"topology": {"synchronizer_id": "s1", "party_id": "p2", "participant_ids": ["n2"]}}),
            json!({"topology": {"synchronizer_id": "s1", "party_id": "p3", "participant_ids": ["n3"]}}),
            json!({"roll_forward_lsu": null}),
        ]);
        let report = block_on(sync(&upstream, &follower, &Limits::default())).expect("following");
        assert_eq!((report.summary.applied.topology, report.summary.applied.roll_forward_lsu), (3, 1));
        assert_same(&upstream, &follower);
    }

    #[test]
    fn an_update_that_conflicts_with_one_held_stops_the_follower_with_nothing_of_its_page_applied() {
        let (upstream, follower) = (upstream(), Node::new());
        let mut other = update("u-c", 0, "2024-01-01T00:00:02.000000Z", vec![created("u-c", 0, "c-c", None)]);
        other["update"]["workflow_id"] = json!("elsewhere");
        follower.ingest(&[other]);
        let error = block_on(sync(&upstream, &follower, &Limits::default())).expect_err("a conflict");
        let message = error.to_string();
        assert!(
            message.contains("(409)") && message.contains("u-c") && message.contains("nothing of it was applied"),
            "{message}"
        );
        // u-b came in the same page, in the group of the update held.
        assert_eq!(follower.call(Method::Get, "/v2/updates/u-b", "").0, 404);
    }

    /// An upstream that answers `POST /v2/updates` with `answer` and forwards the rest.
    struct Faulty<'a> {
        upstream: &'a Node,
        answer: Result<(u16, &'static str), &'static str>,
    }

    impl Link for Faulty<'_> {
        async fn send(&self, request: Request) -> Result<Response, String> {
            if request.path != "/v2/updates" {
                return self.upstream.send(request).await;
            }
            let (status, body) = self.answer.map_err(String::from)?;
            Ok(Response::json(status, body.as_bytes().to_vec()))
        }
    }

    #[test]
    fn upstream_failures_stop_the_follower_with_a_message_naming_them() {
        let upstream = upstream();
        type Answer = Result<(u16, &'static str), &'static str>;
        let cases: [(Answer, &str); 4] = [
            (Err("connection refused"), "the upstream: POST /v2/updates: connection refused"),
            (
                Ok((503, r#"{"error": "the store cannot be read"}"#)),
                "the upstream answered POST /v2/updates with 503: the store cannot be read",
            ),
            (Ok((200, r#"{"items": []}"#)), "the upstream answered POST /v2/updates with a malformed body"),
            (
                Ok((200, r#"{"transactions": [{"update_id": "x"}]}"#)),
                "the upstream's POST /v2/updates answered a malformed page: item 0",
            ),
        ];
        for (answer, expected) in cases {
            let follower = Node::new();
            let error = block_on(sync(&Faulty { upstream: &upstream, answer }, &follower, &Limits::default()))
                .expect_err("a failure");
            assert!(error.to_string().starts_with(expected), "{error}");
            assert_eq!(follower.call(Method::Post, "/v2/updates", r#"{"page_size": 10}"#).1, r#"{"transactions":[]}"#);
        }
    }

    #[test]
    fn an_upstream_that_refuses_the_export_names_the_token() {
        // The follower sends a token the upstream does not take.
        let stranger =
            Node { config: Config { admin_token: Some("another".into()), ..Config::default() }, ..upstream() };
        let error = block_on(sync(&stranger, &Node::new(), &Limits::default())).expect_err("a refusal");
        assert!(error.to_string().contains("401") && error.to_string().contains("admin token"), "{error}");
    }
}
