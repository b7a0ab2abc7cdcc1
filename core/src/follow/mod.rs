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
//! upstream's export endpoints ([`crate::api::export`], admin token): the created-event blobs
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
//! position is in (a follower that holds nothing of the stream yet starts where
//! [`Limits::start`] says, [`Start`]); then stream pages, each cut at a change of migration id, the import
//! updates of a migration applied before its first stream page; once the stream is
//! caught up, import updates that arrived late; then, going back from the position, the
//! history the upstream holds from before the follower's first update of each migration
//! and synchronizer (`POST /v0/backfilling/updates-before`, newest page first), as a
//! network node backfills; then backfill, roll-forward and hosting records that differ
//! from this node's (a hosting the upstream no longer has is removed). So a follower
//! applies a history in the order the upstream's ingest did, and once caught up answers
//! every read but the wallet's as the upstream does. In public mode a call that caught
//! up then asks for the blobs of the live contracts held without one (`blobs`), and
//! every call ends, whatever its page budget left, by learning the party hostings that
//! are due (`hosting`).
//!
//! **Public mode.** A network's own Scan nodes serve no export endpoints, and their
//! public API differs from this node's: `protobuf_json` values come without record
//! labels, the stream carries no `created_event_blob`, and there is no admin token to
//! give. With no upstream token ([`Limits::public`]), or when the upstreams answer the
//! export state with a 404, the follower uses public endpoints only: each page of the
//! stream is asked in both encodings (same `after`, same page size) and the labels of
//! `compact_json` are written into the typed `protobuf_json` values (`labels`, which
//! names the network's source it follows); the two pages must hold the same updates,
//! else the page is refused. Import updates and updates-before answer `protobuf_json`
//! only, so their labels come from `GET /v2/updates/{id}` in `compact_json`, one
//! request per update. A value the upstream can render in `compact_json` only as its
//! fallback `{"error": .., "value": ..}` is stored as the upstream sent it, its typed
//! rendering without labels and its fallback, and served back so
//! ([`crate::model::value::Undecoded`]); a page with a follower's such value, which it
//! renders without labels in `protobuf_json`, is labelled the same way by a follower
//! with a token. (One whose typed rendering holds no record field, a scalar result
//! say, shows nothing of it in `protobuf_json`: a follower with a token takes it as a
//! typed value, and renders its `compact_json` as such.) Blobs, the migrations and the backfill and roll-forward records come
//! from public endpoints (`public`), blobs also once caught up (`blobs`); party hosting
//! is learned from the upstreams' `participant-id`, party by party (`hosting`).
//!
//! **What differs from a direct ingest in public mode.** Every value, event and update
//! field is the same but these, which the public API does not carry:
//! - `created_event_blob` of every contract the upstream does not disclose through its
//!   contract endpoints or registry contexts while the contract is live and the
//!   follower asks (`public` at page time, `blobs` once caught up): an archived
//!   contract that no read shows, or a live one until its blob comes (up to
//!   [`Limits::blob_lifetime_seconds`] plus the time between two calls after an
//!   endpoint starts disclosing it, while the requests due fit
//!   [`Limits::blob_lookups`]), or for good when no endpoint discloses it, as the
//!   export of blobs shows; a read that needs a missing blob is a 503 naming the
//!   contract;
//! - a version-1 transaction's `offset` and a reassignment's `offset` are as this node
//!   renders them (it stores none; the network gives offsets only in version 1);
//! - party hosting (`participant-id`) is what the follower learned, up to
//!   [`Limits::hosting_lifetime_seconds`] plus the time between two calls old, for
//!   the parties it has seen (`hosting`); others answer 404;
//! - an undecoded value's labels, which no node has.
//!
//! **Several upstreams.** [`sync_all`] takes several upstream links; every request goes
//! to each and what [`Limits::agree`] of them answered alike is applied (`quorum`):
//! a stream page item by item, a migration info, a contract endpoint's answer (so a
//! blob) byte for byte. Upstreams that answered otherwise are reported in
//! [`Report::disagreements`]; with no quorum nothing of the page or answer is applied
//! and the call ends with an error naming the upstreams, so the host logs it and retries.
//!
//! **Lag.** [`Report::upstream_record_time`] is the record time of the last update of
//! the last stream page taken: the upstreams' end when the call caught up. A host's lag
//! is it minus the position's record time (caught up: 0), or now minus it for an
//! upstream that is itself behind.
//!
//! **Modules.** This one holds that order (`Follower::follow`) and the requests to
//! either side; `start` where a follower that holds nothing starts; `pages` fetches and
//! checks stream pages and makes them ingest batches, with the blobs the public stream
//! leaves out; `backfill` takes import updates and the history from before what this
//! node holds; `network` copies the network records; `public` holds what public mode
//! takes from public endpoints, `labels` the labels, `blobs` the blobs it asks for once
//! caught up, `hosting` the hostings it learns, and `quorum` the agreement of several
//! upstreams.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::string::ToString;
use alloc::vec::Vec;
use core::cell::RefCell;
use core::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::api::export::{HostingKey, Position, State};
use crate::api::http::{Body, Method, Request, Response};
use crate::ingest::Summary;
use crate::model::config::Names;
use crate::model::time::Timestamp;
use crate::storage::exec::join;

mod backfill;
mod blobs;
mod hosting;
mod labels;
mod network;
mod pages;
mod public;
mod quorum;
mod start;
#[cfg(test)]
mod tests;

/// The variable naming a follower's upstream node, where the host reads one from its
/// configuration (the worker; the native command takes `--upstream`).
pub const UPSTREAM_URL: &str = "LEDGER_NODE_UPSTREAM_URL";
/// The variable naming several upstream nodes, comma-separated (the worker; the native
/// command takes `--upstream` repeated). It takes precedence over [`UPSTREAM_URL`].
pub const UPSTREAM_URLS: &str = "LEDGER_NODE_UPSTREAM_URLS";
/// The variable holding the upstream's admin token, which its export endpoints need.
pub const UPSTREAM_TOKEN: &str = "LEDGER_NODE_UPSTREAM_TOKEN";
/// The variable overriding how many upstreams must agree ([`Limits::agree`]).
pub const UPSTREAM_AGREE: &str = "LEDGER_NODE_UPSTREAM_AGREE";
/// The variable choosing where a follower that holds nothing yet starts ([`Start`]:
/// `current` or `genesis`, the default); the native commands take `--start`.
pub const UPSTREAM_START: &str = "LEDGER_NODE_UPSTREAM_START";
/// The variable setting how long, in seconds, a hosting learned from the upstreams is
/// kept before it is asked again ([`Limits::hosting_lifetime_seconds`]); the native
/// commands take `--hosting-lifetime`.
pub const UPSTREAM_HOSTING_LIFETIME: &str = "LEDGER_NODE_UPSTREAM_HOSTING_LIFETIME";

/// How long a learned hosting is kept by default, in seconds.
pub const DEFAULT_HOSTING_LIFETIME_SECONDS: u64 = 300;
/// Most hosting lookups one call of [`sync`] makes by default.
pub const DEFAULT_HOSTING_LOOKUPS: u32 = 100;
/// How long, by default, a contract whose blob no upstream disclosed when asked waits
/// before it is asked again, in seconds.
pub const DEFAULT_BLOB_LIFETIME_SECONDS: u64 = 300;
/// Most requests for blobs one call of [`sync`] makes by default (each asked of every
/// upstream; one request answers for every contract it renders).
pub const DEFAULT_BLOB_LOOKUPS: u32 = 100;

pub use quorum::{Disagreement, default_agree};
pub use start::Start;

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Updates asked for in one page (1 to [`crate::api::history::MAX_PAGE`]).
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
    /// How many upstreams must send the same content for it to be applied; `None` is
    /// f + 1 of n, f = ⌊(n − 1)/3⌋ ([`default_agree`]). At least 1, at most n.
    pub agree: Option<u32>,
    /// Whether to use the upstreams' public endpoints only (no admin token): set by a
    /// host that has no upstream token. An upstream that serves no export endpoints
    /// (404) is followed this way too.
    pub public: bool,
    /// The upstream network's names, which spell the paths of its coin rules.
    pub names: Names,
    /// Where a follower that holds no update of the stream yet starts; one that holds
    /// one goes on from its position whatever this says.
    pub start: Start,
    /// Now: when the hostings learned in this call are learned, and what decides which
    /// learned ones are old enough to ask again (public mode).
    pub now: Timestamp,
    /// How long a learned hosting is kept before it is asked again, in seconds.
    pub hosting_lifetime_seconds: u64,
    /// Most hosting lookups (each asked of every upstream) one call makes.
    pub hosting_lookups: u32,
    /// How long a contract whose blob no upstream disclosed when asked waits before it
    /// is asked again, in seconds (public mode, `blobs`).
    pub blob_lifetime_seconds: u64,
    /// Most requests for blobs (each asked of every upstream) one call makes, once
    /// caught up (public mode).
    pub blob_lookups: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            page_size: 500,
            max_pages: u32::MAX,
            pipelined: false,
            agree: None,
            public: false,
            names: crate::model::config::Config::default().names,
            start: Start::Genesis,
            now: Timestamp::UNIX_EPOCH,
            hosting_lifetime_seconds: DEFAULT_HOSTING_LIFETIME_SECONDS,
            hosting_lookups: DEFAULT_HOSTING_LOOKUPS,
            blob_lifetime_seconds: DEFAULT_BLOB_LIFETIME_SECONDS,
            blob_lookups: DEFAULT_BLOB_LOOKUPS,
        }
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
    /// The newest record time the upstreams' stream held when last asked (the last
    /// update of the last stream page taken): the host's lag is now minus this.
    pub upstream_record_time: Option<String>,
    /// Upstreams that answered otherwise than the answer applied, for the host to log.
    pub disagreements: Vec<Disagreement>,
    /// Whether the call followed the public endpoints only.
    pub public: bool,
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
    sync_all(core::slice::from_ref(upstream), local, limits).await
}

/// Brings this node (`local`) up to date with `upstreams`, taking what
/// [`Limits::agree`] of them send alike; see the module docs. A disagreement stops the
/// call only when no answer has enough upstreams behind it; the error then lists the
/// disagreements noted before it.
pub async fn sync_all<U: Link, L: Link>(upstreams: &[U], local: &L, limits: &Limits) -> Result<Report, FollowError> {
    let page_size = limits.page_size.clamp(1, crate::api::history::MAX_PAGE);
    let n = upstreams.len();
    if n == 0 {
        return Err(FollowError("following needs at least one upstream".into()));
    }
    let agree = match limits.agree {
        None => default_agree(n),
        Some(agree) if (1..=n).contains(&(agree as usize)) => agree as usize,
        Some(agree) => {
            return Err(FollowError(format!("agree must be between 1 and the {n} upstreams given, not {agree}")));
        }
    };
    let mut follower = Follower {
        upstreams,
        local,
        limits: Limits { page_size, ..limits.clone() },
        agree,
        public: limits.public,
        report: Report::default(),
        imported: BTreeMap::new(),
        noted: RefCell::new(Vec::new()),
        newest: RefCell::new(None),
        blobs: RefCell::new(BTreeMap::new()),
        hosting: RefCell::new(hosting::HostingBook::default()),
    };
    let outcome = follower.run().await;
    let noted = follower.noted.take();
    match outcome {
        Ok(()) => {
            follower.report.disagreements = noted;
            follower.report.upstream_record_time = follower.newest.take();
            follower.report.public = follower.public;
            Ok(follower.report)
        }
        Err(FollowError(message)) if noted.is_empty() => Err(FollowError(message)),
        Err(FollowError(message)) => {
            let noted: Vec<String> = noted.iter().map(ToString::to_string).collect();
            Err(FollowError(format!("{message}; disagreements before it: {}", noted.join("; "))))
        }
    }
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

/// One call of [`sync`]: both links, the budget, and what the call did so far.
struct Follower<'a, U, L> {
    upstreams: &'a [U],
    local: &'a L,
    limits: Limits,
    /// How many upstreams must send the same content.
    agree: usize,
    /// Whether the upstreams are followed through their public endpoints only.
    public: bool,
    report: Report,
    /// The largest import update id held here, by migration.
    imported: BTreeMap<i64, String>,
    /// Disagreements noted so far.
    noted: RefCell<Vec<Disagreement>>,
    /// The record time of the last update of the last stream page taken.
    newest: RefCell<Option<String>>,
    /// Public mode: the blobs the upstreams disclosed, by contract id.
    blobs: RefCell<BTreeMap<String, crate::model::update::Blob>>,
    /// Public mode: the hostings this node holds, and the parties it has seen.
    hosting: RefCell<hosting::HostingBook>,
}

impl<U: Link, L: Link> Follower<'_, U, L> {
    /// Follows (see [`Follower::follow`]), then, in public mode, asks for the blobs
    /// that are due once caught up, and learns the hostings that are due, whatever the
    /// page budget left.
    async fn run(&mut self) -> Result<(), FollowError> {
        self.follow().await?;
        if self.public && self.report.caught_up {
            self.seek_blobs().await?;
        }
        if self.public {
            self.learn_hosting().await?;
        }
        Ok(())
    }

    /// The updates and network records, in the order of the module docs, within the
    /// page budget.
    async fn follow(&mut self) -> Result<(), FollowError> {
        let upstream_state = match self.public {
            true => None,
            false => self.upstream_state().await?,
        };
        self.public = upstream_state.is_none();
        let local_state = self.state(Side::Local, None).await?;
        if self.public {
            self.load_hosting(&local_state).await?;
        }
        self.report.position = local_state.stream_position.clone();
        self.imported = local_state.import_updates.iter().map(|i| (i.migration_id, i.last_update_id.clone())).collect();
        // The import updates by migration, up to the last id when the upstream says it
        // (export), else until the upstream's list ends (public).
        let upstream_imports: Vec<(i64, Option<String>)> = match &upstream_state {
            Some(state) => {
                state.import_updates.iter().map(|i| (i.migration_id, Some(i.last_update_id.clone()))).collect()
            }
            None => self.public_migrations().await?.into_iter().map(|m| (m, None)).collect(),
        };

        let mut current = self.report.position.as_ref().map(|p| p.after_migration_id);
        for (migration_id, last) in &upstream_imports {
            if current.is_some_and(|c| *migration_id <= c) && !self.imports(*migration_id, last.as_deref()).await? {
                return Ok(());
            }
        }
        // The first page starts at the last group held, not after it: ingest finds it
        // unchanged, or refuses an update of it that differs from the one held, and
        // takes updates the upstream added to it since. While pages are applied here,
        // the next ones are fetched and prepared; pipelined, two are applied at once.
        // A follower that holds nothing of the stream yet starts where `start` says.
        let depth = if self.limits.pipelined { 2 } else { 1 };
        let mut after = self.report.position.as_ref().map(Position::at_group);
        if after.is_none()
            && self.limits.start == Start::Current
            && let Some((migration_id, from)) = self.current_start().await?
        {
            let last = upstream_imports.iter().find(|(m, _)| *m == migration_id).and_then(|(_, last)| last.clone());
            if !self.imports(migration_id, last.as_deref()).await? {
                return Ok(());
            }
            current = Some(migration_id);
            after = Some(from);
        }
        let mut ready = self.prepare_pages(after, depth).await?;
        while let Some(migration_id) = ready.first().map(|page| page.migration_id) {
            if self.report.pages >= self.limits.max_pages {
                return Ok(());
            }
            if current != Some(migration_id) {
                if let Some((_, last)) = upstream_imports.iter().find(|(m, _)| *m == migration_id)
                    && (!self.imports(migration_id, last.as_deref()).await?
                        || self.report.pages >= self.limits.max_pages)
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
            if !self.imports(*migration_id, last.as_deref()).await? {
                return Ok(());
            }
        }
        if !self.earlier_history().await? {
            return Ok(());
        }
        match upstream_state {
            Some(upstream_state) => self.network_records(upstream_state, local_state).await?,
            None => self.public_records().await?,
        }
        self.report.caught_up = true;
        Ok(())
    }

    /// A page of `side`'s export state, hosting records after `topology_after`.
    async fn state(&self, side: Side, topology_after: Option<&HostingKey>) -> Result<State, FollowError> {
        let body = to_vec(&serde_json::json!({ "topology_after": topology_after }))?;
        self.call(side, "/v0/admin/export/state", body).await
    }

    /// The upstreams' export state; `None` when they serve no export endpoints (404),
    /// as the network's own nodes do: then only the public endpoints are followed.
    async fn upstream_state(&self) -> Result<Option<State>, FollowError> {
        const PATH: &str = "/v0/admin/export/state";
        let body = to_vec(&serde_json::json!({ "topology_after": null }))?;
        let response = self.post(Side::Upstream, PATH, body).await?;
        if response.status == 404 {
            return Ok(None);
        }
        read(Side::Upstream, PATH, &response).map(Some)
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
            Side::Upstream => self.agreed(request).await,
            Side::Local => self.local.send(request).await.map_err(|e| FollowError(format!("{side}: POST {path}: {e}"))),
        }
    }

    /// `request`'s answer from every upstream, in their order.
    async fn ask_all(&self, request: &Request) -> Vec<Result<Response, String>> {
        let mut answers = Vec::with_capacity(self.upstreams.len());
        for upstream in self.upstreams {
            answers.push(upstream.send(request.clone()).await);
        }
        answers
    }

    /// The answer to `request` that enough upstreams gave alike ([`quorum`]); a
    /// disagreement is noted. With one upstream, its answer.
    async fn agreed(&self, request: Request) -> Result<Response, FollowError> {
        let what = format!("{} {}", request.method.as_str(), request.path);
        let answers = self.ask_all(&request).await;
        if answers.len() == 1 {
            let answer = answers.into_iter().next().unwrap_or_else(|| Err("no upstream".into()));
            return answer.map_err(|e| FollowError(format!("the upstream: {what}: {e}")));
        }
        let (response, disagreement) = quorum::response(&what, answers, self.agree).map_err(FollowError)?;
        self.noted.borrow_mut().extend(disagreement);
        Ok(response)
    }

    /// GETs the upstreams' `target`: the answer enough of them gave.
    async fn get_upstream(&self, target: &str) -> Result<Response, FollowError> {
        self.agreed(Request::new(Method::Get, target)).await
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
    crate::model::json::write::to_vec(value).map_err(|e| FollowError(format!("writing a request to send: {e}")))
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
