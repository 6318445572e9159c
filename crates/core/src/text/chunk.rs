//! One chunk of lines in memory: where each line starts, the sort of their entries, and the gather of
//! the sorted lines into an output stream.
//!
//! Entries are the engine's `u128`s: the order's 96-bit prefix of the line on top and the line's
//! index in the chunk below, so sorting them as integers orders by prefix with ties in input order.
//! Groups of equal prefixes are then put in order by the full comparison. For the output, each
//! sorted line's start and the output offset where it ends are laid out in one array, so that any
//! byte range of the output can be gathered on its own: blocks are filled in parallel pieces.

use crate::framing::RecordOrder;
use rayon::prelude::*;
use std::cmp::Ordering;
use xsort_io::AlignedBuf;
use xsort_kernels::Method;

/// Bytes of bookkeeping per line: its start (8), its entry (16) and the kernel's scratch (16).
pub const BYTES_PER_LINE: usize = 40;
/// Entry bits holding the line index; lines per chunk stay below `2^INDEX_BITS`.
pub const INDEX_BITS: u32 = 32;
/// Below this many items a job is not worth splitting across threads.
const PAR_MIN: usize = 1 << 14;

/// The lines of a chunk: `starts[i]..starts[i + 1] - 1` is line i (its terminator excluded).
pub struct Lines<'a> {
    data: &'a [u8],
    starts: &'a [u64],
}

impl<'a> Lines<'a> {
    /// Indexes the lines of `data`, which must end with `terminator`, into `starts` (reused, grown
    /// when too small).
    pub fn index(data: &'a [u8], terminator: u8, starts: &'a mut AlignedBuf) -> xsort_io::Result<Lines<'a>> {
        // One pass over the data: each piece collects its line starts, then they are laid end to end.
        let pieces = piece_bounds(data, terminator, rayon::current_num_threads() * 4);
        let found: Vec<Vec<u64>> = pieces
            .par_windows(2)
            .map(|w| {
                let mut v = Vec::with_capacity((w[1] - w[0]) / 64);
                let mut start = w[0];
                for end in memchr::memchr_iter(terminator, &data[w[0]..w[1]]) {
                    v.push(start as u64);
                    start = w[0] + end + 1;
                }
                v
            })
            .collect();
        let n: usize = found.iter().map(Vec::len).sum();
        ensure_capacity(starts, (n + 1) * 8)?;
        let starts = &mut starts.as_u64_mut()[..n + 1];
        starts[n] = data.len() as u64;
        let mut rest = &mut starts[..n];
        let mut slots = Vec::with_capacity(found.len());
        for f in &found {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(f.len());
            slots.push(head);
            rest = tail;
        }
        slots.into_par_iter().zip(found.par_iter()).for_each(|(slot, f)| slot.copy_from_slice(f));
        Ok(Lines { data, starts })
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Whether there are no lines.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Line `i` without its terminator.
    #[inline]
    pub fn line(&self, i: usize) -> &'a [u8] {
        &self.data[self.starts[i] as usize..self.starts[i + 1] as usize - 1]
    }

    /// Start of line `i` and its length with the terminator.
    #[inline]
    fn span(&self, i: usize) -> (u64, u64) {
        (self.starts[i], self.starts[i + 1] - self.starts[i])
    }
}

/// Replaces `buf` with a larger one when it holds fewer than `bytes` bytes.
pub fn ensure_capacity(buf: &mut AlignedBuf, bytes: usize) -> xsort_io::Result<()> {
    if buf.capacity() < bytes {
        *buf = AlignedBuf::new(bytes)?;
    }
    Ok(())
}

/// About `pieces` boundaries of `data` (first 0, last `data.len()`), each just after a terminator.
fn piece_bounds(data: &[u8], terminator: u8, pieces: usize) -> Vec<usize> {
    let pieces = if data.len() < PAR_MIN * 16 { 1 } else { pieces.max(1) };
    let mut bounds = vec![0];
    for k in 1..pieces {
        let from = (data.len() / pieces * k).max(*bounds.last().unwrap_or(&0));
        match memchr::memchr(terminator, &data[from..]) {
            Some(i) if from + i + 1 < data.len() => bounds.push(from + i + 1),
            _ => break,
        }
    }
    bounds.push(data.len());
    bounds
}

/// The index a sorted entry refers to.
#[inline]
fn index_of(e: u128) -> usize {
    (e as u32) as usize
}

/// Sorts the lines: fills `entries` (one per line), sorts them with the kernel (`scratch` as its
/// working space, same length), then orders each group of equal prefixes by the full comparison,
/// ties in input order.
pub fn sort_lines<O: RecordOrder>(order: &O, method: Method, lines: &Lines, entries: &mut [u128], scratch: &mut [u128]) {
    let mask = !0u128 << INDEX_BITS;
    entries.par_chunks_mut(PAR_MIN).enumerate().for_each(|(c, chunk)| {
        for (j, e) in chunk.iter_mut().enumerate() {
            let i = c * PAR_MIN + j;
            *e = (order.prefix(lines.line(i)) & mask) | i as u128;
        }
    });
    let prefix_bytes = ((128 - INDEX_BITS) / 8) as usize;
    xsort_kernels::sort_entries(method, entries, scratch, prefix_bytes);
    let by_line = |a: &u128, b: &u128| order.compare(lines.line(index_of(*a)), lines.line(index_of(*b))).then(index_of(*a).cmp(&index_of(*b)));
    let groups = xsort_kernels::equal_prefix_runs(entries, 128 - INDEX_BITS);
    let (big, small): (Vec<_>, Vec<_>) = groups.into_iter().partition(|g| g.len() >= PAR_MIN);
    for g in big {
        entries[g].par_sort_unstable_by(by_line);
    }
    let mut rest: &mut [u128] = entries;
    let mut consumed = 0;
    let mut slices = Vec::with_capacity(small.len());
    for g in small {
        let (_, from_start) = std::mem::take(&mut rest).split_at_mut(g.start - consumed);
        let (group, after) = from_start.split_at_mut(g.len());
        consumed = g.end;
        rest = after;
        slices.push(group);
    }
    slices.into_par_iter().for_each(|group| group.sort_unstable_by(by_line));
}

/// Lays out the output of the sorted `entries` in `locs` (same length): the line's start in the
/// chunk (top 64 bits) and the output offset just past it (low 64 bits). With `unique`, a line equal
/// to the one before it is dropped: it takes no output bytes. Returns the output's length.
pub fn locate<O: RecordOrder>(order: &O, unique: bool, lines: &Lines, entries: &[u128], locs: &mut [u128]) -> u64 {
    let dup = |i: usize| {
        i > 0 && unique && {
            let (a, b) = (entries[i - 1], entries[i]);
            a >> INDEX_BITS == b >> INDEX_BITS && order.compare(lines.line(index_of(a)), lines.line(index_of(b))) == Ordering::Equal
        }
    };
    let sums: Vec<u64> = locs
        .par_chunks_mut(PAR_MIN)
        .enumerate()
        .map(|(c, chunk)| {
            let mut sum = 0u64;
            for (j, l) in chunk.iter_mut().enumerate() {
                let i = c * PAR_MIN + j;
                let (start, len) = lines.span(index_of(entries[i]));
                let len = if dup(i) { 0 } else { len };
                sum += len;
                *l = (start as u128) << 64 | sum as u128;
            }
            sum
        })
        .collect();
    let bases: Vec<u64> = sums.iter().scan(0u64, |acc, s| Some(std::mem::replace(acc, *acc + s))).collect();
    locs.par_chunks_mut(PAR_MIN).zip(bases.par_iter()).for_each(|(chunk, &base)| {
        for l in chunk {
            *l += base as u128;
        }
    });
    sums.iter().sum()
}

/// Fills `dst` with bytes `[first_byte, first_byte + dst.len())` of the output laid out in `locs`.
pub fn gather(data: &[u8], locs: &[u128], first_byte: u64, dst: &mut [u8]) {
    const PIECE: usize = 256 << 10;
    dst.par_chunks_mut(PIECE).enumerate().for_each(|(i, piece)| gather_serial(data, locs, first_byte + (i * PIECE) as u64, piece));
}

/// Lines ahead whose bytes the gather asks the CPU to fetch while it copies the current one: the
/// sources are scattered over the chunk, so each is a cache (and often TLB) miss.
const PREFETCH_AHEAD: usize = 16;

#[inline]
fn prefetch(data: &[u8], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if at < data.len() {
        // SAFETY: at is in bounds; a prefetch has no architectural effect besides caching.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(data.as_ptr().add(at) as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, at);
}

fn gather_serial(data: &[u8], locs: &[u128], first_byte: u64, dst: &mut [u8]) {
    let end_of = |l: u128| l as u64;
    let mut i = locs.partition_point(|&l| end_of(l) <= first_byte);
    let mut at = 0;
    let mut pos = first_byte;
    while at < dst.len() {
        if let Some(&ahead) = locs.get(i + PREFETCH_AHEAD) {
            prefetch(data, (ahead >> 64) as usize);
        }
        let l = locs[i];
        let begin = if i == 0 { 0 } else { end_of(locs[i - 1]) };
        let start = (l >> 64) as usize + (pos - begin) as usize;
        let n = ((end_of(l) - pos) as usize).min(dst.len() - at);
        dst[at..at + n].copy_from_slice(&data[start..start + n]);
        at += n;
        pos += n as u64;
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Plain byte order of whole lines with an 8-byte prefix: enough to exercise the tie groups.
    struct Bytes;
    impl RecordOrder for Bytes {
        fn prefix(&self, rec: &[u8]) -> u128 {
            let mut b = [0u8; 16];
            let n = rec.len().min(2);
            b[..n].copy_from_slice(&rec[..n]);
            u128::from_be_bytes(b)
        }
        fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
            a.cmp(b)
        }
        fn prefix_is_exact(&self) -> bool {
            false
        }
    }

    proptest! {
        /// Index, sort, locate and gather in odd-sized blocks equal a stable sort (deduplicated with
        /// `unique`) of the lines.
        #[test]
        fn sorted_output_matches_reference(
            lines in proptest::collection::vec(proptest::collection::vec(b'a'..b'd', 0..6), 0..300),
            unique in any::<bool>(),
            method in prop_oneof![Just(Method::Radix), Just(Method::Merge)],
            block in 1usize..50,
        ) {
            let data: Vec<u8> = lines.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect();
            let mut starts = AlignedBuf::new(4096).unwrap();
            let idx = Lines::index(&data, b'\n', &mut starts).unwrap();
            prop_assert_eq!(idx.len(), lines.len());
            let n = idx.len();
            let (mut entries, mut scratch, mut locs) = (vec![0u128; n], vec![0u128; n], vec![0u128; n]);
            sort_lines(&Bytes, method, &idx, &mut entries, &mut scratch);
            let total = locate(&Bytes, unique, &idx, &entries, &mut locs);
            let mut out = vec![0u8; total as usize];
            for (i, piece) in out.chunks_mut(block).enumerate() {
                gather(&data, &locs, (i * block) as u64, piece);
            }
            let mut expect = lines.clone();
            expect.sort();
            if unique {
                expect.dedup();
            }
            let expect: Vec<u8> = expect.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect();
            prop_assert_eq!(out, expect);
        }
    }

    #[test]
    fn index_splits_large_inputs_in_parallel_pieces() {
        let data: Vec<u8> = (0..200_000u32).flat_map(|i| format!("{}\n", i % 977).into_bytes()).collect();
        let mut starts = AlignedBuf::new(4096).unwrap();
        let idx = Lines::index(&data, b'\n', &mut starts).unwrap();
        assert_eq!(idx.len(), 200_000);
        assert_eq!(idx.line(199_999), format!("{}", 199_999 % 977).as_bytes());
        assert!(piece_bounds(&data, b'\n', 8).len() > 2);
    }
}
