//! The users' side of the history: price votes, taps, coin transfers, and transfer
//! instructions through the token standard (created, then accepted, rejected,
//! withdrawn, or left with an expired lock), and coin allocations to a settlement
//! (allocated, then executed, cancelled or withdrawn).

use std::io::{self, Write};

use ledger_node_core::model::value::{Record, Value};

use super::{Allocation, Coin, History, Instruction, TxTime};
use crate::demo::network::{Interface, Template};
use crate::demo::tree::{Action, Contract, Exercise};
use crate::demo::values::{
    cid, date, enumeration, metadata, none, numeric, party, payload, record, round, some, text, timestamp, variant,
};
use crate::demo::{DAY, HOUR, MAX_ALLOCATIONS, MAX_INSTRUCTIONS, UNIT};

impl<W: Write> History<W> {
    /// An SV changes its coin price vote: the old vote archived, a new one created.
    pub(super) fn update_vote(&mut self) -> io::Result<bool> {
        let Some(dso_rules) = self.dso_rules.clone() else {
            return Ok(false);
        };
        let sv = self.rng.index(self.net.svs.len());
        let Some(old) = self.votes[sv].take() else {
            return Ok(false);
        };
        // The price drifts by up to 2% a vote, within [0.001, 0.05].
        let drift = self.rng.range(-200, 201);
        self.price = (self.price + self.price * drift / 10_000).clamp(UNIT / 1000, UNIT / 20);
        let time = self.begin();
        let vote = self.new_vote(sv, time);
        let sv_party = self.net.svs[sv].party.clone();
        let root = Exercise::on(
            &dso_rules,
            "DsoRules_UpdateCoinPriceVote",
            &sv_party,
            record([("sv", party(&sv_party)), ("voteCid", cid(old.id())), ("coinPrice", numeric(self.price))]),
        )
        .result(record([("voteCid", cid(vote.id()))]))
        .children(vec![Exercise::archive(&old, &sv_party).action(), Action::create(&vote)]);
        self.votes[sv] = Some(vote);
        self.commit(time, "", vec![root.action()], false)?;
        Ok(true)
    }

    fn coin_payload(&self, owner: usize, amount: i64, round_number: i64) -> Record {
        payload([
            ("dso", party(&self.net.dso)),
            ("owner", party(self.net.owner(owner))),
            (
                "amount",
                record([
                    ("initialAmount", numeric(amount)),
                    ("createdAt", round(round_number)),
                    ("ratePerRound", record([("rate", numeric(UNIT / 52_560))])),
                ]),
            ),
        ])
    }

    fn new_coin(&mut self, owner: usize, amount: i64, time: TxTime) -> Coin {
        let arguments = self.coin_payload(owner, amount, self.round_number_at(time.effective));
        let signatories = vec![self.net.dso.clone(), self.net.owner(owner).to_owned()];
        let contract = self.new_contract(Template::Coin, arguments, signatories, vec![], time);
        Coin { owner, amount, contract }
    }

    fn usable_coins(&self, owner: usize) -> usize {
        self.coins.iter().filter(|c| c.owner == owner && c.contract.is_home()).count()
    }

    /// Removes up to `count` of `owner`'s usable coins, oldest first.
    fn take_coins(&mut self, owner: usize, count: usize) -> Vec<Coin> {
        let mut taken = Vec::new();
        let mut i = 0;
        while i < self.coins.len() && taken.len() < count {
            if self.coins[i].owner == owner && self.coins[i].contract.is_home() {
                taken.push(self.coins.remove(i));
            } else {
                i += 1;
            }
        }
        taken
    }

    /// A sender with coins (often the one holding the most, which keeps the number of
    /// coins bounded) and a different receiver.
    fn pick_sender_receiver(&mut self) -> Option<(usize, usize)> {
        let owners = self.net.owners.len();
        let counts: Vec<usize> = (0..owners).map(|o| self.usable_coins(o)).collect();
        let candidates: Vec<usize> = (0..owners).filter(|&o| counts[o] > 0).collect();
        if candidates.is_empty() {
            return None;
        }
        let sender = if self.rng.percent(50) {
            (0..owners).max_by_key(|&o| (counts[o], o)).unwrap_or(0)
        } else {
            candidates[self.rng.index(candidates.len())]
        };
        let receiver = (sender + 1 + self.rng.index(owners - 1)) % owners;
        Some((sender, receiver))
    }

    pub(super) fn tap(&mut self) -> io::Result<bool> {
        let Some(coin_rules) = self.coin_rules.clone() else {
            return Ok(false);
        };
        let owners = self.net.owners.len();
        let owner = if self.rng.percent(50) {
            (0..owners).min_by_key(|&o| (self.usable_coins(o), o)).unwrap_or(0)
        } else {
            self.rng.index(owners)
        };
        let amount = self.rng.range(10 * UNIT, 2_000 * UNIT) / 1_000_000 * 1_000_000;
        let time = self.begin();
        let round_cid = self.round_in_use(time.effective).map(|r| r.contract.id().to_owned()).unwrap_or_default();
        let coin = self.new_coin(owner, amount, time);
        let owner_party = self.net.owner(owner).to_owned();
        let root = Exercise::on(
            &coin_rules,
            "CoinRules_DevNet_Tap",
            &owner_party,
            record([("receiver", party(&owner_party)), ("amount", numeric(amount)), ("openRound", cid(&round_cid))]),
        )
        .result(record([(
            "coinSum",
            record([
                ("coin", cid(coin.contract.id())),
                ("round", round(self.round_number_at(time.effective))),
                ("changeToInitialAmountAsOfRoundZero", numeric(amount)),
            ]),
        )]))
        .children(vec![Action::create(&coin.contract)]);
        let external = self.net.owners[owner].external;
        self.coins.push(coin);
        self.commit(time, "", vec![root.action()], external)?;
        Ok(true)
    }

    pub(super) fn transfer(&mut self) -> io::Result<bool> {
        let Some(coin_rules) = self.coin_rules.clone() else {
            return Ok(false);
        };
        let Some((sender, receiver)) = self.pick_sender_receiver() else {
            return Ok(false);
        };
        let usable = self.usable_coins(sender);
        let count = match usable {
            4.. => 3,
            2.. if self.rng.percent(50) => 2,
            _ => 1,
        };
        let inputs = self.take_coins(sender, count);
        let total: i64 = inputs.iter().map(|c| c.amount).sum();
        let sent = total / 100 * self.rng.range(10, 91);
        let fee = (sent / 1000).min(UNIT);
        let change = total - sent - fee;
        let time = self.begin();
        let (round_number, round_cid) =
            self.round_in_use(time.effective).map(|r| (r.number, r.contract.id().to_owned())).unwrap_or_default();
        let received = self.new_coin(receiver, sent, time);
        let kept = self.new_coin(sender, change, time);
        let (sender_party, receiver_party) = (self.net.owner(sender).to_owned(), self.net.owner(receiver).to_owned());
        let provider = self.net.provider(sender).to_owned();
        let memo = self.rng.below(100_000);
        let meta = if memo.is_multiple_of(3) {
            none()
        } else {
            some(Value::TextMap(vec![
                ("reason".to_owned(), text(&format!("invoice {memo}"))),
                ("app".to_owned(), text("wallet")),
            ]))
        };
        let argument = record([
            (
                "transfer",
                record([
                    ("sender", party(&sender_party)),
                    ("provider", party(&provider)),
                    (
                        "inputs",
                        Value::List(inputs.iter().map(|c| variant("InputCoin", cid(c.contract.id()))).collect()),
                    ),
                    (
                        "outputs",
                        Value::List(vec![record([
                            ("receiver", party(&receiver_party)),
                            ("receiverFeeRatio", numeric(0)),
                            ("amount", numeric(sent)),
                            ("lock", none()),
                        ])]),
                    ),
                    ("beneficiaries", none()),
                    ("kind", enumeration(if count > 1 { "Merge" } else { "Direct" })),
                ]),
            ),
            (
                "context",
                record([
                    ("openMiningRound", cid(&round_cid)),
                    ("featuredAppRight", none()),
                    ("valueDate", date(time.effective.div_euclid(DAY))),
                ]),
            ),
            ("expectedDso", some(party(&self.net.dso))),
        ]);
        let balance = |change: i64| {
            record([("changeToInitialAmountAsOfRoundZero", numeric(change)), ("changeToHoldingFeesRate", numeric(0))])
        };
        let result = record([
            ("round", round(round_number)),
            (
                "summary",
                record([
                    ("inputCoinAmount", numeric(total)),
                    (
                        "balanceChanges",
                        Value::GenMap(vec![
                            (party(&sender_party), balance(-(sent + fee))),
                            (party(&receiver_party), balance(sent)),
                        ]),
                    ),
                    ("holdingFees", numeric(0)),
                    ("outputFees", Value::List(vec![numeric(fee)])),
                    ("senderChangeAmount", numeric(change)),
                ]),
            ),
            ("createdCoins", Value::List(vec![variant("TransferResultCoin", cid(received.contract.id()))])),
            ("senderChangeCoin", some(cid(kept.contract.id()))),
            ("meta", meta),
        ]);
        let mut children: Vec<Action> =
            inputs.iter().map(|c| Exercise::archive(&c.contract, &sender_party).action()).collect();
        children.push(Action::create(&received.contract));
        children.push(Action::create(&kept.contract));
        let root =
            Exercise::on(&coin_rules, "CoinRules_Transfer", &sender_party, argument).result(result).children(children);
        let external = self.net.owners[sender].external;
        self.coins.push(received);
        self.coins.push(kept);
        self.commit(time, "", vec![root.action()], external)?;
        Ok(true)
    }

    pub(super) fn create_instruction(&mut self) -> io::Result<bool> {
        let Some(coin_rules) = self.coin_rules.clone() else {
            return Ok(false);
        };
        if self.instructions.len() >= MAX_INSTRUCTIONS {
            return Ok(false);
        }
        let Some((sender, receiver)) = self.pick_sender_receiver() else {
            return Ok(false);
        };
        let count = if self.usable_coins(sender) >= 2 && self.rng.percent(40) { 2 } else { 1 };
        let inputs = self.take_coins(sender, count);
        let total: i64 = inputs.iter().map(|c| c.amount).sum();
        let amount = total / 100 * self.rng.range(5, 80);
        let time = self.begin();
        let execute_before = time.effective + self.rng.range(HOUR, 48 * HOUR);
        let round_number = self.round_number_at(time.effective);
        let dso = self.net.dso.clone();
        let (sender_party, receiver_party) = (self.net.owner(sender).to_owned(), self.net.owner(receiver).to_owned());
        let mut workflow = String::from("transfer-instruction-");
        self.rng.push_hex(&mut workflow, 1);

        let locked_arguments = payload([
            ("coin", Value::Record(self.coin_payload(sender, amount, round_number))),
            (
                "lock",
                record([
                    ("holders", Value::List(vec![party(&dso)])),
                    ("expiresAt", timestamp(execute_before)),
                    ("optContext", some(text(&format!("transfer to {receiver_party}")))),
                ]),
            ),
        ]);
        let locked = self.new_contract(
            Template::LockedCoin,
            locked_arguments,
            vec![dso.clone(), sender_party.clone()],
            vec![],
            time,
        );
        let change = self.new_coin(sender, total - amount, time);
        let transfer = record([
            ("sender", party(&sender_party)),
            ("receiver", party(&receiver_party)),
            ("amount", numeric(amount)),
            ("instrumentId", record([("admin", party(&dso)), ("id", text(&self.coin))])),
            ("requestedAt", timestamp(time.effective)),
            ("executeBefore", timestamp(execute_before)),
            ("inputHoldingCids", Value::List(inputs.iter().map(|c| cid(c.contract.id())).collect())),
            ("meta", metadata(vec![("platform.example/reason".to_owned(), text("payment"))])),
        ]);
        let instruction_arguments = payload([
            ("lockedCoin", cid(locked.id())),
            ("transfer", transfer.clone()),
            ("originalInstructionCid", none()),
        ]);
        let instruction = self.new_contract(
            Template::CoinTransferInstruction,
            instruction_arguments,
            vec![dso.clone(), sender_party.clone()],
            vec![receiver_party.clone()],
            time,
        );
        let argument = record([
            ("expectedAdmin", party(&dso)),
            ("transfer", transfer),
            ("extraArgs", record([("context", metadata(vec![])), ("meta", metadata(vec![]))])),
        ]);
        let result = record([
            (
                "output",
                variant(
                    "TransferInstructionResult_Pending",
                    record([("transferInstructionCid", cid(instruction.id()))]),
                ),
            ),
            ("senderChangeCids", Value::List(vec![cid(change.contract.id())])),
            ("meta", metadata(vec![])),
        ]);
        let mut children: Vec<Action> =
            inputs.iter().map(|c| Exercise::archive(&c.contract, &sender_party).action()).collect();
        children.push(Action::create(&locked));
        children.push(Action::create(&change.contract));
        children.push(Action::create(&instruction));
        let root = Exercise::on(&coin_rules, "TransferFactory_Transfer", &sender_party, argument)
            .via(self.net.interface_id(Interface::TransferFactory))
            .result(result)
            .children(children);
        let external = self.net.owners[sender].external;
        self.coins.push(change);
        self.instructions.push(Instruction {
            sender,
            receiver,
            amount,
            workflow: workflow.clone(),
            contract: instruction,
            locked: Some(locked),
        });
        self.commit(time, &workflow, vec![root.action()], external)?;
        Ok(true)
    }

    /// Accepts, rejects or withdraws a pending instruction, or lets its lock expire.
    pub(super) fn settle_instruction(&mut self) -> io::Result<bool> {
        let candidates: Vec<usize> = (0..self.instructions.len())
            .filter(|&i| {
                let instruction = &self.instructions[i];
                instruction.contract.is_home() && instruction.locked.as_ref().is_none_or(Contract::is_home)
            })
            .collect();
        if candidates.is_empty() {
            return Ok(false);
        }
        let i = candidates[self.rng.index(candidates.len())];
        let lock_live = self.instructions[i].locked.is_some();
        if lock_live && self.rng.percent(15) {
            return self.expire_lock(i);
        }
        let instruction = self.instructions.swap_remove(i);
        let roll = self.rng.below(100);
        let (choice, actor, to) = match roll {
            0..65 if lock_live => ("TransferInstruction_Accept", instruction.receiver, instruction.receiver),
            0..80 => ("TransferInstruction_Reject", instruction.receiver, instruction.sender),
            _ => ("TransferInstruction_Withdraw", instruction.sender, instruction.sender),
        };
        let time = self.begin();
        let dso = self.net.dso.clone();
        let actor_party = self.net.owner(actor).to_owned();
        let mut children = Vec::new();
        let mut paid = Vec::new();
        if let Some(locked) = &instruction.locked {
            let coin = self.new_coin(to, instruction.amount, time);
            let unlock = if to == instruction.receiver { "LockedCoin_Settle" } else { "LockedCoin_Unlock" };
            children.push(
                Exercise::on(locked, unlock, &dso, record([]))
                    .consuming()
                    .result(cid(coin.contract.id()))
                    .children(vec![Action::create(&coin.contract)])
                    .action(),
            );
            paid.push(cid(coin.contract.id()));
            self.coins.push(coin);
        }
        let output = if to == instruction.receiver {
            variant("TransferInstructionResult_Completed", record([("receiverHoldingCids", Value::List(paid))]))
        } else {
            variant("TransferInstructionResult_Failed", Value::Unit)
        };
        let root = Exercise::on(
            &instruction.contract,
            choice,
            &actor_party,
            record([("extraArgs", record([("context", metadata(vec![])), ("meta", metadata(vec![]))]))]),
        )
        .via(self.net.interface_id(Interface::TransferInstruction))
        .consuming()
        .result(record([("output", output), ("senderChangeCids", Value::List(vec![])), ("meta", metadata(vec![]))]))
        .children(children);
        let external = self.net.owners[actor].external;
        self.commit(time, &instruction.workflow, vec![root.action()], external)?;
        Ok(true)
    }

    /// The lock of instruction `i` expires: its locked coin returns to the sender, and
    /// the instruction stays, pointing at an archived locked coin.
    fn expire_lock(&mut self, i: usize) -> io::Result<bool> {
        let Some(locked) = self.instructions[i].locked.take() else {
            return Ok(false);
        };
        let (sender, amount) = (self.instructions[i].sender, self.instructions[i].amount);
        let time = self.begin();
        let dso = self.net.dso.clone();
        let coin = self.new_coin(sender, amount, time);
        let root = Exercise::on(
            &locked,
            "LockedCoin_ExpireLock",
            &dso,
            record([("openRoundCid", self.round_in_use(time.effective).map_or(Value::Unit, |r| cid(r.contract.id())))]),
        )
        .consuming()
        .result(record([("coin", cid(coin.contract.id()))]))
        .children(vec![Action::create(&coin.contract)]);
        self.coins.push(coin);
        self.commit(time, "", vec![root.action()], false)?;
        Ok(true)
    }

    /// A sender allocates coin to one transfer leg of a settlement that a validator's
    /// app executes (delivery versus payment): its inputs archived, a locked coin, the
    /// change and the allocation created through the allocation factory.
    pub(super) fn create_allocation(&mut self) -> io::Result<bool> {
        let Some(coin_rules) = self.coin_rules.clone() else {
            return Ok(false);
        };
        if self.allocations.len() >= MAX_ALLOCATIONS {
            return Ok(false);
        }
        let Some((sender, receiver)) = self.pick_sender_receiver() else {
            return Ok(false);
        };
        let inputs = self.take_coins(sender, 1);
        let total: i64 = inputs.iter().map(|c| c.amount).sum();
        let amount = total / 100 * self.rng.range(5, 80);
        let time = self.begin();
        let allocate_before = time.effective + self.rng.range(HOUR, 12 * HOUR);
        let settle_before = allocate_before + self.rng.range(HOUR, 36 * HOUR);
        let round_number = self.round_number_at(time.effective);
        let dso = self.net.dso.clone();
        let (sender_party, receiver_party) = (self.net.owner(sender).to_owned(), self.net.owner(receiver).to_owned());
        let executor = self.net.provider(receiver).to_owned();
        let mut workflow = String::from("allocation-");
        self.rng.push_hex(&mut workflow, 1);
        let mut trade = String::from("trade-");
        self.rng.push_hex(&mut trade, 2);
        let leg_id = format!("leg-{}", self.rng.below(4));

        let locked_arguments = payload([
            ("coin", Value::Record(self.coin_payload(sender, amount, round_number))),
            (
                "lock",
                record([
                    ("holders", Value::List(vec![party(&dso)])),
                    ("expiresAt", timestamp(settle_before)),
                    (
                        "optContext",
                        some(text(&format!("allocation for transfer leg {leg_id:?} to {receiver_party:?}"))),
                    ),
                ]),
            ),
        ]);
        let locked = self.new_contract(
            Template::LockedCoin,
            locked_arguments,
            vec![dso.clone(), sender_party.clone()],
            vec![],
            time,
        );
        let change = self.new_coin(sender, total - amount, time);
        let specification = record([
            (
                "settlement",
                record([
                    ("executor", party(&executor)),
                    ("settlementRef", record([("id", text(&trade)), ("cid", none())])),
                    ("requestedAt", timestamp(time.effective)),
                    ("allocateBefore", timestamp(allocate_before)),
                    ("settleBefore", timestamp(settle_before)),
                    ("meta", metadata(vec![])),
                ]),
            ),
            ("transferLegId", text(&leg_id)),
            (
                "transferLeg",
                record([
                    ("sender", party(&sender_party)),
                    ("receiver", party(&receiver_party)),
                    ("amount", numeric(amount)),
                    ("instrumentId", record([("admin", party(&dso)), ("id", text(&self.coin))])),
                    ("meta", metadata(vec![])),
                ]),
            ),
        ]);
        let allocation = self.new_contract(
            Template::CoinAllocation,
            payload([("lockedCoin", cid(locked.id())), ("allocation", specification.clone())]),
            vec![dso.clone(), sender_party.clone()],
            vec![executor.clone()],
            time,
        );
        let argument = record([
            ("expectedAdmin", party(&dso)),
            ("allocation", specification),
            ("requestedAt", timestamp(time.effective)),
            ("inputHoldingCids", Value::List(inputs.iter().map(|c| cid(c.contract.id())).collect())),
            ("extraArgs", record([("context", metadata(vec![])), ("meta", metadata(vec![]))])),
        ]);
        let result = record([
            (
                "output",
                variant("AllocationInstructionResult_Completed", record([("allocationCid", cid(allocation.id()))])),
            ),
            ("senderChangeCids", Value::List(vec![cid(change.contract.id())])),
            ("meta", metadata(vec![])),
        ]);
        let mut children: Vec<Action> =
            inputs.iter().map(|c| Exercise::archive(&c.contract, &sender_party).action()).collect();
        children.push(Action::create(&locked));
        children.push(Action::create(&change.contract));
        children.push(Action::create(&allocation));
        let root = Exercise::on(&coin_rules, "AllocationFactory_Allocate", &sender_party, argument)
            .via(self.net.interface_id(Interface::AllocationFactory))
            .result(result)
            .children(children);
        let external = self.net.owners[sender].external;
        self.coins.push(change);
        self.allocations.push(Allocation {
            sender,
            receiver,
            executor,
            amount,
            workflow: workflow.clone(),
            contract: allocation,
            locked,
        });
        self.commit(time, &workflow, vec![root.action()], external)?;
        Ok(true)
    }

    /// Settles a live allocation: the executor executes its transfer (the locked coin
    /// paid to the receiver) or cancels it, or the sender withdraws it (the locked coin
    /// back to the sender). One live allocation, the last of the list, is always left
    /// pending (a settlement still waiting for its executor), so that a history holds a
    /// live allocation to its end.
    pub(super) fn settle_allocation(&mut self) -> io::Result<bool> {
        let settled = self.allocations.len().saturating_sub(1);
        let candidates: Vec<usize> = (0..settled)
            .filter(|&i| self.allocations[i].contract.is_home() && self.allocations[i].locked.is_home())
            .collect();
        if candidates.is_empty() {
            return Ok(false);
        }
        let i = candidates[self.rng.index(candidates.len())];
        let allocation = self.allocations.swap_remove(i);
        let sender_party = self.net.owner(allocation.sender).to_owned();
        let (choice, actor, to) = match self.rng.below(100) {
            0..60 => ("Allocation_ExecuteTransfer", allocation.executor.clone(), allocation.receiver),
            60..80 => ("Allocation_Cancel", allocation.executor.clone(), allocation.sender),
            _ => ("Allocation_Withdraw", sender_party.clone(), allocation.sender),
        };
        let time = self.begin();
        let dso = self.net.dso.clone();
        let coin = self.new_coin(to, allocation.amount, time);
        let unlock = if to == allocation.receiver { "LockedCoin_Settle" } else { "LockedCoin_Unlock" };
        let children = vec![
            Exercise::on(&allocation.locked, unlock, &dso, record([]))
                .consuming()
                .result(cid(coin.contract.id()))
                .children(vec![Action::create(&coin.contract)])
                .action(),
        ];
        let paid = Value::List(vec![cid(coin.contract.id())]);
        let result = if to == allocation.receiver {
            record([
                ("senderHoldingCids", Value::List(vec![])),
                ("receiverHoldingCids", paid),
                ("meta", metadata(vec![])),
            ])
        } else {
            record([("senderHoldingCids", paid), ("meta", metadata(vec![]))])
        };
        let root = Exercise::on(
            &allocation.contract,
            choice,
            &actor,
            record([("extraArgs", record([("context", metadata(vec![])), ("meta", metadata(vec![]))]))]),
        )
        .via(self.net.interface_id(Interface::Allocation))
        .consuming()
        .result(result)
        .children(children);
        self.coins.push(coin);
        let external = actor == sender_party && self.net.owners[allocation.sender].external;
        self.commit(time, &allocation.workflow, vec![root.action()], external)?;
        Ok(true)
    }
}
