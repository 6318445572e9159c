//! Misuse of the C API gets Nsort's codes and one-line messages, never a crash: tests/c/misuse.c
//! checks each case (exact codes) through xsort_* and nsort_* (with Nsort's error callback).

mod support;

use support::*;

fn misuse(link: Link, names: Names) {
    let dir = tempdir();
    let exe = compile("tests/c/misuse.c", dir.path(), link, names);
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let out = run_ok(&exe, &[files.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("all checks passed"));
    // The -out_file sort wrote its output; nothing else was left beside the input.
    assert_eq!(entries(&files), ["in", "out"]);
    assert_eq!(std::fs::read(files.join("out")).unwrap(), [[b'y'; 100], [b'z'; 100]].concat());
}

#[test]
fn xsort_names() {
    misuse(Link::Dynamic, Names::Xsort);
}

#[test]
fn nsort_names() {
    misuse(Link::Static, Names::Nsort);
}
