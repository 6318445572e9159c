//! Checking that records are sorted: valsort's logic as a library.
//!
//! Each adjacent pair of 100-byte records is compared on its 10-byte key as
//! unsigned bytes (memcmp order): equal counts a duplicate, greater counts an
//! unordered record. The comparison is this module's own (the key read as a
//! big-endian 80-bit integer), deliberately independent of xsort's sort
//! engine and key normalisation, so that it stays a real check.
//!
//! Work is cut into chunks validated in parallel; each yields a [`Summary`]
//! and summaries of adjacent chunks combine exactly (the boundary pair is
//! compared when they are appended), so the result never depends on the
//! number of threads or the I/O block size.

use std::cmp::Ordering;
use std::path::Path;

use rayon::prelude::*;

use crate::checksum::checksum_serial;
use crate::error::{Error, Result};
use crate::generate::in_pool;
use crate::io::{read_blocks, Input, IoConfig};
use crate::record::{KEY_SIZE, REC_SIZE};
use crate::summary::{combine_summaries, parse_summaries, Summary};

/// Records per parallel task (410 KB): an 8 MiB I/O block splits into about
/// twenty tasks, so threads finish each block together.
const TASK_RECS: usize = 4 * 1024;

/// How keys are compared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KeyOrder {
    /// Unsigned bytes, like `memcmp` (the default).
    #[default]
    Bytes,
    /// ASCII letters folded to lower case first (valsort `-i`), like C's
    /// `strcasecmp` in the C locale, but over the 10-byte key only and with
    /// NUL an ordinary byte. (The 1.5 build's `-i` runs `strcasecmp` on the
    /// records themselves, which reads on past the key until a NUL byte.)
    AsciiCaseInsensitive,
}

impl KeyOrder {
    /// Compares the keys (first 10 bytes) of two records or keys.
    ///
    /// # Panics
    /// If `a` or `b` is shorter than 10 bytes.
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        self.key_value(a).cmp(&self.key_value(b))
    }

    /// The key as a big-endian integer: integer order is byte order.
    #[inline(always)]
    fn key_value(self, rec: &[u8]) -> u128 {
        let mut key = [0u8; 16];
        key[..KEY_SIZE].copy_from_slice(&rec[..KEY_SIZE]);
        if self == KeyOrder::AsciiCaseInsensitive {
            key.make_ascii_lowercase();
        }
        u128::from_be_bytes(key)
    }
}

/// How to validate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValidateOptions {
    /// Key comparison (`-i` selects [`KeyOrder::AsciiCaseInsensitive`]).
    pub order: KeyOrder,
    /// Worker threads; 0 runs on the current rayon pool (all cores by default).
    pub threads: usize,
    /// How files are read.
    pub io: IoConfig,
}

/// Validates records held in memory. Errors: [`Error::Empty`] for no data,
/// [`Error::PartialRecord`] when the length is not a multiple of 100.
pub fn validate_bytes(data: &[u8], opts: &ValidateOptions) -> Result<Summary> {
    check_length(data.len() as u128)?;
    in_pool(opts.threads, || Ok(summarize_par(data, opts.order)))
}

/// Validates a file of records (or a pipe, or any readable path).
pub fn validate_file(path: &Path, opts: &ValidateOptions) -> Result<Summary> {
    let input = Input::open(path, &opts.io)?;
    if let Some(size) = input.size() {
        // Known up front for regular files: fail before reading anything.
        check_length(u128::from(size))?;
    }
    in_pool(opts.threads, || match input.size() {
        Some(size) if input.mostly_cached() => validate_cached(&input, size, opts.order),
        _ => validate_streamed(&input, opts),
    })
}

/// A file the page cache holds: every task copies its own slice of records
/// with `pread` and checks them while they are hot in its core's cache, so
/// the copy is shared by all threads and no block crosses cores.
fn validate_cached(input: &Input, size: u64, order: KeyOrder) -> Result<Summary> {
    let task_bytes = (TASK_RECS * REC_SIZE) as u64;
    let tasks = size.div_ceil(task_bytes);
    let parts: Vec<Summary> = (0..tasks)
        .into_par_iter()
        .map_init(
            || vec![0u8; TASK_RECS * REC_SIZE],
            |buf, task| {
                let offset = task * task_bytes;
                let part = &mut buf[..task_bytes.min(size - offset) as usize];
                input.read_cached(part, offset)?;
                Ok(summarize(part, order))
            },
        )
        .collect::<Result<_>>()?;
    combine_summaries(parts, order).ok_or(Error::Empty)
}

/// Any other input: large blocks read ahead by I/O threads (direct where
/// possible), each checked in parallel as it arrives.
fn validate_streamed(input: &Input, opts: &ValidateOptions) -> Result<Summary> {
    let mut total: Option<Summary> = None;
    let mut bytes = 0u128;
    read_blocks(input, &opts.io, |block| {
        bytes += block.len() as u128;
        let whole = block.len() - block.len() % REC_SIZE;
        if whole > 0 {
            let part = summarize_par(&block[..whole], opts.order);
            match &mut total {
                Some(t) => t.append(&part, opts.order),
                None => total = Some(part),
            }
        }
        Ok(())
    })?;
    check_length(bytes)?;
    total.ok_or(Error::Empty)
}

/// Validates concatenated 280-byte summaries held in memory (valsort `-s`).
pub fn validate_summaries(bytes: &[u8], order: KeyOrder) -> Result<Summary> {
    combine_summaries(parse_summaries(bytes)?, order).ok_or(Error::Empty)
}

/// Validates a file of concatenated summaries (valsort `-s`).
pub fn validate_summary_file(path: &Path, order: KeyOrder) -> Result<Summary> {
    let bytes = std::fs::read(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => Error::Open { path: path.to_path_buf(), source },
        _ => Error::Read { path: path.to_path_buf(), source },
    })?;
    validate_summaries(&bytes, order)
}

fn check_length(bytes: u128) -> Result<()> {
    let tail = bytes % REC_SIZE as u128;
    if bytes == 0 {
        Err(Error::Empty)
    } else if tail > 0 {
        Err(Error::PartialRecord)
    } else {
        Ok(())
    }
}

/// Summary of a non-empty run of whole records, in parallel on the current pool.
fn summarize_par(data: &[u8], order: KeyOrder) -> Summary {
    let parts: Vec<Summary> = data.par_chunks(TASK_RECS * REC_SIZE).map(|chunk| summarize(chunk, order)).collect();
    // Non-empty input gives at least one part.
    combine_summaries(parts, order).unwrap_or_else(|| summarize(data, order))
}

/// Summary of a non-empty run of whole records on this thread.
fn summarize(data: &[u8], order: KeyOrder) -> Summary {
    match order {
        KeyOrder::Bytes => summarize_with::<false>(data),
        KeyOrder::AsciiCaseInsensitive => summarize_with::<true>(data),
    }
}

fn summarize_with<const FOLD: bool>(data: &[u8]) -> Summary {
    let order = if FOLD { KeyOrder::AsciiCaseInsensitive } else { KeyOrder::Bytes };
    let mut recs = data.chunks_exact(REC_SIZE);
    let mut first_record = [0u8; REC_SIZE];
    if let Some(first) = recs.next() {
        first_record.copy_from_slice(first);
    }
    let mut prev = order.key_value(&first_record);
    let (mut unordered, mut duplicates) = (0u64, 0u64);
    let mut last = &first_record[..];
    for rec in recs {
        let key = order.key_value(rec);
        // Branch-free counting: on unsorted input a branch here would be
        // mispredicted half the time.
        duplicates += u64::from(key == prev);
        unordered += u64::from(key < prev);
        prev = key;
        last = rec;
    }
    // A second pass for the checksum: the chunk is still in cache, and the
    // CRC kernel runs fastest in a loop of its own.
    let checksum = checksum_serial(data);
    let mut last_record = [0u8; REC_SIZE];
    last_record.copy_from_slice(last);
    Summary {
        first_unordered: if unordered > 0 { first_unordered(data, order) } else { None },
        unordered: u128::from(unordered),
        records: (data.len() / REC_SIZE) as u128,
        duplicates: u128::from(duplicates),
        checksum,
        first_record,
        last_record,
    }
}

/// Index of the first record whose key is less than its predecessor's (a
/// second scan, run only when there is one; it stops there).
fn first_unordered(data: &[u8], order: KeyOrder) -> Option<u128> {
    let mut keys = data.chunks_exact(REC_SIZE).map(|rec| order.key_value(rec));
    let mut prev = keys.next()?;
    for (i, key) in keys.enumerate() {
        if key < prev {
            return Some(i as u128 + 1);
        }
        prev = key;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recs(keys: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for (j, k) in keys.iter().enumerate() {
            let mut r = [b'.'; REC_SIZE];
            r[..k.len()].copy_from_slice(k);
            r[50] = j as u8;
            out.extend_from_slice(&r);
        }
        out
    }

    #[test]
    fn counts_by_hand() {
        let data = recs(&[b"aaaaaaaaaa", b"aaaaaaaaaa", b"b", b"a", b"a", b"c"]);
        let s = validate_bytes(&data, &ValidateOptions::default()).expect("valid input");
        assert_eq!(s.records, 6);
        assert_eq!(s.duplicates, 2);
        assert_eq!(s.unordered, 1);
        assert_eq!(s.first_unordered, Some(3));
        assert_eq!(s.checksum, crate::checksum_of(&data));
        assert_eq!(&s.first_record[..], &data[..REC_SIZE]);
        assert_eq!(&s.last_record[..], &data[5 * REC_SIZE..]);
    }

    #[test]
    fn only_the_key_is_compared() {
        let mut data = recs(&[b"k", b"k"]);
        data[10] = 0xFF; // after the key: no effect
        let s = validate_bytes(&data, &ValidateOptions::default()).expect("valid input");
        assert_eq!((s.duplicates, s.unordered), (1, 0));
    }

    #[test]
    fn case_folding_is_ascii_only() {
        let data = recs(&[b"ABC", b"abc", b"_"]);
        let plain = validate_bytes(&data, &ValidateOptions::default()).expect("valid");
        assert_eq!((plain.duplicates, plain.unordered), (0, 1));
        let opts = ValidateOptions { order: KeyOrder::AsciiCaseInsensitive, ..Default::default() };
        let folded = validate_bytes(&data, &opts).expect("valid");
        // 'a' (0x61) sorts after '_' (0x5F) once folded, as with strcasecmp.
        assert_eq!((folded.duplicates, folded.unordered), (1, 1));
        assert_eq!(KeyOrder::AsciiCaseInsensitive.compare(&[0xC9; 10], &[0xE9; 10]), Ordering::Less);
    }

    #[test]
    fn length_errors() {
        let opts = ValidateOptions::default();
        assert!(matches!(validate_bytes(&[], &opts), Err(Error::Empty)));
        assert!(matches!(validate_bytes(&[0; 150], &opts), Err(Error::PartialRecord)));
        assert!(matches!(validate_summaries(&[], KeyOrder::Bytes), Err(Error::Empty)));
        assert!(matches!(validate_summaries(&[0; 281], KeyOrder::Bytes), Err(Error::PartialSummary)));
    }

    #[test]
    fn every_file_path_agrees() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("recs");
        let n = 3 * TASK_RECS + 11;
        let mut data = vec![0u8; n * REC_SIZE];
        crate::fill_records(&mut data, 9, crate::GenOptions { ascii: false, skew: true });
        std::fs::write(&path, &data).expect("write");
        let expect = validate_bytes(&data, &ValidateOptions::default()).expect("valid");
        let small = IoConfig { block_bytes: 1, inflight: 2, direct: true };
        // Cached (per-task reads), buffered blocks, and direct blocks after
        // the file has left the page cache.
        let cached = ValidateOptions { io: small, ..Default::default() };
        assert_eq!(validate_file(&path, &cached).expect("cached"), expect);
        let buffered = ValidateOptions { io: IoConfig { direct: false, ..small }, threads: 3, ..Default::default() };
        assert_eq!(validate_file(&path, &buffered).expect("buffered"), expect);
        let file = std::fs::File::open(&path).expect("open");
        // SAFETY: fsync and fadvise on our own descriptor; the latter is a hint.
        unsafe {
            use std::os::fd::AsRawFd;
            libc::fsync(file.as_raw_fd());
            libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
        }
        assert_eq!(validate_file(&path, &cached).expect("cold"), expect);
    }

    #[test]
    fn chunked_equals_serial() {
        let n = 3 * TASK_RECS + 5;
        let mut data = vec![0u8; n * REC_SIZE];
        crate::fill_records(&mut data, 0, crate::GenOptions { ascii: true, skew: true });
        let serial = summarize(&data, KeyOrder::Bytes);
        for threads in [1, 2, 3] {
            let opts = ValidateOptions { threads, ..Default::default() };
            assert_eq!(validate_bytes(&data, &opts).expect("valid"), serial);
        }
    }
}
