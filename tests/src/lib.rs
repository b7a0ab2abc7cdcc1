//! # ledger-node's cross-host tests
//!
//! The suites that hold every host of the node to the same behaviour, and the tools
//! that measure it. The node itself is elsewhere: the core in `ledger-node-core`, the
//! native host (the `ledger-node` binary and its library) in the `ledger-node` crate.
//!
//! - `tests/hosts/` runs one scenario suite (`scenarios/*.json`: request in, status and
//!   body out, every answer also checked against the OpenAPI document) against the core
//!   over the memory store, the component in wasmtime over memory and over the native
//!   store, and the worker under `wrangler dev`; the storage contract against every
//!   store adapter; and a chain of followers across the hosts.
//! - `tests/serve.rs` and `tests/crash.rs` run the `ledger-node` binary as an operator
//!   does: serving, and ingest killed at any moment.
//! - `tests/store_reads.rs` counts the store calls a request makes, against budgets.
//! - `tests/component_world.rs` checks the embedded component against `wit/node.wit`.
//! - `client/` is a TypeScript client generated from the OpenAPI document and run
//!   against the native node (`client/run`).
//! - `tests/upstream.rs` holds the follower's link to its upstream (HTTPS, retries,
//!   rate limits) to its rules, and `tests/scan_simulator.rs` the [`scan_simulator`]
//!   to the network's forms.
//! - `tests/follow_network/` proves that followers of the [`scan_simulator`] in public
//!   mode (native, killed mid-run, of four simulators one of which tampers, the worker's
//!   cron under `wrangler dev`) answer every read as a node fed the same history by
//!   ingest; `tests/metrics.rs` holds what an operator sees of `serve` (metrics, logs).
//! - The `ledger-node-bench` binary is the benchmark's load generator and ceiling
//!   server.
//!
//! This library is what the suites share: where the `ledger-node` binary is and how to
//! start it ([`binary`], [`ledger_node()`]), and where it serves ([`serving_base`]);
//! `ledger-node serve` run as a process ([`native`]); the worker under `wrangler dev`
//! ([`wrangler`]); TLS with a CA made at test time ([`tls`]); and a simulator of the
//! network's Scan over HTTPS ([`scan_simulator`]).

pub mod native;
pub mod scan_simulator;
pub mod tls;
pub mod wrangler;

use std::path::PathBuf;
use std::process::Command;

/// The environment variable naming another `ledger-node` binary to test.
pub const BINARY_VARIABLE: &str = "LEDGER_NODE_BIN";

/// The `ledger-node` binary the suites run: `LEDGER_NODE_BIN` when set, else the one
/// cargo built beside the running test, in the same target directory and profile
/// (`target/debug/ledger-node` for `cargo test`; `CARGO_TARGET_DIR` moves both).
///
/// `cargo test` from the workspace root builds it before any test runs (the host crate
/// has tests of its own, which makes cargo build its binary). Panics, naming the
/// command that builds it, when it is missing.
pub fn binary() -> PathBuf {
    if let Some(path) = std::env::var_os(BINARY_VARIABLE) {
        return PathBuf::from(path);
    }
    let test = std::env::current_exe().expect("the path of the running test");
    // A test runs from `<target>/<profile>/deps/`; the binaries are in `<target>/<profile>/`.
    let profile = test
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the running test lies in a target directory's deps folder");
    let binary = profile.join(format!("ledger-node{}", std::env::consts::EXE_SUFFIX));
    assert!(
        binary.is_file(),
        "{} is missing: run the tests with `cargo test` from the workspace root, which builds it, or build it \
         first with `cargo build --bin ledger-node` (or name another one in {BINARY_VARIABLE})",
        binary.display()
    );
    binary
}

/// A command running [`binary`] with no `LEDGER_NODE_*` variable of the caller's
/// environment inherited: a test sets the ones it means.
pub fn ledger_node() -> Command {
    let mut command = Command::new(binary());
    without_node_variables(&mut command);
    command
}

/// Removes from `command`'s environment every `LEDGER_NODE_*` variable the node reads.
pub fn without_node_variables(command: &mut Command) {
    for name in ledger_node_core::model::config::NAMES {
        command.env_remove(name);
    }
    command.env_remove(ledger_node_core::follow::UPSTREAM_TOKEN);
    command.env_remove(ledger_node::follow::Upstream::CA_FILE);
    command.env_remove(ledger_node::logs::FORMAT).env_remove(ledger_node::logs::FILTER);
}

/// The address a line of `ledger-node serve`'s log announces it serves on (`serving on
/// http://host:port`), in either log format.
pub fn serving_base(line: &str) -> Option<String> {
    let (_, rest) = line.split_once("serving on http://")?;
    let end = rest.find(|c: char| c.is_whitespace() || c == '"').unwrap_or(rest.len());
    Some(format!("http://{}", rest.get(..end)?))
}
