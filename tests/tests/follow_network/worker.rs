//! The worker's scheduled follower under `wrangler dev`, following the simulator over
//! HTTPS in public mode (`LEDGER_NODE_UPSTREAM_URLS`, no upstream token). `workerd`
//! makes the worker's `fetch`es itself and trusts the platform's roots; wrangler hands
//! it the certificates of `NODE_EXTRA_CA_CERTS` too, which is how it trusts the
//! simulator's test CA.
//!
//! The cron trigger is fired by hand (`/__scheduled`) until the worker holds the
//! history's last update and says what the native follower says of backfilling, then
//! once more. Then a sample of the reads (`sample`) must answer as the uninterrupted
//! native follower does.

use std::collections::BTreeMap;
use std::time::Instant;

use ledger_node_tests::wrangler::Launch;

use super::client::Client;
use super::reads::{Facts, Paged, Plan, Read};

/// Most cron runs the worker may take to catch up (each applies at most 10 pages).
const MAX_RUNS: usize = 20;

/// The worker's cron follows the shared simulator until caught up, then answers the
/// sample as the uninterrupted native follower does.
pub fn the_worker_s_cron_follows_the_simulator_and_serves_the_same_answers() {
    let upstream = super::upstream();
    let follower = super::client(super::follower());
    let ca_file = upstream.simulator.ca_file().to_str().expect("a UTF-8 path").to_owned();
    let mut dev = Launch {
        vars: vec![(ledger_node_core::follow::UPSTREAM_URLS.to_owned(), upstream.simulator.url())],
        envs: vec![("NODE_EXTRA_CA_CERTS".to_owned(), ca_file)],
        ..Launch::default()
    }
    .start();
    dev.wait_until(|status| status == 200);
    let worker = Client::new(dev.base());

    let last = Read::get(format!("/v2/updates/{}", upstream.facts.update_ids.last().expect("an update")));
    let status = Read::get("/v0/backfilling/status");
    let cron = Read::get("/__scheduled?cron=*+*+*+*+*");
    let started = Instant::now();
    let mut runs = 0;
    while worker.send(&last).status != 200 || worker.send(&status) != follower.send(&status) {
        runs += 1;
        assert!(
            runs <= MAX_RUNS,
            "the worker did not catch up in {MAX_RUNS} cron runs ({:?}):\n{}",
            started.elapsed(),
            dev.log_text()
        );
        let fired = worker.send(&cron);
        assert_eq!(fired.status, 200, "firing the cron trigger: {}", fired.shown());
    }
    // One more run, caught up, changes nothing.
    worker.send(&cron);
    super::compare::assert_same(&follower, &worker, &sample(super::plan(), &upstream.facts));
}

/// The sample of `plan` the worker is held to: every page of the v2 stream in both
/// encodings (so every update's body) and of the import updates; every fiftieth update by
/// id (v2, both encodings); every state and registry read at the root (not under
/// `/api/scan`) but the choice contexts, of which the first fifteen of each kind and
/// version (five transfer instructions' or allocations' three choices). Left out: the
/// v1 stream and updates by id, and the pages of updates before a time.
pub fn sample(plan: &Plan, facts: &Facts) -> Plan {
    let mut contexts = BTreeMap::<String, usize>::new();
    let reads = plan
        .every_nth_update_by_id(facts, super::IDENTITY_BY_ID)
        .reads
        .into_iter()
        .filter(|read| {
            if read.target.starts_with("/v1/updates/") || read.target.starts_with("/api/") {
                return false;
            }
            // A contract's contexts are read one after the other (the plan is in order).
            let Some((of, _)) = read.target.split_once("/choice-contexts/") else { return true };
            let kind = of.rsplit_once('/').map_or("", |(kind, _)| kind).to_owned();
            let seen = contexts.entry(kind).or_default();
            *seen += 1;
            *seen <= 15
        })
        .collect();
    let paged = plan
        .paged
        .iter()
        .filter(|paged| matches!(paged, Paged::Stream { path: "/v2/updates", .. } | Paged::Imports { .. }))
        .cloned()
        .collect();
    Plan { reads, paged }
}
