//! The entry point: one request in, one response out.
//!
//! [`handle`] is a function of the request, the host's [`Env`] (now, entropy,
//! configuration) and a [`Store`]. It checks, in order: routing (404, 405), body size
//! (413), authentication (401, 403), then parses and serves.

use crate::admin;
use crate::config::Config;
use crate::error::Error;
use crate::http::{Body, Method, Request, Response};
use crate::ingest;
use crate::ledger;
use crate::registry;
use crate::route::{Route, RouteError};
use crate::state;
use crate::store::Store;
use crate::time::Timestamp;
use crate::version;
use crate::wallet;

/// Largest request body of the ingest endpoint: 64 MiB.
pub const INGEST_BODY_LIMIT: usize = 64 * 1024 * 1024;
/// Largest request body of every other endpoint: 1 MiB.
pub const BODY_LIMIT: usize = 1024 * 1024;

/// What the host passes in with every request: the core reads no clock, no random
/// source and no environment of its own.
#[derive(Debug, Clone, Copy)]
pub struct Env<'a> {
    /// The current time.
    pub now: Timestamp,
    /// Fresh random bytes from the host's secure random source.
    pub entropy: [u8; 32],
    /// The node's configuration.
    pub config: &'a Config,
}

/// The longest body the host should read for `method` and `path`; it passes
/// [`Body::TooLarge`] for anything longer.
pub fn body_limit(method: &Method, path: &str) -> usize {
    match Route::parse(method, path) {
        Ok(Route::AdminIngest) => INGEST_BODY_LIMIT,
        _ => BODY_LIMIT,
    }
}

/// Serves one request.
pub async fn handle<S: Store>(request: &Request, env: &Env<'_>, store: &S) -> Response {
    let mut response = match dispatch(request, env, store).await {
        Ok(response) => response,
        Err(error) => error.into_response(),
    };
    if request.method == Method::Head {
        response.body.clear();
    }
    response
}

async fn dispatch<S: Store>(request: &Request, env: &Env<'_>, store: &S) -> Result<Response, Error> {
    let route = Route::parse(&request.method, &request.path).map_err(|e| match e {
        RouteError::NotFound => Error::NotFound(alloc::format!("no such endpoint: {}", request.path)),
        RouteError::MethodNotAllowed { allowed } => Error::MethodNotAllowed { allowed },
    })?;
    let limit = body_limit(&request.method, &request.path);
    let body = match &request.body {
        Body::Complete(body) if body.len() <= limit => body.as_slice(),
        _ => return Err(Error::PayloadTooLarge { limit }),
    };
    match route {
        Route::Version => Ok(Response::ok(&version::current())),
        Route::UpdateById { api, update_id } => ledger::updates::get(store, api, update_id, &request.query).await,
        Route::ChoiceContext { transfer_instruction_id, choice } => {
            registry::choice_context(store, env, transfer_instruction_id, choice, body).await
        }
        Route::EarliestRound => state::rounds::earliest(store).await,
        Route::MigrationInfo => state::migrations::info(store, body).await,
        Route::SnapshotTimestampAfter => state::snapshots::after(store, env.config, &request.query).await,
        Route::ClosedRounds => state::rounds::closed(store).await,
        Route::CoinPriceVotes => state::votes::latest(store).await,
        Route::PartyParticipant { domain_id, party_id } => {
            state::hosting::participant(store, domain_id, party_id).await
        }
        Route::RollForwardLsu => state::hosting::roll_forward(store).await,
        Route::AdminIngest => {
            admin::authorize(request, env.config)?;
            Ok(Response::ok(&ingest::ingest(body, store, env.config).await?))
        }
        Route::BuyTraffic => wallet::submit(request, body, env, store).await,
        Route::BuyTrafficStatus { tracking_id } => wallet::status(request, tracking_id, env, store).await,
        Route::AdminTick => {
            admin::authorize(request, env.config)?;
            let report = wallet::tick(env, store).await?;
            let mut response = Response::ok(&report);
            if !report.skipped.is_empty() {
                response.log = Some(report.skipped.join("\n"));
            }
            Ok(response)
        }
        Route::AdminBuyTrafficRequests => {
            admin::authorize(request, env.config)?;
            wallet::list(&request.query, store).await
        }
        Route::AdminStoreCheck => {
            admin::authorize(request, env.config)?;
            admin::store_check(store, &env.entropy).await
        }
        Route::AdminReset => {
            admin::authorize(request, env.config)?;
            admin::reset(store, env.config).await
        }
    }
}
