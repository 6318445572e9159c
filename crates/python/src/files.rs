//! Sorts of files and streams: `sort_file` (files to a file) and `Session` (the streaming
//! `Sorter`: records or lines pushed in, sorted chunks pulled out), both spilling to temp
//! directories past their memory budget as the `xsort` command does.
//!
//! `sort_file` names its inputs and output to the core, which sorts them as the `xsort` command
//! does (inputs mapped or read ahead, the output written behind the sort and put in place when
//! complete, so an interrupted or failed sort leaves the target as it was). Ctrl-C sets the core's
//! cancel flag: the sort stops within a fraction of a second, its temp files removed.

use crate::arrays::Memory;
use crate::wait;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};
use xsort_core::{CsvDialect, Locale, OutputCompression, Sort, SortError, SortStats, Sorting, TempCompression};

/// Bytes pulled at a time (rounded down to whole records).
const PULL_BYTES: usize = 4 << 20;

/// Bytes pushed at a time, so that Ctrl-C is heard between them.
const PUSH_BYTES: usize = 8 << 20;

/// What a sort is and the resources it takes.
struct Options {
    record_size: Option<usize>,
    keys: Option<Vec<String>>,
    args: Option<Vec<String>>,
    spec: Option<String>,
    memory: Option<u64>,
    temp_dirs: Option<Vec<PathBuf>>,
    threads: Option<usize>,
    /// Lines are CSV records with this separator.
    csv: Option<String>,
    /// Records of each input that are its header.
    header: usize,
    /// Lines are JSON values.
    jsonl: bool,
    /// The locale lines order in: None the C locale (bytes), "" the environment's, else a name.
    locale: Option<String>,
    /// Temp runs zstd-compressed at this level; 0 never; None when the temp space is short.
    compress_temp: Option<u32>,
}

impl Options {
    /// The sort they describe.
    fn sort(self) -> Result<Sort, SortError> {
        let mut sort = match (self.spec, self.record_size) {
            (Some(_), Some(_)) => return Err(SortError::Usage("give either spec or record_size, not both".into())),
            (Some(spec), None) => Sort::from_spec(&spec)?,
            (None, Some(r)) => Sort::records(r),
            (None, None) => Sort::lines(),
        };
        if let Some(separator) = self.csv {
            let [separator] = separator.as_bytes()[..] else {
                return Err(SortError::Usage(format!("csv takes True or a one-byte separator, not '{separator}'")));
            };
            sort = sort.csv(CsvDialect::with_separator(separator));
        }
        if self.header > 0 {
            sort = sort.header(self.header);
        }
        if self.jsonl {
            sort = sort.jsonl();
        }
        match self.locale.as_deref() {
            None => {}
            Some("") => sort = sort.locale(Locale::from_env(|var| std::env::var_os(var).map(|v| v.to_string_lossy().into_owned()))?),
            Some(name) => sort = sort.locale(Locale::named(name)?),
        }
        if let Some(args) = self.args {
            sort = sort.gnu_args(args)?;
        }
        // Records' keys are byte ranges; lines' are GNU's KEYDEFs (or a header's column names).
        for key in self.keys.unwrap_or_default() {
            sort = match sort.record_size() {
                Some(_) => sort.key_bytes(&key)?,
                None => sort.gnu_args([format!("--key={key}")])?,
            };
        }
        if let Some(m) = self.memory {
            sort = sort.memory(m);
        }
        match self.compress_temp {
            None => {}
            Some(0) => sort = sort.compress_temp(TempCompression::Plain),
            Some(level) => {
                sort = sort.compress_temp(TempCompression::zstd(level).map_err(|e| SortError::Usage(format!("compress_temp: {e}")))?)
            }
        }
        for dir in self.temp_dirs.unwrap_or_default() {
            sort = sort.temp_dir(dir);
        }
        if let Some(n) = self.threads {
            sort = sort.threads(n);
        }
        Ok(sort)
    }
}

/// Sorts `inputs` into `output`; returns the statistics as JSON (the `--stats-json` content).
#[pyfunction]
#[pyo3(signature = (inputs, output, record_size=None, keys=None, args=None, memory=None, temp_dirs=None, threads=None, sync=false, compress=None, decompress=true, csv=None, header=0, jsonl=false, locale=None, compress_temp=None))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments
pub(crate) fn sort_file(
    py: Python<'_>,
    inputs: Vec<PathBuf>,
    output: PathBuf,
    record_size: Option<usize>,
    keys: Option<Vec<String>>,
    args: Option<Vec<String>>,
    memory: Option<u64>,
    temp_dirs: Option<Vec<PathBuf>>,
    threads: Option<usize>,
    sync: bool,
    compress: Option<String>,
    decompress: bool,
    csv: Option<String>,
    header: usize,
    jsonl: bool,
    locale: Option<String>,
    compress_temp: Option<u32>,
) -> PyResult<String> {
    let options = Options { record_size, keys, args, spec: None, memory, temp_dirs, threads, csv, header, jsonl, locale, compress_temp };
    let mut sort = options.sort().map_err(|e| crate::py_error(py, e))?;
    if let Some(c) = compress {
        let compression = OutputCompression::parse(&c).map_err(|e| crate::raise(py, "UsageError", format!("compress='{c}': {e}")))?;
        sort = sort.compress_output(compression);
    }
    sort = sort.decompress(decompress);
    if inputs.is_empty() {
        return Err(crate::raise(py, "UsageError", "no input files".into()));
    }
    for path in &inputs {
        sort = sort.input_path(path);
    }
    let cancel = Arc::new(AtomicBool::new(false));
    let sort = sort.output_path(output).sync(sync).cancel_flag(cancel.clone());
    let sorted = wait::run(py, cancel, move || sort.run().and_then(|stats| stats_json(Some(&stats))))?;
    sorted.map_err(|e| crate::py_error(py, e))
}

/// A pull buffer's size for records of `record_size` bytes (None: lines).
fn pull_size(record_size: Option<usize>) -> usize {
    record_size.map_or(PULL_BYTES, |r| r.max(PULL_BYTES / r * r))
}

fn stats_json(stats: Option<&SortStats>) -> Result<String, SortError> {
    let stats = stats.ok_or_else(|| SortError::Internal("the sort ended without statistics".into()))?;
    serde_json::to_string(stats).map_err(|e| SortError::Internal(format!("statistics: {e}")))
}

/// A streaming sort: the core's push/pull session, for `xsort.Sorter`.
#[pyclass(module = "xsort._xsort")]
pub(crate) struct Session {
    sorting: Mutex<Option<Sorting>>,
    record_size: Option<usize>,
}

impl Session {
    fn lock(&self) -> MutexGuard<'_, Option<Sorting>> {
        self.sorting.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` on the live session without the GIL.
    fn with<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut Sorting) -> Result<T, SortError> + Send) -> PyResult<T> {
        let result = py.detach(|| match self.lock().as_mut() {
            Some(sorting) => f(sorting).map_err(Some),
            None => Err(None),
        });
        result.map_err(|e| match e {
            Some(e) => crate::py_error(py, e),
            None => crate::raise(py, "UsageError", "the sorter is closed".into()),
        })
    }

    /// Cancels the sort (its temp files are removed) after Ctrl-C, and passes `e` on. (After an
    /// error there is nothing to cancel: the failed sort has cleaned up, and later calls repeat it.)
    fn cancel(&self, py: Python<'_>, e: PyErr) -> PyErr {
        py.detach(|| drop(self.lock().take()));
        e
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Dropping an unfinished session waits for its sort to stop: not with the GIL held.
        if let Some(sorting) = self.lock().take() {
            Python::attach(|py| py.detach(move || drop(sorting)));
        }
    }
}

#[pymethods]
impl Session {
    #[new]
    #[pyo3(signature = (record_size=None, keys=None, args=None, spec=None, memory=None, temp_dirs=None, threads=None, expected_bytes=None, csv=None, header=0, jsonl=false, locale=None, compress_temp=None))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments
    fn new(
        py: Python<'_>,
        record_size: Option<usize>,
        keys: Option<Vec<String>>,
        args: Option<Vec<String>>,
        spec: Option<String>,
        memory: Option<u64>,
        temp_dirs: Option<Vec<PathBuf>>,
        threads: Option<usize>,
        expected_bytes: Option<u64>,
        csv: Option<String>,
        header: usize,
        jsonl: bool,
        locale: Option<String>,
        compress_temp: Option<u32>,
    ) -> PyResult<Session> {
        let options = Options { record_size, keys, args, spec, memory, temp_dirs, threads, csv, header, jsonl, locale, compress_temp };
        let sort = options.sort().map(|s| match expected_bytes {
            Some(bytes) => s.expected_input_bytes(bytes),
            None => s,
        });
        let sorting = sort.and_then(Sort::start).map_err(|e| crate::py_error(py, e))?;
        Ok(Session { record_size: sorting.record_size(), sorting: Mutex::new(Some(sorting)) })
    }

    /// Bytes per record; None for lines.
    #[getter]
    fn record_size(&self) -> Option<usize> {
        self.record_size
    }

    /// Gives the bytes of `data` (a C-contiguous uint8 array) to the sort, a slice at a time.
    fn push(&self, py: Python<'_>, data: Bound<'_, PyAny>) -> PyResult<()> {
        let memory = Memory::of(&data, false)?;
        // SAFETY: `data` is borrowed for this call, and the slices are used only during it.
        let bytes = unsafe { memory.bytes() };
        for chunk in bytes.chunks(PUSH_BYTES) {
            self.with(py, |s| s.push(chunk))?;
            py.check_signals().map_err(|e| self.cancel(py, e))?;
        }
        Ok(())
    }

    /// Ends the input.
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |s| s.finish())
    }

    /// Pulls sorted output into `buf` (a C-contiguous writable uint8 array); returns the bytes
    /// given, whole records only; 0 at the end.
    fn pull_into(&self, py: Python<'_>, buf: Bound<'_, PyAny>) -> PyResult<usize> {
        let memory = Memory::of(&buf, true)?;
        // SAFETY: `buf` is borrowed for this call and the caller's to fill.
        let bytes = unsafe { memory.bytes_mut() };
        let n = self.with(py, |s| s.pull(bytes))?;
        py.check_signals().map_err(|e| self.cancel(py, e))?;
        Ok(n)
    }

    /// The next sorted chunk, None at the end.
    fn pull<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let mut buf = vec![0u8; pull_size(self.record_size)];
        let n = self.with(py, |s| s.pull(&mut buf))?;
        py.check_signals().map_err(|e| self.cancel(py, e))?;
        Ok((n > 0).then(|| PyBytes::new(py, &buf[..n])))
    }

    /// The statistics as JSON once the sort has ended, else None.
    fn stats(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let guard = self.lock();
        match guard.as_ref().and_then(|s| s.stats()) {
            Some(stats) => stats_json(Some(stats)).map(Some).map_err(|e| crate::py_error(py, e)),
            None => Ok(None),
        }
    }

    /// Ends the session; an unfinished sort is cancelled and its temp files removed.
    fn close(&self, py: Python<'_>) {
        py.detach(|| drop(self.lock().take()));
    }
}
