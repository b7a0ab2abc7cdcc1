//! Proptest strategies for [`Value`]s, depth-limited, with unique record labels,
//! text-map keys and gen-map keys (as parsing requires).

use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use proptest::prelude::*;

use super::{Field, Numeric, Record, Value};
use crate::model::time::{Date, Timestamp};

/// Labels, constructors and ids: short names, sometimes odd characters.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-zA-Z][a-zA-Z0-9_]{0,8}",
        1 => "\\PC{1,6}",
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::Int64),
        "-?[0-9]{1,12}(\\.[0-9]{1,10})?([eE][+-]?[0-9]{1,3})?"
            .prop_map(|text| Value::Numeric(Numeric::parse(&text).expect("the regex matches only decimals"))),
        "\\PC{0,12}".prop_map(Value::Text),
        (Timestamp::MIN.micros()..=Timestamp::MAX.micros())
            .prop_map(|m| Value::Timestamp(Timestamp::from_micros(m).expect("in range"))),
        (-719_162i64..=2_932_896).prop_map(|d| Value::Date(Date::from_days(d).expect("in range"))),
        name().prop_map(Value::Party),
        "[0-9a-f]{2,20}".prop_map(Value::ContractId),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Unit),
        Just(Value::Optional(None)),
        name().prop_map(Value::Enum),
    ]
}

/// Keeps the first of each key.
fn unique_by_key<T>(entries: Vec<(String, T)>) -> Vec<(String, T)> {
    let mut seen = BTreeSet::new();
    entries.into_iter().filter(|(k, _)| seen.insert(k.clone())).collect()
}

fn record_of(inner: impl Strategy<Value = Value>) -> impl Strategy<Value = Record> {
    proptest::collection::vec((name(), inner), 0..5).prop_map(|fields| Record {
        fields: unique_by_key(fields).into_iter().map(|(label, value)| Field { label, value }).collect(),
    })
}

/// Any value, nested at most four levels deep.
pub(crate) fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            record_of(inner.clone()).prop_map(Value::Record),
            (name(), inner.clone())
                .prop_map(|(constructor, value)| Value::Variant { constructor, value: Box::new(value) }),
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::List),
            inner.clone().prop_map(|v| Value::Optional(Some(Box::new(v)))),
            proptest::collection::vec(("\\PC{0,6}", inner.clone()), 0..5)
                .prop_map(|entries| Value::TextMap(unique_by_key(entries))),
            proptest::collection::vec((inner.clone(), inner), 0..4).prop_map(|entries| {
                let mut keys: Vec<Value> = Vec::new();
                let entries = entries.into_iter().filter(|(k, _)| {
                    !keys.contains(k) && {
                        keys.push(k.clone());
                        true
                    }
                });
                Value::GenMap(entries.collect())
            }),
        ]
    })
}

/// Any record, its fields any values.
pub(crate) fn record() -> impl Strategy<Value = Record> {
    record_of(value())
}
