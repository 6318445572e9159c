//! `--stats` and `--stats-json`: each rank's phases (input, exchange, local sort, output), gathered
//! on rank 0, which prints them with the whole job's figures.

use crate::comm::Comm;
use crate::exchange::ExchangeStats;
use serde::Serialize;
use serde_json::{json, Value};
use std::fmt::Write;
use xsort_core::SortStats;

/// One rank's figures.
#[derive(Serialize)]
pub struct RankStats {
    pub rank: usize,
    pub host: String,
    /// Seconds from start to commit.
    pub elapsed_s: f64,
    /// Seconds of CPU the rank used, user and system, all its threads (to the commit).
    pub cpu_s: f64,
    /// Seconds sampling the share and choosing splitters.
    pub sample_s: f64,
    pub exchange: ExchangeStats,
    /// Bytes this rank sorted (what it received, its own piece included).
    pub sorted_bytes: u64,
    /// Bytes it wrote, and where in the output.
    pub output_bytes: u64,
    pub output_offset: u64,
    /// Bytes of its compressed stream (a compressed output), whose offset `output_offset` is.
    pub output_compressed_bytes: Option<u64>,
    /// Seconds pulling the sorted range from the local sort and writing it (in place: the rounds,
    /// which exchange, sort and write together).
    pub output_s: f64,
    /// Of `output_s`, seconds waiting for the local sort's output (the rest is writing); in place,
    /// seconds gathering the sorted records into the writer.
    pub output_pull_s: f64,
    /// The local sort's own statistics (the engine's path).
    pub sort: Option<SortStats>,
    /// Seconds making and sorting the range's entries, sub-range by sub-range (the in-place path
    /// for records, which has no engine).
    pub local_sort_s: Option<f64>,
}

/// Gathers every rank's figures; on rank 0, the whole job's report as JSON.
pub fn gather(comm: &Comm, mine: &RankStats) -> Option<Value> {
    let text = serde_json::to_vec(mine).unwrap_or_default();
    let (all, counts) = comm.all_gather_bytes(&text);
    if comm.rank != 0 {
        return None;
    }
    let mut ranks = Vec::new();
    let mut at = 0;
    for c in counts {
        ranks.push(serde_json::from_slice::<Value>(&all[at..at + c]).unwrap_or(Value::Null));
        at += c;
    }
    let f = |v: &Value, path: &[&str]| path.iter().fold(v, |v, k| &v[*k]).as_f64().unwrap_or(0.0);
    let sum = |path: &[&str]| ranks.iter().map(|r| f(r, path)).sum::<f64>();
    let max = |path: &[&str]| ranks.iter().map(|r| f(r, path)).fold(0.0, f64::max);
    // Byte counts are integers in the JSON, as in each rank's figures.
    let bytes = |path: &[&str]| ranks.iter().map(|r| path.iter().fold(r, |v, k| &v[*k]).as_u64().unwrap_or(0)).sum::<u64>();
    let mut hosts: Vec<&str> = ranks.iter().filter_map(|r| r["host"].as_str()).collect();
    hosts.sort_unstable();
    hosts.dedup();
    let n = ranks.len().max(1) as f64;
    let wait = max(&["exchange", "wait_s"]);
    let moved = bytes(&["exchange", "sent_bytes"]);
    let overall = json!({
        "ranks": ranks.len(),
        "hosts": hosts,
        "elapsed_s": max(&["elapsed_s"]),
        "input_bytes": bytes(&["exchange", "input_bytes"]),
        "output_bytes": bytes(&["output_bytes"]),
        "exchange_sent_bytes": moved,
        "exchange_wait_s_max": wait,
        "exchange_mb_per_s": if wait > 0.0 { moved as f64 / 1e6 / wait } else { 0.0 },
        "largest_share_over_mean": if sum(&["sorted_bytes"]) > 0.0 { max(&["sorted_bytes"]) / (sum(&["sorted_bytes"]) / n) } else { 1.0 },
    });
    Some(json!({ "version": env!("CARGO_PKG_VERSION"), "overall": overall, "per_rank": ranks }))
}

/// The report for people: a line per rank, then the job's.
pub fn render(report: &Value) -> String {
    let mut s = String::new();
    let o = &report["overall"];
    let g = |v: &Value, k: &str| v[k].as_f64().unwrap_or(0.0);
    let _ = writeln!(
        s,
        "xsort-mpi: {} ranks on {} host(s) in {:.3} s",
        o["ranks"],
        o["hosts"].as_array().map_or(0, |h| h.len()),
        g(o, "elapsed_s")
    );
    let _ = writeln!(
        s,
        "rank  input MB  read s  sent MB  recv MB  wait s  exch MB/s  sorted MB  sort s  output MB  write s  (pull s)  total s"
    );
    for r in report["per_rank"].as_array().into_iter().flatten() {
        let x = &r["exchange"];
        let sort_s = r["sort"]["elapsed_s"].as_f64().or(r["local_sort_s"].as_f64()).unwrap_or(0.0);
        let _ = writeln!(
            s,
            "{:>4}  {:>8.1}  {:>6.3}  {:>7.1}  {:>7.1}  {:>6.3}  {:>9.0}  {:>9.1}  {:>6.3}  {:>9.1}  {:>7.3}  {:>8.3}  {:>7.3}",
            r["rank"],
            g(x, "input_bytes") / 1e6,
            g(x, "input_s"),
            g(x, "sent_bytes") / 1e6,
            g(x, "received_bytes") / 1e6,
            g(x, "wait_s"),
            g(x, "mb_per_s"),
            g(r, "sorted_bytes") / 1e6,
            sort_s,
            g(r, "output_bytes") / 1e6,
            g(r, "output_s"),
            g(r, "output_pull_s"),
            g(r, "elapsed_s"),
        );
    }
    let _ = writeln!(
        s,
        "overall: input {:.1} MB, exchanged {:.1} MB ({:.0} MB/s over the longest wait), output {:.1} MB, largest share {:.3}x the mean",
        g(o, "input_bytes") / 1e6,
        g(o, "exchange_sent_bytes") / 1e6,
        g(o, "exchange_mb_per_s"),
        g(o, "output_bytes") / 1e6,
        g(o, "largest_share_over_mean"),
    );
    s
}
