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
//!  HTTP ──► server (hyper) ──► host::runner: wasmtime instance of the component ──► core
//!                                          │ WIT `store` import (host::store_import)
//!                                          ▼
//!                   backend::Backend: lsm (fjall store in a directory), or memory
//! ```
//!
//! Every request, ingest batch and scheduled job is answered by the component, so what
//! runs here is exactly what any other component host runs. The component is built by
//! this crate's `build.rs` (a nested cargo build for `wasm32-wasip2`) and embedded in
//! the binary ([`host::COMPONENT`]), which therefore runs wherever it is copied.
//!
//! ## Modules
//!
//! - [`backend`] is the native store: the [`backend::Backend`] trait (get, get-many,
//!   scan, write an atomic batch, sync) that the component's `store` import is served
//!   from, its in-memory implementation, and [`backend::Port`], the core's storage
//!   port over any backend (for running core code natively). [`lsm`] implements it
//!   over a log-structured store in a directory (fjall). Each backend holds the
//!   node's [`bodies::BodyCache`], the values the core remembers, shared by every
//!   instance and forgotten by the backend's own writes.
//! - [`host`] runs the component. [`host::runner`] compiles it once with wasmtime and
//!   runs instances over a node's backend: a fresh one per call, or one from a pool of
//!   idle ones (checkout and checkin, dropping one whose memory grew too large).
//!   [`host::store_import`] serves the component's WIT `store` import from the
//!   backend (a write batch is read in place in the component's memory) and counts its
//!   calls. WASI supplies the clock, the random source and the configuration
//!   ([`config`]) as environment variables.
//! - [`ingest`] streams a history file through the component in pipelined batches
//!   that take turns at the store: one batch is parsed and rendered while the one
//!   before it is applied, and a batch's turn ends when its write commits. The turn
//!   protocol is ingest's own ([`ingest::turns`], [`ingest::serve_in_turn`]): a batch
//!   is served over a wrapper of the node's backend that waits for its turn and passes
//!   it on.
//! - [`server`] is the HTTP/1.1 front (hyper) of `ledger-node serve`; it translates
//!   requests and decides nothing. It reads a body up to the core's limit for its
//!   route ([`ledger_node_core::body_limit`]), so a request enters the component once.
//!   [`scheduler`] runs the node's scheduled jobs on a timer (`--tick-seconds`).
//! - [`follow`] drives the core's follower with the component as its local link; its
//!   ingest requests take turns as [`ingest`]'s batches do.
//! - [`metrics`] counts what the node does, per node, for `GET /metrics` on the
//!   listener of `serve --metrics-listen`; [`logs`] sets up the structured logs
//!   (`tracing`) on standard error.
//! - [`demo`] generates a deterministic demo network history as NDJSON ingest records
//!   (`ledger-node demo`).
//! - The binary (`src/main.rs`) is the `ledger-node` command line.
//!
//! Imports between these modules go one way: `bodies` and `logs` import none of
//! them; `backend` and `metrics` build on `bodies`; `lsm` and `host` on `backend`
//! (and `host` on `metrics`); `ingest`, `server` and `scheduler` on `host`; `follow`
//! on `host` and `ingest`.
//!
//! This crate links the core for its storage port types (the native store implements
//! the port, so the storage contract suite runs against it), its configuration parser
//! (to refuse a bad configuration at start-up) and its follower, which [`follow`] drives.
//! The cross-host test suites, which run this library and the
//! binary beside the worker and the core, are the `ledger-node-tests` crate (`tests/`).

pub mod backend;
pub mod bodies;
pub mod config;
pub mod demo;
pub mod follow;
pub mod host;
pub mod ingest;
pub mod logs;
pub mod lsm;
pub mod metrics;
pub mod scheduler;
pub mod server;
