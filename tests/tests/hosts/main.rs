//! The cross-host suites: one scenario suite and one storage contract, run against
//! every host (core + memory store, the component in wasmtime over memory and the native store,
//! the worker under `wrangler dev` with local D1 and KV). Every answer of the scenario
//! suite is also checked against the node's OpenAPI document (`openapi`). A chain of
//! followers (`chain`) crosses the hosts: native to native to the worker.

mod chain;
mod openapi;
mod resend;
mod scenario;
mod targets;
mod validator;
mod wallet_concurrency;
mod worker;

use ledger_node::backend::{MemoryBackend, Port};
use ledger_node::lsm::LsmStore;
use ledger_node_core::storage::exec::block_on;
use ledger_node_core::storage::store::contract;

use scenario::run_all;
use targets::{ComponentTarget, CoreTarget};

#[test]
fn scenarios_pass_in_the_core_with_the_memory_store() {
    run_all(&mut CoreTarget::new());
}

#[test]
fn scenarios_pass_in_the_component_over_memory() {
    run_all(&mut ComponentTarget::new(false));
}

#[test]
fn scenarios_pass_in_the_component_over_the_native_store() {
    run_all(&mut ComponentTarget::new(true));
}

#[test]
fn scenarios_pass_in_the_worker_under_wrangler_dev() {
    let mut worker = worker::WorkerTarget::start();
    run_all(&mut worker);
    // The same worker: exactly-once submission under concurrency, and the cron trigger.
    scenario::Target::reset(&mut worker);
    wallet_concurrency::set_up(worker.client());
    wallet_concurrency::one_request_from_concurrent_submissions(worker.client(), 10);
    wallet_concurrency::one_request_from_concurrent_submissions(worker.client(), 100);
    wallet_concurrency::the_cron_trigger_expires_due_requests(worker.client());
    scenario::Target::reset(&mut worker);
    resend::a_re_sent_history_changes_nothing(&mut worker);
}

#[test]
fn a_validator_starts_and_runs_its_triggers_against_the_core_and_the_component() {
    let names = validator::network_names();
    validator::a_validator_starts_and_runs_its_triggers_against_the_node(&mut CoreTarget::with_config(&names));
    for on_disk in [false, true] {
        let mut component = ComponentTarget::with_config(on_disk, &names);
        validator::a_validator_starts_and_runs_its_triggers_against_the_node(&mut component);
    }
}

#[test]
fn a_validator_starts_and_runs_its_triggers_against_the_worker_under_wrangler_dev() {
    let mut worker = worker::WorkerTarget::start_with(&validator::network_names());
    validator::a_validator_starts_and_runs_its_triggers_against_the_node(&mut worker);
}

#[test]
fn a_history_crosses_a_chain_of_followers_native_to_native_to_the_worker_byte_for_byte() {
    chain::a_history_crosses_a_chain_of_followers_byte_for_byte();
}

#[test]
fn a_follower_killed_at_any_moment_resumes_without_gap_or_duplicate() {
    chain::a_follower_killed_at_any_moment_resumes_without_gap_or_duplicate();
}

#[test]
fn a_conflict_stops_the_follower_and_nothing_after_it_is_applied() {
    chain::a_conflict_stops_the_follower_and_nothing_after_it_is_applied();
}

#[test]
fn the_worker_refuses_to_serve_without_its_bucket() {
    worker::the_worker_refuses_to_serve_without_its_bucket();
}

#[test]
fn the_worker_refuses_a_database_of_another_layout() {
    worker::the_worker_refuses_a_database_of_another_layout();
}

#[test]
fn the_worker_logs_requests_and_scheduled_runs_as_json_lines_without_tokens() {
    worker::the_worker_logs_requests_and_scheduled_runs_as_json_lines_without_tokens();
}

#[test]
fn a_read_after_a_bulk_ingest_into_the_worker_is_not_held() {
    worker::a_read_after_a_bulk_ingest_is_not_held();
}

#[test]
fn serve_keeps_following_its_upstream() {
    chain::serve_keeps_following_its_upstream();
}

#[test]
fn a_follower_takes_history_its_upstream_backfills() {
    chain::a_follower_takes_history_its_upstream_backfills();
}

#[test]
fn follow_stops_on_upstream_errors_with_a_clear_message() {
    chain::follow_stops_on_upstream_errors_with_a_clear_message();
}

#[test]
fn a_re_sent_history_changes_nothing_in_the_core_and_the_component_over_the_native_store() {
    resend::a_re_sent_history_changes_nothing(&mut CoreTarget::new());
    resend::a_re_sent_history_changes_nothing(&mut ComponentTarget::new(true));
}

#[test]
fn concurrent_wallet_submissions_of_one_tracking_id_give_one_request_in_the_component_over_the_native_store() {
    let mut target = ComponentTarget::new(true);
    let client = target.client();
    wallet_concurrency::set_up(client);
    wallet_concurrency::one_request_from_concurrent_submissions(client, 10);
    wallet_concurrency::one_request_from_concurrent_submissions(client, 100);
}

#[test]
fn the_native_store_honours_the_storage_contract() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let backend = LsmStore::open(&dir.path().join("contract.store")).expect("a store");
    let report = block_on(contract::run(&Port(&backend)));
    assert!(report.ok, "{:#?}", report.failures().collect::<Vec<_>>());
    let bulk = LsmStore::open_bulk(&dir.path().join("bulk.store")).expect("a store");
    let report = block_on(contract::run(&Port(&bulk)));
    assert!(report.ok, "{:#?}", report.failures().collect::<Vec<_>>());
}

#[test]
fn the_host_memory_backend_honours_the_storage_contract() {
    let report = block_on(contract::run(&Port(&MemoryBackend::new())));
    assert!(report.ok, "{:#?}", report.failures().collect::<Vec<_>>());
}
