//! Routing: from a method and a path to a [`Route`], without allocating.
//!
//! | method | path | route |
//! |---|---|---|
//! | GET | `/version` | [`Route::Version`] |
//! | GET | `/v2/updates/{update_id}` | [`Route::UpdateById`] (version 2) |
//! | GET | `/v1/updates/{update_id}` | [`Route::UpdateById`] (version 1) |
//! | GET | `/v0/internal/reward-accounting-process/rounds/earliest-available` | [`Route::EarliestRound`] |
//! | GET | `/v0/reward-accounting-process/rounds/earliest-available` | [`Route::EarliestRound`] (pre-0.6.5 alias) |
//! | POST | `/v0/backfilling/migration-info` | [`Route::MigrationInfo`] |
//! | GET | `/v0/state/acs/snapshot-timestamp-after` | [`Route::SnapshotTimestampAfter`] |
//! | GET | `/v0/closed-rounds` | [`Route::ClosedRounds`] |
//! | GET | `/v0/{coin}-price/votes` | [`Route::CoinPriceVotes`] |
//! | GET | `/v0/domains/{domain_id}/parties/{party_id}/participant-id` | [`Route::PartyParticipant`] |
//! | GET | `/v0/roll-forward-lsu` | [`Route::RollForwardLsu`] |
//! | POST | `/registry/transfer-instruction/v2/{id}/choice-contexts/{reject,accept,withdraw}` | [`Route::ChoiceContext`] |
//! | POST | `/v0/wallet/buy-traffic-requests` | [`Route::BuyTraffic`] |
//! | POST | `/v0/wallet/buy-traffic-requests/{tracking_id}/status` | [`Route::BuyTrafficStatus`] |
//! | POST | `/v0/admin/ingest` | [`Route::AdminIngest`] |
//! | POST | `/v0/admin/tick` | [`Route::AdminTick`] |
//! | GET | `/v0/admin/wallet/buy-traffic-requests` | [`Route::AdminBuyTrafficRequests`] |
//! | POST | `/v0/admin/store-check` | [`Route::AdminStoreCheck`] |
//! | POST | `/v0/admin/reset` | [`Route::AdminReset`] |
//!
//! `{coin}` is the configured currency word in lower case (`coin` by default, `amulet`
//! for `LEDGER_NODE_NAMES_COIN=Amulet`; [`crate::names::ApiNames`]); only that spelling
//! is routed.
//!
//! A path that matches no row is a 404; a path that matches a row with another
//! method is a 405 that lists the allowed method. Path parameters are returned still
//! percent-encoded; [`crate::http::percent_decode`] decodes them.

use crate::http::Method;
use crate::names::is_price_segment;

/// Which version of the update-by-id endpoint was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateApi {
    /// `/v1/updates/{id}`: transactions carry the legacy `offset`.
    V1,
    /// `/v2/updates/{id}`.
    V2,
}

/// The choice a registry choice context is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransferChoice {
    /// `TransferInstruction_Reject`
    Reject,
    /// `TransferInstruction_Accept`
    Accept,
    /// `TransferInstruction_Withdraw`
    Withdraw,
}

/// A routed request, borrowing its path parameters from the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route<'a> {
    /// `GET /version`
    Version,
    /// `GET /v{1,2}/updates/{update_id}`
    UpdateById {
        /// Which API version.
        api: UpdateApi,
        /// The update id, percent-encoded.
        update_id: &'a str,
    },
    /// `GET .../rounds/earliest-available`
    EarliestRound,
    /// `POST /v0/backfilling/migration-info`
    MigrationInfo,
    /// `GET /v0/state/acs/snapshot-timestamp-after`
    SnapshotTimestampAfter,
    /// `GET /v0/closed-rounds`
    ClosedRounds,
    /// `GET /v0/{coin}-price/votes`
    CoinPriceVotes,
    /// `GET /v0/domains/{domain_id}/parties/{party_id}/participant-id`
    PartyParticipant {
        /// The synchronizer id, percent-encoded.
        domain_id: &'a str,
        /// The party id, percent-encoded.
        party_id: &'a str,
    },
    /// `GET /v0/roll-forward-lsu`
    RollForwardLsu,
    /// `POST /registry/transfer-instruction/v2/{id}/choice-contexts/{choice}`
    ChoiceContext {
        /// The transfer instruction's contract id, percent-encoded.
        transfer_instruction_id: &'a str,
        /// The choice the context is for.
        choice: TransferChoice,
    },
    /// `POST /v0/wallet/buy-traffic-requests`
    BuyTraffic,
    /// `POST /v0/wallet/buy-traffic-requests/{tracking_id}/status`
    BuyTrafficStatus {
        /// The tracking id, percent-encoded.
        tracking_id: &'a str,
    },
    /// `POST /v0/admin/ingest`
    AdminIngest,
    /// `POST /v0/admin/tick`
    AdminTick,
    /// `GET /v0/admin/wallet/buy-traffic-requests`
    AdminBuyTrafficRequests,
    /// `POST /v0/admin/store-check`
    AdminStoreCheck,
    /// `POST /v0/admin/reset`
    AdminReset,
}

/// Why a request could not be routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteError {
    /// No route has this path.
    NotFound,
    /// The path exists, but only for `allowed`.
    MethodNotAllowed {
        /// The method the path answers to.
        allowed: &'static str,
    },
}

impl<'a> Route<'a> {
    /// Routes `method` and `path` (no query string) for a node whose currency word is
    /// `coin` (`Config::names.coin`), which spells the price votes path.
    pub fn parse(method: &Method, path: &'a str, coin: &str) -> Result<Route<'a>, RouteError> {
        let (route, allowed) = Self::match_path(path, coin).ok_or(RouteError::NotFound)?;
        let method_ok = match allowed {
            "GET" => matches!(method, Method::Get | Method::Head),
            _ => method.as_str() == allowed,
        };
        if method_ok { Ok(route) } else { Err(RouteError::MethodNotAllowed { allowed }) }
    }

    /// The route a path names, with the one method it answers to.
    fn match_path(path: &'a str, coin: &str) -> Option<(Route<'a>, &'static str)> {
        let rest = path.strip_prefix('/')?;
        let mut parts = rest.split('/');
        let mut seg = [""; 8];
        let mut count = 0;
        for part in parts.by_ref() {
            *seg.get_mut(count)? = part;
            count += 1;
        }
        // Empty path parameters are never valid, and a trailing slash is a different path.
        let seg = seg.get(..count)?;
        if seg.iter().any(|s| s.is_empty()) {
            return None;
        }
        use Route::*;
        let found = match seg {
            ["version"] => (Version, "GET"),
            ["v2", "updates", id] => (UpdateById { api: UpdateApi::V2, update_id: id }, "GET"),
            ["v1", "updates", id] => (UpdateById { api: UpdateApi::V1, update_id: id }, "GET"),
            ["v0", "internal", "reward-accounting-process", "rounds", "earliest-available"]
            | ["v0", "reward-accounting-process", "rounds", "earliest-available"] => (EarliestRound, "GET"),
            ["v0", "backfilling", "migration-info"] => (MigrationInfo, "POST"),
            ["v0", "state", "acs", "snapshot-timestamp-after"] => (SnapshotTimestampAfter, "GET"),
            ["v0", "closed-rounds"] => (ClosedRounds, "GET"),
            ["v0", price, "votes"] if is_price_segment(price, coin) => (CoinPriceVotes, "GET"),
            ["v0", "domains", domain_id, "parties", party_id, "participant-id"] => {
                (PartyParticipant { domain_id, party_id }, "GET")
            }
            ["v0", "roll-forward-lsu"] => (RollForwardLsu, "GET"),
            ["registry", "transfer-instruction", "v2", id, "choice-contexts", choice] => {
                let choice = match *choice {
                    "reject" => TransferChoice::Reject,
                    "accept" => TransferChoice::Accept,
                    "withdraw" => TransferChoice::Withdraw,
                    _ => return None,
                };
                (ChoiceContext { transfer_instruction_id: id, choice }, "POST")
            }
            ["v0", "wallet", "buy-traffic-requests"] => (BuyTraffic, "POST"),
            ["v0", "wallet", "buy-traffic-requests", tracking_id, "status"] => {
                (BuyTrafficStatus { tracking_id }, "POST")
            }
            ["v0", "admin", "ingest"] => (AdminIngest, "POST"),
            ["v0", "admin", "tick"] => (AdminTick, "POST"),
            ["v0", "admin", "wallet", "buy-traffic-requests"] => (AdminBuyTrafficRequests, "GET"),
            ["v0", "admin", "store-check"] => (AdminStoreCheck, "POST"),
            ["v0", "admin", "reset"] => (AdminReset, "POST"),
            _ => return None,
        };
        Some(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Method::{Get, Post};

    macro_rules! route {
        ($method:expr, $path:expr => $expected:expr) => {
            route!($method, $path, "Coin" => $expected)
        };
        ($method:expr, $path:expr, $coin:expr => $expected:expr) => {
            assert_eq!(Route::parse(&$method, $path, $coin), $expected, "{} {} ({})", $method.as_str(), $path, $coin)
        };
    }

    #[test]
    fn every_route_is_found_with_its_method() {
        route!(Get, "/version" => Ok(Route::Version));
        route!(Get, "/v2/updates/abc" => Ok(Route::UpdateById { api: UpdateApi::V2, update_id: "abc" }));
        route!(Get, "/v1/updates/abc" => Ok(Route::UpdateById { api: UpdateApi::V1, update_id: "abc" }));
        route!(Get, "/v0/internal/reward-accounting-process/rounds/earliest-available" => Ok(Route::EarliestRound));
        route!(Get, "/v0/reward-accounting-process/rounds/earliest-available" => Ok(Route::EarliestRound));
        route!(Post, "/v0/backfilling/migration-info" => Ok(Route::MigrationInfo));
        route!(Get, "/v0/state/acs/snapshot-timestamp-after" => Ok(Route::SnapshotTimestampAfter));
        route!(Get, "/v0/closed-rounds" => Ok(Route::ClosedRounds));
        route!(Get, "/v0/coin-price/votes" => Ok(Route::CoinPriceVotes));
        route!(Get, "/v0/domains/d::1/parties/p::2/participant-id" => Ok(Route::PartyParticipant { domain_id: "d::1", party_id: "p::2" }));
        route!(Get, "/v0/roll-forward-lsu" => Ok(Route::RollForwardLsu));
        route!(Post, "/registry/transfer-instruction/v2/00ab/choice-contexts/reject" => Ok(Route::ChoiceContext { transfer_instruction_id: "00ab", choice: TransferChoice::Reject }));
        route!(Post, "/registry/transfer-instruction/v2/00ab/choice-contexts/accept" => Ok(Route::ChoiceContext { transfer_instruction_id: "00ab", choice: TransferChoice::Accept }));
        route!(Post, "/registry/transfer-instruction/v2/00ab/choice-contexts/withdraw" => Ok(Route::ChoiceContext { transfer_instruction_id: "00ab", choice: TransferChoice::Withdraw }));
        route!(Post, "/v0/wallet/buy-traffic-requests" => Ok(Route::BuyTraffic));
        route!(Post, "/v0/wallet/buy-traffic-requests/t-1/status" => Ok(Route::BuyTrafficStatus { tracking_id: "t-1" }));
        route!(Post, "/v0/admin/ingest" => Ok(Route::AdminIngest));
        route!(Post, "/v0/admin/tick" => Ok(Route::AdminTick));
        route!(Get, "/v0/admin/wallet/buy-traffic-requests" => Ok(Route::AdminBuyTrafficRequests));
        route!(Post, "/v0/admin/store-check" => Ok(Route::AdminStoreCheck));
        route!(Post, "/v0/admin/reset" => Ok(Route::AdminReset));
        route!(Method::Head, "/version" => Ok(Route::Version));
    }

    #[test]
    fn a_known_path_with_the_wrong_method_is_405() {
        route!(Post, "/version" => Err(RouteError::MethodNotAllowed { allowed: "GET" }));
        route!(Get, "/v0/admin/ingest" => Err(RouteError::MethodNotAllowed { allowed: "POST" }));
        route!(Method::Delete, "/v2/updates/x" => Err(RouteError::MethodNotAllowed { allowed: "GET" }));
        route!(Method::Other("BREW".into()), "/version" => Err(RouteError::MethodNotAllowed { allowed: "GET" }));
    }

    #[test]
    fn the_price_votes_path_follows_the_configured_coin() {
        route!(Get, "/v0/amulet-price/votes", "Amulet" => Ok(Route::CoinPriceVotes));
        route!(Method::Head, "/v0/amulet-price/votes", "Amulet" => Ok(Route::CoinPriceVotes));
        route!(Post, "/v0/amulet-price/votes", "Amulet" => Err(RouteError::MethodNotAllowed { allowed: "GET" }));
        // Another network's spelling is not this node's path, whatever the method.
        route!(Get, "/v0/coin-price/votes", "Amulet" => Err(RouteError::NotFound));
        route!(Post, "/v0/coin-price/votes", "Amulet" => Err(RouteError::NotFound));
        route!(Get, "/v0/amulet-price/votes", "Coin" => Err(RouteError::NotFound));
        route!(Get, "/v0/Amulet-price/votes", "Amulet" => Err(RouteError::NotFound));
        route!(Get, "/v0/-price/votes", "Amulet" => Err(RouteError::NotFound));
    }

    #[test]
    fn unknown_paths_are_404() {
        for path in [
            "",
            "/",
            "version",
            "/version/",
            "/v2/updates/",
            "/v2/updates",
            "/v3/updates/x",
            "/v2/updates/x/y",
            "//version",
            "/registry/transfer-instruction/v2/x/choice-contexts/explode",
            "/a/b/c/d/e/f/g/h/i/j",
        ] {
            route!(Get, path => Err(RouteError::NotFound));
        }
    }
}
