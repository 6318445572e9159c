//! The one gate for xsort's tests that need something a machine may lack: root (to mount small
//! file systems, make cgroups and network namespaces, run commands as `nobody`), GNU sort 9.1 (the
//! oracle of the differential tests) or the locales they sort in (`scripts/prerequisites.sh`
//! makes them).
//!
//! A test asks first (`if !xsort_testkit::root() { return; }`). Where the need is met, it runs.
//! Where it is not:
//! - under CI (the `CI` variable set, as `.ci/run` runs) the test **fails**: a test that checks
//!   nothing proves nothing, and CI must not pass by skipping;
//! - elsewhere (a contributor's `cargo test` as a normal user) it passes without running, after a
//!   `NOT RUN: <test>: <why>` line written straight to the terminal's stderr, so that it shows
//!   even though the test harness captures what tests print.
//!
//! The differential tests read their knobs from one scheme of variables: `XSORT_GNU_DIFF_CASES`,
//! `XSORT_GNU_DIFF_SEED` (see [`env_number`]).

use std::io::Write;
use std::process::Command;

/// Whether the tests run under CI (the `CI` variable set and not empty), where nothing may be
/// skipped.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// The name of the running test (libtest names each test's thread after it).
fn test_name() -> String {
    std::thread::current().name().unwrap_or("a test").to_owned()
}

/// Says that the running test does not run here and why: visibly outside CI (and the caller then
/// returns, passing), a panic under CI.
pub fn not_run(why: &str) {
    let test = test_name();
    assert!(!in_ci(), "{test}: cannot run under CI (CI is set), and CI may not skip it: {why}");
    // Straight to the file descriptor, past the harness's capture of eprintln!.
    let _ = writeln!(std::io::stderr().lock(), "NOT RUN: {test}: {why}");
}

/// Whether this process runs as root; if not, says so through [`not_run`].
pub fn root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    if euid != 0 {
        not_run("needs root (small tmpfs mounts, cgroups, network namespaces, commands run as nobody)");
    }
    euid == 0
}

/// Whether `sort` on PATH is GNU coreutils 9.1, the version the differential tests' expected
/// messages and orders come from; if not, says so through [`not_run`].
pub fn gnu_sort() -> bool {
    let first_line = Command::new("sort")
        .arg("--version")
        .output()
        .ok()
        .and_then(|out| String::from_utf8_lossy(&out.stdout).lines().next().map(str::to_owned));
    let ok = first_line.as_deref().is_some_and(|l| l.contains("(GNU coreutils) 9.1"));
    if !ok {
        let found = first_line.unwrap_or_else(|| "no `sort` on PATH".to_owned());
        not_run(&format!("needs GNU sort 9.1 as `sort` on PATH (found: {found})"));
    }
    ok
}

/// The locales every locale test sorts in (three UTF-8 ones and an 8-bit one), which
/// `scripts/prerequisites.sh` generates.
pub const TEST_LOCALES: [&str; 4] = ["en_US.UTF-8", "de_DE.UTF-8", "sv_SE.UTF-8", "fr_FR.ISO-8859-1"];

/// Whether the locales `names` (as `en_US.UTF-8`) are installed, as `locale -a` lists them
/// (`en_US.utf8`).
pub fn locales(names: &[&str]) -> bool {
    let listed = Command::new("locale").arg("-a").output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    let normal = |n: &str| n.to_ascii_lowercase().replace(['-', '_'], "");
    let have: Vec<String> = listed.lines().map(normal).collect();
    let missing: Vec<&str> = names.iter().copied().filter(|n| !have.contains(&normal(n))).collect();
    if !missing.is_empty() {
        not_run(&format!("needs the locales {} (scripts/prerequisites.sh generates them)", missing.join(", ")));
    }
    missing.is_empty()
}

/// The number in variable `name` (decimal, or hexadecimal after `0x`); None when unset; a panic
/// naming the variable when it is set to something else.
pub fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={text:?} is not a number")))
}

/// A tmpfs of `size` (as mount's `size=` takes it) mounted on `dir` (made if missing) with mode
/// 1777; unmounted (lazily, so a killed child's open file never keeps it) when dropped. Needs root:
/// call [`root`] first.
pub struct Tmpfs {
    dir: std::path::PathBuf,
}

impl Tmpfs {
    /// Mounts it; a panic naming the directory and mount's words when mount fails.
    pub fn mount(dir: &std::path::Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("mkdir {}: {e}", dir.display()));
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=1777"), "tmpfs"])
            .arg(dir)
            .output()
            .expect("run mount");
        assert!(out.status.success(), "mount a {size} tmpfs on {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
        Tmpfs { dir: dir.to_owned() }
    }

    /// Where it is mounted.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

/// `program` to be run as the user `nobody` (through util-linux's setpriv; needs root).
pub fn as_nobody(program: &str) -> Command {
    let mut c = Command::new("setpriv");
    c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]).arg(program);
    c
}
