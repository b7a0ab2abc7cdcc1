// The node's `ledger:node/store` import, in memory: an ordered key-value store with
// atomic write batches. Keys order bytewise, a shorter key first on a common prefix.
//
// `recall` and `remember` are a cache beside it, never stored: a Map of at most
// `rememberBytes` bytes of keys and values, the least recently used forgotten first, no
// value over an eighth of the bound kept. A batch that deletes anything forgets it all:
// the node needs that only of a range delete or a delete of a key whose value never
// changes, and this host does not tell the keyspace's tables apart.

function compare(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

// The index of the first entry whose key is not below `key`.
function seek(entries, key) {
  let lo = 0, hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compare(entries[mid][0], key) < 0) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// Where `key` is in `entries`, and whether it is there.
function locate(entries, key) {
  const at = seek(entries, key);
  return [at, at < entries.length && compare(entries[at][0], key) === 0];
}

// The Map key of a byte key.
const cacheKey = (key) => Buffer.from(key).toString('latin1');

export function memoryStore({ rememberBytes = 8 << 20 } = {}) {
  let entries = []; // [key, value] pairs in key order
  const get = (key) => {
    const [at, held] = locate(entries, key);
    return held ? entries[at][1] : undefined;
  };
  const remembered = new Map(); // cache key -> value, least recently used first
  let rememberedBytes = 0;
  const forget = (name) => {
    const value = remembered.get(name);
    if (value === undefined) return;
    remembered.delete(name);
    rememberedBytes -= name.length + value.length;
  };
  return {
    get,
    recall(key) {
      const name = cacheKey(key);
      const value = remembered.get(name);
      if (value === undefined) return undefined;
      remembered.delete(name);
      remembered.set(name, value);
      return value.slice();
    },
    remember(key, value) {
      const name = cacheKey(key);
      forget(name);
      const cost = name.length + value.length;
      if (rememberBytes === 0 || cost > rememberBytes / 8) return;
      for (const oldest of remembered.keys()) {
        if (rememberedBytes + cost <= rememberBytes) break;
        forget(oldest);
      }
      remembered.set(name, Uint8Array.from(value));
      rememberedBytes += cost;
    },
    rememberedBytes: () => rememberedBytes,
    getMany: (keys) => keys.map(get),
    scan({ start, end, limit, reverse }) {
      const from = seek(entries, start);
      const to = end === undefined ? entries.length : seek(entries, end);
      const range = entries.slice(from, Math.max(from, to));
      const ordered = reverse ? range.reverse() : range;
      return ordered.slice(0, limit).map(([key, value]) => ({ key, value }));
    },
    // All of a batch or none of it: the ops apply to a copy that replaces the
    // entries only once every precondition held. A thrown `payload` is the WIT error.
    write(ops) {
      const next = entries.slice();
      const find = (key) => locate(next, key);
      const put = (key, value) => {
        const [at, held] = find(key);
        next.splice(at, held ? 1 : 0, [key, value]);
      };
      for (const op of ops) {
        switch (op.tag) {
          case 'put':
            put(op.val.key, op.val.value);
            break;
          case 'put-if-absent':
            if (find(op.val.key)[1]) throw { payload: { tag: 'precondition-failed', val: op.val.key } };
            put(op.val.key, op.val.value);
            break;
          case 'delete': {
            const [at, held] = find(op.val);
            if (held) next.splice(at, 1);
            break;
          }
          case 'delete-range': {
            const [start, end] = op.val;
            const from = seek(next, start);
            const to = end === undefined ? next.length : seek(next, end);
            next.splice(from, Math.max(0, to - from));
            break;
          }
        }
      }
      entries = next;
      if (ops.some((op) => op.tag === 'delete' || op.tag === 'delete-range')) {
        remembered.clear();
        rememberedBytes = 0;
      }
    },
  };
}
