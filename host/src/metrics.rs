//! What the native node is doing, as Prometheus metrics (`prometheus-client`), served
//! by `ledger-node serve --metrics-listen` on a listener of its own
//! ([`crate::server::serve_metrics`]), never on the public port.
//!
//! One [`Metrics`] belongs to each [`crate::host::Node`]; every part of the host that
//! does something records it there: the server (requests, connections), the runner
//! (instances), ingest, the follower and the scheduled jobs. The store's size on disk,
//! its compactions, the body cache's figures (`bodies.rs`) and the process's memory
//! are read when the metrics are scraped.
//!
//! Requests are labelled by their route template
//! ([`ledger_node_core::api::route::template`]), never by their path, so an id in a
//! path never becomes a label value and the number of series stays bounded.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;

use ledger_node_core::follow::Report;
use ledger_node_core::ingest::Summary;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

/// The media type of [`Metrics::render`]: the Prometheus text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The labels of a request counted.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The method, or `other` for one the node does not answer to anywhere.
    pub method: &'static str,
    /// The route template, or `other`.
    pub route: String,
    /// The answer's status code.
    pub status: u16,
}

/// The labels of a request's duration.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    /// The route template, or `other`.
    pub route: String,
}

/// The labels of ingest records applied.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    /// The record's kind, as ingest names it (`update`, `topology`, ...).
    pub kind: &'static str,
}

/// The labels of a connection the node closed.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CutLabels {
    /// `head`: its request head did not arrive within the header timeout; `write`: its
    /// client took no bytes of an answer within the write timeout.
    pub reason: &'static str,
}

/// What the store's compactions have done so far, read when the metrics are scraped.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Compaction {
    /// Compactions finished.
    pub completed: u64,
    /// Compactions running now.
    pub active: u64,
    /// Time spent compacting, in seconds.
    pub seconds: f64,
}

/// Where figures read at each scrape come from (the store's compactions, the body
/// cache), once the node has set it.
struct Source<T>(std::sync::Mutex<Option<Box<dyn Fn() -> T + Send + Sync>>>);

impl<T> Source<T> {
    fn new() -> Self {
        Source(std::sync::Mutex::new(None))
    }

    fn set(&self, read: impl Fn() -> T + Send + Sync + 'static) {
        if let Ok(mut source) = self.0.lock() {
            *source = Some(Box::new(read));
        }
    }

    /// Reads the figures and hands them to `record`, under the source's lock, so two
    /// scrapes at once record one after the other; nothing before the source is set.
    fn record(&self, record: impl FnOnce(T)) {
        if let Ok(source) = self.0.lock()
            && let Some(read) = source.as_ref()
        {
            record(read());
        }
    }
}

impl<T> std::fmt::Debug for Source<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Source")
    }
}

/// The labels of a follower's upstream.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct UpstreamLabels {
    /// The upstream's URL as configured (never a token).
    pub upstream: String,
}

/// A gauge of seconds, or of a Unix time.
type Seconds = Gauge<f64, AtomicU64>;

/// The node's metrics (module docs).
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    durations: Family<RouteLabels, Histogram>,
    connections_open: Gauge,
    connections_evicted: Counter,
    connections_waited: Counter,
    connections_accept_failed: Counter,
    connections_cut: Family<CutLabels, Counter>,
    instances_idle: Gauge,
    instances_idle_memory: Gauge,
    instances_busy: Gauge,
    instances_dropped: Counter,
    ingest_updates: Counter,
    ingest_batches: Counter,
    ingest_refused: Counter,
    ingest_records: Family<KindLabels, Counter>,
    follow_rounds: Counter,
    follow_failures: Counter,
    follow_pages: Counter,
    follow_updates: Counter,
    follow_last_success: Seconds,
    follow_last_caught_up: Seconds,
    follow_lag: Seconds,
    follow_disagreements: Family<UpstreamLabels, Counter>,
    follow_position: Seconds,
    upstream_retries: Family<UpstreamLabels, Counter>,
    upstream_rate_limited: Family<UpstreamLabels, Counter>,
    jobs_runs: Counter,
    jobs_failures: Counter,
    jobs_skipped: Counter,
    wallet_expired: Counter,
    wallet_pending: Gauge,
    store_bytes: Gauge,
    memory_resident: Gauge,
    memory_anonymous: Gauge,
    compactions: Gauge,
    compactions_active: Gauge,
    compaction_time: Seconds,
    /// Where the store's compaction figures come from, if the store compacts.
    compaction: Source<Compaction>,
    /// The store directory whose size is reported, if the node has one.
    store_dir: std::sync::Mutex<Option<PathBuf>>,
    body_cache_hits: Counter,
    body_cache_misses: Counter,
    body_cache_bytes: Gauge,
    body_cache_limit: Gauge,
    /// Where the body cache's figures come from, once the node has set it.
    body_cache: Source<crate::bodies::Stats>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Every metric at zero, registered under the `ledger_node` prefix.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("ledger_node");
        let durations = Family::<RouteLabels, Histogram>::new_with_constructor(|| {
            // 100 µs to about 26 s.
            Histogram::new(exponential_buckets(0.0001, 4.0, 10))
        });
        let metrics = Metrics {
            registry: Registry::default(),
            requests: Family::default(),
            durations,
            connections_open: Gauge::default(),
            connections_evicted: Counter::default(),
            connections_waited: Counter::default(),
            connections_accept_failed: Counter::default(),
            connections_cut: Family::default(),
            instances_idle: Gauge::default(),
            instances_idle_memory: Gauge::default(),
            instances_busy: Gauge::default(),
            instances_dropped: Counter::default(),
            ingest_updates: Counter::default(),
            ingest_batches: Counter::default(),
            ingest_refused: Counter::default(),
            ingest_records: Family::default(),
            follow_rounds: Counter::default(),
            follow_failures: Counter::default(),
            follow_pages: Counter::default(),
            follow_updates: Counter::default(),
            follow_last_success: Seconds::default(),
            follow_last_caught_up: Seconds::default(),
            follow_lag: Seconds::default(),
            follow_disagreements: Family::default(),
            follow_position: Seconds::default(),
            upstream_retries: Family::default(),
            upstream_rate_limited: Family::default(),
            jobs_runs: Counter::default(),
            jobs_failures: Counter::default(),
            jobs_skipped: Counter::default(),
            wallet_expired: Counter::default(),
            wallet_pending: Gauge::default(),
            store_bytes: Gauge::default(),
            memory_resident: Gauge::default(),
            memory_anonymous: Gauge::default(),
            compactions: Gauge::default(),
            compactions_active: Gauge::default(),
            compaction_time: Seconds::default(),
            compaction: Source::new(),
            store_dir: std::sync::Mutex::new(None),
            body_cache_hits: Counter::default(),
            body_cache_misses: Counter::default(),
            body_cache_bytes: Gauge::default(),
            body_cache_limit: Gauge::default(),
            body_cache: Source::new(),
        };
        let m = &metrics;
        let r = &mut registry;
        r.register("http_requests", "HTTP requests answered, by method, route template and status", m.requests.clone());
        r.register_with_unit(
            "http_request_duration",
            "Time from a request's head to its answer's head, by route template",
            Unit::Seconds,
            m.durations.clone(),
        );
        r.register("connections_open", "Client connections open", m.connections_open.clone());
        r.register(
            "connections_evicted",
            "Idle keep-alive connections closed at the connection cap to make room for a new client",
            m.connections_evicted.clone(),
        );
        r.register(
            "connections_waited",
            "New clients that found the connection cap reached and waited to be accepted",
            m.connections_waited.clone(),
        );
        r.register(
            "connections_accept_failures",
            "Accepts that failed, so a client was not taken (out of file descriptors or memory); the node backs off",
            m.connections_accept_failed.clone(),
        );
        r.register(
            "connections_cut",
            "Connections the node closed: a request head late past the header timeout (head), an answer its client did not take within the write timeout (write)",
            m.connections_cut.clone(),
        );
        r.register("instances_idle", "Component instances idle in the pool", m.instances_idle.clone());
        r.register_with_unit(
            "instances_idle_memory",
            "Linear memory the idle component instances hold together",
            Unit::Bytes,
            m.instances_idle_memory.clone(),
        );
        r.register("instances_busy", "Component instances serving a request", m.instances_busy.clone());
        r.register(
            "instances_dropped",
            "Component instances dropped after a request because their memory grew past the pooling limit or the pool had no room for them",
            m.instances_dropped.clone(),
        );
        r.register("ingest_updates", "Updates applied by ingest batches", m.ingest_updates.clone());
        r.register("ingest_batches", "Ingest batches applied", m.ingest_batches.clone());
        r.register(
            "ingest_refused_batches",
            "Ingest batches refused (nothing of them applied)",
            m.ingest_refused.clone(),
        );
        r.register("ingest_records", "Ingest records applied, by kind", m.ingest_records.clone());
        r.register("follow_rounds", "Follower rounds that ended without an error", m.follow_rounds.clone());
        r.register(
            "follow_failures",
            "Follower rounds that failed (retried after the poll interval)",
            m.follow_failures.clone(),
        );
        r.register("follow_pages", "Pages of updates the follower applied", m.follow_pages.clone());
        r.register("follow_updates", "Updates the follower applied", m.follow_updates.clone());
        r.register_with_unit(
            "follow_last_success_timestamp",
            "Unix time of the follower's last round without an error (0: none yet)",
            Unit::Seconds,
            m.follow_last_success.clone(),
        );
        r.register_with_unit(
            "follow_last_caught_up_timestamp",
            "Unix time at which the follower last reached the upstream's end (0: not yet)",
            Unit::Seconds,
            m.follow_last_caught_up.clone(),
        );
        r.register_with_unit(
            "follow_lag",
            "Seconds of record time between the newest update the upstreams' stream held when last asked and the newest this node holds",
            Unit::Seconds,
            m.follow_lag.clone(),
        );
        r.register(
            "follow_disagreements",
            "Answers of an upstream that differed from the one enough upstreams agreed on",
            m.follow_disagreements.clone(),
        );
        r.register_with_unit(
            "follow_position_record_time",
            "Record time (Unix time) of the newest update this node holds from its upstream (0: none yet)",
            Unit::Seconds,
            m.follow_position.clone(),
        );
        r.register(
            "follow_upstream_retries",
            "Requests to an upstream sent again after a passing failure or a 429, by upstream",
            m.upstream_retries.clone(),
        );
        r.register(
            "follow_upstream_rate_limited",
            "429 answers of an upstream that the follower waited out, by upstream",
            m.upstream_rate_limited.clone(),
        );
        r.register("scheduled_job_runs", "Runs of the scheduled jobs that ended", m.jobs_runs.clone());
        r.register(
            "scheduled_job_failures",
            "Runs of the scheduled jobs that failed as a whole",
            m.jobs_failures.clone(),
        );
        r.register(
            "scheduled_job_skipped_records",
            "Records the scheduled jobs could not read and skipped",
            m.jobs_skipped.clone(),
        );
        r.register(
            "wallet_expired_requests",
            "Buy-traffic requests the scheduled jobs expired",
            m.wallet_expired.clone(),
        );
        r.register(
            "wallet_pending_requests",
            "Buy-traffic requests awaiting the validator after the last run of the scheduled jobs",
            m.wallet_pending.clone(),
        );
        r.register_with_unit(
            "store_disk",
            "Size on disk of the store directory (0 for a memory store)",
            Unit::Bytes,
            m.store_bytes.clone(),
        );
        r.register_with_unit(
            "process_resident_memory",
            "Resident memory of the process (VmRSS)",
            Unit::Bytes,
            m.memory_resident.clone(),
        );
        r.register_with_unit(
            "process_anonymous_memory",
            "Resident anonymous memory of the process (RssAnon): the heap and the instances' linear memories",
            Unit::Bytes,
            m.memory_anonymous.clone(),
        );
        r.register(
            "store_compactions",
            "Compactions the store finished since the process started (0 for a memory store)",
            m.compactions.clone(),
        );
        r.register("store_compactions_active", "Compactions of the store running now", m.compactions_active.clone());
        r.register_with_unit(
            "store_compaction_time",
            "Time the store spent compacting since the process started",
            Unit::Seconds,
            m.compaction_time.clone(),
        );
        r.register(
            "body_cache_hits",
            "Recalls of a rendered body the body cache answered with a value",
            m.body_cache_hits.clone(),
        );
        r.register(
            "body_cache_misses",
            "Recalls of a rendered body the body cache answered with nothing",
            m.body_cache_misses.clone(),
        );
        r.register_with_unit(
            "body_cache",
            "Bytes of keys and values the body cache holds",
            Unit::Bytes,
            m.body_cache_bytes.clone(),
        );
        r.register_with_unit(
            "body_cache_limit",
            "The body cache's bound (--body-cache-bytes; 0: off)",
            Unit::Bytes,
            m.body_cache_limit.clone(),
        );
        Metrics { registry, ..metrics }
    }

    /// Reports the body cache's figures as `source` reads them.
    pub fn set_body_cache_source(&self, source: impl Fn() -> crate::bodies::Stats + Send + Sync + 'static) {
        self.body_cache.set(source);
    }

    /// Reads the body cache's figures into its metrics. Its counts only grow, and the
    /// counters are brought up to them under the source's lock, so two scrapes at once
    /// count nothing twice.
    fn read_body_cache(&self) {
        self.body_cache.record(|stats| {
            self.body_cache_hits.inc_by(stats.hits.saturating_sub(self.body_cache_hits.get()));
            self.body_cache_misses.inc_by(stats.misses.saturating_sub(self.body_cache_misses.get()));
            self.body_cache_bytes.set(i64::try_from(stats.bytes).unwrap_or(i64::MAX));
            self.body_cache_limit.set(i64::try_from(stats.bound).unwrap_or(i64::MAX));
        });
    }

    /// Reports the size of `dir` as the store's size on disk.
    pub fn set_store_dir(&self, dir: &Path) {
        if let Ok(mut store_dir) = self.store_dir.lock() {
            *store_dir = Some(dir.to_owned());
        }
    }

    /// Reports the store's compactions as `source` reads them.
    pub fn set_compaction_source(&self, source: impl Fn() -> Compaction + Send + Sync + 'static) {
        self.compaction.set(source);
    }

    /// The metrics in the Prometheus text format (version 0.0.4, [`CONTENT_TYPE`]),
    /// with the store's size and the process's memory read now.
    pub fn render(&self) -> String {
        let dir = self.store_dir.lock().ok().and_then(|dir| dir.clone());
        if let Some(dir) = dir {
            self.store_bytes.set(i64::try_from(directory_bytes(&dir)).unwrap_or(i64::MAX));
        }
        self.compaction.record(|compaction| {
            self.compactions.set(i64::try_from(compaction.completed).unwrap_or(i64::MAX));
            self.compactions_active.set(i64::try_from(compaction.active).unwrap_or(i64::MAX));
            self.compaction_time.set(compaction.seconds);
        });
        self.read_body_cache();
        if let Some((resident, anonymous)) = process_memory() {
            self.memory_resident.set(resident);
            self.memory_anonymous.set(anonymous);
        }
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut text, &self.registry);
        text
    }

    /// A request was answered `status` after `seconds`.
    pub fn request(&self, method: &'static str, route: &str, status: u16, seconds: f64) {
        self.requests.get_or_create(&RequestLabels { method, route: route.to_owned(), status }).inc();
        self.durations.get_or_create(&RouteLabels { route: route.to_owned() }).observe(seconds);
    }

    /// A connection opened; it is counted as open until the returned guard is dropped.
    pub fn connection(&self) -> OpenConnection<'_> {
        self.connections_open.inc();
        OpenConnection(&self.connections_open)
    }

    /// An idle connection was closed at the cap for a new client.
    pub fn connection_evicted(&self) {
        self.connections_evicted.inc();
    }

    /// A new client found the cap reached.
    pub fn connection_waited(&self) {
        self.connections_waited.inc();
    }

    /// The pool holds `idle` instances, with `bytes` of linear memory together.
    pub fn instances_idle(&self, idle: usize, bytes: usize) {
        self.instances_idle.set(i64::try_from(idle).unwrap_or(i64::MAX));
        self.instances_idle_memory.set(i64::try_from(bytes).unwrap_or(i64::MAX));
    }

    /// An instance is serving a request until the returned guard is dropped.
    pub fn instance_busy(&self) -> BusyInstance<'_> {
        self.instances_busy.inc();
        BusyInstance(&self.instances_busy)
    }

    /// An instance was dropped for its memory, or for want of room in the pool.
    pub fn instance_dropped(&self) {
        self.instances_dropped.inc();
    }

    /// An ingest batch was applied: what it applied.
    pub fn ingest_applied(&self, summary: &Summary) {
        self.ingest_batches.inc();
        self.ingest_updates.inc_by(summary.applied.update);
        let applied = &summary.applied;
        for (kind, count) in [
            ("update", applied.update),
            ("topology", applied.topology),
            ("backfill", applied.backfill),
            ("roll_forward_lsu", applied.roll_forward_lsu),
            ("wallet_user", applied.wallet_user),
            ("blob", applied.blob),
        ] {
            self.ingest_records.get_or_create(&KindLabels { kind }).inc_by(count);
        }
    }

    /// An accept failed.
    pub fn accept_failed(&self) {
        self.connections_accept_failed.inc();
    }

    /// The node closed a connection: its head was late (`head`) or its client took no
    /// bytes of an answer in time (`write`).
    pub fn connection_cut(&self, reason: &'static str) {
        self.connections_cut.get_or_create(&CutLabels { reason }).inc();
    }

    /// An ingest batch was refused.
    pub fn ingest_refused(&self) {
        self.ingest_refused.inc();
    }

    /// A follower round that asked `upstreams` (their URLs, in the order the report's
    /// disagreements index them) ended at Unix time `now` with `report`.
    pub fn follow_round(&self, report: &Report, upstreams: &[&str], now: f64) {
        self.follow_rounds.inc();
        self.follow_pages.inc_by(u64::from(report.pages));
        self.follow_updates.inc_by(report.summary.applied.update);
        self.follow_last_success.set(now);
        if report.caught_up {
            self.follow_last_caught_up.set(now);
        }
        let position = report.position.as_ref().and_then(|p| record_seconds(&p.after_record_time));
        if let Some(at) = position {
            self.follow_position.set(at);
        }
        if let (Some(newest), Some(at)) = (report.upstream_record_time.as_deref().and_then(record_seconds), position) {
            self.follow_lag.set((newest - at).max(0.0));
        }
        for index in report.disagreements.iter().flat_map(|d| &d.upstreams) {
            let upstream = upstreams.get(*index).map_or_else(|| format!("#{index}"), |url| (*url).to_owned());
            self.follow_disagreements.get_or_create(&UpstreamLabels { upstream }).inc();
        }
    }

    /// A follower round failed.
    pub fn follow_failed(&self) {
        self.follow_failures.inc();
    }

    /// A request to the upstream `url` is sent again; `rate_limited`: after a 429.
    pub fn upstream_retried(&self, url: &str, rate_limited: bool) {
        let labels = UpstreamLabels { upstream: url.to_owned() };
        self.upstream_retries.get_or_create(&labels).inc();
        if rate_limited {
            self.upstream_rate_limited.get_or_create(&labels).inc();
        }
    }

    /// The scheduled jobs ran: how many requests they expired and records they skipped.
    pub fn jobs_ran(&self, expired: u64, skipped: usize) {
        self.jobs_runs.inc();
        self.wallet_expired.inc_by(expired);
        self.jobs_skipped.inc_by(u64::try_from(skipped).unwrap_or(u64::MAX));
    }

    /// The scheduled jobs left `pending` buy-traffic requests awaiting the validator.
    pub fn wallet_pending(&self, pending: u64) {
        self.wallet_pending.set(i64::try_from(pending).unwrap_or(i64::MAX));
    }

    /// The scheduled jobs failed as a whole.
    pub fn jobs_failed(&self) {
        self.jobs_runs.inc();
        self.jobs_failures.inc();
    }
}

/// An open connection, counted until dropped.
#[derive(Debug)]
pub struct OpenConnection<'a>(&'a Gauge);

impl Drop for OpenConnection<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// A busy instance, counted until dropped.
#[derive(Debug)]
pub struct BusyInstance<'a>(&'a Gauge);

impl Drop for BusyInstance<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// The Unix time of a record time `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
fn record_seconds(text: &str) -> Option<f64> {
    let at = ledger_node_core::model::time::Timestamp::parse(text).ok()?;
    Some(at.micros() as f64 / 1e6)
}

/// The Unix time now, in seconds.
pub fn unix_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// Bytes of the files under `dir` (a file that vanishes while it is walked counts as
/// nothing: the store compacts as it runs).
fn directory_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(meta) if meta.is_dir() => pending.push(entry.path()),
                Ok(meta) => total += meta.len(),
                Err(_) => {}
            }
        }
    }
    total
}

/// The process's resident and resident anonymous memory, in bytes, from
/// `/proc/self/status` (Linux; `None` elsewhere).
fn process_memory() -> Option<(i64, i64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<i64> {
        let line = status.lines().find(|line| line.starts_with(name))?;
        let kib: i64 = line.get(name.len()..)?.trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kib * 1024)
    };
    Some((field("VmRSS:")?, field("RssAnon:")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_memory_is_read_from_proc() {
        let (resident, anonymous) = process_memory().expect("Linux has /proc/self/status");
        assert!(resident > 0 && anonymous > 0 && anonymous <= resident, "{resident} {anonymous}");
    }

    #[test]
    fn a_directory_counts_the_files_beneath_it() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir(dir.path().join("inner")).expect("a folder");
        std::fs::write(dir.path().join("a"), [0u8; 10]).expect("a file");
        std::fs::write(dir.path().join("inner/b"), [0u8; 32]).expect("a file");
        assert_eq!(directory_bytes(dir.path()), 42);
    }

    #[test]
    fn upstream_retries_and_rate_limit_waits_are_counted_by_upstream() {
        let metrics = Metrics::new();
        metrics.upstream_retried("https://scan.example", true);
        metrics.upstream_retried("https://scan.example", false);
        let text = metrics.render();
        assert!(
            text.contains(r#"ledger_node_follow_upstream_retries_total{upstream="https://scan.example"} 2"#),
            "{text}"
        );
        assert!(text.contains(r#"ledger_node_follow_upstream_rate_limited_total{upstream="https://scan.example"} 1"#));
    }

    #[test]
    fn the_body_cache_is_read_at_the_scrape_and_its_counters_count_each_recall_once() {
        let metrics = Metrics::new();
        let bodies = std::sync::Arc::new(crate::bodies::BodyCache::new(1 << 20));
        let source = std::sync::Arc::clone(&bodies);
        metrics.set_body_cache_source(move || source.stats());
        bodies.recall(b"k");
        bodies.remember(b"k", &[0; 936], bodies.generation());
        bodies.recall(b"k");
        let _ = metrics.render();
        bodies.recall(b"k");
        let text = metrics.render();
        for line in [
            "ledger_node_body_cache_hits_total 2",
            "ledger_node_body_cache_misses_total 1",
            "ledger_node_body_cache_bytes 1001",
            "ledger_node_body_cache_limit_bytes 1048576",
        ] {
            assert!(text.lines().any(|l| l == line), "{line}\n{text}");
        }
    }

    #[test]
    fn requests_are_counted_by_template_and_status() {
        let metrics = Metrics::new();
        metrics.request("GET", "/v2/updates/{update_id}", 404, 0.001);
        metrics.request("GET", "/v2/updates/{update_id}", 404, 0.002);
        let text = metrics.render();
        assert!(
            text.contains(
                r#"ledger_node_http_requests_total{method="GET",route="/v2/updates/{update_id}",status="404"} 2"#
            ),
            "{text}"
        );
        assert!(text.contains(r#"ledger_node_http_request_duration_seconds_count{route="/v2/updates/{update_id}"} 2"#));
    }

    #[test]
    fn cut_connections_are_counted_by_reason_and_compactions_read_at_the_scrape() {
        let metrics = Metrics::new();
        metrics.connection_cut("head");
        metrics.connection_cut("head");
        metrics.connection_cut("write");
        metrics.set_compaction_source(|| Compaction { completed: 7, active: 1, seconds: 2.5 });
        let text = metrics.render();
        for line in [
            r#"ledger_node_connections_cut_total{reason="head"} 2"#,
            r#"ledger_node_connections_cut_total{reason="write"} 1"#,
            "ledger_node_store_compactions 7",
            "ledger_node_store_compactions_active 1",
            "ledger_node_store_compaction_time_seconds 2.5",
        ] {
            assert!(text.lines().any(|l| l == line), "{line}\n{text}");
        }
    }
}
