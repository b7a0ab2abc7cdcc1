//! The core's own request and response types.
//!
//! Hosts translate their HTTP types into these and back; nothing here knows about
//! workers-rs, WIT or hyper. Header names are compared case-insensitively.

use alloc::string::String;
use alloc::vec::Vec;

use crate::model::error::Error;
use crate::model::ids::percent_decode;

/// An HTTP method. Methods the node never routes are kept verbatim so that a 405
/// can still be told apart from a 404.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    /// `GET`
    Get,
    /// `HEAD`
    Head,
    /// `POST`
    Post,
    /// `PUT`
    Put,
    /// `DELETE`
    Delete,
    /// `PATCH`
    Patch,
    /// `OPTIONS`
    Options,
    /// Any other method, as sent.
    Other(String),
}

impl Method {
    /// The method named by `name` (case-sensitive, as HTTP methods are).
    pub fn parse(name: &str) -> Self {
        match name {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "DELETE" => Method::Delete,
            "PATCH" => Method::Patch,
            "OPTIONS" => Method::Options,
            other => Method::Other(other.into()),
        }
    }

    /// The method's name on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Patch => "PATCH",
            Method::Options => "OPTIONS",
            Method::Other(name) => name,
        }
    }
}

/// A request body as the host read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// The whole body (empty when none was sent).
    Complete(Vec<u8>),
    /// The body was longer than [`crate::body_limit`] allowed; the host stopped reading.
    TooLarge,
}

/// An HTTP request, as the core sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The method.
    pub method: Method,
    /// The path, without query string, still percent-encoded.
    pub path: String,
    /// The query string without the leading `?` (empty when none).
    pub query: String,
    /// Header names and values; names in any case.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Body,
}

impl Request {
    /// A request with no headers and an empty body. `target` may carry a query string.
    pub fn new(method: Method, target: &str) -> Self {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        Request {
            method,
            path: path.into(),
            query: query.into(),
            headers: Vec::new(),
            body: Body::Complete(Vec::new()),
        }
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// Every value of header `name` (case-insensitive), in the order received.
    pub fn header_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers.iter().filter(move |(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// An HTTP response from the core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Response headers (always including `content-type`).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// Lines for the operator's log, never sent to the client: for a 5xx, what went
    /// wrong; for a successful response, what the request passed over that the
    /// operator should look into, such as the records a job or a list skipped because
    /// it could not read them (one line each). Hosts log it whatever the status.
    pub log: Option<String>,
}

impl Response {
    /// A JSON response with the given status.
    pub fn json(status: u16, body: Vec<u8>) -> Self {
        Response { status, headers: alloc::vec![("content-type".into(), "application/json".into())], body, log: None }
    }

    /// A 200 response whose body is `value` serialized as JSON.
    pub fn ok<T: serde::Serialize>(value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(body) => Response::json(200, body),
            Err(e) => crate::Error::Internal(alloc::format!("serializing a response: {e}")).into_response(),
        }
    }

    /// This response with `lines` for the operator's log, one a line; unchanged when
    /// there are none.
    pub fn with_log_lines(mut self, lines: &[String]) -> Self {
        if !lines.is_empty() {
            self.log = Some(lines.join("\n"));
        }
        self
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// The response of every [`Error`].
impl Error {
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

/// The decoded value of query parameter `name` (`None` when absent); a 400 naming it
/// when it is not decodable or given twice (a second value would otherwise go unchecked).
pub fn query_param(query: &str, name: &str) -> Result<Option<String>, crate::model::error::Error> {
    let bad =
        |problem: &str| crate::model::error::Error::BadRequest(alloc::format!("query parameter {name} {problem}"));
    let mut found = None;
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if percent_decode(&key.replace('+', " ")).is_none_or(|key| key != name) {
            continue;
        }
        if found.is_some() {
            return Err(bad("appears twice"));
        }
        let value =
            percent_decode(&value.replace('+', " ")).ok_or_else(|| bad("is not valid percent-encoded UTF-8"))?;
        found = Some(value);
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::error::StoreError;

    #[test]
    fn query_parameters_are_found_and_decoded() {
        let q = "after=2024-01-01T00%3A00%3A00Z&migration_id=3&flag";
        assert_eq!(query_param(q, "after"), Ok(Some("2024-01-01T00:00:00Z".into())));
        assert_eq!(query_param(q, "migration_id"), Ok(Some("3".into())));
        assert_eq!(query_param(q, "flag"), Ok(Some("".into())));
        assert_eq!(query_param(q, "missing"), Ok(None));
        let message = |result: Result<Option<String>, crate::model::error::Error>| match result {
            Err(crate::model::error::Error::BadRequest(message)) => message,
            other => panic!("not a 400: {other:?}"),
        };
        assert_eq!(message(query_param("a=%zz", "a")), "query parameter a is not valid percent-encoded UTF-8");
        assert_eq!(message(query_param("a=1&b=2&a=1", "a")), "query parameter a appears twice");
        assert_eq!(message(query_param("a=1&%61=bogus", "a")), "query parameter a appears twice");
    }

    #[test]
    fn header_lookup_ignores_case() {
        let mut req = Request::new(Method::Get, "/version?x=1");
        req.headers.push(("Authorization".into(), "Bearer t".into()));
        assert_eq!(req.header("authorization"), Some("Bearer t"));
        req.headers.push(("AUTHORIZATION".into(), "Bearer u".into()));
        assert_eq!(req.header_values("Authorization").collect::<alloc::vec::Vec<_>>(), ["Bearer t", "Bearer u"]);
        assert_eq!(req.query, "x=1");
        assert_eq!(req.path, "/version");
    }

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
