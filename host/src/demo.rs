//! `ledger-node demo`: a generated network history, written as the ingest stream
//! (see the README's native section).
//!
//! [`write()`] streams NDJSON ingest records for a small but complete network. The output
//! is a pure function of [`Options`] (a seeded splitmix64 generator drives every choice,
//! and the clock is simulated), so a seed names one history byte for byte. In order:
//!
//! 1. `topology`: the DSO party, four SVs, three validators and six users, hosted on two
//!    synchronizers (`global-domain::1220…` and `app-domain::1220…`). One user, `erin`,
//!    is hosted on two participants of the global synchronizer, so the "several
//!    hosting participants" case of the participant-id route is visible.
//! 2. `wallet_user`: four users (`alice`, `bob`, `carol`, `dave`) and their parties.
//! 3. Exactly `updates` `update` records, record times a few seconds apart from
//!    [`START`] (so a history of a few thousand updates crosses several 3-hour snapshot
//!    boundaries):
//!    - bootstrap: `DsoRules`, `CoinRules` and `ExternalPartyConfigState`, open rounds
//!      0 to 2, and one `CoinPriceVote` per SV;
//!    - every 10 simulated minutes the round automation runs: the oldest
//!      `OpenMiningRound` is archived and a new one created, an earlier round becomes a
//!      `ClosedMiningRound`, an SV creates a `Confirmation` to archive an older closed
//!      round, and a confirmed closed round is archived with its confirmation (so three
//!      rounds are open and two or three closed at any time);
//!    - the workload: coin transfers (a non-consuming `CoinRules_Transfer` whose children
//!      archive the inputs and create the outputs), taps, price vote changes (the old
//!      vote archived, a new one created), transfer instructions through the token
//!      standard interface (a `LockedCoin` and a `CoinTransferInstruction` whose
//!      `lockedCoin` names it), their acceptance, rejection or withdrawal, expired locks
//!      (leaving an instruction whose locked coin is gone), and reassignments of coins
//!      and locked coins between the synchronizers (an unassignment and its assignment a
//!      few updates apart, now and then the assignment first; some contracts are left
//!      in flight at the end);
//!    - with at least [`MIGRATION_MIN_UPDATES`] updates, a hard migration halfway: the
//!      pending reassignments complete, every active contract is re-imported under
//!      migration 1 (import updates: record time `0001-01-01T00:00:00.000000Z`, update
//!      id = contract id), and after half an hour of downtime the history goes on
//!      under migration 1.
//! 4. A `backfill` record per migration (complete, imports complete) and one
//!    `roll_forward_lsu` record planning an upgrade of the global synchronizer a day
//!    after the history ends.
//!
//! Every kind of ledger value ([`ledger_node_core::value`]) appears in payloads, choice arguments or
//! exercise results; created events carry a base64 `created_event_blob`. Each update
//! is written in the canonical ingest form (`Update::to_ingest_json` of the core gives
//! the same bytes back), with template ids `<package-id>:<Module.Path>:<Entity>` under
//! the default names.
//!
//! Memory is bounded whatever the size: records are written as they are generated, and
//! the generator only keeps the contracts it may still act on, whose number is capped
//! (transfers merge coins, instructions and reassignments in progress are capped).

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::{self, Write};

/// Number of `update` records when `--updates` is not given.
pub const DEFAULT_UPDATES: u64 = 1_000;
/// Seed when `--seed` is not given.
pub const DEFAULT_SEED: u64 = 1;
/// Histories of at least this many updates include a hard migration halfway.
pub const MIGRATION_MIN_UPDATES: u64 = 1_000;
/// Record time of the first update: 2025-01-06T08:00:00Z, in microseconds.
pub const START: i64 = 1_736_150_400 * SECOND;

const SECOND: i64 = 1_000_000;
const MINUTE: i64 = 60 * SECOND;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;
/// How often the round automation runs (the rounds' tick duration).
const TICK: i64 = 10 * MINUTE;
/// Numeric amounts are held in units of 10^-10 (Daml's `Numeric 10`).
const UNIT: i64 = 10_000_000_000;
/// At most this many transfer instructions are pending at once.
const MAX_INSTRUCTIONS: usize = 16;
/// At most this many contracts are away on the app synchronizer or in flight at once.
const MAX_REASSIGNED: usize = 8;

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Number of `update` records (transactions, reassignments and imports).
    pub updates: u64,
    /// Seed of the generator: one seed, one history.
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options { updates: DEFAULT_UPDATES, seed: DEFAULT_SEED }
    }
}

/// How many records of each kind were written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// `topology` records.
    pub topology: u64,
    /// `wallet_user` records.
    pub wallet_user: u64,
    /// `update` records that are ordinary transactions.
    pub transactions: u64,
    /// `update` records that are import updates.
    pub imports: u64,
    /// `update` records that are assignments.
    pub assignments: u64,
    /// `update` records that are unassignments.
    pub unassignments: u64,
    /// `backfill` records (one per migration).
    pub backfill: u64,
    /// `roll_forward_lsu` records.
    pub roll_forward_lsu: u64,
}

impl Summary {
    /// All `update` records.
    pub fn updates(&self) -> u64 {
        self.transactions + self.imports + self.assignments + self.unassignments
    }
}

/// Writes the demo history for `options` to `out`, record by record, and says what it
/// wrote. `out` should be buffered.
pub fn write<W: Write>(options: &Options, out: W) -> io::Result<Summary> {
    let mut history = History::new(options, out);
    history.preamble()?;
    while history.summary.updates() < options.updates {
        history.step()?;
    }
    history.epilogue()?;
    history.out.flush()?;
    Ok(history.summary)
}

// ---------------------------------------------------------------------------------------
// Randomness and ids

/// splitmix64: tiny, fast, and good enough for a demo.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(mix(seed ^ 0x6c65_6467_6572_2d6e))
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..hi` (`lo < hi`).
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below(hi.abs_diff(lo)) as i64
    }

    fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    fn push_hex(&mut self, out: &mut String, words: usize) {
        for _ in 0..words {
            let word = self.next_u64();
            push_hex(out, word);
        }
    }
}

/// The splitmix64 finalizer: a bijection of `u64`, so distinct sequence numbers give
/// distinct ids.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn push_hex(out: &mut String, word: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for shift in (0..16).rev() {
        out.push(char::from(HEX[((word >> (shift * 4)) & 0xf) as usize]));
    }
}

/// Fresh ids: a sequence number through [`mix`] (unique) followed by random hex.
#[derive(Debug)]
struct Ids {
    key: u64,
    updates: u64,
    contracts: u64,
    unassignments: u64,
}

impl Ids {
    fn new(seed: u64) -> Self {
        Ids { key: mix(seed ^ 0x1d5), updates: 0, contracts: 0, unassignments: 0 }
    }

    /// `1220` and 64 hex digits, like a Canton update id.
    fn update_id(&mut self, rng: &mut Rng) -> String {
        self.updates += 1;
        let mut id = String::with_capacity(68);
        id.push_str("1220");
        push_hex(&mut id, mix(self.updates ^ self.key));
        rng.push_hex(&mut id, 3);
        id
    }

    /// `00`, 64 hex digits, `ca0212` and 32 hex digits, like a Canton contract id.
    fn contract_id(&mut self, rng: &mut Rng) -> String {
        self.contracts += 1;
        let mut id = String::with_capacity(104);
        id.push_str("00");
        push_hex(&mut id, mix(self.contracts ^ self.key ^ 0xc0));
        rng.push_hex(&mut id, 3);
        id.push_str("ca0212");
        rng.push_hex(&mut id, 2);
        id
    }

    fn unassign_id(&mut self, rng: &mut Rng) -> String {
        self.unassignments += 1;
        let mut id = String::with_capacity(68);
        id.push_str("1220");
        push_hex(&mut id, mix(self.unassignments ^ self.key ^ 0x0a));
        rng.push_hex(&mut id, 3);
        id
    }
}

// ---------------------------------------------------------------------------------------
// Text: JSON strings, timestamps, numerics, base64

fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    // No early exit, so that the check vectorizes: most strings are ids.
    let plain = !s.bytes().fold(false, |escape, b| escape | (b < 0x20) | (b == b'"') | (b == b'\\'));
    if plain {
        out.push_str(s);
    } else {
        // The escapes serde_json writes, so that the output stays canonical.
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if u32::from(c) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", u32::from(c));
                }
                c => out.push(c),
            }
        }
    }
    out.push('"');
}

/// `n` in decimal, zero-padded to at least `width` digits (`width >= 1`).
fn push_digits(out: &mut String, mut n: u64, width: usize) {
    let mut digits = [b'0'; 20];
    let mut start = digits.len();
    while n > 0 || digits.len() - start < width {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    for &d in &digits[start..] {
        out.push(char::from(d));
    }
}

fn push_int(out: &mut String, n: i64) {
    if n < 0 {
        out.push('-');
    }
    push_digits(out, n.unsigned_abs(), 1);
}

/// A string that needs no escaping (a label or constructor of this module), quoted.
fn push_plain_str(out: &mut String, s: &str) {
    debug_assert!(s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\'), "{s:?} needs escaping");
    out.push('"');
    out.push_str(s);
    out.push('"');
}

/// `YYYY-MM-DDTHH:MM:SS.ffffffZ` (years 1 to 9999).
fn push_timestamp(out: &mut String, micros: i64) {
    let seconds = micros.div_euclid(SECOND);
    let (year, month, day) = ledger_node_core::time::civil_from_days(seconds.div_euclid(86_400));
    let second_of_day = seconds.rem_euclid(86_400);
    let fields = [
        (year, 4, '-'),
        (month, 2, '-'),
        (day, 2, 'T'),
        (second_of_day / 3600, 2, ':'),
        (second_of_day / 60 % 60, 2, ':'),
        (second_of_day % 60, 2, '.'),
        (micros.rem_euclid(SECOND), 6, 'Z'),
    ];
    for (value, width, separator) in fields {
        push_digits(out, value.unsigned_abs(), width);
        out.push(separator);
    }
}

/// A `Numeric 10` amount: sign, integer part, ten fractional digits.
fn push_numeric(out: &mut String, units: i64) {
    if units < 0 {
        out.push('-');
    }
    let magnitude = units.unsigned_abs();
    let unit = UNIT.unsigned_abs();
    push_digits(out, magnitude / unit, 1);
    out.push('.');
    push_digits(out, magnitude % unit, 10);
}

fn push_base64(out: &mut String, bytes: &[u8]) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let char_at = |n: u32, shift: u32| char::from(ALPHABET[((n >> shift) & 63) as usize]);
    for chunk in bytes.chunks(3) {
        let byte = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let n = (byte(0) << 16) | (byte(1) << 8) | byte(2);
        out.push(char_at(n, 18));
        out.push(char_at(n, 12));
        out.push(if chunk.len() > 1 { char_at(n, 6) } else { '=' });
        out.push(if chunk.len() > 2 { char_at(n, 0) } else { '=' });
    }
}

/// A JSON object written field by field, in order.
struct Object<'a> {
    out: &'a mut String,
    empty: bool,
}

impl<'a> Object<'a> {
    fn new(out: &'a mut String) -> Self {
        out.push('{');
        Object { out, empty: true }
    }

    fn key(&mut self, key: &str) -> &mut String {
        if !self.empty {
            self.out.push(',');
        }
        self.empty = false;
        push_json_str(self.out, key);
        self.out.push(':');
        self.out
    }

    fn str(&mut self, key: &str, value: &str) -> &mut Self {
        push_json_str(self.key(key), value);
        self
    }

    fn raw(&mut self, key: &str, json: &str) -> &mut Self {
        self.key(key).push_str(json);
        self
    }

    fn int(&mut self, key: &str, value: i64) -> &mut Self {
        push_int(self.key(key), value);
        self
    }

    fn value(&mut self, key: &str, value: &V) -> &mut Self {
        push_value(self.key(key), value);
        self
    }

    fn event_id(&mut self, key: &str, id: EventId<'_>) -> &mut Self {
        id.push(self.key(key));
        self
    }

    fn event_ids(&mut self, key: &str, update_id: &str, numbers: &[u32]) -> &mut Self {
        let out = self.key(key);
        out.push('[');
        for (i, &number) in numbers.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            EventId { update_id, number }.push(out);
        }
        out.push(']');
        self
    }

    fn bool(&mut self, key: &str, value: bool) -> &mut Self {
        self.key(key).push_str(if value { "true" } else { "false" });
        self
    }

    fn timestamp(&mut self, key: &str, micros: i64) -> &mut Self {
        let out = self.key(key);
        out.push('"');
        push_timestamp(out, micros);
        out.push('"');
        self
    }

    fn strs<S: AsRef<str>>(&mut self, key: &str, values: &[S]) -> &mut Self {
        let out = self.key(key);
        out.push('[');
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_json_str(out, value.as_ref());
        }
        out.push(']');
        self
    }

    fn end(&mut self) {
        self.out.push('}');
    }
}

// ---------------------------------------------------------------------------------------
// Ledger values, written in protobuf_json

/// A ledger value, as the generator builds it.
#[derive(Debug, Clone)]
enum V {
    Record(Vec<(&'static str, V)>),
    Variant(&'static str, Box<V>),
    Enum(&'static str),
    List(Vec<V>),
    Optional(Option<Box<V>>),
    TextMap(Vec<(String, V)>),
    GenMap(Vec<(V, V)>),
    Int64(i64),
    Numeric(i64),
    Text(String),
    Timestamp(i64),
    Date(i64),
    Party(String),
    ContractId(String),
    Bool(bool),
    Unit,
}

fn record(fields: Vec<(&'static str, V)>) -> V {
    V::Record(fields)
}

fn party(p: &str) -> V {
    V::Party(p.to_owned())
}

fn cid(c: &str) -> V {
    V::ContractId(c.to_owned())
}

fn text(s: &str) -> V {
    V::Text(s.to_owned())
}

fn some(v: V) -> V {
    V::Optional(Some(Box::new(v)))
}

fn variant(constructor: &'static str, v: V) -> V {
    V::Variant(constructor, Box::new(v))
}

/// `{number: n}`, a round number.
fn round(n: i64) -> V {
    record(vec![("number", V::Int64(n))])
}

/// `{microseconds: n}`, a relative time.
fn reltime(micros: i64) -> V {
    record(vec![("microseconds", V::Int64(micros))])
}

/// `{values: {k: v, ..}}`, token-standard metadata.
fn metadata(entries: Vec<(String, V)>) -> V {
    record(vec![("values", V::TextMap(entries))])
}

fn push_value(out: &mut String, value: &V) {
    match value {
        V::Record(fields) => {
            out.push_str(r#"{"record":{"fields":["#);
            for (i, (label, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(r#"{"label":"#);
                push_plain_str(out, label);
                out.push_str(r#","value":"#);
                push_value(out, v);
                out.push('}');
            }
            out.push_str("]}}");
        }
        V::Variant(constructor, v) => {
            out.push_str(r#"{"variant":{"constructor":"#);
            push_plain_str(out, constructor);
            out.push_str(r#","value":"#);
            push_value(out, v);
            out.push_str("}}");
        }
        V::Enum(constructor) => {
            out.push_str(r#"{"enum":{"constructor":"#);
            push_plain_str(out, constructor);
            out.push_str("}}");
        }
        V::List(elements) => {
            out.push_str(r#"{"list":{"elements":["#);
            for (i, v) in elements.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_value(out, v);
            }
            out.push_str("]}}");
        }
        V::Optional(None) => out.push_str(r#"{"optional":{}}"#),
        V::Optional(Some(v)) => {
            out.push_str(r#"{"optional":{"value":"#);
            push_value(out, v);
            out.push_str("}}");
        }
        V::TextMap(entries) => {
            out.push_str(r#"{"textMap":{"entries":["#);
            for (i, (key, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(r#"{"key":"#);
                push_json_str(out, key);
                out.push_str(r#","value":"#);
                push_value(out, v);
                out.push('}');
            }
            out.push_str("]}}");
        }
        V::GenMap(entries) => {
            out.push_str(r#"{"genMap":{"entries":["#);
            for (i, (key, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(r#"{"key":"#);
                push_value(out, key);
                out.push_str(r#","value":"#);
                push_value(out, v);
                out.push('}');
            }
            out.push_str("]}}");
        }
        V::Int64(n) => {
            out.push_str(r#"{"int64":""#);
            push_int(out, *n);
            out.push_str(r#""}"#);
        }
        V::Numeric(units) => {
            out.push_str(r#"{"numeric":""#);
            push_numeric(out, *units);
            out.push_str(r#""}"#);
        }
        V::Text(s) => {
            out.push_str(r#"{"text":"#);
            push_json_str(out, s);
            out.push('}');
        }
        V::Timestamp(micros) => {
            out.push_str(r#"{"timestamp":""#);
            push_int(out, *micros);
            out.push_str(r#""}"#);
        }
        V::Date(days) => {
            out.push_str(r#"{"date":"#);
            push_int(out, *days);
            out.push('}');
        }
        V::Party(p) => {
            out.push_str(r#"{"party":"#);
            push_json_str(out, p);
            out.push('}');
        }
        V::ContractId(c) => {
            out.push_str(r#"{"contractId":"#);
            push_json_str(out, c);
            out.push('}');
        }
        V::Bool(b) => out.push_str(if *b { r#"{"bool":true}"# } else { r#"{"bool":false}"# }),
        V::Unit => out.push_str(r#"{"unit":{}}"#),
    }
}

fn render(value: &V) -> String {
    let mut out = String::with_capacity(256);
    push_value(&mut out, value);
    out
}

// ---------------------------------------------------------------------------------------
// The network: parties, participants, synchronizers, packages

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Synchronizer {
    Global,
    App,
}

impl Synchronizer {
    fn other(self) -> Self {
        match self {
            Synchronizer::Global => Synchronizer::App,
            Synchronizer::App => Synchronizer::Global,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Package {
    Coin,
    DsoGovernance,
    TokenApi,
}

impl Package {
    const ALL: [Package; 3] = [Package::Coin, Package::DsoGovernance, Package::TokenApi];

    fn name(self) -> &'static str {
        match self {
            Package::Coin => "platform-coin",
            Package::DsoGovernance => "platform-dso-governance",
            Package::TokenApi => "platform-api-token-transfer-instruction-v1",
        }
    }
}

/// The templates of the history, with the default names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Template {
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
}

impl Template {
    const ALL: [Template; 10] = [
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
        }
    }

    fn package(self) -> Package {
        match self {
            Template::DsoRules | Template::Confirmation | Template::CoinPriceVote => Package::DsoGovernance,
            _ => Package::Coin,
        }
    }
}

/// Interfaces of the token standard that choices are exercised through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interface {
    TransferFactory,
    TransferInstruction,
}

#[derive(Debug)]
struct Node {
    name: &'static str,
    participant: String,
    party: String,
}

/// A party that holds coins: a user or a validator's own party.
#[derive(Debug)]
struct Owner {
    party: String,
    /// Index into `validators`: the validator that hosts it (the transfer provider).
    validator: usize,
    /// An external party signs its own transactions (`external_transaction_hash`).
    external: bool,
    /// Also hosted on this validator's participant, on the global synchronizer.
    also_hosted_by: Option<usize>,
}

#[derive(Debug)]
struct Network {
    dso: String,
    svs: Vec<Node>,
    validators: Vec<Node>,
    owners: Vec<Owner>,
    /// `(user id, index into owners)` of the wallet users.
    wallet_users: Vec<(&'static str, usize)>,
    global: String,
    app: String,
    template_ids: Vec<String>,
    interface_ids: [String; 2],
}

const USERS: [(&str, usize); 6] = [("alice", 0), ("bob", 0), ("carol", 1), ("dave", 1), ("erin", 2), ("frank", 2)];

impl Network {
    fn new(rng: &mut Rng) -> Self {
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
            Template::ALL.iter().map(|t| format!("{}:{}", package_id(t.package()), t.qualified_name())).collect();
        let api = package_id(Package::TokenApi);
        let interface_ids = [
            format!("{api}:Platform.Api.Token.TransferInstructionV1:TransferFactory"),
            format!("{api}:Platform.Api.Token.TransferInstructionV1:TransferInstruction"),
        ];
        Network {
            dso,
            svs,
            validators,
            owners,
            wallet_users: vec![("alice", 0), ("bob", 1), ("carol", 2), ("dave", 3)],
            global,
            app,
            template_ids,
            interface_ids,
        }
    }

    fn template_id(&self, template: Template) -> &str {
        let index = Template::ALL.iter().position(|t| *t == template);
        // Every template is in `ALL`, which `template_ids` follows.
        &self.template_ids[index.unwrap_or(0)]
    }

    fn interface_id(&self, interface: Interface) -> &str {
        match interface {
            Interface::TransferFactory => &self.interface_ids[0],
            Interface::TransferInstruction => &self.interface_ids[1],
        }
    }

    fn synchronizer_id(&self, synchronizer: Synchronizer) -> &str {
        match synchronizer {
            Synchronizer::Global => &self.global,
            Synchronizer::App => &self.app,
        }
    }

    fn owner(&self, index: usize) -> &str {
        &self.owners[index].party
    }

    fn provider(&self, owner: usize) -> &str {
        &self.validators[self.owners[owner].validator].party
    }

    /// `(synchronizer, party, participants)` for every hosted party.
    fn topology(&self) -> Vec<(Synchronizer, &str, Vec<&str>)> {
        let mut out = Vec::new();
        for synchronizer in [Synchronizer::Global, Synchronizer::App] {
            out.push((synchronizer, self.dso.as_str(), vec![self.svs[0].participant.as_str()]));
            if synchronizer == Synchronizer::Global {
                for sv in &self.svs {
                    out.push((synchronizer, sv.party.as_str(), vec![sv.participant.as_str()]));
                }
            }
            for owner in &self.owners {
                let mut participants = vec![self.validators[owner.validator].participant.as_str()];
                if let (Synchronizer::Global, Some(also)) = (synchronizer, owner.also_hosted_by) {
                    participants.push(self.validators[also].participant.as_str());
                }
                out.push((synchronizer, owner.party.as_str(), participants));
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------------
// Contracts and transaction trees

/// An active contract, with everything needed to write its created event again (in an
/// assignment or an import).
#[derive(Debug, Clone)]
struct Contract {
    id: String,
    template: Template,
    /// `create_arguments`, rendered in protobuf_json.
    arguments: String,
    signatories: Vec<String>,
    observers: Vec<String>,
    created_at: i64,
    blob: String,
    synchronizer: Synchronizer,
    reassignment_counter: i64,
    in_flight: bool,
}

impl Contract {
    /// On the global synchronizer and not being reassigned: transactions may use it.
    fn is_home(&self) -> bool {
        self.synchronizer == Synchronizer::Global && !self.in_flight
    }
}

#[derive(Debug)]
enum Event {
    Created(Contract),
    Exercised(Exercise),
}

#[derive(Debug)]
struct Exercise {
    contract_id: String,
    template: Template,
    interface: Option<Interface>,
    choice: &'static str,
    argument: V,
    result: V,
    consuming: bool,
    acting: Vec<String>,
    children: Vec<Event>,
}

impl Exercise {
    /// A non-consuming exercise of `choice` on `contract`, with a unit result and no
    /// children until told otherwise.
    fn on(contract: &Contract, choice: &'static str, acting: &str, argument: V) -> Self {
        Exercise {
            contract_id: contract.id.clone(),
            template: contract.template,
            interface: None,
            choice,
            argument,
            result: V::Unit,
            consuming: false,
            acting: vec![acting.to_owned()],
            children: Vec::new(),
        }
    }

    /// Daml's `Archive`: consuming, an empty record argument, a unit result.
    fn archive(contract: &Contract, acting: &str) -> Self {
        Exercise::on(contract, "Archive", acting, record(vec![])).consuming()
    }

    fn consuming(mut self) -> Self {
        self.consuming = true;
        self
    }

    fn via(mut self, interface: Interface) -> Self {
        self.interface = Some(interface);
        self
    }

    fn result(mut self, result: V) -> Self {
        self.result = result;
        self
    }

    fn children(mut self, children: Vec<Event>) -> Self {
        self.children = children;
        self
    }

    fn event(self) -> Event {
        Event::Exercised(self)
    }
}

/// An event id, `<update_id>:<n>`; update ids are hex, so it needs no escaping.
#[derive(Debug, Clone, Copy)]
struct EventId<'a> {
    update_id: &'a str,
    number: u32,
}

impl EventId<'_> {
    fn push(self, out: &mut String) {
        out.push('"');
        out.push_str(self.update_id);
        out.push(':');
        push_digits(out, u64::from(self.number), 1);
        out.push('"');
    }
}

/// An event of a transaction, with its number and its children's.
struct Numbered<'a> {
    number: u32,
    event: &'a Event,
    children: Vec<u32>,
}

/// Numbers `event` and its subtree in pre-order (execution order), appending them to
/// `events`, and returns its number.
fn number_events<'a>(event: &'a Event, events: &mut Vec<Numbered<'a>>) -> u32 {
    let number = events.len() as u32;
    events.push(Numbered { number, event, children: Vec::new() });
    if let Event::Exercised(e) = event {
        let children = e.children.iter().map(|child| number_events(child, events)).collect();
        events[number as usize].children = children;
    }
    number
}

fn push_event(out: &mut String, net: &Network, update_id: &str, numbered: &Numbered<'_>) {
    let id = EventId { update_id, number: numbered.number };
    match numbered.event {
        Event::Created(contract) => push_created_event(out, net, id, contract),
        Event::Exercised(e) => {
            let mut o = Object::new(out);
            o.str("event_type", "exercised_event")
                .event_id("event_id", id)
                .str("contract_id", &e.contract_id)
                .str("template_id", net.template_id(e.template))
                .str("package_name", e.template.package().name())
                .str("choice", e.choice)
                .value("choice_argument", &e.argument)
                .event_ids("child_event_ids", update_id, &numbered.children)
                .value("exercise_result", &e.result)
                .bool("consuming", e.consuming)
                .strs("acting_parties", &e.acting);
            if let Some(interface) = e.interface {
                o.str("interface_id", net.interface_id(interface));
            }
            o.end();
        }
    }
}

fn push_created_event(out: &mut String, net: &Network, id: EventId<'_>, c: &Contract) {
    Object::new(out)
        .str("event_type", "created_event")
        .event_id("event_id", id)
        .str("contract_id", &c.id)
        .str("template_id", net.template_id(c.template))
        .str("package_name", c.template.package().name())
        .raw("create_arguments", &c.arguments)
        .timestamp("created_at", c.created_at)
        .strs("signatories", &c.signatories)
        .strs("observers", &c.observers)
        .str("created_event_blob", &c.blob)
        .end();
}

// ---------------------------------------------------------------------------------------
// The history

/// The record and effective times of a transaction being built.
#[derive(Debug, Clone, Copy)]
struct TxTime {
    record: i64,
    effective: i64,
}

#[derive(Debug)]
struct Round {
    number: i64,
    opens_at: i64,
    contract: Contract,
}

#[derive(Debug)]
struct ClosedRound {
    number: i64,
    contract: Contract,
    closed_tick: u64,
    confirmed: bool,
}

#[derive(Debug)]
struct Confirmation {
    round: i64,
    contract: Contract,
    tick: u64,
}

#[derive(Debug)]
struct Coin {
    owner: usize,
    amount: i64,
    contract: Contract,
}

#[derive(Debug)]
struct Instruction {
    sender: usize,
    receiver: usize,
    amount: i64,
    workflow: String,
    contract: Contract,
    /// The locked coin, until it is archived (settled, or its lock expired).
    locked: Option<Contract>,
}

/// Round automation, run once per tick.
#[derive(Debug, Clone, Copy)]
enum Job {
    Advance,
    Close(u64),
    Confirm(u64),
    ArchiveClosed(u64),
}

/// The second half of a reassignment, due after `due` updates.
#[derive(Debug)]
struct PendingReassignment {
    due: u64,
    assignment: bool,
    contract_id: String,
    submitter: String,
    source: Synchronizer,
    unassign_id: String,
    counter: i64,
}

struct History<W> {
    out: W,
    line: String,
    rng: Rng,
    ids: Ids,
    net: Network,
    summary: Summary,
    /// Record time of the latest update.
    now: i64,
    migration: i64,
    /// Number of updates to write.
    limit: u64,
    /// Number of updates written before the hard migration (`u64::MAX`: none).
    migrate_at: u64,
    bootstrap: u8,
    tick: u64,
    next_tick_at: i64,
    /// Coin price in units, a random walk.
    price: i64,
    dso_rules: Option<Contract>,
    coin_rules: Option<Contract>,
    external_config: Option<Contract>,
    open: VecDeque<Round>,
    /// Archived open rounds waiting to close: `(number, tick archived)`.
    summarizing: VecDeque<(i64, u64)>,
    closed: VecDeque<ClosedRound>,
    confirmations: VecDeque<Confirmation>,
    votes: Vec<Option<Contract>>,
    coins: Vec<Coin>,
    instructions: Vec<Instruction>,
    jobs: VecDeque<Job>,
    pending: Vec<PendingReassignment>,
    /// Largest number of active contracts seen (the memory bound).
    peak_active: usize,
}

impl<W: Write> History<W> {
    fn new(options: &Options, out: W) -> Self {
        let mut rng = Rng::new(options.seed);
        let net = Network::new(&mut rng);
        let svs = net.svs.len();
        History {
            out,
            line: String::with_capacity(16 * 1024),
            ids: Ids::new(options.seed),
            rng,
            net,
            summary: Summary::default(),
            now: START,
            migration: 0,
            limit: options.updates,
            migrate_at: if options.updates >= MIGRATION_MIN_UPDATES { options.updates / 2 } else { u64::MAX },
            bootstrap: 0,
            tick: 0,
            next_tick_at: START + TICK,
            price: UNIT / 200,
            dso_rules: None,
            coin_rules: None,
            external_config: None,
            open: VecDeque::new(),
            summarizing: VecDeque::new(),
            closed: VecDeque::new(),
            confirmations: VecDeque::new(),
            votes: vec![None; svs],
            coins: Vec::new(),
            instructions: Vec::new(),
            jobs: VecDeque::new(),
            pending: Vec::new(),
            peak_active: 0,
        }
    }

    // --- records other than updates

    fn preamble(&mut self) -> io::Result<()> {
        let mut line = std::mem::take(&mut self.line);
        for (synchronizer, party, participants) in self.net.topology() {
            line.clear();
            line.push_str(r#"{"topology":"#);
            Object::new(&mut line)
                .str("synchronizer_id", self.net.synchronizer_id(synchronizer))
                .str("party_id", party)
                .strs("participant_ids", &participants)
                .end();
            line.push_str("}\n");
            self.out.write_all(line.as_bytes())?;
            self.summary.topology += 1;
        }
        for &(user_id, owner) in &self.net.wallet_users {
            line.clear();
            line.push_str(r#"{"wallet_user":"#);
            Object::new(&mut line).str("user_id", user_id).str("party_id", self.net.owner(owner)).end();
            line.push_str("}\n");
            self.out.write_all(line.as_bytes())?;
            self.summary.wallet_user += 1;
        }
        self.line = line;
        Ok(())
    }

    fn epilogue(&mut self) -> io::Result<()> {
        let mut line = std::mem::take(&mut self.line);
        for migration in 0..=self.migration {
            line.clear();
            line.push_str(r#"{"backfill":"#);
            Object::new(&mut line)
                .int("migration_id", migration)
                .bool("complete", true)
                .bool("import_updates_complete", true)
                .end();
            line.push_str("}\n");
            self.out.write_all(line.as_bytes())?;
            self.summary.backfill += 1;
        }
        // The next synchronizer upgrade: at noon, a day after the history ends.
        let upgrade_time = (self.now.div_euclid(DAY) + 1) * DAY + 12 * HOUR;
        let physical = |serial: u32| format!("{}::34-{serial}", self.net.global);
        line.clear();
        line.push_str(r#"{"roll_forward_lsu":"#);
        Object::new(&mut line)
            .timestamp("upgradeTime", upgrade_time)
            .str("currentPhysicalSynchronizerId", &physical(0))
            .str("successorPhysicalSynchronizerId", &physical(1))
            .end();
        line.push_str("}\n");
        self.out.write_all(line.as_bytes())?;
        self.summary.roll_forward_lsu += 1;
        self.line = line;
        Ok(())
    }

    // --- the main loop

    /// Writes at least one record, and at least one update unless the budget is spent.
    fn step(&mut self) -> io::Result<()> {
        if self.bootstrap < 3 {
            return self.bootstrap_step();
        }
        if self.migration == 0 && self.summary.updates() >= self.migrate_at {
            return self.migrate();
        }
        let emitted = self.summary.updates();
        if let Some(i) = self.pending.iter().position(|p| p.due <= emitted) {
            let pending = self.pending.swap_remove(i);
            return self.finish_reassignment(pending);
        }
        if self.limit - emitted == 1 && self.pending.is_empty() && self.reassign(true)? {
            return Ok(());
        }
        self.schedule_ticks();
        while let Some(job) = self.jobs.pop_front() {
            if self.run(job)? {
                return Ok(());
            }
        }
        self.workload()
    }

    fn schedule_ticks(&mut self) {
        while self.now >= self.next_tick_at {
            self.tick += 1;
            self.next_tick_at += TICK;
            let tick = self.tick;
            self.jobs.extend([Job::Advance, Job::Close(tick), Job::Confirm(tick), Job::ArchiveClosed(tick)]);
        }
    }

    fn run(&mut self, job: Job) -> io::Result<bool> {
        match job {
            Job::Advance => self.advance_rounds(),
            Job::Close(tick) => self.close_round(tick),
            Job::Confirm(tick) => self.confirm_archival(tick),
            Job::ArchiveClosed(tick) => self.archive_closed_round(tick),
        }
    }

    fn workload(&mut self) -> io::Result<()> {
        let done = match self.rng.below(100) {
            0..8 => self.update_vote()?,
            8..16 => self.tap()?,
            16..26 => self.reassign(false)?,
            26..36 => self.create_instruction()?,
            36..46 => self.settle_instruction()?,
            _ => false,
        };
        if !done && !self.transfer()? {
            self.tap()?;
        }
        Ok(())
    }

    fn track_peak(&mut self) {
        let active = 3
            + self.open.len()
            + self.closed.len()
            + self.confirmations.len()
            + self.votes.len()
            + self.coins.len()
            + self.instructions.len() * 2;
        self.peak_active = self.peak_active.max(active);
    }

    // --- time, contracts and writing updates

    /// Advances the clock by a few seconds: the times of the next update.
    fn begin(&mut self) -> TxTime {
        self.now += self.rng.range(SECOND, 13 * SECOND);
        TxTime { record: self.now, effective: self.now - self.rng.range(5_000, 900_000) }
    }

    fn new_contract(
        &mut self,
        template: Template,
        arguments: &V,
        signatories: Vec<String>,
        observers: Vec<String>,
        time: TxTime,
    ) -> Contract {
        let id = self.ids.contract_id(&mut self.rng);
        let length = 48 + self.rng.index(48);
        let mut bytes = Vec::with_capacity(length + 8);
        while bytes.len() < length {
            bytes.extend_from_slice(&self.rng.next_u64().to_le_bytes());
        }
        bytes.truncate(length);
        let mut blob = String::with_capacity(length / 3 * 4 + 4);
        push_base64(&mut blob, &bytes);
        Contract {
            id,
            template,
            arguments: render(arguments),
            signatories,
            observers,
            created_at: time.effective,
            blob,
            synchronizer: Synchronizer::Global,
            reassignment_counter: 0,
            in_flight: false,
        }
    }

    /// A contract signed by the DSO party alone.
    fn dso_contract(&mut self, template: Template, arguments: &V, time: TxTime) -> Contract {
        let dso = self.net.dso.clone();
        self.new_contract(template, arguments, vec![dso], vec![], time)
    }

    fn commit(&mut self, time: TxTime, workflow: &str, roots: Vec<Event>, externally_signed: bool) -> io::Result<()> {
        let update_id = self.ids.update_id(&mut self.rng);
        let hash = externally_signed.then(|| {
            let mut hash = String::with_capacity(64);
            self.rng.push_hex(&mut hash, 4);
            hash
        });
        let mut events = Vec::new();
        let root_numbers: Vec<u32> = roots.iter().map(|root| number_events(root, &mut events)).collect();
        if events.len() > 10 {
            // events_by_id keys are sorted as strings: "u:10" comes before "u:2".
            events.sort_by_cached_key(|e| e.number.to_string());
        }
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        line.push_str(r#"{"update":"#);
        let mut o = Object::new(&mut line);
        o.str("update_id", &update_id)
            .int("migration_id", self.migration)
            .str("workflow_id", workflow)
            .timestamp("record_time", time.record)
            .str("synchronizer_id", &self.net.global)
            .timestamp("effective_at", time.effective)
            .event_ids("root_event_ids", &update_id, &root_numbers);
        let out = o.key("events_by_id");
        out.push('{');
        for (i, event) in events.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let id = EventId { update_id: &update_id, number: event.number };
            id.push(out);
            out.push(':');
            push_event(out, &self.net, &update_id, event);
        }
        out.push('}');
        if let Some(hash) = &hash {
            o.str("external_transaction_hash", hash);
        }
        o.end();
        line.push_str("}\n");
        self.out.write_all(line.as_bytes())?;
        self.line = line;
        self.summary.transactions += 1;
        self.track_peak();
        Ok(())
    }

    /// The open round in use at `at`: the highest whose `opensAt` is not after `at`.
    fn round_in_use(&self, at: i64) -> Option<&Round> {
        self.open.iter().filter(|r| r.opens_at <= at).max_by_key(|r| r.number).or_else(|| self.open.front())
    }

    fn round_number_at(&self, at: i64) -> i64 {
        self.round_in_use(at).map_or(0, |r| r.number)
    }

    // --- bootstrap

    fn bootstrap_step(&mut self) -> io::Result<()> {
        let time = self.begin();
        let dso = self.net.dso.clone();
        let roots = match self.bootstrap {
            0 => {
                let dso_rules = self.dso_contract(Template::DsoRules, &self.dso_rules_payload(), time);
                let coin_rules = self.dso_contract(Template::CoinRules, &coin_rules_payload(&dso), time);
                let config = record(vec![
                    ("dso", party(&dso)),
                    (
                        "config",
                        record(vec![
                            ("transferPreapprovalFee", some(V::Numeric(UNIT / 4))),
                            ("maxSubmissionDelay", reltime(10 * MINUTE)),
                            ("maxInputs", V::Int64(100)),
                        ]),
                    ),
                ]);
                let external_config = self.dso_contract(Template::ExternalPartyConfigState, &config, time);
                let roots = vec![
                    Event::Created(dso_rules.clone()),
                    Event::Created(coin_rules.clone()),
                    Event::Created(external_config.clone()),
                ];
                self.dso_rules = Some(dso_rules);
                self.coin_rules = Some(coin_rules);
                self.external_config = Some(external_config);
                roots
            }
            1 => {
                let mut children = Vec::new();
                for number in 0..3 {
                    let round = self.new_open_round(number, START + number * TICK, time);
                    children.push(Event::Created(round.contract.clone()));
                    self.open.push_back(round);
                }
                let Some(dso_rules) = &self.dso_rules else {
                    return Ok(());
                };
                let argument = record(vec![("initialRound", round(0))]);
                vec![Exercise::on(dso_rules, "DsoRules_StartMiningRounds", &dso, argument).children(children).event()]
            }
            _ => {
                let mut roots = Vec::new();
                for sv in 0..self.net.svs.len() {
                    let vote = self.new_vote(sv, time);
                    roots.push(Event::Created(vote.clone()));
                    self.votes[sv] = Some(vote);
                }
                roots
            }
        };
        self.bootstrap += 1;
        self.commit(time, "", roots, false)
    }

    fn dso_rules_payload(&self) -> V {
        let svs = self
            .net
            .svs
            .iter()
            .map(|sv| {
                let info = record(vec![
                    ("name", text(sv.name)),
                    ("joinedAsOfRound", round(0)),
                    ("participantId", text(&sv.participant)),
                ]);
                (party(&sv.party), info)
            })
            .collect();
        record(vec![
            ("dso", party(&self.net.dso)),
            ("epoch", V::Int64(0)),
            ("svs", V::GenMap(svs)),
            (
                "config",
                record(vec![
                    ("numUnclaimedRewardsThreshold", V::Int64(10)),
                    ("actionConfirmationTimeout", reltime(HOUR)),
                    ("svOnboardingRequestTimeout", reltime(DAY)),
                    ("dsoDelegateInactiveTimeout", reltime(70 * SECOND)),
                ]),
            ),
            ("isDevNet", V::Bool(true)),
        ])
    }

    fn new_open_round(&mut self, number: i64, opens_at: i64, time: TxTime) -> Round {
        let payload = record(vec![
            ("dso", party(&self.net.dso)),
            ("round", round(number)),
            ("coinPrice", V::Numeric(self.price)),
            ("opensAt", V::Timestamp(opens_at)),
            ("targetClosesAt", V::Timestamp(opens_at + 2 * TICK)),
            ("issuingFor", reltime(number * TICK)),
            (
                "transferConfigUsd",
                record(vec![
                    ("createFee", record(vec![("fee", V::Numeric(UNIT / 100))])),
                    ("holdingFee", record(vec![("rate", V::Numeric(UNIT / 52_560))])),
                    ("lockHolderFee", record(vec![("fee", V::Numeric(UNIT / 200))])),
                    ("maxNumInputs", V::Int64(100)),
                    ("maxNumOutputs", V::Int64(100)),
                    ("maxNumLockHolders", V::Int64(50)),
                ]),
            ),
            (
                "issuanceConfig",
                record(vec![
                    ("coinToIssuePerYear", V::Numeric(400_000_000 * UNIT)),
                    ("validatorRewardPercentage", V::Numeric(UNIT / 20)),
                    ("appRewardPercentage", V::Numeric(3 * UNIT / 20)),
                    ("validatorRewardCap", V::Numeric(UNIT / 5)),
                    ("featuredAppRewardCap", V::Numeric(100 * UNIT)),
                    ("optValidatorFaucetCap", some(V::Numeric(UNIT * 57 / 10))),
                ]),
            ),
            ("tickDuration", reltime(TICK)),
        ]);
        let contract = self.dso_contract(Template::OpenMiningRound, &payload, time);
        Round { number, opens_at, contract }
    }

    fn new_vote(&mut self, sv: usize, time: TxTime) -> Contract {
        let price = (self.price + self.rng.range(-self.price / 100, self.price / 100 + 1)).max(1);
        let sv_party = self.net.svs[sv].party.clone();
        let payload = record(vec![
            ("dso", party(&self.net.dso)),
            ("sv", party(&sv_party)),
            ("coinPrice", V::Numeric(price)),
            ("lastUpdatedAt", V::Timestamp(time.effective)),
        ]);
        let dso = self.net.dso.clone();
        self.new_contract(Template::CoinPriceVote, &payload, vec![dso], vec![sv_party], time)
    }

    // --- round automation

    fn advance_rounds(&mut self) -> io::Result<bool> {
        let (Some(dso_rules), Some(coin_rules)) = (self.dso_rules.clone(), self.coin_rules.clone()) else {
            return Ok(false);
        };
        let Some(oldest) = self.open.pop_front() else {
            return Ok(false);
        };
        let time = self.begin();
        let tick_at = START + self.tick as i64 * TICK;
        let number = self.open.back().map_or(oldest.number, |r| r.number) + 1;
        let new = self.new_open_round(number, tick_at + 2 * TICK, time);
        let dso = self.net.dso.clone();
        let middle = self.open.front().map(|r| cid(&r.contract.id)).unwrap_or(V::Unit);
        let latest = self.open.back().map(|r| cid(&r.contract.id)).unwrap_or(V::Unit);
        let argument = record(vec![
            ("roundToArchiveCid", cid(&oldest.contract.id)),
            ("middleRoundCid", middle),
            ("latestRoundCid", latest),
            ("coinPrice", V::Numeric(self.price)),
        ]);
        let advance = Exercise::on(&coin_rules, "CoinRules_AdvanceOpenMiningRounds", &dso, argument)
            .result(record(vec![("openMiningRoundCid", cid(&new.contract.id))]))
            .children(vec![Exercise::archive(&oldest.contract, &dso).event(), Event::Created(new.contract.clone())]);
        let root = Exercise::on(
            &dso_rules,
            "DsoRules_AdvanceOpenMiningRounds",
            &dso,
            record(vec![("coinRulesCid", cid(&coin_rules.id))]),
        )
        .children(vec![advance.event()]);
        self.summarizing.push_back((oldest.number, self.tick));
        self.open.push_back(new);
        self.commit(time, "", vec![root.event()], false)?;
        Ok(true)
    }

    fn close_round(&mut self, tick: u64) -> io::Result<bool> {
        let Some(dso_rules) = self.dso_rules.clone() else {
            return Ok(false);
        };
        let Some(&(number, archived)) = self.summarizing.front() else {
            return Ok(false);
        };
        if archived >= tick {
            return Ok(false);
        }
        self.summarizing.pop_front();
        let time = self.begin();
        let issuance = |r: &mut Rng, scale: i64| V::Numeric(r.range(UNIT / 10, 10 * UNIT) * scale);
        let payload = record(vec![
            ("dso", party(&self.net.dso)),
            ("round", round(number)),
            ("issuancePerValidatorRewardCoupon", issuance(&mut self.rng, 1)),
            ("issuancePerFeaturedAppRewardCoupon", issuance(&mut self.rng, 10)),
            ("issuancePerUnfeaturedAppRewardCoupon", issuance(&mut self.rng, 1)),
            ("issuancePerSvRewardCoupon", issuance(&mut self.rng, 100)),
            ("optIssuancePerValidatorFaucetCoupon", V::Optional(None)),
        ]);
        let closed = self.dso_contract(Template::ClosedMiningRound, &payload, time);
        let dso = self.net.dso.clone();
        let root = Exercise::on(&dso_rules, "DsoRules_MiningRound_Close", &dso, record(vec![("round", round(number))]))
            .result(record(vec![("closedRoundCid", cid(&closed.id))]))
            .children(vec![Event::Created(closed.clone())]);
        self.closed.push_back(ClosedRound { number, contract: closed, closed_tick: tick, confirmed: false });
        self.commit(time, "", vec![root.event()], false)?;
        Ok(true)
    }

    fn archive_action(closed_round: &str) -> V {
        variant(
            "ARC_DsoRules",
            record(vec![(
                "dsoAction",
                variant("SRARC_ArchiveClosedMiningRound", record(vec![("closedRoundCid", cid(closed_round))])),
            )]),
        )
    }

    fn confirm_archival(&mut self, tick: u64) -> io::Result<bool> {
        let Some(dso_rules) = self.dso_rules.clone() else {
            return Ok(false);
        };
        let Some(closed) = self.closed.iter_mut().find(|c| !c.confirmed && c.closed_tick < tick) else {
            return Ok(false);
        };
        closed.confirmed = true;
        let (number, closed_id) = (closed.number, closed.contract.id.clone());
        let time = self.begin();
        let sv = self.rng.index(self.net.svs.len());
        let sv_party = self.net.svs[sv].party.clone();
        let dso = self.net.dso.clone();
        let action = Self::archive_action(&closed_id);
        let payload = record(vec![
            ("dso", party(&dso)),
            ("confirmer", party(&sv_party)),
            ("action", action.clone()),
            ("expiresAt", V::Timestamp(time.effective + HOUR)),
        ]);
        let confirmation =
            self.new_contract(Template::Confirmation, &payload, vec![dso.clone()], vec![sv_party.clone()], time);
        let root = Exercise::on(
            &dso_rules,
            "DsoRules_ConfirmAction",
            &sv_party,
            record(vec![("confirmer", party(&sv_party)), ("action", action)]),
        )
        .result(record(vec![("confirmation", cid(&confirmation.id))]))
        .children(vec![Event::Created(confirmation.clone())]);
        self.confirmations.push_back(Confirmation { round: number, contract: confirmation, tick });
        self.commit(time, "", vec![root.event()], false)?;
        Ok(true)
    }

    fn archive_closed_round(&mut self, tick: u64) -> io::Result<bool> {
        let Some(dso_rules) = self.dso_rules.clone() else {
            return Ok(false);
        };
        let Some(i) = self.confirmations.iter().position(|c| c.tick < tick) else {
            return Ok(false);
        };
        let Some(j) = self.closed.iter().position(|c| c.number == self.confirmations[i].round) else {
            return Ok(false);
        };
        let (Some(confirmation), Some(closed)) = (self.confirmations.remove(i), self.closed.remove(j)) else {
            return Ok(false);
        };
        let time = self.begin();
        let dso = self.net.dso.clone();
        let root = Exercise::on(
            &dso_rules,
            "DsoRules_ExecuteConfirmedAction",
            &dso,
            record(vec![
                ("action", Self::archive_action(&closed.contract.id)),
                ("confirmationCids", V::List(vec![cid(&confirmation.contract.id)])),
            ]),
        )
        .result(record(vec![]))
        .children(vec![
            Exercise::on(&closed.contract, "ClosedMiningRound_Archive", &dso, record(vec![])).consuming().event(),
            Exercise::archive(&confirmation.contract, &dso).event(),
        ]);
        self.commit(time, "", vec![root.event()], false)?;
        Ok(true)
    }

    // --- workload

    fn update_vote(&mut self) -> io::Result<bool> {
        let Some(dso_rules) = self.dso_rules.clone() else {
            return Ok(false);
        };
        let sv = self.rng.index(self.net.svs.len());
        let Some(old) = self.votes[sv].take() else {
            return Ok(false);
        };
        // The price drifts by up to 2% a vote, within [0.001, 0.05].
        let drift = self.rng.range(-200, 201);
        self.price = (self.price + self.price * drift / 10_000).clamp(UNIT / 1000, UNIT / 20);
        let time = self.begin();
        let vote = self.new_vote(sv, time);
        let sv_party = self.net.svs[sv].party.clone();
        let root = Exercise::on(
            &dso_rules,
            "DsoRules_UpdateCoinPriceVote",
            &sv_party,
            record(vec![("sv", party(&sv_party)), ("voteCid", cid(&old.id)), ("coinPrice", V::Numeric(self.price))]),
        )
        .result(record(vec![("voteCid", cid(&vote.id))]))
        .children(vec![Exercise::archive(&old, &sv_party).event(), Event::Created(vote.clone())]);
        self.votes[sv] = Some(vote);
        self.commit(time, "", vec![root.event()], false)?;
        Ok(true)
    }

    fn coin_payload(&self, owner: usize, amount: i64, round_number: i64) -> V {
        record(vec![
            ("dso", party(&self.net.dso)),
            ("owner", party(self.net.owner(owner))),
            (
                "amount",
                record(vec![
                    ("initialAmount", V::Numeric(amount)),
                    ("createdAt", round(round_number)),
                    ("ratePerRound", record(vec![("rate", V::Numeric(UNIT / 52_560))])),
                ]),
            ),
        ])
    }

    fn new_coin(&mut self, owner: usize, amount: i64, time: TxTime) -> Coin {
        let payload = self.coin_payload(owner, amount, self.round_number_at(time.effective));
        let signatories = vec![self.net.dso.clone(), self.net.owner(owner).to_owned()];
        let contract = self.new_contract(Template::Coin, &payload, signatories, vec![], time);
        Coin { owner, amount, contract }
    }

    fn usable_coins(&self, owner: usize) -> usize {
        self.coins.iter().filter(|c| c.owner == owner && c.contract.is_home()).count()
    }

    /// Removes up to `count` of `owner`'s usable coins, oldest first.
    fn take_coins(&mut self, owner: usize, count: usize) -> Vec<Coin> {
        let mut taken = Vec::new();
        let mut i = 0;
        while i < self.coins.len() && taken.len() < count {
            if self.coins[i].owner == owner && self.coins[i].contract.is_home() {
                taken.push(self.coins.remove(i));
            } else {
                i += 1;
            }
        }
        taken
    }

    /// A sender with coins (often the one holding the most, which keeps the number of
    /// coins bounded) and a different receiver.
    fn pick_sender_receiver(&mut self) -> Option<(usize, usize)> {
        let owners = self.net.owners.len();
        let counts: Vec<usize> = (0..owners).map(|o| self.usable_coins(o)).collect();
        let candidates: Vec<usize> = (0..owners).filter(|&o| counts[o] > 0).collect();
        if candidates.is_empty() {
            return None;
        }
        let sender = if self.rng.percent(50) {
            (0..owners).max_by_key(|&o| (counts[o], o)).unwrap_or(0)
        } else {
            candidates[self.rng.index(candidates.len())]
        };
        let receiver = (sender + 1 + self.rng.index(owners - 1)) % owners;
        Some((sender, receiver))
    }

    fn tap(&mut self) -> io::Result<bool> {
        let Some(coin_rules) = self.coin_rules.clone() else {
            return Ok(false);
        };
        let owners = self.net.owners.len();
        let owner = if self.rng.percent(50) {
            (0..owners).min_by_key(|&o| (self.usable_coins(o), o)).unwrap_or(0)
        } else {
            self.rng.index(owners)
        };
        let amount = self.rng.range(10 * UNIT, 2_000 * UNIT) / 1_000_000 * 1_000_000;
        let time = self.begin();
        let round_cid = self.round_in_use(time.effective).map(|r| r.contract.id.clone()).unwrap_or_default();
        let coin = self.new_coin(owner, amount, time);
        let owner_party = self.net.owner(owner).to_owned();
        let root = Exercise::on(
            &coin_rules,
            "CoinRules_DevNet_Tap",
            &owner_party,
            record(vec![
                ("receiver", party(&owner_party)),
                ("amount", V::Numeric(amount)),
                ("openRound", cid(&round_cid)),
            ]),
        )
        .result(record(vec![(
            "coinSum",
            record(vec![
                ("coin", cid(&coin.contract.id)),
                ("round", round(self.round_number_at(time.effective))),
                ("changeToInitialAmountAsOfRoundZero", V::Numeric(amount)),
            ]),
        )]))
        .children(vec![Event::Created(coin.contract.clone())]);
        let external = self.net.owners[owner].external;
        self.coins.push(coin);
        self.commit(time, "", vec![root.event()], external)?;
        Ok(true)
    }

    fn transfer(&mut self) -> io::Result<bool> {
        let Some(coin_rules) = self.coin_rules.clone() else {
            return Ok(false);
        };
        let Some((sender, receiver)) = self.pick_sender_receiver() else {
            return Ok(false);
        };
        let usable = self.usable_coins(sender);
        let count = match usable {
            4.. => 3,
            2.. if self.rng.percent(50) => 2,
            _ => 1,
        };
        let inputs = self.take_coins(sender, count);
        let total: i64 = inputs.iter().map(|c| c.amount).sum();
        let sent = total / 100 * self.rng.range(10, 91);
        let fee = (sent / 1000).min(UNIT);
        let change = total - sent - fee;
        let time = self.begin();
        let (round_number, round_cid) =
            self.round_in_use(time.effective).map(|r| (r.number, r.contract.id.clone())).unwrap_or_default();
        let received = self.new_coin(receiver, sent, time);
        let kept = self.new_coin(sender, change, time);
        let (sender_party, receiver_party) = (self.net.owner(sender).to_owned(), self.net.owner(receiver).to_owned());
        let provider = self.net.provider(sender).to_owned();
        let memo = self.rng.below(100_000);
        let meta = if memo.is_multiple_of(3) {
            V::Optional(None)
        } else {
            some(V::TextMap(vec![
                ("reason".to_owned(), text(&format!("invoice {memo}"))),
                ("app".to_owned(), text("wallet")),
            ]))
        };
        let argument = record(vec![
            (
                "transfer",
                record(vec![
                    ("sender", party(&sender_party)),
                    ("provider", party(&provider)),
                    ("inputs", V::List(inputs.iter().map(|c| variant("InputCoin", cid(&c.contract.id))).collect())),
                    (
                        "outputs",
                        V::List(vec![record(vec![
                            ("receiver", party(&receiver_party)),
                            ("receiverFeeRatio", V::Numeric(0)),
                            ("amount", V::Numeric(sent)),
                            ("lock", V::Optional(None)),
                        ])]),
                    ),
                    ("beneficiaries", V::Optional(None)),
                    ("kind", V::Enum(if count > 1 { "Merge" } else { "Direct" })),
                ]),
            ),
            (
                "context",
                record(vec![
                    ("openMiningRound", cid(&round_cid)),
                    ("featuredAppRight", V::Optional(None)),
                    ("valueDate", V::Date(time.effective.div_euclid(DAY))),
                ]),
            ),
            ("expectedDso", some(party(&self.net.dso))),
        ]);
        let balance = |change: i64| {
            record(vec![
                ("changeToInitialAmountAsOfRoundZero", V::Numeric(change)),
                ("changeToHoldingFeesRate", V::Numeric(0)),
            ])
        };
        let result = record(vec![
            ("round", round(round_number)),
            (
                "summary",
                record(vec![
                    ("inputCoinAmount", V::Numeric(total)),
                    (
                        "balanceChanges",
                        V::GenMap(vec![
                            (party(&sender_party), balance(-(sent + fee))),
                            (party(&receiver_party), balance(sent)),
                        ]),
                    ),
                    ("holdingFees", V::Numeric(0)),
                    ("outputFees", V::List(vec![V::Numeric(fee)])),
                    ("senderChangeAmount", V::Numeric(change)),
                ]),
            ),
            ("createdCoins", V::List(vec![variant("TransferResultCoin", cid(&received.contract.id))])),
            ("senderChangeCoin", some(cid(&kept.contract.id))),
            ("meta", meta),
        ]);
        let mut children: Vec<Event> =
            inputs.iter().map(|c| Exercise::archive(&c.contract, &sender_party).event()).collect();
        children.push(Event::Created(received.contract.clone()));
        children.push(Event::Created(kept.contract.clone()));
        let root =
            Exercise::on(&coin_rules, "CoinRules_Transfer", &sender_party, argument).result(result).children(children);
        let external = self.net.owners[sender].external;
        self.coins.push(received);
        self.coins.push(kept);
        self.commit(time, "", vec![root.event()], external)?;
        Ok(true)
    }

    fn create_instruction(&mut self) -> io::Result<bool> {
        let Some(coin_rules) = self.coin_rules.clone() else {
            return Ok(false);
        };
        if self.instructions.len() >= MAX_INSTRUCTIONS {
            return Ok(false);
        }
        let Some((sender, receiver)) = self.pick_sender_receiver() else {
            return Ok(false);
        };
        let count = if self.usable_coins(sender) >= 2 && self.rng.percent(40) { 2 } else { 1 };
        let inputs = self.take_coins(sender, count);
        let total: i64 = inputs.iter().map(|c| c.amount).sum();
        let amount = total / 100 * self.rng.range(5, 80);
        let time = self.begin();
        let execute_before = time.effective + self.rng.range(HOUR, 48 * HOUR);
        let round_number = self.round_number_at(time.effective);
        let dso = self.net.dso.clone();
        let (sender_party, receiver_party) = (self.net.owner(sender).to_owned(), self.net.owner(receiver).to_owned());
        let mut workflow = String::from("transfer-instruction-");
        self.rng.push_hex(&mut workflow, 1);

        let locked_payload = record(vec![
            ("coin", self.coin_payload(sender, amount, round_number)),
            (
                "lock",
                record(vec![
                    ("holders", V::List(vec![party(&dso)])),
                    ("expiresAt", V::Timestamp(execute_before)),
                    ("optContext", some(text(&format!("transfer to {receiver_party}")))),
                ]),
            ),
        ]);
        let locked = self.new_contract(
            Template::LockedCoin,
            &locked_payload,
            vec![dso.clone(), sender_party.clone()],
            vec![],
            time,
        );
        let change = self.new_coin(sender, total - amount, time);
        let transfer = record(vec![
            ("sender", party(&sender_party)),
            ("receiver", party(&receiver_party)),
            ("amount", V::Numeric(amount)),
            ("instrumentId", record(vec![("admin", party(&dso)), ("id", text("Coin"))])),
            ("requestedAt", V::Timestamp(time.effective)),
            ("executeBefore", V::Timestamp(execute_before)),
            ("inputHoldingCids", V::List(inputs.iter().map(|c| cid(&c.contract.id)).collect())),
            ("meta", metadata(vec![("platform.example/reason".to_owned(), text("payment"))])),
        ]);
        let instruction_payload = record(vec![
            ("lockedCoin", cid(&locked.id)),
            ("transfer", transfer.clone()),
            ("originalInstructionCid", V::Optional(None)),
        ]);
        let instruction = self.new_contract(
            Template::CoinTransferInstruction,
            &instruction_payload,
            vec![dso.clone(), sender_party.clone()],
            vec![receiver_party.clone()],
            time,
        );
        let argument = record(vec![
            ("expectedAdmin", party(&dso)),
            ("transfer", transfer),
            ("extraArgs", record(vec![("context", metadata(vec![])), ("meta", metadata(vec![]))])),
        ]);
        let result = record(vec![
            (
                "output",
                variant(
                    "TransferInstructionResult_Pending",
                    record(vec![("transferInstructionCid", cid(&instruction.id))]),
                ),
            ),
            ("senderChangeCids", V::List(vec![cid(&change.contract.id)])),
            ("meta", metadata(vec![])),
        ]);
        let mut children: Vec<Event> =
            inputs.iter().map(|c| Exercise::archive(&c.contract, &sender_party).event()).collect();
        children.push(Event::Created(locked.clone()));
        children.push(Event::Created(change.contract.clone()));
        children.push(Event::Created(instruction.clone()));
        let root = Exercise::on(&coin_rules, "TransferFactory_Transfer", &sender_party, argument)
            .via(Interface::TransferFactory)
            .result(result)
            .children(children);
        let external = self.net.owners[sender].external;
        self.coins.push(change);
        self.instructions.push(Instruction {
            sender,
            receiver,
            amount,
            workflow: workflow.clone(),
            contract: instruction,
            locked: Some(locked),
        });
        self.commit(time, &workflow, vec![root.event()], external)?;
        Ok(true)
    }

    /// Accepts, rejects or withdraws a pending instruction, or lets its lock expire.
    fn settle_instruction(&mut self) -> io::Result<bool> {
        let candidates: Vec<usize> = (0..self.instructions.len())
            .filter(|&i| {
                let instruction = &self.instructions[i];
                instruction.contract.is_home() && instruction.locked.as_ref().is_none_or(Contract::is_home)
            })
            .collect();
        if candidates.is_empty() {
            return Ok(false);
        }
        let i = candidates[self.rng.index(candidates.len())];
        let lock_live = self.instructions[i].locked.is_some();
        if lock_live && self.rng.percent(15) {
            return self.expire_lock(i);
        }
        let instruction = self.instructions.swap_remove(i);
        let roll = self.rng.below(100);
        let (choice, actor, to) = match roll {
            0..65 if lock_live => ("TransferInstruction_Accept", instruction.receiver, instruction.receiver),
            0..80 => ("TransferInstruction_Reject", instruction.receiver, instruction.sender),
            _ => ("TransferInstruction_Withdraw", instruction.sender, instruction.sender),
        };
        let time = self.begin();
        let dso = self.net.dso.clone();
        let actor_party = self.net.owner(actor).to_owned();
        let mut children = Vec::new();
        let mut paid = Vec::new();
        if let Some(locked) = &instruction.locked {
            let coin = self.new_coin(to, instruction.amount, time);
            let unlock = if to == instruction.receiver { "LockedCoin_Settle" } else { "LockedCoin_Unlock" };
            children.push(
                Exercise::on(locked, unlock, &dso, record(vec![]))
                    .consuming()
                    .result(cid(&coin.contract.id))
                    .children(vec![Event::Created(coin.contract.clone())])
                    .event(),
            );
            paid.push(cid(&coin.contract.id));
            self.coins.push(coin);
        }
        let output = if to == instruction.receiver {
            variant("TransferInstructionResult_Completed", record(vec![("receiverHoldingCids", V::List(paid))]))
        } else {
            variant("TransferInstructionResult_Failed", V::Unit)
        };
        let root = Exercise::on(
            &instruction.contract,
            choice,
            &actor_party,
            record(vec![("extraArgs", record(vec![("context", metadata(vec![])), ("meta", metadata(vec![]))]))]),
        )
        .via(Interface::TransferInstruction)
        .consuming()
        .result(record(vec![("output", output), ("senderChangeCids", V::List(vec![])), ("meta", metadata(vec![]))]))
        .children(children);
        let external = self.net.owners[actor].external;
        self.commit(time, &instruction.workflow, vec![root.event()], external)?;
        Ok(true)
    }

    /// The lock of instruction `i` expires: its locked coin returns to the sender, and
    /// the instruction stays, pointing at an archived locked coin.
    fn expire_lock(&mut self, i: usize) -> io::Result<bool> {
        let Some(locked) = self.instructions[i].locked.take() else {
            return Ok(false);
        };
        let (sender, amount) = (self.instructions[i].sender, self.instructions[i].amount);
        let time = self.begin();
        let dso = self.net.dso.clone();
        let coin = self.new_coin(sender, amount, time);
        let root = Exercise::on(
            &locked,
            "LockedCoin_ExpireLock",
            &dso,
            record(vec![("openRoundCid", self.round_in_use(time.effective).map_or(V::Unit, |r| cid(&r.contract.id)))]),
        )
        .consuming()
        .result(record(vec![("coin", cid(&coin.contract.id))]))
        .children(vec![Event::Created(coin.contract.clone())]);
        self.coins.push(coin);
        self.commit(time, "", vec![root.event()], false)?;
        Ok(true)
    }

    // --- reassignments

    /// Sends a coin or locked coin to the app synchronizer, or brings one back. The
    /// `last` update of a history unassigns a locked coin if there is one (else a coin)
    /// and leaves it in flight, so the registry's conflict case is always visible.
    fn reassign(&mut self, last: bool) -> io::Result<bool> {
        let away: Vec<String> = self
            .coins
            .iter()
            .map(|c| &c.contract)
            .chain(self.instructions.iter().filter_map(|i| i.locked.as_ref()))
            .filter(|c| c.synchronizer == Synchronizer::App || c.in_flight)
            .map(|c| c.id.clone())
            .collect();
        let returning: Vec<&String> = away
            .iter()
            .filter(|id| self.contract(id).is_some_and(|c| !c.in_flight && c.synchronizer == Synchronizer::App))
            .collect();
        let id = if !last && !returning.is_empty() && (self.rng.percent(40) || away.len() >= MAX_REASSIGNED) {
            returning[self.rng.index(returning.len())].clone()
        } else if last || away.len() < MAX_REASSIGNED {
            let locked: Vec<&Contract> =
                self.instructions.iter().filter_map(|i| i.locked.as_ref()).filter(|c| c.is_home()).collect();
            let coins: Vec<&Contract> = self.coins.iter().map(|c| &c.contract).filter(|c| c.is_home()).collect();
            let pool = if !locked.is_empty() && (last || self.rng.percent(25)) { locked } else { coins };
            if pool.is_empty() {
                return Ok(false);
            }
            pool[self.rng.index(pool.len())].id.clone()
        } else {
            return Ok(false);
        };
        let unassign_id = self.ids.unassign_id(&mut self.rng);
        let Some(contract) = self.contract_mut(&id) else {
            return Ok(false);
        };
        contract.in_flight = true;
        contract.reassignment_counter += 1;
        let source = contract.synchronizer;
        let counter = contract.reassignment_counter;
        // The owner submits: the last signatory (after the DSO party).
        let submitter = contract.signatories.last().cloned().unwrap_or_default();
        let assignment_first = !last && self.rng.percent(10);
        let emitted = self.summary.updates();
        let due = emitted + 1 + self.rng.below(4);
        let first = PendingReassignment {
            due: emitted,
            assignment: assignment_first,
            contract_id: id,
            submitter,
            source,
            unassign_id,
            counter,
        };
        let second = PendingReassignment {
            due,
            assignment: !assignment_first,
            contract_id: first.contract_id.clone(),
            submitter: first.submitter.clone(),
            source,
            unassign_id: first.unassign_id.clone(),
            counter,
        };
        self.pending.push(second);
        self.write_reassignment(&first)?;
        Ok(true)
    }

    /// Writes the second half of a reassignment; the contract is then on its target.
    fn finish_reassignment(&mut self, pending: PendingReassignment) -> io::Result<()> {
        self.write_reassignment(&pending)?;
        if let Some(contract) = self.contract_mut(&pending.contract_id) {
            contract.in_flight = false;
            contract.synchronizer = pending.source.other();
        }
        Ok(())
    }

    fn contract(&self, id: &str) -> Option<&Contract> {
        self.coins
            .iter()
            .map(|c| &c.contract)
            .chain(self.instructions.iter().filter_map(|i| i.locked.as_ref()))
            .find(|c| c.id == id)
    }

    fn contract_mut(&mut self, id: &str) -> Option<&mut Contract> {
        self.coins
            .iter_mut()
            .map(|c| &mut c.contract)
            .chain(self.instructions.iter_mut().filter_map(|i| i.locked.as_mut()))
            .find(|c| c.id == id)
    }

    fn write_reassignment(&mut self, r: &PendingReassignment) -> io::Result<()> {
        let time = self.begin();
        let update_id = self.ids.update_id(&mut self.rng);
        let offset = format!("{:018}", self.summary.updates() + 1);
        let source = self.net.synchronizer_id(r.source).to_owned();
        let target = self.net.synchronizer_id(r.source.other()).to_owned();
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        line.push_str(r#"{"update":"#);
        let mut o = Object::new(&mut line);
        o.str("update_id", &update_id).str("offset", &offset).timestamp("record_time", time.record);
        let out = o.key("event");
        let mut event = Object::new(out);
        if r.assignment {
            let Some(contract) = self.contract(&r.contract_id) else {
                self.line = line;
                return Ok(());
            };
            event
                .str("submitter", &r.submitter)
                .str("source_synchronizer", &source)
                .str("target_synchronizer", &target)
                .int("migration_id", self.migration)
                .str("unassign_id", &r.unassign_id);
            let created = event.key("created_event");
            let id = EventId { update_id: &update_id, number: 0 };
            push_created_event(created, &self.net, id, contract);
            event.int("reassignment_counter", r.counter).end();
            self.summary.assignments += 1;
        } else {
            event
                .str("submitter", &r.submitter)
                .str("source_synchronizer", &source)
                .int("migration_id", self.migration)
                .str("target_synchronizer", &target)
                .str("unassign_id", &r.unassign_id)
                .int("reassignment_counter", r.counter)
                .str("contract_id", &r.contract_id)
                .end();
            self.summary.unassignments += 1;
        }
        o.end();
        line.push_str("}\n");
        self.out.write_all(line.as_bytes())?;
        self.line = line;
        Ok(())
    }

    // --- the hard migration

    /// Completes the reassignments in progress, re-imports every active contract under
    /// migration 1, and moves the clock past the downtime.
    fn migrate(&mut self) -> io::Result<()> {
        while self.summary.updates() < self.limit {
            let Some(pending) = self.pending.pop() else {
                break;
            };
            self.finish_reassignment(pending)?;
        }
        self.migration = 1;
        let mut active: Vec<Contract> = Vec::new();
        active.extend(self.dso_rules.iter().cloned());
        active.extend(self.coin_rules.iter().cloned());
        active.extend(self.external_config.iter().cloned());
        active.extend(self.open.iter().map(|r| r.contract.clone()));
        active.extend(self.closed.iter().map(|r| r.contract.clone()));
        active.extend(self.confirmations.iter().map(|c| c.contract.clone()));
        active.extend(self.votes.iter().flatten().cloned());
        active.extend(self.coins.iter().map(|c| c.contract.clone()));
        for instruction in &self.instructions {
            active.push(instruction.contract.clone());
            active.extend(instruction.locked.iter().cloned());
        }
        for contract in &active {
            if self.summary.updates() >= self.limit {
                break;
            }
            self.write_import(contract)?;
        }
        self.now += 30 * MINUTE + self.rng.range(0, 30 * MINUTE);
        Ok(())
    }

    fn write_import(&mut self, contract: &Contract) -> io::Result<()> {
        let id = EventId { update_id: &contract.id, number: 0 };
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        line.push_str(r#"{"update":"#);
        let mut o = Object::new(&mut line);
        o.str("update_id", &contract.id)
            .int("migration_id", self.migration)
            .str("workflow_id", "")
            .str("record_time", "0001-01-01T00:00:00.000000Z")
            .str("synchronizer_id", self.net.synchronizer_id(contract.synchronizer))
            .timestamp("effective_at", contract.created_at)
            .event_ids("root_event_ids", &contract.id, &[0]);
        let out = o.key("events_by_id");
        out.push('{');
        id.push(out);
        out.push(':');
        push_created_event(out, &self.net, id, contract);
        out.push('}');
        o.end();
        line.push_str("}\n");
        self.out.write_all(line.as_bytes())?;
        self.line = line;
        self.summary.imports += 1;
        Ok(())
    }
}

fn coin_rules_payload(dso: &str) -> V {
    record(vec![
        ("dso", party(dso)),
        (
            "configSchedule",
            record(vec![
                (
                    "initialValue",
                    record(vec![
                        (
                            "transferConfig",
                            record(vec![
                                ("createFee", record(vec![("fee", V::Numeric(UNIT / 100))])),
                                ("holdingFee", record(vec![("rate", V::Numeric(UNIT / 52_560))])),
                                ("maxNumInputs", V::Int64(100)),
                                ("maxNumOutputs", V::Int64(100)),
                            ]),
                        ),
                        ("tickDuration", reltime(TICK)),
                        ("decentralizedSynchronizer", text("global-domain")),
                    ]),
                ),
                ("futureValues", V::List(vec![])),
            ]),
        ),
        ("isDevNet", V::Bool(true)),
    ])
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

    use ledger_node_core::ingest::parse_lines;
    use ledger_node_core::time::Timestamp;
    use ledger_node_core::update::{Blob, Event as LedgerEvent, ReassignmentEvent, Update};
    use ledger_node_core::value::{Encoding, Value};
    use serde_json::Value as Json;

    use super::*;

    fn generate(updates: u64, seed: u64) -> (Vec<u8>, Summary) {
        let mut out = Vec::new();
        let summary = write(&Options { updates, seed }, &mut out).unwrap();
        (out, summary)
    }

    /// The records of a history: `(kind, payload)`, checked by the core's line parser.
    fn records(bytes: &[u8]) -> Vec<(&'static str, Json)> {
        let lines = parse_lines(bytes).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(lines.len(), bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()).count(), "one record per line");
        lines.into_iter().map(|l| (l.kind, serde_json::to_value(&l.payload).unwrap())).collect()
    }

    fn updates(bytes: &[u8]) -> Vec<Update> {
        records(bytes)
            .into_iter()
            .filter(|(kind, _)| *kind == "update")
            .map(|(_, json)| Update::parse(&(&json).into()).unwrap_or_else(|e| panic!("{e}: {json}")))
            .collect()
    }

    #[test]
    fn a_seed_names_one_history_byte_for_byte() {
        let (a, _) = generate(2_000, 7);
        let (b, _) = generate(2_000, 7);
        assert!(a == b, "two runs with one seed differ");
        let (c, _) = generate(2_000, 8);
        assert!(a != c, "two seeds give the same history");
        let (d, _) = generate(2_000, 7);
        assert_eq!(a.iter().filter(|b| **b == b'\n').count(), d.iter().filter(|b| **b == b'\n').count());
    }

    #[test]
    fn every_line_is_an_ingest_record_and_every_update_parses_canonically() {
        let (bytes, summary) = generate(3_000, 1);
        let text = std::str::from_utf8(&bytes).unwrap();
        let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
        for (line, (kind, payload)) in text.lines().zip(records(&bytes)) {
            *kinds.entry(kind).or_default() += 1;
            match kind {
                "update" => {
                    let update = Update::parse(&(&payload).into()).unwrap_or_else(|e| panic!("{e}: {line}"));
                    // Written in the canonical ingest form: the core writes it back
                    // byte for byte.
                    let canonical = serde_json::to_string(&update.to_ingest_json()).unwrap();
                    let raw = line.strip_prefix(r#"{"update":"#).and_then(|l| l.strip_suffix('}')).unwrap();
                    assert_eq!(raw, canonical);
                }
                "topology" => {
                    let keys: Vec<&str> = payload.as_object().unwrap().keys().map(String::as_str).collect();
                    assert_eq!(keys, ["synchronizer_id", "party_id", "participant_ids"]);
                    assert!(!payload["participant_ids"].as_array().unwrap().is_empty());
                }
                "wallet_user" => {
                    assert!(payload["user_id"].is_string() && payload["party_id"].is_string());
                    assert_eq!(payload.as_object().unwrap().len(), 2);
                }
                "backfill" => {
                    assert!(payload["migration_id"].is_i64());
                    assert_eq!(payload["complete"], Json::Bool(true));
                    assert_eq!(payload["import_updates_complete"], Json::Bool(true));
                    assert_eq!(payload.as_object().unwrap().len(), 3);
                }
                "roll_forward_lsu" => {
                    let upgrade = payload["upgradeTime"].as_str().unwrap();
                    assert!(Timestamp::parse(upgrade).is_ok());
                    let current = payload["currentPhysicalSynchronizerId"].as_str().unwrap();
                    let successor = payload["successorPhysicalSynchronizerId"].as_str().unwrap();
                    assert!(current.starts_with("global-domain::1220"), "{current}");
                    assert_ne!(current, successor);
                }
                other => panic!("unexpected kind {other}"),
            }
        }
        assert_eq!(kinds["update"], 3_000);
        assert_eq!(kinds["update"], summary.updates());
        assert_eq!(kinds["topology"], summary.topology);
        assert_eq!(kinds["wallet_user"], summary.wallet_user);
        assert_eq!(kinds["backfill"], 2);
        assert_eq!(kinds["roll_forward_lsu"], 1);
    }

    #[test]
    fn the_core_ingests_the_whole_history_and_again_changes_nothing() {
        let (bytes, summary) = generate(2_000, 1);
        let store = ledger_node_core::store::MemoryStore::new();
        let config = ledger_node_core::Config::default();
        let ingest = |body: &[u8]| {
            ledger_node_core::exec::block_on(ledger_node_core::ingest::ingest(body, &store, &config))
                .unwrap_or_else(|e| panic!("{e:?}"))
        };
        let first = ingest(&bytes);
        assert_eq!(first.applied.update, summary.updates());
        assert_eq!(first.applied.topology, summary.topology);
        assert_eq!(first.applied.wallet_user, summary.wallet_user);
        assert_eq!(first.applied.backfill, summary.backfill);
        assert_eq!(first.applied.roll_forward_lsu, 1);
        assert_eq!(first.unchanged, 0);
        let again = ingest(&bytes);
        assert_eq!(again.applied.update, 0);
        assert_eq!(again.unchanged, summary.updates());
    }

    #[test]
    fn updates_counts_exactly_the_update_records() {
        for n in [0, 1, 2, 3, 4, 10, 999, 1_000, 1_001] {
            let (bytes, summary) = generate(n, 3);
            let updates = updates(&bytes);
            assert_eq!(updates.len() as u64, n, "--updates {n}");
            assert_eq!(summary.updates(), n);
        }
    }

    #[test]
    fn zero_updates_print_no_update_lines() {
        let (bytes, summary) = generate(0, 1);
        let records = records(&bytes);
        assert!(records.iter().all(|(kind, _)| *kind != "update"));
        assert!(records.iter().any(|(kind, _)| *kind == "topology"));
        assert_eq!(summary.updates(), 0);
        assert_eq!(summary.backfill, 1);
    }

    #[test]
    fn update_ids_are_unique_and_look_like_ledger_ids() {
        let (bytes, _) = generate(5_000, 11);
        let updates = updates(&bytes);
        let mut seen = HashSet::new();
        for update in &updates {
            assert!(seen.insert(update.id().to_owned()), "{} twice", update.id());
            let hex =
                if update.is_import() { update.id().strip_prefix("00") } else { update.id().strip_prefix("1220") };
            assert!(hex.is_some_and(|h| h.len() >= 64), "{} is not a ledger id", update.id());
        }
    }

    #[test]
    fn record_times_increase_except_for_imports() {
        let (bytes, _) = generate(3_000, 5);
        let mut last = Timestamp::MIN;
        for update in updates(&bytes) {
            if update.is_import() {
                assert_eq!(update.record_time(), Timestamp::MIN);
                continue;
            }
            assert!(update.record_time() > last, "{} goes back in time", update.id());
            last = update.record_time();
            if let Some(t) = update.as_transaction() {
                assert!(t.effective_at <= t.record_time);
            }
        }
        // 2025-01-06T08:00:00Z, then a few seconds apart: 3,000 updates cross at least
        // two 3-hour snapshot boundaries (09:00, 12:00, 15:00, ...).
        assert!(last.micros() > START + 6 * HOUR, "{last:?}");
    }

    fn value_types(value: &Value, types: &mut BTreeSet<&'static str>) {
        types.insert(value.type_name());
        match value {
            Value::Record(record) => {
                for field in &record.fields {
                    value_types(&field.value, types);
                }
            }
            Value::Variant { value, .. } => value_types(value, types),
            Value::List(elements) => elements.iter().for_each(|v| value_types(v, types)),
            Value::Optional(Some(inner)) => value_types(inner, types),
            Value::TextMap(entries) => entries.iter().for_each(|(_, v)| value_types(v, types)),
            Value::GenMap(entries) => entries.iter().for_each(|(k, v)| {
                value_types(k, types);
                value_types(v, types);
            }),
            _ => {}
        }
    }

    #[test]
    fn every_value_type_appears() {
        let (bytes, _) = generate(1_000, 2);
        let mut types = BTreeSet::new();
        for update in updates(&bytes) {
            let Some(t) = update.as_transaction() else {
                continue;
            };
            for event in t.events_by_id.values() {
                match event {
                    LedgerEvent::Created(c) => {
                        value_types(&Value::Record(c.create_arguments.clone()), &mut types);
                        assert!(c.created_event_blob.is_some());
                    }
                    LedgerEvent::Exercised(e) => {
                        value_types(&e.choice_argument, &mut types);
                        value_types(&e.exercise_result, &mut types);
                    }
                }
            }
        }
        assert_eq!(types, ledger_node_core::value::TYPES.into_iter().collect());
    }

    #[test]
    fn a_large_history_has_a_hard_migration_with_imports() {
        let (bytes, summary) = generate(3_000, 1);
        let updates = updates(&bytes);
        assert!(summary.imports > 20, "{summary:?}");
        let first_import = updates.iter().position(Update::is_import).unwrap();
        let imports = &updates[first_import..first_import + summary.imports as usize];
        for import in imports {
            let t = import.as_transaction().unwrap();
            assert!(t.is_import());
            assert_eq!(t.migration_id, 1);
            assert_eq!(t.events_by_id.len(), 1);
            let event = t.events_by_id.values().next().unwrap();
            assert!(matches!(event, LedgerEvent::Created(_)));
            assert_eq!(event.contract_id(), t.update_id, "an import's id is its contract id");
        }
        assert!(updates[..first_import].iter().all(|u| u.migration_id() == 0));
        let after = &updates[first_import + imports.len()..];
        assert!(after.len() > 1_000);
        assert!(after.iter().all(|u| u.migration_id() == 1 && !u.is_import()));
        let (small, summary) = generate(MIGRATION_MIN_UPDATES - 1, 1);
        assert_eq!(summary.imports, 0);
        assert!(self::updates(&small).iter().all(|u| u.migration_id() == 0));
    }

    /// What the replay knows about a contract.
    struct Known {
        template: String,
        arguments: Json,
        created_at: Timestamp,
        blob: Option<Blob>,
        synchronizer: String,
        archived: bool,
        last_counter: i64,
        /// Reassignments with one half seen: counter -> (unassigned, assigned).
        halves: HashMap<i64, (bool, bool)>,
    }

    impl Known {
        fn in_flight(&self) -> bool {
            self.halves.values().any(|(u, a)| u != a)
        }
    }

    /// Replays a history and checks that it is a consistent ledger: contracts are
    /// created once, exercised only while active, on their synchronizer and not in
    /// flight; reassignment counters increase and assignments carry the contract as
    /// created; imports re-create exactly the active contracts.
    #[test]
    fn the_history_is_a_consistent_ledger() {
        let (bytes, _) = generate(6_000, 9);
        let mut known: HashMap<String, Known> = HashMap::new();
        let mut imports_checked = false;
        let mut imported = BTreeSet::new();
        let updates = updates(&bytes);
        for (index, update) in updates.iter().enumerate() {
            match update {
                Update::Transaction(t) if t.is_import() => {
                    let LedgerEvent::Created(c) = t.events_by_id.values().next().unwrap() else {
                        panic!("an import creates");
                    };
                    let k = &known[&c.contract_id];
                    assert!(!k.archived && !k.in_flight());
                    assert_eq!(k.synchronizer, t.synchronizer_id);
                    assert_eq!(k.created_at, c.created_at);
                    assert_eq!(k.arguments, c.create_arguments.render(Encoding::ProtobufJson));
                    imported.insert(c.contract_id.clone());
                    let next_is_import = updates.get(index + 1).is_some_and(Update::is_import);
                    if !next_is_import {
                        let active: BTreeSet<String> =
                            known.iter().filter(|(_, k)| !k.archived).map(|(id, _)| id.clone()).collect();
                        assert_eq!(imported, active, "imports re-create the active contracts");
                        imports_checked = true;
                    }
                }
                Update::Transaction(t) => {
                    for event in t.events_in_order() {
                        match event {
                            LedgerEvent::Created(c) => {
                                assert!(!known.contains_key(&c.contract_id), "created twice");
                                if c.template_id.qualified_name()
                                    == "Platform.CoinTransferInstruction:CoinTransferInstruction"
                                {
                                    let locked =
                                        c.create_arguments.get("lockedCoin").and_then(Value::as_contract_id).unwrap();
                                    assert_eq!(
                                        known[locked].template.split_once(':').unwrap().1,
                                        "Platform.Coin:LockedCoin"
                                    );
                                }
                                known.insert(
                                    c.contract_id.clone(),
                                    Known {
                                        template: c.template_id.as_str().to_owned(),
                                        arguments: c.create_arguments.render(Encoding::ProtobufJson),
                                        created_at: c.created_at,
                                        blob: c.created_event_blob.clone(),
                                        synchronizer: t.synchronizer_id.clone(),
                                        archived: false,
                                        last_counter: 0,
                                        halves: HashMap::new(),
                                    },
                                );
                            }
                            LedgerEvent::Exercised(e) => {
                                let k = known
                                    .get_mut(&e.contract_id)
                                    .unwrap_or_else(|| panic!("{} is unknown", e.contract_id));
                                assert!(!k.archived, "{} exercised after archival", e.contract_id);
                                assert!(!k.in_flight(), "{} exercised in flight", e.contract_id);
                                assert_eq!(k.synchronizer, t.synchronizer_id);
                                assert_eq!(k.template, e.template_id.as_str());
                                k.archived |= e.consuming;
                            }
                        }
                    }
                }
                Update::Reassignment(r) => {
                    let id = r.event.contract_id();
                    let k = known.get_mut(id).unwrap();
                    assert!(!k.archived);
                    let counter = r.event.reassignment_counter();
                    let halves = k.halves.entry(counter).or_default();
                    match &r.event {
                        ReassignmentEvent::Unassignment(u) => {
                            assert!(!halves.0);
                            halves.0 = true;
                            assert_eq!(u.source_synchronizer, k.synchronizer);
                        }
                        ReassignmentEvent::Assignment(a) => {
                            assert!(!halves.1);
                            halves.1 = true;
                            let c = &a.created_event;
                            assert_eq!(a.source_synchronizer, k.synchronizer);
                            assert_eq!(k.template, c.template_id.as_str());
                            assert_eq!(k.created_at, c.created_at);
                            assert_eq!(k.blob, c.created_event_blob);
                            assert_eq!(k.arguments, c.create_arguments.render(Encoding::ProtobufJson));
                            assert_eq!(c.event_id, format!("{}:0", r.update_id));
                        }
                    }
                    if *halves == (true, true) {
                        let target = match &r.event {
                            ReassignmentEvent::Unassignment(u) => u.target_synchronizer.clone(),
                            ReassignmentEvent::Assignment(a) => a.target_synchronizer.clone(),
                        };
                        k.synchronizer = target;
                    } else {
                        assert!(counter > k.last_counter, "counters increase");
                        k.last_counter = counter;
                    }
                }
            }
        }
        assert!(imports_checked);
        let in_flight: Vec<&Known> = known.values().filter(|k| k.in_flight()).collect();
        assert!(
            in_flight.iter().any(|k| k.template.ends_with(":Platform.Coin:LockedCoin")),
            "a locked coin is left in flight at the end"
        );
        let reassigned = known.values().filter(|k| k.last_counter > 0).count();
        assert!(reassigned > 10, "{reassigned} contracts reassigned");
    }

    /// The state the node derives at the end of a history has every case of the
    /// endpoints: open and closed rounds, one vote per SV, instructions whose locked
    /// coin is active and some whose locked coin is gone, and a multi-hosted party.
    #[test]
    fn the_final_state_shows_every_case() {
        let mut out = Vec::new();
        let options = Options { updates: 10_000, seed: 4 };
        let mut history = History::new(&options, &mut out);
        history.preamble().unwrap();
        while history.summary.updates() < options.updates {
            history.step().unwrap();
        }
        assert_eq!(history.open.len(), 3);
        assert!((1..=4).contains(&history.closed.len()), "{}", history.closed.len());
        assert!(history.votes.iter().all(Option::is_some));
        assert!(history.instructions.iter().any(|i| i.locked.is_some()));
        assert!(history.tick > 100);
        let topology = history.net.topology();
        let multi: Vec<_> = topology.iter().filter(|(_, _, p)| p.len() > 1).collect();
        assert_eq!(multi.len(), 1);
        assert!(multi[0].1.starts_with("erin::"));
        let open_numbers: Vec<i64> = history.open.iter().map(|r| r.number).collect();
        let newest_closed = history.closed.back().map(|c| c.number).unwrap();
        assert!(newest_closed < open_numbers[0], "{open_numbers:?} {newest_closed}");
    }

    #[test]
    fn some_instructions_lose_their_locked_coin() {
        let (bytes, _) = generate(4_000, 1);
        let expired = updates(&bytes)
            .iter()
            .filter_map(Update::as_transaction)
            .flat_map(|t| t.events_by_id.values())
            .filter(|e| matches!(e, LedgerEvent::Exercised(x) if x.choice == "LockedCoin_ExpireLock"))
            .count();
        assert!(expired > 0);
    }

    #[test]
    fn memory_stays_bounded_however_long_the_history() {
        let options = Options { updates: 60_000, seed: 1 };
        let mut history = History::new(&options, io::sink());
        while history.summary.updates() < options.updates {
            history.step().unwrap();
        }
        assert!(history.peak_active < 250, "{} active contracts", history.peak_active);
        assert!(history.pending.len() <= MAX_REASSIGNED);
    }

    #[test]
    fn timestamps_numerics_and_blobs_match_the_core() {
        for micros in [
            Timestamp::MIN.micros(),
            -1,
            0,
            START,
            1_726_839_089_552_807,
            951_782_400_000_000, // 2000-02-29
            Timestamp::MAX.micros(),
        ] {
            let mut ours = String::new();
            push_timestamp(&mut ours, micros);
            assert_eq!(ours, Timestamp::from_micros(micros).unwrap().to_string());
        }
        let mut rng = Rng::new(1);
        for _ in 0..2_000 {
            let micros = rng.range(Timestamp::MIN.micros(), Timestamp::MAX.micros());
            let mut ours = String::new();
            push_timestamp(&mut ours, micros);
            assert_eq!(ours, Timestamp::from_micros(micros).unwrap().to_string());
        }
        for (units, text) in [(0, "0.0000000000"), (UNIT / 200, "0.0050000000"), (-12 * UNIT - 1, "-12.0000000001")] {
            let mut ours = String::new();
            push_numeric(&mut ours, units);
            assert_eq!(ours, text);
        }
        for length in 0..10 {
            let bytes: Vec<u8> = (0..length).map(|i| (i * 37 + 250) as u8).collect();
            let mut text = String::new();
            push_base64(&mut text, &bytes);
            assert_eq!(Blob::parse(&text).unwrap().decode(), bytes);
        }
    }

    #[test]
    fn json_strings_are_escaped_as_serde_json_does() {
        for s in ["plain", "quote \" and \\ backslash", "tab\tline\nnul\u{0}", "é€"] {
            let mut ours = String::new();
            push_json_str(&mut ours, s);
            assert_eq!(ours, serde_json::to_string(s).unwrap());
        }
    }
}
