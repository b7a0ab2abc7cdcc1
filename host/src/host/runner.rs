//! The wasmtime runner: the engine, the compiled component, its instances and the pool
//! of idle ones, and the watch on their memory.
//!
//! The component is compiled once per process ([`Node::new`]; wasmtime's on-disk cache
//! keeps the compiled code between runs, so a restart does not recompile). An instance
//! lives in a wasmtime store of its own ([`Node::instance`]). `serve` takes one from a
//! pool of idle instances for each request ([`Node::checkout`], [`Node::checkin`]) and
//! `ledger-node ingest` uses one for a whole run; that is safe because the component
//! keeps no state between calls: everything the node knows it writes through its
//! `store` import ([`super::store_import`]), served from the node's [`Backend`] or, for
//! one call, from a wrapper of it ([`Instance::serve_over`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::error::Context as _;
use wasmtime::{Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::bindings::exports::ledger::node::handler::{Request, Response, TickReport};
use super::bindings::{NodeApi, NodeApiPre};
use super::store_import::{self, StoreCalls, StoreImport};
use crate::backend::Backend;
use crate::metrics::Metrics;

/// The component this host was built with (see `build.rs`), embedded in the binary, so
/// that a binary runs the component it was built with wherever it is copied to.
pub const COMPONENT: &[u8] = include_bytes!(env!("LEDGER_NODE_COMPONENT_PATH"));

/// The per-instance state of a wasmtime store.
struct State {
    wasi: WasiCtx,
    table: ResourceTable,
    /// The `store` import.
    import: StoreImport,
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

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
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
    pre: NodeApiPre<State>,
    backend: Arc<dyn Backend>,
    options: Options,
    /// Instances that served a request and may serve another (see [`Node::checkin`]).
    idle: std::sync::Mutex<Vec<Instance>>,
    /// Calls into the component by this node's instances ([`Node::component_calls`]).
    entered: Arc<AtomicU64>,
    /// What the node is doing ([`crate::metrics`]).
    metrics: Arc<Metrics>,
}

/// Most idle instances a node keeps for reuse.
pub const IDLE_INSTANCES: usize = 16;

/// Most linear memory the idle instances hold together. A linear memory never shrinks,
/// so an idle instance holds the most it ever needed; this bounds what the pool pins
/// between requests, whatever the requests were. An instance that served the usual
/// requests holds about 1.4 MiB, so sixteen of them fit.
pub const IDLE_MEMORY_BYTES: usize = 32 * 1024 * 1024;

/// Largest linear memory of an instance that goes back to the pool: a quarter of
/// [`IDLE_MEMORY_BYTES`], so that a few large instances never crowd out the rest. An
/// instance that rendered a stream page of 100 updates (about 500 KB) holds 2.6 MiB
/// and is kept, so the next page does not fault a fresh instance's memory in again; one
/// that rendered a page of 1,000 (12 MiB), or read a body of a megabyte, is dropped
/// after its request, and its memory with it.
pub const POOLED_MEMORY_LIMIT: usize = IDLE_MEMORY_BYTES / 4;

/// How much linear memory `instances` hold together.
fn memory_of(instances: &[Instance]) -> usize {
    instances.iter().map(Instance::memory_bytes).sum()
}

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
        Err(e) => tracing::warn!(cause = %format!("{e:#}"), "compiling without wasmtime's code cache"),
    }
    Ok(Engine::new(&config).context("creating the wasmtime engine")?)
}

impl Node {
    /// Compiles (or loads from cache) the component and links its imports over `backend`.
    pub fn new(engine: &Engine, backend: Arc<dyn Backend>, options: Options) -> anyhow::Result<Self> {
        let component = Component::new(engine, COMPONENT).context("compiling the ledger-node component")?;
        Self::from_component(engine, &component, backend, options)
    }

    /// Links an already compiled component over `backend`.
    pub fn from_component(
        engine: &Engine,
        component: &Component,
        backend: Arc<dyn Backend>,
        options: Options,
    ) -> anyhow::Result<Self> {
        let mut linker = Linker::<State>::new(engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).context("linking WASI")?;
        store_import::add_to_linker(&mut linker, |state| &mut state.import)?;
        let pre = NodeApiPre::new(linker.instantiate_pre(component).context("pre-instantiating the component")?)
            .context("checking the component's exports")?;
        let metrics = Arc::new(Metrics::new());
        let cached = Arc::clone(&backend);
        metrics.set_body_cache_source(move || cached.bodies().stats());
        Ok(Node { pre, backend, options, idle: std::sync::Mutex::new(Vec::new()), entered: Arc::default(), metrics })
    }

    /// The node's metrics.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// How the node runs.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The backend this node keeps its state in.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// How many calls this node's instances have made into the component so far
    /// (`handle` and `tick`): what a request costs in crossings, for tests.
    pub fn component_calls(&self) -> u64 {
        self.entered.load(Ordering::Relaxed)
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
            import: StoreImport::new(Arc::clone(&self.backend)),
            memory: MemoryWatch::default(),
        };
        let mut store = Store::new(self.pre.engine(), state);
        store.limiter(|state| &mut state.memory);
        let bindings = self.pre.instantiate(&mut store).context("instantiating the component")?;
        Ok(Instance { store, bindings, entered: Arc::clone(&self.entered) })
    }

    /// An instance for one request: an idle one that served an earlier request if there
    /// is one, else a fresh one.
    ///
    /// Reuse is safe because the component keeps no state between calls but its
    /// configuration, which is fixed for an instance's life: it reads the clock and the
    /// random source from WASI on every call, and everything it knows lives in the
    /// store. An instance that failed (a trap) is never returned to the pool.
    pub fn checkout(&self) -> anyhow::Result<Instance> {
        let idle = self.idle.lock().ok().and_then(|mut idle| {
            let instance = idle.pop();
            self.metrics.instances_idle(idle.len(), memory_of(&idle));
            instance
        });
        match idle {
            Some(instance) => Ok(instance),
            None => self.instance(),
        }
    }

    /// Returns an instance that served a request successfully, for reuse, unless its
    /// memory grew past [`POOLED_MEMORY_LIMIT`], or the pool has [`IDLE_INSTANCES`] or no
    /// room for it within [`IDLE_MEMORY_BYTES`]: then it is dropped, and its memory with it.
    pub fn checkin(&self, instance: Instance) {
        let bytes = instance.memory_bytes();
        if bytes > POOLED_MEMORY_LIMIT {
            self.metrics.instance_dropped();
            return;
        }
        let Ok(mut idle) = self.idle.lock() else { return };
        let held = memory_of(&idle);
        if idle.len() >= IDLE_INSTANCES || held + bytes > IDLE_MEMORY_BYTES {
            self.metrics.instance_dropped();
            return;
        }
        idle.push(instance);
        self.metrics.instances_idle(idle.len(), held + bytes);
    }

    /// How many idle instances the pool holds.
    pub fn idle_instances(&self) -> usize {
        self.idle.lock().map_or(0, |idle| idle.len())
    }

    /// How much linear memory the idle instances hold together.
    pub fn idle_memory_bytes(&self) -> usize {
        self.idle.lock().map_or(0, |idle| memory_of(&idle))
    }

    /// Serves one request with a pooled instance, which goes back to the pool
    /// afterwards unless the call failed or it grew too large.
    pub fn serve(&self, request: &Request) -> anyhow::Result<Response> {
        let _busy = self.metrics.instance_busy();
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
    bindings: NodeApi,
    /// The node's count of calls into the component.
    entered: Arc<AtomicU64>,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance").finish_non_exhaustive()
    }
}

impl Instance {
    /// Bytes of linear memory the instance holds.
    pub fn memory_bytes(&self) -> usize {
        self.store.data().memory.bytes
    }

    /// The backend the instance's store calls go to.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.store.data().import.backend
    }

    /// Serves `request`, keeping the instance for another.
    pub fn serve(&mut self, request: &Request) -> anyhow::Result<Response> {
        self.entered.fetch_add(1, Ordering::Relaxed);
        self.store.data_mut().import.begin();
        Ok(self.bindings.ledger_node_handler().call_handle(&mut self.store, request).context("calling handle")?)
    }

    /// Serves `request` with its store calls going to `backend` (a wrapper of the
    /// node's, say) instead of the instance's own, which it has again afterwards.
    pub fn serve_over(&mut self, request: &Request, backend: Arc<dyn Backend>) -> anyhow::Result<Response> {
        let own = std::mem::replace(&mut self.store.data_mut().import.backend, backend);
        let response = self.serve(request);
        self.store.data_mut().import.backend = own;
        response
    }

    /// Serves `request`, and says how often the instance called its store.
    pub fn handle_counted(mut self, request: &Request) -> anyhow::Result<(Response, StoreCalls)> {
        let response = self.serve(request)?;
        Ok((response, self.store.data().import.calls))
    }

    /// Serves `request`.
    pub fn handle(mut self, request: &Request) -> anyhow::Result<Response> {
        self.serve(request)
    }

    /// Runs the scheduled jobs (`tick`): what they did.
    pub fn tick(mut self) -> anyhow::Result<TickReport> {
        self.entered.fetch_add(1, Ordering::Relaxed);
        self.store.data_mut().import.begin();
        let result = self.bindings.ledger_node_handler().call_tick(&mut self.store).context("calling tick")?;
        result.map_err(|e| anyhow::anyhow!("the scheduled jobs failed: {e}"))
    }
}
