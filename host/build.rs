//! Builds the `ledger-node-component` WASI 0.2 component that this host runs.
//!
//! A nested `cargo build -p ledger-node-component --target wasm32-wasip2 --release`
//! with its own target directory inside `OUT_DIR` (sharing the outer one would deadlock
//! on cargo's lock), without the outer build's rustflags or wrappers. The path of the
//! built component reaches the host as `LEDGER_NODE_COMPONENT_PATH`, which embeds it.

use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";
const PACKAGE: &str = "ledger-node-component";
const ARTIFACT: &str = "ledger_node_component.wasm";
/// Set (non-empty): the component keeps its name section.
const NAMES: &str = "LEDGER_NODE_COMPONENT_NAMES";

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace =
        manifest_dir.parent().expect("the host crate lives one level below the workspace root").to_path_buf();
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let target_dir = out_dir.join("component-target");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());

    // The release profile strips the component's function names; a profile (`perf`,
    // with LEDGER_NODE_PERFMAP) needs them.
    println!("cargo:rerun-if-env-changed={NAMES}");
    let mut names = Vec::new();
    if std::env::var_os(NAMES).is_some_and(|v| !v.is_empty()) {
        names = vec!["--config".to_owned(), format!("profile.release.package.{PACKAGE}.strip=\"none\"")];
    }
    let status = Command::new(cargo)
        .current_dir(&workspace)
        .args(["build", "--locked", "--release", "-p", PACKAGE, "--target", TARGET])
        .args(&names)
        .env("CARGO_TARGET_DIR", &target_dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("CARGO_MAKEFLAGS")
        .status()
        .expect("running cargo to build the component");
    assert!(
        status.success(),
        "building the component failed: see the compiler output above (a missing {TARGET} target is added by scripts/setup)"
    );

    let release = target_dir.join(TARGET).join("release");
    let component = release.join(ARTIFACT);
    println!("cargo:rustc-env=LEDGER_NODE_COMPONENT_PATH={}", component.display());

    // Rebuild when any source the component was built from changes: the dep-info file
    // lists them all. The manifests (profiles, features), Cargo.lock and wit/ are added.
    let dep_info = release.join(ARTIFACT.replace(".wasm", ".d"));
    for path in dep_info_sources(&dep_info) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    for file in ["Cargo.toml", "Cargo.lock", ".cargo/config.toml", "component/Cargo.toml", "core/Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", workspace.join(file).display());
    }
    println!("cargo:rerun-if-changed={}", workspace.join("wit").display());
}

/// The sources listed in a Makefile-style dep-info file (`target: dep dep ...`).
fn dep_info_sources(path: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let Some((_, deps)) = text.lines().next().and_then(|line| line.split_once(": ")) else {
        return Vec::new();
    };
    // Paths with spaces are escaped as `\ `.
    let mut sources = Vec::new();
    let mut current = String::new();
    let mut chars = deps.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => {
                current.push(' ');
                chars.next();
            }
            ' ' => {
                if !current.is_empty() {
                    sources.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        sources.push(PathBuf::from(current));
    }
    sources
}
