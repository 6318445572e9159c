//! K-way merge of sorted runs with a loser tree and read-ahead per run.
//!
//! Each run has two blocks: the one being consumed and the next one, already requested from the
//! read service, so the merge reads in large transfers while it compares. Records that straddle two
//! blocks are assembled in a small staging buffer. Each head's key prefix is cached as a u128, so
//! most comparisons are one integer compare; ties in the prefix fall back to the full key, then to the
//! run index, which keeps the merge stable (runs are numbered in input order).

use crate::error::{Result, SortError};
use crate::key::ResolvedKey;
use crate::runs::{RecordSink, Run};
use crossbeam_channel::Receiver;
use std::cmp::Ordering;
use xsort_io::{AlignedBuf, ReadService};
use xsort_kernels::LoserTree;

type Pending = Receiver<xsort_io::Result<(AlignedBuf, usize)>>;

/// Reads one run record by record.
struct RunCursor {
    run: Run,
    block: usize,
    record_size: usize,
    /// Run-relative offset of the next block to request.
    next_request: u64,
    /// The block being consumed, its run-relative start and valid length.
    cur: Option<AlignedBuf>,
    cur_start: u64,
    cur_len: usize,
    pos: usize,
    /// The block in flight, and its run-relative start.
    pending: Option<(Pending, u64)>,
    staging: Vec<u8>,
    head_at: Option<usize>,
    remaining: u64,
    prefix: u128,
    exhausted: bool,
}

impl RunCursor {
    fn open(run: Run, block: usize, record_size: usize, svc: &ReadService) -> Result<Self> {
        let remaining = run.bytes / record_size as u64;
        let mut c = RunCursor {
            run,
            block,
            record_size,
            next_request: 0,
            cur: None,
            cur_start: 0,
            cur_len: 0,
            pos: 0,
            pending: None,
            staging: vec![0; record_size],
            head_at: None,
            remaining,
            prefix: 0,
            exhausted: false,
        };
        c.request(AlignedBuf::new(block)?, svc)?;
        c.next_block(svc, Some(AlignedBuf::new(block)?))?;
        Ok(c)
    }

    fn request(&mut self, buf: AlignedBuf, svc: &ReadService) -> Result<()> {
        if self.next_request < self.run.bytes {
            // The last block of a run asks only for the run's rest (aligned), not the next extent's data.
            let len = xsort_io::align_up((self.run.bytes - self.next_request) as usize).min(self.block);
            let rx = svc.request(self.run.file.clone(), self.run.offset + self.next_request, len, buf)?;
            self.pending = Some((rx, self.next_request));
            self.next_request += self.block as u64;
        }
        Ok(())
    }

    /// Makes the block in flight current and sends the finished one (or `spare`) to be refilled.
    fn next_block(&mut self, svc: &ReadService, spare: Option<AlignedBuf>) -> Result<()> {
        let (rx, start) = self.pending.take().ok_or_else(|| SortError::Internal("merge read past the end of a run".into()))?;
        let (buf, n) = rx.recv().map_err(|_| SortError::Internal("read service vanished".into()))??;
        let len = (n as u64).min(self.run.bytes - start) as usize;
        if len == 0 {
            return Err(SortError::Internal(format!("temp run in {} is shorter than written", self.run.file.path().display())));
        }
        let old = self.cur.replace(buf);
        (self.cur_start, self.cur_len, self.pos) = (start, len, 0);
        if let Some(b) = old.or(spare) {
            self.request(b, svc)?;
        }
        Ok(())
    }

    /// Moves to the next record.
    fn advance(&mut self, key: &ResolvedKey, svc: &ReadService) -> Result<()> {
        if self.remaining == 0 {
            self.exhausted = true;
            return Ok(());
        }
        let r = self.record_size;
        if self.pos + r <= self.cur_len {
            self.head_at = Some(self.pos);
            self.pos += r;
        } else {
            let mut have = 0;
            while have < r {
                if self.pos == self.cur_len {
                    self.next_block(svc, None)?;
                }
                let n = (r - have).min(self.cur_len - self.pos);
                let cur = self.cur.as_ref().ok_or_else(|| SortError::Internal("no current block".into()))?;
                self.staging[have..have + n].copy_from_slice(&cur.as_slice()[self.pos..self.pos + n]);
                have += n;
                self.pos += n;
            }
            self.head_at = None;
        }
        self.remaining -= 1;
        self.prefix = key.prefix(self.head(), 16);
        Ok(())
    }

    #[inline]
    fn head(&self) -> &[u8] {
        match (self.head_at, &self.cur) {
            (Some(at), Some(cur)) => &cur.as_slice()[at..at + self.record_size],
            _ => &self.staging,
        }
    }
}

/// Strict order of two cursors' heads; exhausted cursors last, ties by run index.
#[inline]
fn less(c: &[RunCursor], key: &ResolvedKey, exact: bool, a: usize, b: usize) -> bool {
    let (x, y) = (&c[a], &c[b]);
    if x.exhausted || y.exhausted {
        return !x.exhausted;
    }
    let o = x.prefix.cmp(&y.prefix);
    let o = if o == Ordering::Equal && !exact { key.compare(x.head(), y.head()) } else { o };
    o.then(a.cmp(&b)) == Ordering::Less
}

/// Merges `runs` (sorted, in input order) into `out`.
pub fn merge_runs(runs: &[Run], key: &ResolvedKey, record_size: usize, block: usize, svc: &ReadService, out: &mut RecordSink) -> Result<()> {
    let mut cursors = runs.iter().map(|r| RunCursor::open(r.clone(), block, record_size, svc)).collect::<Result<Vec<_>>>()?;
    for c in &mut cursors {
        c.advance(key, svc)?;
    }
    let exact = key.len() <= 16;
    let mut tree = LoserTree::new(cursors.len(), |a, b| less(&cursors, key, exact, a, b));
    loop {
        let w = tree.winner();
        if cursors[w].exhausted {
            break;
        }
        out.push(cursors[w].head())?;
        cursors[w].advance(key, svc)?;
        tree.replay(|a, b| less(&cursors, key, exact, a, b));
    }
    Ok(())
}
