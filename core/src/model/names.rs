//! Qualified template names, spelled from the configured [`Names`].
//!
//! The node matches templates by `<Module.Path>:<Entity>` and ignores the package id
//! ([`crate::model::update::TemplateId::qualified_name`]). The module root and the currency
//! word come from configuration, so every name is built here, once, from [`Names`]:
//!
//! | field | with the defaults (`Platform`, `Coin`) |
//! |---|---|
//! | [`TemplateNames::open_round`] | `Platform.Round:OpenMiningRound` |
//! | [`TemplateNames::closed_round`] | `Platform.Round:ClosedMiningRound` |
//! | [`TemplateNames::confirmation`] | `Platform.DsoRules:Confirmation` |
//! | [`TemplateNames::price_vote`] | `Platform.DSO.CoinPrice:CoinPriceVote` |
//! | [`TemplateNames::coin_rules`] | `Platform.CoinRules:CoinRules` |
//! | [`TemplateNames::locked_coin`] | `Platform.Coin:LockedCoin` |
//! | [`TemplateNames::external_party_config`] | `Platform.ExternalPartyConfigState:ExternalPartyConfigState` |
//! | [`TemplateNames::transfer_instruction`] | `Platform.CoinTransferInstruction:CoinTransferInstruction` |
//! | [`TemplateNames::buy_traffic_request`] | `Platform.Wallet.BuyTrafficRequest:BuyTrafficRequest` |
//!
//! and the payload field of a transfer instruction that names its locked coin,
//! [`TemplateNames::locked_coin_field`] (`lockedCoin`).
//!
//! ## Spellings of the API that follow the currency word
//!
//! A few names of the public API carry the currency word too, so that a client of a
//! network whose coin is `Amulet` finds the node where it looks for that network's
//! nodes. [`ApiNames`] spells them (`coin` is the configured word, `lower(coin)` its
//! ASCII lower case):
//!
//! | field | spelling | `Coin` (default) | `Amulet` |
//! |---|---|---|---|
//! | [`ApiNames::price_votes_path`] | `/v0/{lower(coin)}-price/votes` | `/v0/coin-price/votes` | `/v0/amulet-price/votes` |
//! | [`ApiNames::price_votes_field`] | `{lower(coin)}_price_votes` | `coin_price_votes` | `amulet_price_votes` |
//! | [`ApiNames::rules_context_key`] | `{lower(coin)}-rules` | `coin-rules` | `amulet-rules` |
//!
//! Only the configured spelling is served: with `Amulet`, `/v0/coin-price/votes` is a
//! 404, as on that network. Routing matches the path segment without allocating
//! ([`is_price_segment`]).
//!
//! ## Text written with the default names
//!
//! Prose and identifiers that name the coin or the module root are spelled by the
//! configured names too, wherever the node shows them: an error message says "locked
//! amulet", not "locked coin", on a network whose coin is `Amulet`. Messages are
//! formatted with [`ApiNames::coin_word`]; the OpenAPI document, written once with the
//! default names, is spelled by [`respell`] ([`crate::api::openapi`]). `respell` is the one
//! rule for such text: every `Platform` is the configured root, every `Coin` the
//! configured currency word as written (`Amulet`), every `coin` that word in lower case
//! (`amulet`), every `platform` the root in lower case (package names such as
//! `platform-coin` become `splice-amulet`), wherever it stands, inside a longer word too (`listCoinPriceVotes`,
//! `ListCoinPriceVotesResponse`, `coin_price_votes` become `listAmuletPriceVotes`,
//! `ListAmuletPriceVotesResponse`, `amulet_price_votes`). Upper-case `COIN` is left
//! alone: it only stands in the configuration variable's name,
//! `LEDGER_NODE_NAMES_COIN`. So a text written with the default names says `Coin`,
//! `coin`, `Platform` or `platform` only where it means the configured names. The demo
//! generator of the native host spells the identifiers of its history with the same
//! rule.

use alloc::borrow::Cow;
use alloc::format;
use alloc::string::String;

use crate::model::config::{DEFAULT_COIN, DEFAULT_ROOT};

use crate::model::config::Names;

/// Every qualified template name the node reads, for one configured spelling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateNames {
    /// `{root}.Round:OpenMiningRound`
    pub open_round: String,
    /// `{root}.Round:ClosedMiningRound`
    pub closed_round: String,
    /// `{root}.DsoRules:Confirmation`
    pub confirmation: String,
    /// `{root}.DSO.{coin}Price:{coin}PriceVote`
    pub price_vote: String,
    /// `{root}.{coin}Rules:{coin}Rules`
    pub coin_rules: String,
    /// `{root}.{coin}:Locked{coin}`
    pub locked_coin: String,
    /// `{root}.ExternalPartyConfigState:ExternalPartyConfigState`
    pub external_party_config: String,
    /// `{root}.{coin}TransferInstruction:{coin}TransferInstruction`
    pub transfer_instruction: String,
    /// `{root}.Wallet.BuyTrafficRequest:BuyTrafficRequest`
    pub buy_traffic_request: String,
    /// `locked{coin}`: the transfer instruction's field holding the locked coin's id.
    pub locked_coin_field: String,
}

impl TemplateNames {
    /// The names as `names` spells them.
    pub fn new(names: &Names) -> Self {
        let Names { root, coin } = names;
        TemplateNames {
            open_round: format!("{root}.Round:OpenMiningRound"),
            closed_round: format!("{root}.Round:ClosedMiningRound"),
            confirmation: format!("{root}.DsoRules:Confirmation"),
            price_vote: format!("{root}.DSO.{coin}Price:{coin}PriceVote"),
            coin_rules: format!("{root}.{coin}Rules:{coin}Rules"),
            locked_coin: format!("{root}.{coin}:Locked{coin}"),
            external_party_config: format!("{root}.ExternalPartyConfigState:ExternalPartyConfigState"),
            transfer_instruction: format!("{root}.{coin}TransferInstruction:{coin}TransferInstruction"),
            buy_traffic_request: format!("{root}.Wallet.BuyTrafficRequest:BuyTrafficRequest"),
            locked_coin_field: format!("locked{coin}"),
        }
    }
}

/// The spellings of the public API that follow the currency word (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiNames {
    /// `/v0/{lower(coin)}-price/votes`: the path of the latest price votes.
    pub price_votes_path: String,
    /// `{lower(coin)}_price_votes`: the field of the price votes response.
    pub price_votes_field: String,
    /// `{lower(coin)}-rules`: the choice-context key of the coin rules contract.
    pub rules_context_key: String,
    /// `lower(coin)`: the currency word in prose, as in messages ("locked amulet").
    pub coin_word: String,
}

impl ApiNames {
    /// The spellings for the currency word of `names`.
    pub fn new(names: &Names) -> Self {
        let coin = names.coin.to_ascii_lowercase();
        ApiNames {
            price_votes_path: format!("/v0/{coin}{PRICE_SUFFIX}/votes"),
            price_votes_field: format!("{coin}_price_votes"),
            rules_context_key: format!("{coin}-rules"),
            coin_word: coin,
        }
    }
}

/// `text`, written with the default names, spelled with `names` (module docs): every
/// `Platform` becomes `names.root`, every `platform` its lower case, every `Coin`
/// `names.coin`, every `coin` the lower case of `names.coin`, in one pass (a replacement is never replaced again). Borrowed
/// when `names` spell the defaults.
pub fn respell<'t>(text: &'t str, names: &Names) -> Cow<'t, str> {
    if names.root == DEFAULT_ROOT && names.coin == DEFAULT_COIN {
        return Cow::Borrowed(text);
    }
    let (lower_root, lower_coin) = (names.root.to_ascii_lowercase(), names.coin.to_ascii_lowercase());
    let words: [(&str, &str); 4] = [
        (DEFAULT_ROOT, &names.root),
        (DEFAULT_LOWER_ROOT, &lower_root),
        (DEFAULT_COIN, &names.coin),
        (DEFAULT_LOWER_COIN, &lower_coin),
    ];
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut rest = text;
    while let Some(at) = rest.find(['P', 'p', 'C', 'c']) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match words.iter().find(|(default, _)| rest.starts_with(default)) {
            Some((default, spelling)) => {
                out.push_str(spelling);
                rest = &rest[default.len()..];
            }
            None => {
                out.push_str(&rest[..1]);
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The default currency word in lower case.
const DEFAULT_LOWER_COIN: &str = "coin";
/// The default module root in lower case.
const DEFAULT_LOWER_ROOT: &str = "platform";

/// What follows the currency word in the price votes path segment.
const PRICE_SUFFIX: &str = "-price";

/// Whether `segment` is the price votes path segment for the currency word `coin`:
/// `{lower(coin)}-price`, compared without allocating. Only the lower-case spelling
/// matches, as paths are case-sensitive.
pub fn is_price_segment(segment: &str, coin: &str) -> bool {
    segment.strip_suffix(PRICE_SUFFIX).is_some_and(|word| {
        !word.is_empty()
            && word.len() == coin.len()
            && word.bytes().zip(coin.bytes()).all(|(w, c)| w == c.to_ascii_lowercase())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_are_the_platform_templates() {
        let names = TemplateNames::new(&crate::Config::default().names);
        assert_eq!(names.open_round, "Platform.Round:OpenMiningRound");
        assert_eq!(names.closed_round, "Platform.Round:ClosedMiningRound");
        assert_eq!(names.confirmation, "Platform.DsoRules:Confirmation");
        assert_eq!(names.price_vote, "Platform.DSO.CoinPrice:CoinPriceVote");
        assert_eq!(names.coin_rules, "Platform.CoinRules:CoinRules");
        assert_eq!(names.locked_coin, "Platform.Coin:LockedCoin");
        assert_eq!(names.external_party_config, "Platform.ExternalPartyConfigState:ExternalPartyConfigState");
        assert_eq!(names.transfer_instruction, "Platform.CoinTransferInstruction:CoinTransferInstruction");
        assert_eq!(names.buy_traffic_request, "Platform.Wallet.BuyTrafficRequest:BuyTrafficRequest");
        assert_eq!(names.locked_coin_field, "lockedCoin");
    }

    #[test]
    fn another_spelling_changes_root_and_currency_word() {
        let names = TemplateNames::new(&Names { root: "Splice".into(), coin: "Amulet".into() });
        assert_eq!(names.price_vote, "Splice.DSO.AmuletPrice:AmuletPriceVote");
        assert_eq!(names.coin_rules, "Splice.AmuletRules:AmuletRules");
        assert_eq!(names.locked_coin, "Splice.Amulet:LockedAmulet");
        assert_eq!(names.transfer_instruction, "Splice.AmuletTransferInstruction:AmuletTransferInstruction");
        assert_eq!(names.locked_coin_field, "lockedAmulet");
        assert_eq!(names.open_round, "Splice.Round:OpenMiningRound");
    }

    #[test]
    fn api_spellings_follow_the_lower_cased_currency_word() {
        let default = ApiNames::new(&crate::Config::default().names);
        assert_eq!(default.price_votes_path, "/v0/coin-price/votes");
        assert_eq!(default.price_votes_field, "coin_price_votes");
        assert_eq!(default.rules_context_key, "coin-rules");
        let amulet = ApiNames::new(&Names { root: "Splice".into(), coin: "Amulet".into() });
        assert_eq!(amulet.price_votes_path, "/v0/amulet-price/votes");
        assert_eq!(amulet.price_votes_field, "amulet_price_votes");
        assert_eq!(amulet.rules_context_key, "amulet-rules");
        assert_eq!((default.coin_word.as_str(), amulet.coin_word.as_str()), ("coin", "amulet"));
    }

    #[test]
    fn respelling_replaces_the_default_words_inside_identifiers_and_prose_once() {
        let amulet = Names { root: "Splice".into(), coin: "Amulet".into() };
        let text = "listCoinPriceVotes ListCoinPriceVotesResponse coin_price_votes /v0/coin-price/votes \
                    coin-rules; the locked coin; Platform.DSO.CoinPrice:CoinPriceVote; LEDGER_NODE_NAMES_COIN";
        assert_eq!(
            respell(text, &amulet),
            "listAmuletPriceVotes ListAmuletPriceVotesResponse amulet_price_votes /v0/amulet-price/votes \
             amulet-rules; the locked amulet; Splice.DSO.AmuletPrice:AmuletPriceVote; LEDGER_NODE_NAMES_COIN"
        );
        // A spelling that contains a default word is not spelled again.
        let nested = Names { root: "CoinPlatform".into(), coin: "Platformcoin".into() };
        assert_eq!(respell("Platform.Coin coin", &nested), "CoinPlatform.Platformcoin platformcoin");
        // Non-ASCII text passes through whole.
        assert_eq!(respell("Ünïcode coin €", &amulet), "Ünïcode amulet €");
        assert_eq!(respell("platform-coin", &amulet), "splice-amulet");
    }

    #[test]
    fn respelling_with_the_default_names_borrows_the_text() {
        let text = "the Coin of Platform";
        assert!(matches!(respell(text, &crate::Config::default().names), Cow::Borrowed(t) if core::ptr::eq(t, text)));
        let lower = Names { root: "Platform".into(), coin: "coin".into() };
        assert_eq!(respell(text, &lower), "the coin of Platform");
    }

    #[test]
    fn the_price_segment_is_the_lower_cased_word_and_nothing_else() {
        assert!(is_price_segment("coin-price", "Coin"));
        assert!(is_price_segment("amulet-price", "Amulet"));
        assert!(is_price_segment("my_coin2-price", "My_Coin2"));
        for segment in
            ["Amulet-price", "AMULET-price", "amulet-Price", "amulet", "amulets-price", "-price", "coin-price"]
        {
            assert!(!is_price_segment(segment, "Amulet"), "{segment}");
        }
    }
}
