//! The HTTP/1.1 server of `ledger-node serve`: hyper on tokio, translating each request
//! for a component instance and back. It decides nothing about the API; what it does
//! decide is how much of the machine one client can hold.
//!
//! - **Connections** ([`Limits::max_connections`]): the accept loop takes a permit before
//!   it accepts, so connections beyond the cap wait in the kernel's listen queue instead
//!   of failing. Accept errors (out of file descriptors, say) back off and are logged
//!   once per burst (`server/accept.rs`).
//! - **Slow and idle clients** (`server/connection.rs`): a request's head must arrive within
//!   [`Limits::header_timeout`] of its first byte (a new connection's first head, of
//!   the accept), its body within
//!   [`Limits::body_timeout`] (else 408), and a keep-alive connection with no request
//!   for [`Limits::idle_timeout`] is closed.
//! - **Instances**: the body is read (up to the limit the component sets for the route)
//!   before the request takes an instance; a request with a body runs the component
//!   on the blocking thread pool, at most [`Limits::concurrent_calls`] at once, never
//!   on the threads that accept and read connections. A GET without a body, a bounded
//!   number of store reads, runs on the connection's own thread: handing it to the pool
//!   and back would cost more than the call. An instance whose memory grew past a bound
//!   is dropped after its request ([`Node::checkin`]).
//! - **Framing**: a body hyper cannot decode (a bad chunk size, an oversized chunk
//!   extension) is a 400, and the connection is closed after it. So is a head that
//!   hyper takes but that could be read two ways: one with more than one `Host`
//!   header, or with a transfer coding besides `chunked` (`gzip, chunked`).

mod accept;
mod connection;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

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
    /// How long a keep-alive connection may wait for its next request.
    pub idle_timeout: Duration,
    /// Connections open at once; further ones wait to be accepted.
    pub max_connections: usize,
    /// Component calls running at once; further requests wait (holding no instance).
    pub concurrent_calls: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: 10_000,
            concurrent_calls: default_concurrent_calls(),
        }
    }
}

/// Four component calls per core: a call blocks on the store as well as computing.
fn default_concurrent_calls() -> usize {
    std::thread::available_parallelism().map_or(4, |n| n.get() * 4)
}

/// What every connection shares.
#[derive(Debug)]
struct Shared {
    node: Arc<Node>,
    limits: Limits,
    calls: Semaphore,
}

/// Serves `node` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    node: Arc<Node>,
    limits: Limits,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let mut shutdown = std::pin::pin!(shutdown);
    let connections = Arc::new(Semaphore::new(limits.max_connections));
    let shared = Arc::new(Shared { node, limits, calls: Semaphore::new(limits.concurrent_calls.max(1)) });
    let mut errors = accept::Errors::default();
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&connections).acquire_owned() => permit?,
            () = &mut shutdown => return Ok(()),
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    errors.recovered();
                    stream
                }
                Err(e) => {
                    let pause = errors.failed(&e);
                    tokio::select! {
                        () = tokio::time::sleep(pause) => continue,
                        () = &mut shutdown => return Ok(()),
                    }
                }
            },
            () = &mut shutdown => return Ok(()),
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(connection::serve(stream, Arc::clone(&shared), permit));
    }
}

/// Binds `addr`, reporting the address actually bound (port 0 picks a free port).
pub async fn bind(addr: SocketAddr) -> anyhow::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind(addr).await.map_err(|e| anyhow::anyhow!("binding {addr}: {e}"))?;
    let local = listener.local_addr()?;
    Ok((listener, local))
}

pub use accept::open_file_budget;
