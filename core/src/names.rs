//! Qualified template names, spelled from the configured [`Names`].
//!
//! The node matches templates by `<Module.Path>:<Entity>` and ignores the package id
//! ([`crate::update::TemplateId::qualified_name`]). The module root and the currency
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
//! ([`is_price_segment`]); the OpenAPI document is served with these spellings
//! ([`crate::openapi`]).

use alloc::format;
use alloc::string::String;

use crate::config::Names;

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
}

impl ApiNames {
    /// The spellings for the currency word of `names`.
    pub fn new(names: &Names) -> Self {
        let coin = names.coin.to_ascii_lowercase();
        ApiNames {
            price_votes_path: format!("/v0/{coin}{PRICE_SUFFIX}/votes"),
            price_votes_field: format!("{coin}_price_votes"),
            rules_context_key: format!("{coin}-rules"),
        }
    }
}

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
