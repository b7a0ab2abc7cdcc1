//! The hosts the scenario suite runs against.

use std::sync::Arc;
use std::time::Duration;

use ledger_node::backend::{Backend, MemoryBackend};
use ledger_node::host::{self, Node, Options};
use ledger_node::lsm::LsmStore;
use ledger_node::server;
use ledger_node_core::api::http::{Body, Method, Request};
use ledger_node_core::model::time::Timestamp;
use ledger_node_core::storage::store::MemoryStore;
use ledger_node_core::{Config, Env};

use super::scenario::{Outgoing, Received, Target, test_config};

/// The fixed "now" of hosts whose clock the tests control: 2026-01-01T00:00:00Z.
pub const FIXED_NOW_MICROS: i64 = 1_767_225_600_000_000;

/// The core alone, over the in-memory store, with a fixed clock.
pub struct CoreTarget {
    store: MemoryStore,
    config: Config,
    requests: u64,
}

impl CoreTarget {
    /// A core over an empty memory store.
    pub fn new() -> Self {
        Self::with_config(&[])
    }

    /// [`CoreTarget::new`], with `vars` set besides the test configuration.
    pub fn with_config(vars: &[(String, String)]) -> Self {
        let config = ledger_node::config::check(&[test_config(), vars.to_vec()].concat())
            .expect("the test configuration is valid");
        CoreTarget { store: MemoryStore::new(), config, requests: 0 }
    }
}

impl Target for CoreTarget {
    fn name(&self) -> &str {
        "core + memory store"
    }

    fn reset(&mut self) {
        self.store = MemoryStore::new();
    }

    fn send(&mut self, outgoing: &Outgoing) -> Received {
        let method = Method::parse(&outgoing.method);
        let mut request = Request::new(method.clone(), &outgoing.target);
        request.headers = outgoing.headers.clone();
        let limit = ledger_node_core::body_limit(&method, &request.path);
        request.body = if outgoing.body.len() > limit { Body::TooLarge } else { Body::Complete(outgoing.body.clone()) };
        // Entropy differs per request, deterministically.
        self.requests += 1;
        let mut entropy = [0u8; 32];
        entropy[..8].copy_from_slice(&self.requests.to_le_bytes());
        let env =
            Env { now: Timestamp::from_micros(FIXED_NOW_MICROS).expect("in range"), entropy, config: &self.config };
        let response = ledger_node_core::storage::exec::block_on(ledger_node_core::handle(&request, &env, &self.store));
        Received { status: response.status, headers: response.headers, body: response.body }
    }
}

/// An HTTP client for hosts reached over loopback.
pub struct HttpClient {
    agent: ureq::Agent,
    base: String,
}

impl HttpClient {
    /// A client for `base` (`http://127.0.0.1:PORT`).
    pub fn new(base: String) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .allow_non_standard_methods(true)
            .timeout_global(Some(Duration::from_secs(120)))
            .build();
        HttpClient { agent: ureq::Agent::new_with_config(config), base }
    }

    /// Sends one request.
    pub fn send(&self, outgoing: &Outgoing) -> Received {
        let mut builder = ureq::http::Request::builder()
            .method(outgoing.method.as_str())
            .uri(format!("{}{}", self.base, outgoing.target));
        for (name, value) in &outgoing.headers {
            builder = builder.header(name, value);
        }
        let request = builder.body(outgoing.body.clone()).expect("a valid request");
        let response = self
            .agent
            .run(request)
            .unwrap_or_else(|e| panic!("{} {}{}: {e}", outgoing.method, self.base, outgoing.target));
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
            .collect();
        let body = response.into_body().with_config().limit(u64::MAX).read_to_vec().expect("reading the response body");
        Received { status, headers, body }
    }
}

/// The component in wasmtime behind `ledger-node serve`'s HTTP server, in this process,
/// with a fresh memory or native store per scenario and a fixed clock.
pub struct ComponentTarget {
    engine: wasmtime::Engine,
    component: wasmtime::component::Component,
    runtime: tokio::runtime::Runtime,
    store_dir: Option<tempfile::TempDir>,
    vars: Vec<(String, String)>,
    scenario: u32,
    server: Option<(HttpClient, tokio::sync::oneshot::Sender<()>)>,
}

impl ComponentTarget {
    /// Over memory (`on_disk: false`) or native stores in a temporary directory.
    pub fn new(on_disk: bool) -> Self {
        Self::with_config(on_disk, &[])
    }

    /// [`ComponentTarget::new`], with `vars` set besides the test configuration.
    pub fn with_config(on_disk: bool, vars: &[(String, String)]) -> Self {
        let engine = host::engine().expect("a wasmtime engine");
        let component = wasmtime::component::Component::new(&engine, host::COMPONENT).expect("the component compiles");
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime");
        let store_dir = on_disk.then(|| tempfile::tempdir().expect("a temporary directory"));
        ComponentTarget { engine, component, runtime, store_dir, vars: vars.to_vec(), scenario: 0, server: None }
    }

    /// The client of the running server (started over a fresh backend if none runs),
    /// for tests that send requests concurrently.
    pub fn client(&mut self) -> &HttpClient {
        if self.server.is_none() {
            self.start();
        }
        &self.server.as_ref().expect("started").0
    }

    /// Starts a server over a fresh backend.
    fn start(&mut self) -> &HttpClient {
        self.scenario += 1;
        let backend: Arc<dyn Backend> = match &self.store_dir {
            Some(dir) => Arc::new(
                LsmStore::open(&dir.path().join(format!("scenario-{}.store", self.scenario))).expect("a store"),
            ),
            None => Arc::new(MemoryBackend::new()),
        };
        let options = Options {
            config: [test_config(), self.vars.clone()].concat(),
            fixed_clock: Some(Duration::from_micros(FIXED_NOW_MICROS as u64)),
        };
        let node = Arc::new(Node::from_component(&self.engine, &self.component, backend, options).expect("linking"));
        let (listener, addr) =
            self.runtime.block_on(server::bind("127.0.0.1:0".parse().expect("an address"))).expect("binding");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        self.runtime.spawn(server::serve(listener, node, server::Limits::default(), async move {
            let _ = stopped.await;
        }));
        self.server = Some((HttpClient::new(format!("http://{addr}")), stop));
        &self.server.as_ref().expect("just set").0
    }
}

impl Target for ComponentTarget {
    fn name(&self) -> &str {
        if self.store_dir.is_some() { "component in wasmtime + native store" } else { "component in wasmtime + memory" }
    }

    fn reset(&mut self) {
        if let Some((_, stop)) = self.server.take() {
            let _ = stop.send(());
        }
        self.start();
    }

    fn send(&mut self, outgoing: &Outgoing) -> Received {
        if self.server.is_none() {
            self.start();
        }
        self.server.as_ref().expect("started").0.send(outgoing)
    }
}
