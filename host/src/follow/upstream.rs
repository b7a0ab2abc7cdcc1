//! The upstream node, reached over HTTP: the follower's link to the node it follows.

use std::cell::RefCell;
use std::time::Duration;

use anyhow::bail;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use ledger_node_core::follow::Link;
use ledger_node_core::{Body, Request, Response};
use tokio::net::TcpStream;

/// How long one request to the upstream may take, connection included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest answer read from the upstream (a page holds at most 1,000 updates, or a
/// group of up to 10,000 that share a record time).
pub const MAX_ANSWER_BYTES: usize = 512 << 20;
/// An upstream node reached over HTTP.
#[derive(Debug)]
pub struct Upstream {
    /// `host:port`, for the connection and the `Host` header.
    authority: String,
    /// The path the node's routes are under (`""` at the root).
    base: String,
    token: Option<String>,
    connection: RefCell<Option<SendRequest<Full<Bytes>>>>,
}

impl Upstream {
    /// The node at `url` (`http://host[:port][/base]`), sending `token` if given.
    pub fn new(url: &str, token: Option<String>) -> anyhow::Result<Self> {
        let Some(rest) = url.strip_prefix("http://") else {
            if url.starts_with("https://") {
                bail!(
                    "the upstream URL {url:?} is https; this build speaks plain HTTP to its upstream: \
                     follow a node on a private network, or through a local TLS-terminating proxy"
                );
            }
            bail!("the upstream URL {url:?} must start with http://");
        };
        let (authority, base) = rest.split_once('/').map_or((rest, ""), |(a, b)| (a, b));
        if authority.is_empty() {
            bail!("the upstream URL {url:?} names no host");
        }
        let authority = if authority.contains(':') { authority.to_owned() } else { format!("{authority}:80") };
        let base = base.trim_end_matches('/');
        let base = if base.is_empty() { String::new() } else { format!("/{base}") };
        Ok(Upstream { authority, base, token, connection: RefCell::new(None) })
    }

    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, String> {
        let stream = TcpStream::connect(&self.authority)
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", self.authority))?;
        let _ = stream.set_nodelay(true);
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("HTTP handshake with {} failed: {e}", self.authority))?;
        tokio::spawn(connection);
        Ok(sender)
    }

    async fn send_once(&self, request: &Request) -> Result<Response, String> {
        let taken = self.connection.borrow_mut().take();
        let mut sender = match taken {
            Some(sender) if !sender.is_closed() => sender,
            _ => self.connect().await?,
        };
        sender.ready().await.map_err(|e| format!("the connection to {} broke: {e}", self.authority))?;
        let body = match &request.body {
            Body::Complete(bytes) => bytes.clone(),
            Body::TooLarge => Vec::new(),
        };
        let mut builder = hyper::Request::builder()
            .method(request.method.as_str())
            .uri(format!("{}{}", self.base, request.path))
            .header(hyper::header::HOST, &self.authority);
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        if let Some(token) = &self.token {
            builder = builder.header(hyper::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let outgoing = builder.body(Full::new(Bytes::from(body))).map_err(|e| format!("a malformed request: {e}"))?;
        let answer =
            sender.send_request(outgoing).await.map_err(|e| format!("no answer from {}: {e}", self.authority))?;
        let status = answer.status().as_u16();
        let body = Limited::new(answer.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await
            .map_err(|e| format!("reading the answer of {} failed: {e}", self.authority))?
            .to_bytes();
        *self.connection.borrow_mut() = Some(sender);
        Ok(Response { status, headers: Vec::new(), body: body.to_vec(), log: None })
    }
}

impl Link for Upstream {
    async fn send(&self, request: Request) -> Result<Response, String> {
        match tokio::time::timeout(REQUEST_TIMEOUT, self.send_once(&request)).await {
            Ok(answer) => answer,
            Err(_) => {
                // The connection may hold half an answer: never reuse it.
                self.connection.borrow_mut().take();
                Err(format!("no answer from {} within {} s", self.authority, REQUEST_TIMEOUT.as_secs()))
            }
        }
    }
}
