-- The generation of the worker's cache of update bodies (see worker/src/cache.rs): a
-- random token that is part of every KV key of the cache. A write that deletes bodies
-- (the reset) replaces it in the same transaction, so that no isolate reads the KV
-- entries of the old one again. It lives outside `kv` because the reset empties `kv`.
CREATE TABLE cache_generation (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    generation TEXT NOT NULL
);
INSERT INTO cache_generation (id, generation) VALUES (0, lower(hex(randomblob(8))));
