//! The router (`Route::parse`) and every endpoint's request-body reader, reached the way
//! a host reaches them: `handle` with an arbitrary method, path, query, headers and body,
//! on a node that holds a small demo history (`history.ndjson`). Input format:
//! `ledger_node_fuzz::decode_request`.
//!
//! Arbitrary requests never panic; a path that does not route is a 404 and one routed
//! for another method a 405, exactly as the router says; a route found at the root is
//! the same route under each of its base paths and is not found under the others; every
//! error is the `{"error": "..."}` envelope and none is an internal error; every JSON
//! answer is JSON the node's strict reader takes.

#![no_main]

use ledger_node_core::api::route::{Base, Route, RouteError};
use ledger_node_core::model::json::Json;
use ledger_node_core::{Method, body_limit};
use ledger_node_fuzz::{config, decode_request, node_with_history, serve};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let request = decode_request(input);
    let coin = &config().names.coin;
    let routed = Route::parse(&request.method, &request.path, coin);
    if let Ok(route) = &routed {
        same_route_under_its_bases(&request.method, &request.path, coin, route);
    }
    let _ = body_limit(&request.method, &request.path);

    let store = node_with_history();
    let response = serve(&request, &store);
    match routed {
        Err(RouteError::NotFound) => assert_eq!(response.status, 404, "an unrouted path"),
        Err(RouteError::MethodNotAllowed { .. }) => assert_eq!(response.status, 405, "a path of another method"),
        Ok(_) => assert_ne!(response.status, 405, "a routed request"),
    }
    assert!((200..600).contains(&response.status), "status {}", response.status);
    if request.method == Method::Head {
        return;
    }
    let json = response.headers.iter().any(|(n, v)| n == "content-type" && v.starts_with("application/json"));
    if response.status >= 400 {
        let body = Json::parse(&response.body).expect("an error is JSON");
        let envelope = body.as_object().expect("an error is an object");
        let message = envelope.get("error").and_then(Json::as_str).expect("an error has an error message");
        assert_eq!(envelope.len(), 1, "an error has the error key alone");
        assert!(
            !message.starts_with("internal error") && !message.starts_with("storage backend failed"),
            "an internal error: {:?}",
            response.log
        );
    } else if json {
        assert!(Json::parse(&response.body).is_ok(), "a JSON answer the strict reader refuses");
    }
});

/// A route found at the root answers under its bases, and only those.
fn same_route_under_its_bases(method: &Method, path: &str, coin: &str, route: &Route) {
    if Base::ALL.iter().any(|base| path.starts_with(base.prefix())) {
        return;
    }
    for base in Base::ALL {
        let under = format!("{}{path}", base.prefix());
        let found = Route::parse(method, &under, coin);
        if route.bases().contains(&base) {
            assert_eq!(found.as_ref(), Ok(route), "{under} routes as {path} does");
        } else {
            assert_eq!(found, Err(RouteError::NotFound), "{under} is not under its base");
        }
    }
}
