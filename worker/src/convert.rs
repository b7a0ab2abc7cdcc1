//! Translation between workers-rs requests and responses and the core's; nothing else.
//!
//! The request body is read here, as a stream, and never beyond the route's limit
//! ([`ledger_node_core::body_limit`]): a declared `Content-Length` over the limit is
//! refused without reading, and a body that turns out longer stops being kept at the
//! first chunk that crosses it (the rest is read and dropped). Either way the core
//! gets [`Body::TooLarge`] and answers 413.

use futures_util::StreamExt;
use ledger_node_core::{Body, Error, Method};

/// The core's view of `request`, its body read up to the route's limit.
pub async fn request(request: &mut worker::Request) -> Result<ledger_node_core::Request, Error> {
    let method = Method::parse(&request.inner().method());
    let url = request.url().map_err(|e| Error::BadRequest(format!("the request URL does not parse: {e}")))?;
    let path = url.path().to_owned();
    let query = url.query().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = request.headers().entries().collect();
    let limit = ledger_node_core::body_limit(&method, &path);
    let body = body(request, &headers, limit).await?;
    Ok(ledger_node_core::Request { method, path, query, headers, body })
}

/// The body, or [`Body::TooLarge`] as soon as it is known to exceed `limit`.
async fn body(request: &mut worker::Request, headers: &[(String, String)], limit: usize) -> Result<Body, Error> {
    let declared = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Ok(Body::TooLarge);
    }
    if request.inner().body().is_none() {
        return Ok(Body::Complete(Vec::new()));
    }
    let capacity = declared.and_then(|length| usize::try_from(length).ok()).unwrap_or(0).min(limit);
    let mut body = Vec::with_capacity(capacity);
    let mut chunks =
        request.stream().map_err(|e| Error::BadRequest(format!("the request body could not be read: {e}")))?;
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| Error::BadRequest(format!("the request body could not be read: {e}")))?;
        if body.len().saturating_add(chunk.len()) > limit {
            drop(body);
            // Read the rest and throw it away: a body cancelled half-way breaks the
            // connection it came on (under `wrangler dev`, the next request on it
            // fails with a 503). The platform caps request bodies, so this ends.
            while let Some(Ok(_)) = chunks.next().await {}
            return Ok(Body::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Body::Complete(body))
}

/// `response`, or a 500 in its place if its status is one the runtime refuses
/// (outside 200..=599; the runtime would throw and workers-rs would panic). The core
/// never answers such a status, but a bug must not take the isolate down.
pub fn with_valid_status(response: ledger_node_core::Response) -> ledger_node_core::Response {
    if (200..=599).contains(&response.status) {
        response
    } else {
        Error::Internal(format!("the core answered status {}", response.status)).into_response()
    }
}

/// The core's response as a workers-rs one.
pub fn response(response: ledger_node_core::Response) -> worker::Result<worker::Response> {
    let headers = worker::Headers::new();
    for (name, value) in &response.headers {
        headers.append(name, value)?;
    }
    let builder = worker::Response::builder().with_status(response.status).with_headers(headers);
    Ok(if response.body.is_empty() { builder.empty() } else { builder.fixed(response.body) })
}
