// A minimal host of the ledger-node component in Node.js: the component transpiled by
// jco, WASI from jco's preview2 shim, the store in memory (store.mjs), and HTTP from
// node:http.
//
//   node host.mjs node.wasm [port]      (the component: `ledger-node component > node.wasm`)
//
// Configuration is the LEDGER_NODE_* variables of this process's environment.

import { readFile, mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { transpile, writeFiles } from '@bytecodealliance/jco-transpile';
import { cli, clocks, io, random } from '@bytecodealliance/preview2-shim';
import { memoryStore } from './store.mjs';

// Transpiles the component to an ES module and instantiates it over `store`.
export async function instantiateNode(wasmPath, store, env) {
  const outDir = await mkdtemp(join(tmpdir(), 'ledger-node-'));
  const { files } = await transpile(wasmPath, { name: 'node', outDir, instantiation: 'async' });
  await writeFiles(files);
  const { instantiate } = await import(pathToFileURL(join(outDir, 'node.js')));
  cli._setEnv(env);
  const wasi = {
    'wasi:cli/environment': cli.environment, 'wasi:cli/exit': cli.exit,
    'wasi:cli/stdin': cli.stdin, 'wasi:cli/stdout': cli.stdout, 'wasi:cli/stderr': cli.stderr,
    'wasi:cli/terminal-input': cli.terminalInput, 'wasi:cli/terminal-output': cli.terminalOutput,
    'wasi:cli/terminal-stdin': cli.terminalStdin, 'wasi:cli/terminal-stdout': cli.terminalStdout,
    'wasi:cli/terminal-stderr': cli.terminalStderr,
    'wasi:clocks/monotonic-clock': clocks.monotonicClock, 'wasi:clocks/wall-clock': clocks.wallClock,
    'wasi:io/error': io.error, 'wasi:io/poll': io.poll, 'wasi:io/streams': io.streams,
    'wasi:random/random': random.random,
  };
  const compile = async (file) => WebAssembly.compile(await readFile(join(outDir, file)));
  const { handler } = await instantiate(compile, { 'ledger:node/store': store, ...wasi });
  return handler;
}

// Serves `handler` over HTTP on `port` (0: any free port); resolves to the server.
export function serveHttp(handler, port) {
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = new Uint8Array(Buffer.concat(chunks));
    const url = new URL(req.url, 'http://node');
    const limit = handler.bodyLimit(req.method, url.pathname);
    const response = handler.handle({
      method: req.method,
      path: url.pathname,
      query: url.search.slice(1),
      headers: Object.entries(req.headers).flatMap(([k, v]) => [v].flat().map((x) => [k, x])),
      body: BigInt(body.length) > limit ? undefined : body,
    });
    if (response.log !== undefined) console.error(`${req.method} ${url.pathname} -> ${response.status}: ${response.log}`);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(response.body));
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [wasmPath, port = '8090'] = process.argv.slice(2);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('LEDGER_NODE_')));
  const handler = await instantiateNode(wasmPath, memoryStore(), env);
  const server = await serveHttp(handler, Number(port));
  console.error(`ledger-node (jco): serving on http://127.0.0.1:${server.address().port}`);
}
