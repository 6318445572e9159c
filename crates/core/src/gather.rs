//! The gather of a sorted output, for records and lines alike: bytes `[first_byte, first_byte +
//! len)` of the records in sorted order, back to back, copied from where they lie in the input's
//! buffer.
//!
//! Any byte range can be gathered on its own, records straddling its ends, so that the output is
//! gathered in parallel pieces of 256 KiB and written in blocks of any size while the next piece is
//! sorted. Each framing says where its sorted records are ([`Placed`]): fixed-size records through
//! their entries (`crate::entry`), lines through the output offsets their layout computed
//! (`crate::text::chunk`).

use rayon::prelude::*;
use xsort_kernels::prefetch::{prefetch_record, GATHER_AHEAD};
use xsort_kernels::stream::copy_streaming;

/// Where the records of a sorted output lie in their buffer.
pub(crate) trait Placed: Copy + Send + Sync {
    /// Whether outputs of [`STREAM_MIN`] bytes or more are copied out with streaming stores.
    const STREAMING: bool;
    /// The record (its rank in the sorted order) holding byte `byte` of the output, and how many
    /// of its bytes come before that one.
    fn find(&self, byte: u64) -> (usize, usize);
    /// Where the record of rank `i` starts in the buffer and how long it is; None past the last.
    fn place(&self, i: usize) -> Option<(usize, usize)>;
    /// Copies the output bytes of the record of rank `i` from its `skip`th on into all of `dst`
    /// (which they fill or overrun); returns how many that is: the record's bytes as they lie in
    /// the buffer, unless the output rewrites records.
    #[inline]
    fn copy(&self, data: &[u8], i: usize, skip: usize, dst: &mut [u8]) -> usize {
        let (start, len) = self.place(i).expect("the output's records cover its bytes");
        let n = (len - skip).min(dst.len());
        dst[..n].copy_from_slice(&data[start + skip..start + skip + n]);
        n
    }
}

/// Outputs at least this large are gathered block by block through the cache and copied out with
/// streaming stores (see [`xsort_kernels::stream`]); a smaller one may still be in the cache when
/// it is read next.
pub(crate) const STREAM_MIN: usize = 64 << 20;

/// The block a streaming gather assembles in the cache before copying it out.
const STREAM_BLOCK: usize = 16 << 10;

/// Fills `dst` with bytes `[first_byte, first_byte + dst.len())` of the sorted output of `placed`
/// (records in `data`), in parallel pieces.
pub(crate) fn gather<P: Placed>(placed: P, data: &[u8], first_byte: u64, dst: &mut [u8]) {
    const PIECE: usize = 256 << 10;
    let streaming = P::STREAMING && dst.len() >= STREAM_MIN;
    crate::pool::install(|| {
        dst.par_chunks_mut(PIECE).enumerate().for_each(|(i, piece)| {
            let first_byte = first_byte + (i * PIECE) as u64;
            if streaming {
                gather_streaming(placed, data, first_byte, piece);
            } else {
                gather_serial(placed, data, first_byte, piece);
            }
        })
    });
}

/// [`gather_serial`] through a cache-resident block, copied out with streaming stores.
fn gather_streaming(placed: impl Placed, data: &[u8], first_byte: u64, dst: &mut [u8]) {
    let mut block = [0u8; STREAM_BLOCK];
    for (j, out) in dst.chunks_mut(STREAM_BLOCK).enumerate() {
        let staged = &mut block[..out.len()];
        gather_serial(placed, data, first_byte + (j * STREAM_BLOCK) as u64, staged);
        copy_streaming(out, staged);
    }
}

/// One piece of the output, on this thread, the records a few ahead prefetched.
fn gather_serial(placed: impl Placed, data: &[u8], first_byte: u64, dst: &mut [u8]) {
    let (mut i, mut skip) = placed.find(first_byte);
    let mut at = 0;
    while at < dst.len() {
        if let Some((start, len)) = placed.place(i + GATHER_AHEAD) {
            prefetch_record(data, start, len);
        }
        at += placed.copy(data, i, skip, &mut dst[at..]);
        skip = 0;
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of `r` bytes in a scrambled order: rank i is record (i * 7919) mod n.
    #[derive(Clone, Copy)]
    struct Scrambled {
        n: usize,
        r: usize,
    }

    impl Placed for Scrambled {
        const STREAMING: bool = true;
        fn find(&self, byte: u64) -> (usize, usize) {
            ((byte / self.r as u64) as usize, (byte % self.r as u64) as usize)
        }
        fn place(&self, i: usize) -> Option<(usize, usize)> {
            (i < self.n).then(|| (i * 7919 % self.n * self.r, self.r))
        }
    }

    /// A streaming gather (records assembled in blocks, copied out with streaming stores) writes
    /// the same bytes as a plain one, for records that straddle blocks and pieces, outputs at any
    /// alignment and parts of the output stream that start inside a record.
    #[test]
    fn streaming_gather_matches_the_plain_one() {
        for r in [1usize, 7, 100, 5000, 40_000] {
            let n = 3 * STREAM_BLOCK / r + 9;
            let data: Vec<u8> = (0..n * r).map(|i| (i * 131 + i / r * 7) as u8).collect();
            let placed = Scrambled { n, r };
            for (skew, first) in [(0usize, 0u64), (3, 1), (13, r as u64 / 2), (64, 5 * r as u64 + 3)] {
                let len = n * r - first as usize;
                let mut want = vec![0u8; len];
                gather_serial(placed, &data, first, &mut want);
                let whole: Vec<u8> = (0..n).flat_map(|i| placed.place(i).map(|(s, l)| &data[s..s + l]).unwrap()).copied().collect();
                assert!(want[..] == whole[first as usize..], "record size {r}, first byte {first}: not the records in order");
                let mut backing = vec![0xA5u8; len + 2 * 64];
                gather_streaming(placed, &data, first, &mut backing[skew..skew + len]);
                assert!(backing[skew..skew + len] == want[..], "record size {r}, skew {skew}, first byte {first}");
                assert!(backing[..skew].iter().chain(&backing[skew + len..]).all(|&b| b == 0xA5), "record size {r}: wrote outside");
            }
        }
    }
}
