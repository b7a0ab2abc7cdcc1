//! One connection: hyper's HTTP/1.1 state machine over the socket, a watchdog for the
//! connection's timeouts, and the translation of each request for the component.
//!
//! The watchdog knows where the connection stands from two sources: the socket
//! wrapper ([`Watched`]) sees the first byte of a request arrive, and the service sees
//! a request's head complete and its response leave. A connection is idle (waiting for
//! a further request), receiving a request's head (a new connection is, from its
//! accept), or busy with a request: the first two have deadlines, and the connection
//! is closed when one passes. A body that does not
//! arrive in time is answered with 408 by the service itself.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{Notify, OwnedSemaphorePermit};
use tokio::time::Instant;

use super::{Limits, Shared};
use crate::host;

/// Serves one connection until the client closes it or a deadline passes; `permit`
/// is the connection's place under the cap, given back when it ends.
pub(super) async fn serve(stream: TcpStream, shared: Arc<Shared>, permit: OwnedSemaphorePermit) {
    let limits = shared.limits;
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched { inner: stream, activity: Arc::clone(&activity) });
    let service = {
        let activity = Arc::clone(&activity);
        service_fn(move |request| {
            let (shared, activity) = (Arc::clone(&shared), Arc::clone(&activity));
            async move {
                activity.set(Phase::Busy);
                let response = respond(&shared, request).await;
                activity.set(Phase::Idle(Instant::now()));
                Ok::<_, Infallible>(response)
            }
        })
    };
    // The watchdog times a request's head from its first byte; hyper's own header
    // timeout would also run while a keep-alive connection waits for its next request.
    let connection = http1::Builder::new().header_read_timeout(None).serve_connection(io, service);
    tokio::select! {
        result = connection => {
            if let Err(e) = result
                && !e.is_incomplete_message()
            {
                eprintln!("ledger-node: connection error: {e}");
            }
        }
        // Dropping the connection closes the socket.
        () = activity.expired(&limits) => {}
    }
    drop(permit);
}

/// Where a connection stands.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Waiting for a request since this instant.
    Idle(Instant),
    /// A request's first byte arrived at this instant; its head is not complete.
    Head(Instant),
    /// Serving a request (reading its body, running it, answering).
    Busy,
}

/// A connection's [`Phase`], and a signal for the watchdog when it changes.
#[derive(Debug)]
struct Activity {
    phase: Mutex<Phase>,
    changed: Notify,
}

impl Activity {
    /// A new connection: its first request's head is due within the header timeout of
    /// the accept, so a client that connects and sends nothing holds its place under
    /// the cap no longer than one that sends its head slowly.
    fn new() -> Self {
        Activity { phase: Mutex::new(Phase::Head(Instant::now())), changed: Notify::new() }
    }

    fn phase(&self) -> Phase {
        *self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set(&self, phase: Phase) {
        *self.phase.lock().unwrap_or_else(PoisonError::into_inner) = phase;
        self.changed.notify_one();
    }

    /// Bytes arrived: an idle connection is now receiving a request's head.
    fn received(&self) {
        let mut phase = self.phase.lock().unwrap_or_else(PoisonError::into_inner);
        if let Phase::Idle(_) = *phase {
            *phase = Phase::Head(Instant::now());
            drop(phase);
            self.changed.notify_one();
        }
    }

    /// Completes when the connection has been idle for `idle_timeout`, or a request's
    /// head has taken longer than `header_timeout`.
    async fn expired(&self, limits: &Limits) {
        loop {
            let deadline = match self.phase() {
                Phase::Idle(since) => Some(since + limits.idle_timeout),
                Phase::Head(since) => Some(since + limits.header_timeout),
                Phase::Busy => None,
            };
            match deadline {
                Some(deadline) if Instant::now() >= deadline => return,
                Some(deadline) => tokio::select! {
                    () = tokio::time::sleep_until(deadline) => {}
                    () = self.changed.notified() => {}
                },
                // `notify_one` keeps a wake-up for a watchdog that is not waiting yet,
                // so a change between reading the phase and waiting is not missed.
                None => self.changed.notified().await,
            }
        }
    }
}

/// The socket, telling the connection's [`Activity`] when bytes arrive.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.received();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

type HttpResponse = hyper::Response<Full<Bytes>>;

/// Answers one request; an internal failure is a masked 500 whose cause is logged.
async fn respond(shared: &Shared, request: hyper::Request<Incoming>) -> HttpResponse {
    match translate_and_handle(shared, request).await {
        Ok(response) => response,
        Err(e) => {
            eprintln!("ledger-node: serving a request failed: {e:#}");
            error_response(500, "internal error; the operator has been told the cause")
        }
    }
}

async fn translate_and_handle(shared: &Shared, request: hyper::Request<Incoming>) -> anyhow::Result<HttpResponse> {
    let (parts, body) = request.into_parts();
    if let Some(problem) = ambiguous_head(&parts.headers) {
        // Its body is not read: the connection cannot go on after it.
        return Ok(closing(error_response(400, &problem)));
    }
    let method = parts.method.as_str().to_owned();
    let path = parts.uri.path().to_owned();
    // A request without a body (most GETs) needs no limit: skip asking the component.
    let body = if hyper::body::Body::is_end_stream(&body) {
        Some(Vec::new())
    } else {
        let limit = {
            let (method, path) = (method.clone(), path.clone());
            call(shared, move |node| node.body_limit(&method, &path)).await?
        };
        let declared =
            parts.headers.get(hyper::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|len| len > limit) {
            // A client that asked to be told before it sends the body has sent nothing
            // more: refuse it at once (hyper sends `100 Continue` only once the body is
            // read, and closes the connection after a body it did not read).
            if !expects_continue(&parts.headers) {
                discard(body).await;
            }
            None
        } else {
            let limit = usize::try_from(limit).unwrap_or(usize::MAX);
            match tokio::time::timeout(shared.limits.body_timeout, read_within(body, limit)).await {
                Ok(Ok(body)) => body,
                Ok(Err(e)) => {
                    return Ok(closing(error_response(
                        400,
                        &format!("the request body is malformed and was not read: {e}"),
                    )));
                }
                Err(_) => {
                    return Ok(closing(error_response(
                        408,
                        &format!(
                            "the request body did not arrive within {} s; send it in one go",
                            shared.limits.body_timeout.as_secs()
                        ),
                    )));
                }
            }
        }
    };
    // A value that is not visible ASCII still reaches the component (lossily), so that
    // it is refused for what it is (a malformed token, say) rather than read as absent.
    let headers = parts
        .headers
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
        .collect();
    let request = host::Request { method, path, query: parts.uri.query().unwrap_or("").to_owned(), headers, body };
    let (request, response) = if is_light(&request) {
        let response = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| shared.node.serve(&request)))
            .map_err(|_| anyhow::anyhow!("a component call panicked"))??;
        (request, response)
    } else {
        call(shared, move |node| {
            let response = node.serve(&request);
            response.map(|response| (request, response))
        })
        .await?
    };
    if let Some(log) = &response.log {
        eprintln!("ledger-node: {} {} -> {}: {log}", request.method, request.path, response.status);
    }
    let mut builder = hyper::Response::builder().status(response.status);
    for (name, value) in &response.headers {
        builder = builder.header(name, value);
    }
    Ok(builder.body(Full::new(Bytes::from(response.body)))?)
}

/// What makes a request's head ambiguous, which hyper lets through: more than one
/// `Host` header (RFC 9112 section 3.2 asks for a 400), or a transfer coding besides
/// `chunked` (hyper reads such a body as chunked whatever comes before it, where a
/// proxy in front may read it otherwise: the way to smuggle a request past it).
fn ambiguous_head(headers: &hyper::HeaderMap) -> Option<String> {
    let hosts = headers.get_all(hyper::header::HOST).iter().count();
    if hosts > 1 {
        return Some(format!("the request has {hosts} Host headers; send exactly one"));
    }
    let codings: Vec<String> = headers
        .get_all(hyper::header::TRANSFER_ENCODING)
        .iter()
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        .collect();
    let chunked_alone = codings.iter().flat_map(|value| value.split(',')).map(str::trim).collect::<Vec<_>>();
    if !codings.is_empty() && !matches!(chunked_alone.as_slice(), [only] if only.eq_ignore_ascii_case("chunked")) {
        return Some(format!(
            "Transfer-Encoding {:?} is not supported; send the body with Content-Length, or with \
             Transfer-Encoding: chunked alone",
            codings.join(", ")
        ));
    }
    None
}

/// Whether `request` is answered on the thread that read it rather than on the blocking
/// pool: a GET (or HEAD) without a body. Every such route answers from a bounded number
/// of store reads (the store-read budget tests hold each one to its count), in tens of
/// microseconds, which is less than handing the call to another thread and back costs;
/// the handoff halved the node's rate on them. A request with a body (an ingest, a
/// stream page, a wallet request, a choice context) can take milliseconds to seconds,
/// and goes to the pool.
fn is_light(request: &host::Request) -> bool {
    matches!(request.method.as_str(), "GET" | "HEAD") && request.body.as_ref().is_some_and(Vec::is_empty)
}

/// Runs `work` with the node on the blocking thread pool, once one of the
/// [`Limits::concurrent_calls`] is free.
async fn call<T: Send + 'static>(
    shared: &Shared,
    work: impl FnOnce(&host::Node) -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    let _permit = shared.calls.acquire().await?;
    let node = Arc::clone(&shared.node);
    tokio::task::spawn_blocking(move || work(&node))
        .await
        .map_err(|e| anyhow::anyhow!("a component call panicked: {e}"))?
}

/// Why a body could not be read.
type BodyError = hyper::Error;

/// The whole body if it is at most `limit` bytes; `None` (after discarding the rest)
/// if it is longer; an error if its framing is malformed.
async fn read_within(mut body: Incoming, limit: usize) -> Result<Option<Vec<u8>>, BodyError> {
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame?;
        if let Some(data) = frame.data_ref() {
            if bytes.len() + data.len() > limit {
                discard(body).await;
                return Ok(None);
            }
            bytes.extend_from_slice(data);
        }
    }
    Ok(Some(bytes))
}

/// Whether the request asks for `100 Continue` before it sends its body.
fn expects_continue(headers: &hyper::HeaderMap) -> bool {
    headers.get(hyper::header::EXPECT).is_some_and(|value| value.as_bytes().eq_ignore_ascii_case(b"100-continue"))
}

/// How much of a refused body the server reads and drops, and for how long, so that
/// a client still sending it gets to read the 413 instead of a reset connection.
const DISCARD_LIMIT: usize = 256 * 1024 * 1024;
const DISCARD_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// Reads and drops the rest of a refused body, within [`DISCARD_LIMIT`] and
/// [`DISCARD_TIME`]; past either, the connection is closed after the response.
async fn discard(mut body: Incoming) {
    let drain = async {
        let mut seen = 0usize;
        while let Some(Ok(frame)) = body.frame().await {
            seen += frame.data_ref().map_or(0, |d| d.len());
            if seen > DISCARD_LIMIT {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(DISCARD_TIME, drain).await;
}

/// `{"error": message}` with `status`.
fn error_response(status: u16, message: &str) -> HttpResponse {
    let body = serde_json::json!({ "error": message }).to_string();
    let mut response = hyper::Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    response
        .headers_mut()
        .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
    response
}

/// `response`, closing the connection after it: the request's body was not read to
/// its end, so the next request's start cannot be found.
fn closing(mut response: HttpResponse) -> HttpResponse {
    response.headers_mut().insert(hyper::header::CONNECTION, hyper::header::HeaderValue::from_static("close"));
    response
}
