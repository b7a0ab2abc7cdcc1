//! Runs the ledger-node component in wasmtime.
//!
//! The component is compiled once per process ([`Node::new`]; wasmtime's on-disk cache
//! keeps the compiled code between runs, so a restart does not recompile). An instance
//! lives in a wasmtime store of its own ([`Node::instance`]). `serve` takes one from a
//! pool of idle instances for each request ([`Node::checkout`], [`Node::checkin`]) and
//! `ledger-node ingest` keeps a few (one per core, two to four) for a whole run; that
//! is safe because the component keeps no state between calls: everything the node
//! knows it writes through its `store` import, which this host serves from a
//! [`Backend`].

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::error::Context as _;
use wasmtime::{Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::backend::Backend;

pub mod turns;

use turns::Turns;

mod bindings {
    wasmtime::component::bindgen!({ world: "node-api", path: "../wit" });
}

use bindings::exports::ledger::node::handler;
use bindings::ledger::node::store as wit;

pub use handler::{Request, Response, TickReport};

/// The component this host was built with (see `build.rs`), embedded in the binary, so
/// that a binary runs the component it was built with wherever it is copied to.
pub const COMPONENT: &[u8] = include_bytes!(env!("LEDGER_NODE_COMPONENT_PATH"));

/// The per-request state of a wasmtime store.
struct State {
    wasi: WasiCtx,
    table: ResourceTable,
    backend: Arc<Backend>,
    calls: StoreCalls,
    /// The turn the current request waits for before its first store call.
    turn: Turn,
    /// How much linear memory the instance holds.
    memory: MemoryWatch,
}

/// Counts the bytes of linear memory an instance holds: wasmtime asks before every
/// growth (and at instantiation), and a linear memory never shrinks. It refuses nothing.
#[derive(Debug, Default)]
struct MemoryWatch {
    bytes: usize,
}

impl wasmtime::ResourceLimiter for MemoryWatch {
    fn memory_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.bytes = self.bytes.saturating_add(desired.saturating_sub(current));
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, _desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(true)
    }
}

/// Where the current request stands in a [`Turns`] order.
#[derive(Debug, Default)]
enum Turn {
    /// Not in a turn order: the store is used freely.
    #[default]
    Free,
    /// Holding a ticket of an order, not yet waited for.
    Pending(Arc<Turns>, u64),
    /// Its turn came: the store is the request's until its write commits.
    Held(Arc<Turns>, u64),
    /// Its write committed and the turn was passed on: the store is no longer its own.
    Passed,
    /// Its turn was refused: every store call fails.
    Refused(&'static str),
}

/// Why a store call after the request's committed write fails.
const PASSED: &str = "this request's turn at the store ended when its write committed";

impl State {
    /// Waits for the request's turn, if it has one and has not waited yet.
    fn take_turn(&mut self) -> Result<(), String> {
        if let Turn::Pending(turns, ticket) = &self.turn {
            self.turn = match turns.wait(*ticket) {
                Ok(()) => Turn::Held(Arc::clone(turns), *ticket),
                Err(why) => Turn::Refused(why),
            };
        }
        match self.turn {
            Turn::Refused(why) => Err(why.to_owned()),
            Turn::Passed => Err(PASSED.to_owned()),
            _ => Ok(()),
        }
    }

    /// After a committed write: a request in its turn passes the turn on at
    /// once, so the next one starts on the store while this one is still answering (an
    /// ingest batch writes once, at its end).
    fn pass_turn(&mut self) {
        if let Turn::Held(turns, ticket) = &self.turn {
            turns.finish(*ticket, true);
            self.turn = Turn::Passed;
        }
    }
}

/// How many times an instance called each function of its `store` import: each one is
/// a round trip to the backend (to D1, at the edge).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreCalls {
    /// `get`
    pub get: u32,
    /// `get-many`
    pub get_many: u32,
    /// `scan`
    pub scan: u32,
    /// `write`
    pub write: u32,
}

impl StoreCalls {
    /// Reads of any kind.
    pub fn reads(&self) -> u32 {
        self.get + self.get_many + self.scan
    }
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// The component's `store` import, served from the backend.
impl wit::Host for State {
    fn get(&mut self, key: Vec<u8>) -> Result<Option<Vec<u8>>, String> {
        self.calls.get += 1;
        self.take_turn()?;
        self.backend.get(&key).map_err(|e| e.to_string())
    }

    fn get_many(&mut self, keys: Vec<Vec<u8>>) -> Result<Vec<Option<Vec<u8>>>, String> {
        self.calls.get_many += 1;
        self.take_turn()?;
        let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        self.backend.get_many(&keys).map_err(|e| e.to_string())
    }

    fn scan(&mut self, range: wit::ScanRange) -> Result<Vec<wit::Entry>, String> {
        self.calls.scan += 1;
        self.take_turn()?;
        let scan = ledger_node_core::storage::store::Scan {
            start: range.start,
            end: range.end,
            limit: range.limit,
            reverse: range.reverse,
        };
        let entries = self.backend.scan(&scan).map_err(|e| e.to_string())?;
        Ok(entries.into_iter().map(|(key, value)| wit::Entry { key, value }).collect())
    }

    /// Linked over by [`write_in_place`], which reads the batch without copying it;
    /// this is the same operation on a batch the bindings lifted.
    fn write(&mut self, ops: Vec<wit::Op>) -> Result<(), wit::WriteError> {
        use crate::lsm::OpRef;
        self.calls.write += 1;
        self.take_turn().map_err(wit::WriteError::Backend)?;
        let refs: Vec<OpRef<'_>> = ops
            .iter()
            .map(|op| match op {
                wit::Op::Put(e) => OpRef::Put { key: &e.key, value: &e.value },
                wit::Op::PutIfAbsent(e) => OpRef::PutIfAbsent { key: &e.key, value: &e.value },
                wit::Op::Delete(key) => OpRef::Delete { key },
                wit::Op::DeleteRange((start, end)) => OpRef::DeleteRange { start, end: end.as_deref() },
            })
            .collect();
        let written = self.write_ops(&refs);
        self.written(written)
    }
}

impl State {
    /// Applies `ops` to the backend, with the errors the store import reports.
    fn write_ops(&self, ops: &[crate::lsm::OpRef<'_>]) -> Result<(), wit::WriteError> {
        use ledger_node_core::storage::store::WriteError;
        self.backend.write_ops(ops).map_err(|e| match e {
            WriteError::PreconditionFailed { key } => wit::WriteError::PreconditionFailed(key),
            WriteError::Store(e) => wit::WriteError::Backend(e.to_string()),
        })
    }

    /// After a write: a committed one passes the turn on.
    fn written(&mut self, written: Result<(), wit::WriteError>) -> Result<(), wit::WriteError> {
        written?;
        self.pass_turn();
        Ok(())
    }
}

/// The store import's interface name.
const STORE_INTERFACE: &str = "ledger:node/store@0.1.0";

/// The store import's `write` types, lifted as views of the component's memory: an
/// ingest batch writes tens of megabytes, and the generated bindings would copy every
/// key and value into a vector of its own before the backend copies them again.
mod in_place {
    use wasmtime::component::{ComponentType, Lift, WasmList};

    /// `entry`
    #[derive(ComponentType, Lift)]
    #[component(record)]
    pub struct Entry {
        pub key: WasmList<u8>,
        pub value: WasmList<u8>,
    }

    /// `op`
    #[derive(ComponentType, Lift)]
    #[component(variant)]
    pub enum Op {
        #[component(name = "put")]
        Put(Entry),
        #[component(name = "put-if-absent")]
        PutIfAbsent(Entry),
        #[component(name = "delete")]
        Delete(WasmList<u8>),
        #[component(name = "delete-range")]
        DeleteRange((WasmList<u8>, Option<WasmList<u8>>)),
    }
}

/// The store import's `write`, with the batch read where the component wrote it.
fn write_in_place(
    mut cx: wasmtime::StoreContextMut<'_, State>,
    (ops,): (wasmtime::component::WasmList<in_place::Op>,),
) -> wasmtime::Result<(Result<(), wit::WriteError>,)> {
    use crate::lsm::OpRef;
    cx.data_mut().calls.write += 1;
    if let Err(why) = cx.data_mut().take_turn() {
        return Ok((Err(wit::WriteError::Backend(why)),));
    }
    let ops = ops.iter(&mut cx)?.collect::<wasmtime::Result<Vec<in_place::Op>>>()?;
    let cx_ref = &cx;
    let bytes = |list: &wasmtime::component::WasmList<u8>| list.as_le_slice(cx_ref);
    let refs: Vec<OpRef<'_>> = ops
        .iter()
        .map(|op| match op {
            in_place::Op::Put(e) => OpRef::Put { key: bytes(&e.key), value: bytes(&e.value) },
            in_place::Op::PutIfAbsent(e) => OpRef::PutIfAbsent { key: bytes(&e.key), value: bytes(&e.value) },
            in_place::Op::Delete(key) => OpRef::Delete { key: bytes(key) },
            in_place::Op::DeleteRange((start, end)) => {
                OpRef::DeleteRange { start: bytes(start), end: end.as_ref().map(bytes) }
            }
        })
        .collect();
    let written = cx_ref.data().write_ops(&refs);
    drop(refs);
    Ok((cx.data_mut().written(written),))
}

/// A wall clock stopped at one instant, for reproducible tests.
#[derive(Debug, Clone, Copy)]
struct FixedClock(Duration);

impl wasmtime_wasi::HostWallClock for FixedClock {
    fn resolution(&self) -> Duration {
        Duration::from_micros(1)
    }
    fn now(&self) -> Duration {
        self.0
    }
}

/// How to run the node.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Configuration variables (`docs/configuration.md`) handed to the component's environment.
    pub config: Vec<(String, String)>,
    /// A fixed wall clock (time since the Unix epoch); `None`: the real clock.
    pub fixed_clock: Option<Duration>,
}

/// The compiled component, ready to instantiate, over one backend.
pub struct Node {
    pre: bindings::NodeApiPre<State>,
    backend: Arc<Backend>,
    options: Options,
    /// Instances that served a request and may serve another (see [`Node::checkin`]).
    idle: std::sync::Mutex<Vec<Instance>>,
}

/// Most idle instances a node keeps for reuse.
pub const IDLE_INSTANCES: usize = 16;

/// Largest linear memory of an instance that goes back to the pool. A linear memory
/// never shrinks, so an instance that grew past this (a large request body, a large
/// answer) is dropped after its request, and the process holds no more memory than
/// before it: the pool holds at most [`IDLE_INSTANCES`] times this. An instance
/// that served the usual requests holds a little over 1 MiB; one that read a body of
/// half a megabyte or more, or rendered an answer as large, is past it.
pub const POOLED_MEMORY_LIMIT: usize = 2 * 1024 * 1024;

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node").field("backend", &self.backend).field("options", &self.options).finish_non_exhaustive()
    }
}

/// The wasmtime engine every node of this process shares, with the on-disk cache of
/// compiled code when it can be used. With `LEDGER_NODE_PERFMAP` set, `perf` can name
/// the component's functions.
pub fn engine() -> anyhow::Result<Engine> {
    let mut config = wasmtime::Config::new();
    if std::env::var_os("LEDGER_NODE_PERFMAP").is_some() {
        // Names the component's compiled functions for `perf` (/tmp/perf-<pid>.map).
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    match wasmtime::Cache::new(wasmtime::CacheConfig::new()) {
        Ok(cache) => {
            config.cache(Some(cache));
        }
        Err(e) => eprintln!("ledger-node: compiling without wasmtime's code cache: {e:#}"),
    }
    Ok(Engine::new(&config).context("creating the wasmtime engine")?)
}

impl Node {
    /// Compiles (or loads from cache) the component and links its imports.
    pub fn new(engine: &Engine, backend: Backend, options: Options) -> anyhow::Result<Self> {
        let component = Component::new(engine, COMPONENT).context("compiling the ledger-node component")?;
        Self::from_component(engine, &component, Arc::new(backend), options)
    }

    /// Links an already compiled component over `backend`.
    pub fn from_component(
        engine: &Engine,
        component: &Component,
        backend: Arc<Backend>,
        options: Options,
    ) -> anyhow::Result<Self> {
        let mut linker = Linker::<State>::new(engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).context("linking WASI")?;
        bindings::NodeApi::add_to_linker::<State, HasSelf<State>>(&mut linker, |state| state)
            .context("linking the store import")?;
        // `write` again, reading the batch in place (see `write_in_place`).
        linker.allow_shadowing(true);
        linker
            .instance(STORE_INTERFACE)
            .and_then(|mut store| store.func_wrap("write", write_in_place))
            .context("linking the store import's write")?;
        linker.allow_shadowing(false);
        let pre =
            bindings::NodeApiPre::new(linker.instantiate_pre(component).context("pre-instantiating the component")?)
                .context("checking the component's exports")?;
        Ok(Node { pre, backend, options, idle: std::sync::Mutex::new(Vec::new()) })
    }

    /// The backend this node keeps its state in.
    pub fn backend(&self) -> &Arc<Backend> {
        &self.backend
    }

    /// A fresh instance, for one request.
    pub fn instance(&self) -> anyhow::Result<Instance> {
        let mut wasi = WasiCtxBuilder::new();
        wasi.envs(&self.options.config);
        if let Some(now) = self.options.fixed_clock {
            wasi.wall_clock(FixedClock(now));
        }
        let state = State {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            backend: Arc::clone(&self.backend),
            calls: StoreCalls::default(),
            turn: Turn::Free,
            memory: MemoryWatch::default(),
        };
        let mut store = Store::new(self.pre.engine(), state);
        store.limiter(|state| &mut state.memory);
        let bindings = self.pre.instantiate(&mut store).context("instantiating the component")?;
        Ok(Instance { store, bindings })
    }

    /// An instance for one request: an idle one that served an earlier request if there
    /// is one, else a fresh one.
    ///
    /// Reuse is safe because the component keeps no state between calls but its
    /// configuration, which is fixed for an instance's life: it reads the clock and the
    /// random source from WASI on every call, and everything it knows lives in the
    /// store. An instance that failed (a trap) is never returned to the pool.
    pub fn checkout(&self) -> anyhow::Result<Instance> {
        let idle = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        match idle {
            Some(instance) => Ok(instance),
            None => self.instance(),
        }
    }

    /// Returns an instance that served a request successfully, for reuse, unless its
    /// memory grew past [`POOLED_MEMORY_LIMIT`] (then it is dropped, and its memory with
    /// it) or the pool is full.
    pub fn checkin(&self, instance: Instance) {
        if instance.memory_bytes() > POOLED_MEMORY_LIMIT {
            return;
        }
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < IDLE_INSTANCES
        {
            idle.push(instance);
        }
    }

    /// How many idle instances the pool holds.
    pub fn idle_instances(&self) -> usize {
        self.idle.lock().map_or(0, |idle| idle.len())
    }

    /// The longest body the node reads for `method` and `path`, asked of a pooled
    /// instance.
    pub fn body_limit(&self, method: &str, path: &str) -> anyhow::Result<u64> {
        let mut instance = self.checkout()?;
        let limit = instance.body_limit(method, path)?;
        self.checkin(instance);
        Ok(limit)
    }

    /// Serves one request with a pooled instance, which goes back to the pool
    /// afterwards unless the call failed or it grew too large.
    pub fn serve(&self, request: &Request) -> anyhow::Result<Response> {
        let mut instance = self.checkout()?;
        let response = instance.serve(request)?;
        self.checkin(instance);
        Ok(response)
    }

    /// Serves one request with a fresh instance.
    pub fn handle(&self, request: &Request) -> anyhow::Result<Response> {
        self.instance()?.handle(request)
    }

    /// Runs the scheduled jobs with a fresh instance: what they did.
    pub fn tick(&self) -> anyhow::Result<TickReport> {
        self.instance()?.tick()
    }
}

/// One instance of the component, living for one request.
pub struct Instance {
    store: Store<State>,
    bindings: bindings::NodeApi,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance").finish_non_exhaustive()
    }
}

impl Instance {
    /// The longest body the node reads for `method` and `path`.
    pub fn body_limit(&mut self, method: &str, path: &str) -> anyhow::Result<u64> {
        Ok(self
            .bindings
            .ledger_node_handler()
            .call_body_limit(&mut self.store, method, path)
            .context("calling body-limit")?)
    }

    /// Bytes of linear memory the instance holds.
    pub fn memory_bytes(&self) -> usize {
        self.store.data().memory.bytes
    }

    /// Serves `request`, keeping the instance for another.
    pub fn serve(&mut self, request: &Request) -> anyhow::Result<Response> {
        Ok(self.bindings.ledger_node_handler().call_handle(&mut self.store, request).context("calling handle")?)
    }

    /// Serves `request` as ticket `ticket` of `turns`: everything before its first store
    /// call runs at once, concurrently with other instances; the rest in its turn, which
    /// ends when its write commits (a later store call fails) or, without a write, when
    /// it returns, failed unless the response is a success.
    pub fn serve_in_turn(&mut self, request: &Request, turns: &Arc<Turns>, ticket: u64) -> anyhow::Result<Response> {
        self.store.data_mut().turn = Turn::Pending(Arc::clone(turns), ticket);
        let response = self.serve(request);
        if !matches!(std::mem::take(&mut self.store.data_mut().turn), Turn::Passed) {
            turns.finish(ticket, response.as_ref().is_ok_and(|r| (200..300).contains(&r.status)));
        }
        response
    }

    /// Serves `request`, and says how often the instance called its store.
    pub fn handle_counted(mut self, request: &Request) -> anyhow::Result<(Response, StoreCalls)> {
        let response =
            self.bindings.ledger_node_handler().call_handle(&mut self.store, request).context("calling handle")?;
        Ok((response, self.store.data().calls))
    }

    /// Serves `request`.
    pub fn handle(mut self, request: &Request) -> anyhow::Result<Response> {
        Ok(self.bindings.ledger_node_handler().call_handle(&mut self.store, request).context("calling handle")?)
    }

    /// Runs the scheduled jobs (`tick`): what they did.
    pub fn tick(mut self) -> anyhow::Result<TickReport> {
        let result = self.bindings.ledger_node_handler().call_tick(&mut self.store).context("calling tick")?;
        result.map_err(|e| anyhow::anyhow!("the scheduled jobs failed: {e}"))
    }
}
