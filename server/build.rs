//! The commit a binary was built from, for `server --version` and `petstore_build_info`:
//! `PETSTORE_COMMIT` when the builder sets it (a tarball has no `.git`), else what git
//! says, else `unknown`.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=PETSTORE_COMMIT");
    // A new commit or a checkout moves HEAD or the branch it names (found where git
    // keeps them, a worktree's own folder too).
    for watched in ["HEAD", "refs/heads", "packed-refs"] {
        let found = Command::new("git").args(["rev-parse", "--git-path", watched]).output().ok();
        let path = found.filter(|out| out.status.success()).and_then(|out| String::from_utf8(out.stdout).ok());
        if let Some(path) = path.map(|path| path.trim().to_owned()).filter(|path| std::path::Path::new(path).exists()) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    let from_git = || {
        let out = Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output().ok()?;
        let commit = String::from_utf8(out.stdout).ok()?.trim().to_owned();
        (out.status.success() && !commit.is_empty()).then_some(commit)
    };
    let commit = std::env::var("PETSTORE_COMMIT").ok().filter(|c| !c.is_empty()).or_else(from_git);
    println!("cargo:rustc-env=PETSTORE_COMMIT={}", commit.as_deref().unwrap_or("unknown"));
}
