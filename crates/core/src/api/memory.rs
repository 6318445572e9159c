//! Sorting fixed-size records held in memory: the entries of the records (key prefix and offset)
//! are extracted and sorted as a file sort's would be, and the records gathered in their order,
//! on the sort's own worker threads. The memory budget does not apply: the records are already in
//! memory, and the sort adds 32 bytes per record (the entries and the kernel's scratch), plus a
//! copy of the records for [`Sort::sort_slice`].

use super::{Format, Sort};
use crate::entry::{self, EntryLayout};
use crate::error::{Result, SortError};
use crate::key::KeySpec;
use rayon::prelude::*;

/// The sorted entries of `data`'s records, and how to read them.
struct Sorted {
    layout: EntryLayout,
    entries: Vec<u128>,
    record_size: usize,
}

impl Sort {
    /// Sorts the fixed-size records of `records` in place (stably: records with equal keys keep
    /// their order). A length that is not a whole number of records is an error.
    pub fn sort_slice(&self, records: &mut [u8]) -> Result<()> {
        let sorted = self.in_memory(records)?;
        let mut out = vec![0u8; records.len()];
        self.on_pool(|| {
            sorted.gather(records, &mut out);
            records.par_chunks_mut(1 << 20).zip(out.par_chunks(1 << 20)).for_each(|(d, s)| d.copy_from_slice(s));
        })
    }

    /// Writes the fixed-size records of `records`, sorted, into `out` (of the same length).
    pub fn sort_into(&self, records: &[u8], out: &mut [u8]) -> Result<()> {
        if out.len() != records.len() {
            return Err(SortError::Usage(format!("the output holds {} bytes, the records {}", out.len(), records.len())));
        }
        let sorted = self.in_memory(records)?;
        self.on_pool(|| sorted.gather(records, out))
    }

    /// The order of the fixed-size records of `records`: the index (from 0) of each record of the
    /// sorted sequence, as a stable argsort gives it.
    pub fn sorted_indices(&self, records: &[u8]) -> Result<Vec<u64>> {
        let sorted = self.in_memory(records)?;
        let (layout, r) = (sorted.layout, sorted.record_size as u64);
        self.on_pool(|| sorted.entries.par_iter().map(|&e| layout.offset(e) as u64 / r).collect())
    }

    /// Runs `f` on the sort's worker threads.
    fn on_pool<T: Send>(&self, f: impl FnOnce() -> T + Send) -> Result<T> {
        let threads = self.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        crate::pool::run_in_pool(threads, || Ok(f()))
    }

    /// Extracts and sorts the entries of `data`'s records.
    fn in_memory(&self, data: &[u8]) -> Result<Sorted> {
        if let Some(refused) = &self.refused {
            return Err(SortError::Config(refused.clone()));
        }
        let Format::Records { record_size: r, key, folding, .. } = &self.format else {
            return Err(SortError::Usage("sorting in memory takes fixed-size records; lines are sorted with start() or run()".into()));
        };
        let r = *r;
        if r == 0 {
            return Err(SortError::Config("the record size must be at least 1 byte".into()));
        }
        if folding.is_active() {
            return Err(SortError::Usage("unique and summed records need a sort that can drop records: use start() or run()".into()));
        }
        if !data.len().is_multiple_of(r) {
            let left = data.len() % r;
            return Err(SortError::BadInput {
                path: "(records in memory)".into(),
                problem: format!("length {} is not a multiple of the record size {r} ({left} bytes left over)", data.len()),
            });
        }
        let key = KeySpec::new(key.clone()).resolve(r)?;
        let method = self.method;
        let sorted = self.on_pool(|| {
            let n = data.len() / r;
            let layout = EntryLayout::new(key.len(), data.len());
            let mut entries = vec![0u128; n];
            let mut scratch = vec![0u128; n];
            self.check_cancelled()?;
            entry::extract(&key, layout, data, 0, r, &mut entries);
            self.check_cancelled()?;
            entry::sort(method, &key, layout, r, data, &mut entries, &mut scratch);
            Ok(Sorted { layout, entries, record_size: r })
        })?;
        self.check_cancelled()?;
        sorted
    }

    /// [`SortError::Cancelled`] once the cancel flag is set.
    fn check_cancelled(&self) -> Result<()> {
        match &self.cancel {
            Some(c) if c.load(std::sync::atomic::Ordering::Relaxed) => Err(SortError::Cancelled),
            _ => Ok(()),
        }
    }
}

impl Sorted {
    fn gather(&self, data: &[u8], out: &mut [u8]) {
        entry::gather(self.layout, &self.entries, data, self.record_size, 0, out);
    }
}
