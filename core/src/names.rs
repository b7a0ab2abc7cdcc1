//! Qualified template names, spelled from the configured [`Names`] (DESIGN section 2).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_match_the_design_table() {
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
}
