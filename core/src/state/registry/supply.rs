//! The coin's total supply, as the network's registry states it on its instrument
//! (`totalSupply`, `totalSupplyAsOf` of `GET /registry/metadata/v1/instruments/{id}`),
//! kept at ingest as one record so that reading it is one read.
//!
//! Followed from `hyperledger-labs/splice`: the scan app's metadata handler
//! (`apps/scan/src/main/scala/org/lfdecentralizedtrust/splice/scan/admin/http/HttpTokenStandardMetadataHandler.scala`,
//! its total supply by the latest round), which reads the round totals that
//! `apps/scan/.../scan/store/db/ScanAggregator.scala` (`aggregateRoundTotals`) sums from
//! the balance changes `apps/scan/.../scan/store/ScanTxLogParser.scala` finds in each
//! transaction. The rule, in this node's words:
//!
//! - **Balance changes.** Walking each transaction from its roots, the exercises that
//!   change the coin's balance each give a round and two amounts: the change to the
//!   amount as of round zero and the change to the holding fee rate. A transfer on the
//!   coin rules (`{coin}Rules_Transfer`) and a traffic purchase
//!   (`{coin}Rules_BuyMemberTraffic`): the result's `round` and the sums over its
//!   `summary.balanceChanges`. A tap or a mint (`{coin}Rules_DevNet_Tap`,
//!   `{coin}Rules_Mint`): the coin it creates (`{coin}Sum.{coin}` of the result),
//!   whose amount as of round zero is `initialAmount + ratePerRound.rate × createdAt`,
//!   its rate `ratePerRound.rate`, its round `createdAt`. An expiry (`{Coin}_Expire`,
//!   `Locked{Coin}_Expire{Coin}`): the expiry summary of the result (`expireSum`, or
//!   the result itself). An ANS entry payment (`AnsRules_CollectInitialEntryPayment`,
//!   `AnsRules_CollectEntryRenewalPayment`): its first child's changes, and the coin its
//!   second child burns, subtracted. Such an exercise is not walked into (an unlock,
//!   `Locked{Coin}_Unlock`, changes nothing and is not walked into either); any other
//!   exercise is.
//! - **Closed rounds.** A `ClosedMiningRound` created in a walked transaction closes its
//!   round, as of the transaction's effective time.
//! - **The supply** as of the latest closed round N held: the sum of the changes to the
//!   amount as of round zero of the rounds up to N, less (N + 1) times the sum of their
//!   changes to the holding fee rate. `totalSupplyAsOf` is N's effective time. With no
//!   closed round held, there is no supply to state, and both fields are left out.
//!
//! Import updates are not walked: they restate contracts, not what changed them.
//! Amounts are the network's numerics (10 decimal places), added exactly in units of
//! 10^-10; an amount that is not such a number (or a sum beyond 10^28 coins) is left
//! out. The supply is written as the network's registry writes it: its decimal with 10
//! places, or in scientific notation when it is below 10^-6 (`0E-10` for zero).
//!
//! The network aggregates only rounds that closed one after another; a history
//! ingested in order closes them so, and this node states the supply as of the highest
//! closed round it holds.
//!
//! Key (table `s`, [`crate::storage::keys`]): `s`, the one [`Supply`] record. The
//! changes of rounds after the latest closed one wait in it by round, and join the sums
//! when their round closes.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::model::config::Names;
use crate::model::error::Error;
use crate::model::time::Timestamp;
use crate::model::update::{Event, ExercisedEvent, Transaction, Update};
use crate::model::value::{Record, Value};
use crate::state::ledger::Archived;
use crate::state::projection::Projection;
use crate::storage::keys::{self, Key};
use crate::storage::stage::Stage;
use crate::storage::store::Store;

/// The decimal places of the coin's amounts.
const SCALE: u32 = 10;

/// The key of the supply record.
pub fn supply_key() -> Vec<u8> {
    Key::new(keys::SUPPLY).into_bytes()
}

/// An amount in units of 10^-10, stored as its decimal text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Units(i128);

impl From<Units> for String {
    fn from(units: Units) -> String {
        format!("{}", units.0)
    }
}

impl TryFrom<String> for Units {
    type Error = core::num::ParseIntError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        text.parse().map(Units)
    }
}

/// Changes to the amount as of round zero and to the holding fee rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Changes {
    /// To the amount as of round zero.
    pub initial: Units,
    /// To the holding fee rate.
    pub rate: Units,
}

impl Changes {
    /// Both sums with `other` added, or `None` past an `i128`.
    fn plus(self, other: Changes) -> Option<Changes> {
        Some(Changes {
            initial: Units(self.initial.0.checked_add(other.initial.0)?),
            rate: Units(self.rate.0.checked_add(other.rate.0)?),
        })
    }
}

/// The latest closed round held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Closed {
    /// Its number.
    pub round: i64,
    /// The effective time of the transaction that created its `ClosedMiningRound`,
    /// in microseconds since the epoch.
    pub effective_at: i64,
}

/// What the supply is derived from (module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Supply {
    /// The latest closed round held.
    pub closed: Option<Closed>,
    /// The sums of the changes of the rounds up to it.
    pub closed_sums: Changes,
    /// The sums of the changes of each later round (of every round, while none is closed).
    pub open_sums: BTreeMap<i64, Changes>,
}

/// The supply as an instrument states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TotalSupply {
    /// `totalSupply`: the decimal, as the network writes it.
    pub amount: String,
    /// `totalSupplyAsOf`: the effective time of the latest closed round.
    pub as_of: Timestamp,
}

impl Supply {
    /// The record stored as `bytes` (`None`: nothing stored yet).
    pub fn read(bytes: Option<&[u8]>) -> Result<Self, Error> {
        match bytes {
            None => Ok(Supply::default()),
            Some(bytes) => serde_json::from_slice(bytes)
                .map_err(|e| Error::Internal(format!("an unreadable total supply record: {e}"))),
        }
    }

    /// The record as stored.
    pub fn write(&self) -> Result<Vec<u8>, Error> {
        serde_json::to_vec(self).map_err(|e| Error::Internal(format!("writing the total supply record: {e}")))
    }

    /// The supply as of the latest closed round, if one is held (and the product fits).
    pub fn total(&self) -> Option<TotalSupply> {
        let closed = self.closed?;
        let rounds = i128::from(closed.round).checked_add(1)?;
        let fees = self.closed_sums.rate.0.checked_mul(rounds)?;
        let amount = self.closed_sums.initial.0.checked_sub(fees)?;
        let as_of = Timestamp::from_micros(closed.effective_at).ok()?;
        Some(TotalSupply { amount: decimal(amount, SCALE), as_of })
    }

    /// Adds the changes of one round.
    fn add(&mut self, round: i64, changes: Changes) {
        let sum = match self.closed {
            Some(closed) if round <= closed.round => &mut self.closed_sums,
            _ => self.open_sums.entry(round).or_default(),
        };
        if let Some(added) = sum.plus(changes) {
            *sum = added;
        }
    }

    /// Closes `round` as of `effective_at`, if it is later than the latest closed round.
    fn close(&mut self, round: i64, effective_at: Timestamp) {
        if self.closed.is_some_and(|closed| closed.round >= round) {
            return;
        }
        self.closed = Some(Closed { round, effective_at: effective_at.micros() });
        let later = self.open_sums.split_off(&round.saturating_add(1));
        for (_, changes) in core::mem::replace(&mut self.open_sums, later) {
            if let Some(added) = self.closed_sums.plus(changes) {
                self.closed_sums = added;
            }
        }
    }
}

/// `unscaled` × 10^-`scale` as Java's `BigDecimal.toString` writes it: plain when the
/// exponent of its leading digit is -6 or more, else in scientific notation.
pub fn decimal(unscaled: i128, scale: u32) -> String {
    let digits = format!("{}", unscaled.unsigned_abs());
    let sign = if unscaled < 0 { "-" } else { "" };
    let scale = scale as usize;
    let adjusted = digits.len() as i64 - 1 - scale as i64;
    if adjusted >= -6 {
        if digits.len() > scale {
            let (whole, fraction) = digits.split_at(digits.len() - scale);
            if fraction.is_empty() { format!("{sign}{whole}") } else { format!("{sign}{whole}.{fraction}") }
        } else {
            format!("{sign}0.{}{digits}", "0".repeat(scale - digits.len()))
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { "" } else { "." };
        format!("{sign}{first}{point}{rest}E{adjusted}")
    }
}

/// The templates and choices the supply follows, spelled by the configured names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupplyNames {
    coin_rules: String,
    coin: String,
    locked_coin: String,
    ans_rules: String,
    closed_round: String,
    transfer: String,
    buy_traffic: String,
    tap: String,
    mint: String,
    expire: String,
    locked_expire: String,
    unlock: String,
    coin_sum: String,
    coin_field: String,
}

/// The ANS choices that collect an entry payment and burn what they collect.
const ANS_PAYMENTS: [&str; 2] = ["AnsRules_CollectInitialEntryPayment", "AnsRules_CollectEntryRenewalPayment"];

impl SupplyNames {
    /// The names as `names` spells them.
    pub fn new(names: &Names) -> Self {
        let Names { root, coin } = names;
        let lower = coin.to_ascii_lowercase();
        SupplyNames {
            coin_rules: format!("{root}.{coin}Rules:{coin}Rules"),
            coin: format!("{root}.{coin}:{coin}"),
            locked_coin: format!("{root}.{coin}:Locked{coin}"),
            ans_rules: format!("{root}.Ans:AnsRules"),
            closed_round: format!("{root}.Round:ClosedMiningRound"),
            transfer: format!("{coin}Rules_Transfer"),
            buy_traffic: format!("{coin}Rules_BuyMemberTraffic"),
            tap: format!("{coin}Rules_DevNet_Tap"),
            mint: format!("{coin}Rules_Mint"),
            expire: format!("{coin}_Expire"),
            locked_expire: format!("Locked{coin}_Expire{coin}"),
            unlock: format!("Locked{coin}_Unlock"),
            coin_sum: format!("{lower}Sum"),
            coin_field: lower,
        }
    }

    /// Whether `event` is one the walk stops at (its changes, if any, are its own).
    fn stops_at(&self, x: &ExercisedEvent) -> bool {
        let template = x.template_id.qualified_name();
        let choice = x.choice.as_str();
        (template == self.coin_rules && [&self.transfer, &self.buy_traffic, &self.tap, &self.mint].contains(&&x.choice))
            || (template == self.coin && choice == self.expire)
            || (template == self.locked_coin && (choice == self.locked_expire || choice == self.unlock))
            || (template == self.ans_rules && ANS_PAYMENTS.contains(&choice))
    }
}

/// The balance changes and closed rounds one transaction holds (module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Found {
    changes: Vec<(i64, Changes)>,
    closed: Vec<i64>,
}

/// Walks `tx` from its roots.
fn walk(tx: &Transaction, names: &SupplyNames) -> Found {
    let mut found = Found::default();
    let mut stack: Vec<&str> = tx.root_event_ids.iter().rev().map(String::as_str).collect();
    // A transaction's events form a tree; the bound keeps a malformed one finite.
    let mut budget = tx.events_by_id.len();
    while let Some(id) = stack.pop() {
        let Some(event) = tx.events_by_id.get(id) else { continue };
        budget = match budget.checked_sub(1) {
            Some(left) => left,
            None => break,
        };
        match event {
            Event::Created(created) => {
                if created.template_id.qualified_name() == names.closed_round
                    && let Some(round) = created.create_arguments.lookup(&["round", "number"]).and_then(Value::as_int64)
                {
                    found.closed.push(round);
                }
            }
            Event::Exercised(x) if names.stops_at(x) => exercise_changes(tx, x, names, &mut found, &mut stack),
            Event::Exercised(x) => stack.extend(x.child_event_ids.iter().rev().map(String::as_str)),
        }
    }
    found
}

/// The changes of `x`, an exercise the walk stops at; an ANS payment's first child is
/// walked (onto `stack`).
fn exercise_changes<'t>(
    tx: &'t Transaction,
    x: &'t ExercisedEvent,
    names: &SupplyNames,
    found: &mut Found,
    stack: &mut Vec<&'t str>,
) {
    let result = &x.exercise_result;
    let choice = x.choice.as_str();
    let change = if choice == names.transfer || choice == names.buy_traffic {
        transfer_changes(result)
    } else if choice == names.tap || choice == names.mint {
        result
            .lookup(&[&names.coin_sum, &names.coin_field])
            .and_then(Value::as_contract_id)
            .and_then(|coin| coin_changes(tx, coin, names))
    } else if choice == names.expire || choice == names.locked_expire {
        let summary = result.lookup(&["expireSum"]).unwrap_or(result);
        summary_changes(summary)
    } else if ANS_PAYMENTS.contains(&choice) {
        stack.extend(x.child_event_ids.first().map(String::as_str));
        let burnt = x.child_event_ids.get(1).and_then(|id| tx.events_by_id.get(id.as_str()));
        burnt.and_then(|burn| coin_changes(tx, burn.contract_id(), names)).and_then(|(round, changes)| {
            Some((
                round,
                Changes {
                    initial: Units(changes.initial.0.checked_neg()?),
                    rate: Units(changes.rate.0.checked_neg()?),
                },
            ))
        })
    } else {
        // An unlock: a locked coin becomes a coin, the sum of both unchanged.
        None
    };
    found.changes.extend(change);
}

/// A transfer's (or traffic purchase's) round and the sums of its balance changes.
fn transfer_changes(result: &Value) -> Option<(i64, Changes)> {
    let round = result.lookup(&["round", "number"]).and_then(Value::as_int64)?;
    let Value::GenMap(balance_changes) = result.lookup(&["summary", "balanceChanges"])? else { return None };
    let mut sum = Changes::default();
    for (_, change) in balance_changes {
        sum = sum.plus(Changes {
            initial: numeric(change.lookup(&["changeToInitialAmountAsOfRoundZero"])?)?,
            rate: numeric(change.lookup(&["changeToHoldingFeesRate"])?)?,
        })?;
    }
    Some((round, sum))
}

/// An expiry summary's round and changes.
fn summary_changes(summary: &Value) -> Option<(i64, Changes)> {
    let round = summary.lookup(&["round", "number"]).and_then(Value::as_int64)?;
    Some((
        round,
        Changes {
            initial: numeric(summary.lookup(&["changeToInitialAmountAsOfRoundZero"])?)?,
            rate: numeric(summary.lookup(&["changeToHoldingFeesRate"])?)?,
        },
    ))
}

/// What the coin `contract_id`, created in `tx`, adds: its round of creation and its
/// amount as of round zero and rate.
fn coin_changes(tx: &Transaction, contract_id: &str, names: &SupplyNames) -> Option<(i64, Changes)> {
    let coin = tx.events_by_id.values().find_map(|event| match event {
        Event::Created(created)
            if created.contract_id == contract_id && created.template_id.qualified_name() == names.coin =>
        {
            Some(&created.create_arguments)
        }
        _ => None,
    })?;
    amount_changes(coin.as_record()?)
}

/// A coin's (payload `amount`) round of creation, amount as of round zero and rate.
fn amount_changes(coin: &Record) -> Option<(i64, Changes)> {
    let initial = numeric(coin.lookup(&["amount", "initialAmount"])?)?;
    let round = coin.lookup(&["amount", "createdAt", "number"]).and_then(Value::as_int64)?;
    let rate = numeric(coin.lookup(&["amount", "ratePerRound", "rate"])?)?;
    let accrued = rate.0.checked_mul(i128::from(round))?;
    Some((round, Changes { initial: Units(initial.0.checked_add(accrued)?), rate }))
}

fn numeric(value: &Value) -> Option<Units> {
    match value {
        Value::Numeric(n) => n.scaled(SCALE).map(Units),
        _ => None,
    }
}

/// The coin's total supply (module docs).
#[derive(Debug, Clone, Copy)]
pub struct TotalSupplyState<'n> {
    names: &'n SupplyNames,
}

impl<'n> TotalSupplyState<'n> {
    /// The supply, of the templates and choices `names` names.
    pub fn new(names: &'n SupplyNames) -> Self {
        TotalSupplyState { names }
    }

    /// The non-import transaction `update` is, if any of its events may count.
    fn counted<'u>(&self, update: &'u Update) -> Option<&'u Transaction> {
        let tx = update.as_transaction().filter(|tx| !tx.is_import())?;
        tx.events_by_id
            .values()
            .any(|event| match event {
                Event::Created(created) => created.template_id.qualified_name() == self.names.closed_round,
                Event::Exercised(x) => self.names.stops_at(x),
            })
            .then_some(tx)
    }
}

impl Projection for TotalSupplyState<'_> {
    fn keys_read<'a>(&'a self, update: &'a Update) -> impl Iterator<Item = Vec<u8>> + 'a {
        self.counted(update).map(|_| supply_key()).into_iter()
    }

    async fn apply<S: Store>(
        &self,
        stage: &mut Stage<'_, S>,
        update: &Update,
        _archived: &Archived<'_>,
    ) -> Result<(), Error> {
        let Some(tx) = self.counted(update) else { return Ok(()) };
        let found = walk(tx, self.names);
        if found == Found::default() {
            return Ok(());
        }
        let mut supply = Supply::read(stage.get(&supply_key()).await?.as_deref())?;
        let held = supply.clone();
        for (round, changes) in found.changes {
            supply.add(round, changes);
        }
        for round in found.closed {
            supply.close(round, tx.effective_at);
        }
        if supply != held {
            stage.put(supply_key(), supply.write()?);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::Config;
    use crate::storage::exec::block_on;
    use crate::storage::store::MemoryStore;
    use serde_json::{Value as Json, json};

    fn record(fields: &[(&str, Json)]) -> Json {
        let fields: Vec<Json> = fields.iter().map(|(label, value)| json!({"label": label, "value": value})).collect();
        json!({"record": {"fields": fields}})
    }

    fn numeric(text: &str) -> Json {
        json!({"numeric": text})
    }

    fn round(number: i64) -> Json {
        record(&[("number", json!({"int64": format!("{number}")}))])
    }

    fn exercised(id: &str, cid: &str, template: &str, choice: &str, result: Json, children: &[&str]) -> (String, Json) {
        let event = json!({
            "event_type": "exercised_event", "event_id": id, "contract_id": cid,
            "template_id": format!("pkg:{template}"), "package_name": "platform", "choice": choice,
            "choice_argument": record(&[]), "exercise_result": result, "consuming": false,
            "acting_parties": ["dso::1"], "child_event_ids": children
        });
        (id.into(), event)
    }

    fn created(id: &str, cid: &str, template: &str, arguments: Json) -> (String, Json) {
        let event = json!({
            "event_type": "created_event", "event_id": id, "contract_id": cid,
            "template_id": format!("pkg:{template}"), "package_name": "platform", "create_arguments": arguments,
            "created_at": "2024-01-01T00:00:00.000000Z", "signatories": ["dso::1"], "observers": []
        });
        (id.into(), event)
    }

    /// A transaction `update_id` effective on `day` of January 2024 (day 0: an import).
    fn transaction(update_id: &str, day: u32, roots: &[&str], events: Vec<(String, Json)>) -> Json {
        let time = if day == 0 {
            String::from("0001-01-01T00:00:00.000000Z")
        } else {
            format!("2024-01-{day:02}T00:00:00.000000Z")
        };
        let events: serde_json::Map<String, Json> = events.into_iter().collect();
        json!({"update": {
            "update_id": update_id, "migration_id": 0, "workflow_id": "", "record_time": time,
            "synchronizer_id": "sync::1", "effective_at": time, "root_event_ids": roots, "events_by_id": events
        }})
    }

    /// A transfer on the coin rules in `round` whose balance changes are `changes` (initial, rate).
    fn transfer(id: &str, round_number: i64, changes: &[(&str, &str)]) -> (String, Json) {
        let entries: Vec<Json> = changes
            .iter()
            .enumerate()
            .map(|(n, (initial, rate))| {
                json!({"key": {"party": format!("p{n}::1")}, "value": record(&[
                    ("changeToInitialAmountAsOfRoundZero", numeric(initial)),
                    ("changeToHoldingFeesRate", numeric(rate)),
                ])})
            })
            .collect();
        let result = record(&[
            ("round", round(round_number)),
            ("summary", record(&[("balanceChanges", json!({"genMap": {"entries": entries}}))])),
        ]);
        exercised(id, "rules", "Platform.CoinRules:CoinRules", "CoinRules_Transfer", result, &[])
    }

    fn closed(id: &str, round_number: i64) -> (String, Json) {
        created(
            id,
            &format!("closed-{round_number}"),
            "Platform.Round:ClosedMiningRound",
            record(&[("round", round(round_number))]),
        )
    }

    fn supply(store: &MemoryStore) -> Option<TotalSupply> {
        Supply::read(block_on(store.get(&supply_key())).unwrap().as_deref()).unwrap().total()
    }

    fn ingest(store: &MemoryStore, records: &[Json]) {
        let body: String = records.iter().map(|r| format!("{r}\n")).collect();
        block_on(crate::ingest::ingest(body.as_bytes(), store, &Config::default())).unwrap();
    }

    #[test]
    fn decimals_are_written_as_the_network_s_registry_writes_them() {
        for (unscaled, want) in [
            (0, "0E-10"),
            (15_000_000_000, "1.5000000000"),
            (-30_000_000_000, "-3.0000000000"),
            (1, "1E-10"),
            (1_000, "1.000E-7"),
            (-1_200, "-1.200E-7"),
            (10_000, "0.0000010000"),
            (994_870_000_000, "99.4870000000"),
        ] {
            assert_eq!(decimal(unscaled, 10), want, "{unscaled}");
        }
    }

    #[test]
    fn the_supply_sums_the_balance_changes_of_the_rounds_up_to_the_latest_closed_one() {
        let store = MemoryStore::new();
        let coin = record(&[
            ("owner", json!({"party": "alice::1"})),
            (
                "amount",
                record(&[
                    ("initialAmount", numeric("100.0000000000")),
                    ("createdAt", round(2)),
                    ("ratePerRound", record(&[("rate", numeric("0.0100000000"))])),
                ]),
            ),
        ]);
        let tap_result = record(&[("coinSum", record(&[("coin", json!({"contractId": "c1"})), ("round", round(2))]))]);
        ingest(
            &store,
            &[
                // Round 1: -10.5 + 10 to the amounts as of round zero, 0.001 to the rates,
                // reached through an exercise the walk goes into.
                transaction(
                    "u1",
                    1,
                    &["u1:0"],
                    alloc::vec![
                        exercised(
                            "u1:0",
                            "factory",
                            "Platform.Api:TransferFactory",
                            "TransferFactory_Transfer",
                            record(&[]),
                            &["u1:1"]
                        ),
                        transfer("u1:1", 1, &[("-10.5000000000", "0E-10"), ("10.0000000000", "0.0010000000")]),
                    ],
                ),
                // Round 2: a tap of 100 coins at a rate of 0.01 since round 2.
                transaction(
                    "u2",
                    2,
                    &["u2:0"],
                    alloc::vec![
                        exercised(
                            "u2:0",
                            "rules",
                            "Platform.CoinRules:CoinRules",
                            "CoinRules_DevNet_Tap",
                            tap_result,
                            &["u2:1"]
                        ),
                        created("u2:1", "c1", "Platform.Coin:Coin", coin),
                    ],
                ),
                // An import restates, and a transfer under an unlock is not walked into.
                transaction("u3", 0, &["u3:0"], alloc::vec![transfer("u3:0", 1, &[("1000.0000000000", "0E-10")])]),
                transaction(
                    "u4",
                    3,
                    &["u4:0"],
                    alloc::vec![
                        exercised(
                            "u4:0",
                            "l1",
                            "Platform.Coin:LockedCoin",
                            "LockedCoin_Unlock",
                            record(&[]),
                            &["u4:1"]
                        ),
                        transfer("u4:1", 1, &[("1000.0000000000", "0E-10")]),
                    ],
                ),
            ],
        );
        assert_eq!(supply(&store), None, "no round closed yet");
        ingest(&store, &[transaction("u5", 4, &["u5:0"], alloc::vec![closed("u5:0", 1)])]);
        // -0.5 - (1 + 1) * 0.001
        let want =
            TotalSupply { amount: "-0.5020000000".into(), as_of: Timestamp::parse("2024-01-04T00:00:00Z").unwrap() };
        assert_eq!(supply(&store), Some(want));
        ingest(&store, &[transaction("u6", 5, &["u6:0"], alloc::vec![closed("u6:0", 2)])]);
        // -0.5 + 100 + 0.01 * 2 - (2 + 1) * (0.001 + 0.01)
        let want =
            TotalSupply { amount: "99.4870000000".into(), as_of: Timestamp::parse("2024-01-05T00:00:00Z").unwrap() };
        assert_eq!(supply(&store), Some(want.clone()));
        // An earlier round closed again, or a change of a closed round arriving late.
        ingest(&store, &[transaction("u7", 6, &["u7:0"], alloc::vec![closed("u7:0", 1)])]);
        assert_eq!(supply(&store), Some(want));
        ingest(
            &store,
            &[transaction("u8", 7, &["u8:0"], alloc::vec![transfer("u8:0", 2, &[("-1.0000000000", "0E-10")])])],
        );
        assert_eq!(supply(&store).map(|s| s.amount), Some("98.4870000000".into()));
    }

    #[test]
    fn an_expiry_subtracts_its_summary_and_an_ans_payment_burns_its_coin() {
        let store = MemoryStore::new();
        let summary = record(&[
            ("round", round(1)),
            ("changeToInitialAmountAsOfRoundZero", numeric("-5.0000000000")),
            ("changeToHoldingFeesRate", numeric("-0.0010000000")),
        ]);
        let coin = |amount: &str| {
            record(&[(
                "amount",
                record(&[
                    ("initialAmount", numeric(amount)),
                    ("createdAt", round(1)),
                    ("ratePerRound", record(&[("rate", numeric("0E-10"))])),
                ]),
            )])
        };
        ingest(
            &store,
            &[
                transaction(
                    "u1",
                    1,
                    &["u1:0", "u1:1"],
                    alloc::vec![
                        exercised(
                            "u1:0",
                            "c0",
                            "Platform.Coin:Coin",
                            "Coin_Expire",
                            record(&[("expireSum", summary)]),
                            &[]
                        ),
                        exercised(
                            "u1:1",
                            "ans",
                            "Platform.Ans:AnsRules",
                            "AnsRules_CollectInitialEntryPayment",
                            record(&[]),
                            &["u1:2", "u1:4"]
                        ),
                        // The payment: a transfer to the DSO of a coin of 2, which it burns.
                        exercised(
                            "u1:2",
                            "pay",
                            "Platform.Wallet:Payment",
                            "Payment_Collect",
                            record(&[]),
                            &["u1:3", "u1:5"]
                        ),
                        transfer("u1:3", 1, &[("0E-10", "0E-10")]),
                        exercised("u1:4", "c2", "Platform.Coin:Coin", "Archive", record(&[]), &[]),
                        created("u1:5", "c2", "Platform.Coin:Coin", coin("2.0000000000")),
                    ],
                ),
                transaction("u2", 2, &["u2:0"], alloc::vec![closed("u2:0", 1)]),
            ],
        );
        // -5 - 2 - (1 + 1) * (-0.001)
        assert_eq!(supply(&store).map(|s| s.amount), Some("-6.9980000000".into()));
    }

    #[test]
    fn the_network_s_names_spell_the_network_s_choices() {
        let names = SupplyNames::new(&Names { root: "Splice".into(), coin: "Amulet".into() });
        assert_eq!(names.transfer, "AmuletRules_Transfer");
        assert_eq!(names.locked_expire, "LockedAmulet_ExpireAmulet");
        assert_eq!(names.coin_sum, "amuletSum");
        assert_eq!(names.coin, "Splice.Amulet:Amulet");
    }
}
