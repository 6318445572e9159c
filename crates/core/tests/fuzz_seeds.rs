//! The fuzz targets' inputs as ordinary tests: every file in `fuzz/seeds/<target>/` (the seed corpus)
//! and `fuzz/regressions/<target>/` (minimized inputs that once failed) goes through the same
//! property checks as the `cargo fuzz` target, on stable, so CI keeps them passing.

#[path = "../../../fuzz/src/checks.rs"]
#[allow(dead_code)]
mod checks;

use std::path::{Path, PathBuf};

/// The repository's `fuzz/` directory.
fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `dir`, sorted; none if it does not exist.
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<PathBuf> = entries.map(|e| e.expect("directory entry").path()).filter(|p| p.is_file()).collect();
    v.sort();
    v
}

/// Runs `check` on every file of `dirs`; returns how many ran and the failures (file and panic message).
fn replay(check: checks::Check, dirs: &[PathBuf]) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut ran = 0;
    for path in dirs.iter().flat_map(|d| files(d)) {
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        ran += 1;
        if let Err(panic) = std::panic::catch_unwind(|| check(&data)) {
            let msg = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
            failures.push(format!("{}: {}", path.display(), msg.unwrap_or_default()));
        }
    }
    (ran, failures)
}

#[test]
fn seeds_and_regressions_pass_the_fuzz_checks() {
    let root = fuzz_dir();
    let mut failures = Vec::new();
    for (name, check) in checks::TARGETS {
        let seeds = root.join("seeds").join(name);
        let (ran, mut failed) = replay(*check, &[seeds.clone(), root.join("regressions").join(name)]);
        // Every target keeps a seed corpus, so this test cannot pass by finding nothing.
        assert!(ran > 0 && !files(&seeds).is_empty(), "no seeds in {}", seeds.display());
        failures.append(&mut failed);
    }
    assert!(failures.is_empty(), "fuzz checks failed:\n{}", failures.join("\n"));
}

#[test]
fn every_target_directory_is_known() {
    // A seed folder whose target was renamed or removed would silently stop being checked.
    let names: Vec<&str> = checks::TARGETS.iter().map(|(n, _)| *n).collect();
    for sub in ["seeds", "regressions"] {
        for dir in std::fs::read_dir(fuzz_dir().join(sub)).into_iter().flatten() {
            let dir = dir.expect("directory entry").path();
            let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            assert!(names.contains(&name.as_str()), "{} is not a fuzz target's folder", dir.display());
        }
    }
}

#[test]
fn checks_catch_a_broken_property() {
    // The checks must be able to fail: a comparison that is not antisymmetric is caught.
    let broken = std::panic::catch_unwind(|| checks::check_total_preorder(&[1, 2], |_, _| std::cmp::Ordering::Less));
    assert!(broken.is_err());
}
