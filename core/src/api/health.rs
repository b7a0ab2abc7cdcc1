//! Probes for the platform that runs the node, at the root and under both base paths
//! ([`crate::api::route::Base`]); `HEAD` answers as `GET` does, without a body.
//!
//! | path | answer |
//! |---|---|
//! | `GET /livez` | 200 `{"status":"ok"}`: the process is up and serving; the store is not touched |
//! | `GET /readyz` | 200 `{"status":"ready"}` when the store answers one read, else 503 ([`Error::Unavailable`]) |
//! | `GET /status` | 200, the network's `NodeStatus` (below) when the store answers one read, else 503 |
//!
//! `GET /status` answers in the shape of the network's common API
//! (`apps/common/src/main/openapi/common-external.yaml` in `hyperledger-labs/splice`,
//! `NodeStatus`), as its success case: `{"success": {"id", "uptime", "ports",
//! "active"}}`. `id` is `ledger-node`; `uptime` is an ISO 8601 duration in whole
//! seconds since the host started, which it says in
//! [`crate::model::config::STARTED_AT`] (`PT0S` from a host that does not say);
//! `ports` are the ports the host says it serves on, by name
//! ([`crate::model::config::PORTS`]: `ledger-node serve` names `public` and, with
//! `--metrics-listen`, `metrics`; the worker names none, as the platform, not the
//! worker, listens, on the ports of its routes), so `{}` from such a host; `active` is
//! true, as this node is always the active one. A store that cannot be read is a 503
//! `{"error"}` as for `/readyz`, not the network's `failed` case, so that every error
//! of the node has one envelope.
//!
//! Readiness reads one key, the bare ingest-generation tag ([`crate::storage::keys::GENERATION`]),
//! which is absent in every store: an answer of any kind shows that the store can be
//! read, and the read costs one point lookup. The 503 says that the store cannot be
//! read; the backend's own message goes to the operator's log, as for every store
//! failure.

use alloc::collections::BTreeMap;
use alloc::string::String;

use serde::Serialize;

use crate::api::http::Response;
use crate::model::env::Env;
use crate::model::error::Error;
use crate::storage::keys;
use crate::storage::store::Store;

/// `GET /livez`.
pub fn live() -> Response {
    Response::json(200, br#"{"status":"ok"}"#.to_vec())
}

/// `GET /readyz`: one store read.
pub async fn ready<S: Store>(store: &S) -> Result<Response, Error> {
    store.get(&[keys::GENERATION]).await.map_err(Error::Unavailable)?;
    Ok(Response::json(200, br#"{"status":"ready"}"#.to_vec()))
}

/// The body of `GET /status`: the network's `NodeStatus`, its success case.
#[derive(Debug, Serialize)]
struct NodeStatus {
    success: Status,
}

/// The network's `Status` (module docs).
#[derive(Debug, Serialize)]
struct Status {
    id: &'static str,
    uptime: String,
    ports: BTreeMap<String, u16>,
    active: bool,
}

/// `GET /status`: one store read, as [`ready`].
pub async fn status<S: Store>(store: &S, env: &Env<'_>) -> Result<Response, Error> {
    store.get(&[keys::GENERATION]).await.map_err(Error::Unavailable)?;
    let seconds = env.config.started_at.map_or(0, |started| (env.now.micros() - started.micros()).max(0) / 1_000_000);
    let status = Status {
        id: "ledger-node",
        uptime: alloc::format!("PT{seconds}S"),
        ports: env.config.ports.clone(),
        active: true,
    };
    Ok(Response::ok(&NodeStatus { success: status }))
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;
    use core::cell::Cell;

    use super::*;
    use crate::model::error::StoreError;
    use crate::storage::exec::block_on;
    use crate::storage::store::{Entry, MemoryStore, Scan, WriteBatch, WriteError};

    /// A store whose every operation fails, counting the calls.
    #[derive(Default)]
    struct Failing {
        calls: Cell<u32>,
    }

    impl Failing {
        fn fail(&self) -> StoreError {
            self.calls.set(self.calls.get() + 1);
            StoreError::new("disk I/O error")
        }
    }

    impl Store for Failing {
        async fn get(&self, _: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
            Err(self.fail())
        }
        async fn get_many(&self, _: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
            Err(self.fail())
        }
        async fn scan(&self, _: &Scan) -> Result<Vec<Entry>, StoreError> {
            Err(self.fail())
        }
        async fn write(&self, _: &WriteBatch) -> Result<(), WriteError> {
            Err(WriteError::Store(self.fail()))
        }
        /// Its memory fails too: it keeps nothing, which the contract allows.
        fn recall(&self, _: &[u8]) -> Option<Vec<u8>> {
            None
        }
        fn remember(&self, _: &[u8], _: &[u8]) {}
    }

    #[test]
    fn liveness_is_ok_without_a_store() {
        let response = live();
        assert_eq!((response.status, response.body.as_slice()), (200, br#"{"status":"ok"}"#.as_slice()));
        assert_eq!(response.header("content-type"), Some("application/json"));
    }

    #[test]
    fn status_counts_the_uptime_from_the_hosts_start_and_is_503_without_a_store() {
        use crate::model::config::{Config, PORTS, STARTED_AT};
        use crate::model::time::Timestamp;
        let config = Config::from_pairs([(STARTED_AT, "2024-01-02T03:04:05Z")]).unwrap();
        let now = Timestamp::parse("2024-01-02T04:05:06.5Z").unwrap();
        let env = Env { now, entropy: [0; 32], config: &config };
        let response = block_on(status(&MemoryStore::new(), &env)).unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(
            core::str::from_utf8(&response.body).unwrap(),
            r#"{"success":{"id":"ledger-node","uptime":"PT3661S","ports":{},"active":true}}"#
        );
        let config =
            Config::from_pairs([(STARTED_AT, "2024-01-02T03:04:05Z"), (PORTS, "public=8080,metrics=9090")]).unwrap();
        let env = Env { now, entropy: [0; 32], config: &config };
        let response = block_on(status(&MemoryStore::new(), &env)).unwrap();
        assert_eq!(
            core::str::from_utf8(&response.body).unwrap(),
            r#"{"success":{"id":"ledger-node","uptime":"PT3661S","ports":{"metrics":9090,"public":8080},"active":true}}"#
        );
        let failing = Failing::default();
        assert!(matches!(block_on(status(&failing, &env)), Err(Error::Unavailable(_))));
        assert_eq!(failing.calls.get(), 1);
    }

    #[test]
    fn readiness_is_ready_when_the_store_answers_even_if_empty() {
        let response = block_on(ready(&MemoryStore::new())).unwrap();
        assert_eq!((response.status, response.body.as_slice()), (200, br#"{"status":"ready"}"#.as_slice()));
    }

    #[test]
    fn readiness_is_503_after_one_failed_read_and_the_cause_is_logged_not_sent() {
        let store = Failing::default();
        let error = block_on(ready(&store)).unwrap_err();
        assert_eq!(store.calls.get(), 1);
        let response = error.into_response();
        assert_eq!(response.status, 503);
        let body = alloc::string::String::from_utf8(response.body).unwrap();
        assert!(body.contains("the store cannot be read: "), "{body}");
        assert!(!body.contains("disk"), "{body}");
        assert_eq!(response.log.as_deref(), Some("readiness: store: disk I/O error"));
    }
}
