//! The exchange: in rounds, every rank reads a chunk of its share, cuts it by the splitters into
//! one piece per rank, and the ranks swap pieces with `MPI_Ialltoallv`; each rank gives what it
//! receives to its local sort. Rounds overlap (see [`Exchange::run`]). A round's chunk is a small
//! part of the memory budget, so the exchange stays within it whatever the input's size.
//!
//! Stability across ranks: the local sort keeps the order in which records are pushed, so a
//! rank pushes its sources in rank order (rank r's records precede rank r+1's in the input).
//! Pieces from the lowest source still sending go straight to the sort; pieces from later
//! sources wait (in memory up to a limit, then in an unnamed temp file) until every source
//! before them has finished.
//!
//! Before each round's data, the ranks swap a header (bytes for each rank, and the sender's
//! state: more to come, done, or failed), so a rank that fails stops every rank at the same round.

use crate::comm::{wait_politely, Comm};
use crate::share::{Kind, Share};
use crate::split::Splitters;
use anyhow::{Context, Result};
use mpi::datatype::{Partition, PartitionMut};
use mpi::traits::*;
use mpi::Count;
use serde::Serialize;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::time::Instant;
use xsort_core::{RecordFilter, Sorting};

/// A sender's state, in the round's header.
const MORE: u64 = 0;
const DONE: u64 = 1;
const FAILED: u64 = 2;

/// What the exchange did on one rank.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ExchangeStats {
    pub rounds: u64,
    /// Bytes read from the share.
    pub input_bytes: u64,
    /// Seconds reading the share.
    pub input_s: f64,
    /// Bytes sent to other ranks (a rank's piece for itself stays).
    pub sent_bytes: u64,
    /// Bytes received from other ranks.
    pub received_bytes: u64,
    /// Bytes this rank kept for itself.
    pub kept_bytes: u64,
    /// Seconds blocked in MPI: the header swaps and the waits for each round's transfer (what the
    /// overlapped reading and pushing did not hide, waiting for slower ranks included).
    pub wait_s: f64,
    /// Sent and received bytes over the seconds blocked in MPI, in MB/s (large where the overlap
    /// hid nearly all of the transfer).
    pub mb_per_s: f64,
    /// Bytes that waited for earlier sources in a temp file.
    pub held_on_disk_bytes: u64,
    /// Of `input_s`, seconds counting where the share's records go and indexing them by bucket,
    /// before the rounds (the in-place path for records, whose `input_s` is this and the packing
    /// of each round's records; 0 otherwise).
    pub count_s: f64,
    /// Seconds of the whole exchange, reading and pushing to the local sort included (in place:
    /// the counting and the rounds, which sort and write the range as they go).
    pub elapsed_s: f64,
}

/// Pieces from one source waiting for their turn.
#[derive(Default)]
struct Held {
    memory: Vec<u8>,
    file: Option<File>,
}

/// The exchange on one rank.
pub struct Exchange<'a> {
    comm: &'a Comm,
    sorting: &'a mut Sorting,
    held: Vec<Held>,
    held_bytes: usize,
    hold_limit: usize,
    temp_dir: PathBuf,
    /// The lowest source not done: its pieces go straight to the sort.
    current: usize,
    done: Vec<bool>,
    /// Bytes given to the local sort.
    pub pushed: u64,
    pub stats: ExchangeStats,
}

impl<'a> Exchange<'a> {
    pub fn new(comm: &'a Comm, sorting: &'a mut Sorting, hold_limit: usize, temp_dir: PathBuf) -> Exchange<'a> {
        let n = comm.ranks;
        let held = (0..n).map(|_| Held::default()).collect();
        Exchange {
            comm,
            sorting,
            held,
            held_bytes: 0,
            hold_limit,
            temp_dir,
            current: 0,
            done: vec![false; n],
            pushed: 0,
            stats: ExchangeStats::default(),
        }
    }

    /// Runs the rounds until every rank has sent its share, or one has failed. Collective: every
    /// rank returns after the same round. The error is this rank's own (others' show in `agree`).
    ///
    /// Rounds overlap: while round k's pieces are in flight (`MPI_Ialltoallv`), the rank pushes
    /// round k-1's received pieces to the sort and reads and cuts round k+1's chunk into the other
    /// send buffer. Buffers are double and reused from round to round.
    /// Records `keep` refuses (Nsort's `-include` / `-omit`) are dropped as they are cut, before
    /// the exchange.
    pub fn run(&mut self, share: &mut Share, splitters: &Splitters, chunk: usize, kind: Kind, keep: Option<&RecordFilter>) -> Result<()> {
        let started = Instant::now();
        let n = self.comm.ranks;
        let mut failure: Option<anyhow::Error> = None;
        let keep = keep.cloned();
        let mut reader = Reader { chunk_size: chunk, kind, keep, data: Vec::new(), items: Vec::new(), finished: false };
        let mut send = [Pieces::new(n), Pieces::new(n)];
        let mut recv = [vec![0u8; crate::comm::SPARE], vec![0u8; crate::comm::SPARE]];
        // The round received but not yet given to the sort: its counts, where the rank's own piece
        // is in its send buffer, and the senders' states.
        let mut pending: Option<(Vec<Count>, std::ops::Range<usize>, Vec<u64>)> = None;
        self.read(&mut reader, share, splitters, &mut send[0], &mut failure);
        let mut cur = 0;
        loop {
            let state = if failure.is_some() {
                FAILED
            } else if reader.finished {
                DONE
            } else {
                MORE
            };
            let headers = self.swap_headers(&send[cur].counts, state);
            if headers.chunks(2).any(|h| h[1] == FAILED) {
                break;
            }
            let me = self.comm.rank;
            let Round { incoming, outgoing, states, last } = Round::of(&headers, &send[cur].counts, me);
            let total = incoming.iter().map(|&c| c as usize).sum::<usize>() + crate::comm::SPARE;
            if recv[cur].len() < total {
                recv[cur].resize(total, 0);
            }
            let (rdispls, sdispls) = (displacements(&incoming), displacements(&send[cur].counts));
            let kept = sdispls[me] as usize..(sdispls[me] + send[cur].counts[me]) as usize;
            let [s0, s1] = &mut send;
            let (this_send, next_send) = if cur == 0 { (&*s0, s1) } else { (&*s1, s0) };
            let [r0, r1] = &mut recv;
            let (this_recv, last_recv) = if cur == 0 { (r0, &*r1) } else { (r1, &*r0) };
            let sendp = Partition::new(&this_send.data[..], &outgoing[..], &sdispls[..]);
            let mut recvp = PartitionMut::new(&mut this_recv[..], &incoming[..], &rdispls[..]);
            mpi::request::scope(|scope| {
                let mut req = Some(self.comm.world.immediate_all_to_all_varcount_into(scope, &sendp, &mut recvp));
                if let Some((counts, kept, states)) = pending.take() {
                    if let Err(e) = self.deliver(last_recv, &next_send.data[kept], &counts, &states) {
                        failure.get_or_insert(e);
                    }
                }
                // Give MPI a chance to move data between the pieces of work (libnbc progresses
                // only inside MPI calls).
                if let Some(r) = req.take() {
                    req = r.test().err();
                }
                if !last {
                    self.read(&mut reader, share, splitters, next_send, &mut failure);
                }
                let t = Instant::now();
                if let Some(r) = req.take() {
                    wait_politely(r);
                }
                self.stats.wait_s += t.elapsed().as_secs_f64();
            });
            self.count_round(&send[cur].counts, &incoming);
            if last {
                if let Err(e) = self.deliver(&recv[cur], &send[cur].data[kept], &incoming, &states) {
                    failure.get_or_insert(e);
                }
                break;
            }
            pending = Some((incoming, kept, states));
            cur = 1 - cur;
        }
        self.stats.finish(started);
        failure.map_or(Ok(()), Err)
    }

    /// Swaps a round's header with every rank: the bytes this rank sends each (`counts`) and its
    /// `state`. Returns what every rank sent this one, a (count, state) pair each.
    fn swap_headers(&mut self, counts: &[Count], state: u64) -> Vec<u64> {
        let header: Vec<u64> = counts.iter().flat_map(|&c| [c as u64, state]).collect();
        let mut headers = vec![0u64; 2 * self.comm.ranks];
        let t = Instant::now();
        mpi::request::scope(|scope| wait_politely(self.comm.world.immediate_all_to_all_into(scope, &header[..], &mut headers[..])));
        self.stats.wait_s += t.elapsed().as_secs_f64();
        self.stats.rounds += 1;
        headers
    }

    /// Counts a round's bytes: `sent` to each rank (its own piece is kept), `received` from each.
    fn count_round(&mut self, sent: &[Count], received: &[Count]) {
        let me = self.comm.rank;
        let others = |c: &[Count]| c.iter().enumerate().filter(|(r, _)| *r != me).map(|(_, &c)| c as u64).sum::<u64>();
        self.stats.sent_bytes += others(sent);
        self.stats.received_bytes += others(received);
        self.stats.kept_bytes += sent[me] as u64;
    }

    /// Reads and cuts the next chunk into `pieces` (nothing once the share is read or after a
    /// failure, which the next header reports).
    fn read(
        &mut self,
        reader: &mut Reader,
        share: &mut Share,
        splitters: &Splitters,
        pieces: &mut Pieces,
        failure: &mut Option<anyhow::Error>,
    ) {
        pieces.clear();
        if failure.is_some() || reader.finished {
            return;
        }
        let t = Instant::now();
        // Fault injection for the tests: an input cut short in the middle of the exchange.
        if std::env::var("XSORT_MPI_FAULT").is_ok_and(|f| f == format!("shrink:{}:{}", self.comm.rank, self.stats.rounds)) {
            share.shrink_current();
        }
        match share.next_chunk(reader.chunk_size, &mut reader.data) {
            Ok(Some(pos)) => {
                self.stats.input_bytes += reader.data.len() as u64;
                pieces.cut(&reader.data, pos, (reader.kind, reader.keep.as_ref()), splitters, &mut reader.items);
            }
            Ok(None) => {}
            Err(e) => *failure = Some(e),
        }
        self.stats.input_s += t.elapsed().as_secs_f64();
        reader.finished = share.is_read();
    }

    /// Gives the round's pieces to the sort in source order, holding those whose turn has not come.
    /// `received` holds the other sources' pieces (`counts`, this rank's 0); `kept` is its own.
    fn deliver(&mut self, received: &[u8], kept: &[u8], counts: &[Count], states: &[u64]) -> Result<()> {
        for (s, &state) in states.iter().enumerate() {
            self.done[s] |= state == DONE;
        }
        let mut at = 0;
        for (s, &c) in counts.iter().enumerate() {
            let piece = if s == self.comm.rank { kept } else { &received[at..at + c as usize] };
            at += c as usize;
            if s == self.current {
                self.push(piece)?;
            } else if !piece.is_empty() {
                self.hold(s, piece)?;
            }
        }
        while self.current < self.done.len() && self.done[self.current] {
            self.current += 1;
            if self.current < self.done.len() {
                self.release(self.current)?;
            }
        }
        Ok(())
    }

    fn push(&mut self, data: &[u8]) -> Result<()> {
        self.sorting.push(data)?;
        self.pushed += data.len() as u64;
        Ok(())
    }

    /// Keeps a piece of source `s` until its turn: in memory within the limit, else on disk.
    fn hold(&mut self, s: usize, piece: &[u8]) -> Result<()> {
        let h = &mut self.held[s];
        if h.file.is_none() && self.held_bytes + piece.len() <= self.hold_limit {
            h.memory.extend_from_slice(piece);
            self.held_bytes += piece.len();
            return Ok(());
        }
        let dir = &self.temp_dir;
        let cannot = || format!("{}: cannot write a temp file", dir.display());
        if h.file.is_none() {
            h.file = Some(tempfile::tempfile_in(dir).with_context(cannot)?);
        }
        if let Some(f) = &mut h.file {
            f.write_all(piece).with_context(cannot)?;
        }
        self.stats.held_on_disk_bytes += piece.len() as u64;
        Ok(())
    }

    /// Pushes what source `s` has waiting, in the order it came.
    fn release(&mut self, s: usize) -> Result<()> {
        let Held { memory, file } = std::mem::take(&mut self.held[s]);
        self.held_bytes -= memory.len();
        self.push(&memory)?;
        drop(memory);
        if let Some(mut f) = file {
            let dir = self.temp_dir.clone();
            let cannot = || format!("{}: cannot read a temp file", dir.display());
            f.seek(SeekFrom::Start(0)).with_context(cannot)?;
            let mut buf = vec![0u8; 8 << 20];
            loop {
                let k = f.read(&mut buf).with_context(cannot)?;
                if k == 0 {
                    break;
                }
                self.push(&buf[..k])?;
            }
        }
        Ok(())
    }
}

/// The reading side of the exchange: the chunk read, reused from round to round.
struct Reader {
    chunk_size: usize,
    kind: Kind,
    /// The records kept (all, when None).
    keep: Option<RecordFilter>,
    data: Vec<u8>,
    /// Each item's (start, end, rank) in the chunk, reused.
    items: Vec<(usize, usize, u32)>,
    /// Whether the whole share has been read.
    finished: bool,
}

/// A chunk cut into one piece per rank, the pieces back to back (one spare byte past them, see
/// [`crate::comm::SPARE`]); reused from round to round.
struct Pieces {
    data: Vec<u8>,
    counts: Vec<Count>,
}

impl Pieces {
    fn new(n: usize) -> Pieces {
        Pieces { data: vec![0u8; crate::comm::SPARE], counts: vec![0; n] }
    }

    fn clear(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
    }

    /// Cuts `chunk` (whole records or lines, the first at global position `pos`) by the
    /// splitters, copying each item that `keep` keeps once, straight to its place in its rank's
    /// piece.
    fn cut(
        &mut self,
        chunk: &[u8],
        pos: u64,
        (kind, keep): (Kind, Option<&RecordFilter>),
        splitters: &Splitters,
        items: &mut Vec<(usize, usize, u32)>,
    ) {
        let n = self.counts.len();
        items.clear();
        let mut sizes = vec![0usize; n];
        let kept = |item: &[u8]| keep.is_none_or(|k| k.keeps(item));
        match kind {
            Kind::Records(r) => {
                for (i, rec) in chunk.chunks_exact(r).enumerate().filter(|(_, rec)| kept(rec)) {
                    let s = i * r;
                    let to = splitters.rank_of(rec, pos + s as u64);
                    sizes[to] += r;
                    items.push((s, s + r, to as u32));
                }
            }
            Kind::Lines(t) => {
                let mut s = 0;
                for e in memchr::memchr_iter(t, chunk) {
                    if !kept(&chunk[s..e]) {
                        s = e + 1;
                        continue;
                    }
                    let to = splitters.rank_of(&chunk[s..e], pos + s as u64);
                    sizes[to] += e + 1 - s;
                    items.push((s, e + 1, to as u32));
                    s = e + 1;
                }
            }
        }
        let mut at: Vec<usize> = sizes.iter().scan(0, |acc, &c| Some(std::mem::replace(acc, *acc + c))).collect();
        if self.data.len() < chunk.len() + crate::comm::SPARE {
            self.data.resize(chunk.len() + crate::comm::SPARE, 0);
        }
        for &(s, e, r) in items.iter() {
            let a = &mut at[r as usize];
            self.data[*a..*a + e - s].copy_from_slice(&chunk[s..e]);
            *a += e - s;
        }
        self.counts = sizes.into_iter().map(|c| c as Count).collect();
    }
}

impl ExchangeStats {
    /// Sets the totals at the end of the exchange that began at `started`.
    fn finish(&mut self, started: Instant) {
        self.elapsed_s = started.elapsed().as_secs_f64();
        self.mb_per_s = if self.wait_s > 0.0 { (self.sent_bytes + self.received_bytes) as f64 / 1e6 / self.wait_s } else { 0.0 };
    }
}

/// One round of the exchange, as the headers every rank sent describe it.
struct Round {
    /// Bytes each rank sends this one through MPI.
    incoming: Vec<Count>,
    /// Bytes this rank sends each through MPI.
    outgoing: Vec<Count>,
    /// Each rank's state (MORE, DONE, FAILED).
    states: Vec<u64>,
    /// Whether every rank has sent its last piece.
    last: bool,
}

impl Round {
    /// The round of `headers` (a count and a state from each rank), where rank `me` sends `counts`.
    /// The rank's piece for itself stays out of MPI (which would copy it once more): it is pushed
    /// from the send buffer.
    fn of(headers: &[u64], counts: &[Count], me: usize) -> Round {
        let mut incoming: Vec<Count> = headers.chunks(2).map(|h| h[0] as Count).collect();
        incoming[me] = 0;
        let mut outgoing = counts.to_vec();
        outgoing[me] = 0;
        let states: Vec<u64> = headers.chunks(2).map(|h| h[1]).collect();
        let last = states.iter().all(|&s| s == DONE);
        Round { incoming, outgoing, states, last }
    }
}

fn displacements(counts: &[Count]) -> Vec<Count> {
    counts.iter().scan(0, |acc, &c| Some(std::mem::replace(acc, *acc + c))).collect()
}
