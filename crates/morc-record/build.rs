//! Stamps the build with its git commit (MORC_GIT_COMMIT), stored in every
//! recording so that data can be traced to the code that produced it.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=MORC_GIT_COMMIT={commit}");
    // Rerun when HEAD moves (worktree-aware paths); without git, only when this file changes.
    println!("cargo:rerun-if-changed=build.rs");
    // Only files that exist: cargo reruns every build for a missing one (a worktree's
    // packed-refs, before anything was packed).
    for p in ["HEAD", "packed-refs"] {
        if let Some(path) = git(&["rev-parse", "--git-path", p]).filter(|p| std::path::Path::new(p).exists()) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(path) = git(&["rev-parse", "--git-path", &head_ref]) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
