//! One chunk of lines in memory: the sort entries of its lines, their sort, and the gather of the
//! sorted lines into an output stream.
//!
//! Each line's entry is one `u128`: the order's prefix of the line in the top 64 bits, then the
//! line's offset in the chunk (40 bits) and its length (24 bits; longer lines are found again by
//! their terminator). When the first key level compares short keys as plain bytes (`-t, -k3,3`
//! on three-letter codes), the prefix packs that key with the top of the next level's prefix
//! (see [`Packing`]), so that lines tied on the first key are mostly ordered by the kernel alone
//! rather than visited again, out of memory order, to be re-keyed. Entries are made in one parallel pass over the chunk, while its bytes are in
//! cache, and need no other table. Sorting them as integers orders by prefix with ties in input
//! order; groups of equal prefixes are then put in order by the full comparison. For the output,
//! each sorted line's offset and the output offset where it ends are laid out in the kernel's
//! scratch, so that any byte range of the output can be gathered on its own, in parallel pieces.

use crate::entry::NEVER;
use crate::framing::{RecordOrder, Splitter};
use crate::gather::Placed;
use crate::refine::{self, EntryMatcher, Tied};
use rayon::prelude::*;
use std::cmp::Ordering;
use std::sync::atomic::AtomicBool;
use xsort_io::AlignedBuf;
use xsort_kernels::prefetch::prefetch_line as prefetch;
use xsort_kernels::Method;

/// Bytes of bookkeeping per line: its entry (16) and the kernel's scratch (16).
pub const BYTES_PER_LINE: usize = 32;
/// Entry bits below the prefix: the line's offset and length.
const LOCATION_BITS: u32 = 64;
/// Bits of the line's length; a line this long or longer stores the all-ones value.
const LEN_BITS: u32 = 24;
const LEN_MAX: u128 = (1 << LEN_BITS) - 1;
/// Largest chunk, in bytes, whose offsets fit the entry.
pub const MAX_CHUNK_BYTES: usize = 1 << (LOCATION_BITS - LEN_BITS);
/// Below this many items a job is not worth splitting across threads.
const PAR_MIN: usize = 1 << 14;

/// A chunk of whole lines, each ended by the terminator.
#[derive(Clone, Copy)]
pub struct Chunk<'a> {
    /// The bytes.
    pub data: &'a [u8],
    /// Where its lines end.
    pub splitter: Splitter,
}

impl<'a> Chunk<'a> {
    /// Where the line an entry refers to starts.
    #[inline]
    fn offset(e: u128) -> usize {
        (e >> LEN_BITS) as u64 as usize & (MAX_CHUNK_BYTES - 1)
    }

    /// Asks the CPU to fetch the line an entry refers to (its first 128 bytes): entries in key
    /// order visit lines all over the chunk, each a cache miss unless fetched ahead, and a short
    /// line often straddles two cache lines, its keys in the second.
    #[inline]
    fn prefetch(&self, e: u128) {
        let off = Self::offset(e);
        prefetch(self.data, off);
        let last = off + (e & LEN_MAX).min(127) as usize;
        if last / 64 != off / 64 {
            prefetch(self.data, last);
        }
    }

    /// The line an entry refers to, without its terminator.
    #[inline]
    pub fn line(&self, e: u128) -> &'a [u8] {
        let off = Self::offset(e);
        let len = e & LEN_MAX;
        let len = if len == LEN_MAX { self.splitter.first_end(self.data, off).map_or(self.data.len(), |e| e) - off } else { len as usize };
        &self.data[off..off + len]
    }

    /// Counts the lines, then writes one entry per line into `entries` (grown when too small):
    /// `order`'s prefix and the line's place. Returns the number of lines and the length of the
    /// longest, without its terminator (what a merge of runs of these lines must hold per run);
    /// None, before any entry is made, when the chunk's bytes and its lines' bookkeeping
    /// ([`BYTES_PER_LINE`] each) exceed `limit`.
    /// `cuts`: the chunk's [`piece_bounds`] when already known (a walk of a CSV input's records
    /// made them), saving the sequential walk that finds them.
    pub fn make_entries<O: RecordOrder>(
        &self,
        order: &O,
        entries: &mut AlignedBuf,
        limit: usize,
        cuts: Option<Vec<usize>>,
    ) -> xsort_io::Result<Option<(usize, usize)>> {
        let (data, split) = (self.data, self.splitter);
        let pieces = cuts.unwrap_or_else(|| piece_bounds(data, split, piece_count()));
        let counts: Vec<usize> = pieces.par_windows(2).map(|w| count_ends(&data[..w[1]], w[0], split)).collect();
        let n: usize = counts.iter().sum();
        if data.len().saturating_add(n.saturating_mul(BYTES_PER_LINE)) > limit {
            return Ok(None);
        }
        let packing = Packing::choose(order, data, split);
        ensure_capacity(entries, n * 16)?;
        let mut rest = &mut entries.as_u128_mut()[..n];
        let mut slots = Vec::with_capacity(counts.len());
        for &c in &counts {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(c);
            slots.push(head);
            rest = tail;
        }
        let mask = !0u128 << LOCATION_BITS;
        let longest = slots.into_par_iter().zip(pieces.par_windows(2)).map(|(slot, w)| {
            let (mut start, mut longest) = (w[0], 0);
            for (e, end) in slot.iter_mut().zip(split.ends(&data[..w[1]], w[0])) {
                let line = &data[start..end];
                *e = (packing.prefix(order, line) & mask) | (start as u128) << LEN_BITS | (line.len() as u128).min(LEN_MAX);
                longest = longest.max(line.len());
                start = end + 1;
            }
            longest
        });
        Ok(Some((n, longest.max().unwrap_or(0))))
    }
}

/// Longest first-level key, in bytes, that [`Packing`] packs: at least 24 bits of the entry's 64
/// are left to the next level.
const PACK_MAX: usize = 4;
/// Lines sampled at each of four places of a chunk to choose the packing.
const PACK_SAMPLE: usize = 64;

/// How a chunk's entries get their prefixes: the order's own, or (`width` > 0) the first level's
/// key (compared as plain bytes) padded to `width` bytes, then its length in one byte (`width` + 1
/// for longer keys), then the top of the next level's prefix (none for longer keys, whose first
/// `width` bytes are all the entry holds of them). Order-preserving as a prefix must be: keys that
/// differ in their first `width` bytes differ there, a key that is a prefix of another is shorter,
/// and equal keys (of at most `width` bytes) leave the order to the next level. Reversed keys
/// invert the key and length bytes. Lines tied in the packed prefix are ordered by the refinement
/// of ties ([`crate::refine`]) as any others. The width is the longest key of a sample of the
/// chunk's lines; it only sets the speed, not the order (merges of runs use the order's prefix).
#[derive(Clone, Copy)]
struct Packing {
    width: usize,
}

impl Packing {
    fn choose<O: RecordOrder>(order: &O, data: &[u8], split: Splitter) -> Packing {
        let none = Packing { width: 0 };
        // Lines are sampled from places inside the chunk, where a CSV record's start is unknown
        // (nor are CSV keys slices of their lines).
        if order.levels() < 2 || data.is_empty() || split.csv.is_some() {
            return none;
        }
        let t = split.terminator;
        let mut width = 0;
        for k in 0..4 {
            let from = match data.len() / 4 * k {
                0 => 0,
                at => match memchr::memchr(t, &data[at..]) {
                    Some(i) => at + i + 1,
                    None => break,
                },
            };
            let mut start = from;
            for end in memchr::memchr_iter(t, &data[from..]).take(PACK_SAMPLE) {
                let line = &data[start..from + end];
                match order.level_bytes(line, 0) {
                    Some((key, _)) => width = width.max(key.len()),
                    None => return none,
                }
                start = from + end + 1;
            }
        }
        if width > PACK_MAX {
            return none;
        }
        Packing { width: width.max(1) }
    }

    /// The prefix of `line`'s entry (in the top 64 bits; lower bits are dropped).
    #[inline]
    fn prefix<O: RecordOrder>(self, order: &O, line: &[u8]) -> u128 {
        let w = self.width;
        let Some((key, reverse)) = order.level_bytes(line, 0).filter(|_| w > 0) else {
            return order.prefix(line);
        };
        let mut buf = [0u8; 16];
        let n = key.len().min(w);
        buf[..n].copy_from_slice(&key[..n]);
        buf[w] = key.len().min(w + 1) as u8;
        let bits = 8 * (w as u32 + 1);
        let mut field = u128::from_be_bytes(buf);
        if reverse {
            field = !field & (!0u128 << (128 - bits));
        }
        if key.len() > w {
            return field;
        }
        field | order.level_prefix(line, 1) >> bits
    }
}

/// The lines of a chunk by index, for reading them in order: `starts[i]..starts[i + 1] - 1` is
/// line i (its terminator excluded).
pub struct Lines<'a> {
    data: &'a [u8],
    starts: &'a [u64],
}

impl<'a> Lines<'a> {
    /// Indexes the lines of `data`, which must end with a terminator, into `starts` (reused, grown
    /// when too small).
    pub fn index(data: &'a [u8], split: Splitter, starts: &'a mut AlignedBuf) -> xsort_io::Result<Lines<'a>> {
        let n = count_ends(data, 0, split);
        ensure_capacity(starts, (n + 1) * 8)?;
        let starts = &mut starts.as_u64_mut()[..n + 1];
        let mut start = 0;
        for (s, end) in starts.iter_mut().zip(split.ends(data, 0)) {
            *s = start as u64;
            start = end + 1;
        }
        starts[n] = data.len() as u64;
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
}

/// Replaces `buf` with a larger one when it holds fewer than `bytes` bytes.
pub fn ensure_capacity(buf: &mut AlignedBuf, bytes: usize) -> xsort_io::Result<()> {
    if buf.capacity() < bytes {
        *buf = AlignedBuf::new(bytes)?;
    }
    Ok(())
}

/// The records of `data` that start at `from` (a record's start) and end in it.
fn count_ends(data: &[u8], from: usize, split: Splitter) -> usize {
    match split.csv {
        None => memchr::memchr_iter(split.terminator, &data[from..]).count(),
        Some(_) => split.ends(data, from).count(),
    }
}

/// The pieces a chunk is cut into for its parallel passes: a few per thread of the sort's pool.
pub fn piece_count() -> usize {
    rayon::current_num_threads() * 4
}

/// About `pieces` boundaries of `data` (first 0, last `data.len()`), each just after a record's
/// end. A line ends at the first terminator after any place; a CSV record's end is known only
/// from the records before it, so they are followed from the start.
fn piece_bounds(data: &[u8], split: Splitter, pieces: usize) -> Vec<usize> {
    let mut cuts = PieceCuts::new(data.len(), pieces);
    match split.csv {
        None => {
            while let Some(from) = cuts.wanted_from() {
                match memchr::memchr(split.terminator, &data[from..]) {
                    Some(i) => cuts.see(from + i),
                    None => break,
                }
            }
        }
        Some(_) => {
            for end in split.ends(data, 0) {
                if cuts.wanted_from().is_none() {
                    break;
                }
                cuts.see(end);
            }
        }
    }
    cuts.finish()
}

/// [`piece_bounds`] made from the record ends of a chunk, seen in order: each boundary follows
/// the first end at or past its share of the chunk.
pub struct PieceCuts {
    len: usize,
    pieces: usize,
    bounds: Vec<usize>,
    /// Where the next boundary's record end is looked for; None once no more are wanted.
    wanted: Option<usize>,
}

impl PieceCuts {
    /// Cuts for a chunk of `len` bytes into about `pieces` pieces (one when it is small).
    pub fn new(len: usize, pieces: usize) -> PieceCuts {
        let pieces = if len < PAR_MIN * 16 { 1 } else { pieces.max(1) };
        let mut cuts = PieceCuts { len, pieces, bounds: vec![0], wanted: None };
        cuts.wanted = cuts.next_wanted();
        cuts
    }

    /// The share of the chunk the next boundary follows, past the last one; None when all are made.
    fn next_wanted(&self) -> Option<usize> {
        let k = self.bounds.len();
        (k < self.pieces).then(|| (self.len / self.pieces * k).max(self.bounds[k - 1]))
    }

    /// Where the next boundary's record end is looked for (None: no more boundaries wanted).
    #[inline]
    pub fn wanted_from(&self) -> Option<usize> {
        self.wanted
    }

    /// Takes the next record end: the offset of its terminator.
    #[inline]
    pub fn see(&mut self, end: usize) {
        if self.wanted.is_some_and(|from| end >= from) {
            if end + 1 < self.len {
                self.bounds.push(end + 1);
                self.wanted = self.next_wanted();
            } else {
                self.wanted = None;
            }
        }
    }

    /// The boundaries, the chunk's end last.
    pub fn finish(mut self) -> Vec<usize> {
        self.bounds.push(self.len);
        self.bounds
    }
}

/// Bytes of the entry's prefix: what the kernel sorts on before ties are refined.
const PREFIX_BYTES: usize = ((128 - LOCATION_BITS) / 8) as usize;

/// Sorts the entries of a chunk's lines and lays out their output, piece by piece: the kernel
/// sorts by prefix (`scratch` is its working space, same length) and hands over the sorted entries
/// in ascending pieces; in each, groups of equal prefixes are ordered by [`refine::sort_ties`]
/// (ties in input order: offsets grow with it) and the output is laid out by [`locate`] in the
/// piece's range of `scratch`. `emit(locs, len)` receives each piece's layout and output length,
/// in output order, as soon as the piece is done, so that its lines can be written while the next
/// are sorted. Equal prefixes never straddle two pieces, so neither tie groups nor `unique`'s
/// duplicates do.
pub fn sort_and_locate<'a, O: RecordOrder>(
    order: &O,
    method: Method,
    unique: bool,
    chunk: Chunk,
    entries: &'a mut [u128],
    scratch: &'a mut [u128],
    mut emit: impl FnMut(&'a [u128], u64),
) {
    xsort_kernels::sort_entries_in_pieces(method, entries, scratch, PREFIX_BYTES, |piece, work| {
        refine::sort_ties(&LineTies { order, method, chunk }, piece, work);
        let len = locate(order, unique, chunk, piece, work);
        emit(work, len);
    });
}

/// A chunk's entries as the refinement of ties sees them (see [`crate::refine`]): the order's key
/// levels, each prefix in the entry's top 64 bits.
struct LineTies<'a, O> {
    order: &'a O,
    method: Method,
    chunk: Chunk<'a>,
}

impl<O: RecordOrder> Tied for LineTies<'_, O> {
    fn method(&self) -> Method {
        self.method
    }

    fn stop(&self) -> &AtomicBool {
        &NEVER
    }

    fn location_mask(&self) -> u128 {
        !(!0u128 << LOCATION_BITS)
    }

    fn levels(&self) -> usize {
        self.order.levels()
    }

    fn prefix_bytes(&self, _level: usize) -> usize {
        PREFIX_BYTES
    }

    #[inline]
    fn level_prefix(&self, e: u128, level: usize) -> u128 {
        self.order.level_prefix(self.chunk.line(e), level) & (!0u128 << LOCATION_BITS)
    }

    fn level_matcher(&self, first: u128, level: usize) -> Option<EntryMatcher<'_>> {
        let equal_to_first = self.order.level_matcher(self.chunk.line(first), level);
        Some(Box::new(move |e| equal_to_first(self.chunk.line(e))))
    }

    #[inline]
    fn compare(&self, a: u128, b: u128) -> Ordering {
        self.order.compare(self.chunk.line(a), self.chunk.line(b))
    }

    #[inline]
    fn prefetch(&self, e: u128) {
        self.chunk.prefetch(e);
    }

    fn level_transform(&self, e: u128, level: usize, out: &mut Vec<u8>) -> Option<bool> {
        self.order.level_transform(self.chunk.line(e), level, out)
    }
}

/// Lays out the output of the sorted `entries` in `locs` (same length): the line's offset in the
/// chunk (top 64 bits) and the output offset (from the first of `entries`) just past it, terminator included (low 64 bits). With
/// `unique`, a line equal to the one before it is dropped: it takes no output bytes. Returns the
/// output's length.
pub fn locate<O: RecordOrder>(order: &O, unique: bool, chunk: Chunk, entries: &[u128], locs: &mut [u128]) -> u64 {
    let dup = |i: usize| {
        i > 0 && unique && {
            let (a, b) = (entries[i - 1], entries[i]);
            a >> LOCATION_BITS == b >> LOCATION_BITS && order.compare(chunk.line(a), chunk.line(b)) == Ordering::Equal
        }
    };
    let sums: Vec<u64> = locs
        .par_chunks_mut(PAR_MIN)
        .enumerate()
        .map(|(c, part)| {
            let mut sum = 0u64;
            for (j, l) in part.iter_mut().enumerate() {
                let i = c * PAR_MIN + j;
                let line = chunk.line(entries[i]);
                let start = line.as_ptr() as usize - chunk.data.as_ptr() as usize;
                sum += if dup(i) { 0 } else { line.len() as u64 + 1 };
                *l = (start as u128) << 64 | sum as u128;
            }
            sum
        })
        .collect();
    let bases: Vec<u64> = sums.iter().scan(0u64, |acc, s| Some(std::mem::replace(acc, *acc + s))).collect();
    locs.par_chunks_mut(PAR_MIN).zip(bases.par_iter()).for_each(|(part, &base)| {
        for l in part {
            *l += base as u128;
        }
    });
    sums.iter().sum()
}

/// Fills `dst` with bytes `[first_byte, first_byte + dst.len())` of the output laid out in `locs`
/// (see [`crate::gather`]).
pub fn gather(data: &[u8], locs: &[u128], first_byte: u64, dst: &mut [u8]) {
    crate::gather::gather(LaidOut { locs }, data, first_byte, dst)
}

/// Sorted lines as their layout placed them: each line's start in the chunk (high 64 bits) and
/// its end in the output (low 64 bits); its length is that end less the previous line's.
#[derive(Clone, Copy)]
struct LaidOut<'a> {
    locs: &'a [u128],
}

impl LaidOut<'_> {
    /// Where line `i` ends in the output.
    #[inline]
    fn end(&self, i: usize) -> u64 {
        self.locs[i] as u64
    }

    /// Where line `i` begins in the output.
    #[inline]
    fn begin(&self, i: usize) -> u64 {
        if i == 0 {
            0
        } else {
            self.end(i - 1)
        }
    }
}

impl Placed for LaidOut<'_> {
    /// Streaming stores were measured for records only.
    const STREAMING: bool = false;

    #[inline]
    fn find(&self, byte: u64) -> (usize, usize) {
        let i = self.locs.partition_point(|&l| l as u64 <= byte);
        (i, (byte - self.begin(i)) as usize)
    }

    #[inline]
    fn place(&self, i: usize) -> Option<(usize, usize)> {
        let l = *self.locs.get(i)?;
        Some(((l >> 64) as usize, (l as u64 - self.begin(i)) as usize))
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

    /// Two levels: the first byte, then the rest of the line (so that whole-line byte order is the
    /// order), with a one-byte prefix per level: refinement must reproduce plain byte order.
    struct TwoLevel;
    impl RecordOrder for TwoLevel {
        fn prefix(&self, rec: &[u8]) -> u128 {
            self.level_prefix(rec, 0)
        }
        fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
            a.cmp(b)
        }
        fn prefix_is_exact(&self) -> bool {
            false
        }
        fn levels(&self) -> usize {
            2
        }
        fn level_prefix(&self, rec: &[u8], level: usize) -> u128 {
            let b = if level == 0 { rec.first() } else { rec.get(1) };
            (b.map_or(0, |&b| b as u128 + 1)) << 120
        }
        fn level_equal(&self, a: &[u8], b: &[u8], level: usize) -> bool {
            if level == 0 {
                a.first() == b.first()
            } else {
                a.get(1..) == b.get(1..)
            }
        }
    }

    proptest! {
        #[test]
        fn refining_ties_by_levels_matches_reference(
            lines in proptest::collection::vec(proptest::collection::vec(b'a'..b'c', 0..4), 0..400),
            unique in any::<bool>(),
        ) {
            let data: Vec<u8> = lines.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect();
            let chunk = Chunk { data: &data, splitter: Splitter::lines(b'\n') };
            prop_assert_eq!(sort_whole(&TwoLevel, chunk, unique, Method::Radix, 1 << 20), reference(&lines, unique));
        }

        /// Index, sort, locate and gather in odd-sized blocks equal a stable sort (deduplicated with
        /// `unique`) of the lines.
        #[test]
        fn sorted_output_matches_reference(
            lines in proptest::collection::vec(proptest::collection::vec(b'a'..b'd', 0..6), 0..300),
            unique in any::<bool>(),
            method in prop_oneof![Just(Method::Radix), Just(Method::Merge)],
            block in 1usize..50,
        ) {
            let out = sort_all(&lines, unique, method, block);
            prop_assert_eq!(out, reference(&lines, unique));
        }
    }

    /// GNU's order for `args`.
    fn gnu_order(args: &[&str]) -> crate::order::LineOrder {
        match crate::Sort::lines().gnu_args(args).unwrap().order().unwrap() {
            crate::Order::Lines(order, _) => order,
            crate::Order::Records(..) => unreachable!("lines"),
        }
    }

    /// Key-level options whose first key compares plain bytes (so entries may be packed), with and
    /// without `-u` (which drops the last-resort level).
    const PACKED_ARGS: [&[&str]; 5] = [
        &["-t,", "-k3,3", "-k1,1nr"],
        &["-t,", "-k3,3r", "-k1,1n"],
        &["-t,", "-k2,2", "-k3,3"],
        &["-t,", "-k3,3"],
        &["-t,", "-u", "-k3,3", "-k1,1n"],
    ];

    /// Lines `number,word,code`: codes of 0 to 6 bytes (NUL among them: a key that is a prefix of
    /// another once padded), numbers with ties, so every level decides some pairs.
    fn csv_lines() -> impl Strategy<Value = Vec<Vec<u8>>> {
        let code = proptest::collection::vec(prop_oneof![Just(0u8), Just(b'a'), Just(b'b')], 0..7);
        let line = (0u32..6, proptest::collection::vec(b'x'..b'z', 0..3), code).prop_map(|(n, w, c)| {
            let mut l = format!("{n},").into_bytes();
            l.extend(w);
            l.push(b',');
            l.extend(c);
            l
        });
        proptest::collection::vec(line, 0..300)
    }

    /// The stable sort of `lines` by `order` (the first of equal lines only, with `unique`).
    fn order_reference(order: &crate::order::LineOrder, lines: &[Vec<u8>], unique: bool) -> Vec<u8> {
        let mut expect = lines.to_vec();
        expect.sort_by(|a, b| order.compare(a, b));
        if unique {
            expect.dedup_by(|b, a| order.compare(a, b) == Ordering::Equal);
        }
        expect.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect()
    }

    proptest! {
        /// Packed prefixes of every width keep the prefix contract against GNU's comparison.
        #[test]
        fn packed_prefixes_respect_the_order(lines in csv_lines(), args in 0..PACKED_ARGS.len(), width in 1..=PACK_MAX) {
            let order = gnu_order(PACKED_ARGS[args]);
            let packing = Packing { width };
            let top = |l: &[u8]| packing.prefix(&order, l) >> LOCATION_BITS;
            for a in &lines {
                for b in &lines {
                    match order.compare(a, b) {
                        Ordering::Less => prop_assert!(top(a) <= top(b), "{:?} {:?}", a, b),
                        Ordering::Equal => prop_assert_eq!(top(a), top(b)),
                        Ordering::Greater => prop_assert!(top(a) >= top(b)),
                    }
                }
            }
        }

        /// Sorting chunks whose entries are packed (or not, when the sample finds long keys) equals
        /// the stable sort by GNU's comparison.
        #[test]
        fn sorts_with_packed_entries_match_the_order(lines in csv_lines(), args in 0..PACKED_ARGS.len()) {
            let order = gnu_order(PACKED_ARGS[args]);
            let unique = PACKED_ARGS[args].contains(&"-u");
            let data: Vec<u8> = lines.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect();
            let chunk = Chunk { data: &data, splitter: Splitter::lines(b'\n') };
            prop_assert_eq!(sort_whole(&order, chunk, unique, Method::Radix, 1 << 20), order_reference(&order, &lines, unique));
        }
    }

    /// In a collating locale, tie groups are ordered by their primary weights and then by the
    /// collation: the sort equals the stable sort by the order's comparison, for whole lines, a
    /// reversed key, a folded key and unique lines, in big groups and small.
    #[test]
    fn sorts_in_a_collating_locale_match_the_order() {
        if !xsort_testkit::locales(&["sv_SE.UTF-8"]) {
            return;
        }
        const PIECES: [&str; 14] = ["a", "A", "å", "Å", "ä", "e", "é", "É", "z", "-", " ", "\u{301}", "x", "ß"];
        let mut x = 11u64;
        let lines: Vec<Vec<u8>> = (0..30_000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let n = 1 + (x >> 61) as usize;
                (0..n).flat_map(|k| PIECES[(x >> (8 + 4 * k)) as usize % PIECES.len()].bytes()).collect()
            })
            .collect();
        let locale = crate::order::Locale::named("sv_SE.UTF-8").unwrap();
        for args in [&[][..], &["-r"], &["-k1,1fr", "-s"], &["-u"], &["-d", "-u"]] {
            let order = match crate::Sort::lines().locale(locale.clone()).gnu_args(args).unwrap().order().unwrap() {
                crate::Order::Lines(order, _) => order,
                crate::Order::Records(..) => unreachable!("lines"),
            };
            let unique = args.contains(&"-u");
            for lines in [&lines[..], &lines[..40]] {
                let data: Vec<u8> = lines.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect();
                let chunk = Chunk { data: &data, splitter: Splitter::lines(b'\n') };
                let sorted = sort_whole(&order, chunk, unique, Method::Radix, 1 << 24);
                assert!(sorted == order_reference(&order, lines, unique), "{args:?}");
            }
        }
    }

    /// Many lines with short codes in the sampled places and longer ones (up to 6 bytes) elsewhere:
    /// the chunk is packed at the sampled width, and sorts as GNU's order does.
    #[test]
    fn packed_chunks_with_keys_longer_than_the_sample_sort_right() {
        let mut x = 7u64;
        let lines: Vec<Vec<u8>> = (0..20_000)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let len = if (100..4000).contains(&i) { 1 + (x >> 60) as usize % 6 } else { 3 };
                let code: Vec<u8> = (0..len).map(|k| b"\0ab"[(x >> (20 + 2 * k)) as usize % 3]).collect();
                [format!("{},w,", (x >> 40) % 50).into_bytes(), code].concat()
            })
            .collect();
        let data: Vec<u8> = lines.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect();
        let chunk = Chunk { data: &data, splitter: Splitter::lines(b'\n') };
        for args in PACKED_ARGS {
            let order = gnu_order(args);
            let width = if args.contains(&"-k2,2") { 1 } else { 3 }; // the words are "w"
            assert_eq!(Packing::choose(&order, &data, Splitter::lines(b'\n')).width, width, "{args:?}");
            let unique = args.contains(&"-u");
            assert!(sort_whole(&order, chunk, unique, Method::Radix, 1 << 20) == order_reference(&order, &lines, unique), "{args:?}");
        }
        let numeric_first = gnu_order(&["-t,", "-k1,1n", "-k3,3"]);
        assert_eq!(Packing::choose(&numeric_first, &data, Splitter::lines(b'\n')).width, 0, "a numeric first key is not packed");
    }

    fn sort_all(lines: &[Vec<u8>], unique: bool, method: Method, block: usize) -> Vec<u8> {
        let data: Vec<u8> = lines.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect();
        sort_whole(&Bytes, Chunk { data: &data, splitter: Splitter::lines(b'\n') }, unique, method, block)
    }

    /// Indexes, sorts and lays out a chunk, then gathers each piece's output in blocks of `block`.
    fn sort_whole<O: RecordOrder>(order: &O, chunk: Chunk, unique: bool, method: Method, block: usize) -> Vec<u8> {
        let mut buf = AlignedBuf::new(4096).unwrap();
        assert!(chunk.make_entries(order, &mut buf, chunk.data.len(), None).unwrap().is_none() || chunk.data.is_empty(), "over the limit");
        assert_eq!(buf.capacity(), 4096, "no entries made for a chunk over the limit");
        let (n, longest) = chunk.make_entries(order, &mut buf, usize::MAX, None).unwrap().unwrap();
        assert_eq!(n, memchr::memchr_iter(chunk.splitter.terminator, chunk.data).count());
        assert_eq!(longest, chunk.data.split(|&b| b == chunk.splitter.terminator).map(<[u8]>::len).max().unwrap_or(0));
        let entries = &mut buf.as_u128_mut()[..n];
        let mut scratch = vec![0u128; n];
        let mut out = Vec::new();
        sort_and_locate(order, method, unique, chunk, entries, &mut scratch, |locs, len| {
            let mut piece = vec![0u8; len as usize];
            for (i, part) in piece.chunks_mut(block).enumerate() {
                gather(chunk.data, locs, (i * block) as u64, part);
            }
            out.extend_from_slice(&piece);
        });
        out
    }

    fn reference(lines: &[Vec<u8>], unique: bool) -> Vec<u8> {
        let mut expect = lines.to_vec();
        expect.sort();
        if unique {
            expect.dedup();
        }
        expect.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect()
    }

    #[test]
    fn big_tied_groups_are_refined_in_parallel() {
        // Two first bytes only: level-0 groups of ~25,000 entries take the parallel, radix path.
        let mut x = 12345u64;
        let lines: Vec<Vec<u8>> = (0..50_000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let b = x >> 33;
                vec![b"ab"[(b & 1) as usize], b'a' + (b >> 1) as u8 % 26, b'a' + (b >> 6) as u8 % 3]
            })
            .collect();
        let data: Vec<u8> = lines.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect();
        let chunk = Chunk { data: &data, splitter: Splitter::lines(b'\n') };
        assert_eq!(sort_whole(&TwoLevel, chunk, false, Method::Radix, 1 << 20), reference(&lines, false));
    }

    #[test]
    fn lines_longer_than_the_length_field_are_found_by_their_terminator() {
        let long = vec![b'b'; LEN_MAX as usize + 10];
        let lines = vec![long.clone(), b"c".to_vec(), long[..5].to_vec(), b"a".to_vec()];
        assert_eq!(sort_all(&lines, false, Method::Radix, 1 << 20), reference(&lines, false));
    }

    #[test]
    fn csv_pieces_start_at_records_whoever_walks_them() {
        // Records of several lines inside quotes: a piece may start only where a record does.
        let records: Vec<String> = (0..40_000).map(|i| format!("{i},\"a\n{}\",x\n", "b,\"\"".repeat(i % 5))).collect();
        let data = records.concat().into_bytes();
        let split = Splitter { terminator: b'\n', csv: Some(crate::csv::CsvDialect::with_separator(b',')) };
        let starts: Vec<usize> = records.iter().scan(0, |at, r| Some(std::mem::replace(at, *at + r.len()))).collect();
        for pieces in [1, 3, 8, 100] {
            let bounds = piece_bounds(&data, split, pieces);
            assert!(bounds.len() > 2 || pieces == 1, "{pieces}: {bounds:?}");
            assert!(bounds.windows(2).all(|w| w[0] < w[1]) && bounds[bounds.len() - 1] == data.len());
            assert!(bounds[..bounds.len() - 1].iter().all(|b| starts.binary_search(b).is_ok()), "{pieces}: {bounds:?}");
            // The cuts a walk of the ends makes, as the reader's check of a mapped input makes them.
            let mut cuts = PieceCuts::new(data.len(), pieces);
            split.ends(&data, 0).for_each(|e| cuts.see(e));
            assert_eq!(cuts.finish(), bounds, "{pieces}");
        }
    }

    #[test]
    fn entries_of_large_inputs_are_made_in_parallel_pieces() {
        let lines: Vec<Vec<u8>> = (0..200_000u32).map(|i| format!("{}", i % 977).into_bytes()).collect();
        let data: Vec<u8> = lines.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect();
        assert!(piece_bounds(&data, Splitter::lines(b'\n'), 8).len() > 2);
        assert_eq!(sort_all(&lines, true, Method::Radix, 4096), reference(&lines, true));
        let mut starts = AlignedBuf::new(4096).unwrap();
        let idx = Lines::index(&data, Splitter::lines(b'\n'), &mut starts).unwrap();
        assert_eq!(idx.line(199_999), format!("{}", 199_999 % 977).as_bytes());
    }
}
