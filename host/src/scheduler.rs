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
        let metrics = Arc::clone(node.metrics());
        let started = std::time::Instant::now();
        match tokio::task::spawn_blocking(move || node.tick()).await {
            Ok(Ok(report)) => {
                metrics.jobs_ran(report.expired_requests, report.skipped.len());
                metrics.wallet_pending(report.pending_requests);
                for line in &report.skipped {
                    tracing::warn!(record = %line, "scheduled jobs: skipped a record they could not read");
                }
                tracing::info!(
                    expired_requests = report.expired_requests,
                    pending_requests = report.pending_requests,
                    skipped = report.skipped.len(),
                    duration_ms = started.elapsed().as_secs_f64() * 1000.0,
                    "scheduled jobs"
                );
            }
            Ok(Err(e)) => {
                metrics.jobs_failed();
                tracing::error!(cause = %format!("{e:#}"), "scheduled jobs failed");
            }
            Err(e) => {
                metrics.jobs_failed();
                tracing::error!(cause = %e, "scheduled jobs panicked");
            }
        }
    }
}
