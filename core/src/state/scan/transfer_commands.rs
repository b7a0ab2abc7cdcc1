//! The status of every transfer command of an external party, kept at ingest as one
//! [`Projection`] ([`TransferCommands`]) for `GET /v0/transfer-command/status`.
//!
//! A transfer command is a contract of `<root>.ExternalParty<Coin>Rules:TransferCommand`
//! ([`super::ScanTemplates::transfer_command`]); its payload names its `sender` and its
//! `nonce` (an `Int64`, a text in `compact_json`). Its status follows the events on it,
//! as the network's scan reads them from its transaction log (`ScanTxLogParser.scala`
//! and `TxLogEntry.scala` of `apps/scan` in `hyperledger-labs/splice`):
//!
//! - its creation: `{"status":"created"}`;
//! - `TransferCommand_Send`, by its exercise result `{result, sender, nonce}`: a
//!   `result` of constructor `TransferCommandResultSuccess` is `{"status":"sent"}`; one
//!   of `TransferCommandResultFailure` (`{reason}`) is
//!   `{"status":"failed","failure_kind":"failed","reason":R}`, with the reason rendered
//!   as the network's Java bindings print it ([`render_reason`]);
//! - `TransferCommand_Withdraw`: `failure_kind` `withdrawn`, reason
//!   [`WITHDRAWN`];
//! - `TransferCommand_Expire`: `failure_kind` `expired`, reason [`EXPIRED`].
//!
//! The reason is rendered the way the network's Java bindings print a variant: its
//! constructor, then its value in parentheses, the value's text itself when it is a
//! text (`ITR_Other(cool reason)`) and its `compact_json` otherwise
//! (`ITR_InsufficientFunds({"missingAmount":"1.0"})`); a reason that is not a variant
//! is its `compact_json`.
//!
//! Keys (see [`crate::storage::keys`]): `t sender nonce created_at contract_id`, whose
//! value is the answer's entry for the contract, `{"contract": C, "status": S}`, with
//! the contract rendered as the other scan reads render it (its `created_event_blob` as
//! ingested). The entry is written at the creation and rewritten by each of those
//! exercises, and stays after the contract is archived: a lookup is one scan within
//! one `sender nonce` prefix, newest first. The network keeps these for 24 hours; the
//! node keeps them all.
//!
//! A transfer command whose payload lacks a `sender` text or a `nonce` integer, or
//! whose creation the node does not hold, is not kept.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::json;

use crate::model::error::Error;
use crate::model::update::{Event, ExercisedEvent, Update};
use crate::model::value::{Encoding, Value};
use crate::state::ledger::{Archived, contracts};
use crate::state::listed::ListedContract;
use crate::state::projection::Projection;
use crate::storage::keys::{self, Key};
use crate::storage::stage::Stage;
use crate::storage::store::{Scan, Store};

use super::ScanTemplates;

/// The reason of a withdrawn transfer command.
pub const WITHDRAWN: &str = "The TransferCommand has been withdrawn by the sender";

/// The reason of an expired transfer command.
pub const EXPIRED: &str = "The TransferCommand has expired";

/// Most transfer commands of one sender and nonce a lookup answers, as the network
/// does (`MAX_TRANSFER_COMMAND_CONTRACTS` of `HttpScanHandler.scala`): the newest.
pub const MAX_PER_NONCE: u32 = 100;

/// The status of a transfer command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Created, waiting to be sent.
    Created,
    /// Sent: the transfer happened.
    Sent,
    /// Failed for good: nothing was transferred.
    Failed {
        /// `failed`, `withdrawn` or `expired`.
        kind: &'static str,
        /// What happened, for a person.
        reason: String,
    },
}

impl Status {
    /// The status `exercised` gives the contract it was exercised on; `None` for a
    /// choice that does not change it. A `TransferCommand_Send` whose result is neither a
    /// success nor a failure is an error for the batch, never a guessed status.
    pub fn of_exercise(exercised: &ExercisedEvent) -> Result<Option<Status>, Error> {
        Ok(Some(match exercised.choice.as_str() {
            "TransferCommand_Send" => {
                let unreadable = |problem: &str| {
                    Error::BadRequest(format!(
                        "event {}: TransferCommand_Send exercise_result: {problem}",
                        exercised.event_id
                    ))
                };
                match exercised.exercise_result.lookup(&["result"]) {
                    Some(Value::Variant { constructor, .. }) if constructor == "TransferCommandResultSuccess" => {
                        Status::Sent
                    }
                    Some(Value::Variant { constructor, value }) if constructor == "TransferCommandResultFailure" => {
                        let reason = value
                            .lookup(&["reason"])
                            .ok_or_else(|| unreadable("a TransferCommandResultFailure without a reason"))?;
                        Status::Failed { kind: "failed", reason: render_reason(reason) }
                    }
                    _ => {
                        return Err(unreadable(
                            "expected a result of TransferCommandResultSuccess or TransferCommandResultFailure",
                        ));
                    }
                }
            }
            "TransferCommand_Withdraw" => Status::Failed { kind: "withdrawn", reason: WITHDRAWN.into() },
            "TransferCommand_Expire" => Status::Failed { kind: "expired", reason: EXPIRED.into() },
            _ => return Ok(None),
        }))
    }

    /// The status as the network answers it (`TransferCommandContractStatus`).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Status::Created => json!({ "status": "created" }),
            Status::Sent => json!({ "status": "sent" }),
            Status::Failed { kind, reason } => json!({ "status": "failed", "failure_kind": kind, "reason": reason }),
        }
    }
}

/// `reason` as the network's Java bindings print it (module docs).
pub fn render_reason(reason: &Value) -> String {
    let compact = |value: &Value| {
        let mut out = String::new();
        value.write(&mut out, Encoding::CompactJson);
        out
    };
    match reason {
        Value::Variant { constructor, value } => match value.as_ref() {
            Value::Text(text) => format!("{constructor}({text})"),
            other => format!("{constructor}({})", compact(other)),
        },
        other => compact(other),
    }
}

/// The prefix of the transfer commands of `sender` with `nonce`.
pub fn prefix(sender: &str, nonce: i64) -> Vec<u8> {
    Key::new(keys::TRANSFER_COMMAND).str(sender).i64(nonce).into_bytes()
}

fn key(sender: &str, nonce: i64, created_at_micros: i64, contract_id: &str) -> Vec<u8> {
    Key::new(keys::TRANSFER_COMMAND).str(sender).i64(nonce).i64(created_at_micros).str(contract_id).into_bytes()
}

/// The transfer commands of `sender` with `nonce`, newest first, at most
/// [`MAX_PER_NONCE`]: each contract id and its entry (`{"contract": C, "status": S}`).
/// One scan.
pub async fn lookup<S: Store>(store: &S, sender: &str, nonce: i64) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let prefix = prefix(sender, nonce);
    let found = store.scan(&Scan::prefix(&prefix, MAX_PER_NONCE).reversed()).await?;
    found
        .into_iter()
        .map(|(key, entry)| {
            let contract_id = key
                .get(prefix.len() + 8..)
                .and_then(keys::decode_str)
                .map(|(id, _)| id)
                .ok_or_else(|| Error::Internal(format!("an unreadable transfer command key {key:?}")))?;
            Ok((contract_id, entry))
        })
        .collect()
}

/// The transfer commands' statuses, kept from the ledger.
#[derive(Debug, Clone, Copy)]
pub struct TransferCommands<'n> {
    templates: &'n ScanTemplates,
}

impl<'n> TransferCommands<'n> {
    /// The statuses of the transfer commands `templates` names.
    pub fn new(templates: &'n ScanTemplates) -> Self {
        TransferCommands { templates }
    }

    /// The transfer commands `update` changes the status of, each with its status
    /// after the update, in the order the update first touches them.
    fn statuses<'u>(&self, update: &'u Update) -> Result<Vec<(&'u str, Status)>, Error> {
        let mut out: Vec<(&'u str, Status)> = Vec::new();
        let Some(tx) = update.as_transaction() else { return Ok(out) };
        let name = self.templates.transfer_command();
        for event in tx.events_in_order() {
            if event.template_id().qualified_name() != name {
                continue;
            }
            let status = match event {
                Event::Created(_) => Some(Status::Created),
                Event::Exercised(exercised) => Status::of_exercise(exercised)?,
            };
            let Some(status) = status else { continue };
            let contract_id = event.contract_id();
            match out.iter_mut().find(|(id, _)| *id == contract_id) {
                Some((_, held)) => *held = status,
                None => out.push((contract_id, status)),
            }
        }
        Ok(out)
    }
}

impl Projection for TransferCommands<'_> {
    /// The records of transfer commands exercised without being archived; the ledger
    /// prefetches the others.
    fn keys_read<'a>(&'a self, update: &'a Update) -> impl Iterator<Item = Vec<u8>> + 'a {
        let name = self.templates.transfer_command();
        let events = update.as_transaction().into_iter().flat_map(|tx| tx.events_by_id.values());
        events.filter_map(move |event| match event {
            Event::Exercised(x) if !x.consuming && x.template_id.qualified_name() == name => {
                Some(contracts::contract_key(&x.contract_id))
            }
            _ => None,
        })
    }

    async fn apply<S: Store>(
        &self,
        stage: &mut Stage<'_, S>,
        update: &Update,
        archived: &Archived<'_>,
    ) -> Result<(), Error> {
        for (contract_id, status) in self.statuses(update)? {
            let Some(listed) = ListedContract::read(stage, contract_id, archived).await? else { continue };
            let sender = listed.payload_text(&["sender"]);
            let nonce = listed.payload_text(&["nonce"]).and_then(|nonce| nonce.parse::<i64>().ok());
            let (Some(sender), Some(nonce)) = (sender, nonce) else { continue };
            let key = key(sender, nonce, listed.created_at.micros(), contract_id);
            stage.put(key, entry(&listed.json, &status)?);
        }
        Ok(())
    }
}

/// Gives the entry of `contract_id`, a transfer command of `sender` with `nonce`
/// created at `created_at_micros`, the blob `blob` when it shows none: the entry stays
/// after the contract is archived, and shows the contract as it was created
/// ([`crate::state::blobs`]). Whether it changed.
pub async fn attach_blob<S: Store>(
    stage: &mut Stage<'_, S>,
    sender: &str,
    nonce: i64,
    created_at_micros: i64,
    contract_id: &str,
    blob: &crate::model::update::Blob,
) -> Result<bool, Error> {
    let key = key(sender, nonce, created_at_micros, contract_id);
    let Some(bytes) = stage.get(&key).await? else { return Ok(false) };
    let unreadable = |e: &dyn core::fmt::Display| {
        Error::Internal(format!("transfer command {contract_id}: an unreadable status entry: {e}"))
    };
    let mut entry: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| unreadable(&e))?;
    match entry.pointer_mut("/contract/created_event_blob") {
        Some(held) if held.as_str() == Some("") => *held = serde_json::Value::String(blob.as_str().into()),
        _ => return Ok(false),
    }
    stage.put(key, serde_json::to_vec(&entry).map_err(|e| unreadable(&e))?);
    Ok(true)
}

/// `{"contract": C, "status": S}` from the contract's rendering `contract`.
fn entry(contract: &[u8], status: &Status) -> Result<Vec<u8>, Error> {
    let status = serde_json::to_vec(&status.to_json()).map_err(|e| Error::Internal(format!("{e}")))?;
    let mut out = Vec::with_capacity(contract.len() + status.len() + 24);
    out.extend_from_slice(b"{\"contract\":");
    out.extend_from_slice(contract);
    out.extend_from_slice(b",\"status\":");
    out.extend_from_slice(&status);
    out.push(b'}');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::value::{Field, Record};
    use alloc::boxed::Box;
    use alloc::vec;

    fn record(fields: Vec<(&str, Value)>) -> Value {
        let fields = fields.into_iter().map(|(label, value)| Field { label: label.into(), value }).collect();
        Value::Record(Record { fields })
    }

    fn variant(constructor: &str, value: Value) -> Value {
        Value::Variant { constructor: constructor.into(), value: Box::new(value) }
    }

    fn exercise(choice: &str, result: Value) -> ExercisedEvent {
        ExercisedEvent {
            event_id: "u:1".into(),
            contract_id: "c1".into(),
            template_id: crate::model::update::TemplateId::parse("p:Splice.ExternalPartyAmuletRules:TransferCommand")
                .unwrap(),
            package_name: "p".into(),
            choice: choice.into(),
            choice_argument: record(vec![]),
            child_event_ids: vec![],
            exercise_result: result,
            consuming: true,
            acting_parties: vec![],
            interface_id: None,
        }
    }

    fn send_result(result: Value) -> Value {
        record(vec![("result", result), ("sender", Value::Party("a::1".into())), ("nonce", Value::Int64(0))])
    }

    #[test]
    fn each_choice_gives_the_status_the_network_logs() {
        let success = send_result(variant("TransferCommandResultSuccess", record(vec![("result", record(vec![]))])));
        assert_eq!(Status::of_exercise(&exercise("TransferCommand_Send", success)), Ok(Some(Status::Sent)));
        let reason = variant("ITR_Other", Value::Text("cool reason".into()));
        let failure = send_result(variant("TransferCommandResultFailure", record(vec![("reason", reason)])));
        assert_eq!(
            Status::of_exercise(&exercise("TransferCommand_Send", failure)),
            Ok(Some(Status::Failed { kind: "failed", reason: "ITR_Other(cool reason)".into() }))
        );
        let done = record(vec![("sender", Value::Party("a::1".into())), ("nonce", Value::Int64(0))]);
        assert_eq!(
            Status::of_exercise(&exercise("TransferCommand_Withdraw", done.clone())),
            Ok(Some(Status::Failed { kind: "withdrawn", reason: WITHDRAWN.into() }))
        );
        assert_eq!(
            Status::of_exercise(&exercise("TransferCommand_Expire", done.clone())),
            Ok(Some(Status::Failed { kind: "expired", reason: EXPIRED.into() }))
        );
        assert_eq!(Status::of_exercise(&exercise("Archive", Value::Unit)), Ok(None));
    }

    #[test]
    fn a_send_result_that_is_neither_success_nor_failure_is_refused_naming_the_event() {
        for result in [
            send_result(variant("Other", Value::Unit)),
            send_result(variant("TransferCommandResultFailure", record(vec![]))),
            Value::Unit,
        ] {
            match Status::of_exercise(&exercise("TransferCommand_Send", result)) {
                Err(Error::BadRequest(message)) => assert!(message.starts_with("event u:1: TransferCommand_Send")),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_reason_renders_as_its_constructor_and_its_text_or_compact_json() {
        assert_eq!(render_reason(&variant("ITR_Other", Value::Text("cool reason".into()))), "ITR_Other(cool reason)");
        let missing =
            record(vec![("missingAmount", Value::Numeric(crate::model::value::Numeric::parse("1.5").unwrap()))]);
        assert_eq!(
            render_reason(&variant("ITR_InsufficientFunds", missing)),
            r#"ITR_InsufficientFunds({"missingAmount":"1.5"})"#
        );
        assert_eq!(render_reason(&variant("ITR_UnknownSynchronizer", Value::Unit)), "ITR_UnknownSynchronizer({})");
        assert_eq!(render_reason(&Value::Text("plain".into())), r#""plain""#);
    }

    #[test]
    fn statuses_render_as_the_network_s_schemas() {
        assert_eq!(Status::Created.to_json(), json!({"status": "created"}));
        assert_eq!(Status::Sent.to_json(), json!({"status": "sent"}));
        let failed = Status::Failed { kind: "expired", reason: EXPIRED.into() };
        assert_eq!(failed.to_json(), json!({"status": "failed", "failure_kind": "expired", "reason": EXPIRED}));
        let entry = entry(br#"{"contract_id":"c"}"#, &Status::Sent).unwrap();
        assert_eq!(entry, br#"{"contract":{"contract_id":"c"},"status":{"status":"sent"}}"#);
    }

    #[test]
    fn keys_of_one_sender_and_nonce_share_a_prefix_no_other_key_starts_with() {
        let k = key("a::1", 3, 10, "c");
        assert!(k.starts_with(&prefix("a::1", 3)));
        assert!(!k.starts_with(&prefix("a::1", 4)) && !k.starts_with(&prefix("a::", 3)));
        assert_eq!(keys::table(keys::TRANSFER_COMMAND).unwrap().scan_prefix(&k), Some(prefix("a::1", 3).as_slice()));
    }
}
