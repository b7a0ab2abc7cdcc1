//! The participant hosting a party (spec 4.9) and the planned roll-forward upgrade
//! (spec 4.10), both read straight from what the network records set
//! ([`crate::network`]): one get each.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::error::Error;
use crate::http::Response;
use crate::ids;
use crate::network;
use crate::store::Store;

/// `GET /v0/domains/{domain_id}/parties/{party_id}/participant-id`: 1 read.
///
/// Several hosting participants are a 500 whose message is sent
/// ([`Error::Unsupported`]): the spec declares this case a failure of the call, and
/// the client must learn why.
pub async fn participant<S: Store>(store: &S, domain_id: &str, party_id: &str) -> Result<Response, Error> {
    let domain_id = ids::path_id(domain_id, "domain_id")?;
    let party_id = ids::path_id(party_id, "party_id")?;
    let participants: Vec<String> = match store.get(&network::hosting_key(&domain_id, &party_id)).await? {
        Some(bytes) => {
            serde_json::from_slice(&bytes).map_err(|e| Error::Internal(format!("an unreadable hosting record: {e}")))?
        }
        None => Vec::new(),
    };
    match participants.as_slice() {
        [] => Err(Error::NotFound(format!(
            "party {party_id} is not hosted by any participant on synchronizer {domain_id}"
        ))),
        [one] => Ok(Response::ok(&serde_json::json!({ "participant_id": one }))),
        several => Err(Error::Unsupported(format!(
            "party {party_id} is hosted by {} participants on synchronizer {domain_id}; several hosting participants are not supported",
            several.len()
        ))),
    }
}

/// `GET /v0/roll-forward-lsu`: 1 read. `{}` when no upgrade is planned.
pub async fn roll_forward<S: Store>(store: &S) -> Result<Response, Error> {
    let body = match store.get(&network::roll_forward_key()).await? {
        Some(plan) => {
            let mut body = Vec::with_capacity(plan.len() + 20);
            body.extend_from_slice(b"{\"rollForwardLsu\":");
            body.extend_from_slice(&plan);
            body.push(b'}');
            body
        }
        None => b"{}".to_vec(),
    };
    Ok(Response::json(200, body))
}
