// The node's `ledger:node/store` import, in memory: an ordered key-value store with
// atomic write batches. Keys order bytewise, a shorter key first on a common prefix.

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

export function memoryStore() {
  let entries = []; // [key, value] pairs in key order
  const get = (key) => {
    const [at, held] = locate(entries, key);
    return held ? entries[at][1] : undefined;
  };
  return {
    get,
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
    },
  };
}
