//! Records the commit time of the source tree, for `GET /version`.
//!
//! The time comes from `SOURCE_DATE_EPOCH` when set (reproducible builds), else from
//! `git log -1 --format=%ct` of the checkout. A source tree outside git without
//! `SOURCE_DATE_EPOCH` records the Unix epoch and says so with a build warning.

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
}
