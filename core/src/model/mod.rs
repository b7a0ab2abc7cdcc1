//! The model: what the node's data is, with no storage.

pub mod binary;
pub mod config;
pub mod env;
pub mod error;
pub mod ids;
pub mod json;
pub mod jwks;
pub mod names;
pub mod time;
pub mod update;
pub mod value;
