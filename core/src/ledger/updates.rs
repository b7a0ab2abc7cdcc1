//! Updates as stored, and `GET /v{1,2}/updates/{update_id}` (spec 4.3).
//!
//! Both response bodies are rendered once, at ingest, and each is stored under its own
//! key, so that serving an update is one store read of just the body asked for: no
//! JSON is parsed on the request path, and no bytes of the other encoding are read. A
//! hash of the update's canonical ingest form is stored apart, so that ingest checks a
//! re-sent update (for idempotence) by reading 33 bytes.
//!
//! Stored layout:
//! - `H update_id` → the content hash of the ingest form: `[1][BLAKE3, 32 bytes]`; a
//!   hash of 32 bytes without the tag is the SHA-256 that earlier builds stored, still
//!   compared as such;
//! - `U update_id encoding` → `[body][kind: 1 byte]`, encoding 0 for `compact_json` and
//!   1 for `protobuf_json`; kind 0 for a transaction, 1 for a reassignment (last, so
//!   that serving drops it without moving the body).

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use sha2::Digest;

use super::contracts;

use crate::error::Error;
use crate::http::{Response, percent_decode, query_param};
use crate::keys::{self, Key};
use crate::route::UpdateApi;
use crate::store::Store;
use crate::update::{CreatedEvent, Event, ReassignmentEvent, Update};
use crate::value::Encoding;

const TRANSACTION: u8 = 0;
const REASSIGNMENT: u8 = 1;

/// The `offset` that version 1 of the endpoint reports for every transaction.
const V1_OFFSET: &[u8] = br#""offset":"000000000000000001","#;

/// The tag that starts a stored BLAKE3 content hash.
const BLAKE3: u8 = 1;

/// A stored content hash: the tag, then the BLAKE3 hash.
type ContentHash = [u8; 33];

/// An update as stored: its content hash, both rendered bodies, and the records of the
/// contracts it creates ([`contracts::creation_record`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredUpdate {
    hash: ContentHash,
    compact: Vec<u8>,
    protobuf: Vec<u8>,
    records: CreationRecords,
}

/// The store entries of one update: its content hash and its two bodies.
pub type UpdateEntries = [(Vec<u8>, Vec<u8>); 3];

/// The rendered records of the contracts an update creates, by contract id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreationRecords(Vec<(String, Vec<u8>)>);

impl CreationRecords {
    /// The records of the contracts `update` creates or assigns.
    fn new(update: &Update) -> Self {
        let record = |event: &CreatedEvent, synchronizer_id: &str, import: bool| {
            (event.contract_id.clone(), contracts::creation_record(event, synchronizer_id, import))
        };
        CreationRecords(match update {
            Update::Transaction(tx) => {
                let import = tx.is_import();
                let created = tx.events_by_id.values().filter_map(|event| match event {
                    Event::Created(created) => Some(record(created, &tx.synchronizer_id, import)),
                    Event::Exercised(_) => None,
                });
                created.collect()
            }
            Update::Reassignment(r) => match &r.event {
                ReassignmentEvent::Assignment(a) => vec![record(&a.created_event, &a.target_synchronizer, false)],
                ReassignmentEvent::Unassignment(_) => Vec::new(),
            },
        })
    }

    /// Takes the record of `contract_id`, if it was rendered and not taken yet.
    pub fn take(&mut self, contract_id: &str) -> Option<Vec<u8>> {
        let at = self.0.iter().position(|(id, _)| id == contract_id)?;
        Some(self.0.swap_remove(at).1)
    }
}

impl StoredUpdate {
    /// Renders `update` for storage.
    pub fn new(update: &Update) -> Self {
        let kind = if update.as_transaction().is_some() { TRANSACTION } else { REASSIGNMENT };
        let body = |encoding| crate::json::write::to_vec(&update.encoded(encoding));
        let mut compact = body(Encoding::CompactJson);
        let mut protobuf = body(Encoding::ProtobufJson);
        let hash = content_hash(update, &protobuf);
        compact.push(kind);
        protobuf.push(kind);
        StoredUpdate { hash, compact, protobuf, records: CreationRecords::new(update) }
    }

    /// The hash of the update's canonical ingest form.
    pub fn hash(&self) -> &ContentHash {
        &self.hash
    }

    /// Whether `held`, the content hash stored for `update`'s id, is this update's:
    /// a tagged BLAKE3 hash, or the untagged SHA-256 of earlier builds.
    pub fn matches(&self, update: &Update, held: &[u8]) -> bool {
        match held.len() {
            32 => {
                let mut hasher = sha2::Sha256::new();
                feed_ingest_form(update, self.protobuf_body(), |bytes| hasher.update(bytes));
                held == hasher.finalize().as_slice()
            }
            _ => held == self.hash,
        }
    }

    /// The `protobuf_json` body, without its kind byte.
    fn protobuf_body(&self) -> &[u8] {
        self.protobuf.split_last().map_or(&[], |(_, body)| body)
    }

    /// The entries to store for the update with id `update_id`.
    pub fn into_entries(self, update_id: &str) -> UpdateEntries {
        self.into_parts(update_id).0
    }

    /// The entries to store for the update with id `update_id`, and the records of the
    /// contracts it creates.
    pub fn into_parts(self, update_id: &str) -> (UpdateEntries, CreationRecords) {
        let entries = [
            (hash_key(update_id), self.hash.to_vec()),
            (body_key(update_id, Encoding::CompactJson), self.compact),
            (body_key(update_id, Encoding::ProtobufJson), self.protobuf),
        ];
        (entries, self.records)
    }
}

/// The response body for API version `api` from a stored `[body][kind]` entry.
fn response_body(mut stored: Vec<u8>, api: UpdateApi) -> Option<Vec<u8>> {
    let kind = stored.pop()?;
    if api == UpdateApi::V1 && kind == TRANSACTION {
        // Version 1 adds the legacy offset as the first field of the object.
        let rest = stored.strip_prefix(b"{")?;
        let mut v1 = Vec::with_capacity(stored.len() + V1_OFFSET.len());
        v1.push(b'{');
        v1.extend_from_slice(V1_OFFSET);
        v1.extend_from_slice(rest);
        return Some(v1);
    }
    Some(stored)
}

/// A hash of the canonical ingest form of `update`, whose `protobuf_json` body is
/// `protobuf`: the ingest form is that body plus the created events' blobs, so the hash
/// covers the body and every blob with its event id (two updates hash alike exactly when
/// their ingest forms are equal as JSON), without rendering the ingest form again.
/// BLAKE3: in wasm, where there are no SHA instructions, it hashes several times faster
/// than SHA-256.
pub fn content_hash(update: &Update, protobuf: &[u8]) -> ContentHash {
    let mut hasher = blake3::Hasher::new();
    feed_ingest_form(update, protobuf, |bytes| {
        hasher.update(bytes);
    });
    let mut hash = [BLAKE3; 33];
    hash[1..].copy_from_slice(hasher.finalize().as_bytes());
    hash
}

/// Feeds what [`content_hash`] covers to `hash`.
fn feed_ingest_form(update: &Update, protobuf: &[u8], mut hash: impl FnMut(&[u8])) {
    hash(protobuf);
    let mut blob = |event: &crate::update::CreatedEvent| {
        hash(&[0]);
        hash(event.event_id.as_bytes());
        match &event.created_event_blob {
            Some(blob) => {
                hash(&[1]);
                hash(blob.as_str().as_bytes());
            }
            None => hash(&[0]),
        }
    };
    match update {
        Update::Transaction(tx) => tx.events_by_id.values().for_each(|event| {
            if let crate::update::Event::Created(created) = event {
                blob(created);
            }
        }),
        Update::Reassignment(r) => {
            if let crate::update::ReassignmentEvent::Assignment(a) = &r.event {
                blob(&a.created_event);
            }
        }
    }
}

/// The key of an update's content hash: present exactly when the update is held.
pub fn hash_key(update_id: &str) -> Vec<u8> {
    Key::new(keys::UPDATE_HASH).str(update_id).into_bytes()
}

/// The key of an update's body in `encoding`.
pub fn body_key(update_id: &str, encoding: Encoding) -> Vec<u8> {
    let encoding = match encoding {
        Encoding::CompactJson => 0,
        Encoding::ProtobufJson => 1,
    };
    Key::new(keys::UPDATE).str(update_id).byte(encoding).into_bytes()
}

/// `GET /v{1,2}/updates/{update_id}?ledger_value_encoding=...`
pub async fn get<S: Store>(store: &S, api: UpdateApi, raw_id: &str, query: &str) -> Result<Response, Error> {
    let update_id = percent_decode(raw_id)
        .ok_or_else(|| Error::BadRequest("the update id is not valid percent-encoded UTF-8".into()))?;
    let encoding = encoding(query)?;
    let stored = store
        .get(&body_key(&update_id, encoding))
        .await?
        .ok_or_else(|| Error::NotFound(alloc::format!("update {update_id} not found")))?;
    let body = response_body(stored, api)
        .ok_or_else(|| Error::Internal(alloc::format!("stored update {update_id} is unreadable")))?;
    Ok(Response::json(200, body))
}

/// The requested value encoding: `ledger_value_encoding`, or its alias
/// `daml_value_encoding`; `compact_json` when neither is given.
fn encoding(query: &str) -> Result<Encoding, Error> {
    for name in ["ledger_value_encoding", "daml_value_encoding"] {
        match query_param(query, name) {
            None => continue,
            Some(Err(())) => {
                return Err(Error::BadRequest(alloc::format!(
                    "query parameter {name} is not valid percent-encoded UTF-8"
                )));
            }
            Some(Ok(value)) => {
                return Encoding::parse(&value).ok_or_else(|| {
                    Error::BadRequest(alloc::format!("{name} must be compact_json or protobuf_json, not {value:?}"))
                });
            }
        }
    }
    Ok(Encoding::CompactJson)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transaction(blob: Option<&str>, workflow: &str) -> Update {
        let mut created = serde_json::json!({
            "event_type": "created_event", "event_id": "u:0", "contract_id": "c", "template_id": "p:M:T",
            "package_name": "p", "create_arguments": {"record": {"fields": []}},
            "created_at": "2024-01-01T00:00:00Z", "signatories": [], "observers": []
        });
        if let Some(blob) = blob {
            created["created_event_blob"] = serde_json::json!(blob);
        }
        Update::parse(&crate::json::Json::from(&serde_json::json!({
            "update_id": "u", "migration_id": 0, "workflow_id": workflow, "record_time": "2024-01-01T00:00:00Z",
            "synchronizer_id": "s", "effective_at": "2024-01-01T00:00:00Z", "root_event_ids": ["u:0"],
            "events_by_id": {"u:0": created}
        })))
        .expect("a valid transaction")
    }

    fn hash(update: &Update) -> ContentHash {
        *StoredUpdate::new(update).hash()
    }

    /// The stored entry of `update`'s body in `encoding`.
    fn stored(update: &Update, encoding: Encoding) -> Vec<u8> {
        let [_, compact, protobuf] = StoredUpdate::new(update).into_entries(update.id());
        match encoding {
            Encoding::CompactJson => compact.1,
            Encoding::ProtobufJson => protobuf.1,
        }
    }

    #[test]
    fn the_content_hash_covers_the_body_and_every_blob() {
        let base = hash(&transaction(Some("AAEC"), ""));
        assert_eq!(base, hash(&transaction(Some("AAEC"), "")));
        assert_ne!(base, hash(&transaction(Some("AAED"), "")));
        assert_ne!(base, hash(&transaction(None, "")));
        assert_ne!(base, hash(&transaction(Some("AAEC"), "wf")));
    }

    #[test]
    fn a_held_hash_matches_in_either_form_and_only_for_the_same_content() {
        let update = transaction(Some("AAEC"), "");
        let stored = StoredUpdate::new(&update);
        assert_eq!(stored.hash()[0], BLAKE3);
        assert!(stored.matches(&update, stored.hash()));
        // The untagged SHA-256 of earlier builds, computed as they did: the body, then
        // for its one created event a 0, the event id, a 1 and the blob.
        let mut legacy = sha2::Sha256::new();
        legacy.update(stored.protobuf_body());
        legacy.update(b"\0u:0\x01AAEC");
        let legacy: [u8; 32] = legacy.finalize().into();
        assert!(stored.matches(&update, &legacy));
        let other = transaction(Some("AAED"), "");
        let other_stored = StoredUpdate::new(&other);
        assert!(!other_stored.matches(&other, stored.hash()));
        assert!(!other_stored.matches(&other, &legacy));
        assert!(!stored.matches(&update, &stored.hash()[1..]), "a tagless BLAKE3 hash is not SHA-256");
        assert!(!stored.matches(&update, &[]));
    }

    #[test]
    fn version_1_puts_the_legacy_offset_first_in_transactions() {
        let update = transaction(None, "");
        for encoding in [Encoding::CompactJson, Encoding::ProtobufJson] {
            let v1 = response_body(stored(&update, encoding), UpdateApi::V1).expect("a body");
            assert!(v1.starts_with(br#"{"offset":"000000000000000001","update_id":"u","#));
            let v2 = response_body(stored(&update, encoding), UpdateApi::V2).expect("a body");
            let v2: serde_json::Value = serde_json::from_slice(&v2).expect("JSON");
            assert!(v2.get("offset").is_none());
            let v1: serde_json::Value = serde_json::from_slice(&v1).expect("JSON");
            assert_eq!(v1.as_object().map(|o| o.len()), v2.as_object().map(|o| o.len() + 1));
        }
    }
}
