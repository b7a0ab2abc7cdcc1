//! The node's logs: `tracing` events, one line each on standard error (standard output
//! is the commands' own: `demo`, `component`), as JSON objects or as text.
//!
//! - `LEDGER_NODE_LOG_FORMAT`: `json` or `text`; unset, `text` when standard error is a
//!   terminal and `json` otherwise (a service manager, a container's log).
//! - `LEDGER_NODE_LOG`: which events, as `tracing-subscriber`'s `EnvFilter` reads them
//!   (`info`, `warn,ledger_node::server=debug`); unset, `info`.
//!
//! Every event names what it is in its message (`request`, `follow round`, `ingest
//! batch`, `scheduled jobs`) and carries its facts as fields; an error carries its
//! cause in `cause`. No event carries a header, a query string or a body, so the admin
//! token and wallet tokens never reach the log.

use std::io::IsTerminal as _;

use tracing_subscriber::EnvFilter;

/// The variable that picks the format.
pub const FORMAT: &str = "LEDGER_NODE_LOG_FORMAT";
/// The variable that filters the events.
pub const FILTER: &str = "LEDGER_NODE_LOG";

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON object per line.
    Json,
    /// Human-readable text.
    Text,
}

impl Format {
    /// The format `value` of [`FORMAT`] names; unset, by whether standard error is a
    /// terminal.
    pub fn parse(value: Option<&str>) -> anyhow::Result<Format> {
        match value.map(str::trim) {
            None | Some("") if std::io::stderr().is_terminal() => Ok(Format::Text),
            None | Some("") => Ok(Format::Json),
            Some(v) if v.eq_ignore_ascii_case("json") => Ok(Format::Json),
            Some(v) if v.eq_ignore_ascii_case("text") => Ok(Format::Text),
            Some(other) => anyhow::bail!("{FORMAT} must be json or text, not {other:?}"),
        }
    }
}

/// Installs the process's log subscriber from [`FORMAT`] and [`FILTER`]; a bad value
/// stops the command with the variable's name.
pub fn init() -> anyhow::Result<()> {
    let format = Format::parse(std::env::var(FORMAT).ok().as_deref())?;
    let filter = match std::env::var(FILTER) {
        Ok(directives) if !directives.trim().is_empty() => {
            EnvFilter::builder().parse(&directives).map_err(|e| anyhow::anyhow!("{FILTER}: {e}"))?
        }
        _ => EnvFilter::new("info"),
    };
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let installed = match format {
        Format::Json => builder.json().flatten_event(true).with_current_span(false).with_span_list(false).try_init(),
        Format::Text => builder.with_ansi(std::io::stderr().is_terminal()).try_init(),
    };
    installed.map_err(|e| anyhow::anyhow!("installing the log subscriber: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_is_json_or_text_and_anything_else_is_refused_by_name() {
        assert_eq!(Format::parse(Some("json")).unwrap(), Format::Json);
        assert_eq!(Format::parse(Some("TEXT")).unwrap(), Format::Text);
        let refused = Format::parse(Some("yaml")).unwrap_err().to_string();
        assert!(refused.contains(FORMAT) && refused.contains("yaml"), "{refused}");
    }
}
