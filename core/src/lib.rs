//! # ledger-node core
//!
//! The whole node as a pure library: routing, the ledger model, derived state and every
//! endpoint. It does no I/O of its own. A host calls one function per request,
//!
//! ```text
//! service::handle(&Request, &Env { now, entropy, config }, &impl Store) -> Response
//! ```
//!
//! and translates its own request and response types to and from [`api::http`]'s. Time,
//! randomness and configuration come in through [`Env`]; storage comes through the
//! [`storage::store::Store`] port, an ordered key-value store with atomic write batches.
//!
//! ## State, and how it is written
//!
//! ```text
//! ingest batch ─► ledger ─► projections ──┐
//!                                         ├─► stage ─► guarded commit ─► store
//! scheduled tick (wallet expiries) ───────┘
//! endpoints ◄─ store (each answers from a key or a short scan)
//! ```
//!
//! - **The ledger** ([`state::ledger`]) is what the node is given: every update, stored
//!   stored once in a binary form that either encoding is rendered from on read, and the
//!   active contract set its events leave. It is
//!   the base that everything else is derived from, and it knows nothing of what is
//!   derived from it.
//! - **Projections** ([`state::projection`]) are the rest of the state ingest keeps, one shape
//!   each: the keys it reads for an update, fetched with the batch in one round trip,
//!   and what it stages for an update the ledger has just stored as new.
//!   [`ingest::projections`] names them all, once: the synchronizers the node has seen
//!   ([`state::network::KnownSynchronizers`]), the ledger's outcomes of wallet requests
//!   ([`state::wallet::outcome::LedgerOutcomes`]), migrations with their snapshots, rounds and
//!   price votes ([`state`]).
//! - **The guarded commit** ([`storage::commit`]): a write that reads state first (an ingest
//!   batch, a page of the tick) stages its reads and writes in a [`storage::stage::Stage`] and
//!   commits them in one atomic write batch guarded by the ingest generation, prepared
//!   again on the new state when another such write committed in between. No locks, on
//!   any store. A wallet submission reads nothing it writes: its one batch claims its
//!   tracking id with a precondition of its own ([`api::wallet`]).
//! - **Network records** ([`state::network`]: topology, backfill, the roll-forward plan,
//!   wallet users) come in beside updates in the same ingest batches, and each
//!   replaces the state it names.
//!
//! ## Layers
//!
//! Layers are folders, and imports go one way: a module uses its own layer and the
//! layers below it, never one above, and no two modules with the same parent use each
//! other. The test `layers.rs` of `ledger-node-tests` reads the sources and fails on an
//! import that goes up a layer or on a cycle between sibling modules (unit tests are
//! exempt: a test of any module may drive the whole node through [`handle`]).
//!
//! | rank | layer | what it holds |
//! |---|---|---|
//! | 0 | [`model`] | the update and value model ([`model::update`], [`model::value`]), ids, times, template names, the strict JSON reader and writer, the error type with its status map ([`model::error`]), and what a host hands in: the configuration with the JWK set it parses ([`model::config`], [`model::jwks`]) and the per-request [`Env`] |
//! | 1 | [`storage`] | the store port, its memory adapter and its contract suite ([`storage::store`]), the keyspace ([`storage::keys`]), the layout version ([`storage::layout`]), the [`storage::stage::Stage`], the guarded commit, and the executor for stores that answer at once ([`storage::exec`]) |
//! | 2 | [`state`] | what ingest keeps: the ledger, the projections of it, the network records and the wallet's requests; no request or response |
//! | 3 | [`api`] | requests and responses ([`api::http`], which also turns an [`Error`] into its response), routing ([`api::route`]), credentials ([`api::auth`]), and one module per endpoint group |
//! | 4 | [`ingest`], [`follow`] | the write path of ingest batches; the follower, which drives a node through the API |
//! | 5 | [`service`] | the dispatcher: each route to its endpoint |
//!
//! The configuration, the environment and the error type are at the bottom because
//! every layer reads them and they read nothing but the model: a config value and the
//! 400 a bad id or time is are parsed at the edge like any other model type. The
//! executor is storage's: it drives the futures of a store that answers at once. The
//! dispatcher is above ingest rather than in the API because `POST /v0/admin/ingest`
//! runs ingest: so the API never depends on the write path, and ingest stays a plain
//! function of a batch and a store (the benchmarks and the demo's tests call it so).
//!
//! ## The model
//!
//! An update's and a value's shape is declared once ([`model::update`], [`model::value`]): each type
//! lives in one module with its one reader and its one writer. The reader is generic
//! over where it reads from, a parsed JSON document that names the path of every
//! problem or an ingest line read straight from its bytes, and the writer writes both
//! value encodings and the canonical ingest form. The native host's demo generator
//! builds the same types and writes them with the same writer, so adding a field
//! touches the type's module, the test fixtures and the demo generator.
//!
//! ## Hosts
//!
//! | host | crate | store adapter | how it drives the future |
//! |---|---|---|---|
//! | Cloudflare Worker | `ledger-node-worker` | D1, with update bodies in R2 (cached in memory and KV) | the isolate's event loop |
//! | WASI 0.2 component | `ledger-node-component` | the WIT `store` import | [`storage::exec::block_on`] |
//! | native wasmtime host | `ledger-node` (in `host/`) | fjall or memory, behind the component's import | inside the component |
//!
//! The native host does not link this crate's request handling into its binary: it
//! runs the component, so the tests exercise exactly what is deployed. The cross-host
//! suites (`ledger-node-tests`, in `tests/`) also link this crate directly to run the
//! same scenarios against [`storage::store::MemoryStore`].
//!
//! ## Following
//!
//! [`follow::sync`] keeps a node current from an upstream node. It is the one piece a
//! host runs beside the handler rather than through it: it speaks HTTP-shaped requests
//! over two [`follow::Link`]s, the upstream (its history stream and the [`api::export`]
//! endpoints) and the node itself (its export state and `POST /v0/admin/ingest`), so
//! the worker's cron and `ledger-node follow` (whose local link is the component) run
//! the same follower, and everything it applies goes through ingest.
//!
//! ## Order of checks
//!
//! Routing ([`api::route`]: every route at the root, most also under the base path
//! `/api/scan` or `/api/validator`; 404, then 405), body size (413, limits from
//! [`body_limit`], the same under a base path as at the root),
//! authentication (401, 403), parsing (400), then the endpoint's own rules. Every error
//! is `{"error": "..."}` ([`Error::into_response`]).
//!
//! ## Bounds
//!
//! - **Ids** ([`model::ids`]): every update, contract, party, synchronizer, participant,
//!   tracking, user and transfer instruction id is at most [`model::ids::MAX_ID_BYTES`] (512)
//!   bytes wherever it enters: ingest records (a 400 naming the line and the field),
//!   path parameters after percent-decoding and request bodies (a 400 naming the
//!   parameter or field), and the wallet token's subject (a 401).
//! - **Jobs and lists** ([`api::wallet`]): the scheduled tick and the admin list read their
//!   records in pages of bounded size, a bounded number of pages a call, and skip a
//!   record they cannot read, naming it in [`Response::log`] (and
//!   [`state::wallet::outcome::TickReport::skipped`]) instead of failing as a whole.
//! - **Request bodies** are read with the node's strict JSON reader ([`model::json`]): a key
//!   repeated within one object is a 400 naming it.
//! - **Credentials**: exactly one `Authorization` header ([`api::auth::bearer_token`]);
//!   wallet tokens must not carry `crit`, their times must be integers, and they may
//!   expire at most `LEDGER_NODE_JWT_MAX_TTL_HOURS` ahead ([`api::auth::jwt`]).
//!
//! ## Clients of the network's own apps
//!
//! The node answers the way the network's own apps do, so their clients need no change:
//!
//! - **Spellings** ([`model::names::ApiNames`]): the price votes path and field and the coin
//!   rules context key carry the configured currency word (`LEDGER_NODE_NAMES_COIN`) in
//!   lower case: `/v0/amulet-price/votes`, `amulet_price_votes`, `amulet-rules` on a
//!   network whose coin is `Amulet`; only that spelling is served.
//! - **Base paths** ([`api::route::Base`]): besides the root, the history, state and registry
//!   endpoints answer under `/api/scan`, the wallet under `/api/validator`.
//! - **Times** ([`model::time`]): request and ingest timestamps take 0 to 9 fractional digits,
//!   those beyond the microsecond zero; answers always carry six.
//! - **Probes and description** ([`api::health`], [`api::openapi`]): `GET /livez`, `GET /readyz`
//!   (503 when the store cannot be read) and the OpenAPI document at `GET /openapi.json`.
//!
//! ## Keyspace
//!
//! Keys beginning with `0xff` are the node's scratch space ([`api::admin::SCRATCH_PREFIX`]);
//! the ledger's keyspace is documented with the modules that own it. Every store holds
//! the version of that layout ([`storage::layout`]), which each host checks before it serves:
//! a store of another layout is refused, with what to do about it.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod api;
pub mod follow;
pub mod ingest;
pub mod model;
pub mod service;
pub mod state;
pub mod storage;

pub use api::http::{Body, Method, Request, Response};
pub use model::config::Config;
pub use model::env::Env;
pub use model::error::Error;
pub use service::{body_limit, handle};
pub use storage::store::Store;
