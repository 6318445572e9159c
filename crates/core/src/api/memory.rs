//! Sorting fixed-size records held in memory: the entries of the records (key prefix and offset)
//! are extracted and sorted as a file sort's would be, and the records gathered in their order,
//! on the sort's own worker threads. The memory budget does not apply: the records are already in
//! memory, and the sort adds 32 bytes per record (the entries and the kernel's scratch), plus a
//! copy of the records for [`Sort::sort_slice`]; the scratch lies in the output instead when the
//! records are at least 16 bytes long (and the output is 16-byte aligned, or they are longer).

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
        let mut out = vec![0u8; records.len()];
        let sorted = self.in_memory(records, &mut out)?;
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
        let sorted = self.in_memory(records, out)?;
        self.on_pool(|| sorted.gather(records, out))
    }

    /// The order of the fixed-size records of `records`: the index (from 0) of each record of the
    /// sorted sequence, as a stable argsort gives it.
    pub fn sorted_indices(&self, records: &[u8]) -> Result<Vec<u64>> {
        let sorted = self.in_memory(records, &mut [])?;
        let (layout, r) = (sorted.layout, sorted.record_size as u64);
        self.on_pool(|| sorted.entries.par_iter().map(|&e| layout.offset(e) as u64 / r).collect())
    }

    /// Runs `f` on the sort's worker threads.
    fn on_pool<T: Send>(&self, f: impl FnOnce() -> T + Send) -> Result<T> {
        let threads = self.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        crate::pool::run_in_pool(threads, || Ok(f()))
    }

    /// Extracts and sorts the entries of `data`'s records. `spare` is memory the caller writes only
    /// afterwards (the output): the sort's scratch space lies there when it fits, rather than in
    /// fresh memory, whose first touch costs as much as the sort on virtual machines, and the
    /// output's pages are then faulted in when the gather comes to write them.
    fn in_memory(&self, data: &[u8], spare: &mut [u8]) -> Result<Sorted> {
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
            let mut own;
            let scratch = match scratch_in(spare, n) {
                Some(s) => s,
                None => {
                    own = vec![0u128; n];
                    &mut own[..]
                }
            };
            self.check_cancelled()?;
            entry::extract(&key, layout, data, 0, r, &mut entries);
            self.check_cancelled()?;
            entry::sort(method, &key, layout, r, data, &mut entries, scratch);
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

/// Room for `n` u128 inside `spare` (from its first 16-byte aligned byte), if it has it.
fn scratch_in(spare: &mut [u8], n: usize) -> Option<&mut [u128]> {
    // SAFETY: every bit pattern is a valid u128 and `align_to_mut` reinterprets only the aligned
    // middle of the slice, which it borrows for as long as `spare`.
    let (_, middle, _) = unsafe { spare.align_to_mut::<u128>() };
    (middle.len() >= n).then(|| &mut middle[..n])
}

impl Sorted {
    fn gather(&self, data: &[u8], out: &mut [u8]) {
        entry::gather(self.layout, &self.entries, data, self.record_size, 0, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_lies_in_the_spare_memory_when_it_fits() {
        let mut backing = [0u128; 9];
        let bytes: &mut [u8] = {
            // SAFETY: u128 to u8 reinterprets initialized memory as bytes, always valid.
            let (_, b, _) = unsafe { backing.align_to_mut::<u8>() };
            b
        };
        for skew in 0..16 {
            let spare = &mut bytes[skew..skew + 128];
            let start = spare.as_ptr() as usize;
            let got = scratch_in(spare, 7).map(|s| (s.as_ptr() as usize - start, s.len()));
            // 128 bytes hold 8 aligned u128 when they start aligned, 7 otherwise.
            assert_eq!(got, Some(((16 - skew) % 16, 7)), "skew {skew}");
            assert_eq!(scratch_in(&mut bytes[skew..skew + 128], 8).is_some(), skew == 0, "skew {skew}");
        }
        assert!(scratch_in(&mut [], 1).is_none());
        assert_eq!(scratch_in(&mut [], 0).map(|s| s.len()), Some(0));
    }

    /// Outputs at every alignment, records shorter and longer than an entry, keys longer than the
    /// prefix (so the tie refinement works in the scratch): the sort equals a stable sort.
    #[test]
    fn sorting_into_outputs_at_any_alignment_matches_a_stable_sort() {
        for r in [15usize, 16, 17, 40] {
            let n = 3000;
            let data: Vec<u8> = (0..n * r).map(|i| ((i * 7919 + i / r * 31) % 3) as u8).collect();
            let sort = Sort::records(r).key_bytes(&format!("0:{r}:char:r")).unwrap();
            let mut want: Vec<&[u8]> = data.chunks(r).collect();
            want.sort_by(|a, b| b.cmp(a));
            let want = want.concat();
            let mut backing = vec![0u8; n * r + 16];
            for skew in [0, 1, 8, 15] {
                let out = &mut backing[skew..skew + n * r];
                sort.sort_into(&data, out).unwrap();
                assert_eq!(out, &want[..], "record size {r}, skew {skew}");
            }
        }
    }
}
