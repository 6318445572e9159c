//! Transfer counters, shared by the threads doing one kind of I/O (input, temp write, temp read,
//! output), from which the sorter reports per-phase bytes, transfers, sizes and elapsed time.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// The process-wide time origin all counters measure from.
pub fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn ns_since_epoch(t: Instant) -> u64 {
    t.saturating_duration_since(epoch()).as_nanos() as u64
}

/// Counters of one kind of transfer. Cheap enough to update once per transfer (MiBs each).
#[derive(Debug)]
pub struct IoCounters {
    bytes: AtomicU64,
    transfers: AtomicU64,
    busy_ns: AtomicU64,
    first_start_ns: AtomicU64,
    last_end_ns: AtomicU64,
    direct: AtomicBool,
    buffered: AtomicBool,
}

impl Default for IoCounters {
    fn default() -> Self {
        epoch();
        IoCounters {
            bytes: AtomicU64::new(0),
            transfers: AtomicU64::new(0),
            busy_ns: AtomicU64::new(0),
            first_start_ns: AtomicU64::new(u64::MAX),
            last_end_ns: AtomicU64::new(0),
            direct: AtomicBool::new(false),
            buffered: AtomicBool::new(false),
        }
    }
}

/// A snapshot of [`IoCounters`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IoSnapshot {
    /// Bytes moved.
    pub bytes: u64,
    /// Number of read or write calls.
    pub transfers: u64,
    /// Sum of the time spent inside transfers, over all threads (seconds).
    pub busy_s: f64,
    /// Seconds from the epoch to the start of the first transfer (None: no transfer).
    pub first_start_s: Option<f64>,
    /// Seconds from the epoch to the end of the last transfer.
    pub last_end_s: f64,
    /// Whether any transfer bypassed the page cache.
    pub direct: bool,
    /// Whether any transfer went through the page cache.
    pub buffered: bool,
}

impl IoCounters {
    /// Records one transfer of `bytes` that ran from `start` to now.
    pub fn record(&self, bytes: u64, start: Instant, direct: bool) {
        let end = Instant::now();
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.transfers.fetch_add(1, Ordering::Relaxed);
        self.busy_ns.fetch_add(end.duration_since(start).as_nanos() as u64, Ordering::Relaxed);
        self.first_start_ns.fetch_min(ns_since_epoch(start), Ordering::Relaxed);
        self.last_end_ns.fetch_max(ns_since_epoch(end), Ordering::Relaxed);
        if direct {
            self.direct.store(true, Ordering::Relaxed);
        } else {
            self.buffered.store(true, Ordering::Relaxed);
        }
    }

    /// Bytes moved so far (for progress).
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// The counters now.
    pub fn snapshot(&self) -> IoSnapshot {
        let first = self.first_start_ns.load(Ordering::Relaxed);
        IoSnapshot {
            bytes: self.bytes(),
            transfers: self.transfers.load(Ordering::Relaxed),
            busy_s: self.busy_ns.load(Ordering::Relaxed) as f64 * 1e-9,
            first_start_s: (first != u64::MAX).then_some(first as f64 * 1e-9),
            last_end_s: self.last_end_ns.load(Ordering::Relaxed) as f64 * 1e-9,
            direct: self.direct.load(Ordering::Relaxed),
            buffered: self.buffered.load(Ordering::Relaxed),
        }
    }
}
