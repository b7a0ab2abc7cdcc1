//! The body of `POST /v0/wallet/buy-traffic-requests` (`CreateBuyTrafficRequest`), parsed and checked.
//!
//! [`BuyTrafficBody::parse`] reads the five required fields (in the interface's order, the
//! first one missing or of the wrong JSON type is the 400; other fields are ignored).
//! [`BuyTrafficBody::check`] applies the rules that need no store, in this order:
//! amounts > 0, `expires_at` > 0 (and within years 1 to 9999, so that it renders as a
//! ledger timestamp), then each id (`receiving_validator_party_id`, `domain_id`,
//! `tracking_id`, in that order) non-empty and at most
//! [`MAX_ID_BYTES`](crate::model::ids::MAX_ID_BYTES) bytes, and gives the request with typed
//! ids and expiry ([`BuyTraffic`]). Whether the synchronizer is known and the party
//! hosted once is the endpoint's business ([`super`]).

use alloc::format;
use alloc::string::String;

use crate::model::json::Json;

use crate::model::error::Error;
use crate::model::ids::{PartyId, SynchronizerId, TrackingId};
use crate::model::time::Timestamp;
use crate::model::value::path::{JsonPath, Segment};
use crate::model::value::read;

/// A buy-traffic request as the client sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuyTrafficBody {
    /// Traffic is bought for the validator hosting this party.
    pub receiving_validator_party_id: String,
    /// The synchronizer to buy traffic on.
    pub domain_id: String,
    /// Bytes of traffic.
    pub traffic_amount: i64,
    /// The client's exactly-once id.
    pub tracking_id: String,
    /// Expiry, µs since the epoch.
    pub expires_at: i64,
}

/// A buy-traffic request that passed [`BuyTrafficBody::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuyTraffic {
    /// Traffic is bought for the validator hosting this party.
    pub receiving_validator_party_id: PartyId,
    /// The synchronizer to buy traffic on.
    pub domain_id: SynchronizerId,
    /// Bytes of traffic, more than 0.
    pub traffic_amount: i64,
    /// The client's exactly-once id.
    pub tracking_id: TrackingId,
    /// Expiry, after the epoch.
    pub expires_at: Timestamp,
}

fn bad(message: impl Into<String>) -> Error {
    Error::BadRequest(message.into())
}

impl BuyTrafficBody {
    /// Parses the JSON body; a 400 names the field at fault.
    pub fn parse(body: &[u8]) -> Result<Self, Error> {
        let json = Json::parse(body).map_err(|e| bad(format!("the body is not valid JSON: {e}")))?;
        let root = JsonPath::new();
        let object = read::object(&json, &root).map_err(|_| {
            bad(format!(
                "the body must be a JSON object with the buy-traffic request's fields, not {}",
                read::describe(&json)
            ))
        })?;
        let field = |name: &'static str| -> Result<(&Json<'_>, JsonPath), Error> {
            let value =
                object.get(name).filter(|v| !v.is_null()).ok_or_else(|| bad(format!("missing field {name}")))?;
            let mut path = JsonPath::new();
            path.push(Segment::Field(name));
            Ok((value, path))
        };
        let text = |name: &'static str| -> Result<String, Error> {
            let (value, path) = field(name)?;
            read::string(value, &path).map(String::from).map_err(|e| bad(format!("{e}")))
        };
        let int64 = |name: &'static str| -> Result<i64, Error> {
            let (value, path) = field(name)?;
            read::int64(value, &path).map_err(|e| bad(format!("{e}")))
        };
        Ok(BuyTrafficBody {
            receiving_validator_party_id: text("receiving_validator_party_id")?,
            domain_id: text("domain_id")?,
            traffic_amount: int64("traffic_amount")?,
            tracking_id: text("tracking_id")?,
            expires_at: int64("expires_at")?,
        })
    }

    /// The rules that need no store, in the module's order; returns the request with
    /// its ids typed.
    pub fn check(&self) -> Result<BuyTraffic, Error> {
        if self.traffic_amount <= 0 {
            return Err(bad(format!("traffic_amount must be greater than 0, not {}", self.traffic_amount)));
        }
        if self.expires_at <= 0 {
            return Err(bad(format!(
                "expires_at must be greater than 0 (microseconds since the Unix epoch), not {}",
                self.expires_at
            )));
        }
        let expires_at = Timestamp::from_micros(self.expires_at).map_err(|_| {
            bad(format!(
                "expires_at {} is after year 9999; it is in microseconds since the Unix epoch",
                self.expires_at
            ))
        })?;
        let non_empty = |name: &str, value: &str| {
            if value.is_empty() { Err(bad(format!("{name} must not be empty"))) } else { Ok(()) }
        };
        non_empty("receiving_validator_party_id", &self.receiving_validator_party_id)?;
        let receiving_validator_party_id =
            PartyId::parse("receiving_validator_party_id", &self.receiving_validator_party_id)?;
        non_empty("domain_id", &self.domain_id)?;
        let domain_id = SynchronizerId::parse("domain_id", &self.domain_id)?;
        non_empty("tracking_id", &self.tracking_id)?;
        let tracking_id = TrackingId::parse("tracking_id", &self.tracking_id)?;
        Ok(BuyTraffic {
            receiving_validator_party_id,
            domain_id,
            traffic_amount: self.traffic_amount,
            tracking_id,
            expires_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(result: Result<impl core::fmt::Debug, Error>) -> String {
        match result {
            Err(Error::BadRequest(m)) => m,
            other => panic!("want a 400, got {other:?}"),
        }
    }

    const GOOD: &str = r#"{"receiving_validator_party_id":"p::1","domain_id":"d::1","traffic_amount":100,"tracking_id":"t-1","expires_at":4070908800000000,"extra":true}"#;

    #[test]
    fn a_complete_body_parses_and_passes() {
        let body = BuyTrafficBody::parse(GOOD.as_bytes()).unwrap();
        assert_eq!(body.traffic_amount, 100);
        assert_eq!(body.tracking_id, "t-1");
        let checked = body.check().unwrap();
        assert_eq!(checked.expires_at.micros(), 4_070_908_800_000_000);
        assert_eq!((checked.tracking_id.as_str(), checked.domain_id.as_str()), ("t-1", "d::1"));
    }

    #[test]
    fn parse_errors_name_the_field() {
        for (body, want) in [
            ("", "not valid JSON"),
            ("[]", "must be a JSON object"),
            ("{}", "missing field receiving_validator_party_id"),
            (
                r#"{"receiving_validator_party_id":1}"#,
                "receiving_validator_party_id: expected a string, found a number",
            ),
            (r#"{"receiving_validator_party_id":"p","domain_id":null}"#, "missing field domain_id"),
            (r#"{"receiving_validator_party_id":"p","domain_id":"d"}"#, "missing field traffic_amount"),
            (
                r#"{"receiving_validator_party_id":"p","domain_id":"d","traffic_amount":"5"}"#,
                "traffic_amount: expected an integer (int64), found a string",
            ),
            (
                r#"{"receiving_validator_party_id":"p","domain_id":"d","traffic_amount":1.5}"#,
                "traffic_amount: expected an integer (int64), found 1.5",
            ),
            (r#"{"receiving_validator_party_id":"p","domain_id":"d","traffic_amount":5}"#, "missing field tracking_id"),
            (
                r#"{"receiving_validator_party_id":"p","domain_id":"d","traffic_amount":5,"tracking_id":"t","expires_at":true}"#,
                "expires_at: expected an integer (int64), found a boolean",
            ),
            (
                r#"{"receiving_validator_party_id":"p","domain_id":"d","traffic_amount":5,"tracking_id":"t","expires_at":9223372036854775808}"#,
                "expires_at: 9223372036854775808 is out of the int64 range",
            ),
        ] {
            let got = message(BuyTrafficBody::parse(body.as_bytes()));
            assert!(got.contains(want), "{body}: {got:?} should contain {want:?}");
        }
    }

    #[test]
    fn checks_come_in_the_designed_order() {
        let base = BuyTrafficBody::parse(GOOD.as_bytes()).unwrap();
        let with = |f: fn(&mut BuyTrafficBody)| {
            let mut b = base.clone();
            f(&mut b);
            message(b.check())
        };
        assert!(
            with(|b| {
                b.traffic_amount = 0;
                b.expires_at = 0
            })
            .starts_with("traffic_amount")
        );
        assert!(with(|b| b.traffic_amount = -1).starts_with("traffic_amount"));
        assert!(
            with(|b| {
                b.expires_at = 0;
                b.tracking_id.clear()
            })
            .starts_with("expires_at")
        );
        assert!(with(|b| b.expires_at = i64::MAX).contains("after year 9999"));
        assert!(
            with(|b| {
                b.receiving_validator_party_id.clear();
                b.tracking_id.clear()
            })
            .starts_with("receiving_validator_party_id")
        );
        assert!(
            with(|b| {
                b.domain_id.clear();
                b.tracking_id.clear()
            })
            .starts_with("domain_id")
        );
        assert!(with(|b| b.tracking_id.clear()).starts_with("tracking_id"));
        assert!(
            with(|b| {
                b.domain_id = "d".repeat(513);
                b.tracking_id = "t".repeat(513)
            })
            .starts_with("domain_id is 513 bytes long")
        );
    }

    #[test]
    fn a_tracking_id_over_512_bytes_is_refused_naming_the_field() {
        let mut body = BuyTrafficBody::parse(GOOD.as_bytes()).unwrap();
        body.tracking_id = "t".repeat(900_000);
        assert_eq!(message(body.check()), "tracking_id is 900000 bytes long; ids are at most 512 bytes");
        body.tracking_id = "t".repeat(512);
        assert!(body.check().is_ok());
        body.receiving_validator_party_id = "p".repeat(513);
        assert_eq!(message(body.check()), "receiving_validator_party_id is 513 bytes long; ids are at most 512 bytes");
    }
}
