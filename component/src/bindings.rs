//! The generated WIT bindings, kept out of every other module.
#![allow(clippy::all, clippy::pedantic, reason = "generated code")]

wit_bindgen::generate!({
    world: "node",
    path: "../wit",
    pub_export_macro: true,
});
