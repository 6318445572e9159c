//! TEMPORARY stand-in for xsort-core's library API (`Sort`, `Sorting`), with the signatures the
//! lead announced, so the C layer compiles and its tests run before the real API lands on main.
//! It sorts in memory, by whole records. Deleted when the real API is merged.

use std::path::PathBuf;

use serde::Serialize;
use xsort_core::spec::{parse_spec, SpecError};

#[derive(Debug, thiserror::Error)]
pub enum SortError {
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Io(String),
}
pub type Result<T, E = SortError> = std::result::Result<T, E>;

#[derive(Clone, Debug, Serialize)]
pub struct SortStats {
    pub records: u64,
    pub bytes: u64,
}
impl SortStats {
    pub fn render(&self) -> String {
        format!("xsort statistics\n  records      {} ({} bytes)\n", self.records, self.bytes)
    }
}

#[derive(Clone)]
pub struct Sort {
    record_size: Option<usize>,
    delimiter: u8,
    inputs: Vec<PathBuf>,
    output: Option<PathBuf>,
}

impl Sort {
    pub fn from_spec(statements: &str) -> Result<Sort> {
        let spec = parse_spec(statements)?;
        if spec.record_size.is_none() && spec.record_delimiter.is_none() {
            return Err(SortError::Config("no -format".into()));
        }
        Ok(Sort {
            record_size: spec.record_size,
            delimiter: spec.record_delimiter.unwrap_or(b'\n'),
            inputs: spec.in_files.iter().map(|f| f.path.clone()).collect(),
            output: spec.out_file.map(|f| f.path),
        })
    }
    pub fn record_size(&self) -> Option<usize> {
        self.record_size
    }
    pub fn has_file_input(&self) -> bool {
        !self.inputs.is_empty()
    }
    pub fn has_file_output(&self) -> bool {
        self.output.is_some()
    }
    pub fn start(self) -> Result<Sorting> {
        let mut data = Vec::new();
        for p in &self.inputs {
            data.extend(std::fs::read(p).map_err(|e| SortError::Io(format!("{}: {e}", p.display())))?);
        }
        Ok(Sorting { sort: self, data, out: Vec::new(), pos: 0, finished: false, stats: None })
    }
}

pub struct Sorting {
    sort: Sort,
    data: Vec<u8>,
    out: Vec<u8>,
    pos: usize,
    finished: bool,
    stats: Option<SortStats>,
}

impl Sorting {
    pub fn push(&mut self, data: &[u8]) -> Result<()> {
        if self.finished {
            return Err(SortError::Usage("push after finish".into()));
        }
        self.data.extend_from_slice(data);
        Ok(())
    }
    pub fn finish(&mut self) -> Result<()> {
        let mut recs: Vec<&[u8]> = match self.sort.record_size {
            Some(n) => self.data.chunks(n).collect(),
            None => self.data.split_inclusive(|&b| b == self.sort.delimiter).collect(),
        };
        recs.sort();
        let mut out = Vec::with_capacity(self.data.len());
        for r in &recs {
            out.extend_from_slice(r);
        }
        let records = recs.len() as u64;
        self.finished = true;
        if let Some(p) = &self.sort.output {
            std::fs::write(p, &out).map_err(|e| SortError::Io(format!("{}: {e}", p.display())))?;
            self.stats = Some(SortStats { records, bytes: out.len() as u64 });
        } else {
            self.out = out;
        }
        self.data = Vec::new();
        Ok(())
    }
    pub fn pull(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut n = (self.out.len() - self.pos).min(buf.len());
        if let Some(rs) = self.sort.record_size {
            if buf.len() < rs {
                return Err(SortError::Usage("buffer smaller than a record".into()));
            }
            n -= n % rs;
        }
        buf[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
        self.pos += n;
        if n == 0 && self.stats.is_none() {
            self.stats = Some(SortStats { records: 0, bytes: self.out.len() as u64 });
        }
        Ok(n)
    }
    pub fn stats(&self) -> Option<&SortStats> {
        self.stats.as_ref()
    }
}
