//! Records the commit time of the source tree, for `GET /version`, and writes the
//! OpenAPI document the node serves.
//!
//! The time comes from `SOURCE_DATE_EPOCH` when set (reproducible builds), else from
//! `git log -1 --format=%ct` of the checkout. A source tree outside git without
//! `SOURCE_DATE_EPOCH` records the Unix epoch and says so with a build warning.
//!
//! The document is `openapi.json` without the whitespace between its tokens
//! (`OUT_DIR/openapi.json`): two fifths smaller in the component and the worker, where
//! size counts, and the same document to every JSON reader.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let git_dir = Path::new(&manifest_dir).join("../.git");
    for watched in ["HEAD", "refs/heads", "packed-refs"] {
        let path = git_dir.join(watched);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    let epoch = std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|v| v.trim().parse::<i64>().ok()).or_else(|| {
        let out = Command::new("git").args(["log", "-1", "--format=%ct"]).current_dir(&manifest_dir).output().ok()?;
        String::from_utf8(out.stdout).ok()?.trim().parse::<i64>().ok()
    });
    let epoch = epoch.unwrap_or_else(|| {
        println!("cargo:warning=no git commit and no SOURCE_DATE_EPOCH: commit_ts will be the Unix epoch");
        0
    });
    println!("cargo:rustc-env=LEDGER_NODE_COMMIT_EPOCH={epoch}");

    let document = Path::new(&manifest_dir).join("openapi.json");
    println!("cargo:rerun-if-changed={}", document.display());
    let text = std::fs::read_to_string(&document).expect("reading core/openapi.json");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(Path::new(&out_dir).join("openapi.json"), without_whitespace(&text))
        .expect("writing the OpenAPI document");
}

/// `json` without the whitespace outside its strings.
fn without_whitespace(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c == '"' {
            in_string = true;
        } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        }
        out.push(c);
    }
    out
}
