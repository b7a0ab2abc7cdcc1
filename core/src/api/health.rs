//! Probes for the platform that runs the node, at the root only (never under a base
//! path, [`crate::api::route::Base`]); `HEAD` answers as `GET` does, without a body.
//!
//! | path | answer |
//! |---|---|
//! | `GET /livez` | 200 `{"status":"ok"}`: the process is up and serving; the store is not touched |
//! | `GET /readyz` | 200 `{"status":"ready"}` when the store answers one read, else 503 ([`Error::Unavailable`]) |
//!
//! Readiness reads one key, the bare ingest-generation tag ([`crate::storage::keys::GENERATION`]),
//! which is absent in every store: an answer of any kind shows that the store can be
//! read, and the read costs one point lookup. The 503 says that the store cannot be
//! read; the backend's own message goes to the operator's log, as for every store
//! failure.

use crate::api::http::Response;
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
    }

    #[test]
    fn liveness_is_ok_without_a_store() {
        let response = live();
        assert_eq!((response.status, response.body.as_slice()), (200, br#"{"status":"ok"}"#.as_slice()));
        assert_eq!(response.header("content-type"), Some("application/json"));
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
