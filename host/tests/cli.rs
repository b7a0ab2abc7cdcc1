//! The `ledger-node` command line: demo history in, ingest, and the data served.

use std::process::{Command, Stdio};

fn ledger_node() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ledger-node"));
    for name in ledger_node_core::config::NAMES {
        command.env_remove(name);
    }
    command
}

#[test]
fn demo_history_ingests_from_a_file_and_again_from_stdin_idempotently() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let history = dir.path().join("history.ndjson");
    let db = dir.path().join("node.store");
    let demo = ledger_node().args(["demo", "--updates", "300", "--seed", "7"]).output().expect("running demo");
    assert!(demo.status.success(), "{}", String::from_utf8_lossy(&demo.stderr));
    std::fs::write(&history, &demo.stdout).expect("writing the history");

    let first = ledger_node().args(["ingest", "--db"]).arg(&db).arg(&history).output().expect("running ingest");
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(first.status.success(), "{stderr}");
    assert!(stderr.contains("applied 300 updates (0 already held)"), "{stderr}");

    let mut again = ledger_node()
        .args(["ingest", "--db"])
        .arg(&db)
        .arg("-")
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running ingest");
    std::io::Write::write_all(&mut again.stdin.take().expect("stdin"), &demo.stdout).expect("writing stdin");
    let again = again.wait_with_output().expect("ingest finishes");
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{stderr}");
    assert!(stderr.contains("applied 0 updates (300 already held)"), "{stderr}");
}

#[test]
fn a_bad_line_is_reported_with_its_line_number_and_nothing_of_its_batch_is_applied() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let history = dir.path().join("bad.ndjson");
    std::fs::write(
        &history,
        "{\"wallet_user\":{\"user_id\":\"u\",\"party_id\":\"p\"}}\n\n{\"update\":{\"update_id\":7}}\n",
    )
    .expect("writing the history");
    let output = ledger_node()
        .args(["ingest", "--db"])
        .arg(dir.path().join("node.store"))
        .arg(&history)
        .output()
        .expect("ingest");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("line 3: "), "{stderr}");
}

#[test]
fn a_sqlite_store_of_an_earlier_build_is_refused_with_advice() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("node.sqlite");
    let mut file = b"SQLite format 3\0".to_vec();
    file.resize(4096, 0);
    std::fs::write(&db, &file).expect("writing the file");
    let history = dir.path().join("history.ndjson");
    std::fs::write(&history, "\n").expect("writing the history");
    let output = ledger_node().args(["ingest", "--db"]).arg(&db).arg(&history).output().expect("ingest");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("SQLite store of an earlier build") && stderr.contains("ingest the history again"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&db).expect("the file"), file, "the file is left as it was");
}
