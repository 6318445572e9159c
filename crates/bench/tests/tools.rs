//! `xsort-bench floor` and `xsort-bench evict`, the measurements the bench scripts (bench/*.sh)
//! take from the harness instead of redoing them.

use std::process::Command;

const BENCH: &str = env!("CARGO_BIN_EXE_xsort-bench");

#[test]
fn floor_measures_a_file_and_leaves_no_scratch() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("in");
    std::fs::write(&input, vec![42u8; 3 << 20]).expect("write");
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).expect("mkdir");
    let out = Command::new(BENCH)
        .args(["floor", "--json", "--transfer", "64KiB", "--inflight", "2", "--scratch"])
        .arg(&scratch)
        .arg(&input)
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["bytes"], 3 << 20);
    assert_eq!((v["transfer_size"].as_u64(), v["inflight"].as_u64()), (Some(65536), Some(2)));
    let (r, w, t) = (v["read_s"].as_f64().unwrap(), v["write_s"].as_f64().unwrap(), v["total_s"].as_f64().unwrap());
    assert!(r > 0.0 && w > 0.0 && (t - r - w).abs() < 1e-9, "{v}");
    assert_eq!(std::fs::read_dir(&scratch).expect("ls").count(), 0, "the scratch file is removed");
    // Text, with the scratch file beside the input by default.
    let out = Command::new(BENCH).arg("floor").arg(&input).output().expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.starts_with(&format!("floor of {}: 3145728 bytes; read ", input.display())), "{text}");
    assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 2, "only in and scratch/ remain");
}

#[test]
fn floor_and_evict_name_a_missing_file() {
    for tool in ["floor", "evict"] {
        let out = Command::new(BENCH).args([tool, "/nonexistent/xsort-bench-input"]).output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{tool}: {err}");
        assert!(err.starts_with("xsort-bench: ") && err.contains("/nonexistent/xsort-bench-input"), "{tool}: {err}");
    }
}

#[test]
fn evict_drops_a_file_from_the_page_cache() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("f");
    std::fs::write(&f, vec![1u8; 1 << 20]).expect("write");
    let out = Command::new(BENCH).arg("evict").arg(&f).output().expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&f).expect("read back").len(), 1 << 20, "evicting changes nothing in the file");
}
