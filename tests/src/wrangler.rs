//! The worker under `wrangler dev`, with local D1, R2 and KV, run as a process.
//!
//! `scripts/wrangler` (installed by `scripts/setup`) runs the pinned wrangler with the
//! environment the build needs. The worker is built once per test process with the
//! command `wrangler.toml` builds with (`scripts/build-worker`); `wrangler dev` then
//! runs it from a copy of `wrangler.toml` without the `[build]` table, so that no file
//! watcher rebuilds it under the suite's feet. The D1 schema is applied with `wrangler
//! d1 migrations apply --local` into a temporary persistence directory, and the worker
//! serves on a free loopback port, with its cron trigger exposed at `/__scheduled`
//! (`--test-scheduled`). It is stopped, with the `workerd` it runs, when dropped.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the first `wrangler dev` may take: it builds the worker.
pub const START_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// How a `wrangler dev` is started; [`Launch::start`] starts it.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// Variables (`--var NAME:VALUE`).
    pub vars: Vec<(String, String)>,
    /// Variables of wrangler's own environment (such as `NODE_EXTRA_CA_CERTS`).
    pub envs: Vec<(String, String)>,
    /// A table of `wrangler.toml` to leave out (such as `[[r2_buckets]]`).
    pub without: Option<String>,
    /// SQL executed in the D1 database after its migrations.
    pub sql: Option<String>,
    /// wrangler's `--log-level`; `warn` when empty.
    pub log_level: String,
}

impl Launch {
    /// Builds the worker (once per process), applies the D1 migrations to fresh local
    /// state and starts `wrangler dev`, without waiting for it to serve.
    pub fn start(&self) -> WranglerDev {
        let state = tempfile::tempdir().expect("a temporary directory");
        let persist = state.path().to_str().expect("a UTF-8 temporary path").to_owned();
        let config = build_once(state.path(), self.without.as_deref());
        let config = config.to_str().expect("a UTF-8 temporary path").to_owned();
        d1(&config, &persist, &["migrations", "apply", "DB"]);
        if let Some(sql) = &self.sql {
            d1(&config, &persist, &["execute", "DB", "--command", sql]);
        }

        let port = free_port();
        let log = state.path().join("wrangler-dev.log");
        let log_file = std::fs::File::create(&log).expect("a log file");
        let mut command = wrangler();
        let log_level = if self.log_level.is_empty() { "warn" } else { self.log_level.as_str() };
        command.args([
            "dev",
            "--config",
            &config,
            "--ip",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--inspector-port",
            &free_port().to_string(),
            "--persist-to",
            &persist,
            "--show-interactive-dev-session=false",
            // Exposes the cron trigger at /__scheduled.
            "--test-scheduled",
            "--log-level",
            log_level,
        ]);
        for (name, value) in &self.vars {
            command.args(["--var", &format!("{name}:{value}")]);
        }
        command.envs(self.envs.iter().map(|(name, value)| (name, value)));
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().expect("a log handle"))
            .stderr(log_file)
            .spawn()
            .expect("starting wrangler dev");
        WranglerDev { child, port, _state: state, log }
    }
}

/// A running `wrangler dev`.
#[derive(Debug)]
pub struct WranglerDev {
    child: Child,
    /// The loopback port it serves on.
    pub port: u16,
    _state: tempfile::TempDir,
    log: PathBuf,
}

impl WranglerDev {
    /// Where it serves, `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Waits until `GET /version` answers with a status that `ready` takes; panics
    /// with wrangler's log if wrangler exits or [`START_TIMEOUT`] passes first.
    pub fn wait_until(&mut self, ready: impl Fn(u16) -> bool) {
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("wrangler dev exited with {status}:\n{}", self.log_text());
            }
            if started.elapsed() > START_TIMEOUT {
                panic!("wrangler dev did not serve within {START_TIMEOUT:?}:\n{}", self.log_text());
            }
            if let Some(status) = version_status(self.port)
                && ready(status)
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// What wrangler (and the worker, at its log level) wrote so far.
    pub fn log_text(&self) -> String {
        let mut text = String::new();
        let _ = std::fs::File::open(&self.log).and_then(|mut f| f.read_to_string(&mut text));
        text
    }
}

impl Drop for WranglerDev {
    fn drop(&mut self) {
        // wrangler runs workerd as a child: stop the whole process group. wrangler may
        // linger in its graceful shutdown (seen after many concurrent connections), so
        // it gets a few seconds, then the group is killed.
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-s", "TERM", "--", &group]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = Command::new("kill").args(["-s", "KILL", "--", &group]).status();
        let _ = self.child.wait();
    }
}

/// The status of `GET /version` on `port`, when something answers there.
fn version_status(port: u16) -> Option<u16> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    stream.write_all(b"GET /version HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n").ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    std::str::from_utf8(head.get(9..12)?).ok()?.parse().ok()
}

/// The workspace's root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// `scripts/wrangler`, or a panic that says how to install it.
fn wrangler() -> Command {
    let script = workspace().join("scripts/wrangler");
    assert!(
        workspace().join("node_modules/.bin/wrangler").exists(),
        "wrangler is not installed: run scripts/setup (the README's test command does) before the worker suite"
    );
    let mut command = Command::new(script);
    command.current_dir(workspace());
    command
}

/// Builds the worker with the command of `wrangler.toml`'s `[build]` table and writes,
/// into `dir`, a copy of `wrangler.toml` without that table (nor the table `without`)
/// and with absolute paths.
fn build_once(dir: &Path, without: Option<&str>) -> PathBuf {
    let root = workspace();
    let manifest = std::fs::read_to_string(root.join("wrangler.toml")).expect("reading wrangler.toml");
    let mut build_command = None;
    let mut config = String::new();
    let (mut in_build, mut left_out) = (false, false);
    for line in manifest.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_build = trimmed == "[build]";
            left_out = Some(trimmed) == without;
        }
        if in_build {
            if let Some(command) = trimmed.strip_prefix("command = ") {
                build_command = Some(command.trim_matches('"').to_owned());
            }
            continue;
        }
        if left_out {
            continue;
        }
        config.push_str(&line.replace("= \"worker/", &format!("= \"{}/worker/", root.display())));
        config.push('\n');
    }
    let build_command = build_command.expect("wrangler.toml has a [build] command");
    // Workers started side by side share one build, made by the first.
    static BUILT: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let mut built = BUILT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !*built {
        let status = Command::new("bash")
            .args(["-c", &format!("source scripts/env.sh && {build_command}")])
            .current_dir(&root)
            .stdin(Stdio::null())
            .status()
            .expect("running the worker build");
        assert!(status.success(), "building the worker ({build_command}) failed");
        *built = true;
    }
    let path = dir.join("wrangler.toml");
    std::fs::write(&path, config).expect("writing the test wrangler.toml");
    path
}

/// Runs `wrangler d1 <args>` on the local database of the worker configured by `config`,
/// kept in `persist`, and fails the test with wrangler's output if it fails.
fn d1(config: &str, persist: &str, args: &[&str]) {
    let output = wrangler()
        .arg("d1")
        .args(args)
        .args(["--local", "--config", config, "--persist-to", persist])
        .stdin(Stdio::null())
        .output()
        .expect("running wrangler d1");
    assert!(
        output.status.success(),
        "wrangler d1 {} failed:\n{}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
}
