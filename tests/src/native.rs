//! `ledger-node serve` run as a process, as an operator runs it: [`Serve`] builds its
//! command line, [`NativeNode`] is the running node, with the base URL its log
//! announced, its metrics URL when it serves metrics, and every line of its standard
//! error as written.
//!
//! A node serves on a loopback port the kernel picks (`--listen 127.0.0.1:0`); it is
//! started when its log says where it serves (and, with [`Serve::metrics`], where its
//! metrics are). It is killed (SIGKILL) when dropped, and also when the test process
//! ends without dropping it (a node a suite shares through a `static`, which Rust never
//! drops, or a test process that crashed): the node runs under a small `sh` watchdog
//! ([`WATCHDOG`]) that kills it once its standard input, a pipe from the test process,
//! closes.

use std::ffi::{OsStr, OsString};
use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Every line `stream` yields, as it yields them: a thread appends them to the log
/// returned until the stream ends.
pub fn collect_lines(stream: impl std::io::Read + Send + 'static) -> Arc<Mutex<Vec<String>>> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let writer = Arc::clone(&log);
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            writer.lock().unwrap_or_else(PoisonError::into_inner).push(line);
        }
    });
    log
}

/// How long a node may take to announce where it serves.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The watchdog the node runs under (`sh -c WATCHDOG sh ledger-node serve ...`): it
/// starts the node (its standard input empty, its standard error the watchdog's), kills
/// it with SIGKILL once the watchdog's standard input reaches its end, and exits with
/// the node's status when the node exits by itself.
///
/// (A background command of a non-interactive shell reads `/dev/null`, so the watcher
/// reads the watchdog's standard input through descriptor 3.)
pub const WATCHDOG: &str = r#"exec 3<&0
"$@" </dev/null 3<&- & node=$!
(cat <&3 >/dev/null; kill -KILL "$node" 2>/dev/null) &
exec 3<&-
wait "$node""#;

/// The command line of a `ledger-node serve`, built up; [`Serve::start`] runs it.
#[derive(Debug)]
pub struct Serve {
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    tick_seconds: u32,
    metrics: bool,
}

impl Serve {
    /// `ledger-node serve` over the store at `db`, on a loopback port, with its
    /// scheduled jobs off and no `LEDGER_NODE_*` variable of the test's environment.
    pub fn new(db: &Path) -> Serve {
        let args = ["serve", "--listen", "127.0.0.1:0", "--db"].map(OsString::from);
        Serve {
            args: [&args[..], &[db.as_os_str().to_owned()]].concat(),
            envs: Vec::new(),
            tick_seconds: 0,
            metrics: false,
        }
    }

    /// Runs the scheduled jobs every `seconds` (0: never, the default).
    pub fn tick_seconds(mut self, seconds: u32) -> Serve {
        self.tick_seconds = seconds;
        self
    }

    /// Serves the metrics on a loopback port of their own (`--metrics-listen`).
    pub fn metrics(mut self) -> Serve {
        self.metrics = true;
        self
    }

    /// Further arguments of `serve` (`--upstream URL`, ...).
    pub fn args<I, S>(mut self, args: I) -> Serve
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args.extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    /// Sets the environment variable `name` of the node.
    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Serve {
        self.envs.push((name.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Starts the node and waits until it serves; panics with its log if it does not
    /// within [`START_TIMEOUT`].
    pub fn start(self) -> NativeNode {
        let Serve { args, envs, tick_seconds, metrics } = self;
        let mut command = Command::new("sh");
        command.arg("-c").arg(WATCHDOG).arg("sh").arg(crate::binary()).args(args);
        command.arg("--tick-seconds").arg(tick_seconds.to_string());
        if metrics {
            command.args(["--metrics-listen", "127.0.0.1:0"]);
        }
        crate::without_node_variables(&mut command);
        command.envs(envs);
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting ledger-node serve");
        // Both were piped just above.
        let watch = child.stdin.take().expect("a piped stdin");
        let log = collect_lines(child.stderr.take().expect("a piped stderr"));
        // Killed when dropped, should it not start.
        let mut node = NativeNode { child, watch: Some(watch), base: String::new(), metrics: None, log };
        let started = Instant::now();
        loop {
            let lines = node.lines();
            let base = lines.iter().find_map(|line| crate::serving_base(line));
            let metrics_base = lines.iter().find_map(|line| metrics_base(line));
            if let Some(base) = base
                && (metrics_base.is_some() || !metrics)
            {
                (node.base, node.metrics) = (base, metrics_base);
                return node;
            }
            if let Ok(Some(status)) = node.child.try_wait() {
                panic!("ledger-node serve exited with {status} before it served: {lines:#?}");
            }
            assert!(started.elapsed() < START_TIMEOUT, "ledger-node serve did not start: {lines:#?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The metrics address a line of `serve`'s log announces (`serving metrics on
/// http://host:port/metrics`), without its path.
fn metrics_base(line: &str) -> Option<String> {
    let (_, rest) = line.split_once("serving metrics on ")?;
    Some(rest.split(['"', ' ']).next()?.trim_end_matches("/metrics").to_owned())
}

/// A running `ledger-node serve`.
#[derive(Debug)]
pub struct NativeNode {
    /// The watchdog.
    child: Child,
    /// The watchdog's standard input: closing it kills the node.
    watch: Option<ChildStdin>,
    /// Where it serves, `http://127.0.0.1:PORT`.
    pub base: String,
    /// Where its metrics are, `http://127.0.0.1:PORT`, when it was started with
    /// [`Serve::metrics`].
    pub metrics: Option<String>,
    log: Arc<Mutex<Vec<String>>>,
}

impl NativeNode {
    /// The lines of its standard error written so far.
    pub fn lines(&self) -> Vec<String> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl Drop for NativeNode {
    fn drop(&mut self) {
        // The watchdog kills the node, then exits.
        drop(self.watch.take());
        let _ = self.child.wait();
    }
}
