//! Runs the ledger-node component in wasmtime over the node's [`Backend`].
//!
//! - [`runner`]: the engine, the component compiled once, its instances and the pool of
//!   idle ones ([`Node::checkout`], [`Node::checkin`]), and the watch on their memory.
//! - [`store_import`]: the component's WIT `store` import, served from a [`Backend`]
//!   (a write batch is read in place in the component's memory), with a count of its
//!   calls ([`StoreCalls`]).
//! - `bindings`: the generated bindings of `wit/node.wit`, private to these two; only
//!   the `handler` export's records go further ([`Request`], [`Response`],
//!   [`TickReport`]).
//!
//! [`Backend`]: crate::backend::Backend

mod bindings;
pub mod runner;
pub mod store_import;

pub use bindings::exports::ledger::node::handler::{Request, Response, TickReport};
pub use runner::{COMPONENT, IDLE_INSTANCES, IDLE_MEMORY_BYTES, Instance, Node, Options, POOLED_MEMORY_LIMIT, engine};
pub use store_import::StoreCalls;
