//! Routing: from a method and a path to a [`Route`], with its path parameters decoded.
//!
//! | method | path | route | also under |
//! |---|---|---|---|
//! | GET | `/version` | [`Route::Version`] | `/api/scan` |
//! | GET | `/openapi.json` | [`Route::OpenApi`] | `/api/scan` |
//! | GET | `/v2/updates/{update_id}` | [`Route::UpdateById`] (version 2) | `/api/scan` |
//! | GET | `/v1/updates/{update_id}` | [`Route::UpdateById`] (version 1) | `/api/scan` |
//! | GET | `/v0/internal/reward-accounting-process/rounds/earliest-available` | [`Route::EarliestRound`] | `/api/scan` |
//! | GET | `/v0/reward-accounting-process/rounds/earliest-available` | [`Route::EarliestRound`] (pre-0.6.5 alias) | `/api/scan` |
//! | POST | `/v0/backfilling/migration-info` | [`Route::MigrationInfo`] | `/api/scan` |
//! | POST | `/v2/updates` | [`Route::Updates`] (version 2) | `/api/scan` |
//! | POST | `/v1/updates` | [`Route::Updates`] (version 1) | `/api/scan` |
//! | POST | `/v0/backfilling/import-updates` | [`Route::ImportUpdates`] | `/api/scan` |
//! | POST | `/v0/backfilling/updates-before` | [`Route::UpdatesBefore`] | `/api/scan` |
//! | GET | `/v0/backfilling/status` | [`Route::BackfillingStatus`] | `/api/scan` |
//! | GET | `/v0/state/acs/snapshot-timestamp-after` | [`Route::SnapshotTimestampAfter`] | `/api/scan` |
//! | GET | `/v0/closed-rounds` | [`Route::ClosedRounds`] | `/api/scan` |
//! | GET | `/v0/{coin}-price/votes` | [`Route::CoinPriceVotes`] | `/api/scan` |
//! | GET | `/v0/domains/{domain_id}/parties/{party_id}/participant-id` | [`Route::PartyParticipant`] | `/api/scan` |
//! | GET | `/v1/domains/{domain_id}/parties/{party_id}/participant-id` | [`Route::PartyParticipants`] | `/api/scan` |
//! | GET | `/v0/roll-forward-lsu` | [`Route::RollForwardLsu`] | `/api/scan` |
//! | POST | `/registry/transfer-instruction/v2/{id}/choice-contexts/{reject,accept,withdraw}` | [`Route::ChoiceContext`] | `/api/scan` |
//! | POST | `/v0/wallet/buy-traffic-requests` | [`Route::BuyTraffic`] | `/api/validator` |
//! | POST | `/v0/wallet/buy-traffic-requests/{tracking_id}/status` | [`Route::BuyTrafficStatus`] | `/api/validator` |
//! | POST | `/v0/admin/ingest` | [`Route::AdminIngest`] | |
//! | POST | `/v0/admin/tick` | [`Route::AdminTick`] | |
//! | GET | `/v0/admin/wallet/buy-traffic-requests` | [`Route::AdminBuyTrafficRequests`] | |
//! | POST | `/v0/admin/store-check` | [`Route::AdminStoreCheck`] | |
//! | POST | `/v0/admin/reset` | [`Route::AdminReset`] | |
//! | POST | `/v0/admin/export/state` | [`Route::AdminExportState`] | |
//! | POST | `/v0/admin/export/blobs` | [`Route::AdminExportBlobs`] | |
//! | POST | `/v0/admin/export/sought-blobs` | [`Route::AdminExportSoughtBlobs`] | |
//! | GET | `/v0/dso-party-id` | [`ScanRoute::DsoPartyId`] | `/api/scan` |
//! | POST | `/v0/{coin}-rules` | [`ScanRoute::CoinRules`] | `/api/scan` |
//! | POST | `/v0/external-party-{coin}-rules` | [`ScanRoute::ExternalPartyCoinRules`] | `/api/scan` |
//! | POST | `/v0/ans-rules` | [`ScanRoute::AnsRules`] | `/api/scan` |
//! | POST | `/v0/open-and-issuing-mining-rounds` | [`ScanRoute::OpenAndIssuingRounds`] | `/api/scan` |
//! | GET | `/v0/dso` | [`ScanRoute::DsoInfo`] | `/api/scan` |
//! | GET | `/v0/dso-sequencers` | [`ScanRoute::DsoSequencers`] | `/api/scan` |
//! | GET | `/v0/scans` | [`ScanRoute::DsoScans`] | `/api/scan` |
//! | GET | `/v0/migrations/last` | [`ScanRoute::LastMigration`] | `/api/scan` |
//! | GET | `/v0/transfer-preapprovals/by-party/{party}` | [`ScanRoute::TransferPreapproval`] | `/api/scan` |
//! | GET | `/v0/featured-apps` | [`ScanRoute::FeaturedApps`] | `/api/scan` |
//! | GET | `/v0/featured-apps/{provider_party_id}` | [`ScanRoute::FeaturedApp`] | `/api/scan` |
//! | GET | `/v0/transfer-command-counter/{party}` | [`ScanRoute::TransferCommandCounter`] | `/api/scan` |
//! | GET | `/v0/transfer-command/status` | [`ScanRoute::TransferCommandStatus`] | `/api/scan` |
//! | GET | `/v0/ans-entries` | [`ScanRoute::AnsEntries`] | `/api/scan` |
//! | GET | `/v0/ans-entries/by-party/{party}` | [`ScanRoute::AnsEntryByParty`] | `/api/scan` |
//! | GET | `/v0/ans-entries/by-name/{name}` | [`ScanRoute::AnsEntryByName`] | `/api/scan` |
//! | GET | `/v0/unclaimed-development-fund-coupons` | [`ScanRoute::DevelopmentFundCoupons`] | `/api/scan` |
//! | GET | `/v0/admin/sv/voterequests` | [`ScanRoute::VoteRequests`] (public, as on the network) | `/api/scan` |
//! | GET | `/v0/admin/validator/licenses` | [`ScanRoute::ValidatorLicenses`] (public, as on the network) | `/api/scan` |
//! | GET | `/registry/metadata/v1/info` | [`RegistryRoute::Info`] | `/api/scan` |
//! | GET | `/registry/metadata/v1/instruments` | [`RegistryRoute::Instruments`] | `/api/scan` |
//! | GET | `/registry/metadata/v1/instruments/{instrumentId}` | [`RegistryRoute::Instrument`] | `/api/scan` |
//! | POST | `/registry/transfer-instruction/{v1,v2}/transfer-factory` | [`RegistryRoute::TransferFactory`] | `/api/scan` |
//! | POST | `/registry/transfer-instruction/v1/{id}/choice-contexts/{reject,accept,withdraw}` | [`RegistryRoute::ChoiceContextV1`] | `/api/scan` |
//! | POST | `/registry/allocation-instruction/{v1,v2}/allocation-factory` | [`RegistryRoute::AllocationFactory`] | `/api/scan` |
//! | POST | `/registry/allocations/v1/{allocationId}/choice-contexts/{execute-transfer,withdraw,cancel}` | [`RegistryRoute::AllocationContext`] | `/api/scan` |
//! | POST | `/registry/allocations/v2/{allocationId}/choice-contexts/{withdraw,cancel}` | [`RegistryRoute::AllocationContext`] | `/api/scan` |
//! | GET | `/livez` | [`Route::Livez`] | `/api/scan`, `/api/validator` |
//! | GET | `/readyz` | [`Route::Readyz`] | `/api/scan`, `/api/validator` |
//! | GET | `/status` | [`Route::Status`] | `/api/scan`, `/api/validator` |
//!
//! `{coin}` is the configured currency word in lower case (`coin` by default, `amulet`
//! for `LEDGER_NODE_NAMES_COIN=Amulet`; [`crate::model::names::ApiNames`]); only that spelling
//! is routed. The [`ScanRoute`]s are the network's scan reads of a validator and a
//! wallet ([`crate::api::scan`]); the two of them under `/v0/admin/` are public reads
//! there, as on the network, and answer under `/api/scan` too.
//!
//! ## Base paths
//!
//! Every route answers at the root, and most also under the base path ([`Base`]) that
//! clients of the network's own apps put in front of it, so they work unchanged
//! against the node: `/api/scan` for the history, state and registry endpoints (the
//! scan app's; `/api/scan/v0/closed-rounds`,
//! `/api/scan/registry/transfer-instruction/v2/{id}/choice-contexts/accept`), and
//! `/api/validator` for the wallet (the validator app's;
//! `/api/validator/v0/wallet/buy-traffic-requests`). A history endpoint added later
//! belongs under `/api/scan` too. The probes (`/livez`, `/readyz`) answer under both,
//! as each of those apps has its own (`/api/scan/readyz`, `/api/validator/livez`), so
//! probes written for them work unchanged. The admin endpoints answer at the root only,
//! and a route under a base path that is not its own is a 404
//! (`/api/validator/version`), as is a base path alone. [`Route::bases`] says which
//! bases a route has.
//!
//! A path that matches no row is a 404; a path that matches a row with another
//! method is a 405 that lists the allowed method.
//!
//! ## Templates
//!
//! [`template`] names the row a path matches, with its base path and its parameters
//! left as names (`/api/scan/v2/updates/{update_id}`): what a host labels a request
//! with in its metrics and logs, so that an id never becomes a label and the labels
//! are a bounded set.
//!
//! ## Path parameters
//!
//! The ids in a path are percent-decoded and checked here, once, into typed ids
//! ([`crate::model::ids`]). One that does not decode to UTF-8 or is too long still routes: the
//! route carries it as a [`PathParam`], the id or the error, and the handler answers
//! the 400 where its order of checks puts it (after the credentials of a protected
//! route, for one), so the order of checks is the same for every parameter.
//!
//! ## Classes
//!
//! Each route has a [`Class`] ([`Route::class`]): the pages and batches (the history
//! stream, the backfilling pages, ingest, the exports, the store check) are
//! [`Class::Bulk`], everything else [`Class::Interactive`]. The native host gives each
//! class its own component slots, so a flood of pages never delays a wallet request.

use crate::api::http::Method;
use crate::model::ids::{
    ContractId, EntryName, InstrumentId, PartyId, PathParam, SynchronizerId, TrackingId, UpdateId,
};
use crate::model::names::is_price_segment;

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

/// The choice an allocation's choice context is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocationChoice {
    /// `Allocation_ExecuteTransfer`
    ExecuteTransfer,
    /// `Allocation_Withdraw`
    Withdraw,
    /// `Allocation_Cancel`
    Cancel,
}

/// A routed request, with its path parameters decoded (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `GET /version`
    Version,
    /// `GET /openapi.json`: the node's OpenAPI document ([`crate::api::openapi`]).
    OpenApi,
    /// `GET /v{1,2}/updates/{update_id}`
    UpdateById {
        /// Which API version.
        api: UpdateApi,
        /// The update id.
        update_id: PathParam<UpdateId>,
    },
    /// `GET .../rounds/earliest-available`
    EarliestRound,
    /// `POST /v0/backfilling/migration-info`
    MigrationInfo,
    /// `POST /v{1,2}/updates`: a page of the history stream
    Updates {
        /// Which API version.
        api: UpdateApi,
    },
    /// `POST /v0/backfilling/import-updates`
    ImportUpdates,
    /// `POST /v0/backfilling/updates-before`
    UpdatesBefore,
    /// `GET /v0/backfilling/status`
    BackfillingStatus,
    /// `GET /v0/state/acs/snapshot-timestamp-after`
    SnapshotTimestampAfter,
    /// `GET /v0/closed-rounds`
    ClosedRounds,
    /// `GET /v0/{coin}-price/votes`
    CoinPriceVotes,
    /// `GET /v0/domains/{domain_id}/parties/{party_id}/participant-id`
    PartyParticipant {
        /// The synchronizer id.
        domain_id: PathParam<SynchronizerId>,
        /// The party id.
        party_id: PathParam<PartyId>,
    },
    /// `GET /v1/domains/{domain_id}/parties/{party_id}/participant-id`: every hosting
    /// participant.
    PartyParticipants {
        /// The synchronizer id.
        domain_id: PathParam<SynchronizerId>,
        /// The party id.
        party_id: PathParam<PartyId>,
    },
    /// `GET /v0/roll-forward-lsu`
    RollForwardLsu,
    /// `POST /registry/transfer-instruction/v2/{id}/choice-contexts/{choice}`
    ChoiceContext {
        /// The transfer instruction's contract id.
        transfer_instruction_id: PathParam<ContractId>,
        /// The choice the context is for.
        choice: TransferChoice,
    },
    /// `POST /v0/wallet/buy-traffic-requests`
    BuyTraffic,
    /// `POST /v0/wallet/buy-traffic-requests/{tracking_id}/status`
    BuyTrafficStatus {
        /// The tracking id.
        tracking_id: PathParam<TrackingId>,
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
    /// `POST /v0/admin/export/state`
    AdminExportState,
    /// `POST /v0/admin/export/blobs`
    AdminExportBlobs,
    /// `POST /v0/admin/export/sought-blobs`
    AdminExportSoughtBlobs,
    /// A scan read of a validator or a wallet ([`ScanRoute`]).
    Scan(ScanRoute),
    /// A token standard registry call besides the v2 choice contexts ([`RegistryRoute`]).
    Registry(RegistryRoute),
    /// `GET /livez`
    Livez,
    /// `GET /readyz`
    Readyz,
    /// `GET /status`: the network's `NodeStatus` ([`crate::api::health`])
    Status,
}

/// Which share of a host's capacity a route's requests use (see [`Route::class`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A page or a batch: an answer or a body that grows with the history (the
    /// history stream, the backfilling pages, ingest, the exports, the store check).
    Bulk,
    /// One object in and out: everything else (the wallet, the registry, the state).
    Interactive,
}

/// A base path that routes also answer under, besides the root (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// `/api/scan`: the history, state and registry endpoints.
    Scan,
    /// `/api/validator`: the wallet.
    Validator,
}

impl Base {
    /// Every base, in the order paths are tried against them.
    pub const ALL: [Base; 2] = [Base::Scan, Base::Validator];

    /// The path prefix, without a trailing slash.
    pub fn prefix(self) -> &'static str {
        match self {
            Base::Scan => "/api/scan",
            Base::Validator => "/api/validator",
        }
    }
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

impl Route {
    /// Routes `method` and `path` (no query string) for a node whose currency word is
    /// `coin` (`Config::names.coin`), which spells the price votes path.
    pub fn parse(method: &Method, path: &str, coin: &str) -> Result<Route, RouteError> {
        let (route, allowed) = Self::match_path(path, coin).ok_or(RouteError::NotFound)?;
        let method_ok = match allowed {
            "GET" => matches!(method, Method::Get | Method::Head),
            _ => method.as_str() == allowed,
        };
        if method_ok { Ok(route) } else { Err(RouteError::MethodNotAllowed { allowed }) }
    }

    /// The base paths this route also answers under; none: the root only.
    pub fn bases(&self) -> &'static [Base] {
        use Route::*;
        match self {
            Version
            | OpenApi
            | UpdateById { .. }
            | EarliestRound
            | MigrationInfo
            | Updates { .. }
            | ImportUpdates
            | UpdatesBefore
            | BackfillingStatus
            | SnapshotTimestampAfter
            | ClosedRounds
            | CoinPriceVotes
            | PartyParticipant { .. }
            | PartyParticipants { .. }
            | RollForwardLsu
            | ChoiceContext { .. }
            | Scan(_)
            | Registry(_) => &[Base::Scan],
            BuyTraffic | BuyTrafficStatus { .. } => &[Base::Validator],
            Livez | Readyz | Status => &Base::ALL,
            AdminIngest
            | AdminTick
            | AdminBuyTrafficRequests
            | AdminStoreCheck
            | AdminReset
            | AdminExportState
            | AdminExportBlobs
            | AdminExportSoughtBlobs => &[],
        }
    }

    /// The row of the routes table this route is, as a path at the root with its
    /// parameters named (module docs, "Templates"). The two paths of
    /// [`Route::EarliestRound`] are told apart by [`template`], which sees the path.
    pub fn template(&self) -> &'static str {
        use Route::*;
        match self {
            Version => "/version",
            OpenApi => "/openapi.json",
            UpdateById { api: UpdateApi::V2, .. } => "/v2/updates/{update_id}",
            UpdateById { api: UpdateApi::V1, .. } => "/v1/updates/{update_id}",
            EarliestRound => "/v0/internal/reward-accounting-process/rounds/earliest-available",
            MigrationInfo => "/v0/backfilling/migration-info",
            Updates { api: UpdateApi::V2 } => "/v2/updates",
            Updates { api: UpdateApi::V1 } => "/v1/updates",
            ImportUpdates => "/v0/backfilling/import-updates",
            UpdatesBefore => "/v0/backfilling/updates-before",
            BackfillingStatus => "/v0/backfilling/status",
            SnapshotTimestampAfter => "/v0/state/acs/snapshot-timestamp-after",
            ClosedRounds => "/v0/closed-rounds",
            CoinPriceVotes => "/v0/{coin}-price/votes",
            PartyParticipant { .. } => "/v0/domains/{domain_id}/parties/{party_id}/participant-id",
            PartyParticipants { .. } => "/v1/domains/{domain_id}/parties/{party_id}/participant-id",
            RollForwardLsu => "/v0/roll-forward-lsu",
            ChoiceContext { choice: TransferChoice::Reject, .. } => {
                "/registry/transfer-instruction/v2/{id}/choice-contexts/reject"
            }
            ChoiceContext { choice: TransferChoice::Accept, .. } => {
                "/registry/transfer-instruction/v2/{id}/choice-contexts/accept"
            }
            ChoiceContext { choice: TransferChoice::Withdraw, .. } => {
                "/registry/transfer-instruction/v2/{id}/choice-contexts/withdraw"
            }
            BuyTraffic => "/v0/wallet/buy-traffic-requests",
            BuyTrafficStatus { .. } => "/v0/wallet/buy-traffic-requests/{tracking_id}/status",
            AdminIngest => "/v0/admin/ingest",
            AdminTick => "/v0/admin/tick",
            AdminBuyTrafficRequests => "/v0/admin/wallet/buy-traffic-requests",
            AdminStoreCheck => "/v0/admin/store-check",
            AdminReset => "/v0/admin/reset",
            AdminExportState => "/v0/admin/export/state",
            AdminExportBlobs => "/v0/admin/export/blobs",
            AdminExportSoughtBlobs => "/v0/admin/export/sought-blobs",
            Scan(route) => route.template(),
            Registry(route) => route.template(),
            Livez => "/livez",
            Readyz => "/readyz",
            Status => "/status",
        }
    }

    /// Whether the route only reads, in a number of store calls that is fixed whatever
    /// the history holds: the scan reads, the token standard registry's calls and the
    /// v2 choice contexts (the store-read tests hold each to its count). A host may
    /// answer such a request on the thread that read it, as it answers a GET, rather
    /// than hand it to a pool: it takes tens of microseconds, less than the handoff.
    pub fn reads_a_fixed_amount(&self) -> bool {
        matches!(self, Route::Scan(_) | Route::Registry(_) | Route::ChoiceContext { .. })
    }

    /// The route's [`Class`]: a host that runs requests side by side gives each class
    /// capacity of its own, so that pages never hold up the wallet or the registry.
    pub fn class(&self) -> Class {
        use Route::*;
        match self {
            Updates { .. }
            | ImportUpdates
            | UpdatesBefore
            | AdminIngest
            | AdminStoreCheck
            | AdminExportState
            | AdminExportBlobs
            | AdminExportSoughtBlobs => Class::Bulk,
            Version
            | OpenApi
            | UpdateById { .. }
            | EarliestRound
            | MigrationInfo
            | BackfillingStatus
            | SnapshotTimestampAfter
            | ClosedRounds
            | CoinPriceVotes
            | PartyParticipant { .. }
            | PartyParticipants { .. }
            | RollForwardLsu
            | ChoiceContext { .. }
            | Scan(_)
            | Registry(_)
            | BuyTraffic
            | BuyTrafficStatus { .. }
            | AdminTick
            | AdminBuyTrafficRequests
            | AdminReset
            | Livez
            | Readyz
            | Status => Class::Interactive,
        }
    }

    /// The route a path names, at the root or under its base, with the one method it
    /// answers to.
    fn match_path(path: &str, coin: &str) -> Option<(Route, &'static str)> {
        for base in Base::ALL {
            if let Some(rest) = path.strip_prefix(base.prefix()).filter(|rest| rest.starts_with('/')) {
                return Self::match_root(rest, coin).filter(|(route, _)| route.bases().contains(&base));
            }
        }
        Self::match_root(path, coin)
    }

    /// The route a path names at the root, with the one method it answers to.
    fn match_root(path: &str, coin: &str) -> Option<(Route, &'static str)> {
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
            ["openapi.json"] => (OpenApi, "GET"),
            ["v2", "updates", id] => (UpdateById { api: UpdateApi::V2, update_id: update_id(id) }, "GET"),
            ["v1", "updates", id] => (UpdateById { api: UpdateApi::V1, update_id: update_id(id) }, "GET"),
            ["v0", "internal", "reward-accounting-process", "rounds", "earliest-available"]
            | ["v0", "reward-accounting-process", "rounds", "earliest-available"] => (EarliestRound, "GET"),
            ["v0", "backfilling", "migration-info"] => (MigrationInfo, "POST"),
            ["v2", "updates"] => (Updates { api: UpdateApi::V2 }, "POST"),
            ["v1", "updates"] => (Updates { api: UpdateApi::V1 }, "POST"),
            ["v0", "backfilling", "import-updates"] => (ImportUpdates, "POST"),
            ["v0", "backfilling", "updates-before"] => (UpdatesBefore, "POST"),
            ["v0", "backfilling", "status"] => (BackfillingStatus, "GET"),
            ["v0", "state", "acs", "snapshot-timestamp-after"] => (SnapshotTimestampAfter, "GET"),
            ["v0", "closed-rounds"] => (ClosedRounds, "GET"),
            ["v0", price, "votes"] if is_price_segment(price, coin) => (CoinPriceVotes, "GET"),
            ["v0", "domains", domain_id, "parties", party_id, "participant-id"] => {
                let (domain_id, party_id) = hosting_ids(domain_id, party_id);
                (PartyParticipant { domain_id, party_id }, "GET")
            }
            ["v1", "domains", domain_id, "parties", party_id, "participant-id"] => {
                let (domain_id, party_id) = hosting_ids(domain_id, party_id);
                (PartyParticipants { domain_id, party_id }, "GET")
            }
            ["v0", "roll-forward-lsu"] => (RollForwardLsu, "GET"),
            ["registry", "transfer-instruction", "v2", id, "choice-contexts", choice] => {
                let choice = match *choice {
                    "reject" => TransferChoice::Reject,
                    "accept" => TransferChoice::Accept,
                    "withdraw" => TransferChoice::Withdraw,
                    _ => return None,
                };
                let transfer_instruction_id = ContractId::from_path(id, "transfer_instruction_id");
                (ChoiceContext { transfer_instruction_id, choice }, "POST")
            }
            ["v0", "wallet", "buy-traffic-requests"] => (BuyTraffic, "POST"),
            ["v0", "wallet", "buy-traffic-requests", tracking_id, "status"] => {
                (BuyTrafficStatus { tracking_id: TrackingId::from_path(tracking_id, "tracking_id") }, "POST")
            }
            ["v0", "admin", "ingest"] => (AdminIngest, "POST"),
            ["v0", "admin", "tick"] => (AdminTick, "POST"),
            ["v0", "admin", "wallet", "buy-traffic-requests"] => (AdminBuyTrafficRequests, "GET"),
            ["v0", "admin", "store-check"] => (AdminStoreCheck, "POST"),
            ["v0", "admin", "reset"] => (AdminReset, "POST"),
            ["v0", "admin", "export", "state"] => (AdminExportState, "POST"),
            ["v0", "admin", "export", "blobs"] => (AdminExportBlobs, "POST"),
            ["v0", "admin", "export", "sought-blobs"] => (AdminExportSoughtBlobs, "POST"),
            ["livez"] => (Livez, "GET"),
            ["readyz"] => (Readyz, "GET"),
            ["status"] => (Status, "GET"),
            ["registry", ..] => {
                return RegistryRoute::match_segments(seg).map(|(route, method)| (Registry(route), method));
            }
            _ => return ScanRoute::match_segments(seg, coin).map(|(route, method)| (Scan(route), method)),
        };
        Some(found)
    }
}

/// The row of the routes table `path` matches, whatever the method (a 405 is labelled
/// with the row it missed): its base path, if under one, and its template (module
/// docs, "Templates"). `None` for a path that matches no row.
pub fn template(path: &str, coin: &str) -> Option<Template> {
    let (route, _) = Route::match_path(path, coin)?;
    let base = Base::ALL.into_iter().find(|base| path.starts_with(base.prefix()) && route.bases().contains(base));
    let root = match route {
        Route::EarliestRound if !path.contains("/v0/internal/") => {
            "/v0/reward-accounting-process/rounds/earliest-available"
        }
        route => route.template(),
    };
    Some(Template { base, root })
}

/// A route template ([`template`]); displayed as the full path (`/api/scan/version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    /// The base path the request came under, if any.
    pub base: Option<Base>,
    /// The template at the root.
    pub root: &'static str,
}

impl core::fmt::Display for Template {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if let Some(base) = self.base {
            f.write_str(base.prefix())?;
        }
        f.write_str(self.root)
    }
}

/// The network's scan reads of a validator and a wallet ([`crate::api::scan`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanRoute {
    /// `GET /v0/dso-party-id`
    DsoPartyId,
    /// `POST /v0/{coin}-rules`
    CoinRules,
    /// `POST /v0/external-party-{coin}-rules`
    ExternalPartyCoinRules,
    /// `POST /v0/ans-rules`
    AnsRules,
    /// `POST /v0/open-and-issuing-mining-rounds`
    OpenAndIssuingRounds,
    /// `GET /v0/dso`
    DsoInfo,
    /// `GET /v0/dso-sequencers`
    DsoSequencers,
    /// `GET /v0/scans`
    DsoScans,
    /// `GET /v0/migrations/last`
    LastMigration,
    /// `GET /v0/transfer-preapprovals/by-party/{party}`
    TransferPreapproval {
        /// The receiver.
        party: PathParam<PartyId>,
    },
    /// `GET /v0/featured-apps`
    FeaturedApps,
    /// `GET /v0/featured-apps/{provider_party_id}`
    FeaturedApp {
        /// The provider.
        provider_party_id: PathParam<PartyId>,
    },
    /// `GET /v0/transfer-command-counter/{party}`
    TransferCommandCounter {
        /// The sender.
        party: PathParam<PartyId>,
    },
    /// `GET /v0/transfer-command/status?sender=&nonce=`
    TransferCommandStatus,
    /// `GET /v0/ans-entries`
    AnsEntries,
    /// `GET /v0/ans-entries/by-party/{party}`
    AnsEntryByParty {
        /// The entry's user.
        party: PathParam<PartyId>,
    },
    /// `GET /v0/ans-entries/by-name/{name}`
    AnsEntryByName {
        /// The entry's name.
        name: PathParam<EntryName>,
    },
    /// `GET /v0/unclaimed-development-fund-coupons`
    DevelopmentFundCoupons,
    /// `GET /v0/admin/sv/voterequests`
    VoteRequests,
    /// `GET /v0/admin/validator/licenses`
    ValidatorLicenses,
}

impl ScanRoute {
    /// This read's row of the routes table ([`Route::template`]).
    fn template(&self) -> &'static str {
        use ScanRoute::*;
        match self {
            DsoPartyId => "/v0/dso-party-id",
            CoinRules => "/v0/{coin}-rules",
            ExternalPartyCoinRules => "/v0/external-party-{coin}-rules",
            AnsRules => "/v0/ans-rules",
            OpenAndIssuingRounds => "/v0/open-and-issuing-mining-rounds",
            DsoInfo => "/v0/dso",
            DsoSequencers => "/v0/dso-sequencers",
            DsoScans => "/v0/scans",
            LastMigration => "/v0/migrations/last",
            TransferPreapproval { .. } => "/v0/transfer-preapprovals/by-party/{party}",
            FeaturedApps => "/v0/featured-apps",
            FeaturedApp { .. } => "/v0/featured-apps/{provider_party_id}",
            TransferCommandCounter { .. } => "/v0/transfer-command-counter/{party}",
            TransferCommandStatus => "/v0/transfer-command/status",
            AnsEntries => "/v0/ans-entries",
            AnsEntryByParty { .. } => "/v0/ans-entries/by-party/{party}",
            AnsEntryByName { .. } => "/v0/ans-entries/by-name/{name}",
            DevelopmentFundCoupons => "/v0/unclaimed-development-fund-coupons",
            VoteRequests => "/v0/admin/sv/voterequests",
            ValidatorLicenses => "/v0/admin/validator/licenses",
        }
    }

    /// The scan read `seg` names at the root, with its method; `coin` spells the coin
    /// rules paths.
    fn match_segments(seg: &[&str], coin: &str) -> Option<(ScanRoute, &'static str)> {
        use ScanRoute::*;
        let party = |raw: &str| PartyId::from_path(raw, "party");
        Some(match seg {
            ["v0", "dso-party-id"] => (DsoPartyId, "GET"),
            ["v0", rules] if is_coin_segment(rules, "", coin, "-rules") => (CoinRules, "POST"),
            ["v0", rules] if is_coin_segment(rules, "external-party-", coin, "-rules") => {
                (ExternalPartyCoinRules, "POST")
            }
            ["v0", "ans-rules"] => (AnsRules, "POST"),
            ["v0", "open-and-issuing-mining-rounds"] => (OpenAndIssuingRounds, "POST"),
            ["v0", "dso"] => (DsoInfo, "GET"),
            ["v0", "dso-sequencers"] => (DsoSequencers, "GET"),
            ["v0", "scans"] => (DsoScans, "GET"),
            ["v0", "migrations", "last"] => (LastMigration, "GET"),
            ["v0", "transfer-preapprovals", "by-party", raw] => (TransferPreapproval { party: party(raw) }, "GET"),
            ["v0", "featured-apps"] => (FeaturedApps, "GET"),
            ["v0", "featured-apps", raw] => {
                (FeaturedApp { provider_party_id: PartyId::from_path(raw, "provider_party_id") }, "GET")
            }
            ["v0", "transfer-command-counter", raw] => (TransferCommandCounter { party: party(raw) }, "GET"),
            ["v0", "transfer-command", "status"] => (TransferCommandStatus, "GET"),
            ["v0", "ans-entries"] => (AnsEntries, "GET"),
            ["v0", "ans-entries", "by-party", raw] => (AnsEntryByParty { party: party(raw) }, "GET"),
            ["v0", "ans-entries", "by-name", raw] => {
                (AnsEntryByName { name: EntryName::from_path(raw, "name") }, "GET")
            }
            ["v0", "unclaimed-development-fund-coupons"] => (DevelopmentFundCoupons, "GET"),
            ["v0", "admin", "sv", "voterequests"] => (VoteRequests, "GET"),
            ["v0", "admin", "validator", "licenses"] => (ValidatorLicenses, "GET"),
            _ => return None,
        })
    }
}

/// Which version of a token standard registry API a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegistryApi {
    /// `/registry/.../v1/...`
    V1,
    /// `/registry/.../v2/...`
    V2,
}

/// The token standard registry's calls besides the v2 choice contexts
/// ([`Route::ChoiceContext`]); see [`crate::api::registry`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryRoute {
    /// `GET /registry/metadata/v1/info`
    Info,
    /// `GET /registry/metadata/v1/instruments`
    Instruments,
    /// `GET /registry/metadata/v1/instruments/{instrumentId}`
    Instrument {
        /// The instrument id.
        instrument_id: PathParam<InstrumentId>,
    },
    /// `POST /registry/transfer-instruction/{v1,v2}/transfer-factory`
    TransferFactory {
        /// Which API version.
        api: RegistryApi,
    },
    /// `POST /registry/transfer-instruction/v1/{id}/choice-contexts/{choice}`: the same
    /// context as the v2 path.
    ChoiceContextV1 {
        /// The transfer instruction's contract id.
        transfer_instruction_id: PathParam<ContractId>,
        /// The choice the context is for.
        choice: TransferChoice,
    },
    /// `POST /registry/allocation-instruction/{v1,v2}/allocation-factory`
    AllocationFactory {
        /// Which API version.
        api: RegistryApi,
    },
    /// `POST /registry/allocations/{v1,v2}/{allocationId}/choice-contexts/{choice}` (v2
    /// has no `execute-transfer`: its settlement is not a choice on the allocation).
    AllocationContext {
        /// Which API version.
        api: RegistryApi,
        /// The allocation's contract id.
        allocation_id: PathParam<ContractId>,
        /// The choice the context is for.
        choice: AllocationChoice,
    },
}

impl RegistryRoute {
    /// This call's row of the routes table ([`Route::template`]).
    fn template(&self) -> &'static str {
        use RegistryRoute::*;
        match self {
            Info => "/registry/metadata/v1/info",
            Instruments => "/registry/metadata/v1/instruments",
            Instrument { .. } => "/registry/metadata/v1/instruments/{instrumentId}",
            TransferFactory { api: RegistryApi::V1 } => "/registry/transfer-instruction/v1/transfer-factory",
            TransferFactory { api: RegistryApi::V2 } => "/registry/transfer-instruction/v2/transfer-factory",
            ChoiceContextV1 { choice: TransferChoice::Reject, .. } => {
                "/registry/transfer-instruction/v1/{id}/choice-contexts/reject"
            }
            ChoiceContextV1 { choice: TransferChoice::Accept, .. } => {
                "/registry/transfer-instruction/v1/{id}/choice-contexts/accept"
            }
            ChoiceContextV1 { choice: TransferChoice::Withdraw, .. } => {
                "/registry/transfer-instruction/v1/{id}/choice-contexts/withdraw"
            }
            AllocationFactory { api: RegistryApi::V1 } => "/registry/allocation-instruction/v1/allocation-factory",
            AllocationFactory { api: RegistryApi::V2 } => "/registry/allocation-instruction/v2/allocation-factory",
            AllocationContext { api: RegistryApi::V1, choice: AllocationChoice::ExecuteTransfer, .. } => {
                "/registry/allocations/v1/{allocationId}/choice-contexts/execute-transfer"
            }
            AllocationContext { api: RegistryApi::V1, choice: AllocationChoice::Withdraw, .. } => {
                "/registry/allocations/v1/{allocationId}/choice-contexts/withdraw"
            }
            AllocationContext { api: RegistryApi::V1, choice: AllocationChoice::Cancel, .. } => {
                "/registry/allocations/v1/{allocationId}/choice-contexts/cancel"
            }
            AllocationContext { api: RegistryApi::V2, choice: AllocationChoice::Withdraw, .. } => {
                "/registry/allocations/v2/{allocationId}/choice-contexts/withdraw"
            }
            AllocationContext { api: RegistryApi::V2, choice: AllocationChoice::Cancel, .. } => {
                "/registry/allocations/v2/{allocationId}/choice-contexts/cancel"
            }
            // Never routed (v2 settles through a factory, not a choice on the allocation).
            AllocationContext { api: RegistryApi::V2, choice: AllocationChoice::ExecuteTransfer, .. } => {
                "/registry/allocations/v2/{allocationId}/choice-contexts/execute-transfer"
            }
        }
    }

    /// The registry call `seg` names at the root, with its method.
    fn match_segments(seg: &[&str]) -> Option<(RegistryRoute, &'static str)> {
        use RegistryRoute::*;
        Some(match seg {
            ["registry", "metadata", "v1", "info"] => (Info, "GET"),
            ["registry", "metadata", "v1", "instruments"] => (Instruments, "GET"),
            ["registry", "metadata", "v1", "instruments", raw] => {
                (Instrument { instrument_id: InstrumentId::from_path(raw, "instrumentId") }, "GET")
            }
            ["registry", "transfer-instruction", "v1", "transfer-factory"] => {
                (TransferFactory { api: RegistryApi::V1 }, "POST")
            }
            ["registry", "transfer-instruction", "v2", "transfer-factory"] => {
                (TransferFactory { api: RegistryApi::V2 }, "POST")
            }
            ["registry", "transfer-instruction", "v1", id, "choice-contexts", choice] => {
                let choice = match *choice {
                    "reject" => TransferChoice::Reject,
                    "accept" => TransferChoice::Accept,
                    "withdraw" => TransferChoice::Withdraw,
                    _ => return None,
                };
                let transfer_instruction_id = ContractId::from_path(id, "transfer_instruction_id");
                (ChoiceContextV1 { transfer_instruction_id, choice }, "POST")
            }
            ["registry", "allocation-instruction", "v1", "allocation-factory"] => {
                (AllocationFactory { api: RegistryApi::V1 }, "POST")
            }
            ["registry", "allocation-instruction", "v2", "allocation-factory"] => {
                (AllocationFactory { api: RegistryApi::V2 }, "POST")
            }
            ["registry", "allocations", version, id, "choice-contexts", choice] => {
                let api = match *version {
                    "v1" => RegistryApi::V1,
                    "v2" => RegistryApi::V2,
                    _ => return None,
                };
                let choice = match (*choice, api) {
                    ("execute-transfer", RegistryApi::V1) => AllocationChoice::ExecuteTransfer,
                    ("withdraw", _) => AllocationChoice::Withdraw,
                    ("cancel", _) => AllocationChoice::Cancel,
                    _ => return None,
                };
                let allocation_id = ContractId::from_path(id, "allocationId");
                (AllocationContext { api, allocation_id, choice }, "POST")
            }
            _ => return None,
        })
    }
}

/// Whether `segment` is `before`, the currency word `coin` in lower case, then `after`,
/// compared without allocating.
fn is_coin_segment(segment: &str, before: &str, coin: &str, after: &str) -> bool {
    segment.strip_prefix(before).and_then(|rest| rest.strip_suffix(after)).is_some_and(|word| {
        !word.is_empty()
            && word.len() == coin.len()
            && word.bytes().zip(coin.bytes()).all(|(w, c)| w == c.to_ascii_lowercase())
    })
}

/// The update id of `GET /v{1,2}/updates/{update_id}`.
fn update_id(raw: &str) -> PathParam<UpdateId> {
    UpdateId::from_path(raw, "update_id")
}

/// The synchronizer and party ids of the hosting routes.
fn hosting_ids(domain_id: &str, party_id: &str) -> (PathParam<SynchronizerId>, PathParam<PartyId>) {
    (SynchronizerId::from_path(domain_id, "domain_id"), PartyId::from_path(party_id, "party_id"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Method::{Get, Post};
    use alloc::string::ToString;
    use alloc::vec::Vec;

    macro_rules! route {
        ($method:expr, $path:expr => $expected:expr) => {
            route!($method, $path, "Coin" => $expected)
        };
        ($method:expr, $path:expr, $coin:expr => $expected:expr) => {
            assert_eq!(Route::parse(&$method, $path, $coin), $expected, "{} {} ({})", $method.as_str(), $path, $coin)
        };
    }

    /// The path parameters of the routes below as the router decodes them (their texts
    /// need no decoding).
    fn update_id(id: &str) -> PathParam<UpdateId> {
        Ok(UpdateId::parse("update_id", id).unwrap())
    }
    fn domain(id: &str) -> PathParam<SynchronizerId> {
        Ok(SynchronizerId::parse("domain_id", id).unwrap())
    }
    fn party(id: &str) -> PathParam<PartyId> {
        Ok(PartyId::parse("party_id", id).unwrap())
    }
    fn instruction(id: &str) -> PathParam<ContractId> {
        Ok(ContractId::parse("transfer_instruction_id", id).unwrap())
    }
    fn tracking(id: &str) -> PathParam<TrackingId> {
        Ok(TrackingId::parse("tracking_id", id).unwrap())
    }

    /// Every route, by a path at the root, with the method it answers to.
    fn every_route() -> [(Method, &'static str, Route); 69] {
        let choice = |choice| Route::ChoiceContext { transfer_instruction_id: instruction("00ab"), choice };
        let allocation = |api, choice| {
            let allocation_id = Ok(ContractId::parse("allocationId", "00ab").unwrap());
            Route::Registry(RegistryRoute::AllocationContext { api, allocation_id, choice })
        };
        let choice_v1 = |choice| {
            Route::Registry(RegistryRoute::ChoiceContextV1 { transfer_instruction_id: instruction("00ab"), choice })
        };
        [
            (Get, "/version", Route::Version),
            (Get, "/openapi.json", Route::OpenApi),
            (Get, "/v2/updates/abc", Route::UpdateById { api: UpdateApi::V2, update_id: update_id("abc") }),
            (Get, "/v1/updates/abc", Route::UpdateById { api: UpdateApi::V1, update_id: update_id("abc") }),
            (Get, "/v0/internal/reward-accounting-process/rounds/earliest-available", Route::EarliestRound),
            (Get, "/v0/reward-accounting-process/rounds/earliest-available", Route::EarliestRound),
            (Post, "/v0/backfilling/migration-info", Route::MigrationInfo),
            (Post, "/v2/updates", Route::Updates { api: UpdateApi::V2 }),
            (Post, "/v1/updates", Route::Updates { api: UpdateApi::V1 }),
            (Post, "/v0/backfilling/import-updates", Route::ImportUpdates),
            (Post, "/v0/backfilling/updates-before", Route::UpdatesBefore),
            (Get, "/v0/backfilling/status", Route::BackfillingStatus),
            (Get, "/v0/state/acs/snapshot-timestamp-after", Route::SnapshotTimestampAfter),
            (Get, "/v0/closed-rounds", Route::ClosedRounds),
            (Get, "/v0/coin-price/votes", Route::CoinPriceVotes),
            (
                Get,
                "/v0/domains/d::1/parties/p::2/participant-id",
                Route::PartyParticipant { domain_id: domain("d::1"), party_id: party("p::2") },
            ),
            (
                Get,
                "/v1/domains/d::1/parties/p::2/participant-id",
                Route::PartyParticipants { domain_id: domain("d::1"), party_id: party("p::2") },
            ),
            (Get, "/v0/roll-forward-lsu", Route::RollForwardLsu),
            (Post, "/registry/transfer-instruction/v2/00ab/choice-contexts/reject", choice(TransferChoice::Reject)),
            (Post, "/registry/transfer-instruction/v2/00ab/choice-contexts/accept", choice(TransferChoice::Accept)),
            (Post, "/registry/transfer-instruction/v2/00ab/choice-contexts/withdraw", choice(TransferChoice::Withdraw)),
            (Get, "/registry/metadata/v1/info", Route::Registry(RegistryRoute::Info)),
            (Get, "/registry/metadata/v1/instruments", Route::Registry(RegistryRoute::Instruments)),
            (
                Get,
                "/registry/metadata/v1/instruments/Coin",
                Route::Registry(RegistryRoute::Instrument {
                    instrument_id: Ok(InstrumentId::parse("instrumentId", "Coin").unwrap()),
                }),
            ),
            (
                Post,
                "/registry/transfer-instruction/v1/transfer-factory",
                Route::Registry(RegistryRoute::TransferFactory { api: RegistryApi::V1 }),
            ),
            (
                Post,
                "/registry/transfer-instruction/v2/transfer-factory",
                Route::Registry(RegistryRoute::TransferFactory { api: RegistryApi::V2 }),
            ),
            (Post, "/registry/transfer-instruction/v1/00ab/choice-contexts/reject", choice_v1(TransferChoice::Reject)),
            (Post, "/registry/transfer-instruction/v1/00ab/choice-contexts/accept", choice_v1(TransferChoice::Accept)),
            (
                Post,
                "/registry/transfer-instruction/v1/00ab/choice-contexts/withdraw",
                choice_v1(TransferChoice::Withdraw),
            ),
            (
                Post,
                "/registry/allocation-instruction/v1/allocation-factory",
                Route::Registry(RegistryRoute::AllocationFactory { api: RegistryApi::V1 }),
            ),
            (
                Post,
                "/registry/allocation-instruction/v2/allocation-factory",
                Route::Registry(RegistryRoute::AllocationFactory { api: RegistryApi::V2 }),
            ),
            (
                Post,
                "/registry/allocations/v1/00ab/choice-contexts/execute-transfer",
                allocation(RegistryApi::V1, AllocationChoice::ExecuteTransfer),
            ),
            (
                Post,
                "/registry/allocations/v1/00ab/choice-contexts/withdraw",
                allocation(RegistryApi::V1, AllocationChoice::Withdraw),
            ),
            (
                Post,
                "/registry/allocations/v1/00ab/choice-contexts/cancel",
                allocation(RegistryApi::V1, AllocationChoice::Cancel),
            ),
            (
                Post,
                "/registry/allocations/v2/00ab/choice-contexts/withdraw",
                allocation(RegistryApi::V2, AllocationChoice::Withdraw),
            ),
            (
                Post,
                "/registry/allocations/v2/00ab/choice-contexts/cancel",
                allocation(RegistryApi::V2, AllocationChoice::Cancel),
            ),
            (Post, "/v0/wallet/buy-traffic-requests", Route::BuyTraffic),
            (
                Post,
                "/v0/wallet/buy-traffic-requests/t-1/status",
                Route::BuyTrafficStatus { tracking_id: tracking("t-1") },
            ),
            (Post, "/v0/admin/ingest", Route::AdminIngest),
            (Post, "/v0/admin/tick", Route::AdminTick),
            (Get, "/v0/admin/wallet/buy-traffic-requests", Route::AdminBuyTrafficRequests),
            (Post, "/v0/admin/store-check", Route::AdminStoreCheck),
            (Post, "/v0/admin/reset", Route::AdminReset),
            (Post, "/v0/admin/export/state", Route::AdminExportState),
            (Post, "/v0/admin/export/blobs", Route::AdminExportBlobs),
            (Post, "/v0/admin/export/sought-blobs", Route::AdminExportSoughtBlobs),
            (Get, "/livez", Route::Livez),
            (Get, "/readyz", Route::Readyz),
            (Get, "/status", Route::Status),
            (Get, "/v0/dso-party-id", Route::Scan(ScanRoute::DsoPartyId)),
            (Post, "/v0/coin-rules", Route::Scan(ScanRoute::CoinRules)),
            (Post, "/v0/external-party-coin-rules", Route::Scan(ScanRoute::ExternalPartyCoinRules)),
            (Post, "/v0/ans-rules", Route::Scan(ScanRoute::AnsRules)),
            (Post, "/v0/open-and-issuing-mining-rounds", Route::Scan(ScanRoute::OpenAndIssuingRounds)),
            (Get, "/v0/dso", Route::Scan(ScanRoute::DsoInfo)),
            (Get, "/v0/dso-sequencers", Route::Scan(ScanRoute::DsoSequencers)),
            (Get, "/v0/scans", Route::Scan(ScanRoute::DsoScans)),
            (Get, "/v0/migrations/last", Route::Scan(ScanRoute::LastMigration)),
            (
                Get,
                "/v0/transfer-preapprovals/by-party/p::2",
                Route::Scan(ScanRoute::TransferPreapproval { party: scan_party("party", "p::2") }),
            ),
            (Get, "/v0/featured-apps", Route::Scan(ScanRoute::FeaturedApps)),
            (
                Get,
                "/v0/featured-apps/p::2",
                Route::Scan(ScanRoute::FeaturedApp { provider_party_id: scan_party("provider_party_id", "p::2") }),
            ),
            (
                Get,
                "/v0/transfer-command-counter/p::2",
                Route::Scan(ScanRoute::TransferCommandCounter { party: scan_party("party", "p::2") }),
            ),
            (Get, "/v0/transfer-command/status", Route::Scan(ScanRoute::TransferCommandStatus)),
            (Get, "/v0/ans-entries", Route::Scan(ScanRoute::AnsEntries)),
            (
                Get,
                "/v0/ans-entries/by-party/p::2",
                Route::Scan(ScanRoute::AnsEntryByParty { party: scan_party("party", "p::2") }),
            ),
            (
                Get,
                "/v0/ans-entries/by-name/a.ans",
                Route::Scan(ScanRoute::AnsEntryByName { name: Ok(EntryName::parse("name", "a.ans").unwrap()) }),
            ),
            (Get, "/v0/unclaimed-development-fund-coupons", Route::Scan(ScanRoute::DevelopmentFundCoupons)),
            (Get, "/v0/admin/sv/voterequests", Route::Scan(ScanRoute::VoteRequests)),
            (Get, "/v0/admin/validator/licenses", Route::Scan(ScanRoute::ValidatorLicenses)),
        ]
    }

    fn scan_party(field: &str, id: &str) -> PathParam<PartyId> {
        Ok(PartyId::parse(field, id).unwrap())
    }

    #[test]
    fn the_coin_rules_paths_follow_the_configured_coin() {
        let rules = Ok(Route::Scan(ScanRoute::CoinRules));
        let external = Ok(Route::Scan(ScanRoute::ExternalPartyCoinRules));
        route!(Post, "/v0/amulet-rules", "Amulet" => rules.clone());
        route!(Post, "/api/scan/v0/external-party-amulet-rules", "Amulet" => external);
        route!(Post, "/v0/coin-rules", "Amulet" => Err(RouteError::NotFound));
        route!(Post, "/v0/external-party-coin-rules", "Amulet" => Err(RouteError::NotFound));
        route!(Get, "/v0/amulet-rules", "Amulet" => Err(RouteError::MethodNotAllowed { allowed: "POST" }));
        route!(Post, "/v0/Amulet-rules", "Amulet" => Err(RouteError::NotFound));
        route!(Post, "/v0/-rules", "Amulet" => Err(RouteError::NotFound));
        // The network's public reads under /v0/admin/ answer under /api/scan; the node's own
        // admin routes do not.
        route!(Get, "/api/scan/v0/admin/sv/voterequests" => Ok(Route::Scan(ScanRoute::VoteRequests)));
        route!(Post, "/api/scan/v0/admin/ingest" => Err(RouteError::NotFound));
    }

    #[test]
    fn every_route_is_found_at_the_root_with_its_method() {
        for (method, path, want) in every_route() {
            route!(method, path => Ok(want));
        }
        route!(Method::Head, "/version" => Ok(Route::Version));
        route!(Method::Head, "/livez" => Ok(Route::Livez));
        route!(Method::Head, "/readyz" => Ok(Route::Readyz));
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
    fn every_route_answers_under_its_own_base_path_and_is_404_under_the_others() {
        for (method, path, want) in every_route() {
            for base in Base::ALL {
                let prefixed = alloc::format!("{}{path}", base.prefix());
                let got = Route::parse(&method, &prefixed, "Coin");
                if want.bases().contains(&base) {
                    assert_eq!(got, Ok(want.clone()), "{prefixed}");
                    let other = if method == Get { Post } else { Get };
                    assert!(matches!(
                        Route::parse(&other, &prefixed, "Coin"),
                        Err(RouteError::MethodNotAllowed { .. })
                    ));
                } else {
                    assert_eq!(got, Err(RouteError::NotFound), "{prefixed}");
                }
            }
        }
    }

    #[test]
    fn base_paths_are_the_scan_apps_and_the_validator_apps() {
        route!(Get, "/api/scan/version" => Ok(Route::Version));
        route!(Get, "/api/scan/v0/closed-rounds" => Ok(Route::ClosedRounds));
        route!(Get, "/api/scan/v0/amulet-price/votes", "Amulet" => Ok(Route::CoinPriceVotes));
        route!(Get, "/api/scan/v0/coin-price/votes", "Amulet" => Err(RouteError::NotFound));
        route!(Post, "/api/scan/registry/transfer-instruction/v2/00ab/choice-contexts/accept" => Ok(Route::ChoiceContext { transfer_instruction_id: instruction("00ab"), choice: TransferChoice::Accept }));
        route!(Post, "/api/validator/v0/wallet/buy-traffic-requests" => Ok(Route::BuyTraffic));
        route!(Method::Head, "/api/scan/v0/roll-forward-lsu" => Ok(Route::RollForwardLsu));
        route!(Get, "/api/scan/v0/closed-rounds/" => Err(RouteError::NotFound));
        // Each app has its own probes.
        route!(Get, "/api/scan/readyz" => Ok(Route::Readyz));
        route!(Get, "/api/validator/livez" => Ok(Route::Livez));
        route!(Method::Head, "/api/validator/readyz" => Ok(Route::Readyz));
        for path in [
            "/api/scan",
            "/api/scan/",
            "/api/validator",
            "/api/scanner/version",
            "/api/scan/api/scan/version",
            "/api/scan/v0/admin/ingest",
            "/api/validator/v0/admin/ingest",
            "/api/validator/version",
            "/api/validator/registry/transfer-instruction/v2/00ab/choice-contexts/accept",
            "/api/scan/v0/wallet/buy-traffic-requests",
            "/api/v0/closed-rounds",
            "/API/SCAN/version",
        ] {
            route!(Get, path => Err(RouteError::NotFound));
            route!(Post, path => Err(RouteError::NotFound));
        }
    }

    #[test]
    fn the_stream_and_an_update_by_id_differ_by_method_and_segments() {
        route!(Get, "/v2/updates" => Err(RouteError::MethodNotAllowed { allowed: "POST" }));
        route!(Post, "/v2/updates/abc" => Err(RouteError::MethodNotAllowed { allowed: "GET" }));
        route!(Post, "/api/scan/v2/updates" => Ok(Route::Updates { api: UpdateApi::V2 }));
        route!(Get, "/api/scan/v0/backfilling/status" => Ok(Route::BackfillingStatus));
    }

    #[test]
    fn path_parameters_are_decoded_and_a_bad_one_still_routes_carrying_its_error() {
        route!(Get, "/v2/updates/a%2Fb%20c" => Ok(Route::UpdateById { api: UpdateApi::V2, update_id: update_id("a/b c") }));
        route!(Post, "/v0/wallet/buy-traffic-requests/t%3A1/status" => Ok(Route::BuyTrafficStatus { tracking_id: tracking("t:1") }));
        let message = |route: Result<Route, RouteError>| match route {
            Ok(Route::PartyParticipants { domain_id: Ok(_), party_id: Err(bad) }) => {
                crate::model::error::Error::from(bad).to_string()
            }
            other => panic!("want a bad party id, got {other:?}"),
        };
        let bad_utf8 = Route::parse(&Get, "/v1/domains/d/parties/%FF/participant-id", "Coin");
        assert_eq!(message(bad_utf8), "path parameter party_id is not valid percent-encoded UTF-8");
        let long = alloc::format!("/v1/domains/d/parties/{}/participant-id", "%70".repeat(513));
        let too_long = Route::parse(&Get, &long, "Coin");
        assert_eq!(message(too_long), "party_id is 513 bytes long; ids are at most 512 bytes");
        // The method is still checked: a bad id does not turn a 405 into a route.
        route!(Get, "/v0/wallet/buy-traffic-requests/%zz/status" => Err(RouteError::MethodNotAllowed { allowed: "POST" }));
    }

    #[test]
    fn pages_and_batches_are_bulk_and_the_wallet_and_registry_are_interactive() {
        let class = |method: Method, path: &str| Route::parse(&method, path, "coin").map(|r| r.class());
        for path in ["/v2/updates", "/v1/updates", "/v0/backfilling/updates-before", "/v0/admin/ingest"] {
            assert_eq!(class(Method::Post, path), Ok(Class::Bulk), "{path}");
        }
        for (method, path) in [
            (Method::Post, "/v0/wallet/buy-traffic-requests"),
            (Method::Post, "/registry/transfer-instruction/v2/00ab/choice-contexts/accept"),
            (Method::Post, "/v0/backfilling/migration-info"),
            (Method::Get, "/v2/updates/abc"),
        ] {
            assert_eq!(class(method, path), Ok(Class::Interactive), "{path}");
        }
    }

    #[test]
    fn only_the_scan_reads_and_the_registry_read_a_fixed_amount() {
        // Writes, pages and batches go to a host's pool.
        for (method, path, fixed) in [
            (Method::Post, "/registry/transfer-instruction/v2/00ab/choice-contexts/reject", true),
            (Method::Post, "/registry/transfer-instruction/v1/00ab/choice-contexts/accept", true),
            (Method::Post, "/registry/transfer-instruction/v1/transfer-factory", true),
            (Method::Post, "/registry/allocation-instruction/v1/allocation-factory", true),
            (Method::Get, "/registry/metadata/v1/info", true),
            (Method::Post, "/v0/open-and-issuing-mining-rounds", true),
            (Method::Post, "/v0/coin-rules", true),
            (Method::Get, "/v0/dso", true),
            (Method::Post, "/v0/wallet/buy-traffic-requests", false),
            (Method::Post, "/v0/wallet/buy-traffic-requests/t/status", false),
            (Method::Post, "/v0/admin/ingest", false),
            (Method::Post, "/v0/admin/reset", false),
            (Method::Post, "/v0/admin/tick", false),
            (Method::Post, "/v2/updates", false),
            (Method::Post, "/v0/backfilling/updates-before", false),
            (Method::Post, "/v0/admin/export/state", false),
        ] {
            let route = Route::parse(&method, path, "coin").map(|r| r.reads_a_fixed_amount());
            assert_eq!(route, Ok(fixed), "{path}");
        }
    }

    /// Whether `path` is an instance of `template`: the same segments, a `{name}`
    /// segment standing for any, and `{coin}` for the currency word `coin`.
    fn instance_of(template: &str, path: &str) -> bool {
        let (t, p): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
        t.len() == p.len()
            && t.iter()
                .zip(&p)
                .all(|(t, p)| (t.starts_with('{') && t.ends_with('}')) || t.replace("{coin}", "coin") == *p)
    }

    #[test]
    fn every_route_names_its_template_at_the_root_and_under_its_bases() {
        for (_, path, route) in every_route() {
            let named = template(path, "Coin").unwrap_or_else(|| panic!("{path} has no template"));
            assert_eq!(named.base, None, "{path}");
            assert!(instance_of(named.root, path), "{path} is not an instance of {}", named.root);
            for base in route.bases() {
                let prefixed = alloc::format!("{}{path}", base.prefix());
                let under = template(&prefixed, "Coin").map(|t| t.to_string());
                assert_eq!(under, Some(alloc::format!("{}{}", base.prefix(), named.root)), "{prefixed}");
            }
        }
        let alias = template("/v0/reward-accounting-process/rounds/earliest-available", "Coin");
        assert_eq!(alias.map(|t| t.root), Some("/v0/reward-accounting-process/rounds/earliest-available"));
        assert_eq!(template("/v0/amulet-rules", "Amulet").map(|t| t.root), Some("/v0/{coin}-rules"));
    }

    #[test]
    fn a_template_never_carries_the_ids_of_the_path() {
        let path = "/api/scan/v1/domains/dom%3A%3A1/parties/alice%3A%3A99/participant-id";
        assert_eq!(
            template(path, "Coin").map(|t| t.to_string()).as_deref(),
            Some("/api/scan/v1/domains/{domain_id}/parties/{party_id}/participant-id")
        );
    }

    #[test]
    fn an_unknown_path_has_no_template() {
        for path in ["", "/", "/metrics", "/v2/updates/", "/v2/updates/x/y", "/api/validator/version", "/api/scan"] {
            assert_eq!(template(path, "Coin"), None, "{path}");
        }
    }

    #[test]
    fn unknown_paths_are_404() {
        for path in [
            "",
            "/",
            "version",
            "/version/",
            "/v2/updates/",
            "/v3/updates",
            "/v3/updates/x",
            "/v2/updates/x/y",
            "//version",
            "/registry/transfer-instruction/v2/x/choice-contexts/explode",
            "/registry/allocations/v2/x/choice-contexts/execute-transfer",
            "/registry/allocations/v3/x/choice-contexts/cancel",
            "/registry/allocation-instruction/v3/allocation-factory",
            "/a/b/c/d/e/f/g/h/i/j",
        ] {
            route!(Get, path => Err(RouteError::NotFound));
        }
    }
}
