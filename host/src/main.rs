//! The `ledger-node` command line: `serve` runs the node on its store (or memory)
//! through the WebAssembly component.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use ledger_node::backend::{Backend, MemoryBackend, Port};
use ledger_node::host::{self, Node, Options};
use ledger_node::lsm::LsmStore;
use ledger_node::{config, follow, ingest, scheduler, server};

/// A Canton-style ledger network node's public API.
#[derive(Debug, Parser)]
#[command(name = "ledger-node", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serves the API over HTTP, configured by the LEDGER_NODE_* environment variables.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: SocketAddr,
        /// Store directory (created if absent). Held by this process alone while it
        /// runs: ingest into it with POST /v0/admin/ingest.
        #[arg(long, conflicts_with = "memory", required_unless_present = "memory")]
        db: Option<PathBuf>,
        /// Keep the state in memory only (lost on exit).
        #[arg(long)]
        memory: bool,
        /// Run the scheduled jobs (expiring buy-traffic requests) every this many
        /// seconds; 0 turns the timer off (`POST /v0/admin/tick` still runs them).
        #[arg(long, default_value_t = 60)]
        tick_seconds: u64,
        /// Keep following this upstream node (`http://host:port`) while serving, as
        /// `follow` does (LEDGER_NODE_UPSTREAM_TOKEN: its admin token; this node needs
        /// LEDGER_NODE_ADMIN_TOKEN, through whose ingest the pages are applied).
        /// Repeat for several upstreams.
        #[arg(long)]
        upstream: Vec<String>,
        /// With several --upstream: how many must send the same content for it to be
        /// applied (default f + 1 of n, f = (n - 1) / 3 rounded down).
        #[arg(long)]
        agree: Option<u32>,
        /// With --upstream: caught up, ask the upstream again after this many seconds.
        #[arg(long, default_value_t = 5)]
        poll_seconds: u64,
        #[command(flatten)]
        following: FollowArgs,
        /// Serve `GET /metrics` (Prometheus) on this address, a listener of its own:
        /// the public port never serves the metrics. Unset: no metrics listener.
        #[arg(long)]
        metrics_listen: Option<SocketAddr>,
        /// Bytes of rendered update bodies kept in memory, shared by every request, so
        /// that a body read again is not rendered again; 0 turns the cache off.
        #[arg(long, env = config::BODY_CACHE_BYTES, default_value_t = ledger_node::bodies::DEFAULT_BYTES)]
        body_cache_bytes: u64,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Ingests an NDJSON history file (or `-` for standard input) into the store.
    Ingest {
        /// Store directory (created if absent); not one a running `serve` holds.
        #[arg(long)]
        db: PathBuf,
        /// The NDJSON file, or `-` for standard input.
        input: String,
    },
    /// Keeps the store current from an upstream node: reads its history stream and
    /// export endpoints (with LEDGER_NODE_UPSTREAM_TOKEN, the upstream's admin token)
    /// and applies them through ingest. Safe to stop at any moment: the next run resumes.
    Follow {
        /// The upstream node, `http://host:port` (its routes at the root); repeat for
        /// several upstreams. Without LEDGER_NODE_UPSTREAM_TOKEN only their public
        /// endpoints are used.
        #[arg(long, required = true)]
        upstream: Vec<String>,
        /// How many upstreams must send the same content for it to be applied
        /// (default f + 1 of n, f = (n - 1) / 3 rounded down).
        #[arg(long)]
        agree: Option<u32>,
        /// Store directory (created if absent); not one a running `serve` holds.
        #[arg(long)]
        db: PathBuf,
        /// Catch up, then exit 0.
        #[arg(long)]
        once: bool,
        /// Caught up, ask the upstream again after this many seconds.
        #[arg(long, default_value_t = 5)]
        poll_seconds: u64,
        /// Updates asked for per page (1 to 1000).
        #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..=1000))]
        page_size: u32,
        #[command(flatten)]
        following: FollowArgs,
    },
    /// Writes the WebAssembly component this binary runs (the node's whole API, the
    /// `node` world of its WIT) to stdout, for embedding in another host.
    Component,
    /// Writes a generated demo network history (NDJSON ingest records) to stdout,
    /// deterministic for a seed.
    Demo {
        /// Number of update records.
        #[arg(long, default_value_t = ledger_node::demo::DEFAULT_UPDATES)]
        updates: u64,
        /// Seed of the generator.
        #[arg(long, default_value_t = ledger_node::demo::DEFAULT_SEED)]
        seed: u64,
    },
}

/// Where a follower starts and how long it keeps what it learned (`follow`, and `serve`
/// with `--upstream`).
#[derive(Debug, Clone, clap::Args)]
struct FollowArgs {
    /// Where a follower that holds no update yet starts: `genesis`, every migration from
    /// the first; or `current`, the upstreams' current migration (its import updates,
    /// then its newest updates on), its history before backfilled afterwards
    /// (`GET /v0/backfilling/status` says `complete: false` until then). A follower that
    /// holds updates (a restart) goes on from where it was, whatever this says.
    #[arg(long, default_value = "genesis", value_parser = parse_start)]
    start: follow::Start,
    /// Public mode: how many seconds a party's hosting learned from the upstreams'
    /// `participant-id` is kept before it is asked again.
    #[arg(long = "hosting-lifetime", value_name = "SECONDS", default_value_t = ledger_node_core::follow::DEFAULT_HOSTING_LIFETIME_SECONDS)]
    hosting_lifetime_seconds: u64,
}

fn parse_start(text: &str) -> Result<follow::Start, String> {
    text.parse()
}

/// What one client may hold, and for how long (`serve`).
#[derive(Debug, clap::Args)]
struct LimitArgs {
    /// Seconds from a request's first byte (a new connection's accept) to the end
    /// of its head; then the connection is closed.
    #[arg(long, default_value_t = 10)]
    header_timeout_seconds: u64,
    /// Seconds from the end of a request's head to the end of its body; then 408.
    #[arg(long, default_value_t = 30)]
    body_timeout_seconds: u64,
    /// Seconds a keep-alive connection may wait for its next request, from the end of
    /// the last answer's writing.
    #[arg(long, default_value_t = 60)]
    idle_timeout_seconds: u64,
    /// Seconds an answer's writing may go without the client taking a byte; then the
    /// connection is closed.
    #[arg(long, default_value_t = 30)]
    write_timeout_seconds: u64,
    /// Connections open at once; at the cap a new client closes the longest-idle
    /// keep-alive connection (or waits to be accepted while none is idle). Lowered to
    /// what the open-file limit allows.
    #[arg(long, default_value_t = 10_000)]
    max_connections: usize,
    /// MiB of rendered answers held at once, waiting for their clients to read them;
    /// a request that finds no room within 10 s is answered 503 with Retry-After.
    #[arg(long, default_value_t = server::DEFAULT_RESPONSE_BUDGET as u64 / (1024 * 1024), value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    response_budget_mib: u64,
}

impl LimitArgs {
    fn limits(&self) -> server::Limits {
        use std::time::Duration;
        server::Limits {
            header_timeout: Duration::from_secs(self.header_timeout_seconds),
            body_timeout: Duration::from_secs(self.body_timeout_seconds),
            idle_timeout: Duration::from_secs(self.idle_timeout_seconds),
            write_timeout: Duration::from_secs(self.write_timeout_seconds),
            max_connections: server::open_file_budget(self.max_connections.max(1)),
            response_budget: usize::try_from(self.response_budget_mib * 1024 * 1024).unwrap_or(usize::MAX),
            ..server::Limits::default()
        }
    }
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    ledger_node::logs::init()?;
    match cli.command {
        Command::Serve {
            listen,
            db,
            memory,
            tick_seconds,
            upstream,
            agree,
            poll_seconds,
            following,
            metrics_listen,
            body_cache_bytes,
            limits,
        } => {
            let following = (!upstream.is_empty()).then(|| Following {
                upstreams: upstream,
                agree,
                poll: std::time::Duration::from_secs(poll_seconds),
                args: following,
            });
            let listeners = Listeners { public: listen, metrics: metrics_listen };
            let store = Storage { db, memory, body_cache_bytes };
            serve(listeners, store, tick_seconds, following, limits.limits())
        }
        Command::Ingest { db, input } => ingest(&db, &input),
        Command::Follow { upstream, agree, db, once, poll_seconds, page_size, following } => {
            let public = upstream_token().is_none();
            let poll = std::time::Duration::from_secs(poll_seconds);
            let options = follow::Options {
                page_size,
                once,
                poll,
                agree,
                public,
                start: following.start,
                hosting_lifetime_seconds: following.hosting_lifetime_seconds,
            };
            follow(&upstream, &db, &options)
        }
        Command::Demo { updates, seed } => demo(updates, seed),
        Command::Component => {
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            out.write_all(host::COMPONENT)?;
            Ok(out.flush()?)
        }
    }
}

/// What `serve --upstream` follows, and how.
struct Following {
    upstreams: Vec<String>,
    agree: Option<u32>,
    poll: std::time::Duration,
    args: FollowArgs,
}

/// The addresses `serve` listens on.
struct Listeners {
    /// The API's.
    public: SocketAddr,
    /// The metrics', if served.
    metrics: Option<SocketAddr>,
}

/// Where `serve` keeps the node's state, and how much of its rendered bodies it keeps
/// in memory.
struct Storage {
    /// The store directory, unless in memory.
    db: Option<PathBuf>,
    memory: bool,
    /// The body cache's bound (`--body-cache-bytes`).
    body_cache_bytes: u64,
}

fn serve(
    listeners: Listeners,
    Storage { db, memory, body_cache_bytes }: Storage,
    tick_seconds: u64,
    following: Option<Following>,
    limits: server::Limits,
) -> anyhow::Result<()> {
    let mut vars = config::from_environment()?;
    let started_at = ledger_node_core::model::config::STARTED_AT;
    if !vars.iter().any(|(name, _)| name == started_at) {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?;
        let now = ledger_node_core::model::time::Timestamp::from_micros(i64::try_from(now.as_micros())?)
            .map_err(|e| anyhow::anyhow!("the clock: {e}"))?;
        vars.push((started_at.to_owned(), now.to_string()));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let (listener, local) = runtime.block_on(server::bind(listeners.public))?;
    let metrics_listener = match listeners.metrics {
        Some(address) => Some(runtime.block_on(server::bind(address))?),
        None => None,
    };
    // The ports `GET /status` names, unless the operator names others (a proxy's).
    let ports = ledger_node_core::model::config::PORTS;
    if !vars.iter().any(|(name, _)| name == ports) {
        let mut named = format!("public={}", local.port());
        if let Some((_, metrics)) = &metrics_listener {
            named.push_str(&format!(",metrics={}", metrics.port()));
        }
        vars.push((ports.to_owned(), named));
    }
    let admin_token =
        vars.iter().find(|(name, _)| name == ledger_node_core::model::config::ADMIN_TOKEN).map(|(_, v)| v.clone());
    let upstreams = match &following {
        Some(Following { upstreams: urls, .. }) => {
            let token = upstream_token();
            Some(urls.iter().map(|url| follow::Upstream::new(url, token.clone())).collect::<Result<Vec<_>, _>>()?)
        }
        None => None,
    };
    let mut compaction = None;
    let backend = match (&db, memory) {
        (Some(path), _) => {
            let backend = LsmStore::open(path).map_err(|e| anyhow::anyhow!("opening {}: {e}", path.display()))?;
            compaction = Some(backend.compaction_source());
            check_layout(Arc::new(backend.with_body_cache(body_cache_bytes)), path.display(), &vars)?
        }
        (None, _) => {
            let backend = MemoryBackend::new().with_body_cache(body_cache_bytes);
            check_layout(Arc::new(backend), "the memory store", &vars)?
        }
    };
    let engine = host::engine()?;
    let node = Arc::new(Node::new(&engine, backend, Options { config: vars, fixed_clock: None })?);
    if let Some(path) = &db {
        node.metrics().set_store_dir(path);
    }
    if let Some(compaction) = compaction {
        node.metrics().set_compaction_source(compaction);
    }
    if let (Some(upstreams), Some(Following { agree, poll, args, .. })) = (upstreams, following) {
        let Some(token) = admin_token.filter(|t| !t.is_empty()) else {
            anyhow::bail!(
                "serve --upstream applies the upstream's pages through this node's admin ingest: set {}",
                ledger_node_core::model::config::ADMIN_TOKEN
            );
        };
        let local = follow::Local::new(Arc::clone(&node), token);
        let upstreams = upstreams.into_iter().map(|upstream| upstream.counted_in(Arc::clone(node.metrics()))).collect();
        let public = upstream_token().is_none();
        let options = follow::Options {
            page_size: follow::DEFAULT_PAGE_SIZE,
            once: false,
            poll,
            agree,
            public,
            start: args.start,
            hosting_lifetime_seconds: args.hosting_lifetime_seconds,
        };
        follow::spawn_serving(upstreams, local, &options)?;
    }
    runtime.block_on(async move {
        tracing::info!("serving on http://{local}");
        if let Some((metrics, local)) = metrics_listener {
            tracing::info!("serving metrics on http://{local}/metrics");
            tokio::spawn(server::serve_metrics(metrics, Arc::clone(&node), std::future::pending()));
        }
        if tick_seconds > 0 {
            tokio::spawn(scheduler::tick_every(Arc::clone(&node), std::time::Duration::from_secs(tick_seconds)));
        }
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!("shutting down");
        };
        server::serve(listener, node, limits, shutdown).await
    })
}

/// Progress of `ledger-node ingest`: a bar over the file's bytes, or a spinner for a
/// stream, both with the update rate.
struct Bar(indicatif::ProgressBar);

impl ingest::Progress for Bar {
    fn advance(&mut self, bytes: u64, totals: &ingest::Totals) {
        self.0.inc(bytes);
        let rate = ingest::rate(totals.updates(), self.0.elapsed());
        self.0.set_message(format!("{} updates, {rate:.0}/s", totals.updates()));
    }
}

/// A node over the store `db` for a bulk command, which speaks to the component as the
/// operator with an admin token of its own: the node and the token.
fn operator_node(command: &str, db: &std::path::Path) -> anyhow::Result<(Node, String)> {
    let mut vars = config::from_environment()?;
    let token = format!(
        "{command}-{:016x}",
        std::process::id() as u64
            ^ std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_nanos() as u64
    );
    vars.retain(|(name, _)| name != ledger_node_core::model::config::ADMIN_TOKEN);
    vars.push((ledger_node_core::model::config::ADMIN_TOKEN.to_owned(), token.clone()));
    let backend = LsmStore::open_bulk(db).map_err(|e| anyhow::anyhow!("opening {}: {e}", db.display()))?;
    let backend = check_layout(Arc::new(backend), db.display(), &vars)?;
    Ok((Node::new(&host::engine()?, backend, Options { config: vars, fixed_clock: None })?, token))
}

/// The store `backend` (named `what` in an error), once the core has checked its
/// layout version and names against the configuration `vars`: an empty store gets
/// this build's and the configured names, and a store of another layout or ingested
/// under other names stops the command with the core's message, which says what to do.
fn check_layout(
    backend: Arc<dyn Backend>,
    what: impl std::fmt::Display,
    vars: &[(String, String)],
) -> anyhow::Result<Arc<dyn Backend>> {
    let names = configured_names(vars)?;
    ledger_node_core::storage::exec::block_on(ledger_node_core::storage::layout::check(&Port(&*backend), &names))
        .map_err(|refused| anyhow::anyhow!("{what}: {refused}"))?;
    Ok(backend)
}

fn ingest(db: &std::path::Path, input: &str) -> anyhow::Result<()> {
    let (node, token) = operator_node("ingest", db)?;
    let started = std::time::Instant::now();
    let (reader, len): (Box<dyn std::io::BufRead>, Option<u64>) = if input == "-" {
        (Box::new(std::io::BufReader::with_capacity(1 << 20, std::io::stdin().lock())), None)
    } else {
        let file = std::fs::File::open(input).map_err(|e| anyhow::anyhow!("opening {input}: {e}"))?;
        let len = file.metadata().ok().map(|m| m.len());
        (Box::new(std::io::BufReader::with_capacity(1 << 20, file)), len)
    };
    let bar = match len {
        Some(len) => indicatif::ProgressBar::new(len).with_style(
            indicatif::ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {elapsed} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        ),
        None => indicatif::ProgressBar::new_spinner(),
    };
    let mut progress = Bar(bar);
    let totals = ingest::run(&node, &token, reader, &mut progress);
    progress.0.finish_and_clear();
    let totals = totals?;
    // Commits of a bulk load are synced here, before the run reports them.
    node.backend().sync().map_err(|e| anyhow::anyhow!("syncing {}: {e}", db.display()))?;
    tracing::info!(summary = %ingest::summary(&totals, started), "ingest finished");
    Ok(())
}

/// Progress of `ledger-node follow`: a spinner with the updates applied and the rate.
struct FollowBar(indicatif::ProgressBar);

impl follow::Progress for FollowBar {
    fn round(&mut self, totals: &ingest::Totals, report: &ledger_node_core::follow::Report) {
        let rate = ingest::rate(totals.updates(), self.0.elapsed());
        let at = report
            .position
            .as_ref()
            .map_or_else(String::new, |p| format!(", at migration {} {}", p.after_migration_id, p.after_record_time));
        let state = if report.caught_up { "caught up" } else { "catching up" };
        self.0.set_message(format!("{state}: {} updates, {rate:.0}/s{at}", totals.updates()));
        self.0.tick();
    }
}

/// The upstream's admin token, when one is set.
fn upstream_token() -> Option<String> {
    std::env::var(ledger_node_core::follow::UPSTREAM_TOKEN).ok().filter(|t| !t.is_empty())
}

fn follow(upstreams: &[String], db: &std::path::Path, options: &follow::Options) -> anyhow::Result<()> {
    let token = upstream_token();
    let upstreams =
        upstreams.iter().map(|url| follow::Upstream::new(url, token.clone())).collect::<Result<Vec<_>, _>>()?;
    let (node, token) = operator_node("follow", db)?;
    let local = follow::Local::new(Arc::new(node), token);
    let started = std::time::Instant::now();
    let mut bar = FollowBar(indicatif::ProgressBar::new_spinner());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let outcome = runtime.block_on(async {
        tokio::select! {
            outcome = follow::run(&upstreams, &local, options, &mut bar) => outcome.map(Some),
            _ = tokio::signal::ctrl_c() => Ok(None),
        }
    });
    bar.0.finish_and_clear();
    // Commits are synced here, as `ingest` does; an interrupted run keeps what it
    // committed, and the next run resumes from it.
    local.node().backend().sync().map_err(|e| anyhow::anyhow!("syncing {}: {e}", db.display()))?;
    match outcome? {
        Some(totals) => tracing::info!(summary = %follow::summary(&totals, started), "follow caught up"),
        None => tracing::info!("follow interrupted; the next run resumes where this one stopped"),
    }
    Ok(())
}

/// The names the configuration `vars` spells templates with (`LEDGER_NODE_NAMES_*`),
/// read by the core's parser of the configuration, which refuses a bad value by name.
fn configured_names(vars: &[(String, String)]) -> anyhow::Result<ledger_node_core::model::config::Names> {
    ledger_node_core::model::config::Config::from_pairs(
        vars.iter().map(|(name, value)| (name.as_str(), value.as_str())),
    )
    .map(|config| config.names)
    .map_err(|e| anyhow::anyhow!("{e}"))
}

fn demo(updates: u64, seed: u64) -> anyhow::Result<()> {
    let names = configured_names(&config::from_environment()?)?;
    let out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let options = ledger_node::demo::Options { updates, seed, names };
    match ledger_node::demo::write(&options, out) {
        Ok(s) => {
            tracing::info!(
                seed,
                updates = s.updates(),
                transactions = s.transactions,
                imports = s.imports,
                assignments = s.assignments,
                unassignments = s.unassignments,
                topology = s.topology,
                wallet_user = s.wallet_user,
                backfill = s.backfill,
                roll_forward_lsu = s.roll_forward_lsu,
                "demo history written"
            );
            Ok(())
        }
        // A reader that stops early (`ledger-node demo | head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn following(args: &[&str]) -> Result<FollowArgs, String> {
        let cli = Cli::try_parse_from(args).map_err(|e| e.to_string())?;
        match cli.command {
            Command::Follow { following, .. } | Command::Serve { following, .. } => Ok(following),
            other => Err(format!("not a following command: {other:?}")),
        }
    }

    #[test]
    fn follow_and_serve_take_the_start_and_the_hosting_lifetime_with_their_defaults() {
        for command in [
            &["ledger-node", "follow", "--upstream", "http://a", "--db", "x"][..],
            &["ledger-node", "serve", "--memory", "--upstream", "http://a"][..],
        ] {
            let defaults = following(command).expect("parsed");
            assert_eq!((defaults.start, defaults.hosting_lifetime_seconds), (follow::Start::Genesis, 300));
            let mut args = command.to_vec();
            args.extend(["--start", "current", "--hosting-lifetime", "60"]);
            let given = following(&args).expect("parsed");
            assert_eq!((given.start, given.hosting_lifetime_seconds), (follow::Start::Current, 60));
            let mut args = command.to_vec();
            args.extend(["--start", "now"]);
            let error = following(&args).expect_err("refused");
            assert!(error.contains("the start is `current` or `genesis`, not \"now\""), "{error}");
        }
    }

    fn body_cache_bytes(args: &[&str]) -> Result<u64, String> {
        match Cli::try_parse_from(args).map_err(|e| e.to_string())?.command {
            Command::Serve { body_cache_bytes, .. } => Ok(body_cache_bytes),
            other => Err(format!("not serve: {other:?}")),
        }
    }

    #[test]
    fn serve_takes_the_body_cache_bound_from_its_flag_or_the_environment_64_mib_unless_told() {
        use clap::CommandFactory as _;
        let serve = ["ledger-node", "serve", "--memory"];
        assert_eq!(body_cache_bytes(&serve), Ok(64 * 1024 * 1024));
        assert_eq!(body_cache_bytes(&[&serve[..], &["--body-cache-bytes", "0"]].concat()), Ok(0));
        let error = body_cache_bytes(&[&serve[..], &["--body-cache-bytes", "64MiB"]].concat()).expect_err("refused");
        assert!(error.contains("invalid value '64MiB' for '--body-cache-bytes <BODY_CACHE_BYTES>'"), "{error}");
        // The variable is read by clap (the metrics test starts a node with it set).
        let mut command = Cli::command();
        let serve = command.find_subcommand_mut("serve").expect("serve");
        let flag = serve.get_arguments().find(|a| a.get_id() == "body_cache_bytes").expect("the flag");
        assert_eq!(flag.get_env(), Some(std::ffi::OsStr::new("LEDGER_NODE_BODY_CACHE_BYTES")));
    }

    #[test]
    fn the_help_says_a_restarted_follower_goes_on_where_it_was() {
        use clap::CommandFactory as _;
        let mut command = Cli::command();
        let help = command.find_subcommand_mut("follow").expect("follow").render_long_help().to_string();
        assert!(help.contains("goes on from where it was, whatever this says"), "{help}");
        assert!(help.contains("--hosting-lifetime <SECONDS>"), "{help}");
    }
}
