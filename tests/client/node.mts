// The node the generated clients run against, and the demo history it is fed.
//
// `startNode` starts `target/debug/ledger-node serve --memory` (or `LEDGER_NODE_BIN`) on
// a free port, `stopNode` stops it. `demoHistory` is what
// `ledger-node demo --updates 600 --seed 1` writes (long enough to cross a snapshot
// boundary), with the ids the tests need read from it.

import assert from "node:assert/strict";
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const binary = process.env.LEDGER_NODE_BIN ?? path.join(root, "target/debug/ledger-node");
export const adminToken = process.env.LEDGER_NODE_ADMIN_TOKEN ?? "client-test-admin-token";
export const UPDATES = 600;

let node: ChildProcess | undefined;

/** Starts `ledger-node serve --memory` on a free port; resolves with its URL. */
export function startNode(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ["serve", "--memory", "--listen", "127.0.0.1:0", "--tick-seconds", "0"], {
      env: { ...process.env, LEDGER_NODE_ADMIN_TOKEN: adminToken },
      stdio: ["ignore", "ignore", "pipe"],
    });
    node = child;
    let log = "";
    const timer = setTimeout(() => reject(new Error(`ledger-node did not start in 30 s:\n${log}`)), 30_000);
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      log += chunk;
      // The whole line: stderr can arrive split anywhere, even inside the address.
      const match = /serving on (http:\/\/[^\s"]+)["\r\n]/.exec(log);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(new Error(`starting ${binary}: ${e.message} (build it with cargo build --bin ledger-node)`));
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`ledger-node exited with ${code} before serving:\n${log}`));
    });
  });
}

/** What the demo history holds, read from its NDJSON records. */
export interface History {
  ndjson: string;
  transactionId: string;
  assignmentId: string;
  synchronizerId: string;
  party: string;
  participant: string;
  instructions: string[];
  lastRecordTime: string;
}

export function demoHistory(): History {
  const ndjson = execFileSync(binary, ["demo", "--updates", String(UPDATES), "--seed", "1"], {
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    stdio: ["ignore", "pipe", "ignore"],
  });
  const history: Partial<History> = { ndjson, instructions: [] };
  for (const line of ndjson.split("\n")) {
    if (!line.trim()) continue;
    const record = JSON.parse(line);
    if (record.topology && record.topology.participant_ids.length === 1 && !history.party) {
      history.synchronizerId = record.topology.synchronizer_id;
      history.party = record.topology.party_id;
      history.participant = record.topology.participant_ids[0];
    }
    const update = record.update;
    if (!update) continue;
    history.lastRecordTime = update.record_time;
    if (update.events_by_id) {
      history.transactionId ??= update.update_id;
      for (const event of Object.values<any>(update.events_by_id)) {
        if (event.event_type === "created_event" && event.template_id.endsWith(":CoinTransferInstruction")) {
          history.instructions!.push(event.contract_id);
        }
      }
    } else if (update.event?.created_event) {
      history.assignmentId ??= update.update_id;
    }
  }
  for (const key of ["transactionId", "assignmentId", "party", "lastRecordTime"] as const) {
    assert.ok(history[key], `the demo history has no ${key}`);
  }
  assert.ok(history.instructions!.length > 0, "the demo history has no transfer instruction");
  history.instructions!.reverse(); // the latest first: the likeliest to be active
  return history as History;
}

/** Stops the node `startNode` started, if any. */
export function stopNode(): void {
  node?.kill("SIGINT");
}
