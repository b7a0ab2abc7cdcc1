//! Stream pages: fetched from the upstream, checked, and made into ingest batches with
//! the blobs the public stream leaves out.
//!
//! A page's first update is after the position it was asked from, and its updates
//! ascend by (migration id, record time), so every page moves the position forward; an
//! upstream page that does not stops following with an error naming the request, rather
//! than have the same page asked for again and again.

use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::{FollowError, Follower, Link, Side, to_vec};
use crate::api::export::{self, Blobs, Position};
use crate::api::route::UpdateApi;
use crate::ingest::Summary;
use crate::model::json::Json;
use crate::model::json::write::write_str;
use crate::model::update::{Blob, Event, Update};
use crate::state::blobs::{BlobNews, BlobRecord};
use crate::storage::exec::join;

/// An update of a page, and its text as the upstream sent it.
pub(super) struct Item {
    pub(super) update: Update,
    text: Box<RawValue>,
}

/// A page of the stream, ready for ingest.
pub(super) struct Prepared {
    /// The migration all its updates belong to.
    pub(super) migration_id: i64,
    /// The position of its last update.
    pub(super) position: Position,
    /// Its ingest batch.
    pub(super) batch: Vec<u8>,
}

/// `{"transactions": [...]}`, items left as text.
#[derive(serde::Deserialize)]
struct Page {
    transactions: Vec<Box<RawValue>>,
}

impl<U: Link, L: Link> Follower<'_, U, L> {
    /// The page of the upstream's stream after `after`.
    async fn stream_page(&self, after: Option<&Position>) -> Result<Vec<Item>, FollowError> {
        let mut body = serde_json::json!({
            "page_size": self.limits.page_size,
            "daml_value_encoding": "protobuf_json",
        });
        if let Some(after) = after {
            body["after"] = serde_json::json!(after);
        }
        let page = self.page("/v2/updates", &body, UpdateApi::V2).await?;
        if let (Some(after), Some(Item { update: first, .. })) = (after, page.first()) {
            let time = first.record_time().to_string();
            if (first.migration_id(), time.as_str()) <= (after.after_migration_id, after.after_record_time.as_str())
                || first.is_import()
            {
                return Err(FollowError(format!(
                    "the upstream answered POST /v2/updates after migration {} at {} with update {} of migration {} at {time}, \
                     which is not after it",
                    after.after_migration_id,
                    after.after_record_time,
                    first.id(),
                    first.migration_id()
                )));
            }
        }
        if let Some(last) = page.last() {
            *self.newest.borrow_mut() = Some(last.update.record_time().to_string());
        }
        // The position moves to the page's last update: a page that goes back would be
        // asked for again and again.
        for pair in page.windows(2) {
            let (before, item) = (&pair[0].update, &pair[1].update);
            if (item.migration_id(), item.record_time()) < (before.migration_id(), before.record_time()) {
                return Err(FollowError(format!(
                    "the upstream answered POST /v2/updates with update {} of migration {} at {} after update {} of \
                     migration {} at {}: a page's updates must ascend by migration id and record time",
                    item.id(),
                    item.migration_id(),
                    item.record_time(),
                    before.id(),
                    before.migration_id(),
                    before.record_time()
                )));
            }
        }
        Ok(page)
    }

    /// A page of updates from the upstream's `path`, parsed; items in `api`'s shape
    /// (version 1: a transaction may carry the legacy `offset`, which is dropped).
    pub(super) async fn page(
        &self,
        path: &str,
        body: &serde_json::Value,
        api: UpdateApi,
    ) -> Result<Vec<Item>, FollowError> {
        let mut texts = self.agreed_texts(path, body, api).await?;
        // A public upstream leaves every label out; a node with export endpoints, only
        // those of the values it holds undecoded.
        if self.public || texts.iter().any(|text| super::labels::unlabelled(text.get())) {
            texts = self.labelled(path, body, texts, api).await?;
        }
        let mut line = Vec::new();
        texts
            .into_iter()
            .map(on_one_line)
            .enumerate()
            .map(|(index, text)| {
                let malformed = |problem: String| {
                    FollowError(format!(
                        "the upstream's POST {path} answered a malformed page: item {index}: {problem}"
                    ))
                };
                // Items are ingest records but for their blobs: the fast reader takes
                // them, and the strict parser names what is wrong with one it declines.
                line.clear();
                line.extend_from_slice(b"{\"update\":");
                line.extend_from_slice(text.get().as_bytes());
                line.push(b'}');
                let update = match crate::model::update::fast::update_line(&line) {
                    Some(update) => update,
                    None => {
                        let json = Json::parse(text.get().as_bytes()).map_err(|e| malformed(e.to_string()))?;
                        Update::parse(&json).map_err(|e| malformed(e.to_string()))?
                    }
                };
                Ok(Item { update, text })
            })
            .collect()
    }

    /// The items of the upstreams' page from `path` (version 1 items without their
    /// `offset`), as enough upstreams sent them ([`super::quorum::page`]).
    async fn agreed_texts(
        &self,
        path: &str,
        body: &serde_json::Value,
        api: UpdateApi,
    ) -> Result<Vec<Box<RawValue>>, FollowError> {
        let items = |page: Page| -> Vec<Box<RawValue>> {
            page.transactions
                .into_iter()
                .map(|text| match api {
                    UpdateApi::V1 => without_offset(text),
                    UpdateApi::V2 => text,
                })
                .collect()
        };
        if self.upstreams.len() == 1 {
            let page: Page = self.call(Side::Upstream, path, to_vec(body)?).await?;
            return Ok(items(page));
        }
        let request = super::request(path, to_vec(body)?, "application/json");
        let answers = self.ask_all(&request).await;
        let mut pages: Vec<Result<Vec<Box<RawValue>>, String>> = Vec::with_capacity(answers.len());
        for answer in answers {
            pages.push(match answer {
                Ok(response) => super::read::<Page>(Side::Upstream, path, &response).map(items).map_err(|e| e.0),
                Err(e) => Err(e),
            });
        }
        let keyed: Vec<Result<Vec<(String, String)>, String>> = pages
            .iter()
            .map(|page| match page {
                Ok(items) => Ok(items.iter().map(|text| (update_id(text), text.get().to_owned())).collect()),
                Err(e) => Err(e.clone()),
            })
            .collect();
        let what = format!("POST {path} {}", String::from_utf8_lossy(&to_vec(body)?));
        let (source, length, disagreement) = super::quorum::page(&what, &keyed, self.agree).map_err(FollowError)?;
        self.noted.borrow_mut().extend(disagreement);
        let mut agreed = pages.into_iter().nth(source).and_then(Result::ok).unwrap_or_default();
        agreed.truncate(length);
        Ok(agreed)
    }

    /// `texts`, items of the upstreams' page from `path` in `protobuf_json` without
    /// record labels, with the labels of the same updates in `compact_json`: the stream's
    /// page asked again in that encoding (it must hold the same updates), or each
    /// update by id for the backfilling endpoints, which answer `protobuf_json` only.
    async fn labelled(
        &self,
        path: &str,
        body: &serde_json::Value,
        texts: Vec<Box<RawValue>>,
        api: UpdateApi,
    ) -> Result<Vec<Box<RawValue>>, FollowError> {
        let refused = |problem: String| {
            FollowError(format!("the upstream's POST {path}: {problem}; nothing of the page was applied"))
        };
        let compact: Vec<Box<RawValue>> = if path == "/v2/updates" {
            let mut other = body.clone();
            other["daml_value_encoding"] = serde_json::json!("compact_json");
            let compact = self.agreed_texts(path, &other, api).await?;
            let n = texts.len().min(compact.len());
            for (typed, compact) in texts.iter().zip(&compact).take(n) {
                let (a, b) = (update_id(typed), update_id(compact));
                if a != b {
                    return Err(refused(format!(
                        "its protobuf_json page holds update {a} where its compact_json page holds {b}"
                    )));
                }
            }
            compact
        } else {
            let mut compact = Vec::with_capacity(texts.len());
            for text in &texts {
                let id = update_id(text);
                let target = format!("/v2/updates/{id}?daml_value_encoding=compact_json");
                let response = self.get_upstream(&target).await?;
                let item: Box<RawValue> = super::read(Side::Upstream, &target, &response)?;
                compact.push(item);
            }
            compact
        };
        let mut out = Vec::with_capacity(texts.len());
        for (typed, compact) in texts.into_iter().zip(compact) {
            let mut typed: serde_json::Value =
                serde_json::from_str(typed.get()).map_err(|e| refused(format!("an item that is not JSON: {e}")))?;
            let compact: serde_json::Value =
                serde_json::from_str(compact.get()).map_err(|e| refused(format!("an item that is not JSON: {e}")))?;
            super::labels::label_update(&mut typed, &compact).map_err(refused)?;
            let text = serde_json::to_string(&typed).map_err(|e| refused(e.to_string()))?;
            out.push(RawValue::from_string(text).map_err(|e| refused(e.to_string()))?);
        }
        Ok(out)
    }

    /// Up to `count` consecutive stream pages after `after`, prepared; fewer at the
    /// end of the stream.
    pub(super) async fn prepare_pages(
        &self,
        mut after: Option<Position>,
        count: usize,
    ) -> Result<Vec<Prepared>, FollowError> {
        let mut pages = Vec::with_capacity(count);
        while pages.len() < count {
            let Some(page) = self.prepare(after.as_ref()).await? else { break };
            after = Some(page.position.clone());
            pages.push(page);
        }
        Ok(pages)
    }

    /// Applies the batches of one or two stream pages here, at once when there are two
    /// (the first sent first), and says what each did.
    pub(super) async fn ingest_pages(&self, mut batches: Vec<Vec<u8>>) -> Vec<Result<Summary, FollowError>> {
        const WHAT: &str = "a page of the upstream's POST /v2/updates";
        match (batches.pop(), batches.pop()) {
            (Some(second), Some(first)) => {
                let (first, second) = join(self.ingest(first, WHAT), self.ingest(second, WHAT)).await;
                alloc::vec![first, second]
            }
            (Some(only), None) => alloc::vec![self.ingest(only, WHAT).await],
            _ => Vec::new(),
        }
    }

    /// The upstream's stream page after `after`, cut where its migration id changes,
    /// prepared for ingest; `None` at the end of the stream.
    async fn prepare(&self, after: Option<&Position>) -> Result<Option<Prepared>, FollowError> {
        let page = self.stream_page(after).await?;
        let Some(migration_id) = page.first().map(|item| item.update.migration_id()) else { return Ok(None) };
        let page: Vec<Item> = page.into_iter().take_while(|item| item.update.migration_id() == migration_id).collect();
        let Some(position) = page.last().map(|item| Position {
            after_migration_id: migration_id,
            after_record_time: item.update.record_time().to_string(),
        }) else {
            return Ok(None);
        };
        Ok(Some(Prepared { migration_id, position, batch: self.with_blobs(page).await? }))
    }

    /// `items` as one ingest batch, with the blobs the upstream holds for their created
    /// events: filled in (export mode), or as `blob` records after the updates (public
    /// mode). An item none of whose events has a blob filled in goes as the upstream
    /// sent it: it is already an ingest record.
    ///
    /// The upstream holds blobs of active contracts only, and it has applied every
    /// update of the page: a contract that an update of the page archives has none
    /// there, and is not asked for. Most contracts live briefly, so this leaves few.
    pub(super) async fn with_blobs(&self, mut items: Vec<Item>) -> Result<Vec<u8>, FollowError> {
        let archived: BTreeSet<String> =
            items.iter().flat_map(|item| archived_contracts(&item.update)).map(ToOwned::to_owned).collect();
        let ids: Vec<String> = items
            .iter_mut()
            .flat_map(|item| item.update.created_events_mut())
            .filter(|e| e.created_event_blob.is_none() && !archived.contains(&e.contract_id))
            .map(|e| e.contract_id.clone())
            .collect();
        // Public mode: what the upstreams disclose goes as `blob` records after the
        // page's updates, which are sent as the upstream streamed them, without blobs:
        // so an update held is the same whenever its page is asked again, and the blob
        // of a contract the page created is given to it whatever the page did after
        // (one the page archived takes none). Export mode: the blobs go in the events.
        let mut blobs = BTreeMap::new();
        let mut disclosed = BTreeMap::new();
        if self.public {
            self.disclose(&items, &ids).await?;
            let held = self.blobs.borrow();
            disclosed.extend(ids.iter().filter_map(|id| held.get(id).map(|blob| (id.clone(), blob.clone()))));
        }
        let export_ids = if self.public { &[][..] } else { &ids[..] };
        for chunk in export_ids.chunks(export::MAX_CONTRACT_IDS) {
            let body = to_vec(&serde_json::json!({ "contract_ids": chunk }))?;
            let found: Blobs = self.call(Side::Upstream, "/v0/admin/export/blobs", body).await?;
            for blob in found.blobs {
                let parsed = Blob::parse(&blob.created_event_blob).map_err(|e| {
                    FollowError(format!(
                        "the upstream's POST /v0/admin/export/blobs answered a malformed blob for contract {}: {e:?}",
                        blob.contract_id
                    ))
                })?;
                blobs.insert(blob.contract_id, parsed);
            }
        }
        // Public mode: the parties the page shows, on the synchronizers seen, that this
        // node holds no hosting of yet are marked to be learned ([`super::hosting`]).
        let mut seen = Vec::new();
        if self.public {
            let mut book = self.hosting.borrow_mut();
            for item in &items {
                seen.extend(book.see(&item.update));
            }
        }
        let mut batch = String::with_capacity(items.iter().map(|item| item.text.get().len() + 12).sum());
        for item in &mut items {
            let mut filled = false;
            for event in item.update.created_events_mut() {
                if event.created_event_blob.is_none()
                    && let Some(blob) = blobs.get(&event.contract_id)
                {
                    event.created_event_blob = Some(blob.clone());
                    filled = true;
                }
            }
            batch.push_str("{\"update\":");
            if filled {
                batch.push_str(&item.update.ingest_text());
            } else {
                batch.push_str(item.text.get());
            }
            batch.push_str("}\n");
        }
        let mut batch = batch.into_bytes();
        for key in &seen {
            batch.extend(super::hosting::seen_line(key)?);
            batch.push(b'\n');
        }
        for (contract_id, blob) in disclosed {
            let record = BlobRecord { contract_id, news: BlobNews::Blob(blob) };
            batch.extend(super::record_line("blob", &record.to_json())?);
            batch.push(b'\n');
        }
        Ok(batch)
    }
}

/// `text` on one line, since an ingest batch is a record a line. A JSON text breaks lines
/// only between its tokens (a string holds its line breaks escaped), and a space there
/// reads the same; an upstream that answers indented JSON is followed like any other.
fn on_one_line(text: Box<RawValue>) -> Box<RawValue> {
    if !text.get().contains(['\n', '\r']) {
        return text;
    }
    RawValue::from_string(text.get().replace(['\n', '\r'], " ")).unwrap_or(text)
}

/// The `update_id` of an item, empty when it has none (the parsers name that).
fn update_id(text: &RawValue) -> String {
    #[derive(serde::Deserialize)]
    struct Id {
        #[serde(default)]
        update_id: String,
    }
    serde_json::from_str::<Id>(text.get()).map(|id| id.update_id).unwrap_or_default()
}

/// The contracts that `update` archives: those of its consuming exercised events.
fn archived_contracts(update: &Update) -> impl Iterator<Item = &str> {
    update.as_transaction().into_iter().flat_map(|t| t.events_by_id.values()).filter_map(|event| match event {
        Event::Exercised(exercised) if exercised.consuming => Some(exercised.contract_id.as_str()),
        _ => None,
    })
}

/// A version-1 item as a stream item: a transaction (an item without an `event`)
/// without its first `offset` entry. Any other item, and text that is not a JSON
/// object, is returned as it is, for the item parsers to take or to name what is
/// wrong with it; every other entry, a repeated key included, is kept, so those
/// parsers see everything else the upstream sent.
pub(super) fn without_offset(text: Box<RawValue>) -> Box<RawValue> {
    let Ok(Entries(mut entries)) = serde_json::from_str::<Entries>(text.get()) else { return text };
    let offset = entries.iter().position(|(key, _)| key == "offset");
    let (Some(offset), false) = (offset, entries.iter().any(|(key, _)| key == "event")) else { return text };
    entries.remove(offset);
    let mut object = Vec::with_capacity(text.get().len());
    object.push(b'{');
    for (n, (key, value)) in entries.iter().enumerate() {
        if n > 0 {
            object.push(b',');
        }
        write_str(&mut object, key);
        object.push(b':');
        object.extend_from_slice(value.get().as_bytes());
    }
    object.push(b'}');
    String::from_utf8(object).ok().and_then(|object| RawValue::from_string(object).ok()).unwrap_or(text)
}

/// A JSON object's entries in their order, values as text, a repeated key repeated.
struct Entries(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Object;
        impl<'de> Visitor<'de> for Object {
            type Value = Entries;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, Box<RawValue>>()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(Object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.into()).expect("JSON")
    }

    #[test]
    fn a_version_1_transaction_loses_its_offset_and_nothing_else() {
        let v1 = r#"{"offset":"000000000000000001","update_id":"u\"1","events_by_id":{"offset":1}}"#;
        assert_eq!(without_offset(item(v1)).get(), r#"{"update_id":"u\"1","events_by_id":{"offset":1}}"#);
        let without = r#"{"update_id":"u1","events_by_id":{}}"#;
        assert_eq!(without_offset(item(without)).get(), without);
    }

    #[test]
    fn a_reassignment_keeps_its_offset_and_a_repeated_key_stays_for_the_parsers_to_refuse() {
        let reassignment = r#"{"update_id":"r1","offset":"41","record_time":"t","event":{}}"#;
        assert_eq!(without_offset(item(reassignment)).get(), reassignment);
        let repeated = r#"{"offset":"1","update_id":"u1","offset":"2","update_id":"u2"}"#;
        assert_eq!(without_offset(item(repeated)).get(), r#"{"update_id":"u1","offset":"2","update_id":"u2"}"#);
        assert_eq!(without_offset(item("[1, 2]")).get(), "[1, 2]");
    }

    #[test]
    fn an_item_is_put_on_one_line_and_its_strings_are_kept() {
        let indented = "{\r\n  \"update_id\": \"u\\n1\",\n  \"events\": [\n    1\n  ]\n}";
        let flat = on_one_line(item(indented));
        assert!(!flat.get().contains(['\n', '\r']), "{}", flat.get());
        let read = |text: &str| serde_json::from_str::<serde_json::Value>(text).expect("JSON");
        assert_eq!(read(flat.get()), read(indented));
        assert_eq!(on_one_line(item(r#"{"a":1}"#)).get(), r#"{"a":1}"#);
    }
}
