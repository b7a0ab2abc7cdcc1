//! The scheduled follower: each cron run brings the node closer to its upstream.
//!
//! Enabled by `LEDGER_NODE_UPSTREAM_URL` (the upstream node's root, `https://` or
//! `http://`), with `LEDGER_NODE_UPSTREAM_TOKEN` (a secret: the upstream's admin token,
//! which its export endpoints need). Each run calls the core's follower
//! ([`ledger_node_core::follow::sync`]) once, for at most [`PAGES_PER_RUN`] pages of
//! [`PAGE_SIZE`] updates: a bounded amount of work per invocation, well within the
//! platform's limits on subrequests and time, and up to 5,000 updates a minute. The
//! upstream link is `fetch`; the local link is the core's handler over this worker's
//! store, with an admin token made for the run, so the follower needs no admin token
//! configured. A run that fails logs why and applied nothing of the page at fault; the
//! next run resumes from what earlier runs applied.
//!
//! Its settings ([`Settings::read`]): `LEDGER_NODE_UPSTREAM_URLS` (comma-separated) or
//! `LEDGER_NODE_UPSTREAM_URL`, `LEDGER_NODE_UPSTREAM_AGREE`,
//! `LEDGER_NODE_UPSTREAM_START` (`genesis`, the default, or `current`: where a follower
//! that holds no update yet starts; one that holds updates goes on from where it was,
//! whatever it says) and `LEDGER_NODE_UPSTREAM_HOSTING_LIFETIME` (seconds a hosting
//! learned in public mode is kept, 300 by default). A bad value is an error naming the
//! variable, logged by the run, and nothing is followed.

use ledger_node_core::follow::{self, Limits, Link, Report};
use ledger_node_core::{Body, Config, Env, Request, Response};
use wasm_bindgen::JsValue;

use crate::CachedStore;

/// The variable naming the upstream node.
pub const UPSTREAM_URL: &str = follow::UPSTREAM_URL;
/// The variable holding the upstream's admin token.
pub const UPSTREAM_TOKEN: &str = follow::UPSTREAM_TOKEN;
/// Updates asked for per page.
pub const PAGE_SIZE: u32 = 500;
/// Most pages one run applies.
pub const PAGES_PER_RUN: u32 = 10;

/// The variable naming several upstream nodes, comma-separated; it takes precedence
/// over [`UPSTREAM_URL`].
pub const UPSTREAM_URLS: &str = follow::UPSTREAM_URLS;
/// The variable overriding how many upstreams must agree (default f + 1 of n).
pub const UPSTREAM_AGREE: &str = follow::UPSTREAM_AGREE;

/// The variable choosing where a follower that holds nothing yet starts.
pub const UPSTREAM_START: &str = follow::UPSTREAM_START;
/// The variable setting how long a learned hosting is kept, in seconds.
pub const UPSTREAM_HOSTING_LIFETIME: &str = follow::UPSTREAM_HOSTING_LIFETIME;

/// What the follower is configured to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The upstreams' roots, without a trailing `/`.
    pub urls: Vec<String>,
    /// How many must agree (`None`: f + 1 of n).
    pub agree: Option<u32>,
    /// Where a follower that holds nothing yet starts.
    pub start: follow::Start,
    /// How long a learned hosting is kept, in seconds.
    pub hosting_lifetime_seconds: u64,
}

impl Settings {
    /// The settings `var` gives (a variable unset or empty is `None`); `Ok(None)` when
    /// no upstream is configured.
    pub fn read(var: impl Fn(&str) -> Option<String>) -> Result<Option<Settings>, String> {
        let (name, list) = match var(UPSTREAM_URLS) {
            Some(list) => (UPSTREAM_URLS, list),
            None => match var(UPSTREAM_URL) {
                Some(url) => (UPSTREAM_URL, url),
                None => return Ok(None),
            },
        };
        let mut urls = Vec::new();
        for url in list.split(',').map(str::trim).filter(|u| !u.is_empty()) {
            let url = url.trim_end_matches('/').to_owned();
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(format!("{name} must hold http:// or https:// URLs, not {url:?}"));
            }
            urls.push(url);
        }
        if urls.is_empty() {
            return Ok(None);
        }
        let agree = match var(UPSTREAM_AGREE) {
            Some(agree) => {
                Some(agree.parse::<u32>().map_err(|_| format!("{UPSTREAM_AGREE} must be a number, not {agree:?}"))?)
            }
            None => None,
        };
        let start = match var(UPSTREAM_START) {
            Some(start) => start.parse().map_err(|e| format!("{UPSTREAM_START}: {e}"))?,
            None => follow::Start::Genesis,
        };
        let hosting_lifetime_seconds = match var(UPSTREAM_HOSTING_LIFETIME) {
            Some(seconds) => seconds.parse::<u64>().map_err(|_| {
                format!("{UPSTREAM_HOSTING_LIFETIME} must be a whole number of seconds, not {seconds:?}")
            })?,
            None => follow::DEFAULT_HOSTING_LIFETIME_SECONDS,
        };
        Ok(Some(Settings { urls, agree, start, hosting_lifetime_seconds }))
    }
}

/// Follows the upstreams for one run, if any is configured: `Ok(None)` when none is.
pub async fn run(env: &worker::Env) -> Result<Option<Report>, String> {
    let var = |name: &str| env.var(name).ok().map(|v| v.to_string()).filter(|v| !v.is_empty());
    let Some(Settings { urls, agree, start, hosting_lifetime_seconds }) = Settings::read(var)? else {
        return Ok(None);
    };
    let token = env
        .secret(UPSTREAM_TOKEN)
        .map(|s| s.to_string())
        .or_else(|_| env.var(UPSTREAM_TOKEN).map(|v| v.to_string()))
        .ok()
        .filter(|t| !t.is_empty());
    let mut config = crate::config(env).map_err(|e| e.to_string())?;
    let local_token = hex(&crate::entropy().map_err(|e| e.to_string())?);
    config.admin_token = Some(local_token.clone());
    let now = crate::now().map_err(|e| e.to_string())?;
    let store = crate::store(env, now).map_err(|e| e.to_string())?;
    let public = token.is_none();
    let upstreams: Vec<Upstream> = urls.into_iter().map(|url| Upstream { url, token: token.clone() }).collect();
    let local = Local { store: &store, config: &config, token: local_token };
    // Not pipelined: two ingest requests at once could commit out of order in D1.
    let limits = Limits {
        page_size: PAGE_SIZE,
        max_pages: PAGES_PER_RUN,
        pipelined: false,
        agree,
        public,
        names: config.names.clone(),
        start,
        now,
        hosting_lifetime_seconds,
        hosting_lookups: follow::DEFAULT_HOSTING_LOOKUPS,
        blob_lifetime_seconds: follow::DEFAULT_BLOB_LIFETIME_SECONDS,
        blob_lookups: follow::DEFAULT_BLOB_LOOKUPS,
    };
    let report = follow::sync_all(&upstreams, &local, &limits).await.map_err(|e| e.to_string());
    if let Some(kv_puts) = store.flush_to_kv() {
        kv_puts.await;
    }
    report.map(Some)
}

/// The upstream node, reached with `fetch`.
struct Upstream {
    url: String,
    token: Option<String>,
}

impl Link for Upstream {
    async fn send(&self, request: Request) -> Result<Response, String> {
        let target = match request.query.is_empty() {
            true => format!("{}{}", self.url, request.path),
            false => format!("{}{}?{}", self.url, request.path, request.query),
        };
        let headers = worker::Headers::new();
        for (name, value) in &request.headers {
            headers.append(name, value).map_err(|e| format!("a request header: {e}"))?;
        }
        if let Some(token) = &self.token {
            headers
                .append("authorization", &format!("Bearer {token}"))
                .map_err(|e| format!("a request header: {e}"))?;
        }
        let mut init = worker::RequestInit::new();
        init.with_method(worker::Method::from(request.method.as_str().to_owned())).with_headers(headers);
        // fetch refuses a GET with a body, even an empty one.
        if let Body::Complete(body) = &request.body
            && !matches!(request.method, ledger_node_core::Method::Get)
        {
            init.with_body(Some(JsValue::from(js_sys::Uint8Array::from(body.as_slice()))));
        }
        let outgoing = worker::Request::new_with_init(&target, &init).map_err(|e| format!("{target}: {e}"))?;
        let mut answer =
            worker::Fetch::Request(outgoing).send().await.map_err(|e| format!("fetching {target} failed: {e}"))?;
        let status = answer.status_code();
        let body = answer.bytes().await.map_err(|e| format!("reading the answer of {target} failed: {e}"))?;
        Ok(Response { status, headers: Vec::new(), body, log: None })
    }
}

/// This worker: the core's handler over its store, with the run's admin token.
struct Local<'a> {
    store: &'a CachedStore,
    config: &'a Config,
    token: String,
}

impl Link for Local<'_> {
    async fn send(&self, mut request: Request) -> Result<Response, String> {
        request.headers.push(("authorization".into(), format!("Bearer {}", self.token)));
        let now = crate::now().map_err(|e| e.to_string())?;
        let entropy = crate::entropy().map_err(|e| e.to_string())?;
        let env = Env { now, entropy, config: self.config };
        Ok(ledger_node_core::handle(&request, &env, self.store).await)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> Result<Option<Settings>, String> {
        Settings::read(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned()))
    }

    #[test]
    fn the_start_and_the_hosting_lifetime_are_read_with_their_defaults() {
        let url = (UPSTREAM_URL, "https://scan.example/api/scan/");
        let settings = |start, hosting_lifetime_seconds| {
            Ok(Some(Settings {
                urls: vec!["https://scan.example/api/scan".into()],
                agree: None,
                start,
                hosting_lifetime_seconds,
            }))
        };
        assert_eq!(read(&[url]), settings(follow::Start::Genesis, 300));
        assert_eq!(
            read(&[url, (UPSTREAM_START, "current"), (UPSTREAM_HOSTING_LIFETIME, "60")]),
            settings(follow::Start::Current, 60)
        );
        assert_eq!(read(&[(UPSTREAM_START, "current")]), Ok(None), "no upstream, nothing to follow");
    }

    #[test]
    fn a_bad_start_or_lifetime_is_an_error_naming_the_variable() {
        let url = (UPSTREAM_URL, "https://scan.example");
        assert_eq!(
            read(&[url, (UPSTREAM_START, "now")]),
            Err("LEDGER_NODE_UPSTREAM_START: the start is `current` or `genesis`, not \"now\"".into())
        );
        assert_eq!(
            read(&[url, (UPSTREAM_HOSTING_LIFETIME, "5m")]),
            Err("LEDGER_NODE_UPSTREAM_HOSTING_LIFETIME must be a whole number of seconds, not \"5m\"".into())
        );
        assert_eq!(
            read(&[(UPSTREAM_URLS, "https://a, ftp://b")]),
            Err("LEDGER_NODE_UPSTREAM_URLS must hold http:// or https:// URLs, not \"ftp://b\"".into())
        );
    }
}
