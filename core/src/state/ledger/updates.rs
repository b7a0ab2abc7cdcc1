//! Updates as stored, and their bodies as `GET /v{1,2}/updates/{update_id}` and the
//! history stream serve them ([`crate::api::history`]).
//!
//! Each update is stored once, in its binary form ([`crate::model::update::binary`]):
//! about 1.4 KB an update once compressed, against 3.9 KB for the two JSON bodies this
//! replaced. A read renders the body in the encoding asked for from it ([`bodies`]),
//! and offers the rendering to the store's cache of rendered values
//! ([`Store::remember`]), keyed by update and encoding, so that an update read often
//! is rendered once while the cache keeps it. An update never changes once held (a
//! different one under its id is a conflict), so a kept rendering is never stale;
//! only the reset removes updates, and a store forgets what it keeps on any delete.
//!
//! Ingest tells a re-sent update (idempotent) from a different one under a held id (a
//! conflict) by comparing its binary form with the held one's, and a hash of the
//! created events' blobs, which the form leaves out. Only the blobs are hashed, at a
//! few hundred bytes an update rather than the whole form; the held form is read only
//! for an update whose id is already held. A created event re-sent without its blob
//! matches the held one: a blob is an attachment an update can lose (no node keeps an
//! archived contract's blob, so a follower reading the update again gets it without),
//! never a contradiction; a different blob, or one where the held event had none, is
//! one.
//!
//! Stored layout:
//! - `H update_id` → `[3]` then 8 bytes per created event, in event id order: zero for
//!   an event without a blob, else the first 8 bytes of the BLAKE3 hash of its event id
//!   and blob (never zero); present exactly when the update is held;
//! - `U update_id` → the update's binary form, whose head says whether it is a
//!   transaction or a reassignment.
//!
//! A rendered body, as cached and as [`bodies`] returns it, is `[body][kind: 1 byte]`:
//! kind 0 for a transaction, 1 for a reassignment (last, so that serving drops it
//! without moving the body).

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::contracts;

use crate::model::error::Error;
use crate::model::update::{CreatedEvent, Event, ReassignmentEvent, Update};
use crate::model::value::Encoding;
use crate::storage::keys::{self, Key};
use crate::storage::store::Store;

/// The kind byte that ends a rendered body of a transaction ([`bodies`]).
pub const TRANSACTION: u8 = 0;
const REASSIGNMENT: u8 = 1;

/// The tag of stored per-event blob hashes ([`event_blob_hashes`]).
const EVENT_BLOBS: u8 = 3;
/// The bytes of one created event's blob hash.
const EVENT_HASH_LEN: usize = 8;

/// A stored content hash: the tag, then what it tags.
type ContentHash = Vec<u8>;

/// An update as stored: the hash of its blobs, its binary form, and the records of the
/// contracts it creates ([`contracts::creation_record`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredUpdate {
    hash: ContentHash,
    form: Vec<u8>,
    records: CreationRecords,
}

/// The store entries of one update: its content hash and its binary form.
pub type UpdateEntries = [(Vec<u8>, Vec<u8>); 2];

/// The rendered records of the contracts an update creates, by contract id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreationRecords(Vec<(String, Vec<u8>)>);

impl CreationRecords {
    /// The records of the contracts `update` creates or assigns.
    fn new(update: &Update) -> Result<Self, Error> {
        let record = |event: &CreatedEvent, synchronizer_id: &str, import: bool| -> Result<_, Error> {
            Ok((event.contract_id.clone(), contracts::creation_record(event, synchronizer_id, import)?))
        };
        let records = match update {
            Update::Transaction(tx) => {
                let import = tx.is_import();
                let created = tx.events_by_id.values().filter_map(|event| match event {
                    Event::Created(created) => Some(record(created, &tx.synchronizer_id, import)),
                    Event::Exercised(_) => None,
                });
                created.collect::<Result<_, _>>()?
            }
            Update::Reassignment(r) => match &r.event {
                ReassignmentEvent::Assignment(a) => vec![record(&a.created_event, &a.target_synchronizer, false)?],
                ReassignmentEvent::Unassignment(_) => Vec::new(),
            },
        };
        Ok(CreationRecords(records))
    }

    /// Takes the record of `contract_id`, if it was rendered and not taken yet.
    pub fn take(&mut self, contract_id: &str) -> Option<Vec<u8>> {
        let at = self.0.iter().position(|(id, _)| id == contract_id)?;
        Some(self.0.swap_remove(at).1)
    }
}

impl StoredUpdate {
    /// Renders `update` for storage; a contract record that does not serialize is an
    /// error ([`contracts::creation_record`]).
    pub fn new(update: &Update) -> Result<Self, Error> {
        Ok(StoredUpdate {
            hash: event_blob_hashes(update),
            form: update.to_binary(),
            records: CreationRecords::new(update)?,
        })
    }

    /// The hash stored for the update: of its created events' blobs.
    pub fn hash(&self) -> &ContentHash {
        &self.hash
    }

    /// Whether the update this renders is the update held under its id, whose stored
    /// hash is `held` and whose stored form is `held_form` ([`needs_form`]).
    pub fn matches(&self, held: &[u8], held_form: Option<&[u8]>) -> bool {
        match held {
            [EVENT_BLOBS, held_events @ ..] => {
                let ours = self.hash.get(1..).unwrap_or_default();
                held_form == Some(self.form.as_slice())
                    && held_events.len() == ours.len()
                    && held_events
                        .chunks(EVENT_HASH_LEN)
                        .zip(ours.chunks(EVENT_HASH_LEN))
                        .all(|(held, ours)| ours.iter().all(|b| *b == 0) || held == ours)
            }
            _ => false,
        }
    }

    /// The entries to store for the update with id `update_id`.
    pub fn into_entries(self, update_id: &str) -> UpdateEntries {
        self.into_parts(update_id).0
    }

    /// The entries to store for the update with id `update_id`, and the records of the
    /// contracts it creates.
    pub fn into_parts(self, update_id: &str) -> (UpdateEntries, CreationRecords) {
        let entries = [(hash_key(update_id), self.hash), (form_key(update_id), self.form)];
        (entries, self.records)
    }
}

/// Whether deciding if an update is the one held with stored hash `held` needs the
/// held update's form ([`form_key`]) too: for every hash of this layout; a value of any
/// other form is no update this build holds.
pub fn needs_form(held: &[u8]) -> bool {
    held.first() == Some(&EVENT_BLOBS)
}

/// The stored hashes of `update`'s created events' blobs, the part of the canonical
/// ingest form its binary form leaves out: `[3]`, then for each created event in event
/// id order 8 bytes, zero without a blob, else the head of the BLAKE3 hash of its event
/// id and blob (never zero). So two updates have equal ingest forms (as JSON) exactly
/// when their binary forms and these are equal, and an event that lost its blob is told
/// from one with another blob. BLAKE3: in wasm, where there are no SHA instructions, it
/// hashes several times faster than SHA-256.
fn event_blob_hashes(update: &Update) -> ContentHash {
    let mut hashes = vec![EVENT_BLOBS];
    for event in update.created_events() {
        match &event.created_event_blob {
            None => hashes.extend_from_slice(&[0; EVENT_HASH_LEN]),
            Some(blob) => {
                let mut hasher = blake3::Hasher::new();
                hasher.update(event.event_id.as_bytes());
                hasher.update(&[0]);
                hasher.update(blob.as_str().as_bytes());
                let mut head = [0; EVENT_HASH_LEN];
                head.copy_from_slice(&hasher.finalize().as_bytes()[..EVENT_HASH_LEN]);
                if head == [0; EVENT_HASH_LEN] {
                    head[EVENT_HASH_LEN - 1] = 1;
                }
                hashes.extend_from_slice(&head);
            }
        }
    }
    hashes
}

/// The key of an update's content hash: present exactly when the update is held.
pub fn hash_key(update_id: &str) -> Vec<u8> {
    Key::new(keys::UPDATE_HASH).str(update_id).into_bytes()
}

/// The key of an update's binary form.
pub fn form_key(update_id: &str) -> Vec<u8> {
    Key::new(keys::UPDATE).str(update_id).into_bytes()
}

/// The key of an update's body in `encoding` in the store's cache of rendered values
/// ([`Store::recall`]): its form's key and the encoding.
fn rendered_key(update_id: &str, encoding: Encoding) -> Vec<u8> {
    let encoding = match encoding {
        Encoding::CompactJson => 0,
        Encoding::ProtobufJson => 1,
    };
    Key::new(keys::UPDATE).str(update_id).byte(encoding).into_bytes()
}

/// The bodies of the updates `ids` in `encoding`, each `[body][kind]` (see the module
/// docs), `None` for an update not held: from the store's cache of rendered values
/// where it keeps them, the rest rendered from their forms, read in one round trip
/// (a `get` for one, a `get_many` for more), and offered to the cache. A form that does not read is an error naming its update.
pub async fn bodies<S: Store, I: AsRef<str>>(
    store: &S,
    ids: &[I],
    encoding: Encoding,
) -> Result<Vec<Option<Vec<u8>>>, Error> {
    let mut found: Vec<Option<Vec<u8>>> =
        ids.iter().map(|id| store.recall(&rendered_key(id.as_ref(), encoding))).collect();
    let missing: Vec<usize> = (0..ids.len()).filter(|&n| found[n].is_none()).collect();
    if missing.is_empty() {
        return Ok(found);
    }
    let keys: Vec<Vec<u8>> = missing.iter().map(|&n| form_key(ids[n].as_ref())).collect();
    let forms = match keys.as_slice() {
        // One update is read by key alone, as a host reads single keys best (the
        // worker's KV tier serves only those).
        [key] => alloc::vec![store.get(key).await?],
        keys => store.get_many(&keys.iter().map(Vec::as_slice).collect::<Vec<_>>()).await?,
    };
    for (n, form) in missing.into_iter().zip(forms) {
        let Some(form) = form else { continue };
        let id = ids[n].as_ref();
        let body = render(&form, encoding)
            .ok_or_else(|| Error::Internal(alloc::format!("stored update {id} is unreadable")))?;
        store.remember(&rendered_key(id, encoding), &body);
        found[n] = Some(body);
    }
    Ok(found)
}

/// `[body][kind]` of the update whose binary form is `form`, in `encoding`.
pub(crate) fn render(form: &[u8], encoding: Encoding) -> Option<Vec<u8>> {
    let update = Update::from_binary(form)?;
    let kind = if update.as_transaction().is_some() { TRANSACTION } else { REASSIGNMENT };
    let mut body = update.body_text(encoding).into_bytes();
    body.push(kind);
    Some(body)
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
        Update::parse(&crate::model::json::Json::from(&serde_json::json!({
            "update_id": "u", "migration_id": 0, "workflow_id": workflow, "record_time": "2024-01-01T00:00:00Z",
            "synchronizer_id": "s", "effective_at": "2024-01-01T00:00:00Z", "root_event_ids": ["u:0"],
            "events_by_id": {"u:0": created}
        })))
        .expect("a valid transaction")
    }

    fn hash(update: &Update) -> ContentHash {
        StoredUpdate::new(update).unwrap().hash().clone()
    }

    #[test]
    fn the_stored_hash_covers_every_blob_and_only_the_blobs() {
        let base = hash(&transaction(Some("AAEC"), ""));
        assert_eq!((base[0], base.len()), (EVENT_BLOBS, 1 + EVENT_HASH_LEN));
        assert_eq!(base, hash(&transaction(Some("AAEC"), "")));
        assert_ne!(base, hash(&transaction(Some("AAED"), "")));
        assert_ne!(base, hash(&transaction(None, "")));
        assert_eq!(base, hash(&transaction(Some("AAEC"), "wf")), "the form is compared as it is");
    }

    #[test]
    fn a_held_update_matches_only_with_the_same_blobs_and_body() {
        let update = transaction(Some("AAEC"), "");
        let stored = StoredUpdate::new(&update).unwrap();
        let [_, (_, body)] = stored.clone().into_entries(update.id());
        assert!(needs_form(stored.hash()));
        assert!(stored.matches(stored.hash(), Some(&body)));
        assert!(!stored.matches(stored.hash(), None), "the form is needed");

        let other_body = transaction(Some("AAEC"), "wf");
        let other_body_stored = StoredUpdate::new(&other_body).unwrap();
        assert!(!other_body_stored.matches(stored.hash(), Some(&body)));
        let other_blob = transaction(Some("AAED"), "");
        let other_blob_stored = StoredUpdate::new(&other_blob).unwrap();
        let [_, (_, other_blob_body)] = other_blob_stored.clone().into_entries(other_blob.id());
        assert_eq!(other_blob_body, body, "blobs are not in the form");
        assert!(!other_blob_stored.matches(stored.hash(), Some(&body)));
        assert!(!stored.matches(&stored.hash()[1..], Some(&body)), "an untagged hash is refused");
        assert!(!stored.matches(&[], Some(&body)));
        // Without any blob, the update is the held one, whose blobs were lost on the way.
        let without = transaction(None, "");
        let without_stored = StoredUpdate::new(&without).unwrap();
        assert!(without_stored.matches(stored.hash(), Some(&body)));
        let without_other_body = transaction(None, "wf");
        assert!(!StoredUpdate::new(&without_other_body).unwrap().matches(stored.hash(), Some(&body)));
        // Held without a blob, the event cannot gain one.
        assert!(!stored.matches(without_stored.hash(), Some(&body)));
    }
}
