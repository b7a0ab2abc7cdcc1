//! Crash safety of the native store: `ledger-node ingest` killed (SIGKILL) at any
//! moment leaves a store that the same ingest, run again, completes to exactly the
//! state of a run that was never interrupted.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ledger_node::backend::Backend as _;
use ledger_node::lsm::LsmStore;
use ledger_node_core::storage::store::Scan;
use ledger_node_tests::ledger_node;

fn ingest(db: &Path, history: &Path) -> Command {
    let mut command = ledger_node();
    command.args(["ingest", "--db"]).arg(db).arg(history).stdin(Stdio::null()).stdout(Stdio::null());
    command
}

/// Every key and value of the store at `db`, but the ingest generation (`G`), which
/// counts batches, and so the runs that applied them.
fn state(db: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    let store = LsmStore::open(db).expect("opening the store");
    let all = Scan { start: Vec::new(), end: None, limit: u32::MAX, reverse: false };
    store.scan(&all).expect("a scan").into_iter().filter(|(key, _)| key.first() != Some(&b'G')).collect()
}

#[test]
fn an_ingest_killed_at_any_moment_is_completed_by_running_it_again_to_the_identical_state() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let history = dir.path().join("history.ndjson");
    let demo = ledger_node().args(["demo", "--updates", "3000", "--seed", "11"]).output().expect("running demo");
    assert!(demo.status.success(), "{}", String::from_utf8_lossy(&demo.stderr));
    std::fs::write(&history, &demo.stdout).expect("writing the history");

    let whole = dir.path().join("whole.store");
    let started = Instant::now();
    let output = ingest(&whole, &history).output().expect("running ingest");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let duration = started.elapsed();

    // Kills spread over a run's length: each run starts over (ingest is idempotent) and
    // gets further, as what an earlier run committed is held.
    let killed = dir.path().join("killed.store");
    let mut hit_a_running_ingest = 0;
    for step in 1..=6u32 {
        let mut child = ingest(&killed, &history).stderr(Stdio::null()).spawn().expect("starting ingest");
        std::thread::sleep(duration.mul_f64(f64::from(step) * 0.12).max(Duration::from_millis(50)));
        if child.try_wait().expect("the ingest's status").is_none() {
            hit_a_running_ingest += 1;
        }
        child.kill().expect("SIGKILL");
        child.wait().expect("the killed ingest exits");
    }
    assert!(hit_a_running_ingest > 0, "no kill found the ingest still running");
    let output = ingest(&killed, &history).output().expect("running ingest");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");

    let (whole, killed) = (state(&whole), state(&killed));
    assert!(whole.len() > 3000, "{} keys", whole.len());
    assert_eq!(killed.len(), whole.len(), "the same keys");
    assert!(killed == whole, "the same values");
}
