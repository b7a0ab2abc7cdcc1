//! The stored buy-traffic request, its states and its keys.
//!
//! | key | value |
//! |---|---|
//! | `X user_id tracking_id` | [`BuyTrafficRecord`] (JSON): the request and what became of it |
//! | `Y request_contract_id` | the request's `X` key |
//! | `Z 'c' expires_at user_id tracking_id` | the request's `X` key, while it is created |
//! | `Z 'd' user_id tracking_id` | the request's `X` key, once completed |
//! | `Z 'f' user_id tracking_id` | the request's `X` key, once failed (expired or rejected) |
//! | `Z 'u' user_id expires_at tracking_id` | the request's `X` key, while it is created: its user's queue |
//! | `Z 'r'` | where the tick's round of the users' queues goes on: a `Z 'u'` key |
//!
//! The index entries of a request are those of its current state
//! ([`BuyTrafficRecord::index_keys`]): its status entry ([`BuyTrafficRecord::index_key`])
//! and, while it is created, its entry in its user's queue. The created entries sort by
//! expiry, so the tick finds every request due in one range scan; the queues sort by
//! user, then expiry, so the tick can take a few due requests of each user in turn
//! (see [`super::outcome`]). A created request recorded before the queues existed has
//! no queue entry; the scan by expiry still finds it.
//!
//! The jobs that read many records (the tick, the admin list) read each through
//! [`BuyTrafficRecord::from_stored`]: a record that is missing, does not parse, or holds
//! an id over [`MAX_ID_BYTES`] bytes (written before ids were
//! bounded) is skipped, and the job reports one short line naming it for the operator's
//! log instead of failing as a whole.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::model::error::Error;
use crate::model::ids::{MAX_ID_BYTES, shown};
use crate::storage::keys::{self, Key};

/// What became of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum State {
    /// Recorded; waiting for the validator's automation.
    Created,
    /// The ledger completed it (`BuyTrafficRequest_Complete`) in this update.
    Completed {
        /// The update that completed it.
        transaction_id: String,
    },
    /// The ledger rejected it (`BuyTrafficRequest_Cancel`).
    Rejected {
        /// The `reason` of the choice argument, if it had one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Expired: by the ledger (`BuyTrafficRequest_Expire`) or by the node's tick.
    Expired {
        /// Whether the ledger said so (else the node's own expiry did).
        by_ledger: bool,
    },
}

impl State {
    /// Whether the ledger decided this state; the ledger's word is final.
    pub fn is_ledger_outcome(&self) -> bool {
        match self {
            State::Created => false,
            State::Completed { .. } | State::Rejected { .. } => true,
            State::Expired { by_ledger } => *by_ledger,
        }
    }

    /// The state's `status` on the wire.
    pub fn status(&self) -> Status {
        match self {
            State::Created => Status::Created,
            State::Completed { .. } => Status::Completed,
            State::Rejected { .. } | State::Expired { .. } => Status::Failed,
        }
    }
}

/// The three statuses of the status endpoint and the admin list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// `created`
    Created,
    /// `completed`
    Completed,
    /// `failed`
    Failed,
}

impl Status {
    /// Parses a `status` query value.
    pub fn parse(text: &str) -> Option<Status> {
        match text {
            "created" => Some(Status::Created),
            "completed" => Some(Status::Completed),
            "failed" => Some(Status::Failed),
            _ => None,
        }
    }

    /// As on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Created => "created",
            Status::Completed => "completed",
            Status::Failed => "failed",
        }
    }

    /// The byte that tags this status's index entries.
    fn tag(self) -> u8 {
        match self {
            Status::Created => b'c',
            Status::Completed => b'd',
            Status::Failed => b'f',
        }
    }

    /// The prefix of every index entry of this status.
    pub fn index_prefix(self) -> Vec<u8> {
        Key::new(keys::WALLET_INDEX).byte(self.tag()).into_bytes()
    }
}

/// A recorded buy-traffic request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuyTrafficRecord {
    /// The client's tracking id.
    pub tracking_id: String,
    /// The wallet user (JWT subject) it belongs to.
    pub user_id: String,
    /// The request contract's id.
    pub request_contract_id: String,
    /// The party whose validator the traffic is for.
    pub receiving_validator_party_id: String,
    /// The synchronizer.
    pub domain_id: String,
    /// Bytes of traffic.
    pub traffic_amount: i64,
    /// Expiry, µs since the epoch.
    pub expires_at: i64,
    /// When the node recorded it, µs since the epoch.
    pub created_at: i64,
    /// What became of it.
    #[serde(flatten)]
    pub state: State,
}

impl BuyTrafficRecord {
    /// The record's key.
    pub fn key(&self) -> Vec<u8> {
        record_key(&self.user_id, &self.tracking_id)
    }

    /// Its entry in the status index, for its current state.
    pub fn index_key(&self) -> Vec<u8> {
        let status = self.state.status();
        let key = Key::new(keys::WALLET_INDEX).byte(status.tag());
        let key = if status == Status::Created { key.i64(self.expires_at) } else { key };
        key.str(&self.user_id).str(&self.tracking_id).into_bytes()
    }

    /// Every index entry of its current state: [`BuyTrafficRecord::index_key`] and,
    /// while it is created, its entry in its user's queue.
    pub fn index_keys(&self) -> Vec<Vec<u8>> {
        let mut keys = alloc::vec![self.index_key()];
        if self.state.status() == Status::Created {
            keys.push(
                Key::new(keys::WALLET_INDEX)
                    .byte(QUEUE)
                    .str(&self.user_id)
                    .i64(self.expires_at)
                    .str(&self.tracking_id)
                    .into_bytes(),
            );
        }
        keys
    }

    /// The JSON stored under [`BuyTrafficRecord::key`]. A structure of strings and
    /// integers serializes; if it ever did not, this is an error rather than an empty
    /// value.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        serde_json::to_vec(self).map_err(|e| Error::Internal(format!("serializing a wallet request: {e}")))
    }

    /// Reads a stored record.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        serde_json::from_slice(bytes).map_err(|e| Error::Internal(format!("unreadable wallet request: {e}")))
    }

    /// Reads the record stored under `key` (`None`: nothing is), for a job that goes
    /// through many: a record that is missing, does not parse or holds an id over the
    /// limit is an error that is one short line for the operator's log, naming the
    /// record by its key.
    pub fn from_stored(key: &[u8], bytes: Option<&[u8]>) -> Result<Self, String> {
        let problem = match bytes {
            None => String::from("it is indexed but not recorded"),
            Some(bytes) => match serde_json::from_slice::<BuyTrafficRecord>(bytes) {
                Err(e) => format!("its record is unreadable ({})", brief(&format!("{e}"))),
                Ok(record) => match record.ids_over_the_limit() {
                    None => return Ok(record),
                    Some(field) => {
                        format!("its {field} is over {MAX_ID_BYTES} bytes (recorded before ids were bounded)")
                    }
                },
            },
        };
        Err(format!("skipped the wallet request {}: {problem}", describe_key(key)))
    }

    /// The first of the record's ids that is longer than [`MAX_ID_BYTES`], by name.
    fn ids_over_the_limit(&self) -> Option<&'static str> {
        [
            ("tracking_id", &self.tracking_id),
            ("user_id", &self.user_id),
            ("request_contract_id", &self.request_contract_id),
            ("receiving_validator_party_id", &self.receiving_validator_party_id),
            ("domain_id", &self.domain_id),
        ]
        .into_iter()
        .find(|(_, id)| id.len() > MAX_ID_BYTES)
        .map(|(name, _)| name)
    }

    /// The body of the status endpoint.
    pub fn status_body(&self) -> serde_json::Value {
        use serde_json::json;
        match &self.state {
            State::Created => json!({ "status": "created" }),
            State::Completed { transaction_id } => json!({ "status": "completed", "transaction_id": transaction_id }),
            State::Rejected { reason: Some(reason) } => {
                json!({ "status": "failed", "failure_reason": "rejected", "rejection_reason": reason })
            }
            State::Rejected { reason: None } => json!({ "status": "failed", "failure_reason": "rejected" }),
            State::Expired { .. } => json!({ "status": "failed", "failure_reason": "expired" }),
        }
    }

    /// The element of the admin list.
    pub fn list_item(&self) -> serde_json::Value {
        serde_json::json!({
            "tracking_id": self.tracking_id,
            "user_id": self.user_id,
            "request_contract_id": self.request_contract_id,
            "receiving_validator_party_id": self.receiving_validator_party_id,
            "domain_id": self.domain_id,
            "traffic_amount": self.traffic_amount,
            "expires_at": self.expires_at,
            "status": self.state.status().as_str(),
        })
    }
}

/// A record's `X` key as text for a log line: `of user "alice" with tracking_id "t-1"`,
/// each id cut short when long; a key that does not decode so is described by its size.
fn describe_key(key: &[u8]) -> String {
    let decoded = key.strip_prefix(&[keys::WALLET_REQUEST]).and_then(|rest| {
        let (user_id, rest) = keys::decode_str(rest)?;
        let (tracking_id, rest) = keys::decode_str(rest)?;
        rest.is_empty().then_some((user_id, tracking_id))
    });
    match decoded {
        Some((user_id, tracking_id)) => format!("of user {} with tracking_id {}", shown(&user_id), shown(&tracking_id)),
        None => format!("under an unreadable key ({} bytes)", key.len()),
    }
}

/// `text` cut to its first 160 characters, for a log line.
fn brief(text: &str) -> String {
    match crate::model::ids::head(text, 160) {
        None => String::from(text),
        Some(head) => format!("{head}…"),
    }
}

/// The key of a user's request with a tracking id (the tracking-id claim).
pub fn record_key(user_id: &str, tracking_id: &str) -> Vec<u8> {
    Key::new(keys::WALLET_REQUEST).str(user_id).str(tracking_id).into_bytes()
}

/// The key of the index from a request's contract id to its record.
pub fn contract_index_key(contract_id: &str) -> Vec<u8> {
    Key::new(keys::WALLET_CONTRACT).str(contract_id).into_bytes()
}

/// The tag of the users' queues of created requests.
const QUEUE: u8 = b'u';
/// The tag of the tick's cursor in the round of the queues.
const CURSOR: u8 = b'r';

/// The prefix of every user's queue.
pub fn queues_prefix() -> Vec<u8> {
    Key::new(keys::WALLET_INDEX).byte(QUEUE).into_bytes()
}

/// The prefix of `user_id`'s queue.
pub fn queue_prefix(user_id: &str) -> Vec<u8> {
    Key::new(keys::WALLET_INDEX).byte(QUEUE).str(user_id).into_bytes()
}

/// The first key after every entry of `user_id`'s queue that expires before `micros`.
pub fn queue_before(user_id: &str, micros: i64) -> Vec<u8> {
    Key::new(keys::WALLET_INDEX).byte(QUEUE).str(user_id).i64(micros).into_bytes()
}

/// The user and expiry of a queue entry, from its key.
pub fn queue_entry(key: &[u8]) -> Option<(String, i64)> {
    let (user_id, rest) = key.strip_prefix(queues_prefix().as_slice()).and_then(keys::decode_str)?;
    Some((user_id, keys::decode_i64(rest, 0)?))
}

/// The key of the tick's cursor in the round of the queues.
pub fn cursor_key() -> Vec<u8> {
    Key::new(keys::WALLET_INDEX).byte(CURSOR).into_bytes()
}

/// The first key after every created request that expires before `micros`.
pub fn created_before(micros: i64) -> Vec<u8> {
    Key::new(keys::WALLET_INDEX).byte(Status::Created.tag()).i64(micros).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(state: State) -> BuyTrafficRecord {
        BuyTrafficRecord {
            tracking_id: "t".into(),
            user_id: "u".into(),
            request_contract_id: "00ab".into(),
            receiving_validator_party_id: "p::1".into(),
            domain_id: "d::1".into(),
            traffic_amount: 10,
            expires_at: 5,
            created_at: 1,
            state,
        }
    }

    #[test]
    fn records_round_trip_through_their_stored_form() {
        for state in [
            State::Created,
            State::Completed { transaction_id: "tx".into() },
            State::Rejected { reason: Some("no".into()) },
            State::Rejected { reason: None },
            State::Expired { by_ledger: true },
            State::Expired { by_ledger: false },
        ] {
            let r = record(state);
            assert_eq!(BuyTrafficRecord::from_bytes(&r.to_bytes().unwrap()).unwrap(), r);
        }
    }

    #[test]
    fn status_bodies_follow_the_documented_shape() {
        let body = |state| serde_json::to_string(&record(state).status_body()).unwrap();
        assert_eq!(body(State::Created), r#"{"status":"created"}"#);
        assert_eq!(
            body(State::Completed { transaction_id: "tx".into() }),
            r#"{"status":"completed","transaction_id":"tx"}"#
        );
        assert_eq!(
            body(State::Rejected { reason: Some("r".into()) }),
            r#"{"status":"failed","failure_reason":"rejected","rejection_reason":"r"}"#
        );
        assert_eq!(body(State::Rejected { reason: None }), r#"{"status":"failed","failure_reason":"rejected"}"#);
        assert_eq!(body(State::Expired { by_ledger: false }), r#"{"status":"failed","failure_reason":"expired"}"#);
    }

    #[test]
    fn created_requests_are_indexed_by_expiry_and_found_by_the_range_end() {
        let early = record(State::Created);
        let mut late = record(State::Created);
        late.expires_at = 6;
        assert!(early.index_key() < created_before(6));
        assert!(late.index_key() >= created_before(6));
        assert!(early.index_key().starts_with(&Status::Created.index_prefix()));
        let done = record(State::Completed { transaction_id: "x".into() });
        assert!(done.index_key().starts_with(&Status::Completed.index_prefix()));
        assert!(!done.index_key().starts_with(&Status::Created.index_prefix()));
        // A created request is also in its user's queue, by expiry; a done one is not.
        let queued = early.index_keys();
        assert_eq!(queued.len(), 2);
        assert_eq!(queue_entry(&queued[1]), Some(("u".into(), 5)));
        assert!(queued[1].starts_with(&queue_prefix("u")) && queued[1] < queue_before("u", 6));
        assert!(late.index_keys()[1] >= queue_before("u", 6));
        assert_eq!(done.index_keys(), [done.index_key()]);
    }

    #[test]
    fn a_record_a_job_cannot_use_is_one_short_line_naming_it() {
        let good = record(State::Created);
        let key = good.key();
        assert_eq!(BuyTrafficRecord::from_stored(&key, Some(&good.to_bytes().unwrap())), Ok(good.clone()));
        assert_eq!(
            BuyTrafficRecord::from_stored(&key, None),
            Err(String::from(
                "skipped the wallet request of user \"u\" with tracking_id \"t\": it is indexed but not recorded"
            ))
        );
        let garbage = BuyTrafficRecord::from_stored(&key, Some(b"{not json")).unwrap_err();
        assert!(
            garbage.starts_with(
                "skipped the wallet request of user \"u\" with tracking_id \"t\": its record is unreadable ("
            ),
            "{garbage}"
        );
        // A record from before ids were bounded: named briefly, not copied.
        let mut huge = good.clone();
        huge.tracking_id = "t".repeat(900_000);
        let line = BuyTrafficRecord::from_stored(&huge.key(), Some(&huge.to_bytes().unwrap())).unwrap_err();
        assert!(line.len() < 300, "{line}");
        assert!(line.ends_with("its tracking_id is over 512 bytes (recorded before ids were bounded)"), "{line}");
        assert!(line.contains("(900000 bytes)"), "{line}");
        // A value that quotes a huge text in its parse error is cut too.
        let mut wrong_type = String::from("{\"tracking_id\":1,\"user_id\":\"");
        wrong_type.push_str(&"u".repeat(100_000));
        let line = BuyTrafficRecord::from_stored(&key, Some(wrong_type.as_bytes())).unwrap_err();
        assert!(line.len() < 400, "{line}");
        assert_eq!(
            BuyTrafficRecord::from_stored(b"X", None).unwrap_err(),
            "skipped the wallet request under an unreadable key (1 bytes): it is indexed but not recorded"
        );
    }
}
