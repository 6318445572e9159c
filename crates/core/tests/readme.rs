//! The Rust examples of the docs are programs in `examples/`, shown word for word, and they run:
//! README.md's is `examples/quickstart.rs`, docs/LIBRARY.md's is `examples/library.rs`.

use std::path::PathBuf;

/// The example's body after its module documentation.
fn example_source(name: &str) -> String {
    let text = std::fs::read_to_string(format!("{}/examples/{name}.rs", env!("CARGO_MANIFEST_DIR"))).unwrap();
    text.lines().skip_while(|l| l.starts_with("//!") || l.is_empty()).collect::<Vec<_>>().join("\n")
}

/// A document of the repository, by its path from the root.
fn doc(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Runs the built example and returns what it printed.
fn run_example(name: &str) -> String {
    // cargo test builds the examples beside the test binaries' directory.
    let exe = std::env::current_exe().unwrap();
    let path: PathBuf = exe.parent().unwrap().parent().unwrap().join("examples").join(name);
    let out = std::process::Command::new(&path).output().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_readme_shows_the_quickstart_example() {
    let example = example_source("quickstart");
    assert!(
        doc("README.md").contains(&format!("```rust\n{example}\n```")),
        "README.md's ```rust block must be examples/quickstart.rs without its //! lines"
    );
}

#[test]
fn the_library_doc_shows_the_library_example() {
    let example = example_source("library");
    assert!(
        doc("docs/LIBRARY.md").contains(&format!("```rust\n{example}\n```")),
        "docs/LIBRARY.md's ```rust block must be examples/library.rs without its //! lines"
    );
}

#[test]
fn the_examples_run() {
    assert!(run_example("quickstart").contains("sorted 1000 records"));
    assert!(run_example("library").contains("records"));
}
