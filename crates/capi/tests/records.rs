//! C programs release 10^6 gensort records to libxsort in odd chunk sizes and take them back in
//! odd buffer sizes (tests/c/records.c), through both names (xsort_* and nsort_*), linked
//! dynamically and statically, in memory and spilled under a small -memory; valsort then checks
//! the output's order, count and checksum against the input's, and the temp directory is empty.

mod support;

use support::*;

const RECORDS: u64 = 1_000_000;

/// Sorts RECORDS records with `statements` through records.c; returns the stats text.
fn sort_records(link: Link, names: Names, statements: &str, temp: Option<&std::path::Path>) -> String {
    let dir = tempdir();
    let exe = compile("tests/c/records.c", dir.path(), link, names);
    let input = dir.path().join("in");
    let summary = gensort(&input, RECORDS);
    let (output, stats) = (dir.path().join("out"), dir.path().join("stats"));
    run_ok(&exe, &[statements, "100", input.to_str().unwrap(), output.to_str().unwrap(), stats.to_str().unwrap()]);
    assert_sorted_copy(&summary, &output);
    let stats = std::fs::read_to_string(stats).unwrap();
    assert!(stats.contains(&format!("{RECORDS} of 100 bytes")), "the statistics do not count the records:\n{stats}");
    // Spilled under a small -memory (temp runs and a merge), or in one pass with a large one.
    assert_eq!(stats.contains("one pass in memory"), temp.is_none(), "{stats}");
    if let Some(temp) = temp {
        assert_eq!(entries(temp), Vec::<String>::new(), "temp files left in {}", temp.display());
    }
    stats
}

const GENSORT: &str = "-format=size:100 -field=name:key,size:10,offset:0,character -key=key";

#[test]
fn xsort_names_dynamic_in_memory() {
    let stats = sort_records(Link::Dynamic, Names::Xsort, &format!("{GENSORT} -memory=1g -processes=2"), None);
    // -processes=2 is honoured.
    assert!(stats.contains("with 2 threads"), "{stats}");
}

#[test]
fn nsort_names_static_in_memory() {
    sort_records(Link::Static, Names::Nsort, &format!("{GENSORT} -memory=1g"), None);
}

#[test]
fn nsort_names_dynamic_spilled() {
    let temp = tempdir();
    let statements = format!("{GENSORT} -memory=16m -temp={}", temp.path().display());
    sort_records(Link::Dynamic, Names::Nsort, &statements, Some(temp.path()));
}

#[test]
fn xsort_names_static_spilled() {
    let temp = tempdir();
    let statements = format!("-format=size:100 -key=position:1,size:10 -memory=16m -temp_file={}", temp.path().display());
    sort_records(Link::Static, Names::Xsort, &statements, Some(temp.path()));
}
