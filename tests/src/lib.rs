//! # ledger-node, native
//!
//! The native host of the ledger-node component, and the home of the cross-host test
//! suites.
//!
//! - [`host`] compiles the component (built by this crate's `build.rs` for
//!   `wasm32-wasip2` and embedded in the binary) once with wasmtime, and runs a fresh
//!   instance per request over a [`backend::Backend`]: a log-structured store in a
//!   directory ([`lsm`]) or memory. It serves the component's WIT `store` import from that backend (a write
//!   batch is read in place in the component's memory); WASI supplies the clock, the
//!   random source and the configuration ([`config`]) as environment variables.
//! - [`ingest`] streams a history file through the component in pipelined batches that
//!   take turns at the store ([`host::turns`]) and write behind ([`behind`]): a batch's
//!   turn ends when its write is queued, and a writer thread commits the queue in order.
//! - [`server`] is the HTTP/1.1 front (hyper) of `ledger-node serve`; it translates
//!   requests and decides nothing. [`scheduler`] runs the node's scheduled jobs on a
//!   timer (`--tick-seconds`).
//! - [`demo`] generates a deterministic demo network history as NDJSON ingest records
//!   (`ledger-node demo`).
//! - The binary (`src/main.rs`) is the `ledger-node` command line.
//!
//! Every request is answered by the component; this crate links the core only for its
//! storage port types (so that the storage contract suite runs against the native
//! store) and its configuration parser (to refuse a bad configuration at start-up).

pub mod backend;
pub mod behind;
pub mod config;
pub mod demo;
pub mod follow;
pub mod host;
pub mod ingest;
pub mod lsm;
pub mod scheduler;
pub mod server;
