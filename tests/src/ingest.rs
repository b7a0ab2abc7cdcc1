//! `ledger-node ingest`: streams an NDJSON history file into the node's store.
//!
//! The file is read line by line and sent to the component in batches of whole lines
//! (at most [`BATCH_LINES`] records or [`BATCH_BYTES`] bytes), each one request to the
//! component's `POST /v0/admin/ingest`, so memory stays bounded however large the file.
//! Each batch is atomic; the file as a whole is not, but ingest is idempotent, so an
//! interrupted run is resumed by running it again. Errors name the line of the file.
//! One instance of the component serves every batch of a run, so its memory, grown by
//! the first batch, is reused rather than mapped afresh for each.

use std::io::BufRead;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use crate::host::{Instance, Node, Request};

/// Most records in one batch.
pub const BATCH_LINES: usize = 20_000;
/// Most bytes in one batch (well under the 64 MiB ingest limit).
pub const BATCH_BYTES: usize = 16 * 1024 * 1024;

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

/// Ingests every record of `input` through `node`, whose admin token is `admin_token`.
pub fn run(node: &Node, admin_token: &str, input: impl BufRead, progress: &mut dyn Progress) -> anyhow::Result<Totals> {
    let mut totals = Totals::default();
    let mut batch = Vec::with_capacity(BATCH_BYTES);
    let mut lines_in_batch = 0usize;
    let mut first_line = 1usize;
    let mut line_number = 0usize;
    let mut input = input;
    let mut line = Vec::new();
    let mut instance = node.checkout()?;
    loop {
        line.clear();
        let read = input.read_until(b'\n', &mut line).context("reading the input")?;
        if read > 0 {
            line_number += 1;
            if !line.ends_with(b"\n") {
                line.push(b'\n');
            }
            batch.extend_from_slice(&line);
            lines_in_batch += 1;
        }
        if (read == 0 && !batch.is_empty()) || lines_in_batch >= BATCH_LINES || batch.len() >= BATCH_BYTES {
            let applied = send(&mut instance, admin_token, &batch, first_line)?;
            totals.add(&applied);
            progress.advance(batch.len() as u64, &totals);
            batch.clear();
            lines_in_batch = 0;
            first_line = line_number + 1;
        }
        if read == 0 {
            return Ok(totals);
        }
    }
}

/// Sends one batch whose first line is line `first_line` of the input.
fn send(instance: &mut Instance, admin_token: &str, batch: &[u8], first_line: usize) -> anyhow::Result<Totals> {
    let request = Request {
        method: "POST".into(),
        path: "/v0/admin/ingest".into(),
        query: String::new(),
        headers: vec![
            ("authorization".into(), format!("Bearer {admin_token}")),
            ("content-type".into(), "application/x-ndjson".into()),
        ],
        body: Some(batch.to_vec()),
    };
    let response = instance.serve(&request)?;
    if response.status == 200 {
        return serde_json::from_slice(&response.body).context("reading the ingest summary");
    }
    let message = serde_json::from_slice::<serde_json::Value>(&response.body)
        .ok()
        .and_then(|v| v.get("error")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| String::from_utf8_lossy(&response.body).into_owned());
    if let Some(log) = &response.log {
        eprintln!("ledger-node: {log}");
    }
    bail!("{} (status {})", renumber(&message, first_line), response.status)
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

    #[test]
    fn batch_line_numbers_become_input_line_numbers() {
        assert_eq!(renumber("line 3: update_id: missing", 40_001), "line 40003: update_id: missing");
        assert_eq!(renumber("not about a line", 7), "not about a line");
    }
}
