//! Fixed-size records sorted in place: the path a rank takes when records are not folded and its
//! share, the share's index and the rounds' buffers fit in half its memory, instead of pushing
//! everything into xsort's engine.
//!
//! The engine copies every byte it is given into fresh memory of its own; on a machine where the
//! first touch of fresh memory is costly (0.5-2.5 s per GiB on the development VMs) that copy of a
//! rank's whole range cost more than the sort. Here a rank maps its share of the input and never
//! copies the records it keeps, and the records it sends and receives pass through a few buffers
//! of a round's size that every round reuses.
//!
//! Each rank's key range is cut into `subs` sub-ranges by finer splitters (every `subs`-th one is
//! a rank boundary, the splitter the engine's path would use), so the job has `ranks * subs`
//! buckets in key order. A counting pass over the share finds each record's bucket and lists the
//! share's records bucket by bucket, in input order; the ranks then swap how many records each
//! sends each in every round, so each knows its range's size (its offset in the output) and every
//! round's counts before the first round. Round `k` moves sub-range `k` of every rank: each rank
//! sends every other rank the records of that rank's `k`-th bucket (`MPI_Ialltoallv`, see
//! [`InFlight`]), and while rounds `k + 1` and `k + 2` are in flight it sorts its own sub-range
//! `k` (the kept and received records, where they lie, by xsort-core's in-memory sort of records
//! in several pieces, [`RecordPieces::sort`]) and gathers it into the range writer, whose direct
//! writes run behind. So the exchange, the sort and the write overlap, and the output starts after
//! one round rather than after the whole exchange.
//!
//! A round's records are numbered in input order: its pieces (the rank's own, and each sender's,
//! which that sender listed in its input order) by the global position they start from. The
//! sort keeps records with equal keys in number order, so it is stable across ranks, as the
//! engine's is within one.
//!
//! Nothing in the rounds stops a rank from taking part in every round: a failed write (or a
//! writer that could not start) ends its sorting and writing, not its sends and receives, and the
//! error is returned after the last round for the ranks to agree on.

use crate::comm::{Comm, SPARE};
use crate::exchange::ExchangeStats;
use crate::fresh::Fresh;
use crate::inflight::{InFlight, Layout};
use crate::output::{RangeWriter, Target, WritePlan};
use crate::share::{MappedSegment, Share};
use crate::split::{Sample, Splitters};
use anyhow::Result;
use mpi::Count;
use std::cmp::Ordering;
use std::collections::VecDeque;

use std::time::Instant;
use xsort_core::key::ResolvedKey;
use xsort_core::pieces::{RecordPieces, SortedPieces};
use xsort_core::{Order, RecordFilter};
use xsort_kernels::prefetch::{prefetch_record, GATHER_AHEAD};

/// Buckets (sub-ranges of all ranks) a record's bucket number can name: they are kept as u16.
pub const MAX_BUCKETS: usize = 1 << 16;

/// Bytes of a rank's range that one round aims to move, sort and write.
const ROUND_BYTES: u64 = 8 << 20;

/// Rounds a rank has buffers for: the one it sorts and writes, and the ones in flight meanwhile.
/// With two (one round in flight) a rank whose round took longer (its writes waiting on the disk)
/// held up the other at once: 8 alternating pairs of 10^7-record `-np 2` jobs on the development
/// VM, medians 1.28 s against 1.16 s with three, the exchange 2.1 against 2.5 GB/s. Four, or six
/// slots of half the size, gained nothing more: what is left is one rank slower over the whole job.
const SLOTS: usize = 3;

/// Sub-ranges a rank's range is cut into at least, so that even a small range overlaps its
/// exchange with its sort and write.
const MIN_SUBS: usize = 4;

/// Sub-ranges at most: each takes a share of the samples the splitters are chosen from (4,096 a
/// rank: 16 a bucket at this many).
const MAX_SUBS: usize = 256;

/// Records gathered between two looks at the round in flight: Open MPI moves a message only while
/// a rank calls into it, so the rank polls its round while it sorts and writes the one before.
const POLL_RECORDS: usize = 4096;

/// How many sub-ranges each rank's range is cut into, for a job of `total` input bytes on `ranks`
/// ranks (the same on every rank).
pub fn sub_ranges(total: u64, ranks: usize) -> usize {
    let per_rank = total / ranks.max(1) as u64;
    let want = usize::try_from(per_rank / ROUND_BYTES).unwrap_or(MAX_SUBS);
    want.clamp(MIN_SUBS, MAX_SUBS).min(MAX_BUCKETS / ranks.max(1)).max(1)
}

/// The share counted and indexed, with the rounds' buffers; the state between counting and the
/// rounds.
pub struct InPlace<'a> {
    plan: Plan<'a>,
    bufs: Buffers,
    pub stats: ExchangeStats,
    /// Seconds making the sub-ranges' entries and sorting them.
    pub sort_s: f64,
    /// Seconds gathering the sorted records into the range writer (waits for its writes included).
    pub gather_s: f64,
    /// How the range writer buffers and writes.
    pub writes: WritePlan,
}

/// What the counting pass found: where every record goes, round by round.
struct Plan<'a> {
    comm: &'a Comm,
    key: &'a ResolvedKey,
    r: usize,
    maps: Vec<MappedSegment>,
    /// The share's record number that each map starts at.
    map_first: Vec<usize>,
    /// Where each rank's share starts, as a global position.
    starts: Vec<u64>,
    subs: usize,
    /// The share's record numbers bucket by bucket (bucket `rank * subs + sub`), in input order
    /// within each.
    index: Fresh<u32>,
    /// Where each bucket's record numbers start in `index`, then where the last one ends.
    bucket_at: Vec<usize>,
    /// Records this rank gets from each rank in each round, at `rank * subs + round` (from itself:
    /// the ones it keeps).
    incoming: Vec<u64>,
    pool: rayon::ThreadPool,
}

/// The rounds' buffers, made before the ranks agree to go on, so that the rounds make none.
struct Buffers {
    /// [`SLOTS`] rounds' records packed by destination, the rank's own piece among them (it is
    /// not sent): the round being sorted from its buffer, the next ones going out.
    send: Vec<Fresh<u8>>,
    /// [`SLOTS`] rounds' records from the other ranks: one being sorted while the next arrive.
    recv: Vec<Fresh<u8>>,
    /// A round's sort entries (narrow or wide, see [`RecordPieces::sort`]) and the kernel's scratch.
    entries: Fresh<u128>,
    scratch: Fresh<u128>,
}

impl<'a> InPlace<'a> {
    /// Maps the share, chooses `subs` sub-ranges a rank from `samples` (every rank's), finds each
    /// record's bucket and swaps the counts, then agrees with the other ranks whether every rank's
    /// share, index and buffers fit in half of `memory` (what the engine's local sort would have).
    /// Collective; None (on every rank) when any rank cannot map its share or would not fit.
    /// Records `keep` refuses (Nsort's `-include` / `-omit`) are in no bucket: never sent, sorted
    /// or written.
    #[allow(clippy::too_many_arguments)]
    pub fn count(
        comm: &'a Comm,
        (key, keep): (&'a ResolvedKey, Option<&RecordFilter>),
        order: &Order,
        r: usize,
        share: &Share,
        samples: Vec<Sample>,
        memory: u64,
        threads: usize,
    ) -> Option<InPlace<'a>> {
        let started = Instant::now();
        let n = comm.ranks;
        let records = usize::try_from(share.len() / r.max(1) as u64).unwrap_or(usize::MAX);
        // The mapped share and its index must fit whatever the rounds' buffers come to: a share
        // that cannot is not read twice (counted, then pushed into the engine).
        let index_fits = share.len().saturating_add((records as u64).saturating_mul(6)) <= memory / 2;
        let maps = if r > 0 && records <= u32::MAX as usize && index_fits { share.map() } else { None };
        let start = maps.as_ref().and_then(|m| m.first()).map_or(0, |m| m.global);
        let (starts, lens) = (comm.all_gather(start), comm.all_gather(share.len()));
        let subs = sub_ranges(lens.iter().sum(), n);
        // A record no bucket takes is marked by the largest bucket number, which is then not one.
        let buckets = if keep.is_some() { MAX_BUCKETS - 1 } else { MAX_BUCKETS };
        if comm.any(maps.is_none()).is_some() || n * subs > buckets {
            return None;
        }
        let maps = maps?;
        let mut map_first = Vec::with_capacity(maps.len());
        maps.iter().fold(0, |at, m| {
            map_first.push(at);
            at + m.data().len() / r
        });
        // The bucket finder compares key prefixes as long as an entry holds beside a global
        // position of this job's input.
        let end = starts.iter().zip(&lens).map(|(s, l)| s + l).max().unwrap_or(0);
        let offset_bits = 64 - end.max(2).saturating_sub(1).leading_zeros();
        let prefix_bytes = key.len().min((128 - offset_bits as usize) / 8);
        let arrays = Fresh::<u16>::new(records).and_then(|d| Ok((d, Fresh::<u32>::new(records)?)));
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build();
        if comm.any(arrays.is_err() || pool.is_err()).is_some() {
            return None;
        }
        let ((mut bucket_of, mut index), pool) = (arrays.ok()?, pool.ok()?);
        let splitters = Splitters::choose(order.clone(), true, samples, n * subs);
        let finder = BucketFinder::new(key, &splitters, prefix_bytes);
        let (counts, bucket_at) = index_by_bucket(&maps, (r, keep), &finder, n * subs, bucket_of.as_mut_slice(), index.as_mut_slice());
        drop(bucket_of);
        let incoming = comm.all_to_all(&counts);
        let plan = Plan { comm, key, r, maps, map_first, starts, subs, index, bucket_at, incoming, pool };
        // The share stays mapped (it counts, as the engine's copy would), its index, the rounds'
        // buffers, and the range writer's blocks (one filling, the others in flight).
        let (send, recv, entries) = plan.largest_round();
        let writes = WritePlan::for_memory(memory);
        let need = share.len() + 6 * records as u64 + SLOTS as u64 * (send + recv) + 32 * entries as u64 + writes.bytes(r);
        let bufs = if need <= memory / 2 && send.max(recv) < Count::MAX as u64 { Buffers::new(send, recv, entries).ok() } else { None };
        if comm.any(bufs.is_none()).is_some() {
            return None;
        }
        let counted = started.elapsed().as_secs_f64();
        let stats = ExchangeStats { input_bytes: share.len(), input_s: counted, count_s: counted, ..Default::default() };
        Some(InPlace { plan, bufs: bufs?, stats, sort_s: 0.0, gather_s: 0.0, writes })
    }

    /// Bytes of this rank's range.
    pub fn size(&self) -> u64 {
        self.plan.incoming.iter().sum::<u64>() * self.plan.r as u64
    }

    /// The rounds: exchanges, sorts and writes the range at `offset` of `target`. Collective: the
    /// rank takes part in every round whatever fails on it, and returns the first failure after the
    /// last round (an input that shrank while mapped first), for the ranks to agree on.
    pub fn run(&mut self, share: &Share, target: &Target, offset: u64) -> Result<()> {
        let started = Instant::now();
        let mut began = false;
        let written = RangeWriter::run(target, offset, self.writes, self.plan.r, |out| {
            began = true;
            self.rounds(share, Some(out))
        });
        if !began {
            // The writer could not start: the rank still sends and receives its part.
            let _ = self.rounds(share, None);
        }
        self.stats.elapsed_s = self.stats.count_s + started.elapsed().as_secs_f64();
        let moved = (self.stats.sent_bytes + self.stats.received_bytes) as f64;
        self.stats.mb_per_s = if self.stats.wait_s > 0.0 { moved / 1e6 / self.stats.wait_s } else { 0.0 };
        for m in &self.plan.maps {
            m.check()?;
        }
        written
    }

    /// Every round, in order; sorts and writes into `out` while nothing has failed. Round `k`
    /// uses slot `k % slots` of the send and receive buffers; while a rank sorts and writes round
    /// `k`, the next `slots - 1` rounds are in flight, so a rank held up for a round (its writes
    /// waiting on the disk) does not hold up the others at once.
    fn rounds(&mut self, share: &Share, mut out: Option<&mut RangeWriter>) -> Result<()> {
        let InPlace { plan, bufs, stats, sort_s, gather_s, .. } = self;
        let Buffers { send, recv, entries, scratch } = bufs;
        let (subs, me, slots) = (plan.subs, plan.comm.rank, send.len());
        let shrink = std::env::var("XSORT_MPI_FAULT").ok().and_then(|f| f.strip_prefix(&format!("shrink:{me}:"))?.parse::<usize>().ok());
        let mut failed: Option<anyhow::Error> = None;
        let (mut pack_s, mut wait_s) = (0.0, 0.0);
        // The rounds in flight, oldest first. Each is waited for before its slot is used again,
        // and all of them before the buffers are dropped (the queue is dropped first, and a round
        // dropped in flight ends the job).
        let mut flight: VecDeque<InFlight> = VecDeque::with_capacity(slots);
        let test = |flight: &mut VecDeque<InFlight>, wait_s: &mut f64| {
            let t = Instant::now();
            // Testing the oldest round not yet arrived moves every round along.
            flight.iter_mut().all(InFlight::test);
            *wait_s += t.elapsed().as_secs_f64();
        };
        for k in 0..subs.min(slots) {
            let t = Instant::now();
            plan.pack(k, &mut send[k]);
            pack_s += t.elapsed().as_secs_f64();
            // SAFETY: slot k is not touched again before round k has been waited for (below).
            flight.push_back(unsafe { plan.start(k, &send[k], &mut recv[k], stats) });
            test(&mut flight, &mut wait_s);
        }
        for k in 0..subs {
            let slot = k % slots;
            let t = Instant::now();
            flight.pop_front().expect("every round is started before it is sorted").wait();
            wait_s += t.elapsed().as_secs_f64();
            if shrink == Some(k) {
                // Fault injection for the tests: the input cut short in the middle of the rounds.
                share.shrink_at(share.len() / 2);
            }
            if let (None, Some(out)) = (&failed, out.as_deref_mut()) {
                let mut poll = || test(&mut flight, &mut wait_s);
                let records = plan.round_records(k, &send[slot].as_slice()[plan.own_piece(k)], recv[slot].as_slice());
                let t = Instant::now();
                let (entries, scratch) = (entries.as_mut_slice(), scratch.as_mut_slice());
                let sorted = plan.pool.install(|| records.sort(plan.key, entries, scratch));
                *sort_s += t.elapsed().as_secs_f64();
                poll();
                let t = Instant::now();
                let written = gather(&sorted, &records, plan.r, out, &mut poll);
                if let Err(e) = written {
                    failed = Some(e);
                }
                *gather_s += t.elapsed().as_secs_f64();
            }
            if k + slots < subs {
                let t = Instant::now();
                plan.pack(k + slots, &mut send[slot]);
                pack_s += t.elapsed().as_secs_f64();
                // SAFETY: round k, the slot's last user, has arrived and is done with; the slot is
                // not touched again before round k + slots has been waited for.
                flight.push_back(unsafe { plan.start(k + slots, &send[slot], &mut recv[slot], stats) });
            }
        }
        stats.input_s += pack_s;
        stats.wait_s += wait_s;
        failed.map_or(Ok(()), Err)
    }
}

impl Plan<'_> {
    /// The share's record number `i`.
    #[inline]
    fn record(&self, i: u32) -> &[u8] {
        let i = i as usize;
        let m = if self.maps.len() == 1 { 0 } else { self.map_first.partition_point(|&f| f <= i) - 1 };
        let at = (i - self.map_first[m]) * self.r;
        &self.maps[m].data()[at..at + self.r]
    }

    /// The record numbers of bucket `sub` of `rank`.
    fn bucket(&self, rank: usize, sub: usize) -> &[u32] {
        let b = rank * self.subs + sub;
        &self.index.as_slice()[self.bucket_at[b]..self.bucket_at[b + 1]]
    }

    /// Bytes of each rank's piece of round `k` in this rank's send buffer (its own: what it keeps).
    fn pieces(&self, k: usize) -> Vec<u64> {
        (0..self.comm.ranks).map(|d| (self.bucket(d, k).len() * self.r) as u64).collect()
    }

    /// Where this rank's own piece of round `k` lies in its send buffer.
    fn own_piece(&self, k: usize) -> std::ops::Range<usize> {
        let me = self.comm.rank;
        let at = self.pieces(k)[..me].iter().sum::<u64>() as usize;
        at..at + self.bucket(me, k).len() * self.r
    }

    /// Bytes this rank receives from each rank in round `k` (none from itself: its own piece stays
    /// in its send buffer).
    fn recv_counts(&self, k: usize) -> Vec<u64> {
        let me = self.comm.rank;
        (0..self.comm.ranks).map(|s| if s == me { 0 } else { self.incoming[s * self.subs + k] * self.r as u64 }).collect()
    }

    /// The most bytes packed and received in one round, and the most records sorted in one.
    fn largest_round(&self) -> (u64, u64, usize) {
        (0..self.subs).fold((0, 0, 0), |(s, r, e), k| {
            let sorted: u64 = (0..self.comm.ranks).map(|s| self.incoming[s * self.subs + k]).sum();
            (s.max(self.pieces(k).iter().sum()), r.max(self.recv_counts(k).iter().sum()), e.max(sorted as usize))
        })
    }

    /// Copies round `k`'s records into `send`, back to back by destination, its own piece too.
    fn pack(&self, k: usize, send: &mut Fresh<u8>) {
        let r = self.r;
        let buf = send.as_mut_slice();
        let mut at = 0;
        for d in 0..self.comm.ranks {
            let numbers = self.bucket(d, k);
            let out = &mut buf[at..at + numbers.len() * r];
            for (j, (&i, dst)) in numbers.iter().zip(out.chunks_exact_mut(r)).enumerate() {
                if let Some(&ahead) = numbers.get(j + GATHER_AHEAD) {
                    prefetch_record(self.record(ahead), 0, r);
                }
                dst.copy_from_slice(self.record(i));
            }
            at += numbers.len() * r;
        }
    }

    /// Starts moving round `k`: `send` to the other ranks, theirs into `recv`.
    ///
    /// # Safety
    /// `send` and `recv` are neither touched nor dropped before the returned transfer has
    /// completed (see [`InFlight::start`]).
    unsafe fn start(&self, k: usize, send: &Fresh<u8>, recv: &mut Fresh<u8>, stats: &mut ExchangeStats) -> InFlight {
        let displs = |c: &[Count]| -> Vec<Count> { c.iter().scan(0, |acc, &c| Some(std::mem::replace(acc, *acc + c))).collect() };
        let me = self.comm.rank;
        let (mut sent, received) = (self.pieces(k), self.recv_counts(k));
        let kept = std::mem::take(&mut sent[me]);
        let send_counts: Vec<Count> = sent.iter().map(|&c| c as Count).collect();
        let recv_counts: Vec<Count> = received.iter().map(|&c| c as Count).collect();
        // The pieces lie in the send buffer as packed, the rank's own among them (not sent).
        let mut send_displs = displs(&send_counts);
        for displ in &mut send_displs[me + 1..] {
            *displ += kept as Count;
        }
        let recv_displs = displs(&recv_counts);
        stats.sent_bytes += sent.iter().sum::<u64>();
        stats.received_bytes += received.iter().sum::<u64>();
        stats.kept_bytes += kept;
        stats.rounds += 1;
        let layout = Layout { send_counts, send_displs, recv_counts, recv_displs };
        // SAFETY: the buffers were made for the largest round (`largest_round`), so every piece
        // lies inside them; the caller keeps them as the contract says.
        unsafe { InFlight::start(&self.comm.world, send.as_slice().as_ptr(), recv.as_mut_slice().as_mut_ptr(), layout) }
    }

    /// Round `k`'s records, numbered in input order: its pieces (its own in `own`, the others' in
    /// `recv`) by the global position their records start from. Sorting them by number is then
    /// stable across ranks.
    fn round_records<'b>(&self, k: usize, own: &'b [u8], recv: &'b [u8]) -> RecordPieces<'b> {
        let mut pieces = vec![(self.starts[self.comm.rank], own)];
        let mut base = 0;
        for (s, len) in self.recv_counts(k).into_iter().enumerate() {
            pieces.push((self.starts[s], &recv[base..base + len as usize]));
            base += len as usize;
        }
        pieces.sort_unstable_by_key(|p| p.0);
        let mut records = RecordPieces::new(self.r);
        pieces.into_iter().for_each(|(_, piece)| records.push(piece));
        records
    }
}

impl Buffers {
    /// Buffers for rounds of at most `send` and `recv` bytes and `entries` records, their pages
    /// made now (every round writes them).
    fn new(send: u64, recv: u64, entries: usize) -> Result<Buffers> {
        let bytes = |n: u64| Fresh::<u8>::populated(n as usize + SPARE);
        Ok(Buffers {
            send: (0..SLOTS).map(|_| bytes(send)).collect::<Result<_>>()?,
            recv: (0..SLOTS).map(|_| bytes(recv)).collect::<Result<_>>()?,
            entries: Fresh::populated(entries)?,
            scratch: Fresh::populated(entries)?,
        })
    }
}

/// Finds each record's bucket (of `finder`, among `buckets`) into `bucket_of`, and indexes the
/// records by bucket: `index` holds their numbers bucket after bucket, in input order within each.
/// Returns the records each bucket has, and where each starts in `index` (the total at the end).
/// Records that `keep` refuses are in no bucket (marked `u16::MAX`, which `buckets` is then below).
fn index_by_bucket(
    maps: &[MappedSegment],
    (r, keep): (usize, Option<&RecordFilter>),
    finder: &BucketFinder,
    buckets: usize,
    bucket_of: &mut [u16],
    index: &mut [u32],
) -> (Vec<u64>, Vec<usize>) {
    const NONE: u16 = u16::MAX;
    let mut counts = vec![0u64; buckets];
    let mut i = 0;
    for m in maps {
        for (j, rec) in m.data().chunks_exact(r).enumerate() {
            bucket_of[i] = match keep {
                Some(k) if !k.keeps(rec) => NONE,
                _ => {
                    let bucket = finder.bucket(rec, m.global + (j * r) as u64);
                    counts[bucket] += 1;
                    bucket as u16
                }
            };
            i += 1;
        }
    }
    let mut bucket_at: Vec<usize> = counts.iter().scan(0, |acc, &c| Some(std::mem::replace(acc, *acc + c as usize))).collect();
    bucket_at.push(counts.iter().sum::<u64>() as usize);
    let mut at = bucket_at.clone();
    for (i, &b) in bucket_of.iter().enumerate().filter(|(_, &b)| keep.is_none() || b != NONE) {
        index[at[b as usize]] = i as u32;
        at[b as usize] += 1;
    }
    (counts, bucket_at)
}

/// Finds a record's bucket: how many splitters are below it in the splitters' order (the key, then
/// the global position). The top 16 bits of the key's prefix narrow the search to the splitters
/// that share them, for most records none (the bucket is known) or one.
struct BucketFinder<'s> {
    key: &'s ResolvedKey,
    prefix_bytes: usize,
    /// Each splitter's key prefix, bytes and global position.
    splits: Vec<(u128, &'s [u8], u64)>,
    /// Whether the prefix holds the whole key (equal prefixes are equal keys).
    exact: bool,
    by_position: bool,
    /// `first[h]`: how many splitters' prefixes have top 16 bits below `h` (65,537 values).
    first: Vec<u32>,
}

impl<'s> BucketFinder<'s> {
    fn new(key: &'s ResolvedKey, splitters: &'s Splitters, prefix_bytes: usize) -> BucketFinder<'s> {
        let (items, by_position) = splitters.items();
        let splits: Vec<(u128, &[u8], u64)> = items.iter().map(|(it, pos)| (key.prefix(it, prefix_bytes), &it[..], *pos)).collect();
        let mut first = Vec::with_capacity((1 << 16) + 1);
        let mut below = 0;
        for h in 0..=(1usize << 16) {
            while below < splits.len() && ((splits[below].0 >> 112) as usize) < h {
                below += 1;
            }
            first.push(below as u32);
        }
        BucketFinder { key, prefix_bytes, splits, exact: key.exact_within(prefix_bytes), by_position, first }
    }

    #[inline]
    fn bucket(&self, rec: &[u8], pos: u64) -> usize {
        let p = self.key.prefix(rec, self.prefix_bytes);
        let h = (p >> 112) as usize;
        let (lo, hi) = (self.first[h] as usize, self.first[h + 1] as usize);
        if lo == hi {
            return lo;
        }
        lo + self.splits[lo..hi].partition_point(|s| {
            let o = s.0.cmp(&p).then_with(|| if self.exact { Ordering::Equal } else { self.key.compare(s.1, rec) });
            (if self.by_position { o.then(s.2.cmp(&pos)) } else { o }) == Ordering::Less
        })
    }
}

/// Copies the round's records (`records`) in their sorted order into the range writer, polling
/// the round in flight every [`POLL_RECORDS`] records.
fn gather(sorted: &SortedPieces, records: &RecordPieces, r: usize, out: &mut RangeWriter, poll: &mut dyn FnMut()) -> Result<()> {
    let mut i = 0;
    while i < sorted.len() {
        let space = out.space();
        let m = (space.len() / r).min(sorted.len() - i).min(POLL_RECORDS);
        anyhow::ensure!(m > 0, "no room for a record in the output buffer");
        for (j, dst) in space[..m * r].chunks_exact_mut(r).enumerate() {
            if i + j + GATHER_AHEAD < sorted.len() {
                prefetch_record(records.record(sorted.index(i + j + GATHER_AHEAD)), 0, r);
            }
            dst.copy_from_slice(records.record(sorted.index(i + j)));
        }
        out.filled(m * r)?;
        i += m;
        poll();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_cut_into_rounds_of_about_eight_mib() {
        assert_eq!(sub_ranges(0, 1), MIN_SUBS);
        assert_eq!(sub_ranges(1_000_000_000, 2), 59);
        assert_eq!(sub_ranges(100_000_000, 4), MIN_SUBS);
        assert_eq!(sub_ranges(u64::MAX, 2), MAX_SUBS);
        // Never more buckets than a u16 names.
        assert_eq!(sub_ranges(u64::MAX, 1000), MAX_BUCKETS / 1000);
        assert!(sub_ranges(u64::MAX, MAX_BUCKETS) * MAX_BUCKETS <= MAX_BUCKETS);
    }
}
