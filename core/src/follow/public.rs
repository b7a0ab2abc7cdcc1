//! Following through the public endpoints only: what the export endpoints give a
//! follower with a token, taken from what a network's Scan serves to anyone.
//!
//! - **Migrations**: `GET /v0/migrations/last`; each migration up to it whose
//!   migration info is not a 404 has its import updates paged until the list ends.
//! - **Blobs**: the stream carries no `created_event_blob`. The blobs the registry
//!   discloses come from the contract endpoints, which render each `Contract` with its
//!   blob (`POST /v0/{coin}-rules`, `/v0/external-party-{coin}-rules`, `/v0/ans-rules`,
//!   `/v0/open-and-issuing-mining-rounds`, `GET /v0/featured-apps`,
//!   `/v0/transfer-preapprovals/by-party/{receiver}` for each preapproval a page
//!   creates), and from the registry's accept context of each transfer instruction a
//!   page creates (its locked coin and the external party config state). They are asked
//!   for whenever a page creates a contract that the page itself does not archive, and
//!   a blob is given (a `blob` record after the page's updates,
//!   [`crate::state::blobs`]) only to a contract the page creates: the upstream has
//!   applied the page, so what it discloses now is what the page's contracts became. A
//!   contract none of these disclose waits for its blob, which the follower asks for
//!   once caught up (`blobs`).
//! - **Network records**: the roll-forward plan from `GET /v0/roll-forward-lsu`, and
//!   each migration's backfill record (`complete`, `import_updates_complete`) from its
//!   `POST /v0/backfilling/migration-info`, so `GET /v0/backfilling/status` says
//!   `complete: true` only once the upstreams' history is whole and this node has
//!   taken all of it (this runs only after the stream, the import updates and the
//!   earlier history are in). Party hosting is learned party by party (`hosting`).

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::Value as Json;

use super::pages::Item;
use super::{FollowError, Follower, Link, Side, record_line};
use crate::api::http::{Method, Request, Response};
use crate::model::names::TemplateNames;
use crate::model::update::Blob;

impl<U: Link, L: Link> Follower<'_, U, L> {
    /// The migrations the upstreams may hold: 0 up to their last one.
    pub(super) async fn public_migrations(&self) -> Result<Vec<i64>, FollowError> {
        last_migration(&self.get_upstream("/v0/migrations/last").await?, "the upstreams")
    }

    /// Fills the blobs the upstreams disclose for the contracts `items` create that
    /// are among `ids` (those still to be filled) into the follower's blobs.
    pub(super) async fn disclose(&self, items: &[Item], ids: &[String]) -> Result<(), FollowError> {
        if ids.iter().all(|id| self.blobs.borrow().contains_key(id)) {
            return Ok(());
        }
        let names = TemplateNames::new(&self.limits.names);
        let coin = self.limits.names.coin.to_ascii_lowercase();
        let mut found = BTreeMap::new();
        const ROUNDS: &[u8] = br#"{"cached_open_mining_round_contract_ids":[],"cached_issuing_round_contract_ids":[]}"#;
        for (path, body) in [
            (format!("/v0/{coin}-rules"), &b"{}"[..]),
            (format!("/v0/external-party-{coin}-rules"), b"{}"),
            ("/v0/ans-rules".into(), b"{}"),
            ("/v0/open-and-issuing-mining-rounds".into(), ROUNDS),
        ] {
            let response = self.agreed(super::request(&path, body.to_vec(), "application/json")).await?;
            collect(&response, &path, &mut found)?;
        }
        let response = self.get_upstream("/v0/featured-apps").await?;
        collect(&response, "/v0/featured-apps", &mut found)?;
        for item in items {
            let Some(transaction) = item.update.as_transaction() else { continue };
            for event in transaction.events_by_id.values() {
                let crate::model::update::Event::Created(created) = event else { continue };
                if !ids.contains(&created.contract_id) {
                    continue;
                }
                let name = created.template_id.qualified_name();
                let path = if name == names.transfer_instruction {
                    format!("/registry/transfer-instruction/v2/{}/choice-contexts/accept", created.contract_id)
                } else if name.ends_with(":TransferPreapproval")
                    && let Some(receiver) = created.create_arguments.lookup(&["receiver"]).and_then(|v| v.as_party())
                {
                    format!("/v0/transfer-preapprovals/by-party/{receiver}")
                } else {
                    continue;
                };
                let response = match path.starts_with("/registry/") {
                    true => self.agreed(json_request(&path)).await?,
                    false => self.get_upstream(&path).await?,
                };
                collect(&response, &path, &mut found)?;
            }
        }
        self.blobs.borrow_mut().extend(found);
        Ok(())
    }

    /// The roll-forward plan and the backfill records, from the public endpoints.
    pub(super) async fn public_records(&mut self) -> Result<(), FollowError> {
        let mut lines = Vec::new();
        const PLAN: &str = "/v0/roll-forward-lsu";
        let theirs = self.get_upstream(PLAN).await?;
        let ours = self
            .local
            .send(Request::new(Method::Get, PLAN))
            .await
            .map_err(|e| FollowError(format!("this node: GET {PLAN}: {e}")))?;
        let plan: Json = super::read(Side::Upstream, PLAN, &theirs)?;
        if theirs.body != ours.body
            && let Some(plan) = plan.get("rollForwardLsu")
        {
            lines.push(record_line("roll_forward_lsu", plan)?);
        }
        // Each migration's backfill flags, as its migration info says them.
        for migration_id in self.public_migrations().await? {
            let Some(theirs) = self.migration_info(Side::Upstream, migration_id).await? else { continue };
            let ours = self.migration_info(Side::Local, migration_id).await?;
            let held = ours.map(|o| (o.complete, o.import_updates_complete));
            if held != Some((theirs.complete, theirs.import_updates_complete)) {
                let record = serde_json::json!({
                    "migration_id": migration_id,
                    "complete": theirs.complete,
                    "import_updates_complete": theirs.import_updates_complete,
                });
                lines.push(record_line("backfill", &record)?);
            }
        }
        if lines.is_empty() {
            return Ok(());
        }
        let applied = self.ingest(lines.join(&b'\n'), "the upstream's network records").await?;
        self.report.summary.add(&applied);
        Ok(())
    }
}

/// `POST path` with the body `{}`.
pub(super) fn json_request(path: &str) -> Request {
    super::request(path, b"{}".to_vec(), "application/json")
}

/// Migrations 0 to the one `GET /v0/migrations/last` answered; none for a 404.
fn last_migration(response: &Response, side: &str) -> Result<Vec<i64>, FollowError> {
    if response.status == 404 {
        return Ok(Vec::new());
    }
    #[derive(serde::Deserialize)]
    struct Last {
        migration_id: i64,
    }
    if response.status != 200 {
        return Err(FollowError(format!(
            "{side} answered GET /v0/migrations/last with {}: {}",
            response.status,
            super::error_text(response)
        )));
    }
    let last: Last = serde_json::from_slice(&response.body)
        .map_err(|e| FollowError(format!("{side} answered GET /v0/migrations/last with a malformed body: {e}")))?;
    if !(0..crate::api::history::MAX_MIGRATIONS as i64).contains(&last.migration_id) {
        return Err(FollowError(format!(
            "{side} answered GET /v0/migrations/last with migration {}, which is not one this node can hold",
            last.migration_id
        )));
    }
    Ok((0..=last.migration_id).collect())
}

/// The blobs of every contract in `response`'s body (a Scan `Contract`, with
/// `contract_id` and `created_event_blob`, or a registry disclosed contract, with
/// `contractId` and `createdEventBlob`), into `found`. A 404 holds none (there is no
/// such contract now); any other answer but a 200 stops following, naming it.
pub(super) fn collect(response: &Response, path: &str, found: &mut BTreeMap<String, Blob>) -> Result<(), FollowError> {
    match response.status {
        200 => {}
        // Nothing to take now: no such contract (404), or one a needed contract of is
        // in flight between synchronizers (409, a registry context). A blob not taken
        // here stays missing, and a registry answer that needs it is a 503 naming it.
        404 | 409 => return Ok(()),
        status => {
            return Err(FollowError(format!(
                "the upstream answered {path} with {status}: {}",
                super::error_text(response)
            )));
        }
    }
    let body: Json = serde_json::from_slice(&response.body)
        .map_err(|e| FollowError(format!("the upstream answered {path} with a malformed body: {e}")))?;
    let mut stack = alloc::vec![&body];
    while let Some(value) = stack.pop() {
        match value {
            Json::Object(object) => {
                let id = object.get("contract_id").or_else(|| object.get("contractId")).and_then(Json::as_str);
                let blob =
                    object.get("created_event_blob").or_else(|| object.get("createdEventBlob")).and_then(Json::as_str);
                if let (Some(id), Some(blob)) = (id, blob)
                    && !blob.is_empty()
                {
                    let blob = Blob::parse(blob).map_err(|e| {
                        FollowError(format!(
                            "the upstream answered {path} with a malformed blob for contract {id}: {e:?}"
                        ))
                    })?;
                    found.insert(id.to_string(), blob);
                }
                stack.extend(object.values());
            }
            Json::Array(values) => stack.extend(values),
            _ => {}
        }
    }
    Ok(())
}
