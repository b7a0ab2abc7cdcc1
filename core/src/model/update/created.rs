//! A contract's creation: [`CreatedEvent`], its reader and its writer.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::{Blob, Form, TemplateId};
use crate::model::json::short::ShortText;
use crate::model::time::Timestamp;
use crate::model::value::Value;
use crate::model::value::path::quoted;
use crate::model::value::render::{string, strings};
use crate::model::value::source::{Source, bounded_id, bounded_strings, id, timestamp};

/// A contract's creation (`CreatedEvent` in the OpenAPI document).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedEvent {
    /// Id of this event: `<update_id>:<n>` inside a transaction.
    pub event_id: String,
    /// Id of the created contract.
    pub contract_id: String,
    /// Template of the created contract.
    pub template_id: TemplateId,
    /// Package name of the created contract.
    pub package_name: String,
    /// The contract's arguments (its payload): a record, or a value its upstream could
    /// not decode ([`crate::model::value::Undecoded`]).
    pub create_arguments: Value,
    /// Ledger effective time of the creating transaction.
    pub created_at: Timestamp,
    /// Party ids of the signatories.
    pub signatories: Vec<String>,
    /// Party ids of the observers.
    pub observers: Vec<String>,
    /// The serialized created event, as ingested; never rendered by `GET /v2/updates`.
    pub created_event_blob: Option<Blob>,
}

impl CreatedEvent {
    /// The fields of a created event on the wire, in the order they are written.
    pub(super) const FIELDS: [&'static str; 10] = [
        "event_type",
        "event_id",
        "contract_id",
        "template_id",
        "package_name",
        "create_arguments",
        "created_at",
        "signatories",
        "observers",
        "created_event_blob",
    ];

    /// A created event on its own (an assignment's `created_event`): its `event_type`
    /// must say so.
    pub(super) fn read<'s, S: Source<'s>>(source: &mut S) -> Result<Self, S::Error> {
        let mut object = source.object()?;
        source.only(&mut object, &Self::FIELDS)?;
        let event_type = source.field(&mut object, "event_type", S::string)?;
        if event_type != "created_event" {
            return Err(
                source.error_at("event_type", || format!("expected created_event, found {}", quoted(event_type)))
            );
        }
        let event = Self::read_fields(source, &mut object)?;
        source.close(object)?;
        Ok(event)
    }

    /// The fields after `event_type`, of an object whose fields are known to be
    /// [`CreatedEvent::FIELDS`].
    pub(super) fn read_fields<'s, S: Source<'s>>(source: &mut S, object: &mut S::Object) -> Result<Self, S::Error> {
        Ok(CreatedEvent {
            event_id: source.field(object, "event_id", id)?.into(),
            contract_id: source.field(object, "contract_id", bounded_id)?.into(),
            template_id: source.field(object, "template_id", TemplateId::read)?,
            package_name: source.field(object, "package_name", id)?.into(),
            create_arguments: source.field(object, "create_arguments", Value::read_arguments)?,
            created_at: source.field(object, "created_at", timestamp)?,
            signatories: source.field(object, "signatories", bounded_strings)?,
            observers: source.field(object, "observers", bounded_strings)?,
            created_event_blob: source.optional_field(object, "created_event_blob", Blob::read)?,
        })
    }

    /// Appends the event in `form`.
    pub(super) fn write(&self, out: &mut String, form: Form) {
        out.push_str(r#"{"event_type":"created_event","event_id":"#);
        string(out, &self.event_id);
        out.push_str(r#","contract_id":"#);
        string(out, &self.contract_id);
        out.push_str(r#","template_id":"#);
        string(out, self.template_id.as_str());
        out.push_str(r#","package_name":"#);
        string(out, &self.package_name);
        out.push_str(r#","create_arguments":"#);
        form.value(out, &self.create_arguments);
        out.push_str(r#","created_at":"#);
        string(out, self.created_at.short_text().as_str());
        out.push_str(r#","signatories":"#);
        strings(out, &self.signatories);
        out.push_str(r#","observers":"#);
        strings(out, &self.observers);
        if let (true, Some(blob)) = (form.ingest, &self.created_event_blob) {
            out.push_str(r#","created_event_blob":"#);
            string(out, blob.as_str());
        }
        out.push('}');
    }
}
