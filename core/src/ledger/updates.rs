//! Updates as stored, and `GET /v{1,2}/updates/{update_id}` (spec 4.3).
//!
//! Both response bodies are rendered once, at ingest, and stored with a hash of the
//! update's canonical ingest form (for idempotent re-ingest). Serving an update is one
//! store read and a slice of the stored bytes: no JSON is parsed on the request path.
//!
//! Stored layout: `[kind: 1 byte][sha-256 of the ingest form: 32 bytes]
//! [compact body length: u32 BE][compact body][protobuf body]`, kind 0 for a
//! transaction, 1 for a reassignment.

use alloc::vec::Vec;

use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::http::{Response, percent_decode, query_param};
use crate::keys::{self, Key};
use crate::route::UpdateApi;
use crate::store::{Store, StoreError};
use crate::update::Update;
use crate::value::Encoding;

const TRANSACTION: u8 = 0;
const REASSIGNMENT: u8 = 1;
const HEADER: usize = 1 + 32 + 4;

/// The `offset` that version 1 of the endpoint reports for every transaction.
const V1_OFFSET: &[u8] = br#""offset":"000000000000000001","#;

/// An update as stored: its content hash and both rendered bodies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredUpdate {
    bytes: Vec<u8>,
}

impl StoredUpdate {
    /// Renders `update` for storage.
    pub fn new(update: &Update) -> Self {
        // Writing strings, numbers and maps into bytes cannot fail.
        let compact = serde_json::to_vec(&update.encoded(Encoding::CompactJson)).unwrap_or_default();
        let protobuf = serde_json::to_vec(&update.encoded(Encoding::ProtobufJson)).unwrap_or_default();
        let hash = content_hash(update, &protobuf);
        let mut bytes = Vec::with_capacity(HEADER + compact.len() + protobuf.len());
        bytes.push(if update.as_transaction().is_some() { TRANSACTION } else { REASSIGNMENT });
        bytes.extend_from_slice(&hash);
        bytes.extend_from_slice(&u32::try_from(compact.len()).unwrap_or(u32::MAX).to_be_bytes());
        bytes.extend_from_slice(&compact);
        bytes.extend_from_slice(&protobuf);
        StoredUpdate { bytes }
    }

    /// Wraps stored bytes, checking their framing.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self, StoreError> {
        let stored = StoredUpdate { bytes };
        if stored.bodies().is_none() {
            return Err(StoreError::new("a stored update is truncated"));
        }
        Ok(stored)
    }

    /// The stored bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The hash of the update's canonical ingest form.
    pub fn hash(&self) -> Option<&[u8]> {
        self.bytes.get(1..33)
    }

    /// Whether the update is a transaction.
    pub fn is_transaction(&self) -> bool {
        self.bytes.first() == Some(&TRANSACTION)
    }

    fn bodies(&self) -> Option<(&[u8], &[u8])> {
        let len: [u8; 4] = self.bytes.get(33..HEADER)?.try_into().ok()?;
        let split = HEADER.checked_add(usize::try_from(u32::from_be_bytes(len)).ok()?)?;
        Some((self.bytes.get(HEADER..split)?, self.bytes.get(split..)?))
    }

    /// The response body in `encoding`, for API version `api`.
    pub fn body(&self, encoding: Encoding, api: UpdateApi) -> Option<Vec<u8>> {
        let (compact, protobuf) = self.bodies()?;
        let body = match encoding {
            Encoding::CompactJson => compact,
            Encoding::ProtobufJson => protobuf,
        };
        if api == UpdateApi::V1 && self.is_transaction() {
            // Version 1 adds the legacy offset as the first field of the object.
            let rest = body.strip_prefix(b"{")?;
            let mut v1 = Vec::with_capacity(body.len() + V1_OFFSET.len());
            v1.push(b'{');
            v1.extend_from_slice(V1_OFFSET);
            v1.extend_from_slice(rest);
            return Some(v1);
        }
        Some(body.to_vec())
    }
}

/// A hash of the canonical ingest form of `update`, whose `protobuf_json` body is
/// `protobuf`: the ingest form is that body plus the created events' blobs, so the hash
/// covers the body and every blob with its event id (two updates hash alike exactly when
/// their ingest forms are equal as JSON), without rendering the ingest form again.
pub fn content_hash(update: &Update, protobuf: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(protobuf);
    let mut blob = |event: &crate::update::CreatedEvent| {
        hasher.update([0]);
        hasher.update(event.event_id.as_bytes());
        match &event.created_event_blob {
            Some(blob) => {
                hasher.update([1]);
                hasher.update(blob.as_str().as_bytes());
            }
            None => hasher.update([0]),
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
    hasher.finalize().into()
}

/// The key of an update.
pub fn update_key(update_id: &str) -> Vec<u8> {
    Key::new(keys::UPDATE).str(update_id).into_bytes()
}

/// `GET /v{1,2}/updates/{update_id}?ledger_value_encoding=...`
pub async fn get<S: Store>(store: &S, api: UpdateApi, raw_id: &str, query: &str) -> Result<Response, Error> {
    let update_id = percent_decode(raw_id)
        .ok_or_else(|| Error::BadRequest("the update id is not valid percent-encoded UTF-8".into()))?;
    let encoding = encoding(query)?;
    let stored = store
        .get(&update_key(&update_id))
        .await?
        .ok_or_else(|| Error::NotFound(alloc::format!("update {update_id} not found")))?;
    let body = StoredUpdate::from_bytes(stored)?
        .body(encoding, api)
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

    fn hash(update: &Update) -> Option<Vec<u8>> {
        StoredUpdate::new(update).hash().map(<[u8]>::to_vec)
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
    fn version_1_puts_the_legacy_offset_first_in_transactions() {
        let stored = StoredUpdate::new(&transaction(None, ""));
        let v1 = stored.body(Encoding::CompactJson, UpdateApi::V1).expect("a body");
        assert!(v1.starts_with(br#"{"offset":"000000000000000001","#));
        let v2: serde_json::Value =
            serde_json::from_slice(&stored.body(Encoding::CompactJson, UpdateApi::V2).expect("a body")).expect("JSON");
        assert!(v2.get("offset").is_none());
    }
}
