//! The participants hosting a party and the planned roll-forward upgrade, both read straight from what the network records set
//! ([`crate::state::network`]): one get each.
//!
//! | endpoint | answer |
//! |---|---|
//! | `GET /v0/domains/{d}/parties/{p}/participant-id` | `{"participant_id": id}`; several hosting participants are a 500 that says so |
//! | `GET /v1/domains/{d}/parties/{p}/participant-id` | `{"participant_ids": [id, ...]}`, every hosting participant in the order the topology record lists them |
//!
//! Both answer 404 when no participant hosts the party on that synchronizer.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::api::http::Response;
use crate::model::error::Error;
use crate::model::ids::{PartyId, PathParam, SynchronizerId};
use crate::state::network;
use crate::storage::store::Store;

/// Who hosts a party on a synchronizer: the ids from the path, and the hosting
/// participants (at least one).
struct Hosting {
    domain_id: SynchronizerId,
    party_id: PartyId,
    participants: Vec<String>,
}

/// The participants hosting `party_id` on `domain_id` (a bad path parameter is its
/// 400, the synchronizer's first): 1 read. None is a 404.
async fn hosting<S: Store>(
    store: &S,
    domain_id: PathParam<SynchronizerId>,
    party_id: PathParam<PartyId>,
) -> Result<Hosting, Error> {
    let domain_id = domain_id?;
    let party_id = party_id?;
    let participants: Vec<String> = match store.get(&network::hosting_key(&domain_id, &party_id)).await? {
        Some(bytes) => network::StoredHosting::decode(&bytes)?.participant_ids,
        None => Vec::new(),
    };
    if participants.is_empty() {
        return Err(Error::NotFound(format!(
            "party {party_id} is not hosted by any participant on synchronizer {domain_id}"
        )));
    }
    Ok(Hosting { domain_id, party_id, participants })
}

/// `GET /v0/domains/{domain_id}/parties/{party_id}/participant-id`: 1 read.
///
/// Several hosting participants are a 500 whose message is sent
/// ([`Error::Unsupported`]): the interface declares this case a failure of the call, and
/// the client must learn why. `/v1` ([`participants`]) lists them instead.
pub async fn participant<S: Store>(
    store: &S,
    domain_id: PathParam<SynchronizerId>,
    party_id: PathParam<PartyId>,
) -> Result<Response, Error> {
    let Hosting { domain_id, party_id, participants } = hosting(store, domain_id, party_id).await?;
    match participants.as_slice() {
        [one] => Ok(Response::ok(&serde_json::json!({ "participant_id": one }))),
        several => Err(Error::Unsupported(format!(
            "party {party_id} is hosted by {} participants on synchronizer {domain_id}; several hosting participants are not supported",
            several.len()
        ))),
    }
}

/// `GET /v1/domains/{domain_id}/parties/{party_id}/participant-id`: 1 read; every
/// hosting participant, however many.
pub async fn participants<S: Store>(
    store: &S,
    domain_id: PathParam<SynchronizerId>,
    party_id: PathParam<PartyId>,
) -> Result<Response, Error> {
    let hosting = hosting(store, domain_id, party_id).await?;
    Ok(Response::ok(&serde_json::json!({ "participant_ids": hosting.participants })))
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

#[cfg(test)]
mod tests {
    use alloc::string::String;

    use super::*;
    use crate::model::config::Config;
    use crate::storage::exec::block_on;
    use crate::storage::store::MemoryStore;

    /// A node where `p::1` is hosted on `d::1` by `participants`.
    fn node(participants: &[&str]) -> MemoryStore {
        let store = MemoryStore::new();
        let record = serde_json::json!({"topology": {
            "synchronizer_id": "d::1", "party_id": "p::1", "participant_ids": participants}});
        let line = alloc::format!("{record}\n");
        block_on(crate::ingest::ingest(line.as_bytes(), &store, &Config::default())).unwrap();
        store
    }

    /// Path parameters as the router decodes them.
    fn d(raw: &str) -> PathParam<SynchronizerId> {
        SynchronizerId::from_path(raw, "domain_id")
    }
    fn p(raw: &str) -> PathParam<PartyId> {
        PartyId::from_path(raw, "party_id")
    }

    fn answer(result: Result<Response, Error>) -> (u16, String) {
        let response = result.unwrap_or_else(Error::into_response);
        (response.status, String::from_utf8(response.body).expect("a UTF-8 body"))
    }

    #[test]
    fn version_1_lists_every_hosting_participant_where_version_0_names_the_one() {
        let store = node(&["PAR::a"]);
        assert_eq!(
            answer(block_on(participant(&store, d("d::1"), p("p::1")))),
            (200, r#"{"participant_id":"PAR::a"}"#.into())
        );
        assert_eq!(
            answer(block_on(participants(&store, d("d%3A%3A1"), p("p::1")))),
            (200, r#"{"participant_ids":["PAR::a"]}"#.into())
        );
    }

    #[test]
    fn several_hosting_participants_are_listed_by_version_1_and_a_500_of_version_0() {
        let store = node(&["PAR::b", "PAR::a", "PAR::c"]);
        assert_eq!(
            answer(block_on(participants(&store, d("d::1"), p("p::1")))),
            (200, r#"{"participant_ids":["PAR::b","PAR::a","PAR::c"]}"#.into())
        );
        let (status, body) = answer(block_on(participant(&store, d("d::1"), p("p::1"))));
        assert_eq!(status, 500);
        assert!(body.contains("is hosted by 3 participants on synchronizer d::1"), "{body}");
    }

    #[test]
    fn no_hosting_is_a_404_for_both_versions() {
        for store in [MemoryStore::new(), node(&[])] {
            for result in [
                block_on(participant(&store, d("d::1"), p("p::1"))),
                block_on(participants(&store, d("d::1"), p("p::1"))),
            ] {
                let (status, body) = answer(result);
                assert_eq!(status, 404);
                assert!(body.contains("party p::1 is not hosted by any participant on synchronizer d::1"), "{body}");
            }
        }
    }
}
