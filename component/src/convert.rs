//! Translation between the WIT records and the core's types; nothing else.

use ledger_node_core::storage::store::{Entry, Op, Scan, WriteError};
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

/// A scan as the WIT range, borrowing its bounds.
pub fn scan(scan: &Scan) -> wit::ScanRange<'_> {
    wit::ScanRange { start: &scan.start, end: scan.end.as_deref(), limit: scan.limit, reverse: scan.reverse }
}

/// WIT entries as the core's.
pub fn entries(entries: Vec<wit::EntryResult>) -> Vec<Entry> {
    entries.into_iter().map(|e| (e.key, e.value)).collect()
}

/// A core operation as a WIT one, borrowing its keys and values.
pub fn op(op: &Op) -> wit::Op<'_> {
    match op {
        Op::Put { key, value } => wit::Op::Put(wit::EntryParam { key, value }),
        Op::PutIfAbsent { key, value } => wit::Op::PutIfAbsent(wit::EntryParam { key, value }),
        Op::Delete { key } => wit::Op::Delete(key),
        Op::DeleteRange { start, end } => wit::Op::DeleteRange((start, end.as_deref())),
    }
}

/// A WIT write error as the core's.
pub fn write_error(error: wit::WriteError) -> WriteError {
    match error {
        wit::WriteError::PreconditionFailed(key) => WriteError::PreconditionFailed { key },
        wit::WriteError::Backend(message) => {
            WriteError::Store(ledger_node_core::model::error::StoreError::new(message))
        }
    }
}
