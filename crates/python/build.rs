//! Builds the `xsort`, `gensort` and `valsort` commands of the workspace (in the workspace's own
//! `target/`, with the release profile or the one `XSORT_CARGO_PROFILE` names: the test command
//! uses `testing`, to reuse the commands its Rust tests built) and copies them into the Python package (`python/xsort/bin/`), where
//! maturin puts them into the wheel and the package's console scripts run them. So
//! `pip install ./crates/python` installs the commands as well as the module, with no step before.
//!
//! The nested cargo runs on the workspace, not on this crate (which the workspace excludes), with
//! the outer build's cargo and rustc but none of its per-build environment (target directory,
//! flags meant for the extension, wrappers such as clippy's).

use std::path::{Path, PathBuf};
use std::process::Command;

const COMMANDS: [&str; 3] = ["xsort", "gensort", "valsort"];

fn main() {
    let here = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = here.join("../..");
    for watched in ["crates/cli", "crates/core", "crates/io", "crates/kernels", "crates/sortbench", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    let bin_dir = here.join("python/xsort/bin");
    for name in COMMANDS {
        println!("cargo:rerun-if-changed={}", bin_dir.join(name).display());
    }
    println!("cargo:rerun-if-env-changed=XSORT_CARGO_PROFILE");
    let profile = std::env::var("XSORT_CARGO_PROFILE").unwrap_or_else(|_| "release".into());
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build.current_dir(&root).args([
        "build",
        "--profile",
        &profile,
        "--manifest-path",
        "Cargo.toml",
        "-p",
        "xsort",
        "-p",
        "xsort-sortbench",
        "--bins",
    ]);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        let keep = ["CARGO_HOME", "CARGO_NET_", "CARGO_HTTP_", "CARGO_REGISTRIES_", "CARGO_REGISTRY_"].iter().any(|k| key.starts_with(k));
        let outer = key.starts_with("CARGO_") && !keep;
        if outer || ["RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "CLIPPY_ARGS", "MAKEFLAGS", "MFLAGS", "RUSTFLAGS"].contains(&key.as_str())
        {
            build.env_remove(&key);
        }
    }
    let status = build.status().unwrap_or_else(|e| panic!("cannot run cargo to build the xsort commands: {e}"));
    assert!(status.success(), "building the xsort commands failed ({status})");
    std::fs::create_dir_all(&bin_dir).unwrap_or_else(|e| panic!("{}: cannot create: {e}", bin_dir.display()));
    for name in COMMANDS {
        install(&root.join("target").join(&profile).join(name), &bin_dir.join(name));
    }
}

/// Copies `from` to `to` through a new file renamed into place (a running copy of `to` stays
/// intact).
fn install(from: &Path, to: &Path) {
    let new = to.with_extension("new");
    std::fs::copy(from, &new).unwrap_or_else(|e| panic!("{}: cannot copy to {}: {e}", from.display(), new.display()));
    std::fs::rename(&new, to).unwrap_or_else(|e| panic!("{}: cannot rename to {}: {e}", new.display(), to.display()));
}
