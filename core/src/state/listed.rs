//! Contracts as list elements (`Contract` in the OpenAPI document), rendered once at ingest.
//!
//! A list endpoint stores each element's JSON in its index entry and answers by
//! joining the stored bytes: `{"<field>":[e1,e2,..]}`.

use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::model::error::Error;
use crate::model::json::short::ShortText;
use crate::model::time::Timestamp;
use crate::state::ledger::{Archived, ContractRecord, Creation, contracts};
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
    /// The synchronizer it was created on (or first assigned to).
    pub synchronizer_id: String,
    /// Whether it is still active; else the update being applied archived it.
    pub active: bool,
}

impl ListedContract {
    /// `contract_id`, created as `creation`, as a list element. A rendering that fails
    /// is an error for the batch, never an empty element in the store.
    pub fn of(contract_id: &str, creation: &Creation, active: bool) -> Result<Self, Error> {
        let created_at = creation.created_at.short_text();
        let listed = Listed {
            template_id: creation.template_id.as_str(),
            contract_id,
            payload: &creation.payload,
            created_event_blob: creation.blob.as_ref().map_or("", |blob| blob.as_str()),
            created_at: created_at.as_str(),
        };
        let json = serde_json::to_vec(&listed)
            .map_err(|e| Error::Internal(alloc::format!("rendering contract {contract_id} as a list element: {e}")))?;
        Ok(ListedContract {
            created_at: creation.created_at,
            payload: creation.payload.clone(),
            json,
            synchronizer_id: creation.synchronizer_id.clone(),
            active,
        })
    }

    /// `contract_id` as the batch sees it: active, or archived by the update being
    /// applied (`archived`), which hands over the creation its record no longer keeps.
    /// `None` when its creation is not held, or it was archived before.
    pub async fn read<S: Store>(
        stage: &mut Stage<'_, S>,
        contract_id: &str,
        archived: &Archived<'_>,
    ) -> Result<Option<Self>, Error> {
        if let Some(creation) = archived.creation(contract_id) {
            return Self::of(contract_id, creation, false).map(Some);
        }
        let Some(bytes) = stage.get(&contracts::contract_key(contract_id)).await? else { return Ok(None) };
        match contracts::decode(contract_id, &bytes)? {
            ContractRecord::Created(creation) => Self::of(contract_id, &creation, true).map(Some),
            ContractRecord::Archived => Ok(None),
        }
    }

    /// The text at `labels` of the compact payload (record fields by label).
    pub fn payload_text(&self, labels: &[&str]) -> Option<&str> {
        labels.iter().try_fold(&self.payload, |value, label| value.get(label))?.as_str()
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

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;

    /// A creation of template `template_id`, without a blob.
    fn creation(template_id: &str, payload: serde_json::Value, created_at: &str) -> Creation {
        Creation {
            template_id: crate::model::update::TemplateId::parse(template_id).unwrap(),
            payload,
            created_at: Timestamp::parse(created_at).unwrap(),
            blob: None,
            synchronizer_id: "sync".into(),
            import: false,
            package_name: "pkg".into(),
        }
    }

    #[test]
    fn an_active_contract_renders_as_spec_2_6() {
        let creation = creation("pkg:M:T", serde_json::json!({"sv": "sv1", "n": "3"}), "2024-01-01T00:00:00Z");
        let listed = ListedContract::of("c1", &creation, true).unwrap();
        assert_eq!(
            String::from_utf8(listed.json.clone()).unwrap(),
            r#"{"template_id":"pkg:M:T","contract_id":"c1","payload":{"sv":"sv1","n":"3"},"created_event_blob":"","created_at":"2024-01-01T00:00:00.000000Z"}"#
        );
        assert_eq!(listed.payload_text(&["sv"]), Some("sv1"));
        assert_eq!(listed.payload_text(&["missing"]), None);
        assert_eq!(render_list("xs", [b"1".to_vec(), b"2".to_vec()]), br#"{"xs":[1,2]}"#);
        assert_eq!(render_list("xs", []), br#"{"xs":[]}"#);
    }
}
