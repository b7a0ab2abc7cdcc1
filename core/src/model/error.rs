//! The core's error type, its status map and the one JSON error envelope.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::api::http::Response;
use crate::storage::store::StoreError;

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
            Error::Unavailable(_) => 503,
        }
    }

    /// The `{"error": ...}` response for this error; server errors keep their detail
    /// in [`Response::log`].
    pub fn into_response(self) -> Response {
        let status = self.status();
        let (message, log) = match &self {
            Error::Internal(detail) => {
                (String::from("internal error; the operator has been told the cause"), Some(detail.clone()))
            }
            Error::Store(e) => (
                String::from("storage backend failed; retry with back-off, and tell the operator if it persists"),
                Some(alloc::format!("store: {e}")),
            ),
            Error::Unavailable(e) => (
                String::from(
                    "not ready: the store cannot be read: the storage backend failed; the operator's log has the cause",
                ),
                Some(alloc::format!("readiness: store: {e}")),
            ),
            _ => (alloc::format!("{self}"), None),
        };
        let mut response = Response::json(status, envelope(&message));
        response.log = log;
        if let Error::MethodNotAllowed { allowed } = self {
            response.headers.push(("allow".into(), allowed.into()));
        }
        response
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

/// The envelope of every error, `{"error": message}`, written out directly: no
/// serializer is involved, so there is no failure to turn into an empty body. The
/// string is escaped as `serde_json` escapes it.
pub fn envelope(message: &str) -> Vec<u8> {
    let mut body = Vec::with_capacity(message.len() + 12);
    body.extend_from_slice(br#"{"error":"#);
    crate::model::json::write::write_str(&mut body, message);
    body.push(b'}');
    body
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        Error::Store(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_errors_say_what_is_wrong() {
        let r = Error::BadRequest("line 3: missing field `update_id`".into()).into_response();
        assert_eq!(r.status, 400);
        assert_eq!(r.body, br#"{"error":"line 3: missing field `update_id`"}"#);
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.log, None);
    }

    #[test]
    fn server_errors_are_masked_and_logged() {
        let r = Error::Store(StoreError::new("disk I/O error")).into_response();
        assert_eq!(r.status, 500);
        assert!(!String::from_utf8_lossy(&r.body).contains("disk"));
        assert_eq!(r.log.as_deref(), Some("store: disk I/O error"));
    }

    #[test]
    fn unsupported_requests_are_500_and_say_why() {
        let r = Error::Unsupported("party p is hosted on several participants".into()).into_response();
        assert_eq!(r.status, 500);
        assert_eq!(r.body, br#"{"error":"party p is hosted on several participants"}"#);
        assert_eq!(r.log, None);
    }

    #[test]
    fn the_envelope_is_the_json_object_serde_json_writes() {
        for message in ["", "plain", "a \"quoted\" \\ line\n", "control \u{1} and \u{7f}", "naïve ünïcode"] {
            let expected = serde_json::to_vec(&serde_json::json!({ "error": message })).unwrap();
            assert_eq!(envelope(message), expected, "{message:?}");
        }
    }

    #[test]
    fn method_not_allowed_names_the_allowed_method() {
        let r = Error::MethodNotAllowed { allowed: "POST" }.into_response();
        assert_eq!(r.status, 405);
        assert_eq!(r.header("allow"), Some("POST"));
    }
}
