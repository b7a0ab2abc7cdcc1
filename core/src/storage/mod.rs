//! Storage: the store port and how the core writes through it.

pub mod commit;
pub mod exec;
pub mod keys;
pub mod layout;
pub mod stage;
pub mod store;
