//! Fixed-size records sorted in place: the path a rank takes when its range fits in its memory
//! (and records are not folded), instead of pushing everything into xsort's engine.
//!
//! The engine copies every byte it is given into fresh memory of its own; on a machine where the
//! first touch of fresh memory is costly (1-2.5 s per GiB on the development VM) that copy, of the
//! rank's whole range, cost more than the sort. Here a rank maps its share of the input and never
//! copies the records it keeps; only the records sent to other ranks are copied (into reused send
//! buffers) and the ones received land, by `MPI_Ialltoallv`, straight at their final place in one
//! receive buffer laid out by source. Entries (the key's normalized prefix and a 64-bit location,
//! as xsort's engine makes them) are sorted by xsort's kernels, ties of a longer key by the full
//! key, and the output is gathered from the mapping and the receive buffer into the range writer.
//!
//! A record's location is its global input position when it is kept; a received record from
//! source `s` is placed at `start(s) + (its offset in s's piece)`, which lies inside `s`'s own
//! share and follows the order `s` read it in. So locations grow with global input position, and
//! sorting entries as integers is stable across ranks, as the engine's offsets are within one.
//!
//! The ranks first count what goes where (a pass over the share, which also makes the kept
//! records' entries), exchange the counts, and agree that every rank's range, its entries and the
//! kernel's scratch fit in half its `-S` (what the engine's local sort would get): otherwise they
//! all take the engine's streaming path.

use crate::comm::{wait_politely, Comm, SPARE};
use crate::exchange::ExchangeStats;
use crate::output::{RangeWriter, Target};
use crate::share::{MappedSegment, Share};
use crate::split::Splitters;
use anyhow::{Context, Result};
use mpi::datatype::{Partition, PartitionMut};
use mpi::traits::*;
use mpi::Count;
use std::cmp::Ordering;
use std::time::Instant;
use xsort_core::key::ResolvedKey;
use xsort_kernels::prefetch::{prefetch_record, GATHER_AHEAD};

/// Records whose destination one rank can name (the destinations are kept as u16).
pub const MAX_RANKS: usize = 1 << 16;

/// The kept records counted and their entries made; the state between counting and exchanging.
pub struct InPlace<'a> {
    comm: &'a Comm,
    key: &'a ResolvedKey,
    r: usize,
    maps: Vec<MappedSegment>,
    /// Each rank's share as global positions `[start, start + len)`.
    starts: Vec<u64>,
    lens: Vec<u64>,
    /// Each share record's destination rank.
    dest: Fresh<u16>,
    /// Bytes this rank sends to each rank (its own: what it keeps).
    outgoing: Vec<u64>,
    /// Bytes it receives from each rank (its own: 0).
    incoming: Vec<u64>,
    /// Where the records from other ranks land, each source's piece after the lower sources'.
    recv: Fresh<u8>,
    /// The entries: the kept records' first, then the received ones'.
    entries: Fresh<u128>,
    kept: usize,
    prefix_bytes: usize,
    offset_bits: u32,
    pub stats: ExchangeStats,
    /// Seconds sorting the entries and gathering the records, interleaved.
    pub sort_s: f64,
}

impl<'a> InPlace<'a> {
    /// Maps the share, counts where its records go and makes the kept ones' entries, then agrees
    /// with the other ranks whether every range fits in `memory` bytes. Collective; None (on every
    /// rank) when any rank cannot map its share or would not fit.
    pub fn count(comm: &'a Comm, key: &'a ResolvedKey, r: usize, share: &Share, splitters: &Splitters, memory: u64) -> Option<InPlace<'a>> {
        let started = Instant::now();
        let (n, me) = (comm.ranks, comm.rank);
        let maps = if n <= MAX_RANKS && r > 0 { share.map() } else { None };
        let start = maps.as_ref().and_then(|m| m.first()).map_or(0, |m| m.global);
        let (starts, lens) = (comm.all_gather(start), comm.all_gather(share.len()));
        if comm.any(maps.is_none()).is_some() {
            return None;
        }
        let maps = maps?;
        // Locations are global positions: as many low bits as the job's input needs.
        let end = starts.iter().zip(&lens).map(|(s, l)| s + l).max().unwrap_or(0);
        let offset_bits = 64 - end.max(2).saturating_sub(1).leading_zeros();
        let prefix_bytes = key.len().min((128 - offset_bits as usize) / 8);
        let records = (share.len() / r as u64) as usize;
        let total_records = (end / r as u64) as usize;
        let arrays = Fresh::<u16>::new(records).and_then(|d| Ok((d, Fresh::<u128>::new(total_records)?)));
        if comm.any(arrays.is_err()).is_some() {
            return None;
        }
        let (mut dest, mut entries) = arrays.ok()?;
        let mut outgoing = vec![0u64; n];
        let mut kept = 0;
        // The splitters' order (`Splitters::rank_of`), decided by the key prefixes the entries
        // hold where they differ (most records): the full key and position only where they are equal.
        let (items, by_position) = splitters.items();
        let splits: Vec<(u128, &[u8], u64)> = items.iter().map(|(it, pos)| (key.prefix(it, prefix_bytes), &it[..], *pos)).collect();
        let exact = key.len() <= prefix_bytes;
        let below = |s: &(u128, &[u8], u64), p: u128, rec: &[u8], pos: u64| {
            let o = s.0.cmp(&p).then_with(|| if exact { Ordering::Equal } else { key.compare(s.1, rec) });
            (if by_position { o.then(s.2.cmp(&pos)) } else { o }) == Ordering::Less
        };
        {
            let (d, e) = (dest.as_mut_slice(), entries.as_mut_slice());
            let mut i = 0;
            for m in &maps {
                for (j, rec) in m.data().chunks_exact(r).enumerate() {
                    let pos = m.global + (j * r) as u64;
                    let p = key.prefix(rec, prefix_bytes);
                    let to = splits.partition_point(|s| below(s, p, rec, pos));
                    d[i] = to as u16;
                    outgoing[to] += r as u64;
                    if to == me {
                        e[kept] = p | pos as u128;
                        kept += 1;
                    }
                    i += 1;
                }
            }
        }
        let mut incoming = comm.all_to_all(&outgoing);
        incoming[me] = 0;
        let received: u64 = incoming.iter().sum();
        // What the range holds (its kept records mapped, the received ones in the buffer), its
        // entries and the kernel's scratch, and the destinations: within the half of `-S` that the
        // engine's local sort would have (the exchange's buffers are in the other half).
        let mine = (kept as u64 + received / r as u64) * 32 + outgoing[me] + received + 2 * records as u64;
        // The receive buffer is made before the ranks agree, so that nothing can fail between
        // that agreement and the end of the rounds (a rank leaving the collectives would hang them).
        let recv =
            if mine <= memory / 2 && received < Count::MAX as u64 { Fresh::<u8>::populated(received as usize + SPARE).ok() } else { None };
        if comm.any(recv.is_none()).is_some() {
            return None;
        }
        let recv = recv?;
        let counted = started.elapsed().as_secs_f64();
        let stats = ExchangeStats { input_bytes: share.len(), input_s: counted, count_s: counted, ..Default::default() };
        Some(InPlace {
            comm,
            key,
            r,
            maps,
            starts,
            lens,
            dest,
            outgoing,
            incoming,
            recv,
            entries,
            kept,
            prefix_bytes,
            offset_bits,
            stats,
            sort_s: 0.0,
        })
    }

    /// Bytes of this rank's range.
    pub fn size(&self) -> u64 {
        self.outgoing[self.comm.rank] + self.incoming.iter().sum::<u64>()
    }

    /// Sends the records that go to other ranks in rounds of about `chunk` bytes of the share and
    /// receives theirs, and makes the received records' entries. Collective: the rounds cannot
    /// fail, and an error after them is for the ranks to agree on.
    pub fn exchange(&mut self, share: &Share, chunk: usize) -> Result<()> {
        let started = Instant::now();
        let comm = self.comm;
        let (n, me, r) = (comm.ranks, comm.rank, self.r);
        let per_round = (chunk / r).max(1);
        let records = self.dest.len();
        let rounds = comm.all_gather(records.div_ceil(per_round) as u64).into_iter().max().unwrap_or(0) as usize;
        let mut recv = std::mem::replace(&mut self.recv, Fresh::empty());
        // Each source's piece of the receive buffer, filled in the order it sends.
        let mut at: Vec<u64> = self.incoming.iter().scan(0, |acc, &c| Some(std::mem::replace(acc, *acc + c))).collect();
        let bases = at.clone();
        let mut send = [Packed::new(n), Packed::new(n)];
        let fault = std::env::var("XSORT_MPI_FAULT").ok();
        let mut cursor = Cursor::default();
        let t = Instant::now();
        send[0].pack(self, &mut cursor, per_round);
        self.stats.input_s += t.elapsed().as_secs_f64();
        for round in 0..rounds {
            let cur = round % 2;
            let t = Instant::now();
            let counts = comm.all_to_all(&send[cur].counts);
            self.stats.wait_s += t.elapsed().as_secs_f64();
            let rcounts: Vec<Count> = counts.iter().map(|&c| c as Count).collect();
            let rdispls: Vec<Count> = at.iter().map(|&a| a as Count).collect();
            let scounts: Vec<Count> = send[cur].counts.iter().map(|&c| c as Count).collect();
            let sdispls: Vec<Count> = scounts.iter().scan(0, |acc, &c| Some(std::mem::replace(acc, *acc + c))).collect();
            let [s0, s1] = &mut send;
            let (this, next) = if cur == 0 { (&*s0, s1) } else { (&*s1, s0) };
            let sendp = Partition::new(&this.data[..], &scounts[..], &sdispls[..]);
            let mut recvp = PartitionMut::new(recv.as_mut_slice(), &rcounts[..], &rdispls[..]);
            mpi::request::scope(|scope| {
                let req = comm.world.immediate_all_to_all_varcount_into(scope, &sendp, &mut recvp);
                // Fault injection for the tests: the input cut short in the middle of the exchange.
                if fault.as_deref() == Some(&format!("shrink:{me}:{round}")) {
                    share.shrink_at((cursor.record * r) as u64);
                }
                let t = Instant::now();
                if round + 1 < rounds {
                    next.pack(self, &mut cursor, per_round);
                }
                self.stats.input_s += t.elapsed().as_secs_f64();
                let t = Instant::now();
                wait_politely(req);
                self.stats.wait_s += t.elapsed().as_secs_f64();
            });
            for s in 0..n {
                at[s] += counts[s];
                if s != me {
                    self.stats.sent_bytes += this.counts[s];
                    self.stats.received_bytes += counts[s];
                }
            }
            self.stats.rounds += 1;
        }
        anyhow::ensure!(cursor.record == records, "the exchange sent {} of {records} records", cursor.record);
        for s in 0..n {
            anyhow::ensure!(at[s] == bases[s] + self.incoming[s], "rank {s} sent {} bytes of {}", at[s] - bases[s], self.incoming[s]);
        }
        self.stats.kept_bytes = self.outgoing[me];
        self.stats.elapsed_s = started.elapsed().as_secs_f64();
        let moved = (self.stats.sent_bytes + self.stats.received_bytes) as f64;
        self.stats.mb_per_s = if self.stats.wait_s > 0.0 { moved / 1e6 / self.stats.wait_s } else { 0.0 };
        self.dest = Fresh::empty();
        self.recv = recv;

        // The received records' entries, after the kept ones'.
        let t = Instant::now();
        let mut e = self.kept;
        let mut all = std::mem::replace(&mut self.entries, Fresh::empty());
        let entries = all.as_mut_slice();
        for s in (0..n).filter(|&s| s != me) {
            let piece = &self.recv.as_slice()[bases[s] as usize..(bases[s] + self.incoming[s]) as usize];
            for (j, rec) in piece.chunks_exact(r).enumerate() {
                entries[e] = self.key.prefix(rec, self.prefix_bytes) | (self.starts[s] + (j * r) as u64) as u128;
                e += 1;
            }
        }
        debug_assert_eq!(e, self.kept + (self.incoming.iter().sum::<u64>() / r as u64) as usize);
        self.entries = all;
        self.stats.input_s += t.elapsed().as_secs_f64();
        Ok(())
    }

    /// Sorts the range's entries on `threads` threads and writes the range at `offset` of
    /// `target`, each piece of the sorted entries gathered as soon as it is final (the kernel
    /// hands them over in order), so the page writer's direct writes overlap the rest of the sort.
    /// Sets `sort_s` to the seconds of the whole and adds those spent gathering to `pull_s`. Fails
    /// if an input shrank while it was mapped.
    pub fn sort_and_write(&mut self, target: &Target, offset: u64, threads: usize, pull_s: &mut f64) -> Result<()> {
        let t = Instant::now();
        let r = self.r;
        let count = self.kept + (self.incoming.iter().sum::<u64>() / r as u64) as usize;
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build().context("cannot start the sort's threads")?;
        let mut scratch = Fresh::<u128>::populated(count)?;
        let mut all = std::mem::replace(&mut self.entries, Fresh::empty());
        let (key, prefix_bytes) = (self.key, self.prefix_bytes);
        let exact = key.len() <= prefix_bytes;
        let bases: Vec<u64> = self.incoming.iter().scan(0, |acc, &c| Some(std::mem::replace(acc, *acc + c))).collect();
        let locate = Locate::new(self, &bases);
        RangeWriter::run(target, offset, crate::job::OUT_BLOCK, r, |out| {
            let mut failed = None;
            pool.install(|| {
                let (entries, scratch) = (&mut all.as_mut_slice()[..count], scratch.as_mut_slice());
                xsort_kernels::sort_entries_in_pieces(xsort_kernels::Method::Radix, entries, scratch, prefix_bytes.max(1), |piece, _| {
                    if failed.is_some() {
                        return;
                    }
                    if !exact {
                        // Equal prefixes (never split across pieces): the full key, then the
                        // location (input order).
                        for g in xsort_kernels::equal_prefix_runs(piece, (prefix_bytes * 8) as u32) {
                            piece[g].sort_unstable_by(|&a, &b| {
                                let (la, lb) = (locate.location(a), locate.location(b));
                                key.compare(locate.record(la), locate.record(lb)).then(la.cmp(&lb))
                            });
                        }
                    }
                    let g = Instant::now();
                    let gathered = gather(&locate, piece, out);
                    *pull_s += g.elapsed().as_secs_f64();
                    if let Err(e) = gathered {
                        failed = Some(e);
                    }
                });
            });
            failed.map_or(Ok(()), Err)
        })?;
        drop(locate);
        self.entries = all;
        self.sort_s = t.elapsed().as_secs_f64();
        for m in &self.maps {
            m.check()?;
        }
        Ok(())
    }
}

/// Copies the records of `entries`, in order, into the range writer.
fn gather(locate: &Locate, entries: &[u128], out: &mut RangeWriter) -> Result<()> {
    let r = locate.r;
    let mut i = 0;
    while i < entries.len() {
        let space = out.space();
        let m = (space.len() / r).min(entries.len() - i);
        anyhow::ensure!(m > 0, "no room for a record in the output buffer");
        for (j, dst) in space[..m * r].chunks_exact_mut(r).enumerate() {
            if let Some(&ahead) = entries.get(i + j + GATHER_AHEAD) {
                prefetch_record(locate.record(locate.location(ahead)), 0, r);
            }
            dst.copy_from_slice(locate.record(locate.location(entries[i + j])));
        }
        out.filled(m * r)?;
        i += m;
    }
    Ok(())
}

/// Finds a record by its location: in the mapped share, or in the receive buffer.
struct Locate<'b> {
    maps: &'b [MappedSegment],
    mine: (u64, u64),
    /// The sources that sent something: their share's start and their piece in `recv`.
    sources: Vec<(u64, usize)>,
    recv: &'b [u8],
    mask: u128,
    r: usize,
}

impl<'b> Locate<'b> {
    fn new(p: &'b InPlace, bases: &[u64]) -> Locate<'b> {
        let me = p.comm.rank;
        let sources = (0..p.comm.ranks).filter(|&s| s != me && p.incoming[s] > 0).map(|s| (p.starts[s], bases[s] as usize)).collect();
        Locate {
            maps: &p.maps,
            mine: (p.starts[me], p.lens[me]),
            sources,
            recv: p.recv.as_slice(),
            mask: (1u128 << p.offset_bits) - 1,
            r: p.r,
        }
    }

    #[inline]
    fn location(&self, e: u128) -> u64 {
        (e & self.mask) as u64
    }

    #[inline]
    fn record(&self, l: u64) -> &'b [u8] {
        if l.wrapping_sub(self.mine.0) < self.mine.1 {
            let m = if self.maps.len() == 1 { &self.maps[0] } else { &self.maps[self.maps.partition_point(|m| m.global <= l) - 1] };
            let at = (l - m.global) as usize;
            return &m.data()[at..at + self.r];
        }
        let (start, base) =
            if self.sources.len() == 1 { self.sources[0] } else { self.sources[self.sources.partition_point(|s| s.0 <= l) - 1] };
        let at = base + (l - start) as usize;
        &self.recv[at..at + self.r]
    }
}

/// Where the packing has reached: the share's record, its segment and the record in it.
#[derive(Default)]
struct Cursor {
    record: usize,
    segment: usize,
    in_segment: usize,
}

/// One round's records for the other ranks, back to back by destination (reused across rounds).
struct Packed {
    data: Vec<u8>,
    counts: Vec<u64>,
}

impl Packed {
    fn new(n: usize) -> Packed {
        Packed { data: vec![0u8; SPARE], counts: vec![0; n] }
    }

    /// Packs the next `per_round` records of the share that go to other ranks.
    fn pack(&mut self, p: &InPlace, cursor: &mut Cursor, per_round: usize) {
        let (r, me) = (p.r, p.comm.rank);
        let dest = p.dest.as_slice();
        let end = (cursor.record + per_round).min(dest.len());
        let mut sizes = vec![0usize; self.counts.len()];
        for &d in &dest[cursor.record..end] {
            sizes[d as usize] += r;
        }
        sizes[me] = 0;
        let total: usize = sizes.iter().sum();
        if self.data.len() < total + SPARE {
            self.data.resize(total + SPARE, 0);
        }
        let mut at: Vec<usize> = sizes.iter().scan(0, |acc, &c| Some(std::mem::replace(acc, *acc + c))).collect();
        while cursor.record < end {
            let data = p.maps[cursor.segment].data();
            let here = (data.len() / r - cursor.in_segment).min(end - cursor.record);
            let recs = &data[cursor.in_segment * r..(cursor.in_segment + here) * r];
            for (rec, &d) in recs.chunks_exact(r).zip(&dest[cursor.record..cursor.record + here]) {
                let d = d as usize;
                if d != me {
                    self.data[at[d]..at[d] + r].copy_from_slice(rec);
                    at[d] += r;
                }
            }
            cursor.record += here;
            cursor.in_segment += here;
            if cursor.in_segment * r >= data.len() {
                cursor.segment += 1;
                cursor.in_segment = 0;
            }
        }
        self.counts = sizes.into_iter().map(|c| c as u64).collect();
    }
}

/// Plain-data types that anonymous memory (all zeros) holds validly.
pub trait Zeroed: Copy {}
impl Zeroed for u8 {}
impl Zeroed for u16 {}
impl Zeroed for u128 {}

/// A large array in anonymous memory of its own. Untouched, it costs nothing (no reservation), so
/// it can be made for the most it may hold. (Advised to use huge pages, the receive buffer cost
/// more here, not less: 1.45 s of system time for the job against 0.62 s.)
pub struct Fresh<T: Zeroed> {
    ptr: *mut T,
    len: usize,
    bytes: usize,
}

impl<T: Zeroed> Fresh<T> {
    pub fn new(len: usize) -> Result<Fresh<T>> {
        Fresh::mapped(len, 0)
    }

    /// An array whose pages the kernel makes at once (`MAP_POPULATE`): for one that is written
    /// whole, it saves a fault per page, and moves that cost out of the phase that writes it (the
    /// receive buffer's out of the time blocked in MPI).
    pub fn populated(len: usize) -> Result<Fresh<T>> {
        Fresh::mapped(len, libc::MAP_POPULATE)
    }

    fn mapped(len: usize, flags: libc::c_int) -> Result<Fresh<T>> {
        let bytes = len.max(1).checked_mul(std::mem::size_of::<T>()).context("an array too large for memory")?;
        // SAFETY: a private anonymous mapping, no address hint; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | flags,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            anyhow::bail!("cannot allocate {bytes} bytes: {}", xsort_io::error::os_text(&std::io::Error::last_os_error()));
        }
        // SAFETY: advice on the mapping just made; a refusal (no THP) changes nothing.
        Ok(Fresh { ptr: p as *mut T, len, bytes })
    }

    /// An empty array, made without a system call (it cannot fail).
    pub fn empty() -> Fresh<T> {
        Fresh { ptr: std::ptr::NonNull::dangling().as_ptr(), len: 0, bytes: 0 }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the mapping holds `len` zero-initialised or written values of a plain-data type
        // for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as above, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

// SAFETY: the mapping is owned by this value alone; access follows Rust's borrows of it.
unsafe impl<T: Zeroed + Send> Send for Fresh<T> {}
// SAFETY: see above.
unsafe impl<T: Zeroed + Sync> Sync for Fresh<T> {}

impl<T: Zeroed> Drop for Fresh<T> {
    fn drop(&mut self) {
        if self.bytes == 0 {
            return; // `empty`: nothing mapped
        }
        // SAFETY: unmapping exactly the mapping made in `new`; no slice of it outlives self.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.bytes) };
    }
}
