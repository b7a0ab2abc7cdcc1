//! Who is calling: the operator's admin token ([`authorize`]) and a wallet user's JWT
//! ([`jwt`]), each read from the request's one bearer header.
//!
//! [`bearer_token`] reads the credential of admin and wallet calls alike: exactly one
//! `Authorization: Bearer <token>` header; none, another scheme, or more than one such
//! header is a 401.

pub mod jwt;

use crate::api::http::Request;
use crate::model::config::{self, Config};
use crate::model::error::Error;

/// Checks the admin bearer token: 403 when admin endpoints are disabled, 401 when the
/// credential is missing or wrong.
pub fn authorize(request: &Request, config: &Config) -> Result<(), Error> {
    let Some(expected) = &config.admin_token else {
        return Err(Error::Forbidden(alloc::format!(
            "admin endpoints are disabled: {} is not set",
            config::ADMIN_TOKEN
        )));
    };
    let token = bearer_token(request)?;
    if constant_time_eq(token.as_bytes(), expected.as_bytes()) {
        Ok(())
    } else {
        Err(Error::Unauthorized("the admin bearer token is not valid".into()))
    }
}

/// The token of the request's one `Authorization: Bearer <token>` header (admin and
/// wallet calls alike). A request with several Authorization headers is refused rather
/// than judged by one of them: hosts and proxies do not agree on which one counts.
pub fn bearer_token(request: &Request) -> Result<&str, Error> {
    let mut headers = request.header_values("authorization");
    let header = headers.next().ok_or_else(|| {
        Error::Unauthorized("missing Authorization header; send `Authorization: Bearer <token>`".into())
    })?;
    if headers.next().is_some() {
        return Err(Error::Unauthorized(
            "more than one Authorization header; send exactly one `Authorization: Bearer <token>`".into(),
        ));
    }
    let (scheme, token) = header.trim().split_once(' ').unwrap_or((header, ""));
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(Error::Unauthorized("the Authorization header must be `Bearer <token>`".into()));
    }
    Ok(token)
}

/// Compares without an early exit on the first differing byte.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::http::Method;

    fn request(authorizations: &[&str]) -> Request {
        let mut request = Request::new(Method::Post, "/v0/admin/tick");
        for value in authorizations {
            request.headers.push(("Authorization".into(), (*value).into()));
        }
        request
    }

    #[test]
    fn one_bearer_header_gives_its_token() {
        assert_eq!(bearer_token(&request(&["Bearer abc"])), Ok("abc"));
        assert_eq!(bearer_token(&request(&["bearer  abc "])), Ok("abc"));
    }

    #[test]
    fn more_than_one_authorization_header_is_refused() {
        for headers in [&["Bearer abc", "Bearer abc"][..], &["Bearer abc", "Bearer other"], &["Basic x", "Bearer abc"]]
        {
            match bearer_token(&request(headers)) {
                Err(Error::Unauthorized(message)) => assert!(message.starts_with("more than one Authorization header")),
                other => panic!("{headers:?}: {other:?}"),
            }
        }
        let mut mixed = request(&["Bearer abc"]);
        mixed.headers.push(("authorization".into(), "Bearer abc".into()));
        assert!(bearer_token(&mixed).is_err());
        let config = Config::from_pairs([(config::ADMIN_TOKEN, "abc")]).unwrap();
        assert!(authorize(&request(&["Bearer abc"]), &config).is_ok());
        assert_eq!(authorize(&request(&["Bearer abc", "Bearer abc"]), &config).map_err(|e| e.status()), Err(401));
    }

    #[test]
    fn a_missing_or_malformed_header_is_refused() {
        assert!(matches!(bearer_token(&request(&[])), Err(Error::Unauthorized(m)) if m.starts_with("missing")));
        assert!(matches!(bearer_token(&request(&["Basic abc"])), Err(Error::Unauthorized(_))));
        assert!(matches!(bearer_token(&request(&["Bearer "])), Err(Error::Unauthorized(_))));
    }
}
