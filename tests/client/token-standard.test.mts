// The network's own token-standard client against the node: the registry calls a wallet
// makes for a transfer.
//
// `TokenStandardClient` is the client the network's wallet SDK uses
// (`@canton-network/core-token-standard`, pinned in package.json): openapi-fetch typed by
// clients generated from the token standard's OpenAPI files (metadata v1, transfer
// instruction v1, allocation instruction v1, allocation v1). A path, parameter or field
// that those files do not declare does not compile here; the client rejects any answer
// that is not a success, and the checks below hold each answer to the fields the files
// require. At the end every answer, errors included, is judged at run time by the
// declarations that package ships for those files (`network-shapes.mts`): no package
// ships the files themselves.
//
// The flows: a free-of-payment transfer (the sender reads the registry's info and its
// instrument, with its total supply as of the history's latest closed round, then asks
// for the transfer factory: a self transfer, a direct one to a
// receiver with a preapproval, and an offer; the receiver asks for the context to accept
// or to reject a pending transfer instruction; the sender for the one to withdraw it),
// and a delivery-versus-payment settlement (the sender asks for the allocation factory,
// the app for the context to execute the transfer, or to cancel it). The
// node and the demo history are the ones of the generated-client test (`node.mts`), run at
// the root and under `/api/scan`, where the network's wallets find a Scan's registry.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { TokenStandardClient } from "@canton-network/core-token-standard";
import { judge, recordedAnswers, shape } from "./network-shapes.mjs";
import { adminToken, demoHistory, startNode, stopNode, type History } from "./node.mjs";

/** The client logs nothing: failures are the assertions'. */
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
/** The registry's calls need no token. */
const anonymous = {
  getAccessToken: async () => "",
  getAuthContext: async () => {
    throw new Error("the registry needs no authentication");
  },
};

/** What the transfer flow needs from the demo history. */
interface Parties {
  dso: string;
  /** A coin and its owner: a sender with a holding. */
  owner: string;
  coin: string;
  /** Receivers of transfer preapprovals. */
  preapproved: string[];
  /** The coin allocations of the history, the latest first. */
  allocations: string[];
  /** When the latest closed round was closed: the effective time of the transaction that
   * created the `ClosedMiningRound` of the highest round number (import updates aside). */
  lastClosedAt?: string;
}

function parties(history: History): Parties {
  const found: Partial<Parties> = { preapproved: [], allocations: [] };
  let lastClosed = -1;
  for (const line of history.ndjson.split("\n")) {
    if (!line.trim()) continue;
    const update = JSON.parse(line).update;
    for (const event of Object.values<any>(update?.events_by_id ?? {})) {
      if (
        event.event_type === "created_event" &&
        event.template_id.endsWith(":Platform.Round:ClosedMiningRound") &&
        !update.record_time.startsWith("0001-")
      ) {
        const round = event.create_arguments.record.fields.find((f: any) => f.label === "round");
        const number = Number(round.value.record.fields.find((f: any) => f.label === "number").value.int64);
        if (number > lastClosed) {
          lastClosed = number;
          found.lastClosedAt = update.effective_at;
        }
      }
      if (event.event_type !== "created_event") continue;
      const field = (label: string) =>
        event.create_arguments.record.fields.find((f: any) => f.label === label)?.value.party as string;
      if (event.template_id.endsWith(":Platform.Coin:Coin") && !found.coin) {
        found.coin = event.contract_id;
        found.owner = field("owner");
        found.dso = field("dso");
      } else if (event.template_id.endsWith(":TransferPreapproval")) {
        found.preapproved!.push(field("receiver"));
      } else if (event.template_id.endsWith(":Platform.CoinAllocation:CoinAllocation")) {
        found.allocations!.unshift(event.contract_id);
      }
    }
  }
  assert.ok(found.coin && found.dso, "the demo history holds no coin");
  assert.ok(found.preapproved!.length > 0, "the demo history holds no transfer preapproval");
  assert.ok(found.allocations!.length > 0, "the demo history holds no coin allocation");
  return found as Parties;
}

let history: History;
let who: Parties;
let base = process.env.LEDGER_NODE_URL ?? "";

before(async () => {
  history = demoHistory();
  who = parties(history);
  if (!base) base = await startNode();
  const ingest = await fetch(`${base}/v0/admin/ingest`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/x-ndjson" },
    body: history.ndjson,
  });
  assert.equal(ingest.status, 200, await ingest.text());
});

after(stopNode);

/** The client at the root and the one under `/api/scan`. */
function clients(): [string, TokenStandardClient][] {
  return ["", "/api/scan"].map((prefix) => [prefix || "/", new TokenStandardClient(`${base}${prefix}`, quiet, anonymous as never)]);
}

/** The `TransferFactory_Transfer` arguments of a transfer of 10 coins. */
function transfer(sender: string, receiver: string) {
  const now = Date.now();
  return {
    expectedAdmin: who.dso,
    transfer: {
      sender,
      receiver,
      amount: "10.0",
      instrumentId: { admin: who.dso, id: "Coin" },
      requestedAt: new Date(now - 60_000).toISOString(),
      executeBefore: new Date(now + 3_600_000).toISOString(),
      inputHoldingCids: [who.coin],
      meta: { values: {} },
    },
    extraArgs: { context: { values: {} }, meta: { values: {} } },
  };
}

/** A choice context as the files require it: values, and every contract with its blob. */
function assertChoiceContext(context: { choiceContextData: object; disclosedContracts: any[] }, what: string) {
  assert.equal(typeof context.choiceContextData, "object", `${what}: choiceContextData`);
  assert.ok("values" in context.choiceContextData, `${what}: choiceContextData.values`);
  for (const contract of context.disclosedContracts) {
    for (const key of ["templateId", "contractId", "createdEventBlob", "synchronizerId"]) {
      assert.equal(typeof contract[key], "string", `${what}: a disclosed contract's ${key}`);
      assert.ok(contract[key].length > 0, `${what}: a disclosed contract's ${key} is empty`);
    }
  }
}

describe("the sender starts a transfer", () => {
  test("registry info and the coin instrument", async () => {
    for (const [where, client] of clients()) {
      const info = shape(`${where} info`, "metadata", "GetRegistryInfoResponse", await client.get("/registry/metadata/v1/info"));
      assert.equal(info.adminId, who.dso, where);
      assert.equal(info.supportedApis["splice-api-token-metadata-v1"], 1, `${where}: ${JSON.stringify(info)}`);

      const list = shape(
        `${where} instruments`,
        "metadata",
        "ListInstrumentsResponse",
        await client.get("/registry/metadata/v1/instruments", { query: { pageSize: 10 } }),
      );
      assert.deepEqual(
        list.instruments.map((i) => i.id),
        ["Coin"],
      );
      assert.equal(list.nextPageToken, undefined, "one instrument: no next page");
      const coin = shape(
        `${where} instrument`,
        "metadata",
        "Instrument",
        await client.get("/registry/metadata/v1/instruments/{instrumentId}", { path: { instrumentId: "Coin" } }),
      );
      assert.equal(coin.decimals, 10);
      assert.equal(typeof coin.name, "string");
      assert.equal(typeof coin.symbol, "string");
      assert.ok(Object.values(coin.supportedApis).every(Number.isInteger), `${where}: ${JSON.stringify(coin)}`);
      for (const api of ["splice-api-token-transfer-instruction-v1", "splice-api-token-allocation-v1"]) {
        assert.equal(coin.supportedApis[api], 1, `${where}: the instrument supports ${api}: ${JSON.stringify(coin)}`);
      }
      // The total supply, as of the latest closed round of the history: a decimal of 10
      // places as the network's registry writes it (scientific below 10^-6).
      assert.ok(who.lastClosedAt, "the demo history closes no round");
      assert.equal(coin.totalSupplyAsOf, who.lastClosedAt, `${where}: ${JSON.stringify(coin)}`);
      assert.match(coin.totalSupply ?? "", /^-?(\d+\.\d{10}|\d(\.\d+)?E-\d+)$/, `${where}: ${JSON.stringify(coin)}`);
      assert.deepEqual(list.instruments[0], coin, `${where}: the list and the lookup state the same instrument`);
    }
  });

  test("the transfer factory: self, direct and offer", async () => {
    for (const [where, client] of clients()) {
      const ask = async (sender: string, receiver: string) =>
        shape(
          `${where} transfer factory from ${sender} to ${receiver}`,
          "transferInstruction",
          "TransferFactoryWithChoiceContext",
          await client.post("/registry/transfer-instruction/v1/transfer-factory", {
            choiceArguments: transfer(sender, receiver) as never,
            excludeDebugFields: true,
          }),
        );

      const self = await ask(who.owner, who.owner);
      assert.equal(self.transferKind, "self", where);
      assert.ok(self.factoryId.length > 0);
      assertChoiceContext(self.choiceContext, `${where} self`);
      assert.ok(self.choiceContext.disclosedContracts.length > 0, `${where}: the factory discloses its contracts`);

      const receiver = who.preapproved.find((party) => party !== who.owner) ?? who.preapproved[0];
      const sender = receiver === who.owner ? who.dso : who.owner;
      const direct = await ask(sender, receiver);
      assert.equal(direct.transferKind, "direct", `${where}: ${receiver} has a preapproval`);
      assertChoiceContext(direct.choiceContext, `${where} direct`);
      assert.ok("transfer-preapproval" in (direct.choiceContext.choiceContextData as any).values);

      const offer = await ask(who.owner, "nobody::1220" + "0".repeat(64));
      assert.equal(offer.transferKind, "offer", where);
      assertChoiceContext(offer.choiceContext, `${where} offer`);
    }
  });

  test("an expired transfer is refused with the reason", async () => {
    const [, client] = clients()[0];
    const expired = transfer(who.owner, who.owner);
    expired.transfer.executeBefore = new Date(Date.now() - 1_000).toISOString();
    await assert.rejects(
      client.post("/registry/transfer-instruction/v1/transfer-factory", {
        choiceArguments: expired as never,
        excludeDebugFields: true,
      }),
      (error: any) => /expired/.test(shape("an expired transfer", "transferInstruction", "ErrorResponse", error).error),
    );
  });
});

describe("the receiver and the sender settle it", () => {
  for (const choice of ["accept", "reject", "withdraw"] as const) {
    test(`the context to ${choice} a transfer instruction`, async () => {
      for (const [where, client] of clients()) {
        const refused: string[] = [];
        let context;
        for (const id of history.instructions) {
          try {
            context = await client.post(
              `/registry/transfer-instruction/v1/{transferInstructionId}/choice-contexts/${choice}`,
              { meta: {}, excludeDebugFields: true },
              { path: { transferInstructionId: id } },
            );
            shape(`${where} ${choice} context of ${id}`, "transferInstruction", "ChoiceContext", context);
            break;
          } catch (error: any) {
            // An instruction that completed, or whose locked coin is gone or moving.
            shape(`${where} ${choice} refused for ${id}`, "transferInstruction", "ErrorResponse", error);
            assert.match(error.error, /./, `${where} ${choice} ${id}: an error names its reason`);
            refused.push(error.error);
          }
        }
        assert.ok(context, `${where}: no instruction of the history has a ${choice} context: ${refused.join("; ")}`);
        assertChoiceContext(context, `${where} ${choice}`);
        assert.ok("expire-lock" in (context.choiceContextData as any).values);
      }
    });
  }
});

/** A coin transfer leg of a settlement run by `executor`. */
function allocate(sender: string, receiver: string, executor: string) {
  const now = Date.now();
  return {
    expectedAdmin: who.dso,
    allocation: {
      settlement: {
        executor,
        settlementRef: { id: "trade-1" },
        requestedAt: new Date(now - 60_000).toISOString(),
        allocateBefore: new Date(now + 3_600_000).toISOString(),
        settleBefore: new Date(now + 7_200_000).toISOString(),
        meta: { values: {} },
      },
      transferLegId: "leg-0",
      transferLeg: { sender, receiver, amount: "10.0", instrumentId: { admin: who.dso, id: "Coin" }, meta: { values: {} } },
    },
    requestedAt: new Date(now - 60_000).toISOString(),
    inputHoldingCids: [who.coin],
    extraArgs: { context: { values: {} }, meta: { values: {} } },
  };
}

describe("a delivery-versus-payment settlement", () => {
  test("the sender allocates through the allocation factory", async () => {
    for (const [where, client] of clients()) {
      const factory = shape(
        `${where} allocation factory`,
        "allocationInstruction",
        "FactoryWithChoiceContext",
        await client.post("/registry/allocation-instruction/v1/allocation-factory", {
          choiceArguments: allocate(who.owner, "buyer::1220" + "0".repeat(64), who.dso) as never,
          excludeDebugFields: true,
        }),
      );
      assert.ok(factory.factoryId.length > 0, where);
      assertChoiceContext(factory.choiceContext, `${where} allocation factory`);
      assert.ok(factory.choiceContext.disclosedContracts.length > 0, `${where}: the factory discloses its contracts`);
    }
  });

  for (const choice of ["execute-transfer", "cancel", "withdraw"] as const) {
    test(`the context to ${choice} an allocation`, async () => {
      for (const [where, client] of clients()) {
        const refused: string[] = [];
        let context;
        for (const id of who.allocations) {
          try {
            context = await client.post(
              `/registry/allocations/v1/{allocationId}/choice-contexts/${choice}`,
              { meta: {}, excludeDebugFields: true },
              { path: { allocationId: id } },
            );
            shape(`${where} ${choice} context of ${id}`, "allocation", "ChoiceContext", context);
            break;
          } catch (error: any) {
            // An allocation that was settled, or whose locked coin is gone or moving.
            shape(`${where} ${choice} refused for ${id}`, "allocation", "ErrorResponse", error);
            assert.match(error.error, /./, `${where} ${choice} ${id}: an error names its reason`);
            refused.push(error.error);
          }
        }
        assert.ok(context, `${where}: no allocation of the history has a ${choice} context: ${refused.join("; ")}`);
        assertChoiceContext(context, `${where} ${choice}`);
        assert.ok("expire-lock" in (context.choiceContextData as any).values);
      }
    });
  }
});

describe("the answers, as the network's files declare them", () => {
  test("every answer above is of its schema in the network's token-standard APIs", () => {
    const answers = recordedAnswers();
    // Info, list and instrument, three transfer factories, each of the three contexts
    // of an instruction and of an allocation and an allocation factory, at both bases;
    // and the refused transfer.
    assert.ok(answers.length >= 27, `only ${answers.length} answers were recorded`);
    assert.deepEqual(judge(answers), []);
  });

  test("an answer of another shape is refused, naming what is wrong", () => {
    const instrument = { id: "Coin", name: "Coin", symbol: "Coin", decimals: 10, supportedApis: {} };
    const context = { choiceContextData: { values: {} }, disclosedContracts: [{ templateId: "t", contractId: "c" }] };
    const refused = judge([
      { what: "decimals as a string", api: "metadata", schema: "Instrument", answer: { ...instrument, decimals: "10" } },
      { what: "an undeclared field", api: "metadata", schema: "Instrument", answer: { ...instrument, colour: "red" } },
      { what: "a contract without its blob", api: "allocation", schema: "ChoiceContext", answer: context },
      { what: "a kind of transfer the API has not", api: "transferInstruction", schema: "TransferFactoryWithChoiceContext",
        answer: { factoryId: "f", transferKind: "gift", choiceContext: { choiceContextData: {}, disclosedContracts: [] } } },
    ]);
    for (const want of [/decimals/, /colour/, /createdEventBlob/, /gift/]) {
      assert.ok(refused.some((problem) => want.test(problem)), `${want}: ${refused.join("\n")}`);
    }
  });
});
