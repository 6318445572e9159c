//! README.md's Rust example is `examples/library.rs`, word for word, and it runs.

use std::path::PathBuf;

/// The example's body after its module documentation.
fn example_source() -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/library.rs")).unwrap();
    text.lines().skip_while(|l| l.starts_with("//!") || l.is_empty()).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_readme_shows_the_example() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let example = example_source();
    assert!(readme.contains(&example), "README.md's ```rust block must be crates/core/examples/library.rs without its //! lines");
}

#[test]
fn the_example_runs() {
    // cargo test builds the examples beside the test binaries' directory.
    let exe = std::env::current_exe().unwrap();
    let examples: PathBuf = exe.parent().unwrap().parent().unwrap().join("examples/library");
    let out = std::process::Command::new(&examples).output().unwrap_or_else(|e| panic!("{}: {e}", examples.display()));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("records"));
}
