//! Record labels for an upstream that leaves them out of `protobuf_json`.
//!
//! The network's Scan nodes render the `protobuf_json` encoding from values stored
//! without record labels, so its record fields come as `{"value": V}` only; its
//! `compact_json` encoding names the fields but drops the types (a record is a JSON
//! object in field order, an optional `null` or the value, a numeric a string). Both are
//! written by `ScanHttpEncodings.scala` in the network's source
//! (`apps/scan/src/main/scala/org/lfdecentralizedtrust/splice/scan/admin/http/`:
//! `ProtobufJsonScanHttpEncodings` prints the ledger API's protobuf value with protobuf's
//! JSON printer, which omits an empty label; `CompactJsonScanHttpEncodings` prints it
//! with the codegen's JSON codec and, where that cannot decode a value, falls back to
//! `{"error": <message>, "value": <value in the label-less compressed form>}`).
//!
//! [`label`] walks the two renderings of one value together and writes each field's
//! label from the compact rendering into the typed one, so the value ingested is the
//! labelled, typed value a direct ingest holds. Nothing is guessed: the two must have
//! the same shape at every step (as many fields as entries, as many elements, the same
//! constructors and keys, a text, party, contract id, enum or bool the same, every
//! other scalar a string), a label already present must be the one the compact form
//! names, and a mismatch is an error naming the path, so the page is refused whole.
//!
//! A whole value (a contract's arguments, a choice argument, an exercise result) whose
//! compact rendering is the network's fallback object and does not fit its typed
//! rendering is taken as the upstream sent it: an undecoded value
//! ([`crate::model::value::Undecoded`], whose module names the network's source), its
//! typed rendering without labels and its fallback kept as they are, never a label
//! made up. (The shapes above make a fallback fit no typed record: its `value` holds
//! the whole value again.)

use alloc::format;
use alloc::string::{String, ToString};

use serde_json::Value as Json;

/// Writes the labels of `compact` (a value's `compact_json` rendering) into `typed`
/// (its `protobuf_json` rendering); `path` names the value in errors.
pub(super) fn label(typed: &mut Json, compact: &Json, path: &str) -> Result<(), String> {
    let mismatch = |what: &str| Err(format!("{path}: {what}"));
    let Some((kind, body)) = typed.as_object_mut().and_then(|o| o.iter_mut().next()) else {
        return mismatch("not a protobuf_json value");
    };
    match kind.as_str() {
        "record" => {
            let Some(entries) = compact.as_object() else {
                return mismatch("a record whose compact_json rendering is not an object");
            };
            let fields = body.get_mut("fields").and_then(Json::as_array_mut);
            let count = fields.as_ref().map_or(0, |f| f.len());
            if count != entries.len() {
                return mismatch(&format!(
                    "a record of {count} fields whose compact_json rendering has {} entries",
                    entries.len()
                ));
            }
            let Some(fields) = fields else { return Ok(()) };
            for (field, (name, value)) in fields.iter_mut().zip(entries) {
                let Some(field) = field.as_object_mut() else {
                    return mismatch("a record field that is not an object");
                };
                match field.get("label").and_then(Json::as_str) {
                    Some(held) if held != name => {
                        return mismatch(&format!("field {held:?} is named {name:?} in compact_json"));
                    }
                    _ => {}
                }
                field.insert("label".into(), Json::String(name.clone()));
                let Some(inner) = field.get_mut("value") else { return mismatch("a record field without value") };
                label(inner, value, &format!("{path}.{name}"))?;
            }
            // The label goes first, as a direct ingest writes it.
            for field in fields.iter_mut() {
                if let Some(object) = field.as_object_mut()
                    && let (Some(label), Some(value)) = (object.remove("label"), object.remove("value"))
                {
                    object.insert("label".into(), label);
                    object.insert("value".into(), value);
                }
            }
            Ok(())
        }
        "variant" => {
            let constructor = body.get("constructor").and_then(Json::as_str).unwrap_or_default().to_string();
            if compact.get("tag").and_then(Json::as_str) != Some(constructor.as_str()) {
                return mismatch(&format!("variant {constructor:?} has another tag in compact_json"));
            }
            match (body.get_mut("value"), compact.get("value")) {
                (Some(inner), Some(value)) => label(inner, value, &format!("{path}.{constructor}")),
                _ => mismatch(&format!("variant {constructor:?} without its value")),
            }
        }
        "list" => {
            let elements = compact.as_array();
            match (body.get_mut("elements").and_then(Json::as_array_mut), elements) {
                (None, Some(e)) if e.is_empty() => Ok(()),
                (Some(typed), Some(elements)) if typed.len() == elements.len() => {
                    for (n, (element, value)) in typed.iter_mut().zip(elements).enumerate() {
                        label(element, value, &format!("{path}[{n}]"))?;
                    }
                    Ok(())
                }
                _ => mismatch("a list whose compact_json rendering has other elements"),
            }
        }
        "optional" => match body.get_mut("value") {
            None if compact.is_null() || compact.as_array().is_some_and(|a| a.is_empty()) => Ok(()),
            None => mismatch("an empty optional that is not empty in compact_json"),
            Some(inner) => {
                let nested = inner.get("optional").is_some();
                match (nested, compact) {
                    (true, Json::Array(one)) if one.len() == 1 => label(inner, &one[0], path),
                    (true, _) => mismatch("a nested optional that is not a one-element list in compact_json"),
                    (false, Json::Null) => mismatch("a present optional that is null in compact_json"),
                    (false, value) => label(inner, value, path),
                }
            }
        },
        "textMap" => {
            let Some(map) = compact.as_object() else {
                return mismatch("a text map that is not an object in compact_json");
            };
            let Some(entries) = body.get_mut("entries").and_then(Json::as_array_mut) else {
                return if map.is_empty() { Ok(()) } else { mismatch("a text map with other entries in compact_json") };
            };
            if entries.len() != map.len() {
                return mismatch("a text map with other entries in compact_json");
            }
            for entry in entries {
                let key = entry.get("key").and_then(Json::as_str).unwrap_or_default().to_string();
                match (entry.get_mut("value"), map.get(&key)) {
                    (Some(inner), Some(value)) => label(inner, value, &format!("{path}[{key:?}]"))?,
                    _ => return mismatch(&format!("text map key {key:?} is not in compact_json")),
                }
            }
            Ok(())
        }
        "genMap" => {
            let pairs = compact.as_array();
            let Some(entries) = body.get_mut("entries").and_then(Json::as_array_mut) else {
                return if pairs.is_some_and(|p| p.is_empty()) {
                    Ok(())
                } else {
                    mismatch("a map with other entries in compact_json")
                };
            };
            let Some(pairs) = pairs.filter(|p| p.len() == entries.len()) else {
                return mismatch("a map with other entries in compact_json");
            };
            for (n, (entry, pair)) in entries.iter_mut().zip(pairs).enumerate() {
                let (Some(k), Some(v)) = (pair.get(0), pair.get(1)) else {
                    return mismatch(&format!("map entry {n} is not a pair in compact_json"));
                };
                if let Some(key) = entry.get_mut("key") {
                    label(key, k, &format!("{path}[{n}].key"))?;
                }
                if let Some(value) = entry.get_mut("value") {
                    label(value, v, &format!("{path}[{n}].value"))?;
                }
            }
            Ok(())
        }
        "text" | "party" | "contractId" => {
            let text = body.as_str().unwrap_or_default();
            match compact.as_str() == Some(text) {
                true => Ok(()),
                false => mismatch(&format!("{kind} {text:?} is another value in compact_json")),
            }
        }
        "enum" => {
            let constructor = body.get("constructor").and_then(Json::as_str).unwrap_or_default();
            match compact.as_str() == Some(constructor) {
                true => Ok(()),
                false => mismatch(&format!("enum {constructor:?} is another value in compact_json")),
            }
        }
        "bool" => match compact.as_bool() == Some(body.as_bool().unwrap_or_default()) {
            true => Ok(()),
            false => mismatch("a bool that is another value in compact_json"),
        },
        "unit" => match compact.as_object().is_some_and(|o| o.is_empty()) {
            true => Ok(()),
            false => mismatch("a unit that is not {} in compact_json"),
        },
        "int64" if compact.is_number() => Ok(()),
        _ => match compact.is_string() {
            true => Ok(()),
            false => mismatch(&format!("a {kind} that is not a string in compact_json")),
        },
    }
}

/// Writes the labels of `compact` into `typed`, a whole value of an event; a value
/// whose compact rendering is the network's fallback and does not fit becomes an
/// undecoded value, its two renderings as the upstream sent them.
fn label_value(typed: &mut Json, compact: &Json, path: &str) -> Result<(), String> {
    if !crate::model::value::is_fallback(compact) {
        return label(typed, compact, path);
    }
    let mut attempt = typed.clone();
    if label(&mut attempt, compact, path).is_ok() {
        *typed = attempt;
        return Ok(());
    }
    let protobuf = core::mem::take(typed);
    *typed = serde_json::json!({ crate::model::value::UNDECODED: {
        "protobuf_json": protobuf,
        "compact_json": compact,
    }});
    Ok(())
}

/// Whether `text`, an update item in `protobuf_json`, holds a record field without its
/// label: `{"value":` opens no other object of the encoding but an optional's body,
/// and cannot stand inside a JSON string (its quotes would be escaped).
pub(super) fn unlabelled(text: &str) -> bool {
    text.match_indices(r#"{"value":"#).any(|(at, _)| !text[..at].ends_with(r#""optional":"#))
}

/// Writes the labels of `compact`, an update item in `compact_json`, into `typed`, the
/// same update in `protobuf_json`: the arguments of its created events, the argument and
/// result of its exercised events.
pub(super) fn label_update(typed: &mut Json, compact: &Json) -> Result<(), String> {
    let id = typed.get("update_id").and_then(Json::as_str).unwrap_or_default().to_string();
    if compact.get("update_id").and_then(Json::as_str) != Some(id.as_str()) {
        return Err(format!(
            "update {id:?} is {:?} in compact_json",
            compact.get("update_id").and_then(Json::as_str).unwrap_or_default()
        ));
    }
    if let Some(events) = typed.get_mut("events_by_id").and_then(Json::as_object_mut) {
        for (event_id, event) in events.iter_mut() {
            let Some(other) = compact.get("events_by_id").and_then(|e| e.get(event_id)) else {
                return Err(format!("update {id}: event {event_id} is not in compact_json"));
            };
            label_event(event, other, &format!("update {id}: event {event_id}"))?;
        }
    }
    if let Some(created) = typed.get_mut("event").and_then(|e| e.get_mut("created_event")) {
        let Some(other) = compact.get("event").and_then(|e| e.get("created_event")) else {
            return Err(format!("update {id}: its assignment has no created event in compact_json"));
        };
        label_event(created, other, &format!("update {id}: assigned event"))?;
    }
    Ok(())
}

fn label_event(event: &mut Json, compact: &Json, path: &str) -> Result<(), String> {
    for field in ["create_arguments", "choice_argument", "exercise_result"] {
        match (event.get_mut(field), compact.get(field)) {
            (Some(typed), Some(value)) => label_value(typed, value, &format!("{path}: {field}"))?,
            (Some(_), None) => return Err(format!("{path}: {field} is not in compact_json")),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn labels_come_from_compact_and_types_stay() {
        let mut typed = json!({"record": {"fields": [
            {"value": {"int64": "1"}},
            {"value": {"optional": {"value": {"optional": {"value": {"record": {"fields": [{"value": {"text": "x"}}]}}}}}}},
            {"value": {"variant": {"constructor": "C", "value": {"record": {"fields": [{"value": {"unit": {}}}]}}}}},
            {"value": {"genMap": {"entries": [{"key": {"record": {"fields": [{"value": {"bool": true}}]}}, "value": {"list": {}}}]}}}
        ]}});
        let compact =
            json!({"n": "1", "o": [{"t": "x"}], "v": {"tag": "C", "value": {"u": {}}}, "m": [[{"b": true}, []]]});
        label(&mut typed, &compact, "v").expect("labelled");
        assert_eq!(
            typed,
            json!({"record": {"fields": [
                {"label": "n", "value": {"int64": "1"}},
                {"label": "o", "value": {"optional": {"value": {"optional": {"value": {"record": {"fields": [{"label": "t", "value": {"text": "x"}}]}}}}}}},
                {"label": "v", "value": {"variant": {"constructor": "C", "value": {"record": {"fields": [{"label": "u", "value": {"unit": {}}}]}}}}},
                {"label": "m", "value": {"genMap": {"entries": [{"key": {"record": {"fields": [{"label": "b", "value": {"bool": true}}]}}, "value": {"list": {}}}]}}}
            ]}})
        );
    }

    #[test]
    fn a_compact_rendering_of_another_shape_is_refused_naming_the_path() {
        let mut typed = json!({"record": {"fields": [{"value": {"record": {"fields": [{"value": {"unit": {}}}]}}}]}});
        let error = label(&mut typed, &json!({"a": {"b": {}, "c": {}}}), "arg").expect_err("a mismatch");
        assert_eq!(error, "arg.a: a record of 1 fields whose compact_json rendering has 2 entries");
        let mut labelled = json!({"record": {"fields": [{"label": "x", "value": {"unit": {}}}]}});
        let error = label(&mut labelled, &json!({"y": {}}), "arg").expect_err("another label");
        assert_eq!(error, "arg: field \"x\" is named \"y\" in compact_json");
        let mut text = json!({"record": {"fields": [{"value": {"text": "a"}}]}});
        let error = label(&mut text, &json!({"t": "b"}), "arg").expect_err("another text");
        assert_eq!(error, "arg.t: text \"a\" is another value in compact_json");
    }

    #[test]
    fn a_fallback_that_does_not_fit_becomes_an_undecoded_value_and_one_that_fits_is_a_record() {
        // The network's fallback of a record with a text and a number: its value holds
        // the whole record again, so no labelling fits it.
        let typed = json!({"record": {"fields": [{"value": {"text": "msg"}}, {"value": {"int64": "1"}}]}});
        let fallback = json!({"error": "no codec for p:M:T", "value": ["msg", "1"]});
        let mut value = typed.clone();
        label_value(&mut value, &fallback, "arg").expect("kept");
        assert_eq!(value, json!({"undecoded": {"protobuf_json": typed, "compact_json": fallback}}));
        // A record whose fields are named error and value is labelled as any other.
        let mut value = typed.clone();
        label_value(&mut value, &json!({"error": "msg", "value": "1"}), "arg").expect("labelled");
        assert_eq!(value["record"]["fields"][0]["label"], "error");
        assert_eq!(value["record"]["fields"][1]["label"], "value");
        // A scalar result the upstream could not decode.
        let mut value = json!({"contractId": "c1"});
        let fallback = json!({"error": "no codec", "value": "c1"});
        label_value(&mut value, &fallback, "result").expect("kept");
        assert_eq!(value, json!({"undecoded": {"protobuf_json": {"contractId": "c1"}, "compact_json": fallback}}));
    }

    #[test]
    fn an_item_with_a_record_field_without_label_is_told_from_one_without() {
        assert!(unlabelled(r#"{"create_arguments":{"record":{"fields":[{"value":{"unit":{}}}]}}}"#));
        assert!(unlabelled(r#"{"fields":[{"label":"a","value":{"unit":{}}},{"value":{"unit":{}}}]}"#));
        assert!(!unlabelled(r#"{"fields":[{"label":"a","value":{"optional":{"value":{"text":"{\"value\":"}}}}]}"#));
    }
}
