//! The HTTP/1.1 server of `ledger-node serve`: hyper on tokio, translating each request
//! for a component instance and back. It decides nothing about the API; what it does
//! decide is how much of the machine one client can hold.
//!
//! - **Connections** ([`Limits::max_connections`]): at the cap, a new client closes the
//!   keep-alive connection that has been idle longest (between requests only, never
//!   one mid-request or mid-answer), so that connections kept open by a request now
//!   and then cannot keep new clients out; while every connection is mid-request, new
//!   ones wait in the listen queue ([`LISTEN_BACKLOG`] long). Accept errors (out of
//!   file descriptors, say) back off and are logged once per burst (`server/accept.rs`).
//! - **Slow and idle clients** (`server/connection.rs`): a request's head must arrive
//!   within [`Limits::header_timeout`] of its first byte (a new connection's first head,
//!   of the accept), its body within [`Limits::body_timeout`] (else 408); an answer's
//!   writing must make progress (the socket taking some bytes) within
//!   [`Limits::write_timeout`], however long the whole takes; and a keep-alive
//!   connection with no request for [`Limits::idle_timeout`] after its last answer was
//!   written out is closed.
//! - **Instances**: the body is read (up to the core's limit for the route,
//!   [`ledger_node_core::body_limit`], from the core this host links, so that the
//!   request enters the component once) before the request takes an instance; a
//!   request with a body runs the component
//!   on the blocking thread pool, never on the threads that accept and read
//!   connections, in the slots of its route's class (the core's
//!   [`ledger_node_core::api::route::Class`]): pages and batches (the history stream, the
//!   backfilling pages, ingest, the exports) and everything else (the wallet, the
//!   registry) each have [`Limits::concurrent_calls`] slots of their own, so a flood
//!   of pages never makes a wallet request wait for a slot. A GET without a body, a
//!   bounded number of store reads, runs on the connection's own thread: handing it
//!   to the pool and back would cost more than the call. An instance whose memory grew
//!   past a bound, or for which the pool has no room, is dropped after its request
//!   ([`Node::checkin`]).
//! - **Answers in memory** ([`Limits::response_budget`], 256 MiB by default;
//!   `server/answer.rs`): a rendered answer of more than 64 KiB holds its size in one
//!   node-wide budget until the socket has taken it, and is written out in 64 KiB
//!   pieces, each freed (and given back to the budget) once written. A page reserves
//!   its room before its component call; a request that finds no room within
//!   [`Limits::budget_wait`] (for a page, its slot and its room within that time
//!   together) is answered 503 with `Retry-After`. However many clients
//!   ask for pages and never read them, the node holds about the budget in answers.
//! - **Framing**: a body hyper cannot decode (a bad chunk size, an oversized chunk
//!   extension) is a 400, and the connection is closed after it. So is a head that
//!   hyper takes but that could be read two ways: one with more than one `Host`
//!   header, or with a transfer coding besides `chunked` (`gzip, chunked`).

mod accept;
mod answer;
mod connection;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ledger_node_core::api::route::Class;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::host::Node;

/// What one client may hold, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// From a request's first byte to the end of its head.
    pub header_timeout: Duration,
    /// From the end of a request's head to the end of its body.
    pub body_timeout: Duration,
    /// How long a keep-alive connection may wait for its next request, counted from
    /// the end of the last answer's writing.
    pub idle_timeout: Duration,
    /// How long an answer's writing may go without the socket taking a byte; then the
    /// connection is closed (the client has stopped reading).
    pub write_timeout: Duration,
    /// Connections open at once. At the cap, a new client closes the longest-idle
    /// keep-alive connection; with none idle it waits to be accepted.
    pub max_connections: usize,
    /// Component calls of one route class ([`Class`]) running at once; further
    /// requests of that class wait (holding no instance). Each class has this many.
    pub concurrent_calls: usize,
    /// Bytes of rendered answers the node holds at once (answers waiting for their
    /// client to take them); see the module docs.
    pub response_budget: usize,
    /// How long a request waits for room in [`Limits::response_budget`]; then 503.
    pub budget_wait: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            write_timeout: Duration::from_secs(30),
            max_connections: 10_000,
            concurrent_calls: default_concurrent_calls(),
            response_budget: DEFAULT_RESPONSE_BUDGET,
            budget_wait: Duration::from_secs(10),
        }
    }
}

/// The default [`Limits::response_budget`]: 256 MiB, some forty pages of 1,000 updates.
pub const DEFAULT_RESPONSE_BUDGET: usize = 256 * 1024 * 1024;

/// The listen queue asked of the kernel (which caps it at `net.core.somaxconn`): room
/// for a burst of new clients while the accept loop makes room at the cap.
pub const LISTEN_BACKLOG: u32 = 4096;

/// Four component calls per core: a call blocks on the store as well as computing.
fn default_concurrent_calls() -> usize {
    std::thread::available_parallelism().map_or(4, |n| n.get() * 4)
}

/// What every connection shares.
#[derive(Debug)]
struct Shared {
    node: Arc<Node>,
    limits: Limits,
    /// The component slots of [`Class::Bulk`] requests.
    bulk_calls: Semaphore,
    /// The component slots of [`Class::Interactive`] requests.
    interactive_calls: Semaphore,
    /// The bytes of answers held ([`Limits::response_budget`]).
    budget: Arc<answer::Budget>,
    /// The open connections, for closing the longest-idle one at the cap.
    open: connection::Registry,
    /// The currency word of the node's paths, for naming a request's route template.
    coin: String,
}

impl Shared {
    /// The component slots of `class`.
    fn calls(&self, class: Class) -> &Semaphore {
        match class {
            Class::Bulk => &self.bulk_calls,
            Class::Interactive => &self.interactive_calls,
        }
    }
}

/// Serves `node` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    node: Arc<Node>,
    limits: Limits,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let mut shutdown = std::pin::pin!(shutdown);
    let connections = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let slots = limits.concurrent_calls.max(1);
    let coin = crate::config::check(&node.options().config)?.names.coin;
    let shared = Arc::new(Shared {
        node,
        limits,
        bulk_calls: Semaphore::new(slots),
        interactive_calls: Semaphore::new(slots),
        budget: Arc::new(answer::Budget::new(limits.response_budget, limits.budget_wait)),
        open: connection::Registry::default(),
        coin,
    });
    let mut errors = accept::Errors::default();
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    errors.recovered();
                    stream
                }
                Err(e) => {
                    shared.node.metrics().accept_failed();
                    let pause = errors.failed(&e);
                    tokio::select! {
                        () = tokio::time::sleep(pause) => continue,
                        () = &mut shutdown => return Ok(()),
                    }
                }
            },
            () = &mut shutdown => return Ok(()),
        };
        // At the cap, the new client takes the place of the longest-idle keep-alive
        // connection; while none is idle (every one is mid-request), it waits, and
        // further clients wait in the listen queue.
        let metrics = Arc::clone(shared.node.metrics());
        let mut waited = false;
        let permit = loop {
            if let Ok(permit) = Arc::clone(&connections).try_acquire_owned() {
                break permit;
            }
            if !std::mem::replace(&mut waited, true) {
                metrics.connection_waited();
            }
            if shared.open.close_longest_idle() {
                metrics.connection_evicted();
            }
            tokio::select! {
                permit = Arc::clone(&connections).acquire_owned() => break permit?,
                () = tokio::time::sleep(accept::RETRY_AT_CAP) => {}
                () = &mut shutdown => return Ok(()),
            }
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(connection::serve(stream, Arc::clone(&shared), permit));
    }
}

/// Binds `addr`, reporting the address actually bound (port 0 picks a free port).
/// The listen queue is [`LISTEN_BACKLOG`] long.
pub async fn bind(addr: SocketAddr) -> anyhow::Result<(TcpListener, SocketAddr)> {
    let bound = || -> std::io::Result<TcpListener> {
        let socket = if addr.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        socket.listen(LISTEN_BACKLOG)
    };
    let listener = bound().map_err(|e| anyhow::anyhow!("binding {addr}: {e}"))?;
    let local = listener.local_addr()?;
    Ok((listener, local))
}

pub use accept::open_file_budget;

/// Serves the node's metrics ([`crate::metrics`]) on `listener`, a listener of their
/// own (never the public port), until `shutdown` completes: `GET /metrics` in the
/// Prometheus text format, and a 404 for any other path.
pub async fn serve_metrics(
    listener: TcpListener,
    node: Arc<Node>,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    use http_body_util::Full;
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!(cause = %e, "accepting a metrics connection failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => return Ok(()),
        };
        let node = Arc::clone(&node);
        let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
            let node = Arc::clone(&node);
            async move {
                let (status, content_type, body) = match (request.method(), request.uri().path()) {
                    (&hyper::Method::GET, "/metrics") => (200, crate::metrics::CONTENT_TYPE, node.metrics().render()),
                    (_, "/metrics") => (405, "application/json", r#"{"error":"GET /metrics only"}"#.to_owned()),
                    _ => (404, "application/json", r#"{"error":"this listener serves GET /metrics only"}"#.to_owned()),
                };
                hyper::Response::builder()
                    .status(status)
                    .header(hyper::header::CONTENT_TYPE, content_type)
                    .body(Full::new(bytes::Bytes::from(body)))
            }
        });
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let served = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .serve_connection(io, service);
            if let Err(e) = tokio::time::timeout(Duration::from_secs(60), served).await.unwrap_or(Ok(())) {
                tracing::debug!(cause = %e, "a metrics connection failed");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};
    use std::time::Instant;

    use super::*;
    use crate::backend::MemoryBackend;
    use crate::host::{self, Options};

    /// A server over a fresh node in memory, in this process, with the admin token
    /// `secret`; it stops when the runtime is dropped.
    fn serving() -> (Arc<Node>, SocketAddr, tokio::runtime::Runtime) {
        let config = vec![(ledger_node_core::model::config::ADMIN_TOKEN.to_owned(), "secret".to_owned())];
        let backend = Arc::new(MemoryBackend::new());
        let node = Node::new(&host::engine().expect("an engine"), backend, Options { config, fixed_clock: None })
            .expect("a node");
        let node = Arc::new(node);
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
        let (listener, address) = runtime.block_on(bind("127.0.0.1:0".parse().expect("an address"))).expect("binding");
        runtime.spawn(serve(listener, Arc::clone(&node), Limits::default(), std::future::pending()));
        (node, address, runtime)
    }

    /// Sends `request` on a connection of its own and reads the answer until the
    /// server closes the connection.
    fn answer(address: SocketAddr, request: &str) -> String {
        let mut stream = std::net::TcpStream::connect(address).expect("connecting");
        stream.set_read_timeout(Some(Duration::from_millis(100))).expect("a read timeout");
        stream.write_all(request.as_bytes()).expect("sending");
        let (started, mut text, mut buffer) = (Instant::now(), Vec::new(), [0u8; 4096]);
        while started.elapsed() < Duration::from_secs(10) {
            match stream.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => text.extend_from_slice(buffer.get(..n).unwrap_or_default()),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(_) => break,
            }
        }
        String::from_utf8_lossy(&text).into_owned()
    }

    #[test]
    fn a_request_with_a_body_enters_the_component_once() {
        let (node, address, _runtime) = serving();
        let post = |path: &str, headers: &str, length: usize, body: &str| {
            format!(
                "POST {path} HTTP/1.1\r\nhost: node\r\nconnection: close\r\n{headers}content-length: {length}\r\n\r\n{body}"
            )
        };
        let ingest_limit = ledger_node_core::body_limit(&ledger_node_core::Method::Post, "/v0/admin/ingest");
        let cases = [
            // A body within the limit, read whole.
            (post("/v0/backfilling/migration-info", "", 18, r#"{"migration_id":0}"#), "HTTP/1.1 404"),
            // The body of an admin request without the token: refused by the component.
            (post("/v0/admin/ingest", "", 2, "{}"), "HTTP/1.1 401"),
            // Announced over the limit, without the token: 413 before the token is looked at.
            (post("/v0/admin/ingest", "expect: 100-continue\r\n", ingest_limit + 1, ""), "HTTP/1.1 413"),
            // No body: the component is asked nothing else either.
            ("GET /version HTTP/1.1\r\nhost: node\r\nconnection: close\r\n\r\n".to_owned(), "HTTP/1.1 200"),
        ];
        for (request, status) in cases {
            let before = node.component_calls();
            let answer = answer(address, &request);
            assert!(answer.starts_with(status), "{request:.60}: {answer}");
            assert_eq!(node.component_calls() - before, 1, "{request:.60}: calls into the component");
        }
    }
}
