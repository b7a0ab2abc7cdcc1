//! The followers under test, as an operator runs them: `ledger-node serve --upstream`
//! and `ledger-node follow`, in public mode (no upstream token), trusting the
//! simulators' CAs through `LEDGER_NODE_UPSTREAM_CA_FILE`.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use ledger_node_tests::native::{NativeNode, Serve, collect_lines};

use super::client::Client;

/// The admin token of the followers that serve (`serve --upstream` applies pages
/// through its own admin ingest).
pub const FOLLOWER_ADMIN_TOKEN: &str = "follower-admin-token";

/// `ledger-node serve --upstream` of `upstreams` over the store `db`, trusting the CAs
/// of `ca_file`, asking again every second once caught up, with its metrics served.
pub fn serve_following(db: &Path, upstreams: &[String], ca_file: &Path) -> NativeNode {
    let mut serve = Serve::new(db)
        .metrics()
        .env("LEDGER_NODE_ADMIN_TOKEN", FOLLOWER_ADMIN_TOKEN)
        .env(ledger_node::follow::Upstream::CA_FILE, ca_file)
        .args(["--poll-seconds", "1"]);
    for url in upstreams {
        serve = serve.args(["--upstream", url.as_str()]);
    }
    serve.start()
}

/// `ledger-node serve` of a follower's store, following nothing.
pub fn serve_store(db: &Path) -> NativeNode {
    Serve::new(db).env("LEDGER_NODE_ADMIN_TOKEN", FOLLOWER_ADMIN_TOKEN).start()
}

/// `ledger-node follow` of `upstreams` into the store `db`, trusting the CAs of
/// `ca_file`, with the further arguments `extra`.
pub fn follow(db: &Path, upstreams: &[String], ca_file: &Path, extra: &[&str]) -> Command {
    let mut command = ledger_node_tests::ledger_node();
    command.arg("follow").arg("--db").arg(db).args(extra).env(ledger_node::follow::Upstream::CA_FILE, ca_file);
    for url in upstreams {
        command.args(["--upstream", url.as_str()]);
    }
    command.stdin(Stdio::null()).stdout(Stdio::null());
    command
}

/// Waits until `node`'s follower reports in its metrics that it caught up with its
/// upstreams.
pub fn caught_up(node: &NativeNode, within: Duration) {
    let metrics = Client::new(node.metrics.clone().expect("a node started with its metrics"));
    let started = Instant::now();
    loop {
        let text = String::from_utf8(metrics.get("/metrics").body).expect("UTF-8 metrics");
        let caught_up = text.lines().any(|line| {
            line.strip_prefix("ledger_node_follow_last_caught_up_timestamp_seconds ")
                .and_then(|v| v.parse::<f64>().ok())
                .is_some_and(|v| v > 0.0)
        });
        if caught_up {
            return;
        }
        assert!(started.elapsed() < within, "the follower did not catch up within {within:?}: {:#?}", node.lines());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A `ledger-node follow` running, with its log as written.
pub struct Following {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Following {
    /// Starts `command` (a [`follow`]).
    pub fn start(mut command: Command) -> Following {
        let mut child = command.stderr(Stdio::piped()).spawn().expect("starting ledger-node follow");
        let log = collect_lines(child.stderr.take().expect("a piped stderr"));
        Following { child, log }
    }

    /// The lines of its log so far.
    pub fn lines(&self) -> Vec<String> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Waits until it logs its first round of pages applied; that line.
    pub fn first_round(&mut self, within: Duration) -> String {
        let started = Instant::now();
        loop {
            if let Some(line) = self.lines().into_iter().find(|line| line.contains("follow round")) {
                return line;
            }
            assert!(self.child.try_wait().expect("its status").is_none(), "the follower ended: {:#?}", self.lines());
            assert!(started.elapsed() < within, "no round within {within:?}: {:#?}", self.lines());
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Kills it with SIGKILL; whether it was still running.
    pub fn kill(&mut self) -> bool {
        let running = self.child.try_wait().expect("its status").is_none();
        let _ = self.child.kill();
        let _ = self.child.wait();
        running
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        self.kill();
    }
}
