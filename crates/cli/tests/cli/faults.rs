//! The fault matrix: what a sort leaves behind when things go wrong around it.
//!
//! Each test provokes one kind of fault against the real binary and checks xsort's promise: the
//! target holds either its old contents or the complete sorted output, nothing is left beside it
//! or in the temp directories, the input is unchanged, and a failure is one line with exit status
//! 2. Faults: full temp and output file systems (small tmpfs mounts inside the test's own
//! directory; CI runs as root, and a test that cannot mount fails rather than skips), SIGKILL,
//! SIGINT, SIGTERM and SIGHUP at random moments of spilled record and line sorts, inputs truncated
//! or appended while they are sorted, and several sorts writing one target at once.
//!
//! The random moments come from a fixed seed, so a failure names a reproducible point.

use crate::common::*;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use xsort_testkit::Tmpfs;

/// What the target holds before each sort.
const OLD: &[u8] = b"the target's contents before the sort\n";

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).expect("read_dir").map(|e| e.expect("entry").file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// One sort job of the matrix: its arguments, its input and the output it must produce.
struct Job {
    fx: Fixture,
    /// Records of 100 bytes keyed on 0..10, or lines keyed on a leading integer.
    records: bool,
    args: Vec<String>,
    input: Vec<u8>,
    expected: Vec<u8>,
}

/// The sort of `data` by the job's key: records by their first ten bytes, or lines by their
/// leading integer (`-n -s -k1,1`), ties in input order.
fn reference(records: bool, data: &[u8]) -> Vec<u8> {
    if records {
        return reference_sort(data, 100, &["0:10"]);
    }
    let mut lines: Vec<Vec<u8>> = data.split_inclusive(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    if let Some(last) = lines.last_mut().filter(|l| !l.ends_with(b"\n")) {
        last.push(b'\n');
    }
    lines.sort_by_key(|l| std::str::from_utf8(l).unwrap().split([' ', '\n']).next().unwrap().parse::<u64>().unwrap());
    lines.concat()
}

impl Job {
    /// A spilled sort of 100-byte gensort records (keys 0..10) into `out`, runs in `t/`.
    fn records(records: u64) -> Job {
        let fx = Fixture::new();
        gensort(&fx.path("in"), 0, records, false);
        let input = std::fs::read(fx.path("in")).unwrap();
        let args = ["--record-size=100", "--key-bytes=0:10", "-S", "1M", "-T", "t", "-o", "out", "in"];
        Job::with(fx, true, &args, input)
    }

    /// A spilled sort of text lines with a numeric key into `out`, runs in `t/`.
    fn lines(lines: usize) -> Job {
        let fx = Fixture::new();
        let mut rng = Rng::new(7);
        let mut input = Vec::new();
        for i in 0..lines {
            input.extend_from_slice(format!("{} line {i} {}\n", rng.below(1_000_000), rng.next_u64()).as_bytes());
        }
        fx.write("in", &input);
        Job::with(fx, false, &["-n", "-s", "-k1,1", "-S", "1M", "-T", "t", "-o", "out", "in"], input)
    }

    fn with(fx: Fixture, records: bool, args: &[&str], input: Vec<u8>) -> Job {
        fx.mkdir("t");
        let expected = reference(records, &input);
        Job { fx, records, args: args.iter().map(|a| a.to_string()).collect(), input, expected }
    }

    /// The input cut to about half, at a record or line boundary.
    fn half_input(&self) -> Vec<u8> {
        self.whole(self.input[..self.input.len() / 2].to_vec())
    }

    /// `data` cut back to whole records or lines.
    fn whole(&self, mut data: Vec<u8>) -> Vec<u8> {
        let keep = if self.records { data.len() - data.len() % 100 } else { data.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1) };
        data.truncate(keep);
        data
    }

    fn command(&self) -> Command {
        let mut c = self.fx.cmd();
        c.args(&self.args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        c
    }

    /// Runs the job to completion three times (it must succeed and be right) and returns the
    /// shortest time it took.
    fn calibrate(&self) -> Duration {
        (0..3)
            .map(|_| {
                self.fx.write("out", OLD);
                let start = Instant::now();
                ok(&mut self.command());
                let took = start.elapsed();
                assert!(std::fs::read(self.fx.path("out")).unwrap() == self.expected, "the uninterrupted sort is wrong");
                took
            })
            .min()
            .unwrap()
    }

    /// Checks the promise after a sort that may have been stopped anywhere: the target is old or
    /// complete, only the test's own files stand beside it, the temp directory is empty, and the
    /// input is as it was. Returns whether the target was replaced.
    fn check_aftermath(&self, what: &str) -> bool {
        let out = std::fs::read(self.fx.path("out")).unwrap();
        let replaced = out != OLD;
        assert!(!replaced || out == self.expected, "{what}: the target is neither old nor the complete output ({} bytes)", out.len());
        assert_eq!(names(self.fx.root()), ["in", "out", "t", "tmp"], "{what}: files left beside the target");
        assert_dir_empty(&self.fx.path("t"));
        assert_dir_empty(&self.fx.tmp());
        assert!(std::fs::read(self.fx.path("in")).unwrap() == self.input, "{what}: the input changed");
        replaced
    }
}

/// Sends `signal` to the job at `points` moments spread over its running time (seeded), and checks
/// each aftermath. Returns how many of the runs were stopped before they had replaced the target.
fn signal_at_random_points(job: &Job, signal: i32, points: usize, seed: u64) -> usize {
    let span = job.calibrate().as_micros() as usize + 1;
    let mut rng = Rng::new(seed);
    let mut stopped_early = 0;
    for i in 0..points {
        job.fx.write("out", OLD);
        // Spread over the run, and a little past its usual end: the machine's speed varies.
        let delay = Duration::from_micros((rng.below(span * 11 / 10)) as u64);
        let what = format!("signal {signal} after {delay:?} (point {i}, seed {seed})");
        let mut child = job.command().spawn().expect("spawn xsort");
        std::thread::sleep(delay);
        // SAFETY: kill() on our own child, not yet reaped.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        let status = child.wait().expect("wait for xsort");
        let replaced = job.check_aftermath(&what);
        match status.signal() {
            Some(s) => {
                assert_eq!(s, signal, "{what}: died of another signal");
                stopped_early += usize::from(!replaced);
            }
            None => assert!(status.success() && replaced, "{what}: exited {status} without being killed"),
        }
    }
    stopped_early
}

fn signal_matrix(signal: i32, points: usize) {
    for (name, job) in [("records", Job::records(200_000)), ("lines", Job::lines(300_000))] {
        let early = signal_at_random_points(&job, signal, points, signal as u64);
        // The points must really fall inside the sorts, not all after them.
        assert!(early * 4 >= points, "{name}: only {early} of {points} signals arrived before the sort finished");
    }
}

#[test]
fn sigkill_at_random_points_leaves_old_or_complete_target_and_nothing_else() {
    signal_matrix(libc::SIGKILL, 24);
}

#[test]
fn sigint_sigterm_sighup_at_random_points_clean_up() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        signal_matrix(signal, 8);
    }
}

#[test]
fn full_temp_file_system_is_one_error_and_leaves_nothing() {
    if !xsort_testkit::root() {
        return;
    }
    for job in [Job::records(100_000), Job::lines(200_000)] {
        let _fs = Tmpfs::mount(&job.fx.path("t"), "512k");
        job.fx.write("out", OLD);
        let msg = fail(&mut job.command());
        assert!(msg.starts_with("xsort: t") && msg.to_lowercase().contains("no space left on device"), "{msg}");
        assert!(!job.check_aftermath("full temp file system"), "the target was replaced");
    }
}

#[test]
fn full_output_file_system_keeps_the_old_target() {
    if !xsort_testkit::root() {
        return;
    }
    for job in [Job::records(30_000), Job::lines(100_000)] {
        // The output's file system holds the old target and the input but not a second copy.
        let fs_dir = job.fx.path("full");
        let _fs = Tmpfs::mount(&fs_dir, &format!("{}", job.input.len() + job.input.len() / 2));
        std::fs::write(fs_dir.join("in"), &job.input).unwrap();
        std::fs::write(fs_dir.join("out"), OLD).unwrap();
        let mut cmd = job.fx.cmd();
        cmd.args(&job.args[..job.args.len() - 3]).args(["-o", "full/out", "full/in"]);
        let msg = fail(&mut cmd);
        assert!(msg.contains("full/out") && msg.to_lowercase().contains("no space left on device"), "{msg}");
        assert_eq!(std::fs::read(fs_dir.join("out")).unwrap(), OLD);
        assert_eq!(names(&fs_dir), ["in", "out"], "files left beside the target");
        assert_dir_empty(&job.fx.path("t"));
    }
}

#[test]
fn hard_linked_target_on_a_disk_too_full_for_its_copy_keeps_its_contents() {
    if !xsort_testkit::root() {
        return;
    }
    for job in [Job::records(30_000), Job::lines(100_000)] {
        // Room for the input and the new output, not for the copy into the hard-linked target.
        let fs_dir = job.fx.path("full");
        let _fs = Tmpfs::mount(&fs_dir, &format!("{}", job.input.len() * 5 / 2));
        std::fs::write(fs_dir.join("in"), &job.input).unwrap();
        std::fs::write(fs_dir.join("out"), OLD).unwrap();
        std::fs::hard_link(fs_dir.join("out"), fs_dir.join("out2")).unwrap();
        let mut cmd = job.fx.cmd();
        cmd.args(&job.args[..job.args.len() - 3]).args(["-o", "full/out", "full/in"]);
        let msg = fail(&mut cmd);
        assert!(msg.contains("full/out") && msg.to_lowercase().contains("no space left on device"), "{msg}");
        for name in ["out", "out2"] {
            assert!(std::fs::read(fs_dir.join(name)).unwrap() == OLD, "{name} changed");
        }
        assert_eq!(names(&fs_dir), ["in", "out", "out2"], "files left beside the target");
        // The blocks reserved in the target were given back.
        use std::os::unix::fs::MetadataExt;
        assert!(std::fs::metadata(fs_dir.join("out")).unwrap().blocks() * 512 < 64 << 10, "reserved blocks kept");
        assert_dir_empty(&job.fx.path("t"));
    }
}

/// Changes the input at random moments of the sort with `change`, and checks that each outcome is
/// one the user can trust: the sort of the input as it was before the change or after it (never a
/// mix or a partial record), or a one-line error with the old target kept.
/// The change is made `points` times, at random moments of the sort. A successful sort must
/// have sorted the input as it was before or after the change; when `growing`, it may also have
/// read the input partway through the change (an append is one `write`, but a reader sees the
/// file grow page by page), so any state from `job.input` to `after` that it read whole counts.
fn change_input_during_sort(job: &Job, points: usize, seed: u64, change: impl Fn(&Path), after: &[u8], growing: bool) {
    let span = job.calibrate().as_micros() as usize + 1;
    let expected_after = reference(job.records, after);
    let read_midway = |target: &[u8]| {
        // A line cut short by the end of what was read gets the newline the sort adds.
        let lengths = [Some(target.len()), target.len().checked_sub(1).filter(|_| !job.records)];
        growing
            && lengths
                .into_iter()
                .flatten()
                .any(|n| n > job.input.len() && n < after.len() && reference(job.records, &after[..n]) == target)
    };
    let mut rng = Rng::new(seed);
    for i in 0..points {
        std::fs::write(job.fx.path("in"), &job.input).unwrap();
        job.fx.write("out", OLD);
        let delay = Duration::from_micros(rng.below(span) as u64);
        let what = format!("{} input changed after {delay:?} (point {i}, seed {seed})", if job.records { "records" } else { "lines" });
        let child = job.command().spawn().expect("spawn xsort");
        std::thread::sleep(delay);
        change(&job.fx.path("in"));
        let out = child.wait_with_output().expect("wait for xsort");
        let target = std::fs::read(job.fx.path("out")).unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => assert!(
                target == job.expected || target == expected_after || read_midway(&target),
                "{what}: exit 0 with an output that sorts neither version ({} bytes; before {}, after {})",
                target.len(),
                job.expected.len(),
                expected_after.len()
            ),
            Some(2) => {
                assert_eq!(target, OLD, "{what}: failed but replaced the target");
                assert_eq!(err.lines().count(), 1, "{what}: {err}");
                assert!(err.contains("in: "), "{what}: the message must name the input: {err}");
            }
            _ => panic!("{what}: status {}: {err}", out.status),
        }
        assert_eq!(names(job.fx.root()), ["in", "out", "t", "tmp"], "{what}: files left beside the target");
        assert_dir_empty(&job.fx.path("t"));
    }
}

#[test]
fn input_truncated_during_the_sort_is_an_error_or_a_whole_sort() {
    for job in [Job::records(200_000), Job::lines(300_000)] {
        let after = job.half_input();
        let half = after.len() as u64;
        let truncate = move |p: &Path| std::fs::OpenOptions::new().write(true).open(p).unwrap().set_len(half).unwrap();
        change_input_during_sort(&job, 12, 11, truncate, &after, false);
    }
}

#[test]
fn input_appended_during_the_sort_is_sorted_before_or_after() {
    for job in [Job::records(200_000), Job::lines(300_000)] {
        let mut extra = job.half_input();
        extra.truncate(extra.len() / 5);
        let extra = job.whole(extra);
        let after = [job.input.as_slice(), extra.as_slice()].concat();
        let append = move |p: &Path| {
            use std::io::Write;
            std::fs::OpenOptions::new().append(true).open(p).unwrap().write_all(&extra).unwrap();
        };
        change_input_during_sort(&job, 12, 13, append, &after, true);
    }
}

#[test]
fn concurrent_sorts_onto_one_target_leave_one_complete_output() {
    let fx = Fixture::new();
    fx.mkdir("t");
    let mut expected = Vec::new();
    for w in 0..4u128 {
        gensort(&fx.path(&format!("in{w}")), w * 1_000_000, 50_000, false);
        let input = std::fs::read(fx.path(&format!("in{w}"))).unwrap();
        expected.push(reference_sort(&input, 100, &["0:10"]));
    }
    for round in 0..5 {
        fx.write("out", OLD);
        let children: Vec<_> = (0..4)
            .map(|w| {
                let mut c = fx.cmd();
                c.args(["--record-size=100", "-S", "1M", "-T", "t", "-o", "out", &format!("in{w}")])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped());
                c.spawn().expect("spawn xsort")
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "round {round}: {}", String::from_utf8_lossy(&out.stderr));
        }
        let target = std::fs::read(fx.path("out")).unwrap();
        assert!(expected.contains(&target), "round {round}: the target is not one writer's complete output");
        assert_eq!(names(fx.root()), ["in0", "in1", "in2", "in3", "out", "t", "tmp"], "round {round}: files left");
        assert_dir_empty(&fx.path("t"));
    }
}

#[test]
fn forty_concurrent_sorts_sharing_one_temp_directory_each_finish_alone() {
    // 40 spilled sorts at once (records and lines, some through a compress program) in one -T
    // directory: each run file is the sort's own (unnamed, or a random name created exclusively),
    // so none reads another's runs, and the directory is empty afterwards.
    let fx = Fixture::new();
    fx.mkdir("t");
    let mut rng = Rng::new(40);
    let mut lines = Vec::new();
    for _ in 0..20_000 {
        let len = 1 + rng.below(30);
        lines.extend((0..len).map(|_| b'a' + rng.below(26) as u8));
        lines.push(b'\n');
    }
    fx.write("lines", &lines);
    let mut sums = Vec::new();
    for w in 0..20u128 {
        sums.push(gensort(&fx.path(&format!("rec{w}")), w * 100_000, 20_000, false));
    }
    let children: Vec<_> = (0..40usize)
        .map(|i| {
            let mut c = fx.cmd();
            c.args(["-S", TINY, "-T", "t", "-o", &format!("out{i}")]);
            if i % 2 == 0 {
                c.args(["--record-size=100", "--key-bytes=0:10", &format!("rec{}", i / 2)]);
            } else {
                c.arg("lines");
            }
            if i % 5 == 0 {
                c.arg("--compress-program=gzip");
            }
            c.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("spawn xsort")
        })
        .collect();
    for (i, c) in children.into_iter().enumerate() {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "sort {i}: {}", String::from_utf8_lossy(&out.stderr));
    }
    for i in 0..40usize {
        let out = fx.path(&format!("out{i}"));
        if i % 2 == 0 {
            assert_valsort_clean(&out, 20_000, sums[i / 2]);
        } else {
            let mut want: Vec<&[u8]> = lines.split_inclusive(|&b| b == b'\n').collect();
            want.sort();
            assert!(std::fs::read(&out).unwrap() == want.concat(), "sort {i}: lines differ");
        }
    }
    assert_dir_empty(&fx.path("t"));
    fx.assert_clean();
}
