//! # ledger-node, native
//!
//! The native host of the ledger-node component: the `ledger-node` binary (`serve`,
//! `ingest`, `follow`, `demo`, `component`) and the library it is built from.
//!
//! ## Where it sits
//!
//! The node is one pure core (`ledger-node-core`: routing, ingest, the ledger model,
//! every endpoint; no I/O, storage behind its `Store` port). The `ledger-node-component`
//! crate compiles that core to a WASI 0.2 component that exports the request handler and
//! imports the store (`wit/node.wit`). This crate runs that component:
//!
//! ```text
//!  HTTP ──► server (hyper) ──► host: wasmtime instance of the component ──► core
//!                                          │ WIT `store` import
//!                                          ▼
//!                              backend: fjall store in a directory, or memory
//! ```
//!
//! Every request, ingest batch and scheduled job is answered by the component, so what
//! runs here is exactly what any other component host runs. The component is built by
//! this crate's `build.rs` (a nested cargo build for `wasm32-wasip2`) and embedded in
//! the binary ([`host::COMPONENT`]), which therefore runs wherever it is copied.
//!
//! ## Modules
//!
//! - [`host`] compiles the component (built by this crate's `build.rs` for
//!   `wasm32-wasip2` and embedded in the binary) once with wasmtime, and serves each
//!   request with an instance from a pool of idle ones (a fresh one when the pool is
//!   empty) over a [`backend::Backend`]: a log-structured store in a
//!   directory ([`lsm`]) or memory. It serves the component's WIT `store` import from that backend (a write
//!   batch is read in place in the component's memory); WASI supplies the clock, the
//!   random source and the configuration ([`config`]) as environment variables.
//! - [`ingest`] streams a history file through the component in pipelined batches that
//!   take turns at the store ([`host::turns`]): one batch is parsed and rendered while
//!   the one before it is applied, and a batch's turn ends when its write commits.
//! - [`server`] is the HTTP/1.1 front (hyper) of `ledger-node serve`; it translates
//!   requests and decides nothing. [`scheduler`] runs the node's scheduled jobs on a
//!   timer (`--tick-seconds`).
//! - [`demo`] generates a deterministic demo network history as NDJSON ingest records
//!   (`ledger-node demo`).
//! - The binary (`src/main.rs`) is the `ledger-node` command line.
//!
//! This crate links the core for its storage port types (the native store implements
//! the port, so the storage contract suite runs against it), its configuration parser
//! (to refuse a bad configuration at start-up) and its follower, which [`follow`] drives
//! with the component as its local link. The cross-host test suites, which run this library and the
//! binary beside the worker and the core, are the `ledger-node-tests` crate (`tests/`).

pub mod backend;
pub mod config;
pub mod demo;
pub mod follow;
pub mod host;
pub mod ingest;
pub mod lsm;
pub mod scheduler;
pub mod server;
