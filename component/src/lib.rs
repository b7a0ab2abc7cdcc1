//! # ledger-node as a WASI 0.2 component
//!
//! Exports the `ledger:node/handler` interface of `wit/node.wit` and imports its
//! `ledger:node/store`. Each call to `handle` translates the WIT request into the
//! core's ([`convert`]), reads the clock and the random source from WASI (wall clock,
//! `wasi:random`), and runs `ledger_node_core::handle` over [`WitStore`], the store
//! import, with the configuration the instance read from its environment variables on
//! its first call ([`config`]).
//!
//! `tick` runs the scheduled jobs ([`ledger_node_core::state::wallet::outcome::tick`]) the same way.
//!
//! The store import is synchronous, so the core's future is complete when first
//! polled, and [`ledger_node_core::storage::exec::block_on`] drives it.
//!
//! Built with `cargo build -p ledger-node-component --target wasm32-wasip2`; a `cdylib`
//! for that target is already a component.

mod bindings;
mod convert;
mod mem;
mod store;

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use ledger_node_core::model::time::Timestamp;
use ledger_node_core::storage::exec;
use ledger_node_core::{Config, Env, Error, Method};

use bindings::exports::ledger::node::handler::{Guest, Request, Response, TickReport};
use store::WitStore;

/// The component's heap. The C library's `dlmalloc`, the default on `wasm32-wasip2`,
/// was 6% of an ingest's processor time; an ingest builds and drops a value tree for
/// every update. The component is single-threaded.
#[cfg(all(not(target_feature = "atomics"), target_family = "wasm"))]
#[global_allocator]
static HEAP: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// The exported `handler` interface.
struct Node;

impl Guest for Node {
    fn body_limit(method: String, path: String) -> u64 {
        let limit = ledger_node_core::body_limit(&Method::parse(&method), &path);
        u64::try_from(limit).unwrap_or(u64::MAX)
    }

    fn handle(request: Request) -> Response {
        let request = convert::request(request);
        let response = match environment() {
            Ok((config, now, entropy)) => {
                let env = Env { now, entropy, config };
                exec::block_on(ledger_node_core::handle(&request, &env, &WitStore))
            }
            Err(error) => error.into_response(),
        };
        convert::response(response)
    }

    fn tick() -> Result<TickReport, String> {
        let (config, now, entropy) = environment().map_err(|e| e.to_string())?;
        let env = Env { now, entropy, config };
        match exec::block_on(ledger_node_core::state::wallet::outcome::tick(&env, &WitStore)) {
            Ok(report) => Ok(TickReport {
                expired_requests: report.expired_requests,
                skipped: report.skipped,
                pending_requests: report.pending_requests,
            }),
            Err(Error::Store(e)) => Err(format!("store: {e}")),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// The configuration, read from the environment variables once per instance. An
/// instance's environment is fixed when it starts (the C library takes it from WASI
/// once), so reading it on every call would find the same values and parse them
/// again: that was a sixth of the processor time `ledger-node serve` spent on a
/// `/version` request.
fn config() -> Result<&'static Config, Error> {
    static CONFIG: OnceLock<Result<Config, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| Config::from_lookup(|name| std::env::var(name).ok()).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| Error::Internal(format!("bad configuration: {e}")))
}

/// Configuration, the current time and fresh entropy, from WASI.
fn environment() -> Result<(&'static Config, Timestamp, [u8; 32]), Error> {
    let config = config()?;
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_micros()).ok())
        .ok_or_else(|| Error::Internal("the host's wall clock is before 1970".into()))?;
    let now = Timestamp::from_micros(micros).map_err(|e| Error::Internal(format!("the host's wall clock: {e}")))?;
    let mut entropy = [0u8; 32];
    getrandom::fill(&mut entropy).map_err(|e| Error::Internal(format!("the host's random source failed: {e}")))?;
    Ok((config, now, entropy))
}

bindings::export!(Node with_types_in bindings);
