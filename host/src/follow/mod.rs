//! `ledger-node follow`: keeps a store current from an upstream node.
//!
//! The follower itself is the core's ([`ledger_node_core::follow`]); this module gives
//! it its two links and runs it:
//!
//! - [`Upstream`]: the upstream node over HTTP/1.1, one kept-alive connection
//!   (reopened when it closes), each request bounded by [`REQUEST_TIMEOUT`] and each
//!   answer by [`MAX_ANSWER_BYTES`]; the upstream's admin token goes with every request
//!   when one is given (its export endpoints need it);
//! - [`Local`]: this node's component over the store, with an admin token of the
//!   command's own, as `ledger-node ingest` does.
//!
//! With several `--upstream`s, each request goes to every one and what `--agree` of
//! them (f + 1 of n by default) sent alike is applied; a disagreement is logged as a
//! warning. Without `LEDGER_NODE_UPSTREAM_TOKEN` only the upstreams' public endpoints
//! are used, as for a network's own Scan nodes; then the hostings of the parties seen
//! are learned from their `participant-id` and asked again after `--hosting-lifetime`
//! seconds. `--start current` starts a follower that holds nothing yet at the
//! upstreams' current migration (its history before is backfilled afterwards); a
//! follower that holds updates goes on from its position whatever `--start` says.
//! Each round gives the core the time now.
//!
//! [`run`] calls the core's `sync` in rounds of [`PAGES_PER_ROUND`] pages, reporting
//! progress after each, until the follower has caught up (with `--once`) or for ever,
//! polling every `poll` when caught up. An error stops it: the core applied nothing of
//! the page or records at fault, and running the command again resumes from what was
//! applied.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use ledger_node_core::follow::{self, Limits, Link, Report};
use ledger_node_core::ingest::Summary;
use ledger_node_core::{Body, Request, Response};

use crate::host::{self, Instance, Node};

mod upstream;

use crate::ingest::{Turns, serve_in_turn};
pub use ledger_node_core::follow::Start;
pub use upstream::{MAX_ANSWER_BYTES, REQUEST_TIMEOUT, RetryPolicy, Upstream};

/// Updates asked for per page unless told otherwise.
pub const DEFAULT_PAGE_SIZE: u32 = 500;
/// Pages of updates one round applies before progress is reported.
pub const PAGES_PER_ROUND: u32 = 20;

/// This node: its component over the store, called with an admin token of the
/// command's own on the blocking pool, so that the next page is fetched while one is
/// applied. Ingest requests take [`Turns`] in the order they are sent: two pages are
/// prepared at once on two instances, yet applied in order, and none after one that
/// failed (what the core's pipelined follower needs).
///
/// Turns refuse every request after one that failed; a failed ingest therefore starts
/// a fresh turn order for the requests sent after it (those already sent are refused,
/// as they must be), so that `serve --upstream` can try again.
///
/// Ingest requests run on instances this link keeps while the follower catches up (at
/// most [`KEPT_INSTANCES`]): a page grows an instance's memory past what the node's
/// pool takes back, and a fresh instance per page would have the system hand it, and
/// zero, that memory again for every page. [`Local::release`] drops them.
#[derive(Debug)]
pub struct Local {
    node: Arc<Node>,
    token: String,
    /// The turn order of ingest requests, and the next ticket in it.
    turns: Mutex<(Arc<Turns>, u64)>,
    /// Instances that served ingest requests, for the next ones.
    kept: Arc<Mutex<Vec<Instance>>>,
}

/// Most instances a [`Local`] keeps: one per page applied at once.
pub const KEPT_INSTANCES: usize = 2;

impl Local {
    /// `node`, configured with the admin token `token`.
    pub fn new(node: Arc<Node>, token: String) -> Self {
        Local { node, token, turns: Mutex::new((Arc::new(Turns::new()), 0)), kept: Arc::default() }
    }

    /// Drops the instances kept for ingest, and the memory they grew: for a follower
    /// that has caught up and waits.
    pub fn release(&self) {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }

    /// The turn order and ticket of the ingest request sent now.
    fn ticket(&self) -> (Arc<Turns>, u64) {
        let mut turns = self.turns.lock().unwrap_or_else(PoisonError::into_inner);
        let ticket = turns.1;
        turns.1 += 1;
        (Arc::clone(&turns.0), ticket)
    }

    /// After a failed request of the turn order `failed`: a fresh order for later ones.
    fn restart_turns(&self, failed: &Arc<Turns>) {
        let mut turns = self.turns.lock().unwrap_or_else(PoisonError::into_inner);
        if Arc::ptr_eq(&turns.0, failed) {
            *turns = (Arc::new(Turns::new()), 0);
        }
    }

    /// The node.
    pub fn node(&self) -> &Node {
        &self.node
    }
}

impl Link for Local {
    async fn send(&self, request: Request) -> Result<Response, String> {
        let mut headers = request.headers;
        headers.push(("authorization".into(), format!("Bearer {}", self.token)));
        let body = match request.body {
            Body::Complete(bytes) => Some(bytes),
            Body::TooLarge => None,
        };
        let ingest = request.path == "/v0/admin/ingest";
        let request = host::Request {
            method: request.method.as_str().to_owned(),
            path: request.path,
            query: request.query,
            headers,
            body,
        };
        let (node, kept) = (Arc::clone(&self.node), Arc::clone(&self.kept));
        // The ticket is taken here, when the request is sent, and its call always runs
        // to its end on the blocking pool, so every ticket's turn comes to an end.
        let turn = ingest.then(|| self.ticket());
        let order = turn.as_ref().map(|(turns, _)| Arc::clone(turns));
        let answer = tokio::task::spawn_blocking(move || match turn {
            Some((turns, ticket)) => {
                let taken = kept.lock().unwrap_or_else(PoisonError::into_inner).pop();
                let mut instance = match taken {
                    Some(instance) => instance,
                    None => node.checkout()?,
                };
                // The write has committed on return.
                // An instance whose call failed (a trap) is not used again.
                let answer = serve_in_turn(&mut instance, &request, &turns, ticket)?;
                let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
                if kept.len() < KEPT_INSTANCES {
                    kept.push(instance);
                }
                Ok(answer)
            }
            None => node.handle(&request),
        })
        .await
        .map_err(|e| format!("the node's call failed: {e}"))
        .and_then(|answer| answer.map_err(|e| format!("{e:#}")));
        if let Some(order) = order
            && !answer.as_ref().is_ok_and(|a| (200..300).contains(&a.status))
        {
            self.restart_turns(&order);
        }
        let answer = answer?;
        Ok(Response { status: answer.status, headers: answer.headers, body: answer.body, log: answer.log })
    }
}

/// Progress as rounds are applied.
pub trait Progress {
    /// A round ended; `totals` so far, `report` of the round.
    fn round(&mut self, totals: &Summary, report: &Report);
}

/// How `run` follows.
#[derive(Debug, Clone)]
pub struct Options {
    /// Updates per page.
    pub page_size: u32,
    /// Stop once caught up.
    pub once: bool,
    /// How long to wait, caught up, before asking again.
    pub poll: Duration,
    /// How many upstreams must agree (`--agree`); `None`: f + 1 of n.
    pub agree: Option<u32>,
    /// Whether the upstreams are followed through their public endpoints only (no
    /// upstream token was given).
    pub public: bool,
    /// Where a follower that holds no update yet starts (`--start`).
    pub start: follow::Start,
    /// How long a hosting learned in public mode is kept, in seconds
    /// (`--hosting-lifetime`).
    pub hosting_lifetime_seconds: u64,
}

impl Options {
    /// The core's limits for one round.
    pub fn limits(&self) -> Limits {
        let mut names = ledger_node_core::model::config::Config::default().names;
        for (var, slot) in [
            (ledger_node_core::model::config::NAMES_ROOT, &mut names.root),
            (ledger_node_core::model::config::NAMES_COIN, &mut names.coin),
        ] {
            if let Ok(value) = std::env::var(var)
                && !value.is_empty()
            {
                *slot = value;
            }
        }
        Limits {
            page_size: self.page_size,
            max_pages: PAGES_PER_ROUND,
            pipelined: true,
            agree: self.agree,
            public: self.public,
            names,
            start: self.start,
            now: now(),
            hosting_lifetime_seconds: self.hosting_lifetime_seconds,
            hosting_lookups: follow::DEFAULT_HOSTING_LOOKUPS,
            blob_lifetime_seconds: follow::DEFAULT_BLOB_LIFETIME_SECONDS,
            blob_lookups: follow::DEFAULT_BLOB_LOOKUPS,
        }
    }
}

/// Now, for the core's follower (the hostings it learns are learned now).
fn now() -> ledger_node_core::model::time::Timestamp {
    let micros = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| i64::try_from(since.as_micros()).unwrap_or(i64::MAX));
    ledger_node_core::model::time::Timestamp::from_micros(micros)
        .unwrap_or(ledger_node_core::model::time::Timestamp::MAX)
}

/// Follows `upstreams` into `local` (see the module docs); returns the totals when
/// `once` and caught up.
pub async fn run(
    upstreams: &[Upstream],
    local: &Local,
    options: &Options,
    progress: &mut dyn Progress,
) -> anyhow::Result<Summary> {
    let mut limits = options.limits();
    let mut totals = Summary::default();
    loop {
        let started = Instant::now();
        limits.now = now();
        let report = match follow::sync_all(upstreams, local, &limits).await {
            Ok(report) => report,
            Err(e) => {
                local.node().metrics().follow_failed();
                return Err(e).context("following stopped");
            }
        };
        log_round(upstreams, local, &report, started);
        totals.add(&report.summary);
        progress.round(&totals, &report);
        if report.caught_up {
            if options.once {
                return Ok(totals);
            }
            local.release();
            tokio::time::sleep(options.poll).await;
        }
    }
}

/// Follows `upstream` into `local` for as long as the process runs, inside
/// `ledger-node serve --upstream`: on a thread of its own with a runtime of its own
/// (the follower's futures stay on one thread). Progress is logged per round that
/// applied something; a round that fails is logged and tried again after `poll`, so an
/// upstream that was down is followed again once it is back, and a conflict is
/// reported until the operator resolves it.
pub fn spawn_serving(upstreams: Vec<Upstream>, local: Local, options: &Options) -> std::io::Result<()> {
    let (mut limits, poll) = (options.limits(), options.poll);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    std::thread::Builder::new().name("follow".into()).spawn(move || {
        runtime.block_on(async {
            loop {
                let started = Instant::now();
                limits.now = now();
                match follow::sync_all(&upstreams, &local, &limits).await {
                    Ok(report) => {
                        log_round(&upstreams, &local, &report, started);
                        if report.caught_up {
                            local.release();
                            tokio::time::sleep(poll).await;
                        }
                    }
                    Err(e) => {
                        local.release();
                        local.node().metrics().follow_failed();
                        tracing::error!(
                            cause = %e,
                            retry_seconds = poll.as_secs(),
                            "follow round failed; trying again after the poll interval"
                        );
                        tokio::time::sleep(poll).await;
                    }
                }
            }
        });
    })?;
    Ok(())
}

/// Counts a round of the follower that ended with `report` in the node's metrics, and
/// logs it; `upstreams` are the ones the round asked, which its disagreements name by
/// index.
fn log_round(upstreams: &[Upstream], local: &Local, report: &Report, started: Instant) {
    let urls: Vec<&str> = upstreams.iter().map(Upstream::url).collect();
    local.node().metrics().follow_round(report, &urls, crate::metrics::unix_now());
    for disagreement in &report.disagreements {
        let differing: Vec<&str> = disagreement.upstreams.iter().filter_map(|&i| urls.get(i).copied()).collect();
        tracing::warn!(
            request = %disagreement.request,
            upstreams = ?differing,
            update_ids = ?disagreement.update_ids,
            "upstreams disagree; the answer enough of them gave was applied"
        );
    }
    let position = report.position.as_ref();
    tracing::info!(
        pages = report.pages,
        updates = report.summary.applied.update,
        caught_up = report.caught_up,
        migration_id = position.map(|p| p.after_migration_id),
        record_time = position.map(|p| p.after_record_time.as_str()),
        upstream_record_time = report.upstream_record_time.as_deref(),
        public = report.public,
        duration_ms = started.elapsed().as_secs_f64() * 1000.0,
        "follow round"
    );
}

/// The rate and totals line printed when a run ends.
pub fn summary(totals: &Summary, started: Instant) -> String {
    crate::ingest::summary(totals, started)
}
