//! `--ranks N`: the runs launch `mpirun -np N xsort-mpi` (the real one, next to xsort-bench), the
//! outputs are validated as on one machine, and the report says which ranks ran on which hosts and
//! over what interconnect. Without mpirun, `--ranks` is a clear error.

mod common;

use std::path::Path;

use common::{bench_with, BENCH};
use serde_json::Value;

/// mpirun refuses root without these (the tests run as root in CI).
const AS_ROOT: [(&str, &str); 2] = [("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")];

fn xsort_mpi() {
    let p = Path::new(BENCH).with_file_name("xsort-mpi");
    assert!(p.is_file(), "{} is missing: build it first (cargo build --release -p xsort-mpi)", p.display());
}

#[test]
fn datamation_on_two_ranks_states_ranks_hosts_and_interconnect() {
    xsort_mpi();
    let b = bench_with(&["datamation", "--ranks", "2", "--runs", "2", "--records", "2000", "--powercap", "/nonexistent"], &AS_ROOT);
    assert_eq!(b.code(), Some(0), "stderr: {}", b.stderr());
    let v = b.json();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname").trim().to_owned();
    assert_eq!(v["settings"]["ranks"], 2);
    assert!(v["settings"]["xsort"].as_str().is_some_and(|x| x.ends_with("/xsort-mpi")));
    let c = &v["context"]["cluster"];
    assert_eq!(c["ranks"], 2);
    assert_eq!(c["hosts"], serde_json::json!([{"name": host, "ranks": [0, 1]}]));
    assert!(c["pml"].as_str().is_some(), "{c}");
    // Two ranks on one machine talk through shared memory (vader in Open MPI 4, sm in 5).
    assert!(c["btls"].as_array().is_some_and(|b| b.iter().any(|x| x == "vader" || x == "sm")), "{c}");
    for run in v["runs"].as_array().expect("runs") {
        assert_eq!(run["valid"], true, "{run}");
        assert_eq!(run["validation"]["records"], 2000);
        assert_eq!(run["validation"]["checksum"], run["input"]["checksum"]);
        let cmd = run["command"].as_str().expect("command");
        assert!(cmd.contains("mpirun --oversubscribe -np 2 ") && cmd.contains("/xsort-mpi --record-size=100"), "{cmd}");
        assert_eq!(run["cluster"]["overall"]["ranks"], 2);
        let hosts: Vec<&Value> = run["cluster"]["per_rank"].as_array().expect("per_rank").iter().map(|r| &r["host"]).collect();
        assert_eq!(hosts, [&Value::from(host.clone()), &Value::from(host.clone())]);
        assert!(run["xsort_stats"].is_null());
    }
    assert_eq!(v["warnings"], serde_json::json!([]), "no warning about missing statistics");
    let answer = v["answers"][0]["answer"].as_str().expect("answer");
    assert_eq!(v["answers"][0]["question"], "Is this a cluster?");
    assert!(answer.starts_with("Yes: 2 ranks of xsort-mpi per run, launched by "), "{answer}");
    assert!(answer.contains(&format!("on 1 host: {host} (ranks 0, 1)")) && answer.contains("(shared memory)"), "{answer}");
    assert!(b.read("report.md").contains(&format!("on 1 host: {host} (ranks 0, 1)")));
}

#[test]
fn ranks_without_mpirun_or_with_xsort_only_options_are_clear_errors() {
    let empty = tempfile::tempdir().expect("tempdir");
    let path = empty.path().to_str().expect("utf-8 path");
    let b = bench_with(&["datamation", "--ranks", "2"], &[("PATH", path)]);
    assert_eq!(b.code(), Some(2));
    assert_eq!(
        b.stderr().trim(),
        "xsort-bench: --ranks needs Open MPI's mpirun on PATH, and there is none (install openmpi-bin, or run without --ranks)"
    );
    for (args, says) in [
        (&["datamation", "--ranks", "0"][..], "--ranks must be at least 1"),
        (&["datamation", "--ranks", "2", "--buffered"], "--buffered and --transfer-size are xsort's options"),
        (&["datamation", "--mpirun-arg=--hostfile"], "--mpirun-arg applies with --ranks only"),
    ] {
        let b = bench_with(args, &[]);
        assert_eq!(b.code(), Some(2), "{args:?}");
        assert!(b.stderr().contains(says), "{args:?}: {}", b.stderr());
    }
}
