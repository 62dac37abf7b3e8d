//! The build's commit, for `ebb --version` (an operator can tell two builds of one version apart).

use std::process::Command;

fn main() {
    let git = |args: &[&str]| {
        Command::new("git").args(args).output().ok().filter(|o| o.status.success()).map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown commit".into());
    println!("cargo:rustc-env=EBB_COMMIT={commit}");
    // Rebuilt (this crate only) when HEAD moves.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        // The branch's ref file, or the packed refs when it has none (a missing path would
        // rebuild on every run).
        let head = git(&["symbolic-ref", "-q", "HEAD"]).map(|h| format!("{dir}/{h}"));
        for path in head.into_iter().chain([format!("{dir}/packed-refs")]) {
            if std::path::Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
