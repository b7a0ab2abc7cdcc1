//! Accepting connections when the process runs short: how many connections the
//! open-file limit allows, what the accept loop does when `accept` fails, and how
//! often it looks again for an idle connection to close at the cap.

use std::time::Duration;

/// File descriptors kept back from connections: the store's files, wasmtime's code
/// cache, standard streams, the timer's and the runtime's own.
const RESERVED_FILES: u64 = 256;

/// The connection cap this process can keep: `wanted`, or less if the open-file limit
/// (raised to its hard maximum first) leaves room for fewer, which is logged.
pub fn open_file_budget(wanted: usize) -> usize {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        let raised = rustix::process::Rlimit { current: limit.maximum, maximum: limit.maximum };
        if setrlimit(Resource::Nofile, raised).is_ok() {
            limit = getrlimit(Resource::Nofile);
        }
    }
    let Some(files) = limit.current else {
        return wanted;
    };
    let room = usize::try_from(files.saturating_sub(RESERVED_FILES)).unwrap_or(usize::MAX).max(1);
    if room < wanted {
        tracing::warn!(
            open_file_limit = files,
            connections = room,
            wanted,
            "the open-file limit leaves room for fewer connections than asked; further connections wait to be \
             accepted (raise the limit with `ulimit -n` to allow more)"
        );
    }
    room.min(wanted)
}

/// At the cap with no connection idle, how often the accept loop looks again for one
/// that has become idle (between requests), to close it for the waiting client.
pub const RETRY_AT_CAP: Duration = Duration::from_millis(50);

/// The first pause after a failed `accept`; it doubles up to [`LONGEST_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const LONGEST_PAUSE: Duration = Duration::from_secs(1);

/// A run of failed accepts: each pauses the loop a little longer, and only the first of
/// the run is logged (then how many there were, once accepts work again), so that a
/// persistent failure neither spins nor floods the log.
#[derive(Debug, Default)]
pub struct Errors {
    failures: u64,
    pause: Duration,
}

impl Errors {
    /// Records a failed accept; how long to pause before the next.
    pub fn failed(&mut self, error: &std::io::Error) -> Duration {
        if self.failures == 0 {
            tracing::error!(
                cause = %error,
                longest_pause_seconds = LONGEST_PAUSE.as_secs(),
                "accepting a connection failed; backing off until accepting works again"
            );
            self.pause = FIRST_PAUSE;
        } else {
            self.pause = (self.pause * 2).min(LONGEST_PAUSE);
        }
        self.failures += 1;
        self.pause
    }

    /// Records an accept that worked, ending a run of failures.
    pub fn recovered(&mut self) {
        if self.failures > 0 {
            tracing::info!(failed_tries = self.failures, "accepting connections again");
            *self = Errors::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_accepts_back_off_doubling_to_a_ceiling_and_reset_once_one_works() {
        let mut errors = Errors::default();
        let error = std::io::Error::from_raw_os_error(24);
        let pauses: Vec<Duration> = (0..10).map(|_| errors.failed(&error)).collect();
        assert_eq!(pauses[0], FIRST_PAUSE);
        assert_eq!(pauses[1], FIRST_PAUSE * 2);
        assert!(pauses.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(*pauses.last().unwrap(), LONGEST_PAUSE);
        errors.recovered();
        assert_eq!(errors.failed(&error), FIRST_PAUSE);
    }

    #[test]
    fn the_connection_budget_never_exceeds_what_was_asked() {
        assert!(open_file_budget(10) <= 10);
        assert!(open_file_budget(1) >= 1);
    }
}
