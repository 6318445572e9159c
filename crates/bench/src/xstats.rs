//! xsort's own statistics (`--stats-json`), as this harness reads and
//! re-reports them. Every field has a default so an older or newer xsort,
//! or a stand-in sort that writes none, still yields a report.

use serde::{Deserialize, Serialize};

/// One I/O phase.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Phase {
    pub name: String,
    pub elapsed_s: f64,
    pub bytes: u64,
    pub mb_per_s: f64,
    pub transfers: u64,
    pub transfer_size: u64,
    pub cpu_s: f64,
    pub cpu_utilization: f64,
    pub io_mode: String,
}

/// One progress sample (every 100 ms and at phase boundaries).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Sample {
    pub t_s: f64,
    pub input_bytes: u64,
    pub temp_write_bytes: u64,
    pub temp_read_bytes: u64,
    pub output_bytes: u64,
    pub cpu_s: f64,
}

/// The stats file.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct XsortStats {
    pub version: String,
    pub records: u64,
    pub bytes: u64,
    pub record_size: u64,
    pub key: String,
    pub method: String,
    pub threads: u64,
    pub passes: u64,
    pub runs: u64,
    pub merge_levels: u64,
    pub merge_fan_in: u64,
    pub memory_budget_bytes: u64,
    pub memory_planned_bytes: u64,
    pub peak_rss_bytes: u64,
    pub elapsed_s: f64,
    pub cpu_user_s: f64,
    pub cpu_system_s: f64,
    pub cpu_utilization: f64,
    pub temp_dirs: Vec<String>,
    pub phases: Vec<Phase>,
    pub samples: Vec<Sample>,
}

impl XsortStats {
    /// Distinct "mode transfer_size" pairs over the phases, e.g. "direct 8388608".
    pub fn io_modes(&self) -> Vec<String> {
        let mut v: Vec<String> = self.phases.iter().map(|p| format!("{} {}", p.io_mode, p.transfer_size)).collect();
        v.sort();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerant_of_missing_and_extra_fields() {
        let s: XsortStats = serde_json::from_str(r#"{"records": 5, "new_field": 1, "phases": [{"name": "input read"}]}"#).expect("parse");
        assert_eq!(s.records, 5);
        assert_eq!(s.phases[0].name, "input read");
        assert!(s.samples.is_empty());
    }
}
