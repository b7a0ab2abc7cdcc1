//! The DSO's side of the history: the bootstrap (rules, the first rounds, a price vote
//! per SV) and the round automation that runs every tick (open, close, confirm the
//! archival of, and archive mining rounds).

use std::io::{self, Write};
use std::rc::Rc;

use ledger_node_core::model::value::{Record, Value};

use super::{ClosedRound, Confirmation, History, Round, TxTime};
use crate::demo::network::Template;
use crate::demo::random::Rng;
use crate::demo::tree::{Action, Contract, Exercise};
use crate::demo::values::{cid, none, numeric, party, payload, record, reltime, round, some, text, timestamp, variant};
use crate::demo::{DAY, HOUR, MINUTE, SECOND, START, TICK, UNIT};

impl<W: Write> History<W> {
    // --- bootstrap

    /// One of the three bootstrap transactions: the rules, the first open rounds, the
    /// SVs' price votes.
    pub(super) fn bootstrap_step(&mut self) -> io::Result<()> {
        let time = self.begin();
        let dso = self.net.dso.clone();
        let roots = match self.bootstrap {
            0 => {
                let dso_rules = self.dso_contract(Template::DsoRules, self.dso_rules_payload(), time);
                let coin_rules = self.dso_contract(Template::CoinRules, coin_rules_payload(&dso), time);
                let config = payload([
                    ("dso", party(&dso)),
                    (
                        "config",
                        record([
                            ("transferPreapprovalFee", some(numeric(UNIT / 4))),
                            ("maxSubmissionDelay", reltime(10 * MINUTE)),
                            ("maxInputs", Value::Int64(100)),
                        ]),
                    ),
                ]);
                let external_config = self.dso_contract(Template::ExternalPartyConfigState, config, time);
                let roots =
                    vec![Action::create(&dso_rules), Action::create(&coin_rules), Action::create(&external_config)];
                self.dso_rules = Some(Rc::new(dso_rules));
                self.coin_rules = Some(Rc::new(coin_rules));
                self.external_config = Some(external_config);
                roots
            }
            1 => {
                let mut children = Vec::new();
                for number in 0..3 {
                    let round = self.new_open_round(number, START + number * TICK, time);
                    children.push(Action::create(&round.contract));
                    self.open.push_back(round);
                }
                let Some(dso_rules) = &self.dso_rules else {
                    return Ok(());
                };
                let argument = record([("initialRound", round(0))]);
                vec![Exercise::on(dso_rules, "DsoRules_StartMiningRounds", &dso, argument).children(children).action()]
            }
            _ => {
                let mut roots = Vec::new();
                for sv in 0..self.net.svs.len() {
                    let vote = self.new_vote(sv, time);
                    roots.push(Action::create(&vote));
                    self.votes[sv] = Some(vote);
                }
                roots
            }
        };
        self.bootstrap += 1;
        self.commit(time, "", roots, false)
    }

    fn dso_rules_payload(&self) -> Record {
        let svs = self
            .net
            .svs
            .iter()
            .map(|sv| {
                let info = record([
                    ("name", text(sv.name)),
                    ("joinedAsOfRound", round(0)),
                    ("participantId", text(&sv.participant)),
                ]);
                (party(&sv.party), info)
            })
            .collect();
        payload([
            ("dso", party(&self.net.dso)),
            ("epoch", Value::Int64(0)),
            ("svs", Value::GenMap(svs)),
            (
                "config",
                record([
                    ("numUnclaimedRewardsThreshold", Value::Int64(10)),
                    ("actionConfirmationTimeout", reltime(HOUR)),
                    ("svOnboardingRequestTimeout", reltime(DAY)),
                    ("dsoDelegateInactiveTimeout", reltime(70 * SECOND)),
                ]),
            ),
            ("isDevNet", Value::Bool(true)),
        ])
    }

    fn new_open_round(&mut self, number: i64, opens_at: i64, time: TxTime) -> Round {
        let arguments = payload([
            ("dso", party(&self.net.dso)),
            ("round", round(number)),
            ("coinPrice", numeric(self.price)),
            ("opensAt", timestamp(opens_at)),
            ("targetClosesAt", timestamp(opens_at + 2 * TICK)),
            ("issuingFor", reltime(number * TICK)),
            (
                "transferConfigUsd",
                record([
                    ("createFee", record([("fee", numeric(UNIT / 100))])),
                    ("holdingFee", record([("rate", numeric(UNIT / 52_560))])),
                    ("lockHolderFee", record([("fee", numeric(UNIT / 200))])),
                    ("maxNumInputs", Value::Int64(100)),
                    ("maxNumOutputs", Value::Int64(100)),
                    ("maxNumLockHolders", Value::Int64(50)),
                ]),
            ),
            (
                "issuanceConfig",
                record([
                    ("coinToIssuePerYear", numeric(400_000_000 * UNIT)),
                    ("validatorRewardPercentage", numeric(UNIT / 20)),
                    ("appRewardPercentage", numeric(3 * UNIT / 20)),
                    ("validatorRewardCap", numeric(UNIT / 5)),
                    ("featuredAppRewardCap", numeric(100 * UNIT)),
                    ("optValidatorFaucetCap", some(numeric(UNIT * 57 / 10))),
                ]),
            ),
            ("tickDuration", reltime(TICK)),
        ]);
        let contract = self.dso_contract(Template::OpenMiningRound, arguments, time);
        Round { number, opens_at, contract }
    }

    pub(super) fn new_vote(&mut self, sv: usize, time: TxTime) -> Contract {
        let price = (self.price + self.rng.range(-self.price / 100, self.price / 100 + 1)).max(1);
        let sv_party = self.net.svs[sv].party.clone();
        let arguments = payload([
            ("dso", party(&self.net.dso)),
            ("sv", party(&sv_party)),
            ("coinPrice", numeric(price)),
            ("lastUpdatedAt", timestamp(time.effective)),
        ]);
        let dso = self.net.dso.clone();
        self.new_contract(Template::CoinPriceVote, arguments, vec![dso], vec![sv_party], time)
    }

    // --- round automation

    pub(super) fn advance_rounds(&mut self) -> io::Result<bool> {
        let (Some(dso_rules), Some(coin_rules)) = (self.dso_rules.clone(), self.coin_rules.clone()) else {
            return Ok(false);
        };
        let Some(oldest) = self.open.pop_front() else {
            return Ok(false);
        };
        let time = self.begin();
        let tick_at = START + self.tick as i64 * TICK;
        let number = self.open.back().map_or(oldest.number, |r| r.number) + 1;
        let new = self.new_open_round(number, tick_at + 2 * TICK, time);
        let dso = self.net.dso.clone();
        let middle = self.open.front().map(|r| cid(r.contract.id())).unwrap_or(Value::Unit);
        let latest = self.open.back().map(|r| cid(r.contract.id())).unwrap_or(Value::Unit);
        let argument = record([
            ("roundToArchiveCid", cid(oldest.contract.id())),
            ("middleRoundCid", middle),
            ("latestRoundCid", latest),
            ("coinPrice", numeric(self.price)),
        ]);
        let advance = Exercise::on(&coin_rules, "CoinRules_AdvanceOpenMiningRounds", &dso, argument)
            .result(record([("openMiningRoundCid", cid(new.contract.id()))]))
            .children(vec![Exercise::archive(&oldest.contract, &dso).action(), Action::create(&new.contract)]);
        let root = Exercise::on(
            &dso_rules,
            "DsoRules_AdvanceOpenMiningRounds",
            &dso,
            record([("coinRulesCid", cid(coin_rules.id()))]),
        )
        .children(vec![advance.action()]);
        self.summarizing.push_back((oldest.number, self.tick));
        self.open.push_back(new);
        self.commit(time, "", vec![root.action()], false)?;
        Ok(true)
    }

    pub(super) fn close_round(&mut self, tick: u64) -> io::Result<bool> {
        let Some(dso_rules) = self.dso_rules.clone() else {
            return Ok(false);
        };
        let Some(&(number, archived)) = self.summarizing.front() else {
            return Ok(false);
        };
        if archived >= tick {
            return Ok(false);
        }
        self.summarizing.pop_front();
        let time = self.begin();
        let issuance = |r: &mut Rng, scale: i64| numeric(r.range(UNIT / 10, 10 * UNIT) * scale);
        let arguments = payload([
            ("dso", party(&self.net.dso)),
            ("round", round(number)),
            ("issuancePerValidatorRewardCoupon", issuance(&mut self.rng, 1)),
            ("issuancePerFeaturedAppRewardCoupon", issuance(&mut self.rng, 10)),
            ("issuancePerUnfeaturedAppRewardCoupon", issuance(&mut self.rng, 1)),
            ("issuancePerSvRewardCoupon", issuance(&mut self.rng, 100)),
            ("optIssuancePerValidatorFaucetCoupon", none()),
        ]);
        let closed = self.dso_contract(Template::ClosedMiningRound, arguments, time);
        let dso = self.net.dso.clone();
        let root = Exercise::on(&dso_rules, "DsoRules_MiningRound_Close", &dso, record([("round", round(number))]))
            .result(record([("closedRoundCid", cid(closed.id()))]))
            .children(vec![Action::create(&closed)]);
        self.closed.push_back(ClosedRound { number, contract: closed, closed_tick: tick, confirmed: false });
        self.commit(time, "", vec![root.action()], false)?;
        Ok(true)
    }

    fn archive_action(closed_round: &str) -> Value {
        variant(
            "ARC_DsoRules",
            record([(
                "dsoAction",
                variant("SRARC_ArchiveClosedMiningRound", record([("closedRoundCid", cid(closed_round))])),
            )]),
        )
    }

    pub(super) fn confirm_archival(&mut self, tick: u64) -> io::Result<bool> {
        let Some(dso_rules) = self.dso_rules.clone() else {
            return Ok(false);
        };
        let Some(closed) = self.closed.iter_mut().find(|c| !c.confirmed && c.closed_tick < tick) else {
            return Ok(false);
        };
        closed.confirmed = true;
        let (number, closed_id) = (closed.number, closed.contract.id().to_owned());
        let time = self.begin();
        let sv = self.rng.index(self.net.svs.len());
        let sv_party = self.net.svs[sv].party.clone();
        let dso = self.net.dso.clone();
        let action = Self::archive_action(&closed_id);
        let arguments = payload([
            ("dso", party(&dso)),
            ("confirmer", party(&sv_party)),
            ("action", action.clone()),
            ("expiresAt", timestamp(time.effective + HOUR)),
        ]);
        let confirmation =
            self.new_contract(Template::Confirmation, arguments, vec![dso.clone()], vec![sv_party.clone()], time);
        let root = Exercise::on(
            &dso_rules,
            "DsoRules_ConfirmAction",
            &sv_party,
            record([("confirmer", party(&sv_party)), ("action", action)]),
        )
        .result(record([("confirmation", cid(confirmation.id()))]))
        .children(vec![Action::create(&confirmation)]);
        self.confirmations.push_back(Confirmation { round: number, contract: confirmation, tick });
        self.commit(time, "", vec![root.action()], false)?;
        Ok(true)
    }

    pub(super) fn archive_closed_round(&mut self, tick: u64) -> io::Result<bool> {
        let Some(dso_rules) = self.dso_rules.clone() else {
            return Ok(false);
        };
        let Some(i) = self.confirmations.iter().position(|c| c.tick < tick) else {
            return Ok(false);
        };
        let Some(j) = self.closed.iter().position(|c| c.number == self.confirmations[i].round) else {
            return Ok(false);
        };
        let (Some(confirmation), Some(closed)) = (self.confirmations.remove(i), self.closed.remove(j)) else {
            return Ok(false);
        };
        let time = self.begin();
        let dso = self.net.dso.clone();
        let root = Exercise::on(
            &dso_rules,
            "DsoRules_ExecuteConfirmedAction",
            &dso,
            record([
                ("action", Self::archive_action(closed.contract.id())),
                ("confirmationCids", Value::List(vec![cid(confirmation.contract.id())])),
            ]),
        )
        .result(record([]))
        .children(vec![
            Exercise::on(&closed.contract, "ClosedMiningRound_Archive", &dso, record([])).consuming().action(),
            Exercise::archive(&confirmation.contract, &dso).action(),
        ]);
        self.commit(time, "", vec![root.action()], false)?;
        Ok(true)
    }
}

fn coin_rules_payload(dso: &str) -> Record {
    payload([
        ("dso", party(dso)),
        (
            "configSchedule",
            record([
                (
                    "initialValue",
                    record([
                        (
                            "transferConfig",
                            record([
                                ("createFee", record([("fee", numeric(UNIT / 100))])),
                                ("holdingFee", record([("rate", numeric(UNIT / 52_560))])),
                                ("maxNumInputs", Value::Int64(100)),
                                ("maxNumOutputs", Value::Int64(100)),
                            ]),
                        ),
                        ("tickDuration", reltime(TICK)),
                        ("decentralizedSynchronizer", text("global-domain")),
                    ]),
                ),
                ("futureValues", Value::List(vec![])),
            ]),
        ),
        ("isDevNet", Value::Bool(true)),
    ])
}
