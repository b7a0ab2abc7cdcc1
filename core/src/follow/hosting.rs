//! Party hosting in public mode: learned from the upstreams, one party at a time.
//!
//! The network's Scan has no endpoint that lists hosting, only
//! `GET /v0/domains/{domain_id}/parties/{party_id}/participant-id` for one party
//! (`getPartyToParticipant` of `HttpScanHandler.scala` in `hyperledger-labs/splice`:
//! `{"participant_id": ..}`, a 404 when no participant hosts the party, a 500 when
//! several do). This node answers that read from its store alone, so a public follower
//! learns hosting ahead of the reads:
//!
//! - **Which parties.** Every party it sees as a signatory or observer of a contract an
//!   applied page creates (transactions, assignments, import updates and backfilled
//!   history alike), on every synchronizer it has seen: the DSO party, the SVs, the
//!   validators and their users, the receivers of preapprovals, as a network's hosting
//!   records name them. Those are the parties a validator and a wallet ask about (the
//!   receiving validator of a traffic purchase, the DSO party, the parties of their own
//!   contracts). A newly seen pair is written in the same ingest batch as the page
//!   that shows it, as a hosting learned at the earliest time (a hosting record with
//!   `learned_at` `0001-01-01T00:00:00.000000Z` and no participants), so it is due at
//!   once and is not lost if the follower stops before asking.
//! - **When.** At the end of every call, whatever the page budget left: the held
//!   hostings learned before now minus [`super::Limits::hosting_lifetime_seconds`]
//!   are asked again, the oldest first, at most [`super::Limits::hosting_lookups`] of
//!   them a call. Each answer is what enough upstreams answered alike
//!   ([`super::quorum`]), as for every other answer.
//! - **What is kept.** A 200 names the participant; a 404 (or a 400: the upstreams
//!   cannot read the id) is remembered as "not hosted", so that party is not asked
//!   again before its lifetime ends either; a 500 (several participants) is asked
//!   again of the upstreams' `/v1/...participant-id`, which this node serves with the
//!   whole list, and when that answers nothing the hosting held is kept as it was.
//!   All the answers of a call are one ingest batch of hosting records with
//!   `learned_at` = [`super::Limits::now`].
//!
//! The hostings this node holds are read at the start of every call in public mode
//! (its export state's pages of hosting records, 1,000 a page), so that the pairs
//! already held are not marked again and the due ones are known.
//!
//! So a party's hosting answer lags the upstreams' by at most the lifetime plus the
//! time between two calls, while the hostings due fit the lookups of a call; a
//! hosting the network records (one without `learned_at`, from ingest or a follower
//! with a token) is never asked.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::{FollowError, Follower, Link, Side, record_line};
use crate::api::export::{Hosting, HostingKey, State};
use crate::api::http::Response;
use crate::model::time::Timestamp;
use crate::model::update::{ReassignmentEvent, Update};

/// The hostings this node holds, as one call of the follower knows them.
#[derive(Debug, Default)]
pub(super) struct HostingBook {
    /// Every hosting held: when it was learned (`None`: one the network records).
    held: BTreeMap<HostingKey, Option<Timestamp>>,
    /// The parties seen.
    parties: BTreeSet<String>,
    /// The synchronizers seen.
    synchronizers: BTreeSet<String>,
}

impl HostingBook {
    /// Takes in a page of this node's hosting records.
    fn hold(&mut self, page: &[Hosting]) -> Result<(), FollowError> {
        for hosting in page {
            let learned_at = match &hosting.learned_at {
                None => None,
                Some(text) => Some(Timestamp::parse(text).map_err(|e| {
                    FollowError(format!(
                        "this node's hosting of {} on {} was learned at {text:?}, which is not a time: {e}",
                        hosting.party_id, hosting.synchronizer_id
                    ))
                })?),
            };
            self.parties.insert(hosting.party_id.clone());
            self.synchronizers.insert(hosting.synchronizer_id.clone());
            self.held.insert(hosting.key(), learned_at);
        }
        Ok(())
    }

    /// Notes the parties and synchronizers `update` shows; the pairs of a party and a
    /// synchronizer not held before, to be marked as seen.
    pub(super) fn see(&mut self, update: &Update) -> Vec<HostingKey> {
        let mut synchronizers: Vec<&str> = Vec::new();
        let mut parties: BTreeSet<&str> = BTreeSet::new();
        match update {
            Update::Transaction(tx) => synchronizers.push(&tx.synchronizer_id),
            Update::Reassignment(r) => match &r.event {
                ReassignmentEvent::Assignment(a) => {
                    synchronizers.extend([a.source_synchronizer.as_str(), a.target_synchronizer.as_str()]);
                }
                ReassignmentEvent::Unassignment(u) => {
                    synchronizers.extend([u.source_synchronizer.as_str(), u.target_synchronizer.as_str()]);
                }
            },
        }
        for created in update.created_events() {
            parties.extend(created.signatories.iter().map(String::as_str));
            parties.extend(created.observers.iter().map(String::as_str));
        }
        let mut new = Vec::new();
        for synchronizer in synchronizers {
            if self.synchronizers.insert(synchronizer.into()) {
                for party in &self.parties {
                    new.push(HostingKey { synchronizer_id: synchronizer.into(), party_id: party.clone() });
                }
            }
        }
        for party in parties {
            if self.parties.insert(party.into()) {
                for synchronizer in &self.synchronizers {
                    new.push(HostingKey { synchronizer_id: synchronizer.clone(), party_id: party.into() });
                }
            }
        }
        new.retain(|key| !self.held.contains_key(key));
        new.sort();
        new.dedup();
        for key in &new {
            self.held.insert(key.clone(), Some(Timestamp::MIN));
        }
        new
    }

    /// The learned hostings held that were learned before `before`, oldest first, at
    /// most `most`.
    fn due(&self, before: Timestamp, most: usize) -> Vec<HostingKey> {
        let mut due: Vec<(Timestamp, &HostingKey)> =
            self.held.iter().filter_map(|(key, at)| at.filter(|at| *at < before).map(|at| (at, key))).collect();
        due.sort();
        due.into_iter().take(most).map(|(_, key)| key.clone()).collect()
    }
}

/// The ingest line marking `key` as seen: a hosting learned at the earliest time, with
/// no participant.
pub(super) fn seen_line(key: &HostingKey) -> Result<Vec<u8>, FollowError> {
    record_line("topology", &learned(key, Vec::new(), Timestamp::MIN))
}

fn learned(key: &HostingKey, participant_ids: Vec<String>, at: Timestamp) -> Hosting {
    Hosting {
        synchronizer_id: key.synchronizer_id.clone(),
        party_id: key.party_id.clone(),
        participant_ids,
        learned_at: Some(at.to_string()),
    }
}

impl<U: Link, L: Link> Follower<'_, U, L> {
    /// Takes in every hosting this node holds, starting with `first`, the first page
    /// of its export state.
    pub(super) async fn load_hosting(&self, first: &State) -> Result<(), FollowError> {
        self.hosting.borrow_mut().hold(&first.topology)?;
        let mut next = first.topology_next.clone();
        while let Some(after) = next {
            let page = self.state(Side::Local, Some(&after)).await?;
            if page.topology.first().is_some_and(|first| first.key() <= after) {
                return Err(FollowError("this node's hosting records page back".into()));
            }
            self.hosting.borrow_mut().hold(&page.topology)?;
            next = page.topology_next;
        }
        Ok(())
    }

    /// Asks the upstreams the hostings that are due (see the module docs) and applies
    /// what they said.
    pub(super) async fn learn_hosting(&mut self) -> Result<(), FollowError> {
        let now = self.limits.now;
        let lifetime =
            i64::try_from(self.limits.hosting_lifetime_seconds.saturating_mul(1_000_000)).unwrap_or(i64::MAX);
        let before = Timestamp::from_micros(now.micros().saturating_sub(lifetime)).unwrap_or(Timestamp::MIN);
        let due = self.hosting.borrow().due(before, self.limits.hosting_lookups as usize);
        let mut lines = Vec::with_capacity(due.len());
        for key in &due {
            if let Some(participant_ids) = self.participants(key).await? {
                lines.push(record_line("topology", &learned(key, participant_ids, now))?);
                self.hosting.borrow_mut().held.insert(key.clone(), Some(now));
            }
        }
        if lines.is_empty() {
            return Ok(());
        }
        let applied = self.ingest(lines.join(&b'\n'), "the hostings learned from the upstreams").await?;
        self.report.summary.add(&applied);
        Ok(())
    }

    /// The participants the upstreams say host `key`'s party on its synchronizer;
    /// `None` when they cannot say which (several, and no list of them).
    async fn participants(&self, key: &HostingKey) -> Result<Option<Vec<String>>, FollowError> {
        let path = |version: &str| {
            format!(
                "/{version}/domains/{}/parties/{}/participant-id",
                segment(&key.synchronizer_id),
                segment(&key.party_id)
            )
        };
        let v0 = path("v0");
        let response = self.get_upstream(&v0).await?;
        match response.status {
            200 => {
                #[derive(serde::Deserialize)]
                struct One {
                    participant_id: String,
                }
                let one: One = super::read(Side::Upstream, &v0, &response)?;
                Ok(Some(alloc::vec![one.participant_id]))
            }
            400 | 404 => Ok(Some(Vec::new())),
            500 => {
                let v1 = path("v1");
                let response = self.get_upstream(&v1).await?;
                if response.status != 200 {
                    return Ok(None);
                }
                #[derive(serde::Deserialize)]
                struct Several {
                    participant_ids: Vec<String>,
                }
                let several: Several = super::read(Side::Upstream, &v1, &response)?;
                Ok(Some(several.participant_ids))
            }
            _ => Err(refused(&v0, &response)),
        }
    }
}

fn refused(target: &str, response: &Response) -> FollowError {
    FollowError(format!("the upstream answered GET {target} with {}: {}", response.status, super::error_text(response)))
}

/// `id` as one segment of a request path: percent-encoded but for the characters a
/// segment may hold as they are (RFC 3986's unreserved characters and `:`).
pub(super) fn segment(id: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(id.len());
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~:".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xf)]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_percent_encoded_as_path_segments() {
        assert_eq!(segment("alice::1220ab"), "alice::1220ab");
        assert_eq!(segment("a/b c?d%é"), "a%2Fb%20c%3Fd%25%C3%A9");
    }

    #[test]
    fn a_party_seen_on_a_new_synchronizer_is_due_there_and_everywhere_else_seen() {
        let mut book = HostingBook::default();
        let held = Hosting {
            synchronizer_id: "s1".into(),
            party_id: "p1".into(),
            participant_ids: alloc::vec!["n1".into()],
            learned_at: None,
        };
        book.hold(&[held]).expect("a page");
        let key = |s: &str, p: &str| HostingKey { synchronizer_id: s.into(), party_id: p.into() };
        // p1 is held on s1 from a network record: it is never due.
        assert!(book.due(Timestamp::MAX, 10).is_empty());
        let transaction = |synchronizer: &str, party: &str| {
            let json = serde_json::json!({
                "update_id": "u", "migration_id": 0, "workflow_id": "", "record_time": "2024-01-01T00:00:00Z",
                "synchronizer_id": synchronizer, "effective_at": "2024-01-01T00:00:00Z", "root_event_ids": ["u:0"],
                "events_by_id": {"u:0": {
                    "event_type": "created_event", "event_id": "u:0", "contract_id": "c", "template_id": "p:M:T",
                    "package_name": "p", "create_arguments": {"record": {"fields": []}},
                    "created_at": "2024-01-01T00:00:00Z", "signatories": [party], "observers": ["p1"]
                }}
            });
            Update::parse(&crate::model::json::Json::from(&json)).expect("a transaction")
        };
        assert_eq!(book.see(&transaction("s2", "p2")), [key("s1", "p2"), key("s2", "p1"), key("s2", "p2")]);
        assert!(book.see(&transaction("s2", "p2")).is_empty(), "seen once");
        assert_eq!(book.due(Timestamp::UNIX_EPOCH, 2), [key("s1", "p2"), key("s2", "p1")], "at most 2");
        assert!(book.due(Timestamp::MIN, 2).is_empty(), "learned before, strictly");
    }
}
