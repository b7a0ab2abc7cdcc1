//! `GET /v{1,2}/updates/{update_id}`: one update, as the ledger stored it
//! ([`crate::state::ledger::updates`]), in the encoding asked for. The history stream
//! serves its items in the same shapes (`response_body`).

use alloc::vec::Vec;

use super::agreeing;
use crate::api::http::{Response, query_param};
use crate::api::route::UpdateApi;
use crate::model::error::Error;
use crate::model::ids::{PathParam, UpdateId};
use crate::model::value::Encoding;
use crate::state::ledger::updates::{self, TRANSACTION};
use crate::storage::store::Store;

/// The `offset` that version 1 of the endpoint reports for every transaction.
const V1_OFFSET: &[u8] = br#""offset":"000000000000000001","#;

/// `GET /v{1,2}/updates/{update_id}?ledger_value_encoding=...`
pub async fn get<S: Store>(
    store: &S,
    api: UpdateApi,
    update_id: PathParam<UpdateId>,
    query: &str,
) -> Result<Response, Error> {
    let update_id = update_id?;
    let encoding = encoding(query)?;
    let stored = updates::bodies(store, &[&*update_id], encoding)
        .await?
        .pop()
        .flatten()
        .ok_or_else(|| Error::NotFound(alloc::format!("update {update_id} not found")))?;
    let body = response_body(stored, api)
        .ok_or_else(|| Error::Internal(alloc::format!("stored update {update_id} is unreadable")))?;
    Ok(Response::json(200, body))
}

/// The requested value encoding: `ledger_value_encoding`, or its alias
/// `daml_value_encoding`; `compact_json` when neither is given. Each one given must
/// name an encoding, and both the same one.
fn encoding(query: &str) -> Result<Encoding, Error> {
    let mut chosen = None;
    for name in ["ledger_value_encoding", "daml_value_encoding"] {
        let Some(value) = query_param(query, name)? else {
            continue;
        };
        let encoding = Encoding::parse(&value).ok_or_else(|| {
            Error::BadRequest(alloc::format!("{name} must be compact_json or protobuf_json, not {value:?}"))
        })?;
        chosen = Some(agreeing(chosen, name, encoding)?);
    }
    Ok(chosen.map_or(Encoding::CompactJson, |(_, encoding)| encoding))
}

/// The response body for API version `api` from a rendered `[body][kind]`
/// ([`updates::bodies`]).
pub(crate) fn response_body(mut stored: Vec<u8>, api: UpdateApi) -> Option<Vec<u8>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::json::Json;
    use crate::model::update::Update;

    /// `update`'s rendered `[body][kind]` in `encoding`.
    fn stored(update: &Update, encoding: Encoding) -> Vec<u8> {
        updates::render(&update.to_binary(), encoding).expect("a form renders")
    }

    /// A transaction creating one contract.
    fn transaction() -> Update {
        Update::parse(&Json::from(&serde_json::json!({
            "update_id": "u", "migration_id": 0, "workflow_id": "", "record_time": "2024-01-01T00:00:00Z",
            "synchronizer_id": "s", "effective_at": "2024-01-01T00:00:00Z", "root_event_ids": ["u:0"],
            "events_by_id": {"u:0": {
                "event_type": "created_event", "event_id": "u:0", "contract_id": "c", "template_id": "p:M:T",
                "package_name": "p", "create_arguments": {"record": {"fields": []}},
                "created_at": "2024-01-01T00:00:00Z", "signatories": [], "observers": []
            }}
        })))
        .expect("a valid transaction")
    }

    #[test]
    fn version_1_puts_the_legacy_offset_first_in_transactions() {
        let update = transaction();
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
