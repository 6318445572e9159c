//! Helpers of the C API tests: find the built libxsort, compile a C program against it (the
//! shared library or the static one), run it, and make and check Sort Benchmark data.
//!
//! Where the library is: the crate's types include `rlib`, so cargo builds the library (rustc
//! writes the .so, the .a and the .rlib in one run) before these tests, into the directory of the
//! test executable (`target/<profile>/deps`). `cargo build` copies the same files up to
//! `target/<profile>/`; a test looks next to itself first, then there.

#![allow(dead_code)] // each test file uses its own part

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use xsort_sortbench::{generate_file, validate_file, GenOptions, Summary, ValidateOptions};

/// How a C program links libxsort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// `-L DIR -lxsort` (libxsort.so, found at run time through the rpath).
    Dynamic,
    /// `DIR/libxsort.a` and the system libraries the Rust standard library needs.
    Static,
}

/// Which names a program calls (`-DUSE_NSORT` in tests/c/check.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Names {
    /// `xsort_*`, from xsort.h.
    Xsort,
    /// `nsort_*`, from nsort.h.
    Nsort,
}

/// The libraries static linking needs besides libxsort.a (`cargo rustc -- --print native-static-libs`).
pub const STATIC_SYSTEM_LIBS: &[&str] = &["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl"];

pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The directory holding libxsort.so and libxsort.a built for this test run.
pub fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let deps = exe.parent().expect("the test executable's directory").to_path_buf();
    let candidates = [deps.clone(), deps.parent().map(Path::to_path_buf).unwrap_or_default()];
    for dir in &candidates {
        if dir.join("libxsort.so").is_file() && dir.join("libxsort.a").is_file() {
            return dir.clone();
        }
    }
    panic!(
        "libxsort.so and libxsort.a are in neither {} nor {}; build them with `cargo build --release -p xsort-capi`",
        candidates[0].display(),
        candidates[1].display()
    );
}

/// Compiles `tests/c/NAME` (or any path under the crate) into `dir`, returning the executable.
pub fn compile(source: &str, dir: &Path, link: Link, names: Names) -> PathBuf {
    let src = crate_dir().join(source);
    let stem = src.file_stem().unwrap().to_string_lossy().into_owned();
    let exe = dir.join(format!("{stem}-{link:?}-{names:?}").to_lowercase());
    let lib = lib_dir();
    let mut cc = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".to_string()));
    cc.args(["-std=gnu11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-pthread"]);
    cc.arg("-I").arg(crate_dir().join("include")).arg("-I").arg(crate_dir().join("tests/c"));
    if names == Names::Nsort {
        cc.arg("-DUSE_NSORT");
    }
    cc.arg(&src).arg("-o").arg(&exe);
    match link {
        Link::Dynamic => {
            cc.arg("-L").arg(&lib).arg("-lxsort").arg(format!("-Wl,-rpath,{}", lib.display()));
        }
        Link::Static => {
            cc.arg(lib.join("libxsort.a")).args(STATIC_SYSTEM_LIBS);
        }
    }
    let out = cc.output().expect("cannot run cc (the C compiler)");
    assert!(out.status.success(), "cc failed for {}:\n{}", src.display(), String::from_utf8_lossy(&out.stderr));
    if link == Link::Static {
        // A static program must not need libxsort.so at run time.
        let ldd = Command::new("ldd").arg(&exe).output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
        assert!(!ldd.contains("libxsort"), "{} links libxsort.so dynamically:\n{ldd}", exe.display());
    }
    exe
}

/// Runs a compiled program; panics with its output unless it exits 0. Arguments are any bytes
/// (`OsStr`), as a program's are, so that statements can name paths that are not UTF-8.
pub fn run_ok<S: AsRef<OsStr>>(exe: &Path, args: &[S]) -> Output {
    let out = run(exe, args);
    assert!(
        out.status.success(),
        "{} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        exe.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// How long a program may run: a hang (a deadlock in the library) fails the test instead of
/// stalling the run.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// Runs a compiled program (the shared library comes through the rpath, no LD_LIBRARY_PATH).
pub fn run<S: AsRef<OsStr>>(exe: &Path, args: &[S]) -> Output {
    let child = Command::new(exe)
        .args(args)
        .env_remove("LD_LIBRARY_PATH")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
    let pid = child.id();
    let (done, waiting) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if waiting.recv_timeout(RUN_LIMIT).is_err() {
            // SAFETY: kill(2) on the child this test started, to end a hang; wait_with_output is
            // still blocked on it, so it has not been reaped and its pid is not reused.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
    });
    let out = child.wait_with_output().unwrap();
    let _ = done.send(());
    watchdog.join().unwrap();
    assert!(out.status.code().is_some(), "{} was killed ({}), after {RUN_LIMIT:?} at most: a hang?", exe.display(), out.status);
    out
}

/// Writes `count` gensort records (binary) to `path`, returning valsort's summary of them.
pub fn gensort(path: &Path, count: u64) -> Summary {
    generate_file(path, 0, count, GenOptions::default(), 2).expect("gensort");
    valsort(path)
}

/// valsort's summary of a file.
pub fn valsort(path: &Path) -> Summary {
    validate_file(path, &ValidateOptions::default()).unwrap_or_else(|e| panic!("valsort {}: {e}", path.display()))
}

/// Checks that `output` holds the records of `input` (same count and checksum) in order.
pub fn assert_sorted_copy(input: &Summary, output: &Path) {
    let out = valsort(output);
    assert_eq!(out.records, input.records, "record count of {}", output.display());
    assert_eq!(out.checksum, input.checksum, "checksum of {} (records lost, duplicated or changed)", output.display());
    assert_eq!(out.unordered, 0, "{} is not sorted: first unordered record {:?}", output.display(), out.first_unordered);
}

/// The entries of a directory, for checking that no temp file was left.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// A test's own temp directory (under the system's, removed when dropped).
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("xsort-capi-").tempdir().unwrap()
}
