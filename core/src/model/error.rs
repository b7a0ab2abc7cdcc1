//! The core's error type and its status map, and the storage backend's failure it
//! carries. Every layer reports with it; the API turns it into the one JSON error
//! envelope ([`Error::into_response`], in [`crate::api::http`]).

use alloc::string::String;
use core::fmt;

/// Everything a request can fail with. Client errors carry a message a person can act
/// on; server errors carry detail for the operator's log, and the client sees a
/// generic message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// 400: the request is malformed or invalid.
    BadRequest(String),
    /// 401: no credential, or one that does not verify.
    Unauthorized(String),
    /// 403: a valid credential that may not do this.
    Forbidden(String),
    /// 404: the path or the thing it names does not exist.
    NotFound(String),
    /// 405: the path exists with another method.
    MethodNotAllowed {
        /// The method the path answers to.
        allowed: &'static str,
    },
    /// 409: the request conflicts with the node's state.
    Conflict(String),
    /// 413: the body is longer than the route accepts.
    PayloadTooLarge {
        /// The route's limit, in bytes.
        limit: usize,
    },
    /// 429: the same thing is being processed right now.
    TooManyRequests(String),
    /// 500: the request names something the node does not support, such as a party
    /// hosted on several participants (by the v0 participant-id route). Unlike [`Error::Internal`] the message
    /// is sent: it is about the request, not about a fault the operator must look into,
    /// and the client needs it to understand the answer.
    Unsupported(String),
    /// 500: a bug or an unexpected state; the detail is logged, not sent.
    Internal(String),
    /// 500: the storage backend failed; the detail is logged, not sent.
    Store(StoreError),
    /// 503: the answer needs something this node does not hold yet, such as the created
    /// event blob of a contract that a follower has not been disclosed; the message names
    /// it and is sent, as the client may retry.
    NotHeld(String),
    /// 503: the node is not ready to serve because its store cannot be read (the
    /// readiness probe, [`crate::api::health`]); the detail is logged, not sent.
    Unavailable(StoreError),
}

impl Error {
    /// The HTTP status of this error.
    pub fn status(&self) -> u16 {
        match self {
            Error::BadRequest(_) => 400,
            Error::Unauthorized(_) => 401,
            Error::Forbidden(_) => 403,
            Error::NotFound(_) => 404,
            Error::MethodNotAllowed { .. } => 405,
            Error::Conflict(_) => 409,
            Error::PayloadTooLarge { .. } => 413,
            Error::TooManyRequests(_) => 429,
            Error::Unsupported(_) | Error::Internal(_) | Error::Store(_) => 500,
            Error::NotHeld(_) | Error::Unavailable(_) => 503,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BadRequest(m)
            | Error::Unauthorized(m)
            | Error::Forbidden(m)
            | Error::NotFound(m)
            | Error::Conflict(m)
            | Error::TooManyRequests(m)
            | Error::Unsupported(m)
            | Error::NotHeld(m)
            | Error::Internal(m) => f.write_str(m),
            Error::MethodNotAllowed { allowed } => {
                write!(f, "method not allowed; this path answers to {allowed}")
            }
            Error::PayloadTooLarge { limit } => {
                write!(f, "request body too large; this endpoint accepts at most {limit} bytes")
            }
            Error::Store(e) => write!(f, "{e}"),
            Error::Unavailable(e) => write!(f, "not ready: the store cannot be read: {e}"),
        }
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        Error::Store(e)
    }
}

/// A failure of the storage backend (I/O, a lost connection, a bad schema).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    message: String,
}

impl StoreError {
    /// A backend failure described by `message`.
    pub fn new(message: impl Into<String>) -> Self {
        StoreError { message: message.into() }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
