//! The entry point: one request in, one response out.
//!
//! [`handle`] is a function of the request, the host's [`Env`] (now, entropy,
//! configuration) and a [`Store`]. It checks, in order: routing (404, 405), body size
//! (413), authentication (401, 403), then parses and serves.

use crate::api;
use crate::api::admin;
use crate::api::auth;
use crate::api::export;
use crate::api::health;
use crate::api::history;
use crate::api::hosting;
use crate::api::http::{Body, Method, Request, Response};
use crate::api::openapi;
use crate::api::registry;
use crate::api::route::{Route, RouteError};
use crate::api::version;
use crate::api::wallet;
use crate::ingest;
use crate::model::config::DEFAULT_COIN;
use crate::model::env::Env;
use crate::model::error::Error;
use crate::model::names::ApiNames;
use crate::state;
use crate::storage::store::Store;

/// Largest request body of the ingest endpoint: 64 MiB.
pub const INGEST_BODY_LIMIT: usize = 64 * 1024 * 1024;
/// Largest request body of every other endpoint: 1 MiB.
pub const BODY_LIMIT: usize = 1024 * 1024;

/// The longest body the host should read for `method` and `path`; it passes
/// [`Body::TooLarge`] for anything longer.
///
/// The host calls this before it has the node's configuration at hand, so it routes
/// with the default currency word. That gives the same limit as the configured one for
/// every path: the word spells only the price votes path, which has the ordinary limit
/// like every path that does not route; only ingest reads more.
pub fn body_limit(method: &Method, path: &str) -> usize {
    route_limit(Route::parse(method, path, DEFAULT_COIN).ok().as_ref())
}

/// The body limit of `route` (`None`: a path that does not route).
fn route_limit(route: Option<&Route>) -> usize {
    match route {
        Some(Route::AdminIngest) => INGEST_BODY_LIMIT,
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
    let route = Route::parse(&request.method, &request.path, &env.config.names.coin).map_err(|e| match e {
        RouteError::NotFound => Error::NotFound(alloc::format!("no such endpoint: {}", request.path)),
        RouteError::MethodNotAllowed { allowed } => Error::MethodNotAllowed { allowed },
    })?;
    let limit = route_limit(Some(&route));
    let body = match &request.body {
        Body::Complete(body) if body.len() <= limit => body.as_slice(),
        _ => return Err(Error::PayloadTooLarge { limit }),
    };
    match route {
        Route::Version => Ok(Response::ok(&version::current())),
        Route::OpenApi => Ok(openapi::serve(&env.config.names)),
        Route::Livez => Ok(health::live()),
        Route::Readyz => health::ready(store).await,
        Route::Status => health::status(store, env).await,
        Route::UpdateById { api, update_id } => history::by_id::get(store, api, update_id, &request.query).await,
        Route::ChoiceContext { transfer_instruction_id, choice } => {
            registry::choice_context(store, env, transfer_instruction_id, choice, body).await
        }
        Route::EarliestRound => api::state::earliest_round(store).await,
        Route::MigrationInfo => api::state::migration_info(store, body).await,
        Route::Updates { api } => history::updates(store, api, body).await,
        Route::ImportUpdates => history::import_updates(store, body).await,
        Route::UpdatesBefore => history::updates_before(store, body).await,
        Route::BackfillingStatus => history::status(store).await,
        Route::SnapshotTimestampAfter => api::state::snapshot_after(store, env.config, &request.query).await,
        Route::ClosedRounds => api::state::closed_rounds(store).await,
        Route::CoinPriceVotes => {
            api::state::price_votes(store, &ApiNames::new(&env.config.names).price_votes_field).await
        }
        Route::PartyParticipant { domain_id, party_id } => hosting::participant(store, domain_id, party_id).await,
        Route::PartyParticipants { domain_id, party_id } => hosting::participants(store, domain_id, party_id).await,
        Route::RollForwardLsu => hosting::roll_forward(store).await,
        Route::Scan(scan) => api::scan::handle(scan, request, body, env, store).await,
        Route::Registry(registry) => registry::handle(registry, request, body, env, store).await,
        Route::AdminIngest => {
            auth::authorize(request, env.config)?;
            Ok(Response::ok(&ingest::ingest(body, store, env.config).await?))
        }
        Route::BuyTraffic => wallet::submit(request, body, env, store).await,
        Route::BuyTrafficStatus { tracking_id } => wallet::status(request, tracking_id, env, store).await,
        Route::AdminTick => {
            auth::authorize(request, env.config)?;
            let report = state::wallet::outcome::tick(env, store).await?;
            Ok(Response::ok(&report).with_log_lines(&report.skipped))
        }
        Route::AdminBuyTrafficRequests => {
            auth::authorize(request, env.config)?;
            wallet::list(&request.query, store).await
        }
        Route::AdminStoreCheck => {
            auth::authorize(request, env.config)?;
            admin::store_check(store, &env.entropy).await
        }
        Route::AdminReset => {
            auth::authorize(request, env.config)?;
            admin::reset(store, env.config).await
        }
        Route::AdminExportState => {
            auth::authorize(request, env.config)?;
            export::state(store, body).await
        }
        Route::AdminExportBlobs => {
            auth::authorize(request, env.config)?;
            export::blobs(store, body).await
        }
        Route::AdminExportSoughtBlobs => {
            auth::authorize(request, env.config)?;
            export::sought_blobs(store, body).await
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::String;

    use super::*;
    use crate::model::config::{Config, Names};
    use crate::model::time::Timestamp;
    use crate::storage::exec::block_on;
    use crate::storage::store::MemoryStore;

    /// A node of the network whose coin is `Amulet`.
    fn amulet() -> Config {
        Config { names: Names { root: "Splice".into(), coin: "Amulet".into() }, ..Config::default() }
    }

    fn get(config: &Config, target: &str) -> (u16, String) {
        let env = Env { now: Timestamp::UNIX_EPOCH, entropy: [0; 32], config };
        let response = block_on(handle(&Request::new(Method::Get, target), &env, &MemoryStore::new()));
        (response.status, String::from_utf8(response.body).expect("a UTF-8 body"))
    }

    #[test]
    fn the_price_votes_path_and_field_follow_the_configured_coin() {
        assert_eq!(get(&Config::default(), "/v0/coin-price/votes"), (200, r#"{"coin_price_votes":[]}"#.into()));
        assert_eq!(get(&amulet(), "/v0/amulet-price/votes"), (200, r#"{"amulet_price_votes":[]}"#.into()));
        assert_eq!(get(&amulet(), "/v0/coin-price/votes").0, 404);
        assert_eq!(get(&Config::default(), "/v0/amulet-price/votes").0, 404);
    }

    #[test]
    fn the_body_limit_is_the_same_whatever_the_coin() {
        for path in ["/v0/coin-price/votes", "/v0/amulet-price/votes", "/v0/admin/ingest", "/nowhere"] {
            for method in [Method::Get, Method::Post] {
                let configured =
                    |config: &Config| route_limit(Route::parse(&method, path, &config.names.coin).ok().as_ref());
                assert_eq!(body_limit(&method, path), configured(&Config::default()), "{path}");
                assert_eq!(body_limit(&method, path), configured(&amulet()), "{path}");
            }
        }
        assert_eq!(body_limit(&Method::Post, "/v0/admin/ingest"), INGEST_BODY_LIMIT);
    }

    #[test]
    fn a_route_under_a_base_path_has_the_body_limit_it_has_at_the_root() {
        for (method, path) in [
            (Method::Post, "/api/scan/v0/backfilling/migration-info"),
            (Method::Post, "/api/scan/registry/transfer-instruction/v2/00ab/choice-contexts/accept"),
            (Method::Post, "/api/validator/v0/wallet/buy-traffic-requests"),
            (Method::Get, "/api/scan/version"),
        ] {
            let root = path.trim_start_matches("/api/scan").trim_start_matches("/api/validator");
            assert_eq!(body_limit(&method, path), body_limit(&method, root), "{path}");
        }
        // Ingest is not under a base path, so there it has no larger limit.
        assert_eq!(body_limit(&Method::Post, "/api/scan/v0/admin/ingest"), BODY_LIMIT);
        assert_eq!(body_limit(&Method::Post, "/api/validator/v0/admin/ingest"), BODY_LIMIT);
    }

    #[test]
    fn a_base_path_serves_the_same_answer_as_the_root() {
        assert_eq!(
            get(&Config::default(), "/api/scan/v0/coin-price/votes"),
            get(&Config::default(), "/v0/coin-price/votes")
        );
        assert_eq!(get(&amulet(), "/api/scan/v0/amulet-price/votes"), (200, r#"{"amulet_price_votes":[]}"#.into()));
        assert_eq!(get(&Config::default(), "/api/scan/v0/roll-forward-lsu"), (200, "{}".into()));
        assert_eq!(get(&Config::default(), "/api/validator/v0/roll-forward-lsu").0, 404);
    }
}
