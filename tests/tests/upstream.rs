//! The follower's link to its upstream (`ledger_node::follow::Upstream`): HTTPS with
//! the built-in roots or a private CA, plain HTTP, and the retry rules (a 429 waits its
//! `Retry-After`, passing failures are retried a bounded number of times, any other
//! answer is returned as it is). The servers are scripted: each answers its Nth
//! request as the test says.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use ledger_node::follow::Upstream;
use ledger_node_core::follow::Link as _;
use ledger_node_core::{Method, Request};
use ledger_node_tests::tls::{self, Answer, TestCa};

/// `upstream` with fast retries: `attempts` attempts, 10 ms apart, a `Retry-After` cut
/// to `max_wait`.
fn quick(upstream: Upstream, attempts: u32, max_wait: Duration) -> Upstream {
    let mut policy = upstream.retry_policy();
    policy.attempts = attempts;
    policy.first_backoff = Duration::from_millis(10);
    policy.max_backoff = Duration::from_millis(10);
    policy.max_wait = max_wait;
    upstream.retrying(policy)
}

/// An HTTPS server on loopback whose Nth request (from 1) is answered `script(n)`; the
/// CA that signed it, its URL and the count of requests it received.
async fn scripted(
    dir: &std::path::Path,
    script: impl Fn(u32) -> Answer + Send + Sync + 'static,
) -> (TestCa, String, Arc<AtomicU32>) {
    let ca = TestCa::generate(dir).expect("a test CA");
    let (listener, address) = tls::bind().await.expect("a port");
    let count = Arc::new(AtomicU32::new(0));
    let (counter, script) = (Arc::clone(&count), Arc::new(script));
    tokio::spawn(tls::serve(listener, ca.acceptor(), move |_| {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        let answer = script(n);
        async move { answer }
    }));
    (ca, format!("https://localhost:{}", address.port()), count)
}

fn ok() -> Answer {
    tls::answer(200, &[("content-type", "application/json")], r#"{"version":"test"}"#)
}

fn get(path: &str) -> Request {
    Request::new(Method::Get, path)
}

#[tokio::test]
async fn an_https_upstream_signed_by_the_ca_file_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, url, count) = scripted(dir.path(), |_| ok()).await;
    let upstream = Upstream::with_ca_file(&url, None, Some(ca.ca_file())).expect("an upstream");
    let answer = upstream.send(get("/version")).await.expect("an answer over TLS");
    assert_eq!((answer.status, answer.body.as_slice()), (200, br#"{"version":"test"}"#.as_slice()));
    // The connection is kept: a second request goes over it.
    let again = upstream.send(get("/version")).await.expect("a second answer");
    assert_eq!(again.status, 200);
    assert_eq!(count.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_https_upstream_no_trusted_root_vouches_for_is_refused_naming_the_certificate_problem() {
    let dir = tempfile::tempdir().unwrap();
    let (_ca, url, count) = scripted(dir.path(), |_| ok()).await;
    let upstream = Upstream::with_ca_file(&url, None, None).expect("an upstream");
    let refused = upstream.send(get("/version")).await.expect_err("an untrusted certificate");
    assert!(refused.contains("invalid peer certificate") && refused.contains("UnknownIssuer"), "{refused}");
    assert!(refused.contains(Upstream::CA_FILE), "{refused}");
    assert!(!refused.contains("gave up"), "a certificate problem is not retried: {refused}");
    assert_eq!(count.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_429_waits_its_retry_after_then_the_request_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, url, count) = scripted(dir.path(), |n| match n {
        1 => tls::answer(429, &[("retry-after", "1")], "Too Many Requests"),
        _ => ok(),
    })
    .await;
    let metrics = Arc::new(ledger_node::metrics::Metrics::new());
    let upstream =
        Upstream::with_ca_file(&url, None, Some(ca.ca_file())).expect("an upstream").counted_in(Arc::clone(&metrics));
    let started = Instant::now();
    let answer = upstream.send(get("/version")).await.expect("an answer after the wait");
    assert_eq!(answer.status, 200);
    assert_eq!(count.load(Ordering::SeqCst), 2);
    assert!(started.elapsed() >= Duration::from_secs(1), "the Retry-After of 1 s was waited");
    let text = metrics.render();
    let labels = format!(r#"{{upstream="{url}"}}"#);
    assert!(text.contains(&format!("ledger_node_follow_upstream_rate_limited_total{labels} 1")), "{text}");
    assert!(text.contains(&format!("ledger_node_follow_upstream_retries_total{labels} 1")), "{text}");
}

#[tokio::test]
async fn a_retry_after_past_the_longest_wait_is_cut_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, url, count) = scripted(dir.path(), |n| match n {
        1 => tls::answer(429, &[("retry-after", "86400")], ""),
        _ => ok(),
    })
    .await;
    let upstream = Upstream::with_ca_file(&url, None, Some(ca.ca_file())).expect("an upstream");
    let upstream = quick(upstream, 3, Duration::from_millis(50));
    let answer = tokio::time::timeout(Duration::from_secs(10), upstream.send(get("/version")))
        .await
        .expect("a wait cut to 50 ms")
        .expect("an answer");
    assert_eq!((answer.status, count.load(Ordering::SeqCst)), (200, 2));
}

#[tokio::test]
async fn passing_failures_are_retried_a_bounded_number_of_times_then_given_up_naming_the_last_cause() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, url, count) = scripted(dir.path(), |_| tls::answer(503, &[], "busy")).await;
    let upstream =
        quick(Upstream::with_ca_file(&url, None, Some(ca.ca_file())).expect("an upstream"), 3, Duration::from_secs(5));
    let failed = upstream.send(get("/v2/updates")).await.expect_err("503 every time");
    assert!(failed.contains(&format!("gave up on the upstream {url} after 3 attempts at /v2/updates")), "{failed}");
    assert!(failed.contains("answered 503"), "{failed}");
    assert_eq!(count.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_bad_gateway_then_an_answer_is_one_retry() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, url, count) = scripted(dir.path(), |n| match n {
        1 => tls::answer(502, &[], ""),
        2 => tls::answer(504, &[], ""),
        _ => ok(),
    })
    .await;
    let upstream =
        quick(Upstream::with_ca_file(&url, None, Some(ca.ca_file())).expect("an upstream"), 3, Duration::from_secs(5));
    let answer = upstream.send(get("/version")).await.expect("an answer on the third attempt");
    assert_eq!((answer.status, count.load(Ordering::SeqCst)), (200, 3));
}

#[tokio::test]
async fn a_4xx_other_than_429_is_returned_as_it_is_without_a_retry() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, url, count) = scripted(dir.path(), |_| tls::answer(404, &[], r#"{"error":"no update abc"}"#)).await;
    let upstream =
        quick(Upstream::with_ca_file(&url, None, Some(ca.ca_file())).expect("an upstream"), 3, Duration::from_secs(5));
    let answer = upstream.send(get("/v2/updates/abc")).await.expect("the upstream's answer");
    assert_eq!((answer.status, answer.body.as_slice()), (404, br#"{"error":"no update abc"}"#.as_slice()));
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_given_up() {
    // A port nobody listens on: bound, then released.
    let (listener, address) = tls::bind().await.expect("a port");
    drop(listener);
    let url = format!("http://{address}");
    let upstream = quick(Upstream::with_ca_file(&url, None, None).expect("an upstream"), 2, Duration::from_secs(5));
    let failed = upstream.send(get("/version")).await.expect_err("nobody listens");
    assert!(failed.contains("after 2 attempts") && failed.contains("cannot connect"), "{failed}");
}

#[tokio::test]
async fn a_plain_http_upstream_still_answers_with_its_path_base_and_query() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let address = listener.local_addr().expect("its address");
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.expect("a client");
        let service = hyper::service::service_fn(|request: hyper::Request<hyper::body::Incoming>| async move {
            let seen = request.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default();
            Ok::<_, std::convert::Infallible>(tls::answer(200, &[], seen))
        });
        let io = hyper_util::rt::TokioIo::new(stream);
        let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
    });
    let upstream = Upstream::with_ca_file(&format!("http://{address}/api/scan/"), None, None).expect("an upstream");
    let answer = upstream.send(get("/v2/updates/abc?daml_value_encoding=protobuf_json")).await.expect("an answer");
    assert_eq!(String::from_utf8_lossy(&answer.body), "/api/scan/v2/updates/abc?daml_value_encoding=protobuf_json");
}
