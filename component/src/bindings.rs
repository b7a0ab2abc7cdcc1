//! The generated WIT bindings, kept out of every other module.
#![expect(missing_docs, missing_debug_implementations, reason = "generated code")]
#![allow(clippy::all, clippy::pedantic, reason = "generated code")]

wit_bindgen::generate!({
    world: "node",
    path: "../wit",
    pub_export_macro: true,
});
