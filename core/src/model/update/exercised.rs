//! A choice exercised on a contract: [`ExercisedEvent`], its reader and its writer.

use alloc::string::String;
use alloc::vec::Vec;

use super::{Form, TemplateId};
use crate::model::value::Value;
use crate::model::value::render::{string, strings};
use crate::model::value::source::{Source, bounded_id, bounded_strings, id, strings as read_strings};

/// A choice exercised on a contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExercisedEvent {
    /// Id of this event, `<update_id>:<n>`.
    pub event_id: String,
    /// The contract the choice was exercised on.
    pub contract_id: String,
    /// The contract's template.
    pub template_id: TemplateId,
    /// Package name of the template.
    pub package_name: String,
    /// The choice's name, unqualified.
    pub choice: String,
    /// The choice's argument.
    pub choice_argument: Value,
    /// Immediate children, in execution order.
    pub child_event_ids: Vec<String>,
    /// The choice's result.
    pub exercise_result: Value,
    /// Whether the choice archived the contract.
    pub consuming: bool,
    /// Party ids of the acting parties.
    pub acting_parties: Vec<String>,
    /// The interface the choice was exercised through, if any.
    pub interface_id: Option<TemplateId>,
}

impl ExercisedEvent {
    /// The fields of an exercised event on the wire, in the order they are written.
    pub(super) const FIELDS: [&'static str; 12] = [
        "event_type",
        "event_id",
        "contract_id",
        "template_id",
        "package_name",
        "choice",
        "choice_argument",
        "child_event_ids",
        "exercise_result",
        "consuming",
        "acting_parties",
        "interface_id",
    ];

    /// The fields after `event_type`, of an object whose fields are known to be
    /// [`ExercisedEvent::FIELDS`].
    pub(super) fn read_fields<'s, S: Source<'s>>(source: &mut S, object: &mut S::Object) -> Result<Self, S::Error> {
        Ok(ExercisedEvent {
            event_id: source.field(object, "event_id", id)?.into(),
            contract_id: source.field(object, "contract_id", bounded_id)?.into(),
            template_id: source.field(object, "template_id", TemplateId::read)?,
            package_name: source.field(object, "package_name", id)?.into(),
            choice: source.field(object, "choice", id)?.into(),
            choice_argument: source.field(object, "choice_argument", Value::read)?,
            child_event_ids: source.field(object, "child_event_ids", read_strings)?,
            exercise_result: source.field(object, "exercise_result", Value::read)?,
            consuming: source.field(object, "consuming", S::boolean)?,
            acting_parties: source.field(object, "acting_parties", bounded_strings)?,
            interface_id: source.optional_field(object, "interface_id", TemplateId::read)?,
        })
    }

    /// Appends the event in `form`.
    pub(super) fn write(&self, out: &mut String, form: Form) {
        out.push_str(r#"{"event_type":"exercised_event","event_id":"#);
        string(out, &self.event_id);
        out.push_str(r#","contract_id":"#);
        string(out, &self.contract_id);
        out.push_str(r#","template_id":"#);
        string(out, self.template_id.as_str());
        out.push_str(r#","package_name":"#);
        string(out, &self.package_name);
        out.push_str(r#","choice":"#);
        string(out, &self.choice);
        out.push_str(r#","choice_argument":"#);
        form.value(out, &self.choice_argument);
        out.push_str(r#","child_event_ids":"#);
        strings(out, &self.child_event_ids);
        out.push_str(r#","exercise_result":"#);
        form.value(out, &self.exercise_result);
        out.push_str(if self.consuming { r#","consuming":true"# } else { r#","consuming":false"# });
        out.push_str(r#","acting_parties":"#);
        strings(out, &self.acting_parties);
        if let Some(interface) = &self.interface_id {
            out.push_str(r#","interface_id":"#);
            string(out, interface.as_str());
        }
        out.push('}');
    }
}
