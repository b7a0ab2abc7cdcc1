//! The bindings generated from `wit/node.wit`'s `node-api` world (the WASI side comes
//! from wasmtime-wasi), quarantined here: the runner calls the `handler` export, the
//! store import implements `store`.

wasmtime::component::bindgen!({ world: "node-api", path: "../wit" });
