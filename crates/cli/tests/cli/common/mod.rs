//! Helpers shared by the integration tests: run the real `xsort` binary on real files in a
//! temporary directory, make test data, sort it independently (a stable `sort_by` over the
//! records), read the statistics JSON, and check that nothing was left behind.
//!
//! Every test owns a [`Fixture`]: a fresh directory holding its files and a `tmp/` subdirectory
//! that is `TMPDIR` for the commands it builds, so the default temp directory can be checked too.

#![allow(dead_code)]

use std::cmp::Ordering;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use xsort_sortbench as sb;

/// The binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_xsort")
}

/// The smallest budget xsort accepts; sorts of a few hundred KB spill with it.
pub const TINY: &str = "256K";

/// A test's private directory.
pub struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// A fresh directory with an empty `tmp/` (the commands' `TMPDIR`).
    pub fn new() -> Fixture {
        let dir = tempfile::Builder::new().prefix("xsort-it-").tempdir().expect("create test dir");
        std::fs::create_dir(dir.path().join("tmp")).expect("create tmp dir");
        Fixture { dir }
    }

    /// The fixture's root.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// A path inside the fixture.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The default temp directory of the commands (`TMPDIR`).
    pub fn tmp(&self) -> PathBuf {
        self.path("tmp")
    }

    /// A new (empty) directory inside the fixture.
    pub fn mkdir(&self, name: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::create_dir_all(&p).expect("mkdir");
        p
    }

    /// Writes a file and returns its path.
    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).expect("write test file");
        p
    }

    /// `xsort` with `TMPDIR` pointing at the fixture's `tmp/`, run from the fixture's root, under
    /// `LC_ALL=C` (xsort warns once about a locale that collates, whatever the test's environment).
    /// (stderr is a pipe, so there is no progress bar unless asked for.)
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(bin());
        c.env("TMPDIR", self.tmp()).env("LC_ALL", "C").current_dir(self.root());
        c
    }

    /// `xsort` under `sh -c 'PRELUDE && exec xsort ARGS'`, for resource limits (`ulimit`).
    pub fn cmd_under_sh(&self, prelude: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!("{prelude} && exec \"$0\" \"$@\""))
            .arg(bin())
            .env("TMPDIR", self.tmp())
            .env("LC_ALL", "C")
            .current_dir(self.root());
        c
    }

    /// Asserts that the default temp dir is empty and that no file whose name holds `.xsort-`
    /// (output or temp leftovers) exists anywhere under the fixture.
    pub fn assert_clean(&self) {
        assert_dir_empty(&self.tmp());
        assert_no_xsort_files(self.root());
    }
}

/// Drops the file at `path` from the page cache (written back first) and checks that it is gone, so
/// that xsort reads it as it would a file on disk: a single input mostly in the page cache is
/// sorted from a mapping of the cache in one pass whenever its entries fit the budget, whatever
/// its size, and would never spill.
pub fn evict(path: &Path) {
    use std::os::unix::io::AsRawFd;
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    f.sync_all().unwrap_or_else(|e| panic!("fsync {}: {e}", path.display()));
    // SAFETY: a valid open descriptor; fadvise only changes what is cached.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(rc, 0, "posix_fadvise(DONTNEED) on {}", path.display());
    let cached = xsort_io::page_cache_fraction(&f).unwrap_or(0.0);
    assert!(cached < 0.5, "{} is still {:.0}% in the page cache after eviction (a tmpfs?)", path.display(), cached * 100.0);
}

/// Asserts that `dir` has no entries.
pub fn assert_dir_empty(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read_dir {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").file_name())
        .collect();
    assert!(left.is_empty(), "{} should be empty, holds {left:?}", dir.display());
}

/// Asserts that no file under `dir` (recursively) has `.xsort-` in its name.
pub fn assert_no_xsort_files(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read_dir {}: {e}", dir.display())) {
        let e = e.expect("dir entry");
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(!name.contains(".xsort-"), "leftover xsort file {}", e.path().display());
        if e.file_type().expect("file type").is_dir() {
            assert_no_xsort_files(&e.path());
        }
    }
}

/// One inotify instance for all the tests of a process (a user may have only 128), the directories
/// it watches by watch descriptor, and whether a file was seen in each.
struct Watcher {
    fd: std::os::fd::OwnedFd,
    dirs: std::collections::BTreeMap<i32, (PathBuf, bool)>,
}

static WATCHER: std::sync::Mutex<Option<Watcher>> = std::sync::Mutex::new(None);

impl Watcher {
    fn new() -> Watcher {
        use std::os::fd::{FromRawFd, OwnedFd};
        // SAFETY: inotify_init1 has no preconditions; the result is checked.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(fd >= 0, "inotify_init1: {}", std::io::Error::last_os_error());
        // SAFETY: fd is a fresh descriptor that nothing else owns.
        Watcher { fd: unsafe { OwnedFd::from_raw_fd(fd) }, dirs: Default::default() }
    }

    /// Reads the pending events: one with a name is about a file in the directory (an overflow
    /// hides some, so it counts for all).
    fn drain(&mut self) {
        use std::os::fd::AsRawFd;
        let mut buf = vec![0u8; 64 << 10];
        loop {
            // SAFETY: reading into a buffer we own, of its length.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                return;
            }
            let mut at = 0;
            while at + 16 <= n as usize {
                let wd = i32::from_ne_bytes(buf[at..at + 4].try_into().unwrap());
                let mask = u32::from_ne_bytes(buf[at + 4..at + 8].try_into().unwrap());
                let len = u32::from_ne_bytes(buf[at + 12..at + 16].try_into().unwrap()) as usize;
                if mask & libc::IN_Q_OVERFLOW != 0 {
                    self.dirs.values_mut().for_each(|d| d.1 = true);
                } else if len > 0 && buf[at + 16] != 0 {
                    if let Some(d) = self.dirs.get_mut(&wd) {
                        d.1 = true;
                    }
                }
                at += 16 + len;
            }
        }
    }
}

/// Starts watching `dir` (inotify) so that [`dir_was_used`] tells whether a file was made or opened
/// in it since. A directory's mtime would not do: an unnamed (`O_TMPFILE`) temp file never changes
/// it, but its opening is reported for a child named `#INODE`.
pub fn watch_dir(dir: &Path) {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let mut w = WATCHER.lock().unwrap();
    let w = w.get_or_insert_with(Watcher::new);
    w.drain();
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
    let mask = libc::IN_CREATE | libc::IN_OPEN | libc::IN_MODIFY | libc::IN_MOVED_TO;
    // SAFETY: a valid descriptor and NUL-terminated path.
    let wd = unsafe { libc::inotify_add_watch(w.fd.as_raw_fd(), c.as_ptr(), mask) };
    assert!(wd >= 0, "inotify_add_watch {}: {}", dir.display(), std::io::Error::last_os_error());
    w.dirs.insert(wd, (dir.to_owned(), false));
}

/// Whether a file was made or opened in `dir` (named, or unnamed) since [`watch_dir`]. Opening the
/// directory itself (to list it) does not count.
pub fn dir_was_used(dir: &Path) -> bool {
    let mut w = WATCHER.lock().unwrap();
    let w = w.as_mut().expect("no directory is watched");
    w.drain();
    let found = w.dirs.values().find(|d| d.0 == dir);
    found.unwrap_or_else(|| panic!("{} is not watched", dir.display())).1
}

// ------------------------------------------------------------------------------------------------
// Running

/// Longest a single xsort command may take before the test kills it and fails (a hang is a bug).
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs a command (stdin from `input`, or empty), capturing stdout and stderr; kills it and fails
/// the test if it runs longer than [`COMMAND_TIMEOUT`].
pub fn run_with_stdin(cmd: &mut Command, input: Option<&[u8]>) -> Output {
    use std::io::Read;
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn xsort");
    let mut stdin = child.stdin.take().expect("stdin");
    let data = input.map(|d| d.to_vec()).unwrap_or_default();
    // Feed stdin and drain stdout and stderr from threads: xsort may do all three at once.
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
        drop(stdin);
    });
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out_reader = drain(Box::new(child.stdout.take().expect("stdout")));
    let err_reader = drain(Box::new(child.stderr.take().expect("stderr")));
    let deadline = std::time::Instant::now() + COMMAND_TIMEOUT;
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for xsort") {
            break st;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "xsort did not finish within {COMMAND_TIMEOUT:?} (killed): {:?} {:?}",
                cmd.get_program(),
                cmd.get_args().collect::<Vec<&OsStr>>()
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    feeder.join().expect("stdin feeder");
    Output { status, stdout: out_reader.join().expect("stdout reader"), stderr: err_reader.join().expect("stderr reader") }
}

/// Runs with empty stdin.
pub fn run(cmd: &mut Command) -> Output {
    run_with_stdin(cmd, None)
}

fn describe(cmd: &Command, out: &Output) -> String {
    format!(
        "command: {:?} {:?}\nstatus: {:?}\nstderr:\n{}",
        cmd.get_program(),
        cmd.get_args().collect::<Vec<&OsStr>>(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs and asserts exit status 0; returns the output.
pub fn ok_with_stdin(cmd: &mut Command, input: Option<&[u8]>) -> Output {
    let out = run_with_stdin(cmd, input);
    assert!(out.status.success(), "xsort failed\n{}", describe(cmd, &out));
    out
}

/// Runs with empty stdin and asserts exit status 0.
pub fn ok(cmd: &mut Command) -> Output {
    ok_with_stdin(cmd, None)
}

/// Runs and asserts the error contract: exit status 2, nothing on stdout, and exactly one line on
/// stderr, `xsort: ...`, that does not say the same thing twice in a row (`a: b: b`). Returns it.
pub fn fail_with_stdin(cmd: &mut Command, input: Option<&[u8]>) -> String {
    let out = run_with_stdin(cmd, input);
    let ctx = describe(cmd, &out);
    assert_eq!(out.status.code(), Some(2), "expected exit status 2\n{ctx}");
    assert!(out.stdout.is_empty(), "nothing may be written to stdout on error\n{ctx}");
    let err = String::from_utf8(out.stderr).expect("stderr is UTF-8");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "expected exactly one line on stderr\n{ctx}");
    let line = lines[0].to_string();
    assert!(line.starts_with("xsort: "), "message must start with 'xsort: '\n{ctx}");
    assert!(!line.contains("panicked"), "panic instead of an error message\n{ctx}");
    let parts: Vec<&str> = line.split(": ").collect();
    if let Some(w) = parts.windows(2).find(|w| w[0] == w[1]) {
        panic!("the message repeats '{}'\n{ctx}", w[0]);
    }
    line
}

/// [`fail_with_stdin`] with empty stdin.
pub fn fail(cmd: &mut Command) -> String {
    fail_with_stdin(cmd, None)
}

// ------------------------------------------------------------------------------------------------
// Data

/// A small deterministic generator (SplitMix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The lines of `data` in byte order (what `LC_ALL=C sort` gives; every line of `data` ends with a
/// newline and holds no byte below it).
pub fn sorted_lines(data: &[u8]) -> Vec<u8> {
    let mut lines: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
    lines.sort();
    lines.concat()
}

/// `len` random bytes.
pub fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng::new(seed);
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        v.extend_from_slice(&r.next_u64().to_le_bytes());
    }
    v.truncate(len);
    v
}

/// `n` records of `rec` bytes, every byte drawn from `alphabet`.
pub fn alphabet_records(n: usize, rec: usize, alphabet: &[u8], seed: u64) -> Vec<u8> {
    let mut r = Rng::new(seed);
    (0..n * rec).map(|_| alphabet[r.below(alphabet.len())]).collect()
}

/// Writes each record's index (big-endian, as many low-order bytes as fit in `width`) at `offset`
/// of the record, so that the output shows where each record came from.
pub fn stamp_sequence(data: &mut [u8], rec: usize, offset: usize, width: usize) {
    assert!(offset + width <= rec && width <= 8);
    for (i, r) in data.chunks_exact_mut(rec).enumerate() {
        let be = (i as u64).to_be_bytes();
        r[offset..offset + width].copy_from_slice(&be[8 - width..]);
    }
}

/// Writes `count` gensort records (binary, or skewed with `skew`) to `path`; returns the checksum.
pub fn gensort(path: &Path, first: u128, count: u64, skew: bool) -> u128 {
    sb::generate_file(path, first, count, sb::GenOptions { ascii: false, skew }, 1).expect("gensort")
}

/// valsort of a file of 100-byte records.
pub fn valsort(path: &Path) -> sb::Summary {
    sb::validate_file(path, &sb::ValidateOptions { threads: 1, ..Default::default() }).expect("valsort")
}

/// Asserts what valsort must say of a sort's output: `records` records, the given checksum, no
/// record out of order.
pub fn assert_valsort_clean(path: &Path, records: u64, checksum: u128) {
    let s = valsort(path);
    assert_eq!(s.records, u128::from(records), "record count of {}", path.display());
    assert_eq!(s.checksum, checksum, "checksum of {} (records lost, duplicated or changed)", path.display());
    assert!(s.is_ordered(), "{}: {} records out of order, first at {:?}", path.display(), s.unordered, s.first_unordered);
}

// ------------------------------------------------------------------------------------------------
// Reference sort

/// One key part, as `--key-bytes OFFSET:LENGTH[:r]` gives it.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    pub offset: usize,
    pub len: usize,
    pub descending: bool,
}

/// Parses `OFFSET:LENGTH[:r]` (the test's own parser: the reference must not share xsort's).
pub fn key(spec: &str) -> Key {
    let p: Vec<&str> = spec.split(':').collect();
    Key { offset: p[0].parse().unwrap(), len: p[1].parse().unwrap(), descending: p.get(2) == Some(&"r") }
}

/// Compares two records by `keys` in priority order (the whole record when there are none).
pub fn compare_records(a: &[u8], b: &[u8], keys: &[Key]) -> Ordering {
    if keys.is_empty() {
        return a.cmp(b);
    }
    for k in keys {
        let o = a[k.offset..k.offset + k.len].cmp(&b[k.offset..k.offset + k.len]);
        let o = if k.descending { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// The expected output: the records of `data` (concatenated inputs, in operand order) stably
/// sorted by the `--key-bytes` specs in `keys`.
pub fn reference_sort(data: &[u8], rec: usize, keys: &[&str]) -> Vec<u8> {
    assert_eq!(data.len() % rec, 0, "test data must be whole records");
    let keys: Vec<Key> = keys.iter().map(|k| key(k)).collect();
    let mut recs: Vec<&[u8]> = data.chunks_exact(rec).collect();
    recs.sort_by(|a, b| compare_records(a, b, &keys)); // stable
    recs.concat()
}

/// Asserts that `actual` is exactly `expected` (both whole records), describing the first
/// difference by record index instead of dumping megabytes.
pub fn assert_same_records(actual: &[u8], expected: &[u8], rec: usize, what: &str) {
    if actual == expected {
        return;
    }
    assert_eq!(
        actual.len(),
        expected.len(),
        "{what}: output has {} bytes ({} records), expected {} bytes ({} records)",
        actual.len(),
        actual.len() as f64 / rec as f64,
        expected.len(),
        expected.len() / rec
    );
    let i = actual.chunks(rec).zip(expected.chunks(rec)).position(|(a, e)| a != e).unwrap();
    let show = |d: &[u8]| d[i * rec..((i + 1) * rec).min(d.len())].iter().take(48).map(|b| format!("{b:02x}")).collect::<String>();
    panic!(
        "{what}: record {i} of {} differs from the stable reference sort\n  actual:   {}\n  expected: {}",
        expected.len() / rec,
        show(actual),
        show(expected)
    );
}

/// Asserts that the file at `out` holds `input` sorted by `keys` (stable).
pub fn assert_sorted_file(out: &Path, input: &[u8], rec: usize, keys: &[&str]) {
    let actual = std::fs::read(out).unwrap_or_else(|e| panic!("read {}: {e}", out.display()));
    assert_same_records(&actual, &reference_sort(input, rec, keys), rec, &out.display().to_string());
}

/// `--key-bytes` arguments for `keys`.
pub fn key_args(keys: &[&str]) -> Vec<String> {
    keys.iter().map(|k| format!("--key-bytes={k}")).collect()
}

// ------------------------------------------------------------------------------------------------
// Statistics

/// Reads a `--stats-json` file.
pub fn read_stats(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: invalid JSON: {e}\n{text}", path.display()))
}

/// A non-negative integer field of the stats.
pub fn stat_u64(stats: &serde_json::Value, field: &str) -> u64 {
    stats.get(field).and_then(|v| v.as_u64()).unwrap_or_else(|| panic!("stats field '{field}' missing or not an integer: {stats}"))
}

/// The bytes of the named phase, or None when the phase is absent.
pub fn phase_bytes(stats: &serde_json::Value, name: &str) -> Option<u64> {
    stats["phases"]
        .as_array()
        .expect("phases is an array")
        .iter()
        .find(|p| p["name"] == name)
        .map(|p| p["bytes"].as_u64().expect("phase bytes"))
}

/// The I/O mode ("direct", "buffered" or "mixed") of the named phase.
pub fn phase_mode(stats: &serde_json::Value, name: &str) -> String {
    let phases = stats["phases"].as_array().expect("phases is an array");
    let phase = phases.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("no phase '{name}': {stats}"));
    phase["io_mode"].as_str().expect("io_mode").to_owned()
}

/// Whether files in `dir` can be opened with O_DIRECT (tmpfs before Linux 6.6 refuses it).
pub fn direct_io_works(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let probe = dir.join(".direct-probe");
    let ok = std::fs::OpenOptions::new().write(true).create(true).truncate(true).custom_flags(libc::O_DIRECT).open(&probe).is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

/// Asserts the shape of a spilled sort: runs written, more of them than the fan-in, and a
/// multi-level merge.
pub fn assert_multilevel(stats: &serde_json::Value) {
    let (runs, fan_in, levels) = (stat_u64(stats, "runs"), stat_u64(stats, "merge_fan_in"), stat_u64(stats, "merge_levels"));
    assert!(fan_in >= 2, "fan-in {fan_in}");
    assert!(runs > fan_in, "want more runs ({runs}) than the fan-in ({fan_in})");
    assert!(levels >= 2, "want a multi-level merge, got merge_levels {levels} ({runs} runs, fan-in {fan_in})");
    assert_eq!(stat_u64(stats, "passes"), 1 + levels, "passes = 1 + merge levels");
}

// ------------------------------------------------------------------------------------------------
// Watching a running xsort

/// Longest a test waits for a running xsort to reach a state it watches for.
pub const WATCH_WAIT: Duration = Duration::from_secs(20);

/// Makes a FIFO at `path`.
pub fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().expect("run mkfifo");
    assert!(st.success(), "mkfifo {}", path.display());
}

/// Polls `cond` until it holds; fails (killing `child`) after [`WATCH_WAIT`] or if `child` exits first.
pub fn wait_for(child: &mut Child, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + WATCH_WAIT;
    while !cond() {
        if let Some(st) = child.try_wait().unwrap() {
            panic!("xsort exited ({st}) while the test waited for {what}");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("timed out waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The paths of the deleted files `pid` holds open (unlinked temp files show as `PATH (deleted)`).
pub fn deleted_open_files(pid: u32) -> Vec<String> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return Vec::new() };
    fds.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .map(|l| l.to_string_lossy().into_owned())
        .filter(|l| l.ends_with(" (deleted)"))
        .collect()
}

/// Writes all of `data` into the non-blocking FIFO, waiting while it is full; fails if `child`
/// exits first.
pub fn feed(fifo: &mut std::fs::File, data: &[u8], child: &mut Child) {
    let mut at = 0;
    let deadline = Instant::now() + WATCH_WAIT;
    while at < data.len() {
        match fifo.write(&data[at..]) {
            Ok(n) => at += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if let Some(st) = child.try_wait().unwrap() {
                    panic!("xsort exited ({st}) while being fed");
                }
                assert!(Instant::now() < deadline, "timed out feeding the FIFO");
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => panic!("write to FIFO: {e}"),
        }
    }
}

/// Asserts that `dir` holds exactly the entries `names`.
pub fn assert_entries(dir: &Path, names: &[&str]) {
    let mut got: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    got.sort();
    assert_eq!(got, names, "entries of {}", dir.display());
}
