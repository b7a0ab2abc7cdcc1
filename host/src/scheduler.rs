//! The native host's timer: runs the node's scheduled jobs (the component's `tick`,
//! the same core function as `POST /v0/admin/tick` and the worker's cron trigger) every
//! period, in a fresh instance each time.

use std::sync::Arc;
use std::time::Duration;

use crate::host::Node;

/// Calls `node.tick()` every `period`, for ever; a failure is logged and the next
/// period tries again. The first run is one period after the start.
pub async fn tick_every(node: Arc<Node>, period: Duration) {
    let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let node = Arc::clone(&node);
        match tokio::task::spawn_blocking(move || node.tick()).await {
            Ok(Ok(report)) => {
                if report.expired_requests > 0 {
                    eprintln!("ledger-node: scheduled jobs: expired {} buy-traffic requests", report.expired_requests);
                }
                for line in &report.skipped {
                    eprintln!("ledger-node: scheduled jobs: skipped {line}");
                }
            }
            Ok(Err(e)) => eprintln!("ledger-node: scheduled jobs failed: {e:#}"),
            Err(e) => eprintln!("ledger-node: scheduled jobs panicked: {e}"),
        }
    }
}
