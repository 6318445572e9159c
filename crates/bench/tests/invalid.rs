//! Invalid runs are caught, reported loudly and excluded from the figures:
//! the harness is pointed (--xsort) at deliberately broken sorts.

mod common;

use common::{bench, script, xsort, ARGS};

fn broken(body: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = script(dir.path(), "broken-sort", &format!("{ARGS}\n{body}"));
    let s = p.to_str().expect("utf-8").to_string();
    (dir, s)
}

#[test]
fn unsorted_copy_is_invalid_and_excluded() {
    let (_d, sort) = broken(r#"cp "$in" "$out""#);
    let b = bench(&["datamation", "--runs", "2", "--records", "1000", "--xsort", &sort, "--powercap", "/nonexistent"]);
    assert_eq!(b.code(), Some(1), "invalid runs give exit status 1; stderr: {}", b.stderr());
    assert!(b.stderr().contains("INVALID RUN 1"), "loud on the terminal: {}", b.stderr());
    let v = b.json();
    let f = &v["figures"];
    assert_eq!((f["valid_runs"].as_u64(), f["invalid_runs"].as_u64()), (Some(0), Some(2)));
    assert!(f["wall_s"].is_null() && f["ratio_to_floor"].is_null(), "no figure from invalid runs");
    let run = &v["runs"][0];
    assert_eq!(run["valid"], false);
    assert!(run["validation"]["unordered"].as_u64().is_some_and(|n| n > 0));
    assert!(run["problems"][0].as_str().is_some_and(|p| p.contains("out of order")));
    assert!(v["warnings"][0].as_str().is_some_and(|w| w.contains("INVALID")));
    assert!(b.read("report.html").contains("class=\"warn\""));
    assert!(b.read("report.md").contains("INVALID"));
    assert!(b.stdout().contains("WARNING"));
}

#[test]
fn corrupted_byte_fails_the_checksum() {
    let x = xsort();
    // A real sort, then one payload byte (not the key) changed: order holds, the checksum does not.
    let (_d, sort) =
        broken(&format!("{} \"$@\" || exit 2\nprintf 'Z' | dd of=\"$out\" bs=1 seek=50 conv=notrunc 2>/dev/null", x.display()));
    let b = bench(&["throughput", "--runs", "2", "--records", "1000", "--xsort", &sort, "--powercap", "/nonexistent"]);
    assert_eq!(b.code(), Some(1), "stderr: {}", b.stderr());
    let v = b.json();
    let run = &v["runs"][1];
    assert_eq!(run["valid"], false);
    assert_eq!(run["validation"]["unordered"], 0);
    assert!(run["problems"].to_string().contains("checksum"), "{}", run["problems"]);
    assert_eq!(v["figures"]["valid_runs"], 0);
}

#[test]
fn lost_record_and_failed_exit_are_invalid() {
    let x = xsort();
    // Run 1: a record dropped. Run 2 onwards: a correct sort that exits 3. The run counter lives in
    // the parent of the runs' output directories; calls without an output (--version) do not count.
    let (_d, sort) = broken(&format!(
        "{} \"$@\" || exit 2\n[ -n \"$out\" ] || exit 0\nn=$(cat \"$(dirname \"$out\")/../count\" 2>/dev/null || echo 0)\n\
         echo $((n+1)) > \"$(dirname \"$out\")/../count\"\n\
         if [ \"$n\" = 0 ]; then truncate -s -100 \"$out\"; else exit 3; fi",
        x.display()
    ));
    let b = bench(&["datamation", "--runs", "2", "--records", "1000", "--xsort", &sort, "--powercap", "/nonexistent"]);
    assert_eq!(b.code(), Some(1), "stderr: {}", b.stderr());
    let v = b.json();
    let p1 = v["runs"][0]["problems"].to_string();
    assert!(p1.contains("999 records out, 1000 in"), "{p1}");
    let p2 = v["runs"][1]["problems"].to_string();
    assert!(p2.contains("exited with status 3"), "{p2}");
    assert_eq!(v["figures"]["invalid_runs"], 2);
}
