//! The worker's log lines: one JSON object per line, written with `console.log` (or
//! `console.error` for a failure), which the platform's log tooling (Workers Logs,
//! `wrangler tail`) collects and indexes by field. The fields are those of the native
//! node's JSON log lines, so one query reads both:
//!
//! - `"message": "request"`, one line per request: `request_id` (also sent back in the
//!   `x-request-id` header), `method`, `route` (the route template, never the path:
//!   [`ledger_node_core::api::route::template`]; `other` when no route matches),
//!   `status`, `duration_ms`, and for an answer that carried an operator's note, its
//!   `cause` (a 5xx's cause, or the records a list skipped). `duration_ms` is measured
//!   with `Date.now()`, which the runtime moves on only while the worker waits on I/O,
//!   so it is the time spent on the store and the network, not on computing.
//! - `"message": "scheduled run"`, one line per run of the cron trigger: what the
//!   scheduled jobs did (`expired_requests`, `pending_requests`, `skipped`: the records
//!   they could not read), what the follower applied when an upstream is configured
//!   (`following`, `pages`, `updates`, `caught_up`, `position`), and each failure with
//!   its cause (`jobs_error`, `follow_error`).
//!
//! Every line has `level` (`INFO`, `WARN` or `ERROR`) and `message`. No line carries a
//! header, a query string, a body or a configuration value, so the admin token, wallet
//! tokens and the upstream's token never reach the log.

use ledger_node_core::follow::Report;
use ledger_node_core::state::wallet::outcome::TickReport;
use serde_json::{Map, Value, json};

/// How serious a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// What happened, as planned.
    Info,
    /// An operator's note: something was skipped, the rest went on.
    Warn,
    /// Something failed.
    Error,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
        }
    }
}

/// One log line: its level, and the JSON object to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// How serious it is (`console.error` for [`Level::Error`]).
    pub level: Level,
    /// The object, on one line.
    pub text: String,
}

impl Line {
    fn new(level: Level, message: &str, fields: Map<String, Value>) -> Line {
        let mut object = Map::new();
        object.insert("level".into(), level.as_str().into());
        object.insert("message".into(), message.into());
        object.extend(fields);
        Line { level, text: Value::Object(object).to_string() }
    }

    /// Writes the line to the isolate's console.
    pub fn write(&self) {
        match self.level {
            Level::Error => worker::console_error!("{}", self.text),
            Level::Info | Level::Warn => worker::console_log!("{}", self.text),
        }
    }
}

/// What a request was, for its log line.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// Its id, as sent back in `x-request-id`.
    pub id: &'a str,
    /// Its method, as a fixed label ([`method_label`]).
    pub method: &'static str,
    /// Its route template, or `other`.
    pub route: &'a str,
}

/// The line of a request answered `status` after `duration_ms`, with the answer's
/// operator note `cause`, if any.
pub fn request(request: &Request<'_>, status: u16, duration_ms: f64, cause: Option<&str>) -> Line {
    let level = match (status, cause) {
        (500.., _) => Level::Error,
        (_, Some(_)) => Level::Warn,
        _ => Level::Info,
    };
    let mut fields = Map::new();
    fields.insert("request_id".into(), request.id.into());
    fields.insert("method".into(), request.method.into());
    fields.insert("route".into(), request.route.into());
    fields.insert("status".into(), status.into());
    fields.insert("duration_ms".into(), duration_ms.into());
    if let Some(cause) = cause {
        fields.insert("cause".into(), cause.into());
    }
    Line::new(level, "request", fields)
}

/// The line of a run of the cron trigger: the scheduled jobs' report or why they
/// failed, and the follower's report (`None`: no upstream configured) or why it
/// stopped.
pub fn scheduled(jobs: &Result<TickReport, String>, follow: &Result<Option<Report>, String>, duration_ms: f64) -> Line {
    let mut fields = Map::new();
    fields.insert("duration_ms".into(), duration_ms.into());
    let mut level = Level::Info;
    match jobs {
        Ok(report) => {
            fields.insert("expired_requests".into(), report.expired_requests.into());
            fields.insert("pending_requests".into(), report.pending_requests.into());
            fields.insert("skipped".into(), report.skipped.clone().into());
            if !report.skipped.is_empty() {
                level = Level::Warn;
            }
        }
        Err(cause) => {
            fields.insert("jobs_error".into(), cause.as_str().into());
            level = Level::Error;
        }
    }
    match follow {
        Ok(None) => {
            fields.insert("following".into(), false.into());
        }
        Ok(Some(report)) => {
            fields.insert("following".into(), true.into());
            fields.insert("pages".into(), report.pages.into());
            fields.insert("updates".into(), report.summary.applied.update.into());
            fields.insert("caught_up".into(), report.caught_up.into());
            let position = report.position.as_ref().map_or(
                Value::Null,
                |p| json!({"migration_id": p.after_migration_id, "record_time": p.after_record_time}),
            );
            fields.insert("position".into(), position);
        }
        Err(cause) => {
            fields.insert("following".into(), true.into());
            fields.insert("follow_error".into(), cause.as_str().into());
            level = Level::Error;
        }
    }
    Line::new(level, "scheduled run", fields)
}

/// The method as a log field: one of the methods of HTTP/1.1, or `other`, so that a
/// client cannot write what it likes into the log (as the native node's label).
pub fn method_label(method: &str) -> &'static str {
    match method {
        "GET" => "GET",
        "HEAD" => "HEAD",
        "POST" => "POST",
        "PUT" => "PUT",
        "DELETE" => "DELETE",
        "PATCH" => "PATCH",
        "OPTIONS" => "OPTIONS",
        _ => "other",
    }
}

/// The route template of `path` (with `coin`, the configured currency word), or
/// `other` when no route matches: never the path itself, which may carry ids.
pub fn route(path: &str, coin: &str) -> String {
    ledger_node_core::api::route::template(path, coin).map_or_else(|| "other".to_owned(), |t| t.to_string())
}

/// A request id: 16 hex digits of `entropy`.
pub fn request_id(entropy: [u8; 8]) -> String {
    entropy.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ledger_node_core::api::export::Position;

    fn parse(line: &Line) -> Value {
        serde_json::from_str(&line.text).unwrap_or(Value::Null)
    }

    #[test]
    fn a_request_line_names_its_template_and_never_its_path() {
        let route = route("/api/scan/v2/updates/1220secret-id", "Coin");
        let line = request(&Request { id: "00ff", method: method_label("GET"), route: &route }, 404, 3.0, None);
        assert_eq!(line.level, Level::Info);
        assert_eq!(
            parse(&line),
            json!({"level": "INFO", "message": "request", "request_id": "00ff", "method": "GET",
                   "route": "/api/scan/v2/updates/{update_id}", "status": 404, "duration_ms": 3.0})
        );
        assert!(!line.text.contains("1220secret-id"));
        assert_eq!(route_of("/no/such/thing"), "other");
        assert_eq!(method_label("BREW"), "other");
    }

    fn route_of(path: &str) -> String {
        route(path, "Coin")
    }

    #[test]
    fn a_failed_request_is_an_error_line_with_its_cause() {
        let line = request(&Request { id: "01", method: "POST", route: "/v2/updates" }, 503, 1.0, Some("D1 failed"));
        assert_eq!(line.level, Level::Error);
        assert_eq!(parse(&line).get("cause"), Some(&json!("D1 failed")));
    }

    #[test]
    fn a_scheduled_run_reports_the_jobs_and_the_follower() {
        let jobs = Ok(TickReport { expired_requests: 2, skipped: Vec::new(), pending_requests: 5 });
        let mut report = Report { pages: 3, caught_up: true, ..Report::default() };
        report.summary.applied.update = 40;
        report.position =
            Some(Position { after_migration_id: 1, after_record_time: "2025-01-01T00:00:00.000000Z".into() });
        let line = scheduled(&jobs, &Ok(Some(report)), 7.0);
        assert_eq!(
            parse(&line),
            json!({"level": "INFO", "message": "scheduled run", "duration_ms": 7.0, "expired_requests": 2,
                   "pending_requests": 5, "skipped": [], "following": true, "pages": 3, "updates": 40,
                   "caught_up": true,
                   "position": {"migration_id": 1, "record_time": "2025-01-01T00:00:00.000000Z"}})
        );
        let failed = scheduled(&Err("store: D1 is down".into()), &Err("upstream answered 500".into()), 1.0);
        assert_eq!(failed.level, Level::Error);
        let failed = parse(&failed);
        assert_eq!(
            (failed.get("jobs_error").and_then(Value::as_str), failed.get("follow_error").and_then(Value::as_str)),
            (Some("store: D1 is down"), Some("upstream answered 500"))
        );
        let idle = parse(&scheduled(&Ok(TickReport::default()), &Ok(None), 0.0));
        assert_eq!(idle.get("following"), Some(&json!(false)));
        assert!(idle.get("pages").is_none());
    }
}
