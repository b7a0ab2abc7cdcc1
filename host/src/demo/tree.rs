//! Contracts and transaction trees: the demo builds a transaction as a tree of actions
//! (creations, and exercises with the actions they took), and numbers it into the
//! events of a core [`Transaction`](ledger_node_core::model::update::Transaction) once the
//! update id is known.

use std::collections::BTreeMap;

use ledger_node_core::model::update::{CreatedEvent, Event, ExercisedEvent, TemplateId};
use ledger_node_core::model::value::Value;

use super::network::Synchronizer;
use super::values::{push_decimal, record};

/// An active contract: its created event, to write again in an assignment or an
/// import, and where it is.
#[derive(Debug, Clone)]
pub(super) struct Contract {
    /// The contract as created; its event id is set where the event is written.
    pub(super) created: CreatedEvent,
    pub(super) synchronizer: Synchronizer,
    pub(super) reassignment_counter: i64,
    pub(super) in_flight: bool,
}

impl Contract {
    pub(super) fn id(&self) -> &str {
        &self.created.contract_id
    }

    /// On the global synchronizer and not being reassigned: transactions may use it.
    pub(super) fn is_home(&self) -> bool {
        self.synchronizer == Synchronizer::Global && !self.in_flight
    }

    /// Its created event, with id `event_id`.
    pub(super) fn created_event(&self, event_id: String) -> CreatedEvent {
        CreatedEvent { event_id, ..self.created.clone() }
    }
}

/// A node of a transaction tree being built.
#[derive(Debug)]
pub(super) enum Action {
    Create(CreatedEvent),
    Exercise(Exercise),
}

impl Action {
    /// The creation of `contract`.
    pub(super) fn create(contract: &Contract) -> Self {
        Action::Create(contract.created.clone())
    }
}

/// A choice exercised, with the actions it took.
#[derive(Debug)]
pub(super) struct Exercise {
    contract_id: String,
    template_id: TemplateId,
    package_name: String,
    interface: Option<TemplateId>,
    choice: &'static str,
    argument: Value,
    result: Value,
    consuming: bool,
    acting: Vec<String>,
    children: Vec<Action>,
}

impl Exercise {
    /// A non-consuming exercise of `choice` on `contract`, with a unit result and no
    /// children until told otherwise.
    pub(super) fn on(contract: &Contract, choice: &'static str, acting: &str, argument: Value) -> Self {
        Exercise {
            contract_id: contract.id().to_owned(),
            template_id: contract.created.template_id.clone(),
            package_name: contract.created.package_name.clone(),
            interface: None,
            choice,
            argument,
            result: Value::Unit,
            consuming: false,
            acting: vec![acting.to_owned()],
            children: Vec::new(),
        }
    }

    /// Daml's `Archive`: consuming, an empty record argument, a unit result.
    pub(super) fn archive(contract: &Contract, acting: &str) -> Self {
        Exercise::on(contract, "Archive", acting, record([])).consuming()
    }

    pub(super) fn consuming(mut self) -> Self {
        self.consuming = true;
        self
    }

    /// Exercised through `interface`.
    pub(super) fn via(mut self, interface: &TemplateId) -> Self {
        self.interface = Some(interface.clone());
        self
    }

    pub(super) fn result(mut self, result: Value) -> Self {
        self.result = result;
        self
    }

    pub(super) fn children(mut self, children: Vec<Action>) -> Self {
        self.children = children;
        self
    }

    pub(super) fn action(self) -> Action {
        Action::Exercise(self)
    }
}

/// The events of a transaction with `roots`: its `root_event_ids` and `events_by_id`,
/// numbered `<update_id>:<n>` in execution order (pre-order).
pub(super) fn events(update_id: &str, roots: Vec<Action>) -> (Vec<String>, BTreeMap<String, Event>) {
    let mut events = BTreeMap::new();
    let mut next = 0;
    let roots = roots.into_iter().map(|root| number(update_id, root, &mut next, &mut events)).collect();
    (roots, events)
}

/// Numbers `action` `next` and its subtree after it, adds their events to `events`, and
/// returns its event id.
fn number(update_id: &str, action: Action, next: &mut u32, events: &mut BTreeMap<String, Event>) -> String {
    let event_id = event_id(update_id, *next);
    *next += 1;
    let event = match action {
        Action::Create(created) => Event::Created(CreatedEvent { event_id: event_id.clone(), ..created }),
        Action::Exercise(e) => {
            let child_event_ids = e.children.into_iter().map(|child| number(update_id, child, next, events)).collect();
            Event::Exercised(ExercisedEvent {
                event_id: event_id.clone(),
                contract_id: e.contract_id,
                template_id: e.template_id,
                package_name: e.package_name,
                choice: e.choice.to_owned(),
                choice_argument: e.argument,
                child_event_ids,
                exercise_result: e.result,
                consuming: e.consuming,
                acting_parties: e.acting,
                interface_id: e.interface,
            })
        }
    };
    events.insert(event_id.clone(), event);
    event_id
}

/// `<update_id>:<n>`.
pub(super) fn event_id(update_id: &str, n: u32) -> String {
    let mut id = String::with_capacity(update_id.len() + 4);
    id.push_str(update_id);
    id.push(':');
    push_decimal(&mut id, u64::from(n), 1);
    id
}
