// Checks that the component gives the same answers in this JS host as in the native
// host: both ingest one demo history, then every read endpoint is asked the same
// requests, and the answers (status and body) must be byte for byte equal.
//
//   node check.mjs path/to/ledger-node
import { spawn, execFileSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { instantiateNode, serveHttp } from './host.mjs';
import { memoryStore } from './store.mjs';

const binary = process.argv[2];
const env = { LEDGER_NODE_ADMIN_TOKEN: 'check-admin', LEDGER_NODE_SNAPSHOT_PERIOD_HOURS: '3' };
const dir = await mkdtemp(join(tmpdir(), 'ledger-node-check-'));
const wasm = join(dir, 'node.wasm');
await writeFile(wasm, execFileSync(binary, ['component'], { maxBuffer: 1 << 26 }));
const history = execFileSync(binary, ['demo', '--updates', '300', '--seed', '7'], {
  stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 28,
});

// The native host, on a port it picks.
const native = spawn(binary, ['serve', '--listen', '127.0.0.1:0', '--memory', '--tick-seconds', '0'], {
  env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'],
});
const nativeBase = await new Promise((resolve, reject) => {
  let seen = '';
  native.stderr.on('data', (chunk) => {
    seen += chunk;
    // The whole line: stderr can arrive split anywhere, even inside the address.
    const found = seen.match(/serving on (http:\/\/[^\s"]+)["\r\n]/);
    if (found) resolve(found[1]);
  });
  native.on('exit', (code) => reject(new Error(`ledger-node serve exited with ${code}: ${seen}`)));
});
const server = await serveHttp(await instantiateNode(wasm, memoryStore(), env), 0);
const jsBase = `http://127.0.0.1:${server.address().port}`;

const admin = { authorization: 'Bearer check-admin' };
const ask = async (base, [method, path, body, headers = {}]) => {
  const res = await fetch(base + path, { method, body, headers });
  return `${res.status} ${await res.text()}`;
};

// Requests, from what the history holds.
const lines = history.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l));
const updates = lines.filter((l) => l.update).map((l) => l.update);
const topology = lines.find((l) => l.topology).topology;
const instructions = updates.flatMap((u) => Object.values(u.events_by_id ?? {}))
  .filter((e) => e.template_id?.endsWith(':CoinTransferInstruction') && e.create_arguments)
  .map((e) => e.contract_id).slice(0, 3);
const ids = [...updates.slice(0, 8), ...updates.filter((u) => u.reassignment ?? u.event?.source).slice(0, 2)]
  .map((u) => u.update_id);
const requests = [
  ['POST', '/v0/admin/ingest', history, admin],
  ['POST', '/v0/admin/store-check', undefined, admin],
  ['GET', '/version'],
  ...ids.flatMap((id) => [
    ['GET', `/v2/updates/${encodeURIComponent(id)}`],
    ['GET', `/v2/updates/${encodeURIComponent(id)}?ledger_value_encoding=protobuf_json`],
    ['GET', `/v1/updates/${encodeURIComponent(id)}`],
  ]),
  ['GET', '/v2/updates/no-such-update'],
  ['GET', '/v2/updates/x?ledger_value_encoding=yaml'],
  ['POST', '/v0/backfilling/migration-info', '{"migration_id":0}'],
  ['POST', '/v0/backfilling/migration-info', '{"migration_id":'],
  ['GET', '/v0/state/acs/snapshot-timestamp-after?after=2020-01-01T00:00:00Z&migration_id=0'],
  ['GET', '/v0/closed-rounds'],
  ['GET', '/v0/coin-price/votes'],
  ['GET', '/v0/internal/reward-accounting-process/rounds/earliest-available'],
  ['GET', `/v0/domains/${encodeURIComponent(topology.synchronizer_id)}/parties/${encodeURIComponent(topology.party_id)}/participant-id`],
  ['GET', '/v0/roll-forward-lsu'],
  ...instructions.flatMap((id) => ['reject', 'accept', 'withdraw'].map((choice) =>
    ['POST', `/registry/transfer-instruction/v2/${encodeURIComponent(id)}/choice-contexts/${choice}`, '{}'])),
  ['DELETE', '/version'],
  ['GET', '/no/such/endpoint'],
];

// The JS store's cache of remembered values keeps its bound and forgets on a delete.
const cache = memoryStore({ rememberBytes: 800 });
const bytes = (n, fill) => new Uint8Array(n).fill(fill);
cache.remember(bytes(1, 1), bytes(99, 1));
const kept = cache.recall(bytes(1, 1))?.length === 99;
for (let i = 0; i < 20; i++) cache.remember(bytes(2, i), bytes(90, i));
const bounded = cache.rememberedBytes() <= 800 && cache.recall(bytes(1, 1)) === undefined;
cache.remember(bytes(1, 2), bytes(100, 2));
const tooLarge = cache.recall(bytes(1, 2)) === undefined;
cache.write([{ tag: 'delete-range', val: [bytes(1, 9), undefined] }]);
const forgotten = cache.recall(bytes(2, 19)) === undefined && cache.rememberedBytes() === 0;
if (!(kept && bounded && tooLarge && forgotten)) {
  console.error(`the JS store's cache: kept ${kept}, bounded ${bounded}, too large refused ${tooLarge}, forgotten ${forgotten}`);
  process.exit(1);
}

let differ = 0;
for (const request of requests) {
  const [a, b] = [await ask(nativeBase, request), await ask(jsBase, request)];
  if (a !== b) {
    differ++;
    console.error(`${request[0]} ${request[1]}\n  native: ${a.slice(0, 300)}\n  jco:    ${b.slice(0, 300)}`);
  }
}
native.kill();
server.close();
console.log(`${requests.length - differ} of ${requests.length} answers byte-identical in the native and the jco host`);
process.exit(differ === 0 && instructions.length > 0 && ids.length > 0 ? 0 : 1);
