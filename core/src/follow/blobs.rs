//! Public mode: the blobs of the live contracts that still lack one, asked for once
//! the follower is caught up.
//!
//! The stream carries no blobs, and a page's own disclosure (`public`) finds only the
//! contracts that an endpoint discloses while that page is followed: a contract
//! created before a follower's start, one whose page was followed while no context
//! disclosed it, or one of a kind that no page-time request asks for, is held without
//! its blob. This node keeps the list of such contracts
//! ([`crate::state::blobs`], read through `POST /v0/admin/export/sought-blobs`), and at
//! the end of every call that caught up, the follower asks the upstreams for them:
//!
//! - **Where.** Each contract is asked of the public endpoint of the network's Scan
//!   that renders it with its blob (`apps/scan/src/main/openapi/scan.yaml` and the
//!   token standard's `openapi/*.yaml` of `hyperledger-labs/splice`, served by the scan
//!   app's `HttpScanHandler.scala` and `HttpTokenStandard*Handler.scala`): the DSO's
//!   rules and the SVs' node states `GET /v0/dso`; the coin rules, external party coin
//!   rules and ANS rules `POST /v0/{coin}-rules`, `/v0/external-party-{coin}-rules`,
//!   `/v0/ans-rules` (`{}`: no cached contract); open and issuing rounds
//!   `POST /v0/open-and-issuing-mining-rounds` (no cached ids); closed rounds
//!   `GET /v0/closed-rounds`; price votes `GET /v0/{coin}-price/votes`; featured app
//!   rights `GET /v0/featured-apps`; unclaimed development fund coupons
//!   `GET /v0/unclaimed-development-fund-coupons`; vote requests
//!   `GET /v0/admin/sv/voterequests`; validator licenses
//!   `GET /v0/admin/validator/licenses?limit=1000` (the first, newest page); a transfer
//!   preapproval `GET /v0/transfer-preapprovals/by-party/{receiver}`; a transfer command
//!   counter `GET /v0/transfer-command-counter/{sender}`; a transfer command, live or
//!   archived (its status entry shows it still),
//!   `GET /v0/transfer-command/status?sender={sender}&nonce={nonce}`; the external party config
//!   state the v2 allocation factory (`POST
//!   /registry/allocation-instruction/v2/allocation-factory`, whose context the network
//!   builds from the request's envelope alone); the locked coin of a transfer
//!   instruction its accept context, and of a coin allocation its withdraw context
//!   (`{}`). One request answers for every contract it renders.
//! - **What is taken.** An answer is the one enough upstreams gave alike (`quorum`);
//!   with no quorum nothing is taken from it (the disagreement is reported). A blob is
//!   taken only for the contract id that the answer names beside it, and only for a
//!   contract on the list: never for another contract. Any answer but a 200 discloses
//!   nothing. The blobs taken go to this node as `blob` ingest records, one batch a
//!   call.
//! - **What is remembered.** A contract asked for whose blob no answer held is noted
//!   with the time (`sought_at`), and is not asked again before
//!   [`super::Limits::blob_lifetime_seconds`] have passed: a contract no endpoint ever
//!   discloses costs one request a lifetime, not one a call.
//! - **How much.** At most [`super::Limits::blob_lookups`] requests (each asked of
//!   every upstream) a call, those of the contracts waiting longest first (never asked,
//!   then asked longest ago).
//!
//! So once caught up, a contract that an endpoint discloses gets its blob within the
//! call after it is created, while the requests due fit in a call; one that was not
//! disclosed when asked, within the lifetime plus the time between two calls after an
//! endpoint starts disclosing it. One that no endpoint discloses stays without a blob,
//! and a read that needs it is a 503 naming it.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::hosting::segment;
use super::public::collect;
use super::{Disagreement, FollowError, Follower, Link, Side, quorum, record_line, to_vec};
use crate::api::export::{SoughtContract, SoughtPage};
use crate::api::http::{Method, Request};
use crate::model::config::Names;
use crate::model::names::TemplateNames;
use crate::model::time::Timestamp;
use crate::model::update::{Blob, TemplateId};
use crate::state::blobs::{BlobNews, BlobRecord};
use crate::state::scan::{Kind, ScanTemplates};

/// A request that discloses blobs: a GET of its target, or a POST of its body (JSON)
/// to it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Ask {
    target: String,
    post: Option<&'static str>,
}

impl Ask {
    fn get(target: String) -> Self {
        Ask { target, post: None }
    }

    fn post(target: String, body: &'static str) -> Self {
        Ask { target, post: Some(body) }
    }

    fn request(&self) -> Request {
        match self.post {
            Some(body) => super::request(&self.target, body.as_bytes().to_vec(), "application/json"),
            None => Request::new(Method::Get, &self.target),
        }
    }
}

/// Which request discloses the blob of which contract, as the network names its
/// templates and paths.
struct Disclosers {
    names: TemplateNames,
    scan: ScanTemplates,
    coin: String,
}

impl Disclosers {
    fn new(names: &Names) -> Self {
        Disclosers {
            names: TemplateNames::new(names),
            scan: ScanTemplates::new(names),
            coin: names.coin.to_ascii_lowercase(),
        }
    }

    /// The request that renders `contract` with its blob; `None` when no endpoint
    /// does.
    fn ask(&self, contract: &SoughtContract) -> Option<Ask> {
        let qualified = |id: &str| TemplateId::parse(id).ok().map(|t| String::from(t.qualified_name()));
        if let Some(via) = &contract.via {
            let via_name = qualified(&via.template_id)?;
            let id = segment(&via.contract_id);
            return if via_name == self.names.transfer_instruction {
                Some(Ask::post(format!("/registry/transfer-instruction/v1/{id}/choice-contexts/accept"), "{}"))
            } else if self.scan.kind(&via_name) == Some(Kind::CoinAllocation) {
                Some(Ask::post(format!("/registry/allocations/v1/{id}/choice-contexts/withdraw"), "{}"))
            } else {
                None
            };
        }
        let name = qualified(&contract.template_id)?;
        let party = |field: &str| contract.payload.get(field).and_then(serde_json::Value::as_str).map(segment);
        const ROUNDS: &str = r#"{"cached_open_mining_round_contract_ids":[],"cached_issuing_round_contract_ids":[]}"#;
        let coin = &self.coin;
        if name == self.names.closed_round {
            return Some(Ask::get("/v0/closed-rounds".into()));
        }
        if name == self.names.price_vote {
            return Some(Ask::get(format!("/v0/{coin}-price/votes")));
        }
        if name == self.scan.transfer_command() {
            let nonce = contract.payload.get("nonce").and_then(serde_json::Value::as_str)?;
            return Some(Ask::get(format!("/v0/transfer-command/status?sender={}&nonce={nonce}", party("sender")?)));
        }
        if name == self.names.external_party_config {
            return Some(Ask::post(
                "/registry/allocation-instruction/v2/allocation-factory".into(),
                r#"{"choiceArguments":{}}"#,
            ));
        }
        Some(match self.scan.kind(&name)? {
            Kind::DsoRules | Kind::SvNodeState => Ask::get("/v0/dso".into()),
            Kind::CoinRules => Ask::post(format!("/v0/{coin}-rules"), "{}"),
            Kind::ExternalPartyCoinRules => Ask::post(format!("/v0/external-party-{coin}-rules"), "{}"),
            Kind::AnsRules => Ask::post("/v0/ans-rules".into(), "{}"),
            Kind::OpenRound | Kind::IssuingRound => Ask::post("/v0/open-and-issuing-mining-rounds".into(), ROUNDS),
            Kind::FeaturedAppRight => Ask::get("/v0/featured-apps".into()),
            Kind::DevelopmentFundCoupon => Ask::get("/v0/unclaimed-development-fund-coupons".into()),
            Kind::VoteRequest => Ask::get("/v0/admin/sv/voterequests".into()),
            Kind::ValidatorLicense => Ask::get("/v0/admin/validator/licenses?limit=1000".into()),
            Kind::TransferPreapproval => Ask::get(format!("/v0/transfer-preapprovals/by-party/{}", party("receiver")?)),
            Kind::TransferCommandCounter => Ask::get(format!("/v0/transfer-command-counter/{}", party("sender")?)),
            Kind::AnsEntry | Kind::SummarizingRound | Kind::CoinAllocation => return None,
        })
    }
}

impl<U: Link, L: Link> Follower<'_, U, L> {
    /// Asks the upstreams for the blobs that are due (module docs) and applies what
    /// they disclosed.
    pub(super) async fn seek_blobs(&mut self) -> Result<(), FollowError> {
        let now = self.limits.now;
        let lifetime = i64::try_from(self.limits.blob_lifetime_seconds.saturating_mul(1_000_000)).unwrap_or(i64::MAX);
        let before = Timestamp::from_micros(now.micros().saturating_sub(lifetime)).unwrap_or(Timestamp::MIN);
        let disclosers = Disclosers::new(&self.limits.names);
        // The due contracts, by the request that discloses each, the longest waiting
        // request first.
        let mut asks: BTreeMap<Ask, (Option<Timestamp>, Vec<String>)> = BTreeMap::new();
        for contract in self.sought().await? {
            let sought_at = match &contract.sought_at {
                None => None,
                Some(text) => Some(Timestamp::parse(text).map_err(|e| {
                    FollowError(format!(
                        "this node noted contract {} as sought at {text:?}, which is not a time: {e}",
                        contract.contract_id
                    ))
                })?),
            };
            if sought_at.is_some_and(|at| at >= before) {
                continue;
            }
            let Some(ask) = disclosers.ask(&contract) else { continue };
            let (oldest, ids) = asks.entry(ask).or_insert((sought_at, Vec::new()));
            *oldest = (*oldest).min(sought_at);
            ids.push(contract.contract_id);
        }
        let mut due: Vec<(Option<Timestamp>, Ask, Vec<String>)> =
            asks.into_iter().map(|(ask, (oldest, ids))| (oldest, ask, ids)).collect();
        due.sort();
        due.truncate(self.limits.blob_lookups as usize);
        let wanted: BTreeSet<String> = due.iter().flat_map(|(_, _, ids)| ids.iter().cloned()).collect();
        let mut found: BTreeMap<String, Blob> = BTreeMap::new();
        for (_, ask, _) in &due {
            let Some(response) = self.disclosed(ask).await else { continue };
            if response.status != 200 {
                continue;
            }
            let mut disclosed = BTreeMap::new();
            collect(&response, &ask.target, &mut disclosed)?;
            found.extend(disclosed.into_iter().filter(|(id, _)| wanted.contains(id)));
        }
        let mut lines = Vec::with_capacity(wanted.len());
        for id in &wanted {
            let news = match found.remove(id) {
                Some(blob) => BlobNews::Blob(blob),
                None => BlobNews::SoughtAt(now),
            };
            lines.push(record_line("blob", &BlobRecord { contract_id: id.clone(), news }.to_json())?);
        }
        if lines.is_empty() {
            return Ok(());
        }
        let applied = self.ingest(lines.join(&b'\n'), "the blobs the upstreams disclosed").await?;
        self.report.summary.add(&applied);
        Ok(())
    }

    /// Every contract this node holds that waits for a blob.
    async fn sought(&self) -> Result<Vec<SoughtContract>, FollowError> {
        const PATH: &str = "/v0/admin/export/sought-blobs";
        let mut contracts = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let body = to_vec(&serde_json::json!({ "after": after }))?;
            let page: SoughtPage = self.call(Side::Local, PATH, body).await?;
            if let (Some(after), Some(first)) = (&after, page.contracts.first())
                && first.contract_id <= *after
            {
                return Err(FollowError(format!("this node's {PATH} pages back")));
            }
            contracts.extend(page.contracts);
            match page.next {
                Some(next) => after = Some(next),
                None => return Ok(contracts),
            }
        }
    }

    /// The answer enough upstreams gave to `ask`; `None`, with the disagreement
    /// noted, when there is none, or when no upstream answered.
    async fn disclosed(&self, ask: &Ask) -> Option<crate::api::http::Response> {
        let request = ask.request();
        let what = format!("{} {}", request.method.as_str(), ask.target);
        let answers = self.ask_all(&request).await;
        let answered: Vec<usize> = (0..answers.len()).filter(|n| answers[*n].is_ok()).collect();
        match quorum::response(&what, answers, self.agree) {
            Ok((response, disagreement)) => {
                self.noted.borrow_mut().extend(disagreement);
                Some(response)
            }
            Err(_) => {
                if !answered.is_empty() {
                    self.noted.borrow_mut().push(Disagreement {
                        request: what,
                        upstreams: answered,
                        update_ids: Vec::new(),
                    });
                }
                None
            }
        }
    }
}
