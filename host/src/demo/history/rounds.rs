//! The DSO's side of the history: the bootstrap (rules, the first rounds, a price vote
//! per SV, then the network's state: the SVs' node states, validator licenses, a
//! featured app, transfer preapprovals, a transfer command counter and transfer
//! commands, ANS rules and entries, development fund coupons and a vote request) and the round automation that
//! runs every tick (open, issue, close, confirm the archival of, and archive mining
//! rounds).

use std::io::{self, Write};
use std::rc::Rc;

use ledger_node_core::model::value::{Record, Value};

use super::{ClosedRound, Confirmation, History, Round, TxTime};
use crate::demo::network::Template;
use crate::demo::random::{Ids, Rng};
use crate::demo::tree::{Action, Contract, Exercise};
use crate::demo::values::{cid, none, numeric, party, payload, record, reltime, round, some, text, timestamp, variant};
use crate::demo::{DAY, HOUR, MINUTE, SECOND, START, TICK, UNIT};

impl<W: Write> History<W> {
    // --- bootstrap

    /// One of the four bootstrap transactions: the rules, the first open rounds, the
    /// SVs' price votes, the network's state.
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
            3 => {
                let mut contracts = self.network_state_contracts(time);
                let mut roots: Vec<Action> = contracts.iter().map(Action::create).collect();
                let (commands, pending) = self.transfer_commands(&contracts, time);
                roots.extend(commands);
                contracts.extend(pending);
                self.network_state = contracts;
                roots
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
            ("dsoDelegate", party(&self.net.svs[0].party)),
        ])
    }

    /// The network's state besides its rules and rounds, as the network's Daml shapes
    /// it (`Splice.DSO.SvState`, `Splice.ValidatorLicense`, `Splice.Amulet`,
    /// `Splice.AmuletRules`, `Splice.ExternalPartyAmuletRules`, `Splice.Ans`,
    /// `Splice.DsoRules`): each SV's node state with its sequencer, mediator and scan on
    /// the global synchronizer, a license per validator, a featured app right of the
    /// first validator, preapprovals of the first two users, the external party's
    /// transfer command counter, ANS rules and two entries, two development fund
    /// coupons and a vote request.
    fn network_state_contracts(&mut self, time: TxTime) -> Vec<Contract> {
        let dso = self.net.dso.clone();
        let global = self.net.global.clone();
        let mut out = Vec::new();
        let external = self.dso_contract(Template::ExternalPartyCoinRules, payload([("dso", party(&dso))]), time);
        out.push(external);
        let ans_config = record([
            ("renewalDuration", reltime(30 * DAY)),
            ("entryLifetime", reltime(90 * DAY)),
            ("entryFee", numeric(UNIT)),
            ("descriptionPrefix", text("ANS entry: ")),
        ]);
        let ans_rules =
            self.dso_contract(Template::AnsRules, payload([("dso", party(&dso)), ("config", ans_config)]), time);
        out.push(ans_rules);
        for sv in 0..self.net.svs.len() {
            let (name, sv_party) = (self.net.svs[sv].name, self.net.svs[sv].party.clone());
            let node = record([
                (
                    "cometBft",
                    record([
                        ("nodes", Value::GenMap(vec![])),
                        ("governanceKeys", Value::List(vec![])),
                        ("sequencingKeys", Value::List(vec![])),
                    ]),
                ),
                (
                    "sequencer",
                    some(record([
                        ("migrationId", Value::Int64(0)),
                        (
                            "sequencerId",
                            text(&format!(
                                "SEQ::{name}::{}",
                                self.net.svs[sv].party.split_once("::").map_or("", |(_, ns)| ns)
                            )),
                        ),
                        ("url", text(&format!("https://sequencer.{name}.example.com"))),
                        ("availableAfter", some(timestamp(time.effective))),
                    ])),
                ),
                ("mediator", some(record([("mediatorId", text(&format!("MED::{name}")))]))),
                ("scan", some(record([("publicUrl", text(&format!("https://scan.{name}.example.com")))]))),
                ("legacySequencerConfig", none()),
            ]);
            let state = record([("synchronizerNodes", Value::GenMap(vec![(text(&global), node)]))]);
            let arguments =
                payload([("dso", party(&dso)), ("sv", party(&sv_party)), ("svName", text(name)), ("state", state)]);
            out.push(self.new_contract(Template::SvNodeState, arguments, vec![dso.clone()], vec![sv_party], time));
        }
        for validator in 0..self.net.validators.len() {
            let validator_party = self.net.validators[validator].party.clone();
            let arguments = payload([
                ("validator", party(&validator_party)),
                ("sponsor", party(&self.net.svs[validator % self.net.svs.len()].party)),
                ("dso", party(&dso)),
                ("faucetState", none()),
                ("metadata", none()),
                ("lastActiveAt", some(timestamp(time.effective))),
            ]);
            let license = self.new_contract(
                Template::ValidatorLicense,
                arguments,
                vec![dso.clone()],
                vec![validator_party],
                time,
            );
            out.push(license);
        }
        let provider = self.net.validators[0].party.clone();
        let right = payload([("dso", party(&dso)), ("provider", party(&provider))]);
        out.push(self.new_contract(Template::FeaturedAppRight, right, vec![dso.clone()], vec![provider], time));
        let expires_at = time.effective + 3650 * DAY;
        for owner in 0..2 {
            let (receiver, provider) = (self.net.owner(owner).to_owned(), self.net.provider(owner).to_owned());
            let arguments = payload([
                ("receiver", party(&receiver)),
                ("provider", party(&provider)),
                ("dso", party(&dso)),
                ("validFrom", timestamp(time.effective)),
                ("lastRenewedAt", timestamp(time.effective)),
                ("expiresAt", timestamp(expires_at)),
            ]);
            let preapproval = self.new_contract(
                Template::TransferPreapproval,
                arguments,
                vec![receiver, provider, dso.clone()],
                vec![],
                time,
            );
            out.push(preapproval);
        }
        if let Some(external) = self.net.owners.iter().position(|o| o.external) {
            let sender = self.net.owner(external).to_owned();
            let arguments = payload([("dso", party(&dso)), ("sender", party(&sender)), ("nextNonce", Value::Int64(3))]);
            out.push(self.new_contract(
                Template::TransferCommandCounter,
                arguments,
                vec![dso.clone()],
                vec![sender],
                time,
            ));
        }
        for (owner, name) in [(0, "alice.unverified.ans"), (2, "carol.unverified.ans")] {
            let user = self.net.owner(owner).to_owned();
            let arguments = payload([
                ("user", party(&user)),
                ("dso", party(&dso)),
                ("name", text(name)),
                ("url", text(&format!("https://{name}.example.com"))),
                ("description", text("ANS entry: a demo user")),
                ("expiresAt", timestamp(expires_at)),
            ]);
            out.push(self.new_contract(Template::AnsEntry, arguments, vec![user, dso.clone()], vec![], time));
        }
        for amount in [UNIT * 15, UNIT * 40] {
            let arguments = payload([("dso", party(&dso)), ("amount", numeric(amount))]);
            out.push(self.dso_contract(Template::UnclaimedDevelopmentFundCoupon, arguments, time));
        }
        let requester = self.net.svs[1].name;
        let action = variant(
            "ARC_DsoRules",
            record([(
                "dsoAction",
                variant("SRARC_GrantFeaturedAppRight", record([("provider", party(&self.net.validators[1].party))])),
            )]),
        );
        let arguments = payload([
            ("dso", party(&dso)),
            ("requester", text(requester)),
            ("action", action),
            ("reason", record([("url", text("https://vote.example.com/1")), ("body", text("feature validator2"))])),
            ("voteBefore", timestamp(time.effective + 7 * DAY)),
            ("votes", Value::GenMap(vec![])),
            ("trackingCid", none()),
        ]);
        out.push(self.dso_contract(Template::VoteRequest, arguments, time));
        out
    }

    /// The external party's transfer commands (`Splice.ExternalPartyAmuletRules`), each
    /// created through `ExternalPartyCoinRules_CreateTransferCommand` on the
    /// `ExternalPartyCoinRules` of `network_state`, and all but the last settled in the
    /// same transaction by the exercise that archives it, with its result as the
    /// network's Daml writes it: nonce 0 sent; nonce 1 withdrawn, then created again
    /// and failed (`ITR_Other`, no preapproval of the receiver); nonce 2 expired, then
    /// created again and sent; nonce 3 pending (the counter's `nextNonce`): the roots,
    /// and the commands left active. Their ids and blobs come from a generator of their
    /// own, so the rest of the history is what it was without them.
    fn transfer_commands(&mut self, network_state: &[Contract], time: TxTime) -> (Vec<Action>, Vec<Contract>) {
        let of = |template| network_state.iter().find(|c| c.created.template_id == *self.net.template_id(template));
        let (Some(rules), Some(counter)) = (of(Template::ExternalPartyCoinRules), of(Template::TransferCommandCounter))
        else {
            return (Vec::new(), Vec::new());
        };
        let mut rng = Rng::new(self.rng.clone().next_u64() ^ 0x7463);
        let mut ids = Ids::new(rng.next_u64());
        std::mem::swap(&mut self.rng, &mut rng);
        std::mem::swap(&mut self.ids, &mut ids);
        let roots = self.transfer_command_actions(rules, counter, time);
        std::mem::swap(&mut self.rng, &mut rng);
        std::mem::swap(&mut self.ids, &mut ids);
        roots
    }

    fn transfer_command_actions(
        &mut self,
        rules: &Contract,
        counter: &Contract,
        time: TxTime,
    ) -> (Vec<Action>, Vec<Contract>) {
        let dso = self.net.dso.clone();
        let Some(Value::Party(sender)) = counter.created.create_arguments.lookup(&["sender"]).cloned() else {
            return (Vec::new(), Vec::new());
        };
        let mut pending = Vec::new();
        let receiver = self.net.owner(0).to_owned();
        let delegate = self.net.svs[0].party.clone();
        let round_number = self.round_number_at(time.effective);
        let mut roots = Vec::new();
        for (nonce, outcome) in
            [(0, "sent"), (1, "withdrawn"), (1, "failed"), (2, "expired"), (2, "sent"), (3, "pending")]
        {
            let expires_at = if outcome == "expired" { time.effective - MINUTE } else { time.effective + DAY };
            let amount = numeric(UNIT * (nonce + 1) * 5);
            let description = some(text("a demo transfer command"));
            let arguments = payload([
                ("dso", party(&dso)),
                ("sender", party(&sender)),
                ("receiver", party(&receiver)),
                ("delegate", party(&delegate)),
                ("amount", amount.clone()),
                ("expiresAt", timestamp(expires_at)),
                ("nonce", Value::Int64(nonce)),
                ("description", description.clone()),
            ]);
            let command = self.new_contract(
                Template::TransferCommand,
                arguments,
                vec![sender.clone(), dso.clone()],
                vec![delegate.clone()],
                time,
            );
            let argument = record([
                ("sender", party(&sender)),
                ("receiver", party(&receiver)),
                ("delegate", party(&delegate)),
                ("amount", amount.clone()),
                ("expiresAt", timestamp(expires_at)),
                ("nonce", Value::Int64(nonce)),
                ("description", description),
                ("expectedDso", some(party(&dso))),
            ]);
            let create = Exercise::on(rules, "ExternalPartyCoinRules_CreateTransferCommand", &sender, argument)
                .result(record([("transferCommandCid", cid(command.id()))]))
                .children(vec![Action::create(&command)]);
            roots.push(create.action());
            let returned = [("sender", party(&sender)), ("nonce", Value::Int64(nonce))];
            let sent = |result: Value| {
                let [sender, nonce] = returned.clone();
                record([("result", result), sender, nonce])
            };
            let settled = match outcome {
                "sent" => {
                    let transfer = record([
                        ("round", round(round_number)),
                        (
                            "summary",
                            record([
                                ("inputCoinAmount", amount),
                                ("balanceChanges", Value::GenMap(vec![])),
                                ("holdingFees", numeric(0)),
                                ("outputFees", Value::List(vec![numeric(0)])),
                                ("senderChangeAmount", numeric(0)),
                            ]),
                        ),
                        ("createdCoins", Value::List(vec![])),
                        ("senderChangeCoin", none()),
                        ("meta", none()),
                    ]);
                    let result = sent(variant("TransferCommandResultSuccess", record([("result", transfer)])));
                    Some(self.send(&command, counter, &delegate, result))
                }
                "failed" => {
                    let reason = format!("No TransferPreapproval for receiver '{receiver}'");
                    let failure = record([("reason", variant("ITR_Other", text(&reason)))]);
                    let result = sent(variant("TransferCommandResultFailure", failure));
                    Some(self.send(&command, counter, &delegate, result))
                }
                "withdrawn" => {
                    let withdraw = Exercise::on(&command, "TransferCommand_Withdraw", &sender, record([]));
                    Some(withdraw.consuming().result(record(returned)))
                }
                "expired" => {
                    let argument = record([("p", party(&dso))]);
                    let expire = Exercise::on(&command, "TransferCommand_Expire", &dso, argument);
                    Some(expire.consuming().result(record(returned)))
                }
                _ => {
                    pending.push(command.clone());
                    None
                }
            };
            roots.extend(settled.map(Exercise::action));
        }
        (roots, pending)
    }

    /// The delegate's `TransferCommand_Send` of `command` against the sender's
    /// `counter`, with `result`.
    fn send(&self, command: &Contract, counter: &Contract, delegate: &str, result: Value) -> Exercise {
        let argument = record([
            ("context", record([("coinRules", cid(self.coin_rules.as_ref().map_or("", |c| c.id())))])),
            ("inputs", Value::List(vec![])),
            ("transferPreapprovalCidO", none()),
            ("transferCounterCid", cid(counter.id())),
        ]);
        Exercise::on(command, "TransferCommand_Send", delegate, argument).consuming().result(result)
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

    /// The issuing round of `number`, issuing from the next tick after `tick_at` until
    /// two ticks later (`Splice.Round:IssuingMiningRound`).
    fn new_issuing_round(&mut self, number: i64, tick_at: i64, time: TxTime) -> Contract {
        let issuance = |r: &mut Rng, scale: i64| numeric(r.range(UNIT / 10, 10 * UNIT) * scale);
        let arguments = payload([
            ("dso", party(&self.net.dso)),
            ("round", round(number)),
            ("issuancePerValidatorRewardCoupon", issuance(&mut self.rng, 1)),
            ("issuancePerFeaturedAppRewardCoupon", issuance(&mut self.rng, 10)),
            ("issuancePerUnfeaturedAppRewardCoupon", issuance(&mut self.rng, 1)),
            ("issuancePerSvRewardCoupon", issuance(&mut self.rng, 100)),
            ("opensAt", timestamp(tick_at + TICK)),
            ("targetClosesAt", timestamp(tick_at + 3 * TICK)),
            ("optIssuancePerValidatorFaucetCoupon", none()),
        ]);
        self.dso_contract(Template::IssuingMiningRound, arguments, time)
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
        let issuing = self.new_issuing_round(oldest.number, tick_at, time);
        let advance = Exercise::on(&coin_rules, "CoinRules_AdvanceOpenMiningRounds", &dso, argument)
            .result(record([("openMiningRoundCid", cid(new.contract.id()))]))
            .children(vec![
                Exercise::archive(&oldest.contract, &dso).action(),
                Action::create(&new.contract),
                Action::create(&issuing),
            ]);
        self.issuing.push_back((oldest.number, issuing));
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
        let mut children = Vec::new();
        if let Some(i) = self.issuing.iter().position(|(n, _)| *n == number)
            && let Some((_, issuing)) = self.issuing.remove(i)
        {
            children.push(Exercise::archive(&issuing, &dso).action());
        }
        children.push(Action::create(&closed));
        let root = Exercise::on(&dso_rules, "DsoRules_MiningRound_Close", &dso, record([("round", round(number))]))
            .result(record([("closedRoundCid", cid(closed.id()))]))
            .children(children);
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
