//! Generating gensort records: into buffers, into checksums, into files.
//!
//! Every entry point produces the same bytes as the 1.5 reference for the
//! same absolute record numbers, whatever the thread count: the work is cut
//! into chunks, each chunk reaches its first generator value by jump-ahead
//! ([`crate::lcg::jump`]) and then steps once per record. Records are built
//! in small batches that stay in L1 cache, so a fused checksum reads them
//! back for free.

use std::path::Path;

use rayon::prelude::*;

use crate::checksum::checksum_serial;
use crate::error::{Error, Result};
use crate::io::{write_blocks, IoConfig, Output};
use crate::lcg;
use crate::record::{put_ascii, put_binary, skew_ascii, skew_binary, REC_SIZE};

/// Which records to make (gensort's `-a` and `-s`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct GenOptions {
    /// Printable records (`-a`) instead of binary ones.
    pub ascii: bool,
    /// Skewed keys (`-s`).
    pub skew: bool,
}

/// Records built per batch: 12.8 KB of output, well inside L1 with the
/// window of generator values.
const BATCH: usize = 128;

/// Records per parallel task (819 KB): the jump-ahead that starts a task (at
/// most 128 affine compositions) costs about 2% of it, and an 8 MiB I/O block
/// splits into ten tasks, which balance well on two to many threads.
const TASK_RECS: usize = 8 * 1024;

/// Fills `buf` with records `first_record, first_record + 1, ...`: as many
/// whole records as fit (`buf.len() / 100`); trailing bytes are left as they
/// are. Runs on the current rayon pool when the buffer is large; the bytes
/// never depend on how the work is split.
pub fn fill_records(buf: &mut [u8], first_record: u128, opts: GenOptions) {
    par_fill::<false>(buf, first_record, opts);
}

/// [`fill_records`] that also returns the checksum of the records written
/// (sum of their CRC-32s mod 2^128), computed while they are still in cache.
pub fn fill_records_checksum(buf: &mut [u8], first_record: u128, opts: GenOptions) -> u128 {
    par_fill::<true>(buf, first_record, opts)
}

/// One record: number `record` (absolute) as gensort makes it.
pub fn generate_record(record: u128, opts: GenOptions) -> [u8; REC_SIZE] {
    let mut rec = [0u8; REC_SIZE];
    fill_serial::<false>(&mut rec, record, opts);
    rec
}

/// The checksum `gensort -c` prints for `count` records from `first_record`,
/// computed on the current rayon pool without keeping the records.
pub fn generated_checksum(first_record: u128, count: u64, opts: GenOptions) -> u128 {
    let tasks = count.div_ceil(TASK_RECS as u64);
    (0..tasks)
        .into_par_iter()
        .map_init(
            || vec![0u8; BATCH * 8 * REC_SIZE],
            |scratch, task| {
                let start = task * TASK_RECS as u64;
                let n = (TASK_RECS as u64).min(count - start) as usize;
                let first = first_record.wrapping_add(u128::from(start));
                checksum_run(scratch, first, n, opts)
            },
        )
        .reduce(|| 0, u128::wrapping_add)
}

/// Checksum of `n` records from `first`, generated piecewise into `scratch`
/// by one cursor (a single jump-ahead per task).
fn checksum_run(scratch: &mut [u8], first: u128, n: usize, opts: GenOptions) -> u128 {
    let per = scratch.len() / REC_SIZE;
    let mut cursor = Cursor::new(first);
    let mut sum = 0u128;
    let mut done = 0;
    while done < n {
        let m = per.min(n - done);
        sum = sum.wrapping_add(cursor.fill::<true>(&mut scratch[..m * REC_SIZE], opts));
        done += m;
    }
    sum
}

/// What to generate and how (the knobs of `gensort` as a value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenerateJob {
    /// Absolute number of the first record (`-b`).
    pub first_record: u128,
    /// Records to make.
    pub count: u64,
    /// Record kind (`-a`, `-s`).
    pub opts: GenOptions,
    /// Worker threads; 0 runs on the current rayon pool (all cores by default).
    pub threads: usize,
    /// Compute the checksum (`-c`); when false the report's checksum is 0.
    pub checksum: bool,
    /// How the file is written.
    pub io: IoConfig,
}

impl GenerateJob {
    /// A job for `count` records from `first_record`, with default I/O, all
    /// cores, and the checksum on.
    pub fn new(first_record: u128, count: u64, opts: GenOptions) -> GenerateJob {
        GenerateJob { first_record, count, opts, threads: 0, checksum: true, io: IoConfig::default() }
    }
}

/// Writes `count` records from `first_record` to `path` (created or
/// truncated) and returns their checksum. Nothing is written to `/dev/null`,
/// but the checksum is still computed. `threads == 0` uses the current rayon
/// pool.
pub fn generate_file(path: &Path, first_record: u128, count: u64, opts: GenOptions, threads: usize) -> Result<u128> {
    let job = GenerateJob { threads, ..GenerateJob::new(first_record, count, opts) };
    generate_with(path, &job)
}

/// [`generate_file`] with every knob: returns the checksum, or 0 when
/// `job.checksum` is false.
pub fn generate_with(path: &Path, job: &GenerateJob) -> Result<u128> {
    let out = Output::create(path, &job.io)?;
    let total = u64::try_from(u128::from(job.count) * REC_SIZE as u128)
        .ok()
        .filter(|&t| t <= i64::MAX as u64)
        .ok_or(Error::TooLarge { count: u128::from(job.count) })?;
    in_pool(job.threads, || {
        if out.kind() == crate::io::Kind::Null {
            // Nothing to write: generate in cache-sized pieces and keep only
            // the sum (or nothing at all without -c).
            return Ok(if job.checksum { generated_checksum(job.first_record, job.count, job.opts) } else { 0 });
        }
        let mut sum = 0u128;
        write_blocks(&out, total, &job.io, |offset, block| {
            let first = job.first_record.wrapping_add(u128::from(offset / REC_SIZE as u64));
            if job.checksum {
                sum = sum.wrapping_add(fill_records_checksum(block, first, job.opts));
            } else {
                fill_records(block, first, job.opts);
            }
            Ok(())
        })?;
        Ok(sum)
    })
}

/// Runs `f` on a pool of `threads` threads, or on the current one for 0.
pub(crate) fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    if threads == 0 {
        return f();
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Internal(format!("cannot start {threads} threads: {e}")))?;
    pool.install(f)
}

/// Parallel fill (and optional checksum) of whole records in `buf`.
fn par_fill<const CRC: bool>(buf: &mut [u8], first_record: u128, opts: GenOptions) -> u128 {
    let whole = buf.len() / REC_SIZE * REC_SIZE;
    let buf = &mut buf[..whole];
    if whole <= TASK_RECS * REC_SIZE {
        return fill_serial::<CRC>(buf, first_record, opts);
    }
    buf.par_chunks_mut(TASK_RECS * REC_SIZE)
        .enumerate()
        .map(|(task, chunk)| {
            let first = first_record.wrapping_add((task * TASK_RECS) as u128);
            fill_serial::<CRC>(chunk, first, opts)
        })
        .reduce(|| 0, u128::wrapping_add)
}

/// Fills whole records of `buf` on this thread; returns their checksum if `CRC`.
fn fill_serial<const CRC: bool>(buf: &mut [u8], first: u128, opts: GenOptions) -> u128 {
    Cursor::new(first).fill::<CRC>(buf, opts)
}

/// The generator positioned at a record: `window` holds `R(i+1) .. R(i+9)`
/// and `next` is `R(i+10)` for the next record `i`. Binary record `i` needs
/// `R(i+1) .. R(i+10)`, ASCII record `i` only `R(i+1)`; either way the window
/// slides one generator step per record, and a cursor can be advanced by
/// successive fills without jumping again.
struct Cursor {
    recno: u128,
    window: [u128; 9],
    next: u128,
}

impl Cursor {
    /// Positions at record `first` by jump-ahead.
    fn new(first: u128) -> Cursor {
        let mut x = lcg::rand_at(first.wrapping_add(1));
        let mut window = [0u128; 9];
        for slot in window.iter_mut() {
            *slot = x;
            x = lcg::next(x);
        }
        Cursor { recno: first, window, next: x }
    }

    /// Fills the whole records of `buf` with the next records; returns their
    /// checksum if `CRC`.
    fn fill<const CRC: bool>(&mut self, buf: &mut [u8], opts: GenOptions) -> u128 {
        match (opts.ascii, opts.skew) {
            (false, false) => self.fill_with::<false, false, CRC>(buf),
            (false, true) => self.fill_with::<false, true, CRC>(buf),
            (true, false) => self.fill_with::<true, false, CRC>(buf),
            (true, true) => self.fill_with::<true, true, CRC>(buf),
        }
    }

    /// The batch loop, monomorphised per record kind so that the per-record
    /// code has no branches on options.
    fn fill_with<const ASCII: bool, const SKEW: bool, const CRC: bool>(&mut self, buf: &mut [u8]) -> u128 {
        let mut window = [0u128; BATCH + 9];
        window[..9].copy_from_slice(&self.window);
        let mut x = self.next;
        let mut recno = self.recno;
        let mut sum = 0u128;
        for batch in buf.chunks_mut(BATCH * REC_SIZE) {
            let m = batch.len() / REC_SIZE;
            for slot in window[9..9 + m].iter_mut() {
                *slot = x;
                x = lcg::next(x);
            }
            // chunks_exact_mut yields exactly REC_SIZE bytes and the window
            // slice exactly 10 values, so the conversions always succeed.
            for (j, rec) in batch.chunks_exact_mut(REC_SIZE).enumerate() {
                let Ok(rec) = <&mut [u8; REC_SIZE]>::try_from(rec) else {
                    continue;
                };
                let Ok(r) = <&[u128; 10]>::try_from(&window[j..j + 10]) else {
                    continue;
                };
                let i = recno.wrapping_add(j as u128);
                match (ASCII, SKEW) {
                    (false, false) => put_binary(rec, r),
                    (false, true) => {
                        put_binary(rec, r);
                        skew_binary(rec, r[0], i);
                    }
                    (true, false) => put_ascii(rec, r[0], i),
                    (true, true) => {
                        put_ascii(rec, r[0], i);
                        skew_ascii(rec, r[0], i);
                    }
                }
            }
            if CRC {
                sum = sum.wrapping_add(checksum_serial(batch));
            }
            window.copy_within(m..m + 9, 0);
            recno = recno.wrapping_add(m as u128);
        }
        self.window.copy_from_slice(&window[..9]);
        self.next = x;
        self.recno = recno;
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [GenOptions; 4] = [
        GenOptions { ascii: false, skew: false },
        GenOptions { ascii: false, skew: true },
        GenOptions { ascii: true, skew: false },
        GenOptions { ascii: true, skew: true },
    ];

    #[test]
    fn splits_do_not_change_bytes() {
        for opts in ALL {
            let n = 3 * TASK_RECS / 2 + 17;
            let mut whole = vec![0u8; n * REC_SIZE];
            let sum = fill_records_checksum(&mut whole, 5, opts);
            assert_eq!(sum, crate::checksum_of(&whole));
            for cut in [1usize, BATCH - 1, BATCH + 1, n / 2] {
                let mut a = vec![0u8; cut * REC_SIZE];
                let mut b = vec![0u8; (n - cut) * REC_SIZE];
                fill_records(&mut a, 5, opts);
                fill_records(&mut b, 5 + cut as u128, opts);
                a.extend_from_slice(&b);
                assert!(a == whole, "{opts:?} cut {cut}");
            }
            assert_eq!(generate_record(5 + 1000, opts)[..], whole[1000 * REC_SIZE..1001 * REC_SIZE]);
            assert_eq!(generated_checksum(5, n as u64, opts), sum);
        }
    }

    #[test]
    fn trailing_partial_record_is_left_alone() {
        let mut buf = vec![0xEEu8; 2 * REC_SIZE + 7];
        fill_records(&mut buf, 0, GenOptions::default());
        assert!(buf[2 * REC_SIZE..].iter().all(|&b| b == 0xEE));
        assert_eq!(&buf[..10], b"JimGrayRIP");
    }

    #[test]
    fn record_numbers_wrap_at_2_pow_128() {
        let opts = GenOptions { ascii: true, skew: false };
        let mut buf = vec![0u8; 2 * REC_SIZE];
        fill_records(&mut buf, u128::MAX, opts);
        assert_eq!(&buf[12..44], b"FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF");
        assert_eq!(buf[REC_SIZE..], generate_record(0, opts)[..]);
    }
}
