//! `ledger-node ingest`: streams an NDJSON history file into the node's store.
//!
//! The file is read line by line and sent to the component in batches of whole lines
//! (at most [`BATCH_LINES`] records or [`BATCH_BYTES`] bytes; the first batches smaller,
//! see [`Batching`]), each one request to the component's `POST /v0/admin/ingest`, so
//! memory stays bounded however large the file.
//! Each batch is atomic; the file as a whole is not, but ingest is idempotent, so an
//! interrupted run is resumed by running it again. Errors name the line of the file.
//!
//! Batches are pipelined: [`workers`] instances of the component serve consecutive
//! batches at once, each kept for the whole run (so its memory, grown by its first
//! batch, is reused). The core parses, validates and renders a whole batch before its
//! first store call, and the instances take [`Turns`] at the store, so one batch is
//! prepared while the one before it is applied, yet batches are applied in input order
//! and none after one that failed. A batch's turn ends when its write has committed,
//! and the next batch then applies while this one is answered.
//!
//! That turn protocol is ingest's own (`follow`'s local link uses it too):
//! [`turns`] is the order, and [`serve_in_turn`] serves a batch over a wrapper of the
//! node's backend that waits for the batch's turn and passes it on
//! (`ingest/in_turn.rs`). The runner knows nothing of it.
//!
//! A batch's buffer goes back to the reader once its batch is served, so
//! the run fills the same few buffers over and over instead of having the system hand
//! it (and zero) fresh pages for every batch.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::sync::mpsc::{Receiver, Sender, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use crate::host::{Instance, Node, Request};

mod in_turn;
pub mod turns;

pub use in_turn::serve_in_turn;
pub use turns::Turns;

/// Most records in one batch.
pub const BATCH_LINES: usize = 20_000;
/// Most bytes in one batch (well under the 64 MiB ingest limit): fewer, larger batches
/// take fewer turns at the store, while each instance's memory grows with its batch.
pub const BATCH_BYTES: usize = 16 * 1024 * 1024;
/// The byte limit of the first batch; each next batch may be twice as large, up to
/// the batching's limit (see [`Batching::bytes_for`]).
const FIRST_BATCH_BYTES: usize = 1024 * 1024;
/// Most instances serving batches at once.
const MAX_WORKERS: usize = 4;

/// What an ingest run applied: the core's summary of a batch, added up over batches.
pub use ledger_node_core::ingest::Summary as Totals;

/// Progress as batches are applied.
pub trait Progress {
    /// `bytes` more of the input were applied; `totals` so far.
    fn advance(&mut self, bytes: u64, totals: &Totals);
}

/// No progress reporting.
#[derive(Debug)]
pub struct Quiet;

impl Progress for Quiet {
    fn advance(&mut self, _: u64, _: &Totals) {}
}

/// How many instances serve batches at once: one per core, at least two (one batch
/// prepared while another is applied) and at most four (each holds a batch in memory).
pub fn workers() -> usize {
    thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, MAX_WORKERS)
}

/// One batch of the input: its ticket (its place in the input), its first line, bytes.
struct Batch {
    ticket: u64,
    first_line: usize,
    bytes: Vec<u8>,
}

/// What serving a batch gave: its ticket, its size and its summary or error.
type Outcome = (u64, u64, anyhow::Result<Totals>);

/// How the input is cut into batches.
#[derive(Debug, Clone, Copy)]
pub struct Batching {
    /// Most records in one batch.
    pub lines: usize,
    /// About the most bytes in one batch (a batch ends with the line that reaches it).
    pub bytes: usize,
}

/// Buffers of served batches, for the reader to fill again.
#[derive(Debug, Default)]
struct Buffers(Mutex<Vec<Vec<u8>>>);

impl Buffers {
    /// An empty buffer for one batch: one given back, or a new one with its capacity
    /// reserved up to [`BATCH_BYTES`].
    fn take(&self, batching: &Batching) -> Vec<u8> {
        let returned = self.0.lock().unwrap_or_else(PoisonError::into_inner).pop();
        returned.unwrap_or_else(|| Vec::with_capacity(batching.bytes.min(BATCH_BYTES)))
    }

    /// Gives back the buffer of a served batch.
    fn give_back(&self, mut buffer: Vec<u8>) {
        buffer.clear();
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(buffer);
    }
}

impl Batching {
    /// The byte limit of batch `ticket`. Batches start small and double up to
    /// [`Batching::bytes`]: only the first batch's preparation has no earlier batch's
    /// turn at the store to overlap with, so a small first batch puts the store to work
    /// at once, and the pipeline fills while the batches grow.
    fn bytes_for(&self, ticket: u64) -> usize {
        let ramp = u32::try_from(ticket).map_or(usize::MAX, |t| FIRST_BATCH_BYTES.saturating_mul(1usize << t.min(20)));
        self.bytes.min(ramp)
    }
}

impl Default for Batching {
    fn default() -> Self {
        Batching { lines: BATCH_LINES, bytes: BATCH_BYTES }
    }
}

/// Ingests every record of `input` through `node`, whose admin token is `admin_token`.
pub fn run(node: &Node, admin_token: &str, input: impl BufRead, progress: &mut dyn Progress) -> anyhow::Result<Totals> {
    run_batched(node, admin_token, input, progress, Batching::default())
}

/// [`run`], with batches cut by `batching`.
pub fn run_batched(
    node: &Node,
    admin_token: &str,
    input: impl BufRead,
    progress: &mut dyn Progress,
    batching: Batching,
) -> anyhow::Result<Totals> {
    let turns = Arc::new(Turns::new());
    let buffers = Buffers::default();
    let (batches, queue) = std::sync::mpsc::sync_channel::<Batch>(0);
    let queue = Mutex::new(queue);
    thread::scope(|scope| {
        let (queue, buffers) = (&queue, &buffers);
        let (outcomes, done) = std::sync::mpsc::channel::<Outcome>();
        for _ in 0..workers() {
            let (outcomes, turns) = (outcomes.clone(), &turns);
            scope.spawn(move || serve_batches(node, admin_token, queue, buffers, &outcomes, turns));
        }
        drop(outcomes);
        let mut collector = Collector::new(progress);
        let read = read_batches(input, batching, buffers, &batches, &done, &mut collector);
        drop(batches);
        let collected = collector.drain(done.iter());
        read?;
        collected
    })
}

/// Reads `input` into batches and queues them, collecting outcomes as they come, until
/// the input ends or a batch failed.
fn read_batches(
    mut input: impl BufRead,
    batching: Batching,
    buffers: &Buffers,
    batches: &SyncSender<Batch>,
    done: &Receiver<Outcome>,
    collector: &mut Collector<'_>,
) -> anyhow::Result<()> {
    let mut batch = Batch { ticket: 0, first_line: 1, bytes: buffers.take(&batching) };
    let mut lines_in_batch = 0usize;
    let mut line_number = 0usize;
    loop {
        // Straight into the batch: the line is not copied again.
        let read = input.read_until(b'\n', &mut batch.bytes).context("reading the input")?;
        if read > 0 {
            line_number += 1;
            if !batch.bytes.ends_with(b"\n") {
                batch.bytes.push(b'\n');
            }
            lines_in_batch += 1;
        }
        if (read == 0 && !batch.bytes.is_empty())
            || lines_in_batch >= batching.lines
            || batch.bytes.len() >= batching.bytes_for(batch.ticket)
        {
            let next = Batch { ticket: batch.ticket + 1, first_line: line_number + 1, bytes: buffers.take(&batching) };
            if batches.send(std::mem::replace(&mut batch, next)).is_err() {
                return Ok(()); // every worker stopped: their outcomes say why
            }
            lines_in_batch = 0;
            if !collector.collect(done)? {
                return Ok(());
            }
        }
        if read == 0 {
            return Ok(());
        }
    }
}

/// A worker: serves queued batches with one instance, in turn, until the queue closes.
fn serve_batches(
    node: &Node,
    admin_token: &str,
    queue: &Mutex<Receiver<Batch>>,
    buffers: &Buffers,
    outcomes: &Sender<Outcome>,
    turns: &Arc<Turns>,
) {
    let mut instance = node.checkout();
    loop {
        let next = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok(batch) = next else { return };
        let (ticket, size) = (batch.ticket, batch.bytes.len() as u64);
        let result = match &mut instance {
            Ok(instance) => {
                let (first_line, started) = (batch.first_line, Instant::now());
                let sent = send(instance, admin_token, batch, turns, buffers);
                log_batch(node, &sent, first_line, size, started);
                sent
            }
            Err(e) => {
                turns.finish(ticket, false);
                Err(anyhow::anyhow!("starting the component: {e:#}"))
            }
        };
        if outcomes.send((ticket, size, result)).is_err() {
            return;
        }
    }
}

/// Outcomes put back in input order: totals added up and progress reported batch by
/// batch, and the first failure in input order kept.
struct Collector<'p> {
    progress: &'p mut dyn Progress,
    totals: Totals,
    /// The next ticket in input order.
    next: u64,
    /// Outcomes that came before those of earlier tickets.
    early: BTreeMap<u64, (u64, anyhow::Result<Totals>)>,
    failure: Option<anyhow::Error>,
}

impl<'p> Collector<'p> {
    fn new(progress: &'p mut dyn Progress) -> Self {
        Collector { progress, totals: Totals::default(), next: 0, early: BTreeMap::new(), failure: None }
    }

    /// Takes the outcomes that have come, without waiting; `false` once a batch failed.
    fn collect(&mut self, done: &Receiver<Outcome>) -> anyhow::Result<bool> {
        loop {
            match done.try_recv() {
                Ok(outcome) => self.take(outcome),
                Err(TryRecvError::Empty) => return Ok(self.failure.is_none()),
                Err(TryRecvError::Disconnected) => bail!("every ingest worker stopped"),
            }
        }
    }

    /// Takes every remaining outcome: the totals, or the first failure in input order.
    fn drain(mut self, outcomes: impl Iterator<Item = Outcome>) -> anyhow::Result<Totals> {
        outcomes.for_each(|outcome| self.take(outcome));
        match self.failure {
            Some(failure) => Err(failure),
            None => Ok(self.totals),
        }
    }

    /// Takes one outcome, and counts the batches it lets through in input order.
    fn take(&mut self, (ticket, size, result): Outcome) {
        self.early.insert(ticket, (size, result));
        while let Some(entry) = self.early.first_entry() {
            if *entry.key() != self.next {
                return;
            }
            let (size, result) = entry.remove();
            self.next += 1;
            if self.failure.is_some() {
                continue; // later batches were refused their turn
            }
            match result {
                Ok(summary) => {
                    self.totals.add(&summary);
                    self.progress.advance(size, &self.totals);
                }
                Err(e) => self.failure = Some(e),
            }
        }
    }
}

/// Sends one batch, in its turn.
fn send(
    instance: &mut Instance,
    admin_token: &str,
    batch: Batch,
    turns: &Arc<Turns>,
    buffers: &Buffers,
) -> anyhow::Result<Totals> {
    let mut request = Request {
        method: "POST".into(),
        path: "/v0/admin/ingest".into(),
        query: String::new(),
        headers: vec![
            ("authorization".into(), format!("Bearer {admin_token}")),
            ("content-type".into(), "application/x-ndjson".into()),
        ],
        body: Some(batch.bytes),
    };
    let response = serve_in_turn(instance, &request, turns, batch.ticket);
    if let Some(buffer) = request.body.take() {
        buffers.give_back(buffer);
    }
    let response = response?;
    if response.status == 200 {
        return serde_json::from_slice(&response.body).context("reading the ingest summary");
    }
    let message = serde_json::from_slice::<serde_json::Value>(&response.body)
        .ok()
        .and_then(|v| v.get("error")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| String::from_utf8_lossy(&response.body).into_owned());
    if let Some(log) = &response.log {
        tracing::error!(status = response.status, cause = %log, "the node reported a failure applying an ingest batch");
    }
    bail!("{} (status {})", renumber(&message, batch.first_line), response.status)
}

/// Counts a batch of `bytes` from line `first_line` that ended with `sent` in the
/// node's metrics, and logs it.
fn log_batch(node: &Node, sent: &anyhow::Result<Totals>, first_line: usize, bytes: u64, started: Instant) {
    let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    match sent {
        Ok(totals) => {
            node.metrics().ingest_applied(totals);
            tracing::info!(
                first_line,
                bytes,
                updates = totals.applied.update,
                unchanged = totals.unchanged,
                duration_ms,
                "ingest batch applied"
            );
        }
        Err(e) => {
            node.metrics().ingest_refused();
            tracing::warn!(first_line, bytes, cause = %format!("{e:#}"), duration_ms, "ingest batch refused");
        }
    }
}

/// Rewrites a leading `line N:` of a batch's error to the line of the whole input.
fn renumber(message: &str, first_line: usize) -> String {
    let Some(rest) = message.strip_prefix("line ") else {
        return message.to_owned();
    };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    match rest.get(..digits).and_then(|d| d.parse::<usize>().ok()) {
        Some(n) => format!("line {}{}", n + first_line - 1, rest.get(digits..).unwrap_or("")),
        None => message.to_owned(),
    }
}

/// Updates per second.
pub fn rate(updates: u64, elapsed: Duration) -> f64 {
    updates as f64 / elapsed.as_secs_f64().max(1e-9)
}

/// A one-line summary of a run.
pub fn summary(totals: &Totals, started: Instant) -> String {
    let elapsed = started.elapsed();
    format!(
        "applied {} updates ({} already held), {} topology, {} backfill, {} roll-forward, {} wallet users in {:.1} s ({:.0} updates/s)",
        totals.applied.update,
        totals.unchanged,
        totals.applied.topology,
        totals.applied.backfill,
        totals.applied.roll_forward_lsu,
        totals.applied.wallet_user,
        elapsed.as_secs_f64(),
        rate(totals.updates(), elapsed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::MemoryBackend;
    use crate::host::{self, Options};

    const TOKEN: &str = "admin-token";

    #[test]
    fn batches_start_small_and_double_up_to_the_limit() {
        let batching = Batching::default();
        let limits: Vec<usize> = (0..7).map(|ticket| batching.bytes_for(ticket) >> 20).collect();
        assert_eq!(limits, [1, 2, 4, 8, 16, 16, 16]);
        assert_eq!(batching.bytes_for(u64::MAX), BATCH_BYTES);
        let small = Batching { lines: 10, bytes: 3 << 20 };
        assert_eq!(small.bytes_for(0), 1 << 20);
        assert_eq!(small.bytes_for(2), 3 << 20);
    }

    fn node() -> Node {
        let config = vec![(ledger_node_core::model::config::ADMIN_TOKEN.to_owned(), TOKEN.to_owned())];
        Node::new(
            &host::engine().expect("an engine"),
            Arc::new(MemoryBackend::new()),
            Options { config, fixed_clock: None },
        )
        .expect("a node")
    }

    /// Counts the batches applied, to check that progress comes in input order.
    struct Batches(Vec<u64>);

    impl Progress for Batches {
        fn advance(&mut self, _: u64, totals: &Totals) {
            self.0.push(totals.updates());
        }
    }

    /// A demo history of `updates` updates, as lines.
    fn history(updates: u64) -> Vec<String> {
        let mut out = Vec::new();
        crate::demo::write(&crate::demo::Options::new(updates, 3), &mut out).expect("a history");
        String::from_utf8(out).expect("UTF-8").lines().map(str::to_owned).collect()
    }

    #[test]
    fn pipelined_batches_apply_in_order_and_none_after_a_failure() {
        let node = node();
        let lines = history(60);
        let batching = Batching { lines: 3, bytes: usize::MAX };
        // The bad line starts a batch past the history's preamble of network records,
        // with updates before it and after it.
        let at = lines.len() / 6 * 3;
        let mut bad = lines.clone();
        bad.insert(at, String::from(r#"{"update":{"update_id":7}}"#));
        let input = bad.join("\n");
        let error = run_batched(&node, TOKEN, input.as_bytes(), &mut Quiet, batching).expect_err("a bad line");
        assert!(format!("{error:#}").starts_with(&format!("line {}: ", at + 1)), "{error:#}");

        // Exactly the batches before the bad one were applied: their updates are held,
        // and every later one is new.
        let applied_before = history_updates(&lines[..at]);
        assert!((10..50).contains(&applied_before), "{applied_before} updates before line {at}");
        let mut progress = Batches(Vec::new());
        let input = lines.join("\n");
        let totals = run_batched(&node, TOKEN, input.as_bytes(), &mut progress, batching).expect("a good history");
        assert_eq!(totals.unchanged, applied_before);
        assert_eq!(totals.applied.update, 60 - applied_before);
        assert_eq!(progress.0.len(), lines.len().div_ceil(3), "one progress step per batch");
        assert!(progress.0.is_sorted(), "totals grow batch by batch: {:?}", progress.0);
        assert_eq!(progress.0.last(), Some(&60));
    }

    fn history_updates(lines: &[String]) -> u64 {
        lines.iter().filter(|l| l.starts_with(r#"{"update":"#)).count() as u64
    }

    #[test]
    fn batch_line_numbers_become_input_line_numbers() {
        assert_eq!(renumber("line 3: update_id: missing", 40_001), "line 40003: update_id: missing");
        assert_eq!(renumber("not about a line", 7), "not about a line");
    }
}
