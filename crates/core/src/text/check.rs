//! `-c` / `-C`: checking that input is already in order, without sorting it.
//!
//! The input is read in chunks like a sort's; each line is compared with the one before it (the last
//! line of a chunk is kept for the next). With `unique`, equal neighbours are disorder too.

use super::chunk::Lines;
use super::reader::{LineReader, TextInputs};
use crate::config::{Input, LineFormat};
use crate::error::Result;
use std::cmp::Ordering;
use std::sync::Arc;
use xsort_io::{AlignedBuf, IoCounters};

/// The first line out of order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disorder {
    /// Its 1-based line number.
    pub line_number: u64,
    /// The line, without its terminator.
    pub line: Vec<u8>,
}

/// Checks `input` (decompressed when `decompress` is set), past its header; returns the first line
/// that is out of order, if any. Line numbers count records, the header's included.
pub fn check_order(input: &Input, lines: &LineFormat, decompress: bool, chunk_bytes: usize) -> Result<Option<Disorder>> {
    let (splitter, unique) = (lines.splitter(), lines.unique);
    let shape = TextInputs { splitter, header: lines.header, decompress, json: lines.order.is_jsonl() };
    let mut reader = LineReader::new(std::slice::from_ref(input), shape, None, Arc::new(IoCounters::default()))?;
    let header = reader.header()?;
    let order = lines.order.with_header(super::first_record(header, splitter))?;
    let order = &order;
    let mut buf = AlignedBuf::new(chunk_bytes.max(4096))?;
    let mut starts = AlignedBuf::new(4096)?;
    let mut prev: Option<Vec<u8>> = None;
    let mut number = splitter.ends(header, 0).count() as u64;
    let bad = |o: Ordering| o == Ordering::Greater || (unique && o == Ordering::Equal);
    while !reader.exhausted() {
        let filled = reader.fill(&mut buf, |bytes, _| bytes >= chunk_bytes)?;
        let lines = Lines::index(&buf.as_slice()[..filled], splitter, &mut starts)?;
        if lines.is_empty() {
            continue;
        }
        if let Some(p) = &prev {
            number += 1;
            if bad(order.compare(p, lines.line(0))) {
                return Ok(Some(Disorder { line_number: number, line: lines.line(0).to_vec() }));
            }
        } else {
            number += 1;
        }
        for i in 1..lines.len() {
            number += 1;
            if bad(order.compare(lines.line(i - 1), lines.line(i))) {
                return Ok(Some(Disorder { line_number: number, line: lines.line(i).to_vec() }));
            }
        }
        prev = Some(lines.line(lines.len() - 1).to_vec());
    }
    Ok(None)
}
