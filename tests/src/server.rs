//! The HTTP/1.1 server of `ledger-node serve`: hyper on tokio, translating each request
//! for a fresh component instance and back. It decides nothing about the API.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::host::{self, Node};

/// Serves `node` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    node: Arc<Node>,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    eprintln!("ledger-node: accepting a connection failed: {e}");
                    continue;
                }
            },
            () = &mut shutdown => return Ok(()),
        };
        let _ = stream.set_nodelay(true);
        let node = Arc::clone(&node);
        tokio::spawn(async move {
            let service = service_fn(move |request| respond(Arc::clone(&node), request));
            if let Err(e) = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await
                && !e.is_incomplete_message()
            {
                eprintln!("ledger-node: connection error: {e}");
            }
        });
    }
}

/// Binds `addr`, reporting the address actually bound (port 0 picks a free port).
pub async fn bind(addr: SocketAddr) -> anyhow::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind(addr).await.map_err(|e| anyhow::anyhow!("binding {addr}: {e}"))?;
    let local = listener.local_addr()?;
    Ok((listener, local))
}

async fn respond(
    node: Arc<Node>,
    request: hyper::Request<Incoming>,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    Ok(match translate_and_handle(&node, request).await {
        Ok(response) => response,
        Err(e) => {
            eprintln!("ledger-node: serving a request failed: {e:#}");
            plain_error(500, "internal error; the operator has been told the cause")
        }
    })
}

async fn translate_and_handle(
    node: &Node,
    request: hyper::Request<Incoming>,
) -> anyhow::Result<hyper::Response<Full<Bytes>>> {
    let (parts, body) = request.into_parts();
    let mut instance = node.checkout()?;
    // A request without a body (most GETs) needs no limit: skip asking the component.
    let body = if hyper::body::Body::is_end_stream(&body) {
        Some(Vec::new())
    } else {
        let limit = instance.body_limit(parts.method.as_str(), parts.uri.path())?;
        let declared =
            parts.headers.get(hyper::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|len| len > limit) {
            discard(body).await;
            None
        } else {
            read_within(body, usize::try_from(limit).unwrap_or(usize::MAX)).await?
        }
    };
    let headers = parts
        .headers
        .iter()
        .filter_map(|(name, value)| Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned())))
        .collect();
    let request = host::Request {
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().unwrap_or("").to_owned(),
        headers,
        body,
    };
    let response = instance.serve(&request)?;
    // An instance that took a large body (an ingest batch) has grown its memory to
    // match; let it go rather than keep that memory in the pool.
    if request.body.as_ref().is_none_or(|body| body.len() <= REUSE_BODY_LIMIT) {
        node.checkin(instance);
    }
    if let Some(log) = &response.log {
        eprintln!("ledger-node: {} {} -> {}: {log}", request.method, request.path, response.status);
    }
    let mut builder = hyper::Response::builder().status(response.status);
    for (name, value) in &response.headers {
        builder = builder.header(name, value);
    }
    Ok(builder.body(Full::new(Bytes::from(response.body)))?)
}

/// Largest request body after which the instance that served it is reused.
const REUSE_BODY_LIMIT: usize = 1024 * 1024;

/// The whole body if it is at most `limit` bytes; `None` (after discarding the rest)
/// if it is longer.
async fn read_within(mut body: Incoming, limit: usize) -> anyhow::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| anyhow::anyhow!("reading the request body: {e}"))?;
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

fn plain_error(status: u16, message: &str) -> hyper::Response<Full<Bytes>> {
    let body = serde_json::json!({ "error": message }).to_string();
    let mut response = hyper::Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    response
        .headers_mut()
        .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
    response
}
