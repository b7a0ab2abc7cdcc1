// A client generated from the node's own OpenAPI document (core/openapi.json), run
// against the native node for every read endpoint.
//
// `tests/client/run` generates `generated/schema.d.ts` from the document with
// openapi-typescript, type-checks this file against it with tsc and runs it with node's
// test runner. Calls go through openapi-fetch typed by the generated `paths`, so a path,
// parameter or field that the document does not declare does not compile, and the
// checks below fail when the node answers otherwise.
//
// The node: `LEDGER_NODE_URL` (and `LEDGER_NODE_ADMIN_TOKEN`) when given; otherwise
// this starts one (`node.mts`). Either way it ingests the demo history through the
// admin ingest endpoint.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/schema.js";
import { UPDATES, adminToken, demoHistory, root, startNode, stopNode, type History } from "./node.mjs";

type Schemas = components["schemas"];

let history: History;
let client: ReturnType<typeof createClient<paths>>;
let baseUrl = process.env.LEDGER_NODE_URL ?? "";

before(async () => {
  history = demoHistory();
  if (!baseUrl) baseUrl = await startNode();
  client = createClient<paths>({ baseUrl });
  const { data, error, response } = await client.POST("/v0/admin/ingest", {
    body: history.ndjson,
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/x-ndjson" },
    bodySerializer: (body) => body,
  });
  assert.equal(response.status, 200, `ingest: ${JSON.stringify(error)}`);
  assert.equal(data!.applied.update + data!.unchanged, UPDATES);
});

after(stopNode);

describe("common", () => {
  test("version, at the root and under /api/scan", async () => {
    for (const get of [() => client.GET("/version"), () => client.GET("/api/scan/version")]) {
      const { data, response } = await get();
      assert.equal(response.status, 200);
      assert.match(data!.version, /^\d+\.\d+\.\d+/);
      assert.match(data!.commit_ts, /Z$/);
    }
  });

  test("livez and readyz", async () => {
    const live = await client.GET("/livez");
    assert.equal(live.response.status, 200);
    assert.equal(live.data!.status, "ok");
    const ready = await client.GET("/readyz");
    assert.equal(ready.response.status, 200);
    assert.equal(ready.data!.status, "ready");
  });

  test("the document the node serves is this one", async () => {
    const { data, response } = await client.GET("/openapi.json");
    assert.equal(response.status, 200);
    const mine = JSON.parse(readFileSync(path.join(root, "core/openapi.json"), "utf8"));
    assert.equal(data!.openapi, mine.openapi);
    assert.deepEqual(Object.keys(data!.paths).sort(), Object.keys(mine.paths).sort());
  });
});

describe("updates by id", () => {
  test("a transaction in both versions and both encodings", async () => {
    const id = history.transactionId;
    const compact = await client.GET("/v2/updates/{update_id}", { params: { path: { update_id: id } } });
    assert.equal(compact.response.status, 200);
    const tx = compact.data as Schemas["UpdateHistoryTransactionV2"];
    assert.equal(tx.update_id, id);
    assert.ok(tx.root_event_ids.every((root) => root in tx.events_by_id));

    const protobuf = await client.GET("/v2/updates/{update_id}", {
      params: { path: { update_id: id }, query: { ledger_value_encoding: "protobuf_json" } },
    });
    assert.equal(protobuf.response.status, 200);
    const created = Object.values((protobuf.data as Schemas["UpdateHistoryTransactionV2"]).events_by_id).find(
      (e): e is Schemas["CreatedEvent"] => e.event_type === "created_event",
    );
    assert.ok(created && "record" in created.create_arguments, "protobuf_json writes records as {record: ...}");

    for (const encoding of ["compact_json", "protobuf_json"] as const) {
      const v1 = await client.GET("/v1/updates/{update_id}", {
        params: { path: { update_id: id }, query: { daml_value_encoding: encoding } },
      });
      assert.equal(v1.response.status, 200);
      assert.equal((v1.data as Schemas["UpdateHistoryTransaction"]).offset, "000000000000000001");
    }
  });

  test("a reassignment, and an update the node does not hold", async () => {
    const { data, response } = await client.GET("/api/scan/v2/updates/{update_id}", {
      params: { path: { update_id: history.assignmentId } },
    });
    assert.equal(response.status, 200);
    const reassignment = data as Schemas["UpdateHistoryReassignment"];
    assert.ok("created_event" in reassignment.event);

    const missing = await client.GET("/v2/updates/{update_id}", { params: { path: { update_id: "no-such-update" } } });
    assert.equal(missing.response.status, 404);
    assert.match(missing.error!.error, /not found/);
  });
});

describe("the history stream", () => {
  test("pages of /v2/updates and /v1/updates", async () => {
    const first = await client.POST("/v2/updates", { body: { page_size: 10 } });
    assert.equal(first.response.status, 200);
    assert.ok(first.data!.transactions.length >= 10);
    const last = first.data!.transactions.at(-1)!;
    const next = await client.POST("/api/scan/v1/updates", {
      body: {
        page_size: 10,
        daml_value_encoding: "protobuf_json",
        after: { after_migration_id: 0, after_record_time: last.record_time },
      },
    });
    assert.equal(next.response.status, 200);
    assert.ok(next.data!.transactions.every((item) => item.record_time > last.record_time));
  });

  test("import updates, updates before a time, backfilling status", async () => {
    const imports = await client.POST("/v0/backfilling/import-updates", {
      body: { migration_id: 0, after_update_id: "", limit: 10 },
    });
    assert.equal(imports.response.status, 200);
    assert.deepEqual(imports.data!.transactions, []);

    const before = await client.POST("/v0/backfilling/updates-before", {
      body: { migration_id: 0, synchronizer_id: history.synchronizerId, before: history.lastRecordTime, count: 5 },
    });
    assert.equal(before.response.status, 200);
    assert.ok(before.data!.transactions.length > 0);

    const status = await client.GET("/v0/backfilling/status");
    assert.equal(status.response.status, 200);
    assert.equal(status.data!.complete, true);
  });
});

describe("network state", () => {
  test("migration info", async () => {
    const { data, response } = await client.POST("/v0/backfilling/migration-info", { body: { migration_id: 0 } });
    assert.equal(response.status, 200);
    assert.ok(data!.record_time_range.some((r) => r.synchronizer_id === history.synchronizerId));
    assert.equal(data!.complete, true);
    const none = await client.POST("/v0/backfilling/migration-info", { body: { migration_id: 7 } });
    assert.equal(none.response.status, 404);
  });

  test("the first snapshot after a time", async () => {
    const { data, response } = await client.GET("/v0/state/acs/snapshot-timestamp-after", {
      params: { query: { after: "2025-01-06T00:00:00.000000000Z", migration_id: 0 } },
    });
    assert.equal(response.status, 200);
    assert.equal(data!.record_time, "2025-01-06T09:00:00.000000Z");
    const bad = await client.GET("/v0/state/acs/snapshot-timestamp-after", {
      params: { query: { after: "yesterday", migration_id: 0 } },
    });
    assert.equal(bad.response.status, 400);
  });

  test("closed rounds and the earliest round", async () => {
    const closed = await client.GET("/v0/closed-rounds");
    assert.equal(closed.response.status, 200);
    assert.ok(closed.data!.rounds.length > 0);
    assert.ok(closed.data!.rounds.every((r) => r.template_id.endsWith(":ClosedMiningRound")));

    for (const get of [
      () => client.GET("/v0/internal/reward-accounting-process/rounds/earliest-available"),
      () => client.GET("/api/scan/v0/reward-accounting-process/rounds/earliest-available"),
    ]) {
      const { data, response } = await get();
      assert.equal(response.status, 200);
      assert.ok(Number.isInteger(data!.earliest_round));
    }
  });

  test("coin price votes", async () => {
    const { data, response } = await client.GET("/v0/coin-price/votes");
    assert.equal(response.status, 200);
    assert.equal(data!.coin_price_votes.length, 4, "one vote per SV");
  });

  test("participant id, versions 0 and 1", async () => {
    const params = { path: { domain_id: history.synchronizerId, party_id: history.party } };
    const v0 = await client.GET("/v0/domains/{domain_id}/parties/{party_id}/participant-id", { params });
    assert.equal(v0.response.status, 200);
    assert.equal(v0.data!.participant_id, history.participant);
    const v1 = await client.GET("/api/scan/v1/domains/{domain_id}/parties/{party_id}/participant-id", { params });
    assert.equal(v1.response.status, 200);
    assert.deepEqual(v1.data!.participant_ids, [history.participant]);
  });

  test("roll-forward", async () => {
    const { data, response } = await client.GET("/v0/roll-forward-lsu");
    assert.equal(response.status, 200);
    assert.ok(data!.rollForwardLsu);
    assert.match(data!.rollForwardLsu.successorPhysicalSynchronizerId, /^global-domain::/);
  });
});

describe("the token registry", () => {
  test("choice contexts to reject, withdraw and accept a transfer instruction", async () => {
    const choices = ["reject", "withdraw", "accept"] as const;
    for (const choice of choices) {
      const answers: number[] = [];
      for (const id of history.instructions) {
        const { data, error, response } = await client.POST(
          `/api/scan/registry/transfer-instruction/v2/{transferInstructionId}/choice-contexts/${choice}`,
          { params: { path: { transferInstructionId: id } }, body: {} },
        );
        answers.push(response.status);
        if (response.status !== 200) {
          // An instruction that completed, or whose locked coin is gone or moving.
          assert.ok([404, 409].includes(response.status), `${choice} ${id}: ${response.status} ${error?.error}`);
          continue;
        }
        assert.ok("expire-lock" in data!.choiceContextData.values);
        if (data!.disclosedContracts.length > 0) {
          assert.ok("coin-rules" in data!.choiceContextData.values);
          assert.ok(data!.disclosedContracts.every((c) => c.synchronizerId.length > 0));
        }
        break;
      }
      assert.equal(answers.at(-1), 200, `no instruction of the history has a ${choice} context: ${answers}`);
    }
  });
});
