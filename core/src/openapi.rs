//! The node's OpenAPI 3.1 document, served as `GET /openapi.json` (also under
//! `/api/scan`) with `content-type: application/json`.
//!
//! The document is `core/openapi.json`, compiled into the node without the whitespace
//! between its tokens (the core's build script), and written with the default currency
//! word. A node configured with another word serves it with the
//! spellings that follow the word ([`crate::names::ApiNames`]) spelled its way: every
//! occurrence of `/v0/coin-price/votes`, `coin_price_votes` and `coin-rules`, wherever it
//! stands (a path, a property, a schema name or reference that contains it, a
//! description), becomes the configured spelling, so `$ref`s stay consistent. With the
//! default word the document is served as it is.

use alloc::borrow::Cow;
use alloc::string::String;

use crate::config::Names;
use crate::http::Response;
use crate::names::ApiNames;

/// The document as written, with the default spellings.
pub const DOCUMENT: &str = include_str!(concat!(env!("OUT_DIR"), "/openapi.json"));

/// The spellings the document is written with: [`ApiNames`] of the default currency
/// word, in the order they are replaced.
const DEFAULT_SPELLINGS: [&str; 3] = ["/v0/coin-price/votes", "coin_price_votes", "coin-rules"];

/// `document` with the default spellings replaced by those of `names`; borrowed when
/// they are the same.
pub fn spelled(document: &'static str, names: &Names) -> Cow<'static, str> {
    let api = ApiNames::new(names);
    let configured = [api.price_votes_path.as_str(), api.price_votes_field.as_str(), api.rules_context_key.as_str()];
    if configured == DEFAULT_SPELLINGS {
        return Cow::Borrowed(document);
    }
    let mut text = String::from(document);
    for (default, spelling) in DEFAULT_SPELLINGS.iter().zip(configured) {
        text = text.replace(default, spelling);
    }
    Cow::Owned(text)
}

/// `GET /openapi.json`.
pub fn serve(names: &Names) -> Response {
    Response::json(200, spelled(DOCUMENT, names).into_owned().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn amulet() -> Names {
        Names { root: "Splice".into(), coin: "Amulet".into() }
    }

    #[test]
    fn the_served_document_is_the_written_one_without_its_whitespace() {
        let written = include_str!("../openapi.json");
        let parse = |text| serde_json::from_str::<serde_json::Value>(text).expect("the document is JSON");
        assert_eq!(parse(DOCUMENT), parse(written));
        let tokens = |text: &str| text.chars().filter(|c| !c.is_whitespace()).count();
        assert!(DOCUMENT.len() < written.len() * 2 / 3, "{} bytes of {}", DOCUMENT.len(), written.len());
        // Nothing but whitespace went.
        assert_eq!(tokens(DOCUMENT), tokens(written));
    }

    #[test]
    fn the_default_spellings_are_those_of_the_default_coin() {
        let api = ApiNames::new(&Config::default().names);
        assert_eq!(DEFAULT_SPELLINGS, [api.price_votes_path.as_str(), &api.price_votes_field, &api.rules_context_key]);
    }

    #[test]
    fn with_the_default_coin_the_document_is_served_as_written() {
        assert!(matches!(spelled(DOCUMENT, &Config::default().names), Cow::Borrowed(d) if core::ptr::eq(d, DOCUMENT)));
        let lower = Names { root: "Platform".into(), coin: "coin".into() };
        assert!(matches!(spelled(DOCUMENT, &lower), Cow::Borrowed(_)));
    }

    #[test]
    fn another_coin_spells_paths_properties_schema_names_and_references_its_way() {
        let document = r##"{"paths": {"/v0/coin-price/votes": {}, "/api/scan/v0/coin-price/votes": {}},
            "components": {"schemas": {"coin_price_votes_list": {"properties": {"coin_price_votes": {}}},
            "Context": {"description": "keys: `coin-rules`", "properties": {"coin-rules": {}}}},
            "x": {"$ref": "#/components/schemas/coin_price_votes_list"}, "other": "CoinRules coin-price coin"}}"##;
        let want = r##"{"paths": {"/v0/amulet-price/votes": {}, "/api/scan/v0/amulet-price/votes": {}},
            "components": {"schemas": {"amulet_price_votes_list": {"properties": {"amulet_price_votes": {}}},
            "Context": {"description": "keys: `amulet-rules`", "properties": {"amulet-rules": {}}}},
            "x": {"$ref": "#/components/schemas/amulet_price_votes_list"}, "other": "CoinRules coin-price coin"}}"##;
        assert_eq!(spelled(document, &amulet()), want);
    }

    #[test]
    fn the_served_document_is_json_with_no_default_spelling_left_for_another_coin() {
        let response = serve(&amulet());
        assert_eq!((response.status, response.header("content-type")), (200, Some("application/json")));
        let text = core::str::from_utf8(&response.body).expect("a UTF-8 document");
        let _: serde_json::Value = serde_json::from_str(text).expect("the served document is JSON");
        for default in DEFAULT_SPELLINGS {
            assert!(!text.contains(default), "{default} is left in the document");
        }
        assert_eq!(serve(&Config::default().names).body, DOCUMENT.as_bytes());
    }
}
