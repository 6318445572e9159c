//! Energy from the machine's power counters: Linux powercap (Intel/AMD RAPL).
//!
//! Each zone's `energy_uj` is a cumulative counter in microjoules that wraps
//! at `max_energy_range_uj`; [`Meter::sample`] accumulates the increments,
//! so any number of wraps between samples taken at least once per wrap
//! period (minutes) is handled. Zones counted: the top-level packages and
//! their `dram` subzones (the package domain excludes DRAM); `core` and
//! `uncore` lie inside a package and `psys` overlaps it, so they are not
//! added (psys is used alone when it is the only zone). Where no counter can
//! be read (no powercap, as in most VMs, or counters readable by root only)
//! the result is [`Probe::NotMeasured`] with the reason: the report then says
//! "energy: not measured" and gives no number. Nothing here estimates.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// One counter.
#[derive(Clone, Debug, Serialize)]
pub struct Zone {
    /// The zone's directory name, e.g. `intel-rapl:0` or `intel-rapl:0:2`.
    pub id: String,
    /// Its `name` file, e.g. `package-0` or `dram`.
    pub name: String,
    #[serde(skip)]
    energy_file: PathBuf,
    /// Counter range in microjoules (wraps to 0 past it).
    pub max_energy_range_uj: u64,
}

/// What the machine offers.
#[derive(Clone, Debug)]
pub enum Probe {
    /// Counters that can be read, summed as described in the module doc.
    Available(Vec<Zone>),
    /// No usable counter, and why.
    NotMeasured(String),
}

/// Looks for readable counters under `root` (normally /sys/class/powercap).
pub fn probe(root: &Path) -> Probe {
    let entries = match fs::read_dir(root) {
        Ok(e) => e,
        Err(e) => {
            return Probe::NotMeasured(format!(
                "no power counter: {} cannot be read ({}); no RAPL exposed, as in most VMs",
                root.display(),
                e.kind()
            ))
        }
    };
    let mut all = Vec::new();
    for entry in entries.flatten() {
        let id = entry.file_name().to_string_lossy().into_owned();
        if !(id.starts_with("intel-rapl:") || id.starts_with("amd-rapl:")) {
            continue;
        }
        let dir = entry.path();
        let name = fs::read_to_string(dir.join("name")).map(|s| s.trim().to_string()).unwrap_or_default();
        let max = read_u64(&dir.join("max_energy_range_uj")).unwrap_or(0);
        all.push(Zone { id, name, energy_file: dir.join("energy_uj"), max_energy_range_uj: max });
    }
    all.sort_by(|a, b| a.id.cmp(&b.id));
    if all.is_empty() {
        return Probe::NotMeasured(format!("no power counter: no RAPL zone under {}", root.display()));
    }
    let depth = |z: &Zone| z.id.matches(':').count();
    let mut chosen: Vec<Zone> =
        all.iter().filter(|z| (depth(z) == 1 && z.name != "psys") || (depth(z) == 2 && z.name == "dram")).cloned().collect();
    if chosen.is_empty() {
        chosen = all.iter().filter(|z| z.name == "psys").cloned().collect();
    }
    if chosen.is_empty() {
        return Probe::NotMeasured(format!("no power counter: no package zone under {}", root.display()));
    }
    for z in &chosen {
        if let Err(e) = fs::read_to_string(&z.energy_file) {
            let why = if e.kind() == std::io::ErrorKind::PermissionDenied {
                "permission denied; since Linux 5.10 energy_uj is readable by root only".to_string()
            } else {
                e.to_string()
            };
            return Probe::NotMeasured(format!("power counter {} not readable: {why}", z.energy_file.display()));
        }
    }
    Probe::Available(chosen)
}

fn read_u64(path: &Path) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Accumulates energy over an interval from repeated samples.
#[derive(Debug)]
pub struct Meter {
    zones: Vec<Zone>,
    last: Vec<Option<u64>>,
    total_uj: u128,
    /// Set when a counter could not be read in the middle of a measurement.
    pub failed: Option<String>,
}

impl Meter {
    /// A meter on `zones`, taking its first reading now.
    pub fn start(zones: Vec<Zone>) -> Meter {
        let n = zones.len();
        let mut m = Meter { zones, last: vec![None; n], total_uj: 0, failed: None };
        m.sample();
        m
    }

    /// Reads every counter and adds the increments since the last reading.
    pub fn sample(&mut self) {
        for (i, z) in self.zones.iter().enumerate() {
            match read_u64(&z.energy_file) {
                Some(now) => {
                    if let Some(prev) = self.last[i] {
                        self.total_uj += u128::from(delta(prev, now, z.max_energy_range_uj));
                    }
                    self.last[i] = Some(now);
                }
                None => {
                    self.failed.get_or_insert_with(|| format!("{} stopped being readable", z.energy_file.display()));
                }
            }
        }
    }

    /// Joules since the start, or `None` if a counter failed.
    pub fn joules(&self) -> Option<f64> {
        if self.failed.is_some() {
            return None;
        }
        Some(self.total_uj as f64 / 1e6)
    }
}

/// Increment of a counter that wraps to 0 past `max` (inclusive range 0..=max).
pub fn delta(prev: u64, now: u64, max: u64) -> u64 {
    if now >= prev {
        now - prev
    } else {
        max.saturating_sub(prev).saturating_add(now).saturating_add(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraparound() {
        assert_eq!(delta(10, 25, 100), 15);
        assert_eq!(delta(90, 5, 99), 15);
    }

    #[test]
    fn missing_root_is_not_measured() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(matches!(probe(&dir.path().join("absent")), Probe::NotMeasured(_)));
        assert!(matches!(probe(dir.path()), Probe::NotMeasured(_)));
    }

    #[test]
    fn fake_zones_sum_package_and_dram() {
        let dir = tempfile::tempdir().expect("tempdir");
        let zone = |id: &str, name: &str, uj: u64| {
            let d = dir.path().join(id);
            fs::create_dir_all(&d).expect("mkdir");
            fs::write(d.join("name"), name).expect("write");
            fs::write(d.join("energy_uj"), uj.to_string()).expect("write");
            fs::write(d.join("max_energy_range_uj"), "1000000").expect("write");
        };
        zone("intel-rapl:0", "package-0", 999_000);
        zone("intel-rapl:0:0", "core", 5);
        zone("intel-rapl:0:1", "dram", 100);
        zone("intel-rapl:1", "psys", 7);
        let Probe::Available(zones) = probe(dir.path()) else { panic!("zones expected") };
        let names: Vec<&str> = zones.iter().map(|z| z.name.as_str()).collect();
        assert_eq!(names, ["package-0", "dram"]);
        let mut m = Meter::start(zones);
        zone("intel-rapl:0", "package-0", 1_000); // wrapped: +2,001 uJ
        zone("intel-rapl:0:1", "dram", 600); // +500 uJ
        m.sample();
        assert_eq!(m.joules(), Some(2501e-6));
    }
}
