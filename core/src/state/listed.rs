//! Contracts as list elements (`Contract` in the OpenAPI document), rendered once at ingest.
//!
//! A list endpoint stores each element's JSON in its index entry and answers by
//! joining the stored bytes: `{"<field>":[e1,e2,..]}`.

use alloc::vec::Vec;

use serde::Serialize;

use crate::model::error::Error;
use crate::model::time::Timestamp;
use crate::state::ledger::{Archived, ContractRecord, contracts};
use crate::storage::stage::Stage;
use crate::storage::store::Store;

/// One element of a contract list.
#[derive(Debug, Serialize)]
struct Listed<'a> {
    template_id: &'a str,
    contract_id: &'a str,
    payload: &'a serde_json::Value,
    created_event_blob: &'a str,
    created_at: &'a str,
}

/// A contract, as a list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedContract {
    /// Its creation time.
    pub created_at: Timestamp,
    /// Its payload in `compact_json`.
    pub payload: serde_json::Value,
    /// Its rendering as a list element.
    pub json: Vec<u8>,
}

impl ListedContract {
    /// `record` (of `contract_id`) as a list element; `None` before its creation is
    /// held. Whether it is still active is the caller's question. A rendering that
    /// fails is an error for the batch, never an empty element in the store.
    pub fn of(contract_id: &str, record: &ContractRecord) -> Result<Option<Self>, Error> {
        let Some(created) = record.created.as_ref() else { return Ok(None) };
        let listed = Listed {
            template_id: &record.template_id,
            contract_id,
            payload: &created.payload,
            created_event_blob: &created.blob,
            created_at: &created.created_at,
        };
        // The record's creation time was written from a parsed timestamp.
        let Ok(created_at) = Timestamp::parse(&created.created_at) else { return Ok(None) };
        let json = serde_json::to_vec(&listed)
            .map_err(|e| Error::Internal(alloc::format!("rendering contract {contract_id} as a list element: {e}")))?;
        Ok(Some(ListedContract { created_at, payload: created.payload.clone(), json }))
    }

    /// The text at `labels` of the compact payload (record fields by label).
    pub fn payload_text(&self, labels: &[&str]) -> Option<&str> {
        labels.iter().try_fold(&self.payload, |value, label| value.get(label))?.as_str()
    }
}

/// The record of `contract_id` as the batch sees it; for a contract the update
/// archived (`archived`), the record it had, with its creation, marked archived.
pub async fn read_record<S: Store>(
    stage: &mut Stage<'_, S>,
    contract_id: &str,
    archived: &Archived<'_>,
) -> Result<Option<ContractRecord>, Error> {
    let parse = |bytes: &[u8]| {
        serde_json::from_slice::<ContractRecord>(bytes)
            .map_err(|e| Error::Internal(alloc::format!("contract {contract_id}: unreadable record: {e}")))
    };
    if let Some(before) = archived.record(contract_id) {
        return parse(before).map(|record| Some(ContractRecord { archived: true, ..record }));
    }
    match stage.get(&contracts::contract_key(contract_id)).await? {
        Some(bytes) => parse(&bytes).map(Some),
        None => Ok(None),
    }
}

/// `{"<field>":[..]}` from already rendered elements.
pub fn render_list(field: &str, elements: impl IntoIterator<Item = Vec<u8>>) -> Vec<u8> {
    let mut body = Vec::with_capacity(64);
    body.extend_from_slice(b"{\"");
    body.extend_from_slice(field.as_bytes());
    body.extend_from_slice(b"\":[");
    for (index, element) in elements.into_iter().enumerate() {
        if index > 0 {
            body.push(b',');
        }
        body.extend_from_slice(&element);
    }
    body.extend_from_slice(b"]}");
    body
}

/// A contract record, for tests.
#[cfg(test)]
pub(crate) fn record(template_id: &str, payload: serde_json::Value, created_at: &str) -> ContractRecord {
    let record = serde_json::json!({
        "template_id": template_id,
        "created": { "payload": payload, "created_at": created_at, "blob": "", "synchronizer_id": "sync", "import": false },
    });
    serde_json::from_value(record).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;

    #[test]
    fn an_active_contract_renders_as_spec_2_6() {
        let record = record("pkg:M:T", serde_json::json!({"sv": "sv1", "n": "3"}), "2024-01-01T00:00:00.000000Z");
        let listed = ListedContract::of("c1", &record).unwrap().unwrap();
        assert_eq!(
            String::from_utf8(listed.json.clone()).unwrap(),
            r#"{"template_id":"pkg:M:T","contract_id":"c1","payload":{"sv":"sv1","n":"3"},"created_event_blob":"","created_at":"2024-01-01T00:00:00.000000Z"}"#
        );
        assert_eq!(listed.payload_text(&["sv"]), Some("sv1"));
        assert_eq!(listed.payload_text(&["missing"]), None);
        assert_eq!(render_list("xs", [b"1".to_vec(), b"2".to_vec()]), br#"{"xs":[1,2]}"#);
        assert_eq!(render_list("xs", []), br#"{"xs":[]}"#);
    }

    #[test]
    fn a_contract_whose_creation_is_not_held_has_no_rendering() {
        let mut record = record("pkg:M:T", serde_json::json!({}), "2024-01-01T00:00:00.000000Z");
        record.created = None;
        assert_eq!(ListedContract::of("c1", &record), Ok(None));
    }
}
