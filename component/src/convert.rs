//! Translation between the WIT records and the core's types; nothing else.

use ledger_node_core::store::{Entry, Op, Scan, WriteError};
use ledger_node_core::{Body, Method};

use crate::bindings::exports::ledger::node::handler;
use crate::bindings::ledger::node::store as wit;

/// A WIT request as the core's.
pub fn request(request: handler::Request) -> ledger_node_core::Request {
    ledger_node_core::Request {
        method: Method::parse(&request.method),
        path: request.path,
        query: request.query,
        headers: request.headers,
        body: request.body.map_or(Body::TooLarge, Body::Complete),
    }
}

/// The core's response as a WIT one.
pub fn response(response: ledger_node_core::Response) -> handler::Response {
    handler::Response { status: response.status, headers: response.headers, body: response.body, log: response.log }
}

/// A scan as the WIT range.
pub fn scan(scan: &Scan) -> wit::ScanRange {
    wit::ScanRange { start: scan.start.clone(), end: scan.end.clone(), limit: scan.limit, reverse: scan.reverse }
}

/// WIT entries as the core's.
pub fn entries(entries: Vec<wit::Entry>) -> Vec<Entry> {
    entries.into_iter().map(|e| (e.key, e.value)).collect()
}

/// A core operation as a WIT one.
pub fn op(op: &Op) -> wit::Op {
    match op {
        Op::Put { key, value } => wit::Op::Put(wit::Entry { key: key.clone(), value: value.clone() }),
        Op::PutIfAbsent { key, value } => wit::Op::PutIfAbsent(wit::Entry { key: key.clone(), value: value.clone() }),
        Op::Delete { key } => wit::Op::Delete(key.clone()),
        Op::DeleteRange { start, end } => wit::Op::DeleteRange((start.clone(), end.clone())),
    }
}

/// A WIT write error as the core's.
pub fn write_error(error: wit::WriteError) -> WriteError {
    match error {
        wit::WriteError::PreconditionFailed(key) => WriteError::PreconditionFailed { key },
        wit::WriteError::Backend(message) => WriteError::Store(ledger_node_core::store::StoreError::new(message)),
    }
}
