//! Sorting fixed-size records held in memory: the entries of the records (key prefix and place)
//! are extracted and sorted as a file sort's would be, and the records gathered in their order,
//! on the sort's own worker threads. The entries are narrow (`u64`: prefix and record index, see
//! [`crate::narrow`]) when their prefix tells the keys apart, else the engine's `u128` (prefix and
//! byte offset). The memory budget does not apply: the records are already in memory, and the
//! sort adds two entries per record (the entries and the kernel's scratch: 16 or 32 bytes), plus
//! a copy of the records for [`Sort::sort_slice`]. Both lie in the output instead when it has
//! room for them (records of at least two entries, one byte more when the output is not aligned
//! to the entry's size): the scratch at its start, the entries at its end, gathered from in
//! rounds that never overwrite an entry not yet read. Fresh memory's first touch costs as much as
//! the sort on virtual machines, and the output is touched anyway. Records of one to two entries
//! keep the scratch in the output.
//!
//! A cancel flag is looked at between slices of the extraction and of the gather, before each
//! bucket of the radix sort and each group and level of the refinement of ties, so a cancelled
//! sort of gigabytes stops within a fraction of a second.

use super::{Format, Sort};
use crate::batches::SortContext;
use crate::entry::{self, ByIndex, EntryLayout, Locate};
use crate::error::{Result, SortError};
use crate::key::KeySpec;
use crate::narrow::{self, NarrowLayout};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use xsort_kernels::{Method, Word};

/// The sorted entries of `data`'s records, and how to read them.
struct Sorted<E, L> {
    layout: L,
    entries: Placed<E>,
    record_size: usize,
}

/// Sorted entries of either width: narrow ones when they tell the keys apart (see
/// [`crate::narrow`]), else the engine's.
enum AnySorted {
    Wide(Sorted<u128, EntryLayout>),
    Narrow(Sorted<u64, NarrowLayout>),
}

/// Where sorted entries lie.
enum Placed<E> {
    /// In memory of their own.
    Own(Vec<E>),
    /// In the output, from this byte on (aligned to the entry's size), one per record up to its
    /// end.
    InOutput(usize),
}

impl Sort {
    /// Sorts the fixed-size records of `records` in place (stably: records with equal keys keep
    /// their order). A length that is not a whole number of records is an error.
    pub fn sort_slice(&self, records: &mut [u8]) -> Result<()> {
        let mut out = vec![0u8; records.len()];
        let sorted = self.in_memory(records, &mut out)?;
        self.on_pool(|| sorted.gather(records, &mut out, self.stop()))?;
        // A sort cancelled during the gather leaves the records as they were.
        self.check_cancelled()?;
        self.on_pool(|| records.par_chunks_mut(1 << 20).zip(out.par_chunks(1 << 20)).for_each(|(d, s)| d.copy_from_slice(s)))
    }

    /// Writes the fixed-size records of `records`, sorted, into `out` (of the same length).
    pub fn sort_into(&self, records: &[u8], out: &mut [u8]) -> Result<()> {
        if out.len() != records.len() {
            return Err(SortError::Usage(format!("the output holds {} bytes, the records {}", out.len(), records.len())));
        }
        let sorted = self.in_memory(records, out)?;
        self.on_pool(|| sorted.gather(records, out, self.stop()))?;
        self.check_cancelled()
    }

    /// The order of the fixed-size records of `records`: the index (from 0) of each record of the
    /// sorted sequence, as a stable argsort gives it.
    pub fn sorted_indices(&self, records: &[u8]) -> Result<Vec<u64>> {
        match self.in_memory(records, &mut [])? {
            AnySorted::Wide(sorted) => self.on_pool(|| sorted.indices()),
            AnySorted::Narrow(sorted) => self.on_pool(|| sorted.indices()),
        }
    }

    /// Runs `f` on the sort's worker threads.
    fn on_pool<T: Send>(&self, f: impl FnOnce() -> T + Send) -> Result<T> {
        crate::pool::run_in_pool(crate::limits::worker_threads(self.threads), || Ok(f()))
    }

    /// Extracts and sorts the entries of `data`'s records, narrow or wide (see [`crate::narrow`]).
    /// `spare` is memory the caller writes only afterwards (the output), where the entries and
    /// the scratch lie when they fit.
    fn in_memory(&self, data: &[u8], spare: &mut [u8]) -> Result<AnySorted> {
        self.check_refused()?;
        let Format::Records { record_size: r, key, folding, .. } = &self.format else {
            return Err(SortError::Usage("sorting in memory takes fixed-size records; lines are sorted with start() or run()".into()));
        };
        let r = *r;
        super::check_record_size(r)?;
        if folding.is_active() || self.match_mark.is_some() || self.selection.is_some() || self.reformat.is_some() {
            return Err(SortError::Usage(
                "unique, summed, marked (-match), selected and reformatted records need a sort that reads its input: use start() or run()"
                    .into(),
            ));
        }
        if !data.len().is_multiple_of(r) {
            let left = data.len() % r;
            return Err(SortError::BadInput {
                path: "(records in memory)".into(),
                offset: Some((data.len() - left) as u64),
                problem: format!("length {} is not a multiple of the record size {r} ({left} bytes left over)", data.len()),
            });
        }
        let key = KeySpec::new(key.clone()).resolve(r)?;
        let ctx = SortContext { method: self.method, key: &key, layout: EntryLayout::for_key(&key, data.len()), record_size: r };
        let by_index = ByIndex { data, record_size: r };
        let narrow = if self.method == Method::Radix { NarrowLayout::choose(&key, &by_index, data.len() / r, r) } else { None };
        let sorted = match narrow {
            Some(l) => {
                let make = |rec: &[u8], i: usize| l.entry(&key, rec, i);
                let sort = |entries: &mut [u64], scratch: &mut [u64]| narrow::sort_until(&ctx, l, &by_index, entries, scratch, self.stop());
                AnySorted::Narrow(self.extract_and_sort(data, spare, &ctx, l, make, sort)?)
            }
            None => {
                let l = ctx.layout;
                let make = |rec: &[u8], i: usize| l.entry(&key, rec, i * r);
                let sort = |entries: &mut [u128], scratch: &mut [u128]| entry::sort_until(&ctx, data, entries, scratch, self.stop());
                AnySorted::Wide(self.extract_and_sort(data, spare, &ctx, l, make, sort)?)
            }
        };
        self.check_cancelled()?;
        if let Some(failure) = key.comparison_failure() {
            return Err(SortError::Comparison(failure.into()));
        }
        Ok(sorted)
    }

    /// Extracts the entries of `data`'s records (`make(record, index)`) and sorts them (`sort`,
    /// with scratch space) on the sort's threads. `spare` is memory the caller writes only
    /// afterwards (the output): the entries and the scratch lie there when they fit (see the
    /// module's doc), rather than in fresh memory.
    fn extract_and_sort<E: Word, L: Send>(
        &self,
        data: &[u8],
        spare: &mut [u8],
        ctx: &SortContext,
        layout: L,
        make: impl Fn(&[u8], usize) -> E + Sync + Send,
        sort: impl FnOnce(&mut [E], &mut [E]) + Send,
    ) -> Result<Sorted<E, L>> {
        let r = ctx.record_size;
        self.on_pool(|| {
            let n = data.len() / r;
            let mut own_entries = Vec::new();
            let mut own_scratch: Vec<E>;
            let (entries, scratch, at) = match split_spare(spare, n) {
                Some((scratch, entries, at)) => (entries, scratch, Some(at)),
                None => {
                    own_entries = vec![E::ZERO; n];
                    let scratch = match scratch_in(spare, n) {
                        Some(s) => s,
                        None => {
                            own_scratch = vec![E::ZERO; n];
                            &mut own_scratch[..]
                        }
                    };
                    (&mut own_entries[..], scratch, None)
                }
            };
            entry::extract_checked_with(data, r, ctx.key.first_offset(), entries, make, || self.check_cancelled())?;
            self.check_cancelled()?;
            sort(entries, scratch);
            let entries = at.map_or(Placed::Own(own_entries), Placed::InOutput);
            Ok(Sorted { layout, entries, record_size: r })
        })?
    }

    /// The cancel flag, or one that is never set.
    fn stop(&self) -> &AtomicBool {
        self.cancel.as_deref().unwrap_or(&entry::NEVER)
    }

    /// [`SortError::Cancelled`] once the cancel flag is set.
    fn check_cancelled(&self) -> Result<()> {
        match &self.cancel {
            Some(c) if c.load(std::sync::atomic::Ordering::Relaxed) => Err(SortError::Cancelled),
            _ => Ok(()),
        }
    }
}

/// Room for `n` entries inside `spare` (from its first aligned byte), if it has it.
fn scratch_in<E: Word>(spare: &mut [u8], n: usize) -> Option<&mut [E]> {
    // SAFETY: every bit pattern is a valid entry (an integer) and `align_to_mut` reinterprets only
    // the aligned middle of the slice, which it borrows for as long as `spare`.
    let (_, middle, _) = unsafe { spare.align_to_mut::<E>() };
    (middle.len() >= n).then(|| &mut middle[..n])
}

/// Room for the scratch (`n` entries from the first aligned byte of `spare`) and, after it, the
/// entries (the last `n` aligned entries of `spare`), and the byte where the entries start.
fn split_spare<E: Word>(spare: &mut [u8], n: usize) -> Option<(&mut [E], &mut [E], usize)> {
    let base = spare.as_ptr() as usize;
    // SAFETY: as in `scratch_in`.
    let (_, middle, _) = unsafe { spare.align_to_mut::<E>() };
    if n == 0 || middle.len() < 2 * n {
        return None;
    }
    let len = middle.len();
    let (front, back) = middle.split_at_mut(len - n);
    let at = back.as_ptr() as usize - base;
    Some((&mut front[..n], back, at))
}

/// Below this many entries left in the output, the last round of a gather copies them out.
const ROUND_MIN: usize = 1 << 12;

/// Output bytes gathered between two looks at the cancel flag. With these slices and the radix
/// sort's checks, a cancelled in-memory sort of 5 GB stops within a few tenths of a second, where
/// each phase is over a second long on the development VM.
const GATHER_SLICE: usize = 256 << 20;

/// [`entry::gather`] of the records of `entries` into `dst`, a slice at a time, until `stop` is set.
fn gather_until<E: Copy + Sync>(layout: impl Locate<E>, entries: &[E], data: &[u8], r: usize, dst: &mut [u8], stop: &AtomicBool) {
    for (i, slice) in dst.chunks_mut(GATHER_SLICE).enumerate() {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        entry::gather(layout, entries, data, r, (i * GATHER_SLICE) as u64, slice);
    }
}

impl AnySorted {
    /// Gathers the records into `out`; once `stop` is set, it ends early with `out` incomplete.
    fn gather(&self, data: &[u8], out: &mut [u8], stop: &AtomicBool) {
        match self {
            AnySorted::Wide(sorted) => sorted.gather(data, out, stop),
            AnySorted::Narrow(sorted) => sorted.gather(data, out, stop),
        }
    }
}

impl<E: Word, L: Locate<E>> Sorted<E, L> {
    /// The index of each record of the sorted sequence.
    fn indices(&self) -> Vec<u64> {
        let Placed::Own(entries) = &self.entries else { unreachable!("entries lie in the output only when there is one") };
        entries.par_iter().map(|&e| (self.layout.record_at(e) / self.record_size) as u64).collect()
    }

    /// Gathers the records into `out`; once `stop` is set, it ends early with `out` incomplete.
    fn gather(&self, data: &[u8], out: &mut [u8], stop: &AtomicBool) {
        let (layout, r) = (self.layout, self.record_size);
        let at = match &self.entries {
            Placed::Own(entries) => return gather_until(layout, entries, data, r, out, stop),
            Placed::InOutput(at) => *at,
        };
        let (n, size) = (out.len() / r, std::mem::size_of::<E>());
        // Rounds: entries `done..n` lie from byte `at + size * done` on, so the records that end at
        // or before that byte can be written without overwriting an entry not yet read. Each round
        // leaves about size/r of the entries it found (r >= 2 * size: the scratch fitted too).
        let mut done = 0;
        while n - done >= ROUND_MIN {
            let boundary = at + size * done;
            let upto = (boundary / r).min(n);
            if upto <= done {
                break;
            }
            let (head, tail) = out.split_at_mut(boundary);
            gather_until(layout, entries_at(tail, upto - done), data, r, &mut head[done * r..upto * r], stop);
            done = upto;
        }
        let rest = entries_at::<E>(&out[at + size * done..], n - done).to_vec();
        gather_until(layout, &rest, data, r, &mut out[done * r..], stop);
    }
}

/// The first `n` entries of `bytes`, which starts aligned for them.
fn entries_at<E: Word>(bytes: &[u8], n: usize) -> &[E] {
    // SAFETY: as in `scratch_in`; the start is aligned (it is an entry's place), so nothing
    // precedes the aligned middle.
    let (prefix, middle, _) = unsafe { bytes.align_to::<E>() };
    debug_assert!(prefix.is_empty());
    &middle[..n]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `len` pseudo-random bytes (xorshift64 from `seed`).
    fn random_bytes(mut seed: u64, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 56) as u8
            })
            .collect()
    }

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
            let got = scratch_in::<u128>(spare, 7).map(|s| (s.as_ptr() as usize - start, s.len()));
            // 128 bytes hold 8 aligned u128 when they start aligned, 7 otherwise.
            assert_eq!(got, Some(((16 - skew) % 16, 7)), "skew {skew}");
            assert_eq!(scratch_in::<u128>(&mut bytes[skew..skew + 128], 8).is_some(), skew == 0, "skew {skew}");
        }
        assert!(scratch_in::<u128>(&mut [], 1).is_none());
        assert_eq!(scratch_in::<u64>(&mut [], 0).map(|s| s.len()), Some(0));
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

    #[test]
    fn entries_and_scratch_lie_in_the_output_when_both_fit() {
        let mut backing = [0u128; 9];
        // SAFETY: u128 to u8 reinterprets initialized memory as bytes, always valid.
        let (_, bytes, _) = unsafe { backing.align_to_mut::<u8>() };
        let start = bytes.as_ptr() as usize;
        let (scratch, entries, at) = split_spare::<u128>(&mut bytes[..], 4).unwrap();
        assert_eq!((scratch.as_ptr() as usize - start, entries.as_ptr() as usize - start, at), (0, 80, 80));
        let (scratch, entries, at) = split_spare::<u128>(&mut bytes[3..131], 3).unwrap();
        assert_eq!((scratch.as_ptr() as usize - start, entries.as_ptr() as usize - start, at), (16, 80, 77));
        assert!(split_spare::<u128>(&mut bytes[3..131], 4).is_none(), "7 aligned slots do not hold 2 x 4");
        assert!(split_spare::<u128>(&mut [], 0).is_none());
        // Narrow entries: 8-byte slots.
        let (scratch, entries, at) = split_spare::<u64>(&mut bytes[3..131], 7).unwrap();
        assert_eq!((scratch.as_ptr() as usize - start, entries.as_ptr() as usize - start, at), (8, 72, 69));
        assert!(split_spare::<u64>(&mut bytes[3..131], 8).is_none(), "15 aligned slots do not hold 2 x 8");
    }

    /// A gather whose stop flag is set writes nothing (the sort then reports the cancel), and one
    /// whose flag is never set writes the sorted records.
    #[test]
    fn a_set_stop_flag_ends_the_gather_before_it_writes() {
        let (r, n) = (8usize, 5000);
        let data: Vec<u8> = (0..n * r).map(|i| (i * 7919 % 251) as u8).collect();
        let sort = Sort::records(r).key_bytes("0:3").unwrap();
        let mut out = vec![0xEEu8; n * r];
        let sorted = sort.in_memory(&data, &mut out).unwrap();
        let own = matches!(&sorted, AnySorted::Narrow(Sorted { entries: Placed::Own(_), .. }));
        assert!(own, "8-byte records keep their narrow entries out of the output");
        out.fill(0xEE); // the sort's scratch lay there
        sorted.gather(&data, &mut out, &AtomicBool::new(true));
        assert!(out.iter().all(|&b| b == 0xEE), "a stopped gather wrote into the output");
        sorted.gather(&data, &mut out, &AtomicBool::new(false));
        let mut want: Vec<&[u8]> = data.chunks(r).collect();
        want.sort_by(|a, b| a[..3].cmp(&b[..3]));
        assert!(out.chunks(r).eq(want.iter().copied()));
    }

    /// A cancel flag set from another thread at any moment of an in-memory sort, with a key the
    /// entries hold whole and with a long one whose ties are refined (its first 12 bytes are the
    /// same in every record): the sort either finishes with the right output or reports the
    /// cancel, and never panics or hangs.
    #[test]
    fn cancelling_at_any_moment_ends_cleanly() {
        let (r, n) = (40usize, 400_000);
        for (key, tied) in [(0..6, 0), (0..30, 12)] {
            let mut data = random_bytes(0x1234_5678_9abc_def1, n * r);
            data.chunks_mut(r).for_each(|rec| rec[..tied].fill(b'x'));
            let mut want: Vec<&[u8]> = data.chunks(r).collect();
            want.sort_by(|a, b| a[key.clone()].cmp(&b[key.clone()]));
            let want = want.concat();
            let (mut finished, mut cancelled) = (0, 0);
            for delay_us in (0..4000).step_by(250) {
                let flag = std::sync::Arc::new(AtomicBool::new(false));
                let sort = Sort::records(r).key_bytes(&format!("{}:{}", key.start, key.len())).unwrap().cancel_flag(flag.clone());
                let mut out = vec![0u8; n * r];
                let setter = std::thread::spawn(move || {
                    std::thread::sleep(std::time::Duration::from_micros(delay_us));
                    flag.store(true, Ordering::Relaxed);
                });
                match sort.sort_into(&data, &mut out) {
                    Ok(()) => {
                        assert!(out == want, "key {key:?}: a sort that finished wrote the wrong output (delay {delay_us} us)");
                        finished += 1;
                    }
                    Err(SortError::Cancelled) => cancelled += 1,
                    Err(e) => panic!("key {key:?}, delay {delay_us} us: {e}"),
                }
                setter.join().unwrap();
            }
            assert!(cancelled > 0, "key {key:?}: no sort was cancelled ({finished} finished)");
        }
    }

    /// Two groups of about 50,000 entries tied on their 13-byte prefix (the first 12 key bytes are
    /// the same in every record, the others take two values, so ties go deep), re-keyed in
    /// parallel chunks and refined level by level: equal to a stable sort.
    #[test]
    fn a_large_tie_group_is_refined_in_parallel_like_a_stable_sort() {
        let (r, n) = (40usize, 100_000);
        let mut data: Vec<u8> = random_bytes(0x0dd5_eed5_0dd5_eed5, n * r).iter().map(|b| b % 2).collect();
        data.chunks_mut(r).for_each(|rec| rec[..12].fill(b'k'));
        let mut want: Vec<&[u8]> = data.chunks(r).collect();
        want.sort_by(|a, b| a[..30].cmp(&b[..30]));
        let sort = Sort::records(r).key_bytes("0:30").unwrap();
        let mut out = vec![0u8; n * r];
        sort.sort_into(&data, &mut out).unwrap();
        assert!(out.chunks(r).eq(want.iter().copied()), "the refined output differs from a stable sort");
    }

    /// An output of 90 MB whose first gather round (all but the entries at its end, 76 MB) is past
    /// the streaming threshold, at an odd alignment, keys with ties: equal to a stable sort.
    #[test]
    fn large_outputs_gathered_with_streaming_stores_match_a_stable_sort() {
        let (r, n) = (100usize, 900_000);
        let data = random_bytes(0x2545_f491_4f6c_dd1du64, n * r);
        let sort = Sort::records(r).key_bytes("0:2").unwrap();
        let mut want: Vec<&[u8]> = data.chunks(r).collect();
        want.sort_by(|a, b| a[..2].cmp(&b[..2]));
        let mut backing = vec![0u8; n * r + 16];
        let out = &mut backing[5..5 + n * r];
        sort.sort_into(&data, out).unwrap();
        assert!(out.chunks(r).eq(want.iter().copied()), "the sorted output differs");
    }

    /// Random keys, which narrow entries tell apart: keys held whole and keys longer than the
    /// prefix, ascending and descending, records shorter and longer than two entries (so that the
    /// entries lie out of the output or in it, gathered in rounds), outputs at every alignment:
    /// the sort equals a stable sort, and `sorted_indices` its order.
    #[test]
    fn narrow_entries_sort_like_a_stable_sort() {
        for r in [8usize, 15, 16, 17, 24, 100] {
            let n = 30_000 + r;
            let mut data = random_bytes(0x5eed ^ r as u64, n * r);
            // Some records repeat others' first bytes, so prefixes tie now and then.
            for i in (0..n).step_by(97) {
                let j = (i * 31) % n;
                data.copy_within(j * r..j * r + r.min(6), i * r);
            }
            for key in [format!("0:{}", r.min(3)), format!("0:{r}:char:r"), format!("{}:{}", r / 2, r - r / 2)] {
                let sort = Sort::records(r).key_bytes(&key).unwrap();
                let resolved = KeySpec::new(vec![crate::key::KeyPart::parse_key_bytes(&key).unwrap()]).resolve(r).unwrap();
                assert!(
                    NarrowLayout::choose(&resolved, &ByIndex { data: &data, record_size: r }, n, r).is_some(),
                    "record size {r}, key {key}: wide entries"
                );
                let mut order: Vec<usize> = (0..n).collect();
                order.sort_by(|&a, &b| resolved.compare(&data[a * r..a * r + r], &data[b * r..b * r + r]));
                let want: Vec<u8> = order.iter().flat_map(|&i| data[i * r..i * r + r].iter().copied()).collect();
                let mut backing = vec![0u8; n * r + 16];
                for skew in [0, 1, 8, 15] {
                    let out = &mut backing[skew..skew + n * r];
                    sort.sort_into(&data, out).unwrap();
                    assert!(out == &want[..], "record size {r}, key {key}, skew {skew}");
                }
                let indices = sort.sorted_indices(&data).unwrap();
                assert!(indices.iter().map(|&i| i as usize).eq(order.iter().copied()), "record size {r}, key {key}: indices");
            }
        }
    }

    /// Enough records for several gather rounds out of the output's end, keys with many ties (kept
    /// in input order), record sizes around the size where the entries start to fit, outputs at
    /// every alignment: the sort equals a stable sort by key.
    #[test]
    fn gathering_from_entries_in_the_output_matches_a_stable_sort() {
        for r in [31usize, 32, 33, 40, 100] {
            let n = 40_000 + r;
            let data: Vec<u8> = random_bytes(0x9e37_79b9_7f4a_7c15u64 ^ r as u64, n * r).iter().map(|b| b % 4).collect();
            let sort = Sort::records(r).key_bytes("1:3").unwrap();
            let mut want: Vec<&[u8]> = data.chunks(r).collect();
            want.sort_by(|a, b| a[1..4].cmp(&b[1..4]));
            let want = want.concat();
            let mut backing = vec![0u8; n * r + 16];
            for skew in [0, 1, 8, 15] {
                let out = &mut backing[skew..skew + n * r];
                out.fill(0xee);
                sort.sort_into(&data, out).unwrap();
                assert!(out == &want[..], "record size {r}, skew {skew}");
                let mut copy = data.clone();
                sort.sort_slice(&mut copy).unwrap();
                assert!(copy == want, "sort_slice, record size {r}");
            }
        }
    }
}
