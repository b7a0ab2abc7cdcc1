//! The demo's identifiers, spelled by the configured names.
//!
//! The simulation is written with the default names (module root `Platform`, currency
//! word `Coin`). Under other names ([`Names`], from `LEDGER_NODE_NAMES_ROOT` and
//! `LEDGER_NODE_NAMES_COIN`), [`Spelling::update`] spells every identifier of an update
//! their way before it is written:
//!
//! - the qualified names of template and interface ids (the package id is a hash and is
//!   kept), and package names;
//! - choice names, record labels, and variant and enum constructors.
//!
//! Each identifier is spelled by the core's one rule for text written with the default
//! names, [`respell`] (`Platform`, `platform`, `Coin` and `coin` become the root, its lower
//! case, the currency word and its lower case, in one pass). With `Splice` and `Amulet`,
//! the demo's `Platform.CoinRules:CoinRules`, `CoinRules_Transfer`, `lockedCoin` and
//! `platform-coin` become `Splice.AmuletRules:AmuletRules`, `AmuletRules_Transfer`,
//! `lockedAmulet` and `splice-amulet`: exactly the names the node derives its state from
//! ([`ledger_node_core::model::names::TemplateNames`]).
//!
//! Data is left as it is: texts, parties, contract and update ids, numbers, times and
//! the created-event blobs (which a textual rewrite of the output would corrupt).

use ledger_node_core::model::config::Names;
use ledger_node_core::model::names::respell;
use ledger_node_core::model::update::{CreatedEvent, Event, ReassignmentEvent, TemplateId, Update};
use ledger_node_core::model::value::{Record, Value};

/// How the demo's identifiers are spelled under names other than the defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Spelling {
    names: Names,
}

impl Spelling {
    /// The spelling for `names`; `None` for the default names, under which the demo is
    /// written as it is.
    pub(super) fn new(names: &Names) -> Option<Self> {
        (*names != ledger_node_core::Config::default().names).then(|| Spelling { names: names.clone() })
    }

    /// `identifier` spelled by the names.
    fn word(&self, identifier: &str) -> String {
        respell(identifier, &self.names).into_owned()
    }

    fn respell(&self, identifier: &mut String) {
        *identifier = self.word(identifier);
    }

    /// A template or interface id with its qualified name spelled, its package id kept.
    fn template_id(&self, id: &mut TemplateId) {
        let spelled = format!("{}:{}", id.package_id(), self.word(id.qualified_name()));
        // The package id and both parts of the qualified name stay non-empty, and the
        // words contain no colon (configured names are letters, digits and `_`).
        *id = TemplateId::parse(&spelled).unwrap_or_else(|_| id.clone());
    }

    /// Spells every identifier of `update` (module docs).
    pub(super) fn update(&self, update: &mut Update) {
        match update {
            Update::Transaction(transaction) => {
                for event in transaction.events_by_id.values_mut() {
                    match event {
                        Event::Created(created) => self.created(created),
                        Event::Exercised(exercised) => {
                            self.template_id(&mut exercised.template_id);
                            if let Some(interface) = &mut exercised.interface_id {
                                self.template_id(interface);
                            }
                            self.respell(&mut exercised.package_name);
                            self.respell(&mut exercised.choice);
                            self.value(&mut exercised.choice_argument);
                            self.value(&mut exercised.exercise_result);
                        }
                    }
                }
            }
            Update::Reassignment(reassignment) => {
                if let ReassignmentEvent::Assignment(assignment) = &mut reassignment.event {
                    self.created(&mut assignment.created_event);
                }
            }
        }
    }

    fn created(&self, created: &mut CreatedEvent) {
        self.template_id(&mut created.template_id);
        self.respell(&mut created.package_name);
        self.value(&mut created.create_arguments);
    }

    fn record(&self, record: &mut Record) {
        for field in &mut record.fields {
            self.respell(&mut field.label);
            self.value(&mut field.value);
        }
    }

    fn value(&self, value: &mut Value) {
        match value {
            Value::Record(record) => self.record(record),
            Value::Variant { constructor, value } => {
                self.respell(constructor);
                self.value(value);
            }
            Value::Enum(constructor) => self.respell(constructor),
            Value::List(elements) => elements.iter_mut().for_each(|v| self.value(v)),
            Value::Optional(inner) => {
                if let Some(inner) = inner {
                    self.value(inner);
                }
            }
            Value::TextMap(entries) => entries.iter_mut().for_each(|(_, v)| self.value(v)),
            Value::GenMap(entries) => entries.iter_mut().for_each(|(k, v)| {
                self.value(k);
                self.value(v);
            }),
            Value::Int64(_)
            | Value::Numeric(_)
            | Value::Text(_)
            | Value::Timestamp(_)
            | Value::Date(_)
            | Value::Party(_)
            | Value::ContractId(_)
            | Value::Bool(_)
            | Value::Unit
            // The demo writes no undecoded value.
            | Value::Undecoded(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splice() -> Spelling {
        Spelling::new(&Names { root: "Splice".into(), coin: "Amulet".into() }).expect("not the defaults")
    }

    #[test]
    fn the_default_names_spell_nothing() {
        assert_eq!(Spelling::new(&ledger_node_core::Config::default().names), None);
    }

    #[test]
    fn each_default_word_is_replaced_in_its_case() {
        let spelling = splice();
        for (written, spelled) in [
            ("Platform.CoinRules:CoinRules", "Splice.AmuletRules:AmuletRules"),
            ("CoinRules_Transfer", "AmuletRules_Transfer"),
            ("lockedCoin", "lockedAmulet"),
            ("createdCoins", "createdAmulets"),
            ("platform-coin", "splice-amulet"),
            ("Platform.DSO.CoinPrice:CoinPriceVote", "Splice.DSO.AmuletPrice:AmuletPriceVote"),
            ("round", "round"),
        ] {
            assert_eq!(spelling.word(written), spelled, "{written}");
        }
    }

    #[test]
    fn a_replacement_is_never_replaced_again() {
        let spelling = Spelling::new(&Names { root: "Coinage".into(), coin: "Platformer".into() }).expect("other");
        assert_eq!(spelling.word("Platform.Coin:Coin"), "Coinage.Platformer:Platformer");
    }
}
