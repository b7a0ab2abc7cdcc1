//! The strict JSON reader that every request body goes through (`json::Json::parse`),
//! its writer (`json::write`), and the ledger value reader on both of its sources (the
//! document and the byte cursor, `value::source`).
//!
//! Arbitrary bytes never panic; what the strict reader takes, `serde_json` takes too
//! (the strict reader only refuses more); a document written and read again is the
//! same document, with every float written as exactly the float read (the reader's
//! floats are `serde_json`'s best effort); the two value sources agree on every value
//! the cursor takes, and a value written in `protobuf_json` reads back the same.

#![no_main]

use ledger_node_core::model::json::scan::Cursor;
use ledger_node_core::model::json::{self, Json, Number};
use ledger_node_core::model::value::source::Tree;
use ledger_node_core::model::value::{Encoding, JsonPath, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    let Ok(document) = Json::parse(body) else {
        // The cursor takes no text that is not JSON.
        if let Ok(text) = std::str::from_utf8(body) {
            let mut cursor = Cursor::new(text);
            if Value::read(&mut cursor).is_ok() && cursor.at_end() {
                panic!("the cursor took a value the strict reader refuses as JSON");
            }
        }
        return;
    };
    assert!(
        serde_json::from_slice::<serde_json::Value>(body).is_ok(),
        "the strict reader took what serde_json refuses"
    );
    let written = json::write::to_vec(&document).expect("a document writes");
    let again = Json::parse(&written).expect("the writer writes JSON the strict reader takes");
    assert!(same_document(&again, &document), "a document reads back as written: {again:?} / {document:?}");

    let strict = Value::parse(&document, &mut JsonPath::new());
    if let Ok(text) = std::str::from_utf8(body) {
        let mut cursor = Cursor::new(text);
        if let Ok(value) = Value::read(&mut cursor)
            && cursor.at_end()
        {
            assert_eq!(
                strict.as_ref().ok(),
                Some(&value),
                "the cursor read a value the document reader reads otherwise"
            );
        }
    }
    if let Ok(value) = strict {
        let written = json::write::to_vec(&value.encoded(Encoding::ProtobufJson)).expect("a value writes");
        let document = Json::parse(&written).expect("a written value is JSON");
        match Value::read(&mut Tree::new(&document, &mut JsonPath::new())) {
            Ok(again) => assert_eq!(again, value, "a value reads back as written"),
            Err(e) => panic!("a value written is refused: {e}"),
        }
        let compact = json::write::to_vec(&value.encoded(Encoding::CompactJson)).expect("a value writes");
        assert!(Json::parse(&compact).is_ok(), "a compact value is JSON");
    }
});

/// Whether `again`, `document` written and read again, is `document`: the same but for
/// the floats, which `serde_json`'s default reader reads to within a few steps (most of
/// all below f64's normal range), so a float is held to the writer's side: its text
/// reads back, correctly rounded, as exactly the float written.
fn same_document(again: &Json<'_>, document: &Json<'_>) -> bool {
    match (again, document) {
        (Json::Number(Number::Float(_)), Json::Number(Number::Float(x))) => {
            let text = json::write::to_vec(&Json::Number(Number::Float(*x))).expect("a float writes");
            std::str::from_utf8(&text).ok().and_then(|text| text.parse::<f64>().ok()) == Some(*x)
        }
        (Json::Array(a), Json::Array(d)) => a.len() == d.len() && a.iter().zip(d).all(|(a, d)| same_document(a, d)),
        (Json::Object(a), Json::Object(d)) => {
            a.len() == d.len() && a.iter().zip(d.iter()).all(|((ka, va), (kd, vd))| ka == kd && same_document(va, vd))
        }
        _ => again == document,
    }
}
