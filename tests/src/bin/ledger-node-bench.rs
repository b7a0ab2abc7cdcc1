//! The benchmark tools: a loopback HTTP load generator, and the "ceiling" server (the
//! same hyper stack as `ledger-node serve`, answering a fixed body) to compare against.
//! `scripts/bench` drives both; see BENCHMARKS.md.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::{Parser, Subcommand};
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

#[derive(Debug, Parser)]
#[command(name = "ledger-node-bench")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serves a fixed JSON body on every path: the ceiling of the HTTP stack.
    Ceiling {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8090")]
        listen: SocketAddr,
        /// Size of the body in bytes, to compare with endpoints whose answers are that
        /// large; a small `/version`-like body when not given.
        #[arg(long)]
        body_bytes: Option<usize>,
    },
    /// Drives load at a server and prints one JSON line: requests/s, p50, p99.
    Load {
        /// Base URL, `http://127.0.0.1:PORT`.
        #[arg(long)]
        url: String,
        /// Paths to request, picked at random per request; one per line in this file.
        #[arg(long, conflicts_with = "path")]
        paths: Option<std::path::PathBuf>,
        /// A single path to request.
        #[arg(long)]
        path: Option<String>,
        /// Method.
        #[arg(long, default_value = "GET")]
        method: String,
        /// Request body (for POST).
        #[arg(long, default_value = "", conflicts_with = "bodies")]
        body: String,
        /// Request bodies, picked at random per request; one per line in this file.
        #[arg(long)]
        bodies: Option<std::path::PathBuf>,
        /// Concurrent connections.
        #[arg(long, default_value_t = 32)]
        connections: usize,
        /// Seconds to run (after one second of warm-up).
        #[arg(long, default_value_t = 10)]
        seconds: u64,
        /// A label for the output line.
        #[arg(long, default_value = "")]
        label: String,
    },
    /// Runs the core's ingest natively (no component) over a file, in the batches that
    /// `ledger-node ingest` sends, and prints updates/s: the core's own ingest cost, to
    /// profile with `perf record`.
    CoreIngest {
        /// The NDJSON history (as `ledger-node demo` writes it).
        file: std::path::PathBuf,
        /// A store directory to ingest into; memory when not given.
        #[arg(long)]
        db: Option<std::path::PathBuf>,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    match cli.command {
        Command::Ceiling { listen, body_bytes } => runtime.block_on(ceiling(listen, ceiling_body(body_bytes))),
        Command::Load { url, paths, path, method, body, bodies, connections, seconds, label } => {
            let paths = match (paths, path) {
                (Some(file), _) => {
                    std::fs::read_to_string(&file)?.lines().map(str::to_owned).filter(|l| !l.is_empty()).collect()
                }
                (None, Some(path)) => vec![path],
                (None, None) => anyhow::bail!("give --path or --paths"),
            };
            anyhow::ensure!(!paths.is_empty(), "no paths to request");
            let bodies = match bodies {
                Some(file) => {
                    std::fs::read_to_string(&file)?.lines().map(str::to_owned).filter(|l| !l.is_empty()).collect()
                }
                None => vec![body],
            };
            anyhow::ensure!(!bodies.is_empty(), "no bodies to send");
            runtime.block_on(load(Load { url, paths, method, bodies, connections, seconds, label }))
        }
        Command::CoreIngest { file, db } => core_ingest(&file, db.as_deref()),
    }
}

#[expect(clippy::print_stdout, reason = "the result line is the tool's output")]
fn core_ingest(file: &std::path::Path, db: Option<&std::path::Path>) -> anyhow::Result<()> {
    use ledger_node::backend::{Backend, MemoryBackend, Port};
    use ledger_node::ingest::{BATCH_BYTES, BATCH_LINES};
    use ledger_node::lsm::LsmStore;
    use ledger_node_core::{Config, ingest::ingest, storage::exec::block_on};
    let backend: Box<dyn Backend> = match db {
        Some(path) => Box::new(LsmStore::open(path).map_err(|e| anyhow::anyhow!("{e:?}"))?),
        None => Box::new(MemoryBackend::new()),
    };
    let store = Port(&*backend);
    // As `ledger-node ingest` does: a store of another layout is refused, a new one stamped.
    let config = Config::default();
    block_on(ledger_node_core::storage::layout::check(&store, &config.names))
        .map_err(|refused| anyhow::anyhow!("{refused}"))?;
    let text = std::fs::read(file)?;
    let started = Instant::now();
    let mut updates = 0u64;
    let mut rest = text.as_slice();
    while !rest.is_empty() {
        // Whole lines, at most BATCH_LINES of them or about BATCH_BYTES.
        let mut end = 0;
        for _ in 0..BATCH_LINES {
            match rest[end..].iter().position(|b| *b == b'\n') {
                Some(at) => end += at + 1,
                None => end = rest.len(),
            }
            if end >= rest.len() || end >= BATCH_BYTES {
                break;
            }
        }
        let (batch, tail) = rest.split_at(end);
        rest = tail;
        let summary = block_on(ingest(batch, &store, &config)).map_err(|e| anyhow::anyhow!("{e:?}"))?;
        updates += summary.updates();
    }
    let seconds = started.elapsed().as_secs_f64();
    println!("{{\"updates\":{updates},\"seconds\":{seconds:.3},\"updates_per_s\":{:.0}}}", updates as f64 / seconds);
    Ok(())
}

/// The ceiling's body: a JSON object of `bytes` bytes, or a `/version`-like one.
fn ceiling_body(bytes: Option<usize>) -> Bytes {
    const SMALL: &[u8] = br#"{"version":"0.1.0","commit_ts":"2026-01-01T00:00:00.000000Z"}"#;
    match bytes {
        None => Bytes::from_static(SMALL),
        Some(n) => {
            let padding = n.saturating_sub(r#"{"padding":""}"#.len());
            Bytes::from(format!(r#"{{"padding":"{}"}}"#, "x".repeat(padding)))
        }
    }
}

async fn ceiling(listen: SocketAddr, body: Bytes) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(listen).await?;
    eprintln!("ceiling: serving on http://{}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let body = body.clone();
        tokio::spawn(async move {
            let service = service_fn(move |_request| {
                let body = body.clone();
                async move {
                    let mut response = hyper::Response::new(Full::new(body));
                    response.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static("application/json"),
                    );
                    Ok::<_, Infallible>(response)
                }
            });
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

struct Load {
    url: String,
    paths: Vec<String>,
    method: String,
    bodies: Vec<String>,
    connections: usize,
    seconds: u64,
    label: String,
}

#[expect(clippy::print_stdout, reason = "the result line is the tool's output, read by scripts/bench")]
async fn load(load: Load) -> anyhow::Result<()> {
    let authority = load.url.strip_prefix("http://").unwrap_or(&load.url).trim_end_matches('/').to_owned();
    let load = std::sync::Arc::new(load);
    let warm_up = Instant::now() + Duration::from_secs(1);
    let deadline = warm_up + Duration::from_secs(load.seconds);
    let mut tasks = Vec::new();
    for task in 0..load.connections {
        let load = std::sync::Arc::clone(&load);
        let authority = authority.clone();
        tasks.push(tokio::spawn(async move { connection(&load, &authority, task as u64, warm_up, deadline).await }));
    }
    let mut latencies: Vec<u32> = Vec::new();
    let mut errors = 0u64;
    for task in tasks {
        let (mut l, e) = task.await??;
        latencies.append(&mut l);
        errors += e;
    }
    latencies.sort_unstable();
    let percentile = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    let line = serde_json::json!({
        "label": load.label,
        "requests": latencies.len(),
        "errors": errors,
        "rps": latencies.len() as f64 / load.seconds as f64,
        "p50_ms": f64::from(percentile(0.50)) / 1000.0,
        "p99_ms": f64::from(percentile(0.99)) / 1000.0,
    });
    println!("{line}");
    Ok(())
}

/// One connection's loop: latencies (µs) of successful requests after warm-up, errors.
async fn connection(
    load: &Load,
    authority: &str,
    seed: u64,
    warm_up: Instant,
    deadline: Instant,
) -> anyhow::Result<(Vec<u32>, u64)> {
    let stream = tokio::net::TcpStream::connect(authority).await?;
    stream.set_nodelay(true)?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut latencies = Vec::with_capacity(100_000);
    let mut errors = 0;
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Ok((latencies, errors));
        }
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let path = &load.paths[(rng % load.paths.len() as u64) as usize];
        let body = &load.bodies[((rng >> 32) % load.bodies.len() as u64) as usize];
        let request = hyper::Request::builder()
            .method(load.method.as_str())
            .uri(path.as_str())
            .header(hyper::header::HOST, authority)
            .body(Full::new(Bytes::from(body.clone())))?;
        sender.ready().await?;
        let response = sender.send_request(request).await?;
        let ok = response.status().is_success();
        response.into_body().collect().await?;
        let elapsed = now.elapsed();
        if now >= warm_up {
            if ok {
                latencies.push(u32::try_from(elapsed.as_micros()).unwrap_or(u32::MAX));
            } else {
                errors += 1;
            }
        }
    }
}
