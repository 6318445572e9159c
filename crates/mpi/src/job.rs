//! The phases of a cluster sort, run on every rank in step; each ends with the ranks agreeing that
//! none failed ([`Comm::agree`]):
//!
//! 1. **Share**: the rank opens its inputs and finds its share (shared files: its 1/N of the
//!    concatenated inputs; node-local files: all of its own, compressed ones decompressed into
//!    temp files first).
//! 2. **Splitters**: it samples its share; the samples of all ranks are gathered and cut into
//!    N key ranges ([`Splitters`]).
//! 3. **Exchange**: in rounds, it reads its share, sends each record to the rank of its key range
//!    and gives what it receives to its local sort (xsort's engine, spilling to `-T` past its
//!    memory).
//! 4. **Offsets**: the sizes of the sorted ranges, prefix-summed, place each in the output.
//! 5. **Write**: it pulls its sorted range and writes it at its offset (or into its part).
//! 6. **Commit**: once every rank has written, the output is put in place.
//!
//! Fixed-size records whose shares fit in memory take the in-place path instead ([`InPlace`]):
//! a counting pass gives every rank its range's size, so the offsets come first, and phases 3 and
//! 5 then run together, sub-range by sub-range.

use crate::comm::{Comm, Stop};
use crate::exchange::{Exchange, ExchangeStats};
use crate::inplace::InPlace;
use crate::launcher;
use crate::options::{Options, RANK_MARKER};
use crate::output::{resolve_output, CompressedRange, Dest, RangeWriter, SharedFile, Target, WritePlan};
use crate::share::{Inflate, Kind, Share};
use crate::split::{self, Sample, Splitters};
use crate::stats::{self, RankStats};
use anyhow::{Context, Result};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use xsort_core::{Order, Sorting};
use xsort_io::output::AtomicOutput;
use xsort_io::stats_file::StatsFile;
use xsort_io::Compression;

/// Samples per rank for the splitters.
const SAMPLES: usize = 4096;

/// What every phase of the job needs on this rank.
struct Job<'c> {
    comm: &'c Comm,
    opts: &'c Options,
    order: Order,
    kind: Kind,
    /// The output (this rank's part, when the name has the rank marker) and the inputs, named
    /// for this rank.
    output: PathBuf,
    paths: Vec<PathBuf>,
    temp_dir: PathBuf,
    /// Rank 0's `--stats-json` file, opened first.
    stats_file: Option<StatsFile>,
    /// How the output (this rank's part, or the shared file) is compressed, if it is.
    compression: Option<Compression>,
    started: Instant,
}

/// Runs the job on this rank.
pub fn run(comm: &Comm, opts: &Options) -> Result<(), Stop> {
    let job = Job::prepare(comm, opts)?;

    // 1. Share.
    let mut share = job.share()?;

    // 2. Splitters.
    let t = Instant::now();
    // The records a selection drops are in no rank's range: the splitters come from those it keeps.
    let kept = |items: Vec<Sample>| items.into_iter().filter(|(item, _)| opts.keep.as_ref().is_none_or(|k| k.keeps(item))).collect();
    let samples: Vec<Sample> = comm.agree(share.sample(SAMPLES).map(kept))?;
    let (all, _) = comm.all_gather_bytes(&split::pack(&samples));
    let samples = split::unpack(&all);
    let sample_s = t.elapsed().as_secs_f64();

    // 3. Exchange, and the local sort: in place for records when every rank's share fits (see
    // `inplace`, which chooses finer splitters of its own), else into xsort's engine. Half the
    // rank's memory is the engine's; the exchange's chunks and held pieces share the rest.
    let memory = opts.memory_per_rank(comm.local_ranks);
    let threads = opts.threads_per_rank(comm.local_ranks);
    // The in-place sort borrows the order; the job goes on to its last phases.
    let order = job.order.clone();
    let in_place = match (&order, job.kind) {
        (Order::Records(key, r), Kind::Records(_)) if !opts.folds => {
            InPlace::count(comm, (key, opts.keep.as_ref()), &order, *r, &share, samples.clone(), memory, threads)
        }
        _ => None,
    };
    match in_place {
        Some(p) => finish_in_place(job, &share, p, sample_s),
        None => job.through_engine(&mut share, samples, sample_s, (memory, threads)),
    }
}

impl<'c> Job<'c> {
    /// The job's order and names on this rank, its stats file opened (rank 0), and the checks
    /// that fail before any sorting: an output that is a directory, a FIFO or a socket (rank 0 for
    /// the shared one; every rank for its part), and a temp directory that cannot be used, as
    /// with `xsort`, whichever path the sort then takes.
    fn prepare(comm: &'c Comm, opts: &'c Options) -> Result<Job<'c>, Stop> {
        let started = Instant::now();
        let rank = comm.rank;
        let order = comm.agree(opts.order())?;
        let kind = match (order.record_size(), order.terminator()) {
            (Some(r), _) => Kind::Records(r),
            (None, t) => Kind::Lines(t.unwrap_or(b'\n')),
        };
        let here = |p: &str| PathBuf::from(p.replace(RANK_MARKER, &rank.to_string()));
        let temp_dir = opts.temp_dirs.first().cloned().unwrap_or_else(std::env::temp_dir);
        let output = here(&opts.output);
        let paths: Vec<PathBuf> = opts.inputs.iter().map(|p| here(p)).collect();
        let stats_file = comm.agree(if rank == 0 {
            opts.stats_json.as_deref().map(|p| StatsFile::open(p, Some(&output), &paths).map_err(anyhow::Error::from)).transpose()
        } else {
            Ok(None)
        })?;
        let parts = opts.output.contains(RANK_MARKER);
        let temp_dirs = if opts.temp_dirs.is_empty() { vec![temp_dir.clone()] } else { opts.temp_dirs.clone() };
        comm.agree(match (parts, rank) {
            (true, _) | (false, 0) => resolve_output(&output).map(|_| ()),
            _ => Ok(()),
        })?;
        comm.agree(xsort_io::TempSpace::new(temp_dirs, false).map_err(anyhow::Error::from))?;
        let compression = opts.compress.of(Some(&output));
        Ok(Job { comm, opts, order, kind, output, paths, temp_dir, stats_file, compression, started })
    }

    /// Phase 1: this rank's share of the inputs.
    fn share(&self) -> Result<Share, Stop> {
        let (comm, opts) = (self.comm, self.opts);
        if opts.inputs.iter().any(|p| p.contains(RANK_MARKER)) {
            // Compressed inputs are decompressed first: their lengths are known only then.
            let inflate = Inflate { dir: &self.temp_dir, threads: opts.threads_per_rank(comm.local_ranks) };
            let mut share = comm.agree(Share::whole(&self.paths, self.kind, &inflate))?;
            share.place_at(comm.exclusive_sum(share.input_len()));
            Ok(share)
        } else {
            comm.agree(Share::part(&self.paths, comm.rank, comm.ranks, self.kind))
        }
    }

    /// Phases 3 to 6 through xsort's engine: the exchange into a local sort, the offsets, the
    /// write, the commit.
    fn through_engine(self, share: &mut Share, samples: Vec<Sample>, sample_s: f64, (memory, threads): (u64, usize)) -> Result<(), Stop> {
        let (comm, opts, rank) = (self.comm, self.opts, self.comm.rank);
        let (mut sorting, xstats, pushed) = self.exchange(share, samples, (memory, threads))?;

        // 4. Offsets. An output that can shrink (-u) is sorted into a temp file first, to know its size.
        let writes = WritePlan::for_memory(memory);
        // The staging copies hold a record at least (the sort gives records whole).
        let staging_block = writes.block.max(sorting.record_size().unwrap_or(0));
        let staged = comm.agree(if opts.shrinks { stage(&mut sorting, &self.temp_dir, staging_block).map(Some) } else { Ok(None) })?;
        let size = staged.as_ref().map_or(pushed, |(_, n)| *n);
        let offset = self.range_offset(size);

        // 5. Write.
        let t = Instant::now();
        let target = comm.agree(self.open_target((offset, size), threads))?;
        let mut pull_s = 0.0;
        let written = match staged {
            Some((file, n)) => copy_staged(file, n, &target, offset, staging_block),
            None => write_sorted(&mut sorting, &target, (offset, size), writes, &mut pull_s),
        };
        fault_point(rank, "write");
        let (target, placed) = self.end_writing(target, written, writes)?;
        let output_s = t.elapsed().as_secs_f64();

        // 6. Commit.
        commit(comm, target, opts.sync)?;
        let mine = RankStats {
            rank,
            host: mpi::environment::processor_name().unwrap_or_default(),
            elapsed_s: self.started.elapsed().as_secs_f64(),
            cpu_s: cpu_seconds(),
            sample_s,
            exchange: xstats,
            sorted_bytes: pushed,
            output_bytes: size,
            output_offset: placed.map_or(offset, |(at, _)| at),
            output_compressed_bytes: placed.map(|(_, n)| n),
            output_s,
            output_pull_s: pull_s,
            sort: sorting.stats().cloned(),
            local_sort_s: None,
        };
        report(comm, opts, &mine, self.stats_file)
    }

    /// Phase 3 through the engine: the share exchanged by `ranks` key ranges into a local sort,
    /// finished. Gives the sort, the exchange's statistics and the bytes this rank received.
    fn exchange(
        &self,
        share: &mut Share,
        samples: Vec<Sample>,
        (memory, threads): (u64, usize),
    ) -> Result<(Sorting, ExchangeStats, u64), Stop> {
        let (comm, opts, ranks) = (self.comm, self.opts, self.comm.ranks);
        let splitters = Splitters::choose(self.order.clone(), !opts.folds, samples, ranks);
        // Rounds of at most an eighth of the share too: a small share (Datamation's 25 MB on 4 ranks)
        // then still has rounds to overlap, and touches a few MB of buffers, not 16 MB chunks' worth.
        let chunk = (memory / 8 / ranks as u64).min(share.len() / 8).clamp(64 << 10, 16 << 20) as usize;
        // The sort's input has no length of its own: it plans for what a rank should receive (the mean
        // share and 10% for the splitters' imbalance, a few percent; at least 64 MiB), not for all of
        // its budget, which it would otherwise allocate up front. A larger share spills, which is
        // correct but slower; the whole budget is left to the merge.
        let mean_share = comm.all_gather(share.len()).iter().sum::<u64>() / ranks as u64;
        let expected = mean_share.saturating_add(mean_share / 10).max(64 << 20);
        let mut sort = opts.sort.clone().memory(memory / 2).expected_input_bytes(expected).threads(threads);
        for d in &opts.temp_dirs {
            sort = sort.temp_dir(d);
        }
        let mut sorting = comm.agree(sort.start().map_err(anyhow::Error::from))?;
        let mut exchange = Exchange::new(comm, &mut sorting, (memory / 4) as usize, self.temp_dir.clone());
        fault_point(comm.rank, "exchange");
        let exchanged = exchange.run(share, &splitters, chunk, self.kind, opts.keep.as_ref());
        let (xstats, pushed) = (exchange.stats.clone(), exchange.pushed);
        comm.agree(exchanged.and_then(|_| Ok(sorting.finish()?)))?;
        Ok((sorting, xstats, pushed))
    }
}

/// Phases 4 to 6 of the in-place path: offsets, then the exchange, the local sort and the write
/// together, commit.
fn finish_in_place(job: Job, share: &Share, mut p: InPlace, sample_s: f64) -> Result<(), Stop> {
    let (comm, opts) = (job.comm, job.opts);
    let size = p.size();
    let offset = job.range_offset(size);
    let t = Instant::now();
    let target = comm.agree(job.open_target((offset, size), opts.threads_per_rank(comm.local_ranks)))?;
    fault_point(comm.rank, "exchange");
    let written = p.run(share, &target, offset);
    fault_point(comm.rank, "write");
    let (target, placed) = job.end_writing(target, written, p.writes)?;
    let output_s = t.elapsed().as_secs_f64();
    commit(comm, target, opts.sync)?;
    let mine = RankStats {
        rank: comm.rank,
        host: mpi::environment::processor_name().unwrap_or_default(),
        elapsed_s: job.started.elapsed().as_secs_f64(),
        cpu_s: cpu_seconds(),
        sample_s,
        exchange: p.stats.clone(),
        sorted_bytes: size,
        output_bytes: size,
        output_offset: placed.map_or(offset, |(at, _)| at),
        output_compressed_bytes: placed.map(|(_, n)| n),
        output_s,
        output_pull_s: p.gather_s,
        sort: None,
        local_sort_s: Some(p.sort_s),
    };
    drop(p);
    report(comm, opts, &mine, job.stats_file)
}

impl Job<'_> {
    /// Where this rank's range of `size` bytes starts in what it writes (collective): its offset
    /// in the shared file, or 0 for its own part or compressed stream.
    fn range_offset(&self, size: u64) -> u64 {
        if self.opts.output.contains(RANK_MARKER) || self.compression.is_some() {
            0
        } else {
            self.comm.exclusive_sum(size)
        }
    }

    /// The rank's output: its part, the shared file's temp name (collective), or its compressed
    /// range (into its part, or a temp file for the shared output, compressed on `threads`
    /// threads), with the blocks of its range (`size` bytes at `offset`) reserved where its size
    /// is known.
    fn open_target(&self, (offset, size): (u64, u64), threads: usize) -> Result<Target> {
        let (output, temp_dir) = (&self.output, &self.temp_dir);
        let parts = self.opts.output.contains(RANK_MARKER);
        let part = || AtomicOutput::create(output, false, Some(temp_dir));
        let target = match (self.compression, parts) {
            (None, true) => Target::Part(part()?),
            (None, false) => shared_output(self.comm, output)?,
            (Some(c), true) => Target::Compressed(Box::new(CompressedRange::part(part()?, c, threads)?)),
            (Some(c), false) => Target::Compressed(Box::new(CompressedRange::staged(temp_dir, output, c, threads)?)),
        };
        target.reserve(offset, size)?;
        Ok(target)
    }

    /// Ends the rank's writing (collective), once every rank agrees that its range was `written`:
    /// a compressed stream finished and, for the shared output, copied into it at the offset its
    /// compressed size gives (with `writes`); all of it synced with `--sync`. Gives the target to
    /// commit and, for a compressed range, its offset and compressed size.
    fn end_writing(&self, target: Target, written: Result<()>, writes: WritePlan) -> Result<(Target, Option<(u64, u64)>), Stop> {
        let comm = self.comm;
        comm.agree(written.and_then(|_| target.finish()))?;
        let (target, placed) = match target {
            Target::Compressed(c) => match c.into_dest() {
                (Dest::Part(p), n) => (Target::Part(p), Some((0, n))),
                (Dest::Staged(staged), n) => {
                    let offset = comm.exclusive_sum(n);
                    let shared = comm.agree(shared_output(comm, &self.output).and_then(|t| t.reserve(offset, n).map(|_| t)))?;
                    comm.agree(CompressedRange::copy_into(&staged, n, &shared, offset, writes))?;
                    (shared, Some((offset, n)))
                }
            },
            plain => (plain, None),
        };
        comm.agree(if self.opts.sync { target.sync() } else { Ok(()) })?;
        Ok((target, placed))
    }
}

/// Fault injection for the tests of failure across ranks: `XSORT_MPI_FAULT=kill:RANK:PHASE` makes
/// rank RANK die of SIGKILL as it reaches PHASE (`exchange`: before its first round; `write`: with
/// its range written, before the ranks agree to commit), as a crashed node would. (The exchange
/// takes `shrink:RANK:ROUND`: rank RANK cuts its input short before reading after ROUND rounds.)
/// `delay:RANK:PHASE` makes rank RANK sleep 2 s there instead, as a slow node would: the others
/// wait for it in the agreement that ends the phase (`delay:RANK:PHASE:MS`: MS milliseconds).
fn fault_point(rank: usize, phase: &str) {
    let Ok(fault) = std::env::var("XSORT_MPI_FAULT") else { return };
    if fault == format!("kill:{rank}:{phase}") {
        // SAFETY: raising a signal at this process has no memory-safety preconditions.
        unsafe { libc::raise(libc::SIGKILL) };
    }
    if fault == format!("delay:{rank}:{phase}") {
        std::thread::sleep(std::time::Duration::from_secs(2));
    }
    if let Some(ms) = fault.strip_prefix(&format!("delay:{rank}:{phase}:")).and_then(|ms| ms.parse().ok()) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// Seconds of CPU this process has used so far (user and system, all its threads).
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given; all zeros is a valid rusage.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid pointer to a rusage.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(u.ru_utime) + s(u.ru_stime)
}

/// The shared output's temp file: rank 0 creates it under a name all ranks derive from a nonce it
/// broadcasts, then the others open it.
fn shared_output(comm: &Comm, target: &Path) -> Result<Target> {
    let nonce = comm.broadcast(if comm.rank == 0 { nonce() } else { 0 });
    let created = if comm.rank == 0 { SharedFile::create(target, nonce).map(Some) } else { Ok(None) };
    // The others wait until it exists; a failure to create it stops them here.
    if comm.any(created.is_err()).is_some() {
        return created.and_then(|_| Err(anyhow::anyhow!("{}: rank 0 could not create the output", target.display())));
    }
    Ok(Target::Shared(match created? {
        Some(f) => f,
        None => SharedFile::open(target, nonce)?,
    }))
}

/// A number no other job is likely to pick, for the temp name.
fn nonce() -> u64 {
    let mut b = [0u8; 8];
    if File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b)).is_ok() {
        return u64::from_le_bytes(b);
    }
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    t ^ u64::from(std::process::id()).rotate_left(32)
}

/// Pulls the local sort's output into an unnamed temp file, `block` bytes at a time; returns it
/// and its length.
fn stage(sorting: &mut Sorting, dir: &Path, block: usize) -> Result<(File, u64)> {
    let cannot = || format!("{}: cannot write a temp file", dir.display());
    let mut file = tempfile::tempfile_in(dir).with_context(cannot)?;
    let mut buf = vec![0u8; block];
    let mut n = 0u64;
    loop {
        let k = sorting.pull(&mut buf)?;
        if k == 0 {
            return Ok((file, n));
        }
        file.write_all(&buf[..k]).with_context(cannot)?;
        n += k as u64;
    }
}

/// Copies the staged output (`len` bytes of `file`) to `offset` of the target, `block` bytes at a
/// time.
fn copy_staged(mut file: File, len: u64, target: &Target, offset: u64, block: usize) -> Result<()> {
    file.seek(SeekFrom::Start(0)).context("cannot read a temp file")?;
    let mut buf = vec![0u8; block];
    let mut done = 0u64;
    while done < len {
        let k = file.read(&mut buf).context("cannot read a temp file")?;
        anyhow::ensure!(k > 0, "a temp file ended early");
        target.write_at(&buf[..k], offset + done)?;
        done += k as u64;
    }
    Ok(())
}

/// Pulls the sorted range and writes it at `offset` as `writes` says; it must be `size` bytes.
/// Adds the seconds spent waiting for the sort's output to `pull_s`.
fn write_sorted(sorting: &mut Sorting, target: &Target, (offset, size): (u64, u64), writes: WritePlan, pull_s: &mut f64) -> Result<()> {
    let mut done = 0u64;
    RangeWriter::run(target, offset, writes, sorting.record_size().unwrap_or(0), |out| loop {
        let t = Instant::now();
        let k = sorting.pull(out.space())?;
        *pull_s += t.elapsed().as_secs_f64();
        if k == 0 {
            return Ok(());
        }
        anyhow::ensure!(done + k as u64 <= size, "the local sort gave more than it was given");
        out.filled(k)?;
        done += k as u64;
    })?;
    anyhow::ensure!(done == size, "the local sort gave {done} bytes of {size}");
    Ok(())
}

/// Puts the output in place once every rank has written: rank 0 renames the shared file; every
/// rank commits its part. Only when every rank is still healthy, its launcher alive and not
/// tearing the job down ([`launcher::ready_to_commit`]), asked of all ranks together and again by
/// each rank that renames, right before its rename: an interrupted `mpirun` (which fails) never
/// sees its target replaced afterwards.
fn commit(comm: &Comm, target: Target, sync: bool) -> Result<(), Stop> {
    comm.agree(launcher::ready_to_commit())?;
    match target {
        Target::Shared(mut f) => {
            let done = if comm.rank == 0 { launcher::ready_to_commit().and_then(|_| f.commit(sync)) } else { Ok(()) };
            let outcome = comm.agree(done);
            if outcome.is_ok() {
                f.forget();
            }
            outcome
        }
        Target::Part(p) => comm.agree(launcher::ready_to_commit().and_then(|_| p.commit(sync).map_err(anyhow::Error::from))),
        // `Job::end_writing` makes a part or the shared file of it.
        Target::Compressed(_) => comm.agree(Err(anyhow::anyhow!("a compressed output was committed unfinished (internal error)"))),
    }
}

/// Gathers the statistics; rank 0 prints and writes them as asked.
fn report(comm: &Comm, opts: &Options, mine: &RankStats, file: Option<StatsFile>) -> Result<(), Stop> {
    let Some(report) = stats::gather(comm, mine) else { return Ok(()) };
    if opts.stats {
        eprint!("{}", stats::render(&report));
    }
    if let Some(f) = file {
        let text = serde_json::to_string_pretty(&report).unwrap_or_default() + "\n";
        if let Err(e) = f.write(&text) {
            eprintln!("xsort-mpi: rank 0: {e}");
            return Err(Stop);
        }
    }
    Ok(())
}
