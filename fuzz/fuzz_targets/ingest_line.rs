//! The ingest line reader, both sources: the strict reader that parses a line into a
//! JSON document and names the path of every problem (`ingest::parse_lines`,
//! `Update::parse` and the network records' parsers), and the fast cursor that reads an
//! update line straight from its bytes (`update::fast::update_line`).
//!
//! Arbitrary bytes never panic either reader; the two agree on every update line the
//! cursor takes; an update read either way, written in its canonical ingest form and
//! read again (by both), is the same update; the batch ingests into a fresh node
//! without a panic or a 500, and ingesting it again changes no update.

#![no_main]

use ledger_node_core::Error;
use ledger_node_core::ingest::{self, Line};
use ledger_node_core::model::json;
use ledger_node_core::model::json::Json;
use ledger_node_core::model::update::{Encoding, Update, fast};
use ledger_node_core::state::network::{Backfill, RollForwardLsu, Topology, WalletUser};
use ledger_node_core::storage::exec::block_on;
use ledger_node_core::storage::store::MemoryStore;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|batch: &[u8]| {
    for raw in batch.split(|b| *b == b'\n') {
        read_line(raw);
    }
    if let Ok(lines) = ingest::parse_lines(batch) {
        for line in &lines {
            read_record(line);
        }
    }
    ingest_twice(batch);
});

/// Reads one line with both readers and checks that they agree.
fn read_line(raw: &[u8]) {
    let fast = fast::update_line(raw);
    let strict = ingest::parse_lines(raw).ok().and_then(|mut lines| lines.pop());
    if let Some(update) = &fast {
        let line = strict.as_ref().expect("a line the cursor takes is a record for the strict reader");
        assert_eq!(line.kind, "update", "the cursor took a line of another kind");
        match Update::parse(&line.payload) {
            Ok(parsed) => assert_eq!(&parsed, update, "the two readers read different updates"),
            Err(e) => panic!("the cursor took an update the strict reader refuses: {e}"),
        }
        round_trip(update);
    }
}

/// Reads a record of any kind with the strict reader, and writes back what has a writer.
fn read_record(line: &Line<'_>) {
    match line.kind {
        "update" => {
            if let Ok(update) = Update::parse(&line.payload) {
                round_trip(&update);
            }
        }
        "topology" => drop(Topology::parse(&line.payload)),
        "backfill" => drop(Backfill::parse(&line.payload)),
        "wallet_user" => drop(WalletUser::parse(&line.payload)),
        _ => {
            if let Ok(Some(plan)) = RollForwardLsu::parse(&line.payload) {
                let text = json::write::to_vec(&plan).expect("a plan writes");
                let again = Json::parse(&text).expect("the writer writes JSON");
                assert_eq!(RollForwardLsu::parse(&again).ok(), Some(Some(plan)), "a plan reads back as written");
            }
        }
    }
}

/// Writes `update` in its ingest form and reads it back with both readers; its
/// response bodies are written too.
fn round_trip(update: &Update) {
    let text = update.ingest_text();
    let document = Json::parse(text.as_bytes()).expect("the ingest form is JSON");
    match Update::parse(&document) {
        Ok(again) => assert_eq!(&again, update, "the strict reader reads the ingest form back differently"),
        Err(e) => panic!("the strict reader refuses the ingest form it was written in: {e}\n{text}"),
    }
    let line = format!("{{\"update\":{text}}}");
    if let Some(again) = fast::update_line(line.as_bytes()) {
        assert_eq!(&again, update, "the cursor reads the ingest form back differently");
    }
    assert_eq!(serde_json::from_str::<serde_json::Value>(&text).ok(), Some(update.to_ingest_json()));
    for encoding in [Encoding::ProtobufJson, Encoding::CompactJson] {
        let body = update.body_text(encoding);
        assert!(Json::parse(body.as_bytes()).is_ok(), "a response body is JSON: {body}");
    }
}

/// Ingests `batch` into a fresh node twice: the second time, every update is one it holds.
fn ingest_twice(batch: &[u8]) {
    let store = MemoryStore::new();
    let config = ledger_node_fuzz::config();
    let first = match block_on(ingest::ingest(batch, &store, config)) {
        Ok(summary) => summary,
        Err(Error::Internal(message)) => panic!("ingest failed inside: {message}"),
        Err(_) => return,
    };
    match block_on(ingest::ingest(batch, &store, config)) {
        Ok(second) => {
            assert_eq!(second.applied.update, 0, "a batch ingested again applied an update again");
            assert_eq!(second.unchanged, first.updates(), "a batch ingested again saw its updates differently");
        }
        Err(e) => panic!("a batch that ingested is refused the second time: {e:?}"),
    }
}
