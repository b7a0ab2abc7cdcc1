// Drops the `name` custom section from a WebAssembly module, in place.
//
// The section maps function indices to names for stack traces; in the worker's module
// it is a sixth of the bytes (an eighth gzipped), and the platform limits a worker's
// compressed size. A panic's message still reaches the log; its trace names functions
// by index instead. Every other section is copied byte for byte.
//
// Usage: node scripts/strip-wasm-names.mjs MODULE.wasm
import { readFileSync, writeFileSync } from "node:fs";

const [path] = process.argv.slice(2);
if (!path) {
    console.error("usage: node scripts/strip-wasm-names.mjs MODULE.wasm");
    process.exit(2);
}
const bytes = readFileSync(path);
const header = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
if (bytes.length < 8 || header.some((byte, i) => bytes[i] !== byte)) {
    console.error(`${path}: not a WebAssembly module (version 1)`);
    process.exit(1);
}

/** An unsigned LEB128 at `at`: its value and the offset after it. */
function uleb(at) {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
        if (at >= bytes.length) throw new Error(`${path}: truncated at byte ${at}`);
        const byte = bytes[at++];
        value += (byte & 0x7f) * 2 ** shift;
        if (byte < 0x80) return [value, at];
    }
}

const kept = [bytes.subarray(0, 8)];
let dropped = 0;
for (let at = 8; at < bytes.length; ) {
    const start = at;
    const id = bytes[at];
    const [size, body] = uleb(at + 1);
    const end = body + size;
    if (end > bytes.length) throw new Error(`${path}: section at byte ${start} runs past the end`);
    let name = null;
    if (id === 0) {
        const [length, text] = uleb(body);
        name = bytes.subarray(text, text + length).toString("utf8");
    }
    if (name === "name") dropped += end - start;
    else kept.push(bytes.subarray(start, end));
    at = end;
}
writeFileSync(path, Buffer.concat(kept));
console.log(`${path}: dropped the name section (${dropped} bytes)`);
