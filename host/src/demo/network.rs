//! The simulated network: the DSO party, its super validators, the validators and the
//! users they host, two synchronizers, and the packages and templates of the history.

use ledger_node_core::model::update::TemplateId;
use ledger_node_core::state::network::{Topology, WalletUser};

use super::random::Rng;

/// A synchronizer: the global one, where transactions run, and an app synchronizer that
/// contracts are reassigned to and back from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Synchronizer {
    Global,
    App,
}

impl Synchronizer {
    pub(super) fn other(self) -> Self {
        match self {
            Synchronizer::Global => Synchronizer::App,
            Synchronizer::App => Synchronizer::Global,
        }
    }
}

/// The packages whose templates and interfaces the history uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Package {
    Coin,
    DsoGovernance,
    TokenApi,
    NameService,
}

impl Package {
    const ALL: [Package; 4] = [Package::Coin, Package::DsoGovernance, Package::TokenApi, Package::NameService];

    fn name(self) -> &'static str {
        match self {
            Package::Coin => "platform-coin",
            Package::DsoGovernance => "platform-dso-governance",
            Package::TokenApi => "platform-api-token-transfer-instruction-v1",
            Package::NameService => "platform-coin-name-service",
        }
    }
}

/// The templates of the history, with the default names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Template {
    DsoRules,
    Confirmation,
    CoinPriceVote,
    CoinRules,
    ExternalPartyConfigState,
    OpenMiningRound,
    ClosedMiningRound,
    Coin,
    LockedCoin,
    CoinTransferInstruction,
    IssuingMiningRound,
    ExternalPartyCoinRules,
    TransferCommandCounter,
    TransferCommand,
    TransferPreapproval,
    FeaturedAppRight,
    UnclaimedDevelopmentFundCoupon,
    ValidatorLicense,
    SvNodeState,
    VoteRequest,
    AnsRules,
    AnsEntry,
    CoinAllocation,
}

impl Template {
    const ALL: [Template; 23] = [
        Template::DsoRules,
        Template::Confirmation,
        Template::CoinPriceVote,
        Template::CoinRules,
        Template::ExternalPartyConfigState,
        Template::OpenMiningRound,
        Template::ClosedMiningRound,
        Template::Coin,
        Template::LockedCoin,
        Template::CoinTransferInstruction,
        Template::IssuingMiningRound,
        Template::ExternalPartyCoinRules,
        Template::TransferCommandCounter,
        Template::TransferCommand,
        Template::TransferPreapproval,
        Template::FeaturedAppRight,
        Template::UnclaimedDevelopmentFundCoupon,
        Template::ValidatorLicense,
        Template::SvNodeState,
        Template::VoteRequest,
        Template::AnsRules,
        Template::AnsEntry,
        Template::CoinAllocation,
    ];

    fn qualified_name(self) -> &'static str {
        match self {
            Template::DsoRules => "Platform.DsoRules:DsoRules",
            Template::Confirmation => "Platform.DsoRules:Confirmation",
            Template::CoinPriceVote => "Platform.DSO.CoinPrice:CoinPriceVote",
            Template::CoinRules => "Platform.CoinRules:CoinRules",
            Template::ExternalPartyConfigState => "Platform.ExternalPartyConfigState:ExternalPartyConfigState",
            Template::OpenMiningRound => "Platform.Round:OpenMiningRound",
            Template::ClosedMiningRound => "Platform.Round:ClosedMiningRound",
            Template::Coin => "Platform.Coin:Coin",
            Template::LockedCoin => "Platform.Coin:LockedCoin",
            Template::CoinTransferInstruction => "Platform.CoinTransferInstruction:CoinTransferInstruction",
            Template::IssuingMiningRound => "Platform.Round:IssuingMiningRound",
            Template::ExternalPartyCoinRules => "Platform.ExternalPartyCoinRules:ExternalPartyCoinRules",
            Template::TransferCommandCounter => "Platform.ExternalPartyCoinRules:TransferCommandCounter",
            Template::TransferCommand => "Platform.ExternalPartyCoinRules:TransferCommand",
            Template::TransferPreapproval => "Platform.CoinRules:TransferPreapproval",
            Template::FeaturedAppRight => "Platform.Coin:FeaturedAppRight",
            Template::UnclaimedDevelopmentFundCoupon => "Platform.Coin:UnclaimedDevelopmentFundCoupon",
            Template::ValidatorLicense => "Platform.ValidatorLicense:ValidatorLicense",
            Template::SvNodeState => "Platform.DSO.SvState:SvNodeState",
            Template::VoteRequest => "Platform.DsoRules:VoteRequest",
            Template::AnsRules => "Platform.Ans:AnsRules",
            Template::AnsEntry => "Platform.Ans:AnsEntry",
            Template::CoinAllocation => "Platform.CoinAllocation:CoinAllocation",
        }
    }

    /// The package name its contracts carry.
    pub(super) fn package_name(self) -> &'static str {
        self.package().name()
    }

    fn package(self) -> Package {
        match self {
            Template::DsoRules
            | Template::Confirmation
            | Template::CoinPriceVote
            | Template::SvNodeState
            | Template::VoteRequest => Package::DsoGovernance,
            Template::AnsRules | Template::AnsEntry => Package::NameService,
            _ => Package::Coin,
        }
    }
}

/// Interfaces of the token standard that choices are exercised through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Interface {
    TransferFactory,
    TransferInstruction,
    AllocationFactory,
    Allocation,
}

/// A super validator or validator: its name, its participant and its own party.
#[derive(Debug)]
pub(super) struct Node {
    pub(super) name: &'static str,
    pub(super) participant: String,
    pub(super) party: String,
}

/// A party that holds coins: a user or a validator's own party.
#[derive(Debug)]
pub(super) struct Owner {
    pub(super) party: String,
    /// Index into `validators`: the validator that hosts it (the transfer provider).
    pub(super) validator: usize,
    /// An external party signs its own transactions (`external_transaction_hash`).
    pub(super) external: bool,
    /// Also hosted on this validator's participant, on the global synchronizer.
    pub(super) also_hosted_by: Option<usize>,
}

/// Who is who, and the ids of everything the history names.
#[derive(Debug)]
pub(super) struct Network {
    pub(super) dso: String,
    pub(super) svs: Vec<Node>,
    pub(super) validators: Vec<Node>,
    pub(super) owners: Vec<Owner>,
    pub(super) global: String,
    pub(super) app: String,
    template_ids: Vec<TemplateId>,
    interface_ids: [TemplateId; 4],
}

/// The users: `(name, index into validators)` of the validator hosting each.
const USERS: [(&str, usize); 6] = [("alice", 0), ("bob", 0), ("carol", 1), ("dave", 1), ("erin", 2), ("frank", 2)];
/// The wallet users: `(user id, index into owners)`.
const WALLET_USERS: [(&str, usize); 4] = [("alice", 0), ("bob", 1), ("carol", 2), ("dave", 3)];

impl Network {
    pub(super) fn new(rng: &mut Rng) -> Self {
        fn namespace(rng: &mut Rng) -> String {
            let mut ns = String::from("1220");
            rng.push_hex(&mut ns, 4);
            ns
        }
        fn node(name: &'static str, rng: &mut Rng) -> Node {
            let ns = namespace(rng);
            Node { name, participant: format!("PAR::{name}::{ns}"), party: format!("{name}::{ns}") }
        }
        let svs: Vec<Node> = ["sv1", "sv2", "sv3", "sv4"].into_iter().map(|name| node(name, rng)).collect();
        let validators: Vec<Node> =
            ["validator1", "validator2", "validator3"].into_iter().map(|name| node(name, rng)).collect();
        let dso = format!("DSO::{}", namespace(rng));
        let mut owners: Vec<Owner> = USERS
            .iter()
            .map(|&(name, validator)| {
                let external = name == "frank";
                // Local parties share their participant's namespace; an external party
                // has its own key, so its own namespace.
                let party = if external {
                    format!("{name}::{}", namespace(rng))
                } else {
                    let participant_party = &validators[validator].party;
                    let ns = participant_party.split_once("::").map_or("", |(_, ns)| ns);
                    format!("{name}::{ns}")
                };
                Owner { party, validator, external, also_hosted_by: (name == "erin").then_some(1) }
            })
            .collect();
        owners.extend(validators.iter().enumerate().map(|(i, v)| Owner {
            party: v.party.clone(),
            validator: i,
            external: false,
            also_hosted_by: None,
        }));
        let global = format!("global-domain::{}", namespace(rng));
        let app = format!("app-domain::{}", namespace(rng));
        let package_ids: Vec<String> = Package::ALL
            .iter()
            .map(|_| {
                let mut id = String::new();
                rng.push_hex(&mut id, 4);
                id
            })
            .collect();
        let package_id = |p: Package| &package_ids[Package::ALL.iter().position(|q| *q == p).unwrap_or(0)];
        let template_ids =
            Template::ALL.iter().map(|t| template_id(package_id(t.package()), t.qualified_name())).collect();
        let api = package_id(Package::TokenApi);
        let interface_ids = [
            template_id(api, "Platform.Api.Token.TransferInstructionV1:TransferFactory"),
            template_id(api, "Platform.Api.Token.TransferInstructionV1:TransferInstruction"),
            template_id(api, "Platform.Api.Token.AllocationInstructionV1:AllocationFactory"),
            template_id(api, "Platform.Api.Token.AllocationV1:Allocation"),
        ];
        Network { dso, svs, validators, owners, global, app, template_ids, interface_ids }
    }

    pub(super) fn template_id(&self, template: Template) -> &TemplateId {
        let index = Template::ALL.iter().position(|t| *t == template);
        // Every template is in `ALL`, which `template_ids` follows.
        &self.template_ids[index.unwrap_or(0)]
    }

    pub(super) fn interface_id(&self, interface: Interface) -> &TemplateId {
        match interface {
            Interface::TransferFactory => &self.interface_ids[0],
            Interface::TransferInstruction => &self.interface_ids[1],
            Interface::AllocationFactory => &self.interface_ids[2],
            Interface::Allocation => &self.interface_ids[3],
        }
    }

    pub(super) fn synchronizer_id(&self, synchronizer: Synchronizer) -> &str {
        match synchronizer {
            Synchronizer::Global => &self.global,
            Synchronizer::App => &self.app,
        }
    }

    pub(super) fn owner(&self, index: usize) -> &str {
        &self.owners[index].party
    }

    pub(super) fn provider(&self, owner: usize) -> &str {
        &self.validators[self.owners[owner].validator].party
    }

    /// The hosting of every party, as `topology` records.
    pub(super) fn topology(&self) -> Vec<Topology> {
        let mut out = Vec::new();
        for synchronizer in [Synchronizer::Global, Synchronizer::App] {
            let mut hosted = |party: &str, participant_ids: Vec<&str>| {
                out.push(Topology {
                    synchronizer_id: self.synchronizer_id(synchronizer).to_owned(),
                    party_id: party.to_owned(),
                    participant_ids: participant_ids.into_iter().map(str::to_owned).collect(),
                    learned_at: None,
                });
            };
            hosted(&self.dso, vec![&self.svs[0].participant]);
            if synchronizer == Synchronizer::Global {
                for sv in &self.svs {
                    hosted(&sv.party, vec![&sv.participant]);
                }
            }
            for owner in &self.owners {
                let mut participants = vec![self.validators[owner.validator].participant.as_str()];
                if let (Synchronizer::Global, Some(also)) = (synchronizer, owner.also_hosted_by) {
                    participants.push(&self.validators[also].participant);
                }
                hosted(&owner.party, participants);
            }
        }
        out
    }

    /// The wallet users, as `wallet_user` records.
    pub(super) fn wallet_users(&self) -> Vec<WalletUser> {
        WALLET_USERS
            .iter()
            .map(|&(user_id, owner)| WalletUser { user_id: user_id.to_owned(), party_id: self.owner(owner).to_owned() })
            .collect()
    }
}

/// `<package-id>:<qualified name>`; the package ids are hex and the names are the
/// constants above, so the id has its three parts.
fn template_id(package_id: &str, qualified_name: &str) -> TemplateId {
    TemplateId::parse(&format!("{package_id}:{qualified_name}")).expect("a hex package id and a qualified name")
}
