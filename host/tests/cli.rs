//! The `ledger-node` command line: demo history in, ingest, and the data served.

use std::process::{Command, Stdio};

use ledger_node::backend::Backend as _;
use ledger_node::lsm::LsmStore;

fn ledger_node() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ledger-node"));
    for name in ledger_node_core::model::config::NAMES {
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

/// What each command that opens a store (`ingest` of `history`, `follow`, `serve`) wrote
/// to stderr when it ran over the store at `db`, once it has failed: a store it refuses.
fn refusals(db: &std::path::Path, history: &std::path::Path) -> Vec<(&'static [&'static str], String)> {
    let commands: [&'static [&'static str]; 3] = [
        &["ingest"],
        &["follow", "--once", "--upstream", "http://127.0.0.1:9"],
        &["serve", "--listen", "127.0.0.1:0", "--tick-seconds", "0"],
    ];
    commands
        .into_iter()
        .map(|args| {
            let mut command = ledger_node();
            command.args(args).arg("--db").arg(db);
            if args == ["ingest"] {
                command.arg(history);
            }
            let output = finished(&mut command);
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            assert!(!output.status.success(), "{args:?}: {stderr}");
            (args, stderr)
        })
        .collect()
}

/// Runs `command` to its end, killing it after a minute (a `serve` that did not refuse
/// its store would serve on).
fn finished(command: &mut Command) -> std::process::Output {
    let mut child =
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("running");
    let started = std::time::Instant::now();
    while child.try_wait().expect("the status").is_none() {
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let output = child.wait_with_output().expect("the output");
            panic!("still running after a minute: {}", String::from_utf8_lossy(&output.stderr));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("the output")
}

/// Writes `key` = `value` into the store at `db`, as the library opens it.
fn put(db: &std::path::Path, key: &[u8], value: &[u8]) {
    let store = LsmStore::open(db).expect("opening the store");
    let mut batch = ledger_node_core::storage::store::WriteBatch::new();
    batch.put(key.to_vec(), value.to_vec());
    store.write_batch(&batch).expect("writing");
}

#[test]
fn a_new_store_gets_the_layout_version_and_one_of_another_layout_is_refused_by_every_command() {
    use ledger_node_core::storage::layout;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let history = dir.path().join("history.ndjson");
    std::fs::write(&history, "{\"wallet_user\":{\"user_id\":\"u\",\"party_id\":\"p\"}}\n")
        .expect("writing the history");

    // A new store gets this build's version, and is ingested into again.
    let current = dir.path().join("current.store");
    for _ in 0..2 {
        let output = ledger_node().args(["ingest", "--db"]).arg(&current).arg(&history).output().expect("ingest");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }
    let store = LsmStore::open(&current).expect("opening the store");
    assert_eq!(store.get(layout::KEY).expect("a read"), Some(layout::VERSION.to_string().into_bytes()));
    drop(store);

    // Another version, and the node's data without a version.
    let other = dir.path().join("other.store");
    put(&other, layout::KEY, b"999");
    let unversioned = dir.path().join("unversioned.store");
    put(
        &unversioned,
        &ledger_node_core::storage::keys::Key::new(ledger_node_core::storage::keys::GENERATION).i64(1).into_bytes(),
        b"",
    );
    for (db, names) in [(&other, "layout version 999"), (&unversioned, "without a layout version")] {
        for (args, stderr) in refusals(db, &history) {
            assert!(
                stderr.contains(names)
                    && stderr.contains(&format!("this build reads layout version {} only", layout::VERSION))
                    && stderr.contains("ingest the history again into a new store"),
                "{args:?}: {stderr}"
            );
        }
    }
    // Refused stores are left as they were.
    let store = LsmStore::open(&other).expect("opening the store");
    assert_eq!(store.get(layout::KEY).expect("a read"), Some(b"999".to_vec()));
    drop(store);
    let store = LsmStore::open(&unversioned).expect("opening the store");
    assert_eq!(store.get(layout::KEY).expect("a read"), None);
}

#[test]
fn a_store_ingested_under_the_networks_names_is_refused_under_others_naming_both() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let history = dir.path().join("history.ndjson");
    let db = dir.path().join("node.store");
    let splice = [("LEDGER_NODE_NAMES_ROOT", "Splice"), ("LEDGER_NODE_NAMES_COIN", "Amulet")];
    let demo = ledger_node().args(["demo", "--updates", "200"]).envs(splice).output().expect("running demo");
    assert!(demo.status.success(), "{}", String::from_utf8_lossy(&demo.stderr));
    let text = String::from_utf8(demo.stdout.clone()).expect("the history is text");
    assert!(text.contains("Splice.AmuletRules:AmuletRules") && !text.contains("CoinRules"), "demo follows the names");
    std::fs::write(&history, &demo.stdout).expect("writing the history");

    let output =
        ledger_node().args(["ingest", "--db"]).arg(&db).arg(&history).envs(splice).output().expect("running ingest");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    // Under the same names, a second ingest is accepted.
    let output =
        ledger_node().args(["ingest", "--db"]).arg(&db).arg(&history).envs(splice).output().expect("running ingest");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));

    // Under the default names, every command refuses the store and names both spellings.
    for (args, stderr) in refusals(&db, &history) {
        assert!(
            stderr.contains("ingested under the names root=Splice coin=Amulet")
                && stderr.contains("configured with root=Platform coin=Coin"),
            "{args:?}: {stderr}"
        );
    }
}
