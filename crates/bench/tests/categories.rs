//! Small runs of every category with the real xsort, checking the report
//! against its schema and its plots.

mod common;

use common::{bench, xsort};
use serde_json::Value;

fn no_power() -> [&'static str; 2] {
    ["--powercap", "/nonexistent/powercap"]
}

fn figures(v: &Value) -> &Value {
    &v["figures"]
}

#[test]
fn datamation_small() {
    let _ = xsort();
    let b = bench(&["datamation", "--runs", "2", "--records", "1000", "--note", "test run", "--powercap", "/nonexistent/powercap"]);
    assert_eq!(b.code(), Some(0), "stderr: {}", b.stderr());
    let v = b.json();
    assert_eq!(v["category"], "datamation");
    assert_eq!(v["note"], "test run");
    let f = figures(&v);
    assert_eq!(f["valid_runs"], 2);
    assert_eq!(f["wall_s"]["n"], 2);
    assert!(f["ratio_to_floor"].as_f64().is_some_and(|r| r > 0.0));
    assert!(f["target"]["ratio_limit"] == 1.5);
    assert_eq!(v["answers"].as_array().map(Vec::len), Some(8));
    for run in v["runs"].as_array().expect("runs") {
        assert_eq!(run["valid"], true);
        assert_eq!(run["validation"]["unordered"], 0);
        assert_eq!(run["validation"]["checksum"], run["input"]["checksum"]);
        assert!(run["command"].as_str().is_some_and(|c| c.contains("--sync") && c.contains("--stats-json")));
        assert!(run["xsort_stats"]["samples"].as_array().is_some_and(|s| !s.is_empty()));
    }
    // The HTML is self-contained and carries the four plots of a fixed-size category.
    let html = b.read("report.html");
    for id in ["plot-run-times", "plot-phases", "plot-timeline", "plot-floor"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id} missing");
    }
    assert!(html.matches("<svg").count() >= 4);
    assert!(!html.contains("<script"), "no scripts");
    assert!(!html.contains("src=\"http"), "nothing fetched");
    let md = b.read("report.md");
    assert!(md.contains("Is this a cluster?") && md.contains("Was anything saturated"));
    assert!(b.stdout().contains("datamation: 2 of 2 measured runs valid"));
}

#[test]
fn throughput_ascii_skewed_warm_unsynced() {
    let _ = xsort();
    let mut args = vec![
        "throughput",
        "--runs",
        "2",
        "--records",
        "2000",
        "--format",
        "ascii",
        "-s",
        "--cache",
        "warm",
        "--sync",
        "off",
        "--threads",
        "1",
        "-S",
        "64M",
    ];
    args.extend(no_power());
    let b = bench(&args);
    assert_eq!(b.code(), Some(0), "stderr: {}", b.stderr());
    let v = b.json();
    let s = &v["settings"];
    assert_eq!((s["format"].as_str(), s["distribution"].as_str(), s["cache"].as_str()), (Some("ascii"), Some("skewed"), Some("warm")));
    assert_eq!(s["sync"], false);
    assert!(figures(&v)["gb_per_s"].as_f64().is_some_and(|g| g > 0.0));
    assert!(figures(&v)["tb_per_min"].as_f64().is_some());
    for run in v["runs"].as_array().expect("runs") {
        let cmd = run["command"].as_str().expect("command");
        assert!(!cmd.contains("--sync") && cmd.contains("--parallel 1") && cmd.contains("-S 64M"), "{cmd}");
        assert!(run["input_resident_fraction"].as_f64().is_some_and(|r| r > 0.9), "warm input: {}", run["input_resident_fraction"]);
        assert_eq!(run["xsort_stats"]["threads"], 1);
    }
}

#[test]
fn joulesort_without_power_counter_is_not_measured() {
    let _ = xsort();
    let empty = tempfile::tempdir().expect("tempdir");
    let root = empty.path().to_str().expect("utf-8 path");
    let b = bench(&["joulesort", "--runs", "1", "--records", "1000", "--powercap", root]);
    assert_eq!(b.code(), Some(0), "stderr: {}", b.stderr());
    let v = b.json();
    assert_eq!(v["settings"]["format"], "ascii", "JouleSort below 100 TB uses gensort -a data");
    let e = &figures(&v)["energy"];
    assert_eq!(e["measured"], false);
    assert!(e["joules"].is_null() && e["records_per_joule"].is_null());
    assert!(e["text"].as_str().is_some_and(|t| t.starts_with("energy: not measured")));
    assert_eq!(v["context"]["energy"]["measured"], false);
    assert!(v["runs"][0]["machine"]["energy_j"].is_null());
    for f in ["report.md", "report.html"] {
        assert!(b.read(f).contains("energy: not measured"), "{f}");
        assert!(!b.read(f).contains("records per joule"), "{f} gives no number");
    }
    assert!(b.stdout().contains("energy: not measured"));
}

#[test]
fn minutesort_search_stops_at_the_cap() {
    let _ = xsort();
    let mut args = vec!["minutesort", "--runs", "1", "--records", "1000", "--max-bytes", "500K", "--limit-s", "5"];
    args.extend(no_power());
    let b = bench(&args);
    assert_eq!(b.code(), Some(0), "stderr: {}", b.stderr());
    let v = b.json();
    let se = &figures(&v)["search"];
    assert_eq!(se["limit_s"], 5.0);
    assert_eq!(se["cap_bytes"], 500_000);
    assert_eq!(se["hit_cap"], true);
    assert_eq!(se["result_bytes"], 500_000);
    assert!(se["steps"].as_array().is_some_and(|s| s.len() >= 2));
    // Probes do not count; the confirming run does.
    assert_eq!(figures(&v)["measured_runs"], 1);
    assert!(v["runs"].as_array().is_some_and(|r| r.iter().any(|x| x["purpose"] == "search")));
    assert!(b.read("report.html").contains("id=\"plot-search\""));
}

#[test]
fn pennysort_budget_from_price() {
    let _ = xsort();
    let mut args = vec!["pennysort", "--runs", "1", "--records", "1000", "--max-bytes", "300K", "--system-price", "1000000"];
    args.extend(no_power());
    let b = bench(&args);
    assert_eq!(b.code(), Some(0), "stderr: {}", b.stderr());
    let v = b.json();
    let p = &figures(&v)["price"];
    // 3 years of seconds / 10^8 cents.
    assert!((p["seconds_per_cent"].as_f64().expect("seconds") - 0.94608).abs() < 1e-9);
    assert!((figures(&v)["search"]["limit_s"].as_f64().expect("limit") - 0.94608).abs() < 1e-9);
    assert_eq!(figures(&v)["search"]["result_bytes"], 300_000);
    assert!(p["records_per_cent"].as_f64().is_some_and(|r| r > 0.0));
    assert_eq!(v["settings"]["format"], "ascii");
}

#[test]
fn bad_options_are_refused() {
    for (args, needle) in [
        (vec!["pennysort"], "--system-price"),
        (vec!["datamation", "--max-bytes", "1M"], "--max-bytes"),
        (vec!["throughput", "--records", "1.5"], "record count"),
        (vec!["datamation", "--runs", "0"], "--runs"),
    ] {
        let b = bench(&args);
        assert_eq!(b.code(), Some(2), "{args:?}");
        assert!(b.stderr().contains(needle), "{args:?}: {}", b.stderr());
    }
}

#[test]
fn minutesort_with_nothing_within_the_limit() {
    let x = xsort();
    let dir = tempfile::tempdir().expect("tempdir");
    // A correct sort that always takes longer than the limit.
    let slow = common::script(dir.path(), "slow-sort", &format!("{} \"$@\" || exit 2\nsleep 0.3", x.display()));
    let slow = slow.to_str().expect("utf-8");
    let b = bench(&["minutesort", "--runs", "1", "--records", "64", "--limit-s", "0.2", "--xsort", slow, "--powercap", "/nonexistent"]);
    assert_eq!(b.code(), Some(0), "every run was valid; stderr: {}", b.stderr());
    let v = b.json();
    let se = &figures(&v)["search"];
    assert!(se["result_bytes"].is_null() && se["result_records"].is_null());
    assert!(se["note"].as_str().is_some_and(|n| n.contains("no size tried")), "{}", se["note"]);
    // 64, 16, 4, 1 records: each a quarter of the last failure.
    let sizes: Vec<u64> = se["steps"].as_array().expect("steps").iter().filter_map(|s| s["records"].as_u64()).collect();
    assert_eq!(sizes, [64, 16, 4, 1]);
    assert_eq!(figures(&v)["measured_runs"], 0);
    assert!(figures(&v)["wall_s"].is_null());
    assert!(b.stdout().contains("no size confirmed"));
}
