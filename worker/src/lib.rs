//! # ledger-node as a Cloudflare Worker
//!
//! The `fetch` handler is the whole shell. It answers every request with a 503 naming
//! the binding while the D1 database `DB` or the R2 bucket `BODIES` is not bound (the
//! node does not run without either). Before an isolate serves its first request (or
//! runs its first scheduled jobs), it checks the store's layout version and the names
//! it was ingested under with the core ([`ledger_node_core::storage::layout::check`]: an empty
//! store gets this build's and the configured names) and keeps the outcome for the
//! isolate's life, so requests read nothing more for it; a store of another layout, or
//! ingested under other names, is refused, and every request is a 503 whose error names
//! both and what to do. Otherwise, for every request it
//!
//! 1. reads the configuration from the Worker's `[vars]` and secrets
//!    ([`ledger_node_core::Config::from_lookup`]; a bad value is a 500 whose log names
//!    the variable), the time from `Date.now()` and 32 bytes from
//!    `crypto.getRandomValues` (getrandom's `wasm_js` backend);
//! 2. translates the request into the core's (`convert`), reading the body no further
//!    than [`ledger_node_core::body_limit`] allows;
//! 3. runs [`ledger_node_core::handle`] over [`CachedStore`]: the D1 database bound as
//!    `DB` ([`D1Store`], authoritative), with the update bodies in the R2 bucket bound
//!    as `BODIES` ([`BodyBucket`]), cached in the isolate's memory and in the KV
//!    namespace bound as `CACHE`;
//! 4. logs the request on one JSON line (`logs`: its id, also sent back as
//!    `x-request-id`, method, route template, status, duration, and the response's
//!    [`ledger_node_core::Response::log`] as its `cause`) and translates the response
//!    back;
//! 5. hands the KV puts of bodies it read from R2 to `ctx.wait_until`, so that they run
//!    after the response.
//!
//! Routing, limits, authentication and every answer are the core's: no worker
//! `Router` here.
//!
//! The `scheduled` handler (the cron trigger of `wrangler.toml`, every minute) runs the
//! node's scheduled jobs, [`ledger_node_core::state::wallet::outcome::tick`], over the same store; a
//! record the jobs could not read is logged and skipped, so one bad record never stops
//! the jobs of the others, nor any later run. Then, when `LEDGER_NODE_UPSTREAM_URL` is
//! set, it follows the upstream node for a bounded run (`follow`). Each run is one JSON
//! log line (`logs`): what the jobs and the follower did, and why either failed.
//!
//! ## Update bodies: R2, and the cache in front of it
//!
//! The updates' stored forms (one binary form an update, from which the core renders
//! either encoding; called bodies here) are most of what the node stores, so they live in R2,
//! not D1 (`r2`): D1 keeps what is queried, the indexes, the contracts, derived state
//! and the wallet. An ingest batch puts its bodies into R2 first and then applies the
//! rest in one D1 transaction, and a body is served only while D1 holds its update, so
//! no reader finds an update without its body, nor a body of an update whose batch
//! failed. `GET /v2/updates/{id}` (and `/v1`) reads one body, and bodies never change
//! once written: only a reset deletes them. [`CachedStore`] keeps them in two tiers in
//! front of R2, the isolate's memory (32 MiB; a body read again outlasts ones read
//! once) and KV (shared by all isolates; skipped when `CACHE` is not bound); every other key,
//! scan and write goes straight to D1. A reset replaces the *generation* kept in D1
//! (table `cache_generation`), which is part of every R2 object name and KV key: the
//! isolate that reset serves no old body, and every other isolate reads the generation
//! again at most a second after it last did, and drops its memory tier when it
//! changed. The `cache` module has the details.
//!
//! ## Every handler ends on its own timer
//!
//! Both handlers, whatever they answer, wait for a timer of no delay (`settle`) just
//! before they return. Without it, under `wrangler dev`, a request right after a long
//! ingest batch on a busy machine could be held for 30 s or more: the handler had
//! finished in milliseconds (any route, `/version` included, with or without KV, no
//! `wait_until` involved), yet the runtime delivered its response only when some other
//! event reached the process (the next request, or the client giving up).
//!
//! The cause is where the handler's last poll runs. Every Rust future of the isolate,
//! of every request and every `wait_until`, runs on wasm-bindgen's one executor queue
//! (`js_sys::futures`), which polls all queued tasks in a single microtask and queues
//! that microtask only when none is pending. So the poll that completes a handler, and
//! resolves the promise the runtime waits on, may run from a microtask that other work
//! queued, outside the request's own event. workerd takes a promise resolved that way
//! as a cross-context resolution and hands it back to the request that made it; under
//! `wrangler dev` that hand-back was seen to wait for the next event in the process.
//! A timer is an event of the request that set it: the poll it wakes, which returns
//! the response, runs from that request's own event, and the response leaves at once.
//! The timer costs the request no measurable time. `tests/tests/hosts/worker.rs` holds
//! the regression test (a read after a bulk ingest on a busy machine, bounded).
//!
//! ## Build and run
//!
//! `wrangler.toml` (repository root) builds the crate with `scripts/build-worker`
//! (`worker-build` with the worker's own cargo profile, then the module's name section
//! dropped) into `worker/build/`, binds the D1 database `DB` (schema in
//! `worker/migrations/`), the R2 bucket `BODIES` (locally a directory under
//! `--persist-to`) and the KV namespace `CACHE`, and sets the non-secret
//! `[vars]`. `scripts/wrangler` runs the pinned wrangler with the environment the build
//! needs without GitHub downloads (`WASM_BINDGEN_BIN`: the `wasm-bindgen` CLI of the
//! pinned version; `ESBUILD_BIN`: wrangler's own esbuild):
//!
//! ```text
//! scripts/wrangler d1 migrations apply DB --local --persist-to .wrangler/state
//! scripts/wrangler dev --port 8787 --ip 127.0.0.1 --persist-to .wrangler/state \
//!     --var LEDGER_NODE_ADMIN_TOKEN:devtoken
//! curl -X POST -H 'Authorization: Bearer devtoken' localhost:8787/v0/admin/store-check
//! ```

mod cache;
mod convert;
mod d1;
mod follow;
mod logs;
mod r2;

use ledger_node_core::model::time::Timestamp;
use ledger_node_core::{Config, Env, Error};
use worker::{Context, Date, ScheduleContext, ScheduledEvent, console_error, event};

pub use cache::CachedStore;
pub use d1::D1Store;
pub use r2::BodyBucket;

/// The D1 binding that holds the node's key-value table.
pub const DB_BINDING: &str = "DB";

/// This isolate's outcome of the layout check, once it has one: `None` when the store
/// is of this build's layout, else the refusal.
static LAYOUT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

#[event(fetch)]
async fn fetch(mut request: worker::Request, env: worker::Env, ctx: Context) -> worker::Result<worker::Response> {
    let started = Date::now().as_millis();
    let id = logs::request_id(request_id_entropy());
    let coin = config(&env).map_or_else(|_| ledger_node_core::model::config::DEFAULT_COIN.to_owned(), |c| c.names.coin);
    let route = logs::route(&request.path(), &coin);
    let method = logs::method_label(request.inner().method().as_str());
    let response = match missing_binding(&env) {
        Some(missing) => unbound(&missing),
        None => match serve(&mut request, &env, &ctx).await {
            Ok(response) => response,
            Err(error) => error.into_response(),
        },
    };
    let mut response = convert::with_valid_status(response);
    response.headers.push((REQUEST_ID.into(), id.clone()));
    settle().await;
    let duration_ms = Date::now().as_millis().saturating_sub(started) as f64;
    let cause = match response.log.as_deref() {
        None if response.status >= 500 => Some("(no detail)"),
        cause => cause,
    };
    logs::request(&logs::Request { id: &id, method, route: &route }, response.status, duration_ms, cause).write();
    convert::response(response)
}

/// The response header that carries a request's id, as its log line does (the native
/// node's header too).
const REQUEST_ID: &str = "x-request-id";

/// 8 bytes for a request's id from the runtime's random source; zeros if it fails
/// (the id then names no request, and the request is served all the same).
fn request_id_entropy() -> [u8; 8] {
    let mut bytes = [0u8; 8];
    let _ = getrandom::fill(&mut bytes);
    bytes
}

/// The cron trigger (`[triggers]` in `wrangler.toml`, every minute): runs the node's
/// scheduled jobs, the same core function as `POST /v0/admin/tick`, then one run of
/// the follower if an upstream is configured. A failure is logged; the next trigger
/// tries again.
#[event(scheduled)]
async fn scheduled(_event: ScheduledEvent, env: worker::Env, _ctx: ScheduleContext) {
    run_scheduled(&env).await;
    settle().await;
}

/// The scheduled jobs, then following, logged on one line (`logs::scheduled`).
async fn run_scheduled(env: &worker::Env) {
    let started = Date::now().as_millis();
    let refused = match config(env).and_then(|config| Ok((config, store(env, now()?)?))) {
        Ok((config, store)) => layout_refusal(&store, &config.names).await,
        Err(e) => Some(e.to_string()),
    };
    if let Some(refused) = refused {
        console_error!("scheduled jobs and following skipped: {refused}");
        return;
    }
    let jobs = tick(env).await.map_err(|e| match e {
        Error::Store(e) => format!("store: {e}"),
        e => e.to_string(),
    });
    let following = follow::run(env).await;
    let duration_ms = Date::now().as_millis().saturating_sub(started) as f64;
    logs::scheduled(&jobs, &following, duration_ms).write();
}

/// Runs the scheduled jobs with the core.
async fn tick(env: &worker::Env) -> Result<ledger_node_core::state::wallet::outcome::TickReport, Error> {
    let config = config(env)?;
    let now = now()?;
    let store = store(env, now)?;
    let env = Env { now, entropy: entropy()?, config: &config };
    let report = ledger_node_core::state::wallet::outcome::tick(&env, &store).await;
    if let Some(kv_puts) = store.flush_to_kv() {
        kv_puts.await;
    }
    report
}

/// Serves `request` with the core.
async fn serve(
    request: &mut worker::Request,
    env: &worker::Env,
    ctx: &Context,
) -> Result<ledger_node_core::Response, Error> {
    let config = config(env)?;
    let now = now()?;
    let store = store(env, now)?;
    if let Some(refused) = layout_refusal(&store, &config.names).await {
        return Ok(unbound(&refused));
    }
    let entropy = entropy()?;
    let request = convert::request(request).await?;
    let env = Env { now, entropy, config: &config };
    let response = ledger_node_core::handle(&request, &env, &store).await;
    if let Some(kv_puts) = store.flush_to_kv() {
        ctx.wait_until(kv_puts);
    }
    Ok(response)
}

/// The node's configuration, from the Worker's `[vars]` and secrets.
fn config(env: &worker::Env) -> Result<Config, Error> {
    let mut config = Config::from_lookup(|name| env.var(name).ok().map(|value| value.to_string()))
        .map_err(|e| Error::Internal(format!("bad configuration: {e}")))?;
    if config.started_at.is_none() {
        config.started_at = Some(*ISOLATE_STARTED.get_or_init(|| now().unwrap_or(Timestamp::UNIX_EPOCH)));
    }
    Ok(config)
}

/// When this isolate served its first request or job: the start `GET /status`
/// counts its uptime from, unless `LEDGER_NODE_STARTED_AT` says otherwise (the
/// runtime gives no clock before the first event).
static ISOLATE_STARTED: std::sync::OnceLock<Timestamp> = std::sync::OnceLock::new();

/// 32 bytes from the runtime's random source (`crypto.getRandomValues`).
fn entropy() -> Result<[u8; 32], Error> {
    let mut entropy = [0u8; 32];
    getrandom::fill(&mut entropy).map_err(|e| Error::Internal(format!("the runtime's random source failed: {e}")))?;
    Ok(entropy)
}

/// The node's store at `now`: the D1 database `DB` with the update bodies in the R2
/// bucket `BODIES`, behind the body cache, with the KV namespace `CACHE` as the cache's
/// shared tier if it is bound.
fn store(env: &worker::Env, now: Timestamp) -> Result<CachedStore, Error> {
    let db = env.d1(DB_BINDING).map_err(|e| {
        Error::Internal(format!("the D1 database binding `{DB_BINDING}` (wrangler.toml) is unusable: {e}"))
    })?;
    let bucket = env.bucket(r2::R2_BINDING).map_err(|e| {
        Error::Internal(format!("the R2 bucket binding `{}` (wrangler.toml) is unusable: {e}", r2::R2_BINDING))
    })?;
    let kv = env.kv(cache::KV_BINDING).ok();
    Ok(CachedStore::new(D1Store::new(db), BodyBucket::new(bucket), kv, now))
}

/// What is wrong with the bindings the worker cannot serve without (D1 `DB`, R2
/// `BODIES`), if anything: the worker never falls back to keeping bodies in D1.
fn missing_binding(env: &worker::Env) -> Option<String> {
    let missing = |kind: &str, name: &str, error: worker::Error| {
        format!("the {kind} binding `{name}` is missing or unusable ({error}); add it to wrangler.toml, see the README")
    };
    if let Err(e) = env.d1(DB_BINDING) {
        return Some(missing("D1 database", DB_BINDING, e));
    }
    env.bucket(r2::R2_BINDING).err().map(|e| missing("R2 bucket", r2::R2_BINDING, e))
}

/// Why this isolate cannot serve its store, if it cannot: the core's layout check
/// (the layout version, and the names the store was ingested under against `names`),
/// run once and kept in [`LAYOUT`] (a refusal for the isolate's life: the database
/// does not change its layout under it). A store that could not be read is not an
/// outcome: the request is a 503, and the next one checks again.
async fn layout_refusal(store: &CachedStore, names: &ledger_node_core::model::config::Names) -> Option<String> {
    if let Some(outcome) = LAYOUT.get() {
        return outcome.clone();
    }
    match ledger_node_core::storage::layout::check(store, names).await {
        Ok(_) => {
            let _ = LAYOUT.set(None);
            None
        }
        Err(refused @ ledger_node_core::storage::layout::Refused::Store(_)) => Some(refused.to_string()),
        Err(refused) => {
            let refused = refused.to_string();
            let _ = LAYOUT.set(Some(refused.clone()));
            Some(refused)
        }
    }
}

/// The answer to every request while a binding is missing, or the store is refused: a
/// 503 that names the problem, in the body and in the log.
fn unbound(missing: &str) -> ledger_node_core::Response {
    let body = ledger_node_core::api::http::envelope(&format!("not ready: {missing}"));
    let mut response = ledger_node_core::Response::json(503, body);
    response.log = Some(missing.to_owned());
    response
}

/// Waits for one timer of the current event, of no delay, so that the handler ends in
/// a poll that event's own timer started (see "Every handler ends on its own timer" in
/// the crate docs).
async fn settle() {
    worker::Delay::from(std::time::Duration::ZERO).await;
}

/// `Date.now()`, in microseconds.
fn now() -> Result<Timestamp, Error> {
    let millis =
        i64::try_from(Date::now().as_millis()).map_err(|_| Error::Internal("Date.now() is out of range".into()))?;
    Timestamp::from_micros(millis.saturating_mul(1000)).map_err(|e| Error::Internal(format!("Date.now(): {e}")))
}
