//! TLS for tests: a certificate authority made when a test starts (never stored), a
//! server certificate it signs for `localhost` and `127.0.0.1`, an HTTPS server over
//! any request handler, and a bare HTTPS client that shows an answer as it came
//! (status, headers and body; no retries).

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore, ServerConfig};
use tokio_rustls::{TlsAcceptor, TlsConnector};

/// A test certificate authority and a server certificate it signed.
#[derive(Debug)]
pub struct TestCa {
    /// The CA certificate, PEM, as written to [`TestCa::ca_file`].
    pub ca_pem: String,
    ca_der: CertificateDer<'static>,
    ca_file: PathBuf,
    server: Arc<ServerConfig>,
}

impl TestCa {
    /// A new CA and server certificate (ECDSA P-256); the CA certificate is written to
    /// `dir/ca.pem`. The private keys stay in memory.
    pub fn generate(dir: &Path) -> anyhow::Result<TestCa> {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
        let ca_key = KeyPair::generate()?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        // A name of its own, so that another test CA is a stranger to this one's
        // certificates (not an issuer of the same name whose signature fails).
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_nanos();
        ca_params.distinguished_name.push(DnType::CommonName, format!("ledger-node test CA {nanos:x}"));
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_cert = ca_params.self_signed(&ca_key)?;
        let issuer = Issuer::new(ca_params, ca_key);
        let server_key = KeyPair::generate()?;
        let mut server_params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])?;
        server_params.distinguished_name.push(DnType::CommonName, "localhost");
        let server_cert = server_params.signed_by(&server_key, &issuer)?;
        let ca_file = dir.join("ca.pem");
        std::fs::write(&ca_file, ca_cert.pem())?;
        let chain = vec![server_cert.der().clone(), ca_cert.der().clone()];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der()));
        let mut server = ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(chain, key)?;
        server.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TestCa { ca_pem: ca_cert.pem(), ca_der: ca_cert.der().clone(), ca_file, server: Arc::new(server) })
    }

    /// The PEM file holding the CA certificate.
    pub fn ca_file(&self) -> &Path {
        &self.ca_file
    }

    /// The server side of TLS, with the certificate for `localhost` and `127.0.0.1`.
    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(Arc::clone(&self.server))
    }

    /// A client that trusts this CA alone.
    pub fn connector(&self) -> anyhow::Result<TlsConnector> {
        let mut roots = RootCertStore::empty();
        roots.add(self.ca_der.clone())?;
        let config = ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(TlsConnector::from(Arc::new(config)))
    }
}

/// A full request as a handler sees it.
#[derive(Debug, Clone)]
pub struct Received {
    /// The method.
    pub method: hyper::Method,
    /// The path and query.
    pub uri: hyper::Uri,
    /// The headers.
    pub headers: hyper::HeaderMap,
    /// The body.
    pub body: Bytes,
}

/// An answer: status, headers, body.
pub type Answer = hyper::Response<Full<Bytes>>;

/// Serves HTTPS on `listener` with `acceptor`, each request answered by `handler`, until
/// the task is dropped. A handshake that fails closes that connection only.
pub async fn serve<H, F>(listener: TcpListener, acceptor: TlsAcceptor, handler: H)
where
    H: Fn(Received) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Answer> + Send + 'static,
{
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let (acceptor, handler) = (acceptor.clone(), handler.clone());
        tokio::spawn(async move {
            let Ok(stream) = acceptor.accept(stream).await else { return };
            let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                let handler = handler.clone();
                async move {
                    let (head, body) = request.into_parts();
                    let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                    let received = Received { method: head.method, uri: head.uri, headers: head.headers, body };
                    Ok::<_, Infallible>(handler(received).await)
                }
            });
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

/// Binds a listener on a loopback port the kernel picks.
pub async fn bind() -> anyhow::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    Ok((listener, address))
}

/// An answer of `status` with `headers` and `body`.
pub fn answer(status: u16, headers: &[(&str, &str)], body: impl Into<Bytes>) -> Answer {
    let mut builder = hyper::Response::builder().status(status);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    // A status and headers given as literals by the tests are valid.
    builder.body(Full::new(body.into())).expect("a valid answer")
}

/// One request over a new TLS connection to `address` (checked as `localhost`) with
/// `connector`: the answer's status, headers and body, as they came.
pub async fn request(
    connector: &TlsConnector,
    address: SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> anyhow::Result<(u16, hyper::HeaderMap, String)> {
    let stream = TcpStream::connect(address).await?;
    let stream = connector.connect(ServerName::try_from("localhost")?, stream).await?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let outgoing = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header(hyper::header::HOST, format!("localhost:{}", address.port()))
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body.to_owned())))?;
    let answer = sender.send_request(outgoing).await?;
    let (head, body) = answer.into_parts();
    let body = body.collect().await?.to_bytes();
    Ok((head.status.as_u16(), head.headers, String::from_utf8_lossy(&body).into_owned()))
}
