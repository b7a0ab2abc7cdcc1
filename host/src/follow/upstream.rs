//! The upstream node, reached over HTTPS or HTTP: the follower's link to the node it
//! follows.
//!
//! - **TLS.** An `https://` upstream is verified against the Mozilla root certificates
//!   built into the binary (`webpki-roots`), plus the certificates of the PEM file named
//!   by [`Upstream::CA_FILE`] when it is set (a private CA). TLS is `rustls` with the
//!   `ring` provider, HTTP/1.1 over it. A certificate the roots do not vouch for is an
//!   error at once, naming the problem; it is never retried.
//! - **Retries.** The follower only reads from its upstream, so a request is safe to send
//!   again ([`RetryPolicy`]): a 429 waits as long as its `Retry-After` says (seconds or an
//!   HTTP date, at most [`RetryPolicy::max_wait`]), a 502, 503 or 504, a refused
//!   connection, a connection that broke and a request that took longer than
//!   [`REQUEST_TIMEOUT`] wait a backoff that doubles from [`RetryPolicy::first_backoff`]
//!   (a 503's own `Retry-After` is heeded too). After [`RetryPolicy::attempts`] attempts
//!   the request fails, naming the last cause. Every other answer, a 4xx included, is the
//!   upstream's and is returned as it is.
//! - **Logs and metrics.** Each retry is logged (`tracing`, `upstream request retried`)
//!   with the upstream's URL, never its token, and counted per upstream in the node's
//!   metrics when the link was given them ([`Upstream::counted_in`]).

use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, bail};
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use ledger_node_core::follow::Link;
use ledger_node_core::{Body, Request, Response};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use crate::metrics::Metrics;

/// How long one request to the upstream may take, connection included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest answer read from the upstream (a page holds at most 1,000 updates, or a
/// group of up to 10,000 that share a record time).
pub const MAX_ANSWER_BYTES: usize = 512 << 20;

/// How an [`Upstream`] retries a request that failed for a passing reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts at one request, the first included.
    pub attempts: u32,
    /// The wait before the second attempt; each later one doubles it.
    pub first_backoff: Duration,
    /// The longest backoff.
    pub max_backoff: Duration,
    /// The longest wait a `Retry-After` is granted: a longer one is cut to this.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    /// 8 attempts; backoffs of 0.5, 1, 2, 4, 8, 16 and 30 s (about a minute in all);
    /// a `Retry-After` of at most 5 minutes.
    fn default() -> Self {
        RetryPolicy {
            attempts: 8,
            first_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            max_wait: Duration::from_secs(300),
        }
    }
}

impl RetryPolicy {
    /// The backoff after the failed attempt `attempt` (1 for the first).
    fn backoff(&self, attempt: u32) -> Duration {
        let doubled = self.first_backoff.saturating_mul(1 << attempt.saturating_sub(1).min(20));
        doubled.min(self.max_backoff)
    }
}

/// An upstream node reached over HTTP or HTTPS.
#[derive(Debug)]
pub struct Upstream {
    /// The URL as the operator gave it, less a trailing `/`: what the logs and metrics
    /// name the upstream by.
    url: String,
    /// `host:port`, for the connection.
    address: String,
    /// The URL's authority, for the `Host` header.
    authority: String,
    /// The path the node's routes are under (`""` at the root).
    base: String,
    /// For `https://`: the TLS client and the name the certificate must carry.
    tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>,
    token: Option<String>,
    retry: RetryPolicy,
    metrics: Option<Arc<Metrics>>,
    connection: RefCell<Option<SendRequest<Full<Bytes>>>>,
}

/// Why an attempt failed: worth another attempt, or not.
#[derive(Debug)]
enum Failure {
    /// A passing fault; try again after `wait` if given, else after a backoff.
    Passing { cause: String, wait: Option<Duration>, rate_limited: bool },
    /// Another attempt would fail the same way.
    Final(String),
}

impl Failure {
    fn passing(cause: String) -> Failure {
        Failure::Passing { cause, wait: None, rate_limited: false }
    }
}

impl Upstream {
    /// The environment variable naming a PEM file of CA certificates that an `https://`
    /// upstream's certificate may also chain to (besides the built-in roots).
    pub const CA_FILE: &str = "LEDGER_NODE_UPSTREAM_CA_FILE";

    /// The node at `url` (`https://host[:port][/base]` or `http://...`), sending `token`
    /// if given, trusting the CA file of [`Upstream::CA_FILE`] when it is set.
    pub fn new(url: &str, token: Option<String>) -> anyhow::Result<Self> {
        let ca_file = std::env::var_os(Self::CA_FILE).filter(|v| !v.is_empty());
        Self::with_ca_file(url, token, ca_file.as_ref().map(Path::new))
    }

    /// The node at `url`, sending `token` if given, trusting the CA certificates of the
    /// PEM file `ca_file` besides the built-in roots.
    pub fn with_ca_file(url: &str, token: Option<String>, ca_file: Option<&Path>) -> anyhow::Result<Self> {
        let (https, rest) = if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else {
            bail!("the upstream URL {url:?} must start with https:// or http://");
        };
        let (authority, base) = rest.split_once('/').map_or((rest, ""), |(a, b)| (a, b));
        if authority.is_empty() {
            bail!("the upstream URL {url:?} names no host");
        }
        if authority.contains('@') {
            bail!(
                "the upstream URL must not carry credentials: give the token in {}",
                ledger_node_core::follow::UPSTREAM_TOKEN
            );
        }
        let (host, port) = split_authority(authority).with_context(|| format!("the upstream URL {url:?}"))?;
        let default_port = if https { 443 } else { 80 };
        let address = format!("{host}:{}", port.unwrap_or(default_port));
        let tls = if https {
            let name = ServerName::try_from(host.trim_start_matches('[').trim_end_matches(']').to_owned())
                .with_context(|| format!("the upstream URL {url:?} names no valid TLS server name"))?;
            Some((Arc::new(client_config(ca_file)?), name))
        } else {
            None
        };
        let base = base.trim_end_matches('/');
        let base = if base.is_empty() { String::new() } else { format!("/{base}") };
        Ok(Upstream {
            url: url.trim_end_matches('/').to_owned(),
            address,
            authority: authority.to_owned(),
            base,
            tls,
            token,
            retry: RetryPolicy::default(),
            metrics: None,
            connection: RefCell::new(None),
        })
    }

    /// This link, retrying as `policy` says.
    pub fn retrying(self, policy: RetryPolicy) -> Self {
        Upstream { retry: policy, ..self }
    }

    /// How this link retries ([`RetryPolicy::default`] unless [`Upstream::retrying`]
    /// said otherwise).
    pub fn retry_policy(&self) -> RetryPolicy {
        self.retry
    }

    /// This link, counting its retries and rate-limit waits in `metrics`.
    pub fn counted_in(self, metrics: Arc<Metrics>) -> Self {
        Upstream { metrics: Some(metrics), ..self }
    }

    /// The upstream's URL (never its token).
    pub fn url(&self) -> &str {
        &self.url
    }

    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, Failure> {
        let stream = TcpStream::connect(&self.address)
            .await
            .map_err(|e| Failure::passing(format!("cannot connect to {}: {e}", self.address)))?;
        let _ = stream.set_nodelay(true);
        let sender = match &self.tls {
            None => {
                let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                    .await
                    .map_err(|e| self.handshake_failure(e))?;
                tokio::spawn(connection);
                sender
            }
            Some((config, name)) => {
                let stream = TlsConnector::from(Arc::clone(config))
                    .connect(name.clone(), stream)
                    .await
                    .map_err(|e| self.tls_failure(e))?;
                let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                    .await
                    .map_err(|e| self.handshake_failure(e))?;
                tokio::spawn(connection);
                sender
            }
        };
        Ok(sender)
    }

    fn handshake_failure(&self, e: hyper::Error) -> Failure {
        Failure::passing(format!("the HTTP handshake with {} failed: {e}", self.address))
    }

    /// A failed TLS handshake: a certificate or protocol problem is final, a connection
    /// that broke during it is passing.
    fn tls_failure(&self, e: std::io::Error) -> Failure {
        let Some(tls) = e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) else {
            return Failure::passing(format!("the TLS handshake with {} broke off: {e}", self.address));
        };
        let hint = match tls {
            rustls::Error::InvalidCertificate(_) => format!(
                " (the upstream's certificate does not chain to a trusted root for {:?}; a private CA is trusted \
                 by naming its PEM file in {})",
                self.authority,
                Self::CA_FILE
            ),
            _ => String::new(),
        };
        Failure::Final(format!("the TLS handshake with {} failed: {tls}{hint}", self.address))
    }

    async fn send_once(&self, request: &Request) -> Result<Response, Failure> {
        let taken = self.connection.borrow_mut().take();
        let mut sender = match taken {
            Some(sender) if !sender.is_closed() => sender,
            _ => self.connect().await?,
        };
        sender.ready().await.map_err(|e| Failure::passing(format!("the connection to {} broke: {e}", self.address)))?;
        let body = match &request.body {
            Body::Complete(bytes) => bytes.clone(),
            Body::TooLarge => Vec::new(),
        };
        let mut builder = hyper::Request::builder()
            .method(request.method.as_str())
            .uri(match request.query.as_str() {
                "" => format!("{}{}", self.base, request.path),
                query => format!("{}{}?{query}", self.base, request.path),
            })
            .header(hyper::header::HOST, &self.authority);
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        if let Some(token) = &self.token {
            builder = builder.header(hyper::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let outgoing = builder
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| Failure::Final(format!("a malformed request: {e}")))?;
        let answer = sender
            .send_request(outgoing)
            .await
            .map_err(|e| Failure::passing(format!("no answer from {}: {e}", self.address)))?;
        let status = answer.status().as_u16();
        let retry_after =
            answer.headers().get(hyper::header::RETRY_AFTER).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let body = Limited::new(answer.into_body(), MAX_ANSWER_BYTES).collect().await.map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                Failure::Final(format!("the answer of {} is larger than {MAX_ANSWER_BYTES} bytes", self.address))
            } else {
                Failure::passing(format!("reading the answer of {} failed: {e}", self.address))
            }
        })?;
        *self.connection.borrow_mut() = Some(sender);
        let wait = retry_after.and_then(|value| parse_retry_after(&value, SystemTime::now()));
        match status {
            429 => Err(Failure::Passing {
                cause: format!("{} answered 429 Too Many Requests", self.address),
                wait: Some(wait.unwrap_or_else(|| self.retry.backoff(1))),
                rate_limited: true,
            }),
            502..=504 => Err(Failure::Passing {
                cause: format!("{} answered {status}", self.address),
                wait,
                rate_limited: false,
            }),
            _ => Ok(Response { status, headers: Vec::new(), body: body.to_bytes().to_vec(), log: None }),
        }
    }

    /// One attempt, bounded by [`REQUEST_TIMEOUT`].
    async fn attempt(&self, request: &Request) -> Result<Response, Failure> {
        match tokio::time::timeout(REQUEST_TIMEOUT, self.send_once(request)).await {
            Ok(answer) => answer,
            Err(_) => {
                // The connection may hold half an answer: never reuse it.
                self.connection.borrow_mut().take();
                Err(Failure::passing(format!("no answer from {} within {} s", self.address, REQUEST_TIMEOUT.as_secs())))
            }
        }
    }
}

impl Link for Upstream {
    async fn send(&self, request: Request) -> Result<Response, String> {
        let attempts = self.retry.attempts.max(1);
        let mut attempt = 1;
        loop {
            let (cause, wait, rate_limited) = match self.attempt(&request).await {
                Ok(answer) => return Ok(answer),
                Err(Failure::Final(cause)) => return Err(cause),
                Err(Failure::Passing { cause, wait, rate_limited }) => (cause, wait, rate_limited),
            };
            if attempt >= attempts {
                return Err(format!(
                    "gave up on the upstream {} after {attempts} attempts at {}: {cause}",
                    self.url, request.path
                ));
            }
            let wait = wait.map_or_else(|| self.retry.backoff(attempt), |wait| wait.min(self.retry.max_wait));
            tracing::warn!(
                upstream = %self.url,
                path = %request.path,
                attempt,
                wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                rate_limited,
                cause = %cause,
                "upstream request retried"
            );
            if let Some(metrics) = &self.metrics {
                metrics.upstream_retried(&self.url, rate_limited);
            }
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }
}

/// The TLS client: the built-in roots and the certificates of `ca_file`, the `ring`
/// provider, HTTP/1.1 announced by ALPN.
fn client_config(ca_file: Option<&Path>) -> anyhow::Result<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    if let Some(path) = ca_file {
        let what = || format!("{} names {}", Upstream::CA_FILE, path.display());
        let certificates = CertificateDer::pem_file_iter(path)
            .with_context(what)?
            .collect::<Result<Vec<_>, _>>()
            .with_context(what)?;
        if certificates.is_empty() {
            bail!("{}, which holds no PEM certificate", what());
        }
        for certificate in certificates {
            roots.add(certificate).with_context(|| format!("{}: a certificate in it is not usable", what()))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("the TLS provider")?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The host and the port (if given) of a URL's authority: `host`, `host:port`,
/// `[v6]`, `[v6]:port`.
fn split_authority(authority: &str) -> anyhow::Result<(&str, Option<u16>)> {
    let (host, port) = match authority.rfind(':') {
        Some(colon) if !authority[colon..].contains(']') => (&authority[..colon], Some(&authority[colon + 1..])),
        _ => (authority, None),
    };
    let port = match port {
        Some(port) => Some(port.parse::<u16>().map_err(|_| anyhow::anyhow!("the port {port:?} is not a port"))?),
        None => None,
    };
    if host.is_empty() {
        bail!("no host");
    }
    Ok((host, port))
}

/// How long a `Retry-After` value asks to wait at `now`: delay seconds, or an HTTP date
/// (a date past is no wait). `None` for a value that is neither.
fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_read_as_seconds_or_as_an_http_date() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        let cases: &[(&str, Option<u64>)] = &[
            ("1", Some(1)),
            (" 120 ", Some(120)),
            ("0", Some(0)),
            ("Wed, 21 Oct 2015 07:28:30 GMT", Some(30)),
            ("Wed, 21 Oct 2015 07:27:00 GMT", Some(0)),
            ("-1", None),
            ("1.5", None),
            ("soon", None),
            ("", None),
        ];
        for (value, expected) in cases {
            assert_eq!(parse_retry_after(value, now), expected.map(Duration::from_secs), "{value:?}");
        }
    }

    #[test]
    fn the_backoff_doubles_up_to_its_cap() {
        let policy = RetryPolicy::default();
        let waits: Vec<u64> = (1..=9).map(|attempt| policy.backoff(attempt).as_millis() as u64).collect();
        assert_eq!(waits, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    }

    #[test]
    fn urls_name_their_scheme_host_and_port_or_are_refused_by_what_is_wrong() {
        let plain = Upstream::with_ca_file("http://node.example/scan/", None, None).unwrap();
        assert_eq!(
            (plain.address.as_str(), plain.base.as_str(), plain.tls.is_none()),
            ("node.example:80", "/scan", true)
        );
        let tls = Upstream::with_ca_file("https://node.example", None, None).unwrap();
        assert_eq!(
            (tls.address.as_str(), tls.authority.as_str(), tls.tls.is_some()),
            ("node.example:443", "node.example", true)
        );
        let v6 = Upstream::with_ca_file("https://[::1]:8443/", None, None).unwrap();
        assert_eq!(v6.address, "[::1]:8443");
        for (url, named) in [
            ("ftp://node.example", "must start with https:// or http://"),
            ("https:///v2", "names no host"),
            ("https://user:secret@node.example", "must not carry credentials"),
            ("http://node.example:http", "is not a port"),
        ] {
            let refused = format!("{:#}", Upstream::with_ca_file(url, None, None).unwrap_err());
            assert!(refused.contains(named), "{url}: {refused}");
            assert!(!refused.contains("secret"), "{refused}");
        }
    }

    #[test]
    fn a_ca_file_without_certificates_is_refused_naming_the_variable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, "not a certificate\n").unwrap();
        let refused = format!("{:#}", Upstream::with_ca_file("https://node.example", None, Some(&path)).unwrap_err());
        assert!(refused.contains(Upstream::CA_FILE) && refused.contains("no PEM certificate"), "{refused}");
        let missing = dir.path().join("missing.pem");
        let refused =
            format!("{:#}", Upstream::with_ca_file("https://node.example", None, Some(&missing)).unwrap_err());
        assert!(refused.contains(Upstream::CA_FILE) && refused.contains("missing.pem"), "{refused}");
    }
}
