//! The generated WIT bindings, kept out of every other module.
//!
//! Imports take their parameters borrowed (`ownership: Borrowing`): a store write hands
//! the host the core's own keys and values, with no copy of the batch (megabytes per
//! ingest batch). Types used both as parameters and results (`entry`) get one borrowed
//! and one owned form.
#![allow(clippy::all, clippy::pedantic, reason = "generated code")]

wit_bindgen::generate!({
    world: "node-api",
    path: "../wit",
    pub_export_macro: true,
    ownership: Borrowing { duplicate_if_necessary: true },
});
