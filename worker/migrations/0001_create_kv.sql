-- The node's whole state: one ordered key-value table (see worker/src/d1.rs).
-- BLOB keys compare with memcmp, shorter first on a common prefix: the storage
-- port's key order, so scans walk the primary key.
CREATE TABLE kv (
    k BLOB PRIMARY KEY,
    v BLOB NOT NULL
) WITHOUT ROWID;
