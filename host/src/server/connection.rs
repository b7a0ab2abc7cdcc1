//! One connection: hyper's HTTP/1.1 state machine over the socket, a watchdog for the
//! connection's timeouts, and the translation of each request for the component.
//!
//! The watchdog knows where the connection stands from two sources: the socket
//! wrapper ([`Watched`]) sees the first byte of a request arrive, bytes of an answer
//! leave, and the writer flush; the service sees a request's head complete, and its
//! answer's last piece handed to the writer. A connection is idle (waiting for a
//! further request), receiving a request's head (a new connection is, from its
//! accept), busy with a request, or writing an answer. Each but busy has a deadline,
//! and the connection is closed when one passes:
//!
//! - idle: [`Limits::idle_timeout`] from the end of the last answer's writing (its
//!   last byte taken by the socket), never while an answer is still being written;
//! - receiving a head: [`Limits::header_timeout`] from its first byte;
//! - writing: [`Limits::write_timeout`] from the last time the socket took bytes, so
//!   a client that reads slowly but steadily gets its whole answer however long that
//!   takes, and one that stops reading is cut off (and logged: the answer carries its
//!   `Content-Length`, so the client can tell it is short).
//!
//! A request that arrives while an answer is still being written (pipelined) waits
//! for it without a deadline of its own. A body that does not arrive in time is
//! answered with 408 by the service itself.
//!
//! At the connection cap the accept loop closes the longest-idle connection for a new
//! client ([`Registry::close_longest_idle`]): only one that is idle, between requests,
//! never one mid-request or mid-answer; it is then closed as the idle timeout would
//! close it.

use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use ledger_node_core::api::route::{Class, Route};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{Notify, OwnedSemaphorePermit};
use tokio::time::Instant;

use super::answer::{Answer, Held, PAGE_RESERVATION, SMALL_ANSWER};
use super::{Limits, Shared};
use crate::host;

/// Serves one connection until the client closes it or a deadline passes; `permit`
/// is the connection's place under the cap, given back when it ends.
pub(super) async fn serve(stream: TcpStream, shared: Arc<Shared>, permit: OwnedSemaphorePermit) {
    let limits = shared.limits;
    let metrics = Arc::clone(shared.node.metrics());
    let _open = metrics.connection();
    let activity = Arc::new(Activity::new());
    let _registered = shared.open.enter(Arc::clone(&activity));
    let io = TokioIo::new(Watched { inner: stream, activity: Arc::clone(&activity) });
    let service = {
        let activity = Arc::clone(&activity);
        let shared = Arc::clone(&shared);
        service_fn(move |request| {
            let (shared, activity) = (Arc::clone(&shared), Arc::clone(&activity));
            async move {
                activity.set(Phase::Busy);
                let response = respond(&shared, request).await;
                activity.set(Phase::Writing { progress: Instant::now(), handed_over: false });
                let response = response.map(|body| body.on_end(move || activity.handed_over()));
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
                tracing::debug!(cause = %e, "connection error");
            }
        }
        // Dropping the connection closes the socket.
        ended = activity.expired(&limits) => {
            match ended {
                Ended::Head => metrics.connection_cut("head"),
                Ended::Write => metrics.connection_cut("write"),
                Ended::Idle | Ended::Closed => {}
            }
            if ended == Ended::Write {
                tracing::warn!(
                    write_timeout_seconds = limits.write_timeout.as_secs_f64(),
                    "an answer was cut off: its client took no bytes within the write timeout"
                );
            }
        }
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
    /// Serving a request (reading its body, running it).
    Busy,
    /// Writing an answer: the socket last took bytes of it at `progress`, and
    /// `handed_over` once its last piece is with the writer (then the writer's flush
    /// ends it).
    Writing { progress: Instant, handed_over: bool },
    /// Closed, while idle, for a new client at the cap.
    Closed,
}

/// Why the watchdog closed a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    Idle,
    Head,
    Write,
    Closed,
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

    fn lock(&self) -> std::sync::MutexGuard<'_, Phase> {
        self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn phase(&self) -> Phase {
        *self.lock()
    }

    fn set(&self, phase: Phase) {
        let mut current = self.lock();
        if !matches!(*current, Phase::Closed) {
            *current = phase;
        }
        drop(current);
        self.changed.notify_one();
    }

    /// Bytes arrived: an idle connection is now receiving a request's head.
    fn received(&self) {
        let mut phase = self.lock();
        if let Phase::Idle(_) = *phase {
            *phase = Phase::Head(Instant::now());
            drop(phase);
            self.changed.notify_one();
        }
    }

    /// The socket took bytes of an answer. (A later deadline needs no wake-up: the
    /// watchdog looks again when the one it waits for passes.)
    fn wrote(&self) {
        if let Phase::Writing { progress, .. } = &mut *self.lock() {
            *progress = Instant::now();
        }
    }

    /// The answer's last piece is with the writer.
    fn handed_over(&self) {
        if let Phase::Writing { handed_over, .. } = &mut *self.lock() {
            *handed_over = true;
        }
    }

    /// The writer flushed: once the whole answer is out, the connection is idle.
    fn flushed(&self) {
        let mut phase = self.lock();
        if let Phase::Writing { handed_over: true, .. } = *phase {
            *phase = Phase::Idle(Instant::now());
            drop(phase);
            self.changed.notify_one();
        }
    }

    /// Since when the connection has been idle, if it is.
    fn idle_since(&self) -> Option<Instant> {
        match self.phase() {
            Phase::Idle(since) => Some(since),
            _ => None,
        }
    }

    /// Closes the connection if it is idle: whether it was.
    fn close_if_idle(&self) -> bool {
        let mut phase = self.lock();
        if let Phase::Idle(_) = *phase {
            *phase = Phase::Closed;
            drop(phase);
            self.changed.notify_one();
            return true;
        }
        false
    }

    /// Completes when a deadline of the connection's phase passes (module docs), or
    /// it was closed for a new client.
    async fn expired(&self, limits: &Limits) -> Ended {
        loop {
            let deadline = match self.phase() {
                Phase::Idle(since) => Some((since + limits.idle_timeout, Ended::Idle)),
                Phase::Head(since) => Some((since + limits.header_timeout, Ended::Head)),
                Phase::Writing { progress, .. } => Some((progress + limits.write_timeout, Ended::Write)),
                Phase::Busy => None,
                Phase::Closed => return Ended::Closed,
            };
            match deadline {
                Some((deadline, ended)) if Instant::now() >= deadline => return ended,
                Some((deadline, _)) => tokio::select! {
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

/// The open connections, so that the accept loop can close the longest-idle one for
/// a new client at the cap.
#[derive(Debug, Default)]
pub(super) struct Registry {
    open: Mutex<HashMap<u64, Arc<Activity>>>,
    next: AtomicU64,
}

/// A connection's place in the [`Registry`], left when dropped.
struct Entered<'a> {
    registry: &'a Registry,
    id: u64,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.id);
    }
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Activity>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn enter(&self, activity: Arc<Activity>) -> Entered<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id, activity);
        Entered { registry: self, id }
    }

    /// Closes the connection that has been idle longest, if one is idle: whether one
    /// was closed.
    pub(super) fn close_longest_idle(&self) -> bool {
        // A connection may stop being idle between the look and the close: then look again.
        for _ in 0..4 {
            let longest = self
                .lock()
                .values()
                .filter_map(|activity| Some((activity.idle_since()?, Arc::clone(activity))))
                .min_by_key(|(since, _)| *since);
            match longest {
                Some((_, activity)) if activity.close_if_idle() => return true,
                Some(_) => {}
                None => return false,
            }
        }
        false
    }
}

/// The socket, telling the connection's [`Activity`] when bytes arrive, when bytes
/// of an answer leave, and when the writer has flushed.
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
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.wrote();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.wrote();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    /// hyper flushes once its buffer is written out: after an answer's last piece,
    /// that is the end of the answer.
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        if matches!(polled, Poll::Ready(Ok(()))) {
            self.activity.flushed();
        }
        polled
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

type HttpResponse = hyper::Response<Answer>;

/// Answers one request; an internal failure is a masked 500 whose cause is logged.
/// Every request is counted in the node's metrics and logged on one line, by its
/// route template (never its path), with an id that the answer carries in
/// [`REQUEST_ID`].
async fn respond(shared: &Shared, request: hyper::Request<Incoming>) -> HttpResponse {
    let started = std::time::Instant::now();
    let id = request_id();
    let method = method_label(request.method());
    let route = ledger_node_core::api::route::template(request.uri().path(), &shared.coin)
        .map_or_else(|| "other".to_owned(), |template| template.to_string());
    let mut response = match translate_and_handle(shared, request, &id).await {
        Ok(response) => response,
        Err(e) => {
            tracing::error!(request_id = %id, cause = %format!("{e:#}"), "serving a request failed");
            error_response(500, "internal error; the operator has been told the cause")
        }
    };
    let status = response.status().as_u16();
    let seconds = started.elapsed().as_secs_f64();
    shared.node.metrics().request(method, &route, status, seconds);
    if let Ok(value) = hyper::header::HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    tracing::info!(request_id = %id, method, route = %route, status, duration_ms = seconds * 1000.0, "request");
    response
}

/// The response header that carries a request's id, as its log line does.
pub(super) const REQUEST_ID: &str = "x-request-id";

/// A fresh request id: 16 hex digits, from a counter hashed with this process's
/// random key, so that ids are unique in a run and do not repeat across runs.
fn request_id() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    static KEY: std::sync::OnceLock<std::hash::RandomState> = std::sync::OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut hasher = KEY.get_or_init(std::hash::RandomState::new).build_hasher();
    hasher.write_u64(NEXT.fetch_add(1, Ordering::Relaxed));
    format!("{:016x}", hasher.finish())
}

/// The method as a metrics label: one of the methods of HTTP/1.1, or `other`, so that
/// a client cannot make up label values.
fn method_label(method: &hyper::Method) -> &'static str {
    match *method {
        hyper::Method::GET => "GET",
        hyper::Method::HEAD => "HEAD",
        hyper::Method::POST => "POST",
        hyper::Method::PUT => "PUT",
        hyper::Method::DELETE => "DELETE",
        hyper::Method::PATCH => "PATCH",
        hyper::Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// The core's route of a request (with the default currency word, as
/// [`ledger_node_core::body_limit`] routes: the word spells only a GET path); `None` for
/// a path that does not route, which is answered at once, as interactive.
fn route(method: &str, path: &str) -> Option<Route> {
    let method = ledger_node_core::Method::parse(method);
    Route::parse(&method, path, ledger_node_core::model::config::DEFAULT_COIN).ok()
}

async fn translate_and_handle(
    shared: &Shared,
    request: hyper::Request<Incoming>,
    id: &str,
) -> anyhow::Result<HttpResponse> {
    let (parts, body) = request.into_parts();
    if let Some(problem) = ambiguous_head(&parts.headers) {
        // Its body is not read: the connection cannot go on after it.
        return Ok(closing(error_response(400, &problem)));
    }
    let method = parts.method.as_str().to_owned();
    let path = parts.uri.path().to_owned();
    let route = route(&method, &path);
    let class = route.as_ref().map_or(Class::Interactive, Route::class);
    // A request without a body (most GETs) has nothing to read.
    let body = if hyper::body::Body::is_end_stream(&body) {
        Some(Vec::new())
    } else {
        // The core's limit, from the core this host links (the embedded component is
        // built from the same one), so that a request with a body enters the component
        // once, to be answered.
        let limit = ledger_node_core::body_limit(&ledger_node_core::Method::parse(&method), &path);
        let declared =
            parts.headers.get(hyper::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|len| len > u64::try_from(limit).unwrap_or(u64::MAX)) {
            // A client that asked to be told before it sends the body has sent nothing
            // more: refuse it at once (hyper sends `100 Continue` only once the body is
            // read, and closes the connection after a body it did not read).
            if !expects_continue(&parts.headers) {
                discard(body).await;
            }
            None
        } else {
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
    let (response, held) = if is_light(&request, route.as_ref()) {
        let response = inline(|| shared.node.serve(&request))?;
        let Some(held) = hold_answer(shared, Held::none(&shared.budget), &response).await else {
            return Ok(busy(shared, &answers_held(shared)));
        };
        (response, held)
    } else {
        // The class's slot is held until the answer has its room in the budget, so
        // that at most one rendered answer per slot waits outside it.
        let (_slot, reserved) = match class {
            // A page waits for its slot and its reservation within one budget wait.
            Class::Bulk => {
                let deadline = tokio::time::Instant::now() + shared.budget.wait();
                let Ok(slot) = tokio::time::timeout_at(deadline, shared.calls(class).acquire()).await else {
                    return Ok(busy(
                        shared,
                        &format!(
                            "the node is serving as many pages as it can at once ({}) and none finished within {} s",
                            shared.limits.concurrent_calls.max(1),
                            shared.budget.wait().as_secs()
                        ),
                    ));
                };
                let mut reserved = Held::none(&shared.budget);
                if !shared.budget.grow_until(&mut reserved, PAGE_RESERVATION, deadline).await {
                    return Ok(busy(shared, &answers_held(shared)));
                }
                (slot?, reserved)
            }
            Class::Interactive => (shared.calls(class).acquire().await?, Held::none(&shared.budget)),
        };
        let node = Arc::clone(&shared.node);
        let response = tokio::task::spawn_blocking(move || node.serve(&request))
            .await
            .map_err(|e| anyhow::anyhow!("a component call panicked: {e}"))??;
        let Some(held) = hold_answer(shared, reserved, &response).await else {
            return Ok(busy(shared, &answers_held(shared)));
        };
        (response, held)
    };
    if let Some(log) = &response.log {
        tracing::warn!(request_id = %id, status = response.status, cause = %log, "the node reported a failure");
    }
    if route == Some(Route::AdminIngest) {
        count_ingest(shared, &response);
    }
    let mut builder = hyper::Response::builder().status(response.status);
    for (name, value) in &response.headers {
        builder = builder.header(name, value);
    }
    Ok(builder.body(Answer::new(response.body, held))?)
}

/// Counts an ingest batch's answer: what it applied, or that it was refused. A request
/// the node did not take as the operator's (401, 403) is no batch.
fn count_ingest(shared: &Shared, response: &host::Response) {
    let metrics = shared.node.metrics();
    match response.status {
        200 => match serde_json::from_slice::<crate::ingest::Totals>(&response.body) {
            Ok(summary) => {
                metrics.ingest_applied(&summary);
                tracing::info!(updates = summary.applied.update, unchanged = summary.unchanged, "ingest batch applied");
            }
            Err(e) => tracing::warn!(cause = %e, "an ingest answer could not be read"),
        },
        401 | 403 => {}
        status => {
            metrics.ingest_refused();
            tracing::warn!(status, "ingest batch refused");
        }
    }
}

/// Runs `work` on this thread, a panic in it an error.
fn inline<T>(work: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .map_err(|_| anyhow::anyhow!("a component call panicked"))?
}

/// `held` made to hold what `response`'s body counts in the budget (nothing, for a
/// small one); `None` if the room was not free in time.
async fn hold_answer(shared: &Shared, mut held: Held, response: &host::Response) -> Option<Held> {
    let counted = if response.body.len() > SMALL_ANSWER { response.body.len() } else { 0 };
    shared.budget.grow(&mut held, counted).await.then_some(held)
}

/// Why a request found no room in the budget of answers.
fn answers_held(shared: &Shared) -> String {
    format!(
        "the node holds its limit of {} MiB of answers not yet taken by their clients",
        shared.budget.total() / (1024 * 1024)
    )
}

/// 503 for `why`: a request found no room in time; it may be retried after the wait.
fn busy(shared: &Shared, why: &str) -> HttpResponse {
    let mut response = error_response(503, &format!("{why}; retry shortly"));
    let retry = shared.budget.wait().as_secs().max(1);
    if let Ok(value) = hyper::header::HeaderValue::from_str(&retry.to_string()) {
        response.headers_mut().insert(hyper::header::RETRY_AFTER, value);
    }
    response
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
/// pool: a GET (or HEAD) without a body, or a call of a route that only reads a fixed
/// amount ([`Route::reads_a_fixed_amount`]: the scan reads, the registry's calls and
/// choice contexts) whose body was read whole. Every such route answers from a bounded
/// number of store reads (the store-read budget tests hold each one to its count), in
/// tens of microseconds, which is less than handing the call to another thread and back
/// costs; the handoff halved the node's rate on GETs, and on the registry's reject
/// context it took a sixth of the process's time in thread switches. Any other request
/// with a body (an ingest, a stream page, a wallet request) can write or take
/// milliseconds to seconds, and goes to the pool, in the slots of its route's [`Class`].
fn is_light(request: &host::Request, route: Option<&Route>) -> bool {
    let Some(body) = &request.body else { return false };
    (matches!(request.method.as_str(), "GET" | "HEAD") && body.is_empty())
        || route.is_some_and(Route::reads_a_fixed_amount)
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
    let mut response = hyper::Response::new(Answer::small(body));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn light(method: &str, path: &str, body: Option<&[u8]>) -> bool {
        let request = host::Request {
            method: method.into(),
            path: path.into(),
            query: String::new(),
            headers: Vec::new(),
            body: body.map(<[u8]>::to_vec),
        };
        is_light(&request, route(method, path).as_ref())
    }

    #[test]
    fn gets_and_fixed_reads_are_answered_inline_and_writes_and_pages_go_to_the_pool() {
        assert!(light("GET", "/v2/updates/00ab", Some(b"")));
        assert!(light("GET", "/no/such/route", Some(b"")));
        assert!(light("POST", "/registry/transfer-instruction/v2/00ab/choice-contexts/reject", Some(b"{}")));
        assert!(light("POST", "/api/scan/v0/open-and-issuing-mining-rounds", Some(b"{}")));
        assert!(!light("GET", "/v2/updates/00ab", Some(b"x")), "a GET with a body");
        assert!(
            !light("POST", "/registry/transfer-instruction/v1/transfer-factory", None),
            "a body refused as too long"
        );
        for path in ["/v0/wallet/buy-traffic-requests", "/v0/admin/ingest", "/v2/updates", "/v0/admin/reset"] {
            assert!(!light("POST", path, Some(b"{}")), "{path}");
        }
    }
}
