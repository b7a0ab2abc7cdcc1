//! The node's OpenAPI 3.1 document, served as `GET /openapi.json` (also under
//! `/api/scan`) with `content-type: application/json`.
//!
//! The document is `core/openapi.json`, compiled into the node without the whitespace
//! between its tokens (the core's build script), and written with the default names
//! (`Platform`, `Coin`). A node configured with other names serves it spelled by them,
//! with the one rule of [`crate::model::names::respell`]: every `Platform`, `Coin` and `coin`,
//! wherever it stands (a path, a property, a schema name and every `$ref` to it, an
//! `operationId`, a description), becomes the configured root, currency word and its
//! lower case, so `$ref`s stay consistent and a client generated from the served
//! document names its methods and types as the network's own documents do
//! (`listAmuletPriceVotes`, `ListAmuletPriceVotesResponse`). The document therefore
//! writes those words only where they mean the configured names; the one exception is
//! the upper-case configuration variable `LEDGER_NODE_NAMES_COIN`, which `respell`
//! leaves alone. With the default names the document is served as it is.

use alloc::borrow::Cow;

use crate::api::http::Response;
use crate::model::config::Names;
use crate::model::names::respell;

/// The document as written, with the default names.
pub const DOCUMENT: &str = include_str!(concat!(env!("OUT_DIR"), "/openapi.json"));

/// `document` spelled with `names`; borrowed when they are the defaults.
pub fn spelled(document: &'static str, names: &Names) -> Cow<'static, str> {
    respell(document, names)
}

/// `GET /openapi.json`.
pub fn serve(names: &Names) -> Response {
    Response::json(200, spelled(DOCUMENT, names).into_owned().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::Config;

    fn amulet() -> Names {
        Names { root: "Splice".into(), coin: "Amulet".into() }
    }

    #[test]
    fn the_served_document_is_the_written_one_without_its_whitespace() {
        let written = include_str!("../../openapi.json");
        let parse = |text| serde_json::from_str::<serde_json::Value>(text).expect("the document is JSON");
        assert_eq!(parse(DOCUMENT), parse(written));
        let tokens = |text: &str| text.chars().filter(|c| !c.is_whitespace()).count();
        assert!(DOCUMENT.len() < written.len() * 2 / 3, "{} bytes of {}", DOCUMENT.len(), written.len());
        // Nothing but whitespace went.
        assert_eq!(tokens(DOCUMENT), tokens(written));
    }

    #[test]
    fn with_the_default_names_the_document_is_served_as_written() {
        assert!(matches!(spelled(DOCUMENT, &Config::default().names), Cow::Borrowed(d) if core::ptr::eq(d, DOCUMENT)));
    }

    #[test]
    fn other_names_spell_paths_properties_schema_names_references_and_operation_ids() {
        let document = r##"{"paths": {"/v0/coin-price/votes": {"get": {"operationId": "listCoinPriceVotes"}}},
            "components": {"schemas": {"ListCoinPriceVotesResponse": {"properties": {"coin_price_votes": {}}},
            "Context": {"description": "keys: `coin-rules`; the locked coin; `Platform.Coin:LockedCoin`"}},
            "x": {"$ref": "#/components/schemas/ListCoinPriceVotesResponse"}, "env": "LEDGER_NODE_NAMES_COIN"}}"##;
        let want = r##"{"paths": {"/v0/amulet-price/votes": {"get": {"operationId": "listAmuletPriceVotes"}}},
            "components": {"schemas": {"ListAmuletPriceVotesResponse": {"properties": {"amulet_price_votes": {}}},
            "Context": {"description": "keys: `amulet-rules`; the locked amulet; `Splice.Amulet:LockedAmulet`"}},
            "x": {"$ref": "#/components/schemas/ListAmuletPriceVotesResponse"}, "env": "LEDGER_NODE_NAMES_COIN"}}"##;
        assert_eq!(spelled(document, &amulet()), want);
    }

    /// What of the default names may stay in the served document: the configuration
    /// variable's name, which `respell` leaves alone.
    const MAY_STAY: [&str; 1] = ["LEDGER_NODE_NAMES_COIN"];

    #[test]
    fn the_document_served_under_the_networks_names_spells_no_default_name() {
        let response = serve(&amulet());
        assert_eq!((response.status, response.header("content-type")), (200, Some("application/json")));
        let text = core::str::from_utf8(&response.body).expect("a UTF-8 document");
        let json: serde_json::Value = serde_json::from_str(text).expect("the served document is JSON");
        let mut rest = text.to_ascii_lowercase();
        for allowed in MAY_STAY {
            rest = rest.replace(&allowed.to_ascii_lowercase(), "");
        }
        for default in ["coin", "platform"] {
            let left: alloc::vec::Vec<&str> = rest
                .match_indices(default)
                .map(|(at, _)| &rest[at.saturating_sub(40)..(at + 40).min(rest.len())])
                .collect();
            assert!(left.is_empty(), "{default} is left in the served document: {left:#?}");
        }
        assert!(text.contains("listAmuletPriceVotes") && text.contains("ListAmuletPriceVotesResponse"));
        assert!(text.contains("locked amulet") && text.contains("amulet rules"));
        assert!(json["paths"].get("/api/scan/v0/amulet-price/votes").is_some());
        assert_eq!(serve(&Config::default().names).body, DOCUMENT.as_bytes());
    }
}
