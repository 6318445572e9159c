//! xsort-mpi under `mpirun --oversubscribe -np N` on this machine: outputs byte-identical to the
//! single-node `xsort` with the same options (records and lines, shared and node-local files),
//! balance within 10% on skewed and all-equal keys, empty shares, and failures (a partial record,
//! a rank killed mid-sort, an interrupted or killed `mpirun`) that publish nothing and leave no
//! temp file; the temp file's mode; node-local compressed inputs and compressed outputs (checked
//! with the formats' own tools), a corrupt compressed part; the cluster example of
//! docs/CLUSTER.md, installed and run as printed.
//!
//! The reference is the workspace's `xsort` of the same profile (`target/testing/xsort`, built by
//! `cargo test --workspace --profile testing`); the cluster example also installs the `gensort`,
//! `valsort` and `xsort-bench` built there.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use xsort_sortbench::{generate_file, GenOptions};
use xsort_testkit::Tmpfs;

const XSORT_MPI: &str = env!("CARGO_BIN_EXE_xsort-mpi");

/// The single-node xsort beside this test's binary (target/PROFILE/deps/..).
fn xsort() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let bin = exe.parent().and_then(Path::parent).expect("target dir").join("xsort");
    assert!(bin.exists(), "{} is missing: build it first, with the same profile (cargo build --profile testing -p xsort)", bin.display());
    bin
}

/// A test's own directory, with `tmp/` as the commands' TMPDIR.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::Builder::new().prefix("xsort-mpi-it-").tempdir().expect("test dir");
        std::fs::create_dir(dir.path().join("tmp")).expect("tmp dir");
        Fixture { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Runs `xsort-mpi` on `np` ranks in the fixture's directory (with a deadline: a hung job fails).
    fn mpirun(&self, np: usize, args: &[&str], env: &[(&str, &str)]) -> Output {
        let line: Vec<String> = ["-np", &np.to_string(), XSORT_MPI].iter().chain(args).map(|s| s.to_string()).collect();
        self.launch(&line, env)
    }

    /// Runs `mpirun --oversubscribe LINE...` in the fixture's directory (with a deadline).
    fn launch(&self, line: &[String], env: &[(&str, &str)]) -> Output {
        let child = self.command(line, env).spawn().expect("mpirun (install openmpi-bin)");
        wait_with_deadline(child, Duration::from_secs(120))
    }

    /// `mpirun --oversubscribe LINE...` in the fixture's directory, its output piped.
    fn command(&self, line: &[String], env: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new("mpirun");
        cmd.arg("--oversubscribe").args(line);
        cmd.current_dir(self.dir.path()).env("TMPDIR", self.path("tmp"));
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd
    }

    /// Starts `xsort-mpi` on `np` ranks under `umask`, without waiting for it.
    fn start(&self, np: usize, args: &[&str], env: &[(&str, &str)], umask: libc::mode_t) -> std::process::Child {
        let line: Vec<String> = ["-np", &np.to_string(), XSORT_MPI].iter().chain(args).map(|s| s.to_string()).collect();
        with_umask(self.command(&line, env), umask).spawn().expect("mpirun (install openmpi-bin)")
    }

    /// Waits (60 s at most) for a name in the fixture's directory that starts with `prefix`.
    fn wait_for(&self, prefix: &str) -> String {
        let start = Instant::now();
        loop {
            if let Some(name) = names(self.dir.path()).into_iter().find(|n| n.starts_with(prefix)) {
                return name;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "no {prefix}* appeared");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Runs `xsort-mpi` and expects success.
    fn cluster(&self, np: usize, args: &[&str]) -> Output {
        let out = self.mpirun(np, args, &[]);
        assert!(out.status.success(), "np {np} {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        out
    }

    /// Runs the single-node xsort.
    fn single(&self, args: &[&str]) {
        let out = Command::new(xsort()).args(args).current_dir(self.dir.path()).env("TMPDIR", self.path("tmp")).output().expect("xsort");
        assert!(out.status.success(), "xsort {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.path(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    /// The names in the fixture's directory and in its tmp/.
    fn listing(&self) -> Vec<String> {
        let mut names = Vec::new();
        for d in [self.dir.path().to_owned(), self.path("tmp")] {
            for e in std::fs::read_dir(d).expect("read dir") {
                names.push(e.expect("entry").file_name().to_string_lossy().into_owned());
            }
        }
        names.sort();
        names
    }

    fn records(&self, name: &str, count: u64, skew: bool) {
        generate_file(&self.path(name), 0, count, GenOptions { ascii: false, skew }, 1).expect("gensort");
    }
}

/// `cmd`, run under the file mode creation mask `umask`.
fn with_umask(mut cmd: Command, umask: libc::mode_t) -> Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: umask is async-signal-safe and touches nothing but the child's own mask.
    unsafe {
        cmd.pre_exec(move || {
            libc::umask(umask);
            Ok(())
        })
    };
    cmd
}

fn wait_with_deadline(mut child: std::process::Child, limit: Duration) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!("mpirun did not end within {limit:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sorts with xsort and with xsort-mpi on 1 to 4 ranks; the outputs must be the same bytes.
fn same_as_xsort(f: &Fixture, opts: &[&str], inputs: &[&str]) {
    let args = |out: &'static str| [opts, &["-o", out], inputs].concat();
    f.single(&args("ref"));
    let reference = f.read("ref");
    for np in 1..=4 {
        f.cluster(np, &args("out"));
        assert!(f.read("out") == reference, "np {np} {opts:?}: the output differs from xsort's");
    }
}

#[test]
fn records_match_xsort_on_1_to_4_ranks() {
    let f = Fixture::new();
    f.records("a", 20_000, false);
    f.records("b", 7_001, true);
    same_as_xsort(&f, &["--record-size", "100", "--key-bytes", "0:10"], &["a", "b"]);
    // Few distinct keys: ties everywhere, so the output shows whether equal keys keep input order.
    same_as_xsort(&f, &["--record-size", "100", "--key-bytes", "0:1"], &["a", "b"]);
    same_as_xsort(&f, &["--spec", "-format=size:100 -key=offset:0,size:2,character"], &["b", "a"]);
    // Folding equal keys: they must meet on one rank, and the output shrinks.
    same_as_xsort(&f, &["--spec", "-format=size:100 -key=offset:0,size:1,character -noduplicates"], &["a", "b"]);
    same_as_xsort(&f, &["--record-size", "100", "--key-bytes", "0:1", "-u"], &["a", "b"]);
}

#[test]
fn selected_records_are_dropped_before_the_exchange() {
    // Nsort's -include / -omit: each rank drops the records refused from its share, sorted in
    // place, through the engine (-S 2M, and folding), and as separated lines.
    let f = Fixture::new();
    f.records("a", 20_000, false);
    f.records("b", 7_001, true);
    let half = "-format=size:100 -field=name:k,size:1 -field=name:rest,size:9 -key=k -key=rest -include=(k lt x'80')";
    same_as_xsort(&f, &["--spec", half], &["a", "b"]);
    let input = f.read("a").len() + f.read("b").len();
    assert!((input / 4..input * 3 / 4).contains(&f.read("out").len()), "about half the records are kept");
    same_as_xsort(&f, &["--spec", half, "-S", "2M"], &["a", "b"]);
    same_as_xsort(
        &f,
        &["--spec", "-format=size:100 -field=name:k,size:1 -key=k -omit=(k ge x'40' and k lt x'c0') -noduplicates"],
        &["b", "a"],
    );
    // Summed fields shrink the output as -noduplicates does.
    let summed = "-format=size:100 -field=name:k,size:1 -field=name:v,size:1,off:50,unsigned -key=k -summarize=v";
    same_as_xsort(&f, &["--spec", summed], &["a", "b"]);
    same_as_xsort(&f, &["--spec", &format!("{summed} -include=(k lt x'80')")], &["a", "b"]);
    // The splitters come from the records kept: each of 3 ranks gets about a third of them.
    f.cluster(3, &["--spec", half, "--stats-json", "s.json", "-o", "out", "a", "b"]);
    let stats: Value = serde_json::from_slice(&f.read("s.json")).expect("stats JSON");
    let sizes: Vec<u64> = stats["per_rank"].as_array().expect("per_rank").iter().map(|r| r["output_bytes"].as_u64().unwrap()).collect();
    let mean = sizes.iter().sum::<u64>() / 3;
    assert!(sizes.iter().all(|&s| s > mean / 2 && s < mean * 3 / 2), "unbalanced ranges: {sizes:?}");
    text(&f);
    let separated = "-format=separator:comma -field=name:w -field=name:n,decimal -key=n -include=(w eq 'fig' or w eq 'kiwi')";
    same_as_xsort(&f, &["--spec", separated], &["a.txt", "b.txt"]);
    let out = f.mpirun(2, &["--spec", "-format=size:100 -derived=name:d,integer,size:4,value:(1) -reformat=d", "-o", "out", "a"], &[]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("-derived fields and -reformat"), "{out:?}");
}

#[test]
fn rounds_within_a_small_budget_stay_stable() {
    // -S 2M: 64 KiB chunks and 512 KiB of held pieces, so many rounds, pieces held on disk and a
    // local sort that spills.
    let f = Fixture::new();
    f.records("a", 40_000, false);
    let args = ["--record-size", "100", "--key-bytes", "1:1", "-S", "2M", "--stats-json", "s.json"];
    f.single(&["--record-size", "100", "--key-bytes", "1:1", "-S", "2M", "-o", "ref", "a"]);
    f.cluster(3, &[&args[..], &["-o", "out", "a"]].concat());
    assert!(f.read("out") == f.read("ref"), "the output differs from xsort's");
    let stats: Value = serde_json::from_slice(&f.read("s.json")).expect("stats JSON");
    let ranks = stats["per_rank"].as_array().expect("per_rank");
    assert!(ranks.iter().all(|r| r["exchange"]["rounds"].as_u64() > Some(10)), "{stats}");
    assert!(ranks.iter().any(|r| r["exchange"]["held_on_disk_bytes"].as_u64() > Some(0)), "{stats}");
}

/// Text with keys, numbers, duplicates, and a second input whose last line has no newline.
fn text(f: &Fixture) {
    let mut a = String::new();
    let mut x: u64 = 12345;
    for i in 0..30_000 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let word = ["pear", "Apple", "fig", "apple", "kiwi"][(x >> 33) as usize % 5];
        a += &format!("{word},{},{}{}\n", (x >> 40) as i64 % 1000 - 500, "w".repeat((x >> 20) as usize % 40), i % 7);
    }
    std::fs::write(f.path("a.txt"), a).expect("write");
    std::fs::write(f.path("b.txt"), "3\n1\n\n2\nlast without newline").expect("write");
}

#[test]
fn lines_match_xsort_on_1_to_4_ranks() {
    let f = Fixture::new();
    text(&f);
    for opts in [&[][..], &["-t,", "-k2,2n"], &["-t,", "-k2,2n", "-s"], &["-t", ",", "-k1,1", "-u"], &["-r", "-f"], &["-z"], &["-n", "-u"]]
    {
        same_as_xsort(&f, opts, &["a.txt", "b.txt"]);
    }
}

#[test]
fn node_local_parts_in_rank_order_are_the_sorted_whole() {
    let f = Fixture::new();
    for r in 0..3 {
        generate_file(&f.path(&format!("in{r}")), 5_000 * r as u128, 5_000 + 1_000 * r as u64, GenOptions::default(), 1).expect("gensort");
    }
    let opts = ["--record-size", "100", "--key-bytes", "0:10"];
    f.single(&[&opts[..], &["-o", "ref", "in0", "in1", "in2"]].concat());
    f.cluster(3, &[&opts[..], &["-o", "out{rank}", "in{rank}"]].concat());
    let parts: Vec<u8> = (0..3).flat_map(|r| f.read(&format!("out{r}"))).collect();
    assert!(parts == f.read("ref"), "the parts in rank order differ from xsort's output");
    // An empty node-local input beside each rank's own: the same output, still sorted in place.
    for r in 0..3 {
        std::fs::write(f.path(&format!("empty{r}")), b"").expect("write");
    }
    f.cluster(3, &[&opts[..], &["--stats-json", "s.json", "-o", "out{rank}", "empty{rank}", "in{rank}", "empty{rank}"]].concat());
    let parts: Vec<u8> = (0..3).flat_map(|r| f.read(&format!("out{r}"))).collect();
    assert!(parts == f.read("ref"), "with empty inputs, the parts in rank order differ from xsort's output");
    let stats: Value = serde_json::from_slice(&f.read("s.json")).expect("stats JSON");
    for r in stats["per_rank"].as_array().expect("per_rank") {
        assert!(r["sort"].is_null() && r["local_sort_s"].as_f64().is_some(), "not sorted in place: {r}");
    }
    // Node-local lines into one shared output.
    std::fs::write(f.path("t0"), "b\nd\n").expect("write");
    std::fs::write(f.path("t1"), "c\na\ne").expect("write");
    f.cluster(2, &["-o", "lines", "t{rank}"]);
    assert_eq!(f.read("lines"), b"a\nb\nc\nd\ne\n");
}

/// Each rank's share of the sorted bytes, from --stats-json, must be within 10% of the mean.
fn assert_balanced(f: &Fixture, what: &str) {
    let stats: Value = serde_json::from_slice(&f.read("s.json")).expect("stats JSON");
    let shares: Vec<f64> =
        stats["per_rank"].as_array().expect("per_rank").iter().map(|r| r["sorted_bytes"].as_f64().unwrap_or(0.0)).collect();
    let mean = shares.iter().sum::<f64>() / shares.len() as f64;
    assert!(shares.iter().all(|s| (s - mean).abs() <= 0.1 * mean), "{what}: shares {shares:?} are not within 10% of {mean}");
}

#[test]
fn skewed_and_all_equal_keys_split_evenly() {
    let f = Fixture::new();
    f.records("skew", 40_000, true);
    let opts = ["--record-size", "100", "--key-bytes", "0:10", "--stats-json", "s.json"];
    f.cluster(4, &[&opts[..], &["-o", "out", "skew"]].concat());
    assert_balanced(&f, "gensort -s");
    f.single(&["--record-size", "100", "--key-bytes", "0:10", "-o", "ref", "skew"]);
    assert!(f.read("out") == f.read("ref"));
    // Every key equal: the ranks split by input position, and the output keeps input order.
    let mut same = f.read("skew");
    same.chunks_mut(100).for_each(|r| r[..10].copy_from_slice(b"0123456789"));
    std::fs::write(f.path("same"), &same).expect("write");
    f.cluster(4, &[&opts[..], &["-o", "out", "same"]].concat());
    assert_balanced(&f, "all-equal keys");
    assert!(f.read("out") == same, "equal keys did not keep their input order");
    let lines: String = (0..20_000).map(|i| format!("k,{i}\n")).collect();
    std::fs::write(f.path("same.txt"), lines.as_bytes()).expect("write");
    f.cluster(3, &["-t,", "-k1,1", "-s", "--stats-json", "s.json", "-o", "out", "same.txt"]);
    assert_balanced(&f, "all-equal line keys");
    assert!(f.read("out") == lines.as_bytes());
}

#[test]
fn empty_shares_and_empty_inputs() {
    let f = Fixture::new();
    f.records("two", 2, false);
    std::fs::write(f.path("empty"), b"").expect("write");
    same_as_xsort(&f, &["--record-size", "100"], &["two", "empty"]);
    same_as_xsort(&f, &["--record-size", "100"], &["empty"]);
    std::fs::write(f.path("one.txt"), b"only line, no newline").expect("write");
    same_as_xsort(&f, &[], &["one.txt", "empty"]);
}

/// What a failed job must leave: the inputs (and `kept`), nothing else, and no output.
fn assert_nothing_left(f: &Fixture, inputs: &[&str]) {
    let mut want: Vec<String> = inputs.iter().map(|s| s.to_string()).chain(["tmp".into()]).collect();
    want.sort();
    assert_eq!(f.listing(), want, "a failed job left files behind");
}

#[test]
fn a_partial_record_fails_every_rank_with_one_line() {
    let f = Fixture::new();
    f.records("good", 10_000, false);
    let mut bad = f.read("good");
    bad.truncate(1_050);
    std::fs::write(f.path("bad"), &bad).expect("write");
    // The statistics file it would have written is not left behind either (as with xsort).
    let out = f.mpirun(3, &["--record-size", "100", "--stats-json", "s.json", "-o", "out", "good", "bad"], &[]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let ours: Vec<&str> = stderr.lines().filter(|l| l.starts_with("xsort-mpi:")).collect();
    assert_eq!(ours, ["xsort-mpi: rank 2: bad: length 1050 is not a multiple of the record size 100 (50 bytes left over)"], "{stderr}");
    assert_nothing_left(&f, &["good", "bad"]);
}

#[test]
fn an_output_that_is_a_directory_or_the_stats_file_or_an_input_fails_before_the_sort() {
    let f = Fixture::new();
    f.records("in", 1_000, false);
    for (output, rank) in [("d", 0), ("p{rank}", 1)] {
        std::fs::create_dir(f.path(&output.replace("{rank}", &rank.to_string()))).expect("dir");
        let out = f.mpirun(2, &["--record-size", "100", "-o", output, "in"], &[]);
        let name = output.replace("{rank}", "1");
        assert_eq!(one_error_line(&out), format!("xsort-mpi: rank {rank}: {name}: cannot open: is a directory"));
        assert!(names(&f.path(&name)).is_empty(), "{name} is not empty");
    }
    assert_nothing_left(&f, &["in", "d", "p1"]);
    // Statistics into the output itself would be lost when the output is renamed over them.
    let out = f.mpirun(2, &["--record-size", "100", "--stats-json", "./out", "-o", "out", "in"], &[]);
    assert_eq!(one_error_line(&out), "xsort-mpi: rank 0: ./out: --stats-json names the output file");
    // Nor into an input.
    let before = f.read("in");
    let out = f.mpirun(2, &["--record-size", "100", "--stats-json", "./in", "-o", "out", "in"], &[]);
    assert_eq!(one_error_line(&out), "xsort-mpi: rank 0: ./in: --stats-json names an input file");
    assert!(f.read("in") == before, "the input changed");
    assert_nothing_left(&f, &["in", "d", "p1"]);
    // Nor through another user's link in a sticky world-writable directory (as /tmp), which would
    // truncate and overwrite the file it names.
    // (Planting another user's link takes root.)
    if !xsort_testkit::root() {
        return;
    }
    let shared = f.path("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::os::unix::fs::PermissionsExt::from_mode(0o1777)).unwrap();
    std::fs::write(f.path("victim"), b"keep").unwrap();
    std::os::unix::fs::symlink(f.path("victim"), shared.join("s.json")).unwrap();
    std::os::unix::fs::lchown(shared.join("s.json"), Some(65534), Some(65534)).unwrap();
    let out = f.mpirun(2, &["--record-size", "100", "--stats-json", "shared/s.json", "-o", "out", "in"], &[]);
    assert_eq!(one_error_line(&out), "xsort-mpi: rank 0: shared/s.json: cannot write statistics: Permission denied");
    assert_eq!(f.read("victim"), b"keep");
}

#[test]
fn shared_outputs_behind_links_and_devices_go_where_xsort_puts_them() {
    if !xsort_testkit::root() {
        return;
    }
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let f = Fixture::new();
    f.records("in", 20_000, false);
    f.single(&["--record-size", "100", "-o", "ref", "in"]);
    let reference = f.read("ref");
    let sort_into = |output: &str| f.mpirun(2, &["--record-size", "100", "-o", output, "in"], &[]);
    // A symbolic link: the file it names gets the output, and the link stays.
    std::fs::write(f.path("real"), b"old").expect("write");
    std::os::unix::fs::symlink("real", f.path("link")).expect("symlink");
    assert!(sort_into("link").status.success());
    assert!(std::fs::symlink_metadata(f.path("link")).expect("link").file_type().is_symlink());
    assert!(f.read("real") == reference, "the linked file does not hold the output");
    // Hard links: every name sees the output, still one file.
    std::fs::write(f.path("hard1"), b"old").expect("write");
    std::fs::hard_link(f.path("hard1"), f.path("hard2")).expect("hard link");
    assert!(sort_into("hard1").status.success());
    assert!(f.read("hard1") == reference && f.read("hard2") == reference, "a hard link missed the output");
    let ino = |n: &str| std::fs::metadata(f.path(n)).expect("stat").ino();
    assert_eq!(ino("hard1"), ino("hard2"));
    // A device (a null device of the test's own) is written in place, never replaced by a file.
    let made = Command::new("mknod").arg(f.path("nulldev")).args(["c", "1", "3"]).status().expect("mknod");
    assert!(made.success(), "mknod needs root");
    assert!(sort_into("nulldev").status.success());
    assert!(std::fs::metadata(f.path("nulldev")).expect("stat").file_type().is_char_device());
    // A FIFO cannot take byte ranges: one clear error before the sort, and the FIFO stays.
    assert!(Command::new("mkfifo").arg(f.path("fifo")).status().expect("mkfifo").success());
    let out = sort_into("fifo");
    assert_eq!(one_error_line(&out), "xsort-mpi: rank 0: fifo: not a regular file or a device: the ranks write byte ranges of one output");
    assert!(std::fs::metadata(f.path("fifo")).expect("stat").file_type().is_fifo());
    // So does a rank's part, and a FIFO as input (at once, not once something writes into it).
    std::fs::write(f.path("part0"), b"old").expect("write");
    std::os::unix::fs::symlink("fifo", f.path("part1")).expect("symlink");
    let out = sort_into("part{rank}");
    assert_eq!(one_error_line(&out), "xsort-mpi: rank 1: part1: not a regular file or a device: the ranks write byte ranges of one output");
    assert_eq!(f.read("part0"), b"old");
    let out = f.mpirun(2, &["--record-size", "100", "-o", "out", "in", "fifo"], &[]);
    assert!(one_error_line(&out).ends_with(" fifo: not a regular file (the ranks read byte ranges of their inputs)"));
    // Nor can shared compressed data: one clear error naming the file and its format, and saying
    // that node-local parts may be compressed.
    std::fs::write(f.path("in.gz"), [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]).expect("write");
    let out = f.mpirun(2, &["--record-size", "100", "-o", "out", "in", "in.gz"], &[]);
    let line = one_error_line(&out);
    assert!(line.contains(" in.gz: gzip data: xsort-mpi's ranks read byte ranges of shared inputs"), "{line}");
    assert!(line.ends_with("or give node-local parts ({rank} in the path), which each rank decompresses whole"), "{line}");
    // A hard-linked target too small for the output: the old contents stay under both names.
    let _small = Tmpfs::mount(&f.path("small"), "3m");
    std::fs::write(f.path("small/hard"), b"old").expect("write");
    std::fs::hard_link(f.path("small/hard"), f.path("small/hard2")).expect("hard link");
    let out = sort_into("small/hard");
    assert!(one_error_line(&out).ends_with(" small/hard: write error: No space left on device"));
    assert_eq!(f.read("small/hard2"), b"old");
    assert_eq!(names(&f.path("small")), ["hard", "hard2"]);
    drop(_small);
    std::fs::remove_dir(f.path("small")).expect("rmdir");
    assert_nothing_left(&f, &["fifo", "hard1", "hard2", "in", "in.gz", "link", "nulldev", "part0", "part1", "real", "ref"]);
}

#[test]
fn long_names_big_records_and_temp_directories_behave_as_with_xsort() {
    let f = Fixture::new();
    f.records("in", 20_000, false);
    // An output name near the 255-byte limit (its temp name must stay within it).
    let long = "L".repeat(240);
    same_as_xsort(&f, &["--record-size", "100", "--key-bytes", "0:10"], &["in"]);
    f.cluster(2, &["--record-size", "100", "--key-bytes", "0:10", "-o", &long, "in"]);
    assert!(f.read(&long) == f.read("ref"), "the long-named output differs from xsort's");
    // -u with records far larger than the writer's blocks under a small -S.
    f.single(&["--record-size", "200000", "--key-bytes", "0:10", "-u", "-S", "8M", "-o", "ref_u", "in"]);
    f.cluster(2, &["--record-size", "200000", "--key-bytes", "0:10", "-u", "-S", "8M", "-o", "out_u", "in"]);
    assert!(f.read("out_u") == f.read("ref_u"), "-u with 200 KB records differs from xsort's");
    // A temp directory that cannot be used fails as in xsort, on the in-place path too.
    let out = f.mpirun(2, &["--record-size", "100", "-T", "missing", "-o", "out_t", "in"], &[]);
    assert!(
        one_error_line(&out).ends_with("cannot create temporary file in 'missing': No such file or directory"),
        "{}",
        one_error_line(&out)
    );
    let mut keep = vec!["in", "out", "ref", "ref_u", "out_u", long.as_str()];
    keep.sort();
    assert_nothing_left(&f, &keep);
}

#[test]
fn a_rank_killed_mid_sort_publishes_nothing_and_leaves_no_temp() {
    let f = Fixture::new();
    f.records("in", 30_000, false);
    for fault in ["kill:1:exchange", "kill:0:write", "kill:2:write"] {
        // Rank 0 created the statistics file before the sort; terminated, it removes it.
        let out = f.mpirun(3, &["--record-size", "100", "--stats-json", "s.json", "-o", "out", "in"], &[("XSORT_MPI_FAULT", fault)]);
        assert!(!out.status.success(), "{fault}: the job succeeded");
        assert_nothing_left(&f, &["in"]);
    }
    // An existing output stays as it was.
    std::fs::write(f.path("out"), b"old").expect("write");
    std::fs::write(f.path("s.json"), b"old stats").expect("write");
    let out = f.mpirun(2, &["--record-size", "100", "--stats-json", "s.json", "-o", "out", "in"], &[("XSORT_MPI_FAULT", "kill:1:write")]);
    assert!(!out.status.success());
    assert_eq!(f.read("out"), b"old");
    assert_eq!(f.read("s.json"), b"old stats");
    assert_nothing_left(&f, &["in", "out", "s.json"]);
}

/// The one `xsort-mpi:` line of a failed job's standard error (the lowest failed rank's).
fn one_error_line(out: &Output) -> String {
    assert!(!out.status.success(), "the job succeeded");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let ours: Vec<&str> = stderr.lines().filter(|l| l.starts_with("xsort-mpi:")).collect();
    assert_eq!(ours.len(), 1, "not one error line: {stderr}");
    ours[0].to_owned()
}

#[test]
fn an_input_cut_short_mid_exchange_stops_every_rank() {
    // Node-local inputs of 3 MB and -S 2M: rounds of 87 KB, about 35 of them. Rank 1's input is cut
    // short (as another process truncating it would) after 5 rounds, when every rank has already
    // sent and received pieces and pushed them to its local sort.
    let f = Fixture::new();
    for r in 0..3 {
        generate_file(&f.path(&format!("in{r}")), 30_000 * r as u128, 30_000, GenOptions::default(), 1).expect("gensort");
    }
    std::fs::write(f.path("out"), b"old").expect("write");
    let args = ["--record-size", "100", "--key-bytes", "0:10", "-S", "2M", "-o", "out", "in{rank}"];
    let out = f.mpirun(3, &args, &[("XSORT_MPI_FAULT", "shrink:1:5")]);
    let line = one_error_line(&out);
    let prefix = "xsort-mpi: rank 1: in1: shrank while being read: it ended before offset ";
    let end: u64 =
        line.strip_prefix(prefix).and_then(|r| r.split(' ').next()).and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{line}"));
    assert!(line.ends_with(" of the 3000000 bytes it had when the sort began"), "{line}");
    // It failed in the middle of its share, rounds after the exchange began.
    assert!(end > 4 * 80_000 && end < 3_000_000, "{line}");
    assert_eq!(f.read("out"), b"old");
    assert_nothing_left(&f, &["in0", "in1", "in2", "out"]);
}

#[test]
fn a_write_past_one_ranks_file_size_limit_publishes_nothing() {
    // 9 MB shared output; rank 1 writes bytes 3 MB to 6 MB of it under a 4.5 MB file size limit
    // (SIGXFSZ ignored, so the write fails with EFBIG), half way through its range.
    let f = Fixture::new();
    f.records("in", 90_000, false);
    std::fs::write(f.path("out"), b"old").expect("write");
    let args = ["--record-size", "100", "--key-bytes", "0:10", "-o", "out", "in"];
    let plain: Vec<String> = [XSORT_MPI].iter().chain(&args).map(|s| s.to_string()).collect();
    let limited = [&["bash", "-c", "trap '' XFSZ; ulimit -f 4500; exec \"$0\" \"$@\""][..], &[XSORT_MPI], &args].concat();
    let mut line: Vec<String> = ["-np", "1"].iter().map(|s| s.to_string()).chain(plain.iter().cloned()).collect();
    line.extend([":", "-np", "1"].iter().map(|s| s.to_string()).chain(limited.iter().map(|s| s.to_string())));
    line.extend([":", "-np", "1"].iter().map(|s| s.to_string()).chain(plain.iter().cloned()));
    let out = f.launch(&line, &[]);
    assert_eq!(one_error_line(&out), "xsort-mpi: rank 1: out: write error: File too large");
    assert_eq!(f.read("out"), b"old");
    assert_nothing_left(&f, &["in", "out"]);
}

/// The names in `dir`.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).expect("read dir").map(|e| e.expect("entry").file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn a_full_disk_under_one_ranks_part_or_the_shared_output_publishes_nothing() {
    if !xsort_testkit::root() {
        return;
    }
    // Each rank writes a 2 MB part into its own directory; rank 2's is a 1 MiB tmpfs, too small
    // for the part: the rank finds it as it reserves the part's blocks, before the exchange. The
    // other ranks' parts must not be committed.
    let f = Fixture::new();
    for r in 0..3 {
        generate_file(&f.path(&format!("in{r}")), 20_000 * r as u128, 20_000, GenOptions::default(), 1).expect("gensort");
        std::fs::create_dir(f.path(&format!("d{r}"))).expect("dir");
    }
    let _full = Tmpfs::mount(&f.path("d2"), "1m");
    for r in 0..3 {
        std::fs::write(f.path(&format!("d{r}/out")), b"old").expect("write");
    }
    let out = f.mpirun(3, &["--record-size", "100", "-o", "d{rank}/out", "in{rank}"], &[]);
    assert_eq!(one_error_line(&out), "xsort-mpi: rank 2: d2/out: write error: No space left on device");
    for r in 0..3 {
        let d = f.path(&format!("d{r}"));
        assert_eq!(names(&d), ["out"], "rank {r}'s directory");
        assert_eq!(std::fs::read(d.join("out")).expect("read"), b"old", "rank {r}'s old part changed");
    }
    // The shared output (6 MB) into the full tmpfs: whichever ranks find it full, nothing is left.
    let out = f.mpirun(3, &["--record-size", "100", "-o", "d2/shared", "in{rank}"], &[]);
    let line = one_error_line(&out);
    assert!(line.starts_with("xsort-mpi: rank ") && line.ends_with("d2/shared: write error: No space left on device"), "{line}");
    assert_eq!(names(&f.path("d2")), ["out"]);
    // The full tmpfs as every rank's -T, with -S 2M: the pieces held for later sources and the
    // local sorts' runs fill it in the middle of the exchange.
    let out = f.mpirun(3, &["--record-size", "100", "-S", "2M", "-T", "d2", "-o", "shared", "in{rank}"], &[]);
    let line = one_error_line(&out);
    assert!(line.starts_with("xsort-mpi: rank ") && line.ends_with("No space left on device"), "{line}");
    assert_eq!(names(&f.path("d2")), ["out"]);
    assert_nothing_left(&f, &["d0", "d1", "d2", "in0", "in1", "in2"]);
}

#[test]
fn ranks_on_one_host_start_with_shared_memory_messaging_only() {
    // All ranks on this host: xsort-mpi picks Open MPI's ob1 before MPI starts, so no other
    // messaging layer (cm, and UCX beneath it) is loaded and probed (0.2 s of every start here).
    // A pml the user names is left alone.
    let f = Fixture::new();
    f.records("in", 1_000, false);
    let args = ["--record-size", "100", "--key-bytes", "0:10", "-o", "out", "in"];
    let out = f.mpirun(2, &args, &[("OMPI_MCA_pml_base_verbose", "10")]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("component ob1 selected"), "{log}");
    assert!(!log.contains("found loaded component cm"), "{log}");
    let out = f.mpirun(2, &args, &[("OMPI_MCA_pml_base_verbose", "10"), ("OMPI_MCA_pml", "ob1,cm")]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("found loaded component cm"), "{log}");
}

/// Records whose first 14 bytes are all equal, bytes 14..20 one of 50 values and the rest the
/// record's number: with a 20-byte key, entry prefixes tie and the full key decides, and equal
/// keys show whether they kept their input order.
fn tied_records(f: &Fixture, name: &str, count: usize, seed: usize) {
    let mut data = Vec::with_capacity(count * 100);
    for i in 0..count {
        let mut rec = [b'A'; 100];
        rec[14..20].copy_from_slice(format!("{:06}", (i * 7919 + seed) % 50).as_bytes());
        rec[20..40].copy_from_slice(format!("{:020}", i + seed * 1_000_000).as_bytes());
        data.extend_from_slice(&rec);
    }
    std::fs::write(f.path(name), data).expect("write");
}

#[test]
fn records_that_fit_are_sorted_in_place_stably() {
    // The default budget: each rank sorts its range in place (no engine statistics, its own sort
    // time). Keys longer than the entries' prefix (ties decided by the full key, then position),
    // short keys with many equal ones, and several inputs.
    let f = Fixture::new();
    tied_records(&f, "a", 30_000, 0);
    tied_records(&f, "b", 11_111, 3);
    f.records("c", 20_000, true);
    same_as_xsort(&f, &["--record-size", "100", "--key-bytes", "0:20"], &["a", "b"]);
    same_as_xsort(&f, &["--record-size", "100", "--key-bytes", "0:20", "--key-bytes", "30:4"], &["b", "a"]);
    same_as_xsort(&f, &["--record-size", "100", "--key-bytes", "0:1"], &["c", "a"]);
    same_as_xsort(&f, &["--spec", "-format=size:100 -key=offset:17,size:3,character,descending"], &["a", "c", "b"]);
    // Random keys, a few of which share their first 6 bytes with another record (ties on the
    // narrow entries' prefix, decided by the rest of the key) or all 10 (equal keys, which must
    // keep their input order across ranks).
    f.records("d", 30_000, false);
    let mut d = f.read("d");
    for i in (0..30_000).step_by(211) {
        let (from, len) = ((i * 7919 + 13) % 30_000, if i % 2 == 0 { 6 } else { 10 });
        d.copy_within(from * 100..from * 100 + len, i * 100);
    }
    std::fs::write(f.path("d"), &d).expect("write");
    same_as_xsort(&f, &["--record-size", "100", "--key-bytes", "0:10"], &["d"]);
    f.cluster(3, &["--record-size", "100", "--key-bytes", "0:20", "--stats-json", "s.json", "-o", "out", "a", "b"]);
    let stats: Value = serde_json::from_slice(&f.read("s.json")).expect("stats JSON");
    for r in stats["per_rank"].as_array().expect("per_rank") {
        assert!(r["sort"].is_null() && r["local_sort_s"].as_f64().is_some(), "not sorted in place: {r}");
        assert!(r["exchange"]["received_bytes"].as_u64() > Some(0), "{r}");
    }
}

#[test]
fn an_input_cut_short_while_sorted_in_place_stops_every_rank() {
    // Rank 1's input is truncated after two rounds of the exchange, while it is mapped: what it
    // read past the cut is zeros, and it fails before anything is committed.
    let f = Fixture::new();
    for r in 0..3 {
        generate_file(&f.path(&format!("in{r}")), 30_000 * r as u128, 30_000, GenOptions::default(), 1).expect("gensort");
    }
    std::fs::write(f.path("out"), b"old").expect("write");
    let args = ["--record-size", "100", "--key-bytes", "0:10", "--stats-json", "s.json", "-o", "out", "in{rank}"];
    let out = f.mpirun(3, &args, &[("XSORT_MPI_FAULT", "shrink:1:2")]);
    let line = one_error_line(&out);
    assert!(line.starts_with("xsort-mpi: rank 1: in1: shrank while being read: it has "), "{line}");
    assert!(line.ends_with(" of the 3000000 bytes it had when the sort began"), "{line}");
    assert_eq!(f.read("out"), b"old");
    assert_nothing_left(&f, &["in0", "in1", "in2", "out"]);
}

/// A rank that waits for a slower one in an agreement or a swap of counts sleeps between polls:
/// with MPI's blocking collectives it polled at full speed, and took the CPU the slow rank (and
/// its sort's and writer's threads, on the same cores) needed. Rank `slow` sleeps 2 s at a phase
/// (`XSORT_MPI_FAULT=delay:RANK:PHASE`); the rank waiting for it must use little CPU in all
/// (blocking, about 0.9-2 s here; waiting politely, 0.02-0.06 s).
#[test]
fn a_rank_waiting_for_a_slow_one_leaves_the_cores_free() {
    let f = Fixture::new();
    f.records("in", 10_000, false);
    text(&f);
    let cases: [(&[&str], &str, usize); 3] = [
        (&["--record-size", "100", "in"], "delay:1:write", 0), // in place: the agreement after the write
        (&["--record-size", "100", "in"], "delay:0:exchange", 1), // in place: the first round's counts
        (&["a.txt", "b.txt"], "delay:1:write", 0),             // lines, the engine's path
    ];
    for (inputs, fault, waiting) in cases {
        let args = [&["--stats-json", "s.json", "-o", "out"][..], inputs].concat();
        let out = f.mpirun(2, &args, &[("XSORT_MPI_FAULT", fault)]);
        assert!(out.status.success(), "{fault}: {}", String::from_utf8_lossy(&out.stderr));
        let stats: Value = serde_json::from_slice(&f.read("s.json")).expect("stats JSON");
        let rank = &stats["per_rank"][waiting];
        assert!(rank["elapsed_s"].as_f64().unwrap_or(0.0) >= 2.0, "{fault}: the job did not wait for the slow rank: {rank}");
        let cpu = rank["cpu_s"].as_f64().expect("cpu_s");
        assert!(cpu < 0.4, "{fault} {inputs:?}: rank {waiting} used {cpu:.2} s of CPU waiting 2 s for the other");
    }
}

/// The shared output's temp file, beside the target where other users may look, is its owner's
/// alone while the ranks write it (it was created with the target's mode, 0644 for a new file
/// under umask 022: anyone could open it and keep reading); the committed output has the mode
/// xsort gives its own: a new file 0666 less the umask, a replaced one its old mode.
#[test]
fn the_shared_output_is_private_until_committed() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let f = Fixture::new();
    f.records("in", 20_000, false);
    let mode = |name: &str| std::fs::metadata(f.path(name)).expect("stat").mode() & 0o7777;
    let mut xsort = Command::new(xsort());
    xsort.args(["--record-size", "100", "-o", "ref", "in"]).current_dir(f.dir.path()).env("TMPDIR", f.path("tmp"));
    let done = with_umask(xsort, 0o022).output().expect("xsort");
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    std::fs::write(f.path("old"), b"old").expect("write");
    std::fs::set_permissions(f.path("old"), std::fs::Permissions::from_mode(0o640)).expect("chmod");
    for (target, want) in [("new", mode("ref")), ("old", 0o640)] {
        // Rank 1 sleeps 2 s with its range written, before the commit: the temp file is there.
        let job = f.start(2, &["--record-size", "100", "-o", target, "in"], &[("XSORT_MPI_FAULT", "delay:1:write")], 0o022);
        let temp = f.wait_for(&format!(".{target}.xsort-mpi-"));
        assert_eq!(format!("{:o}", mode(&temp)), "600", "{target}: the temp file {temp} while the job runs");
        let out = wait_with_deadline(job, Duration::from_secs(120));
        assert!(out.status.success(), "{target}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(format!("{:o}", mode(target)), format!("{want:o}"), "{target}: the committed output's mode");
        assert!(f.read(target) == f.read("ref"), "{target}: the output differs from xsort's");
    }
    assert_eq!(mode("ref"), 0o644);
    assert_nothing_left(&f, &["in", "new", "old", "ref"]);
}

/// The processes whose parent is `parent`.
fn children(parent: u32) -> Vec<u32> {
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // After the command's name in parentheses: the state, then the parent.
        let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        if ppid == Some(parent) {
            pids.push(pid);
        }
    }
    pids
}

/// Whether `pid` is still running: it exists and is not a zombie (an orphan whose reaper has not
/// collected it yet has ended all the same).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()).is_some_and(|s| s != "Z" && s != "X"),
        Err(_) => false,
    }
}

/// Ctrl-C or SIGTERM to `mpirun` early in a job: Open MPI 4.1's `mpirun` sends the ranks SIGCONT
/// at once and SIGTERM a second later, and exits 1; the ranks used to commit a complete output
/// within that second. `mpirun` killed (or exiting at once on a second Ctrl-C) left the ranks
/// running on to commit. Either way the old target must stay, no temp file be left, and no rank
/// outlive `mpirun` for long.
#[test]
fn an_interrupted_or_killed_mpirun_commits_nothing() {
    let f = Fixture::new();
    f.records("in", 30_000, false);
    for (sig, name) in [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM"), (libc::SIGKILL, "SIGKILL")] {
        std::fs::write(f.path("out"), b"old").expect("write");
        // Rank 0 sleeps 0.4 s with its range written: the job is still running when the signal
        // comes, and left alone it would commit well within the second before the ranks' SIGTERM.
        let args = ["--record-size", "100", "-o", "out", "in"];
        // Open MPI's shared-memory segments in TMPDIR too: where mpirun is killed, nothing
        // removes them, and there they go with the test's directory.
        let tmp = f.path("tmp");
        let env = [("XSORT_MPI_FAULT", "delay:0:write:400"), ("OMPI_MCA_btl_vader_backing_directory", tmp.to_str().expect("path"))];
        let job = f.start(3, &args, &env, 0o022);
        // The ranks have made the output's temp file: the sort is under way.
        f.wait_for(".out.xsort-mpi-");
        let ranks = children(job.id());
        assert_eq!(ranks.len(), 3, "{name}: mpirun's children {ranks:?}");
        // SAFETY: kill sends a signal to the mpirun this test started (and has not waited for).
        assert_eq!(unsafe { libc::kill(job.id() as libc::pid_t, sig) }, 0);
        let out = wait_with_deadline(job, Duration::from_secs(60));
        assert!(!out.status.success(), "{name}: mpirun succeeded");
        let ended = Instant::now();
        while ranks.iter().any(|&r| running(r)) {
            assert!(ended.elapsed() < Duration::from_secs(2), "{name}: ranks still running 2 s after mpirun ended");
            std::thread::sleep(Duration::from_millis(10));
        }
        // Late enough for a commit that was to come (the rank's sleep and more).
        std::thread::sleep(Duration::from_millis(600));
        assert_eq!(f.read("out"), b"old", "{name}: the target was replaced after mpirun failed");
        assert_eq!(names(f.dir.path()), ["in", "out", "tmp"], "{name}: files left beside the target");
        // mpirun killed outright leaves its own session directory and the ranks' shared-memory
        // segments, as for any MPI program; nothing of xsort-mpi's.
        let left: Vec<String> = names(&tmp);
        let theirs = |n: &String| sig == libc::SIGKILL && (n.starts_with("ompi.") || n.starts_with("vader_segment."));
        assert!(left.iter().all(theirs), "{name}: left in TMPDIR: {left:?}");
        for n in left {
            let p = tmp.join(n);
            let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
        }
    }
}

/// The cluster example of docs/CLUSTER.md (README.md shows the same block), run as printed:
/// `scripts/install.sh` installs `xsort-mpi` beside the other commands (into `$HOME/.local`, here a
/// test directory; from the binaries this test run built, `XSORT_INSTALL_FROM`), and the block's
/// `mpirun` lines then find it on `PATH`. It was not installed, and the block ran it without, on
/// files that were not there. As root, Open MPI wants `--allow-run-as-root`, as the docs say (here
/// through the environment, as in every test); more ranks than this machine's cores,
/// `--oversubscribe` (the same way).
#[test]
fn the_readme_cluster_example_runs_as_printed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/CLUSTER.md")).expect("docs/CLUSTER.md");
    let section = doc.split("\n## Example").nth(1).expect("docs/CLUSTER.md's example section");
    let block = section.split("```sh\n").nth(1).and_then(|b| b.split("\n```").next()).expect("its first sh block");
    assert!(block.contains("scripts/install.sh") && block.contains("mpirun"), "{block}");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    assert!(readme.contains(&format!("```sh\n{block}\n```")), "README.md's cluster example differs from docs/CLUSTER.md's:\n{block}");
    let built = Path::new(XSORT_MPI).parent().expect("the profile's directory").to_owned();
    for name in ["xsort", "gensort", "valsort", "xsort-bench"] {
        assert!(
            built.join(name).is_file(),
            "{name} is missing beside xsort-mpi: cargo build --release -p xsort -p xsort-sortbench -p xsort-bench"
        );
    }
    let f = Fixture::new();
    let (home, work) = (f.path("home"), f.path("work"));
    std::fs::create_dir_all(&work).expect("work dir");
    // The block runs from the repository's root (`bash scripts/install.sh`): its scripts here.
    std::os::unix::fs::symlink(root.join("scripts"), work.join("scripts")).expect("symlink");
    let out = Command::new("bash")
        .args(["-e", "-c", block])
        .current_dir(&work)
        .env("HOME", &home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("TMPDIR", f.path("tmp"))
        .env("XSORT_INSTALL_FROM", &built)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .output()
        .expect("bash");
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the cluster example failed:\n{block}\n{said}");
    let installed = std::fs::read(home.join(".local/bin/xsort-mpi")).expect("xsort-mpi installed");
    assert!(installed == std::fs::read(XSORT_MPI).expect("xsort-mpi"), "the installed xsort-mpi is not the built one");
    // The one output is xsort's; the node-local parts in rank order are the sorted lines.
    let reference =
        Command::new(xsort()).args(["--record-size", "100", "--key-bytes", "0:10", "-o", "ref", "in"]).current_dir(&work).status();
    assert!(reference.expect("xsort").success());
    assert!(std::fs::read(work.join("out")).expect("out") == std::fs::read(work.join("ref")).expect("ref"), "out differs from xsort's");
    let parts: Vec<u8> = (0..2).flat_map(|r| std::fs::read(work.join(format!("part{r}.txt"))).expect("part")).collect();
    assert_eq!(String::from_utf8_lossy(&parts), "c,1\nb,2\na,10\n");
}

/// The compressed formats: their tools, and the extension that names them.
const TOOLS: [(&str, &str); 4] = [("gzip", "gz"), ("zstd", "zst"), ("bzip2", "bz2"), ("xz", "xz")];

/// Compresses `data` into the fixture's `name` with the system tool `tool` (`gzip`, `zstd`, ...).
fn compress_with(f: &Fixture, tool: &str, data: &[u8], name: &str) {
    use std::io::Write;
    let mut child = Command::new(tool)
        .args(["-c", "-q"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{tool} (install it): {e}"));
    let mut stdin = child.stdin.take().expect("stdin");
    let data = data.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&data));
    let out = child.wait_with_output().expect(tool);
    feeder.join().expect("feeder").expect("write to the compressor");
    assert!(out.status.success(), "{tool} failed");
    std::fs::write(f.path(name), out.stdout).expect("write");
}

/// What `tool -dc` gives for each of the fixture's `names`, one at a time (so each must be a
/// complete stream), concatenated.
fn decompress_each(f: &Fixture, tool: &str, names: &[String]) -> Vec<u8> {
    let mut all = Vec::new();
    for n in names {
        let out = Command::new(tool).arg("-dc").arg(f.path(n)).output().unwrap_or_else(|e| panic!("{tool}: {e}"));
        assert!(out.status.success(), "{tool} -dc {n}: {}", String::from_utf8_lossy(&out.stderr));
        all.extend_from_slice(&out.stdout);
    }
    all
}

/// Text lines whose second comma-separated field is a number, with many equal keys.
fn numbered_lines(count: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out = String::new();
    for i in 0..count {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out += &format!("{},{},{i}\n", ["pear", "fig", "kiwi"][(x % 3) as usize], (x >> 20) % 500);
    }
    out.into_bytes()
}

/// Each rank's inputs, two a rank (`in{rank}.a`, `in{rank}.b`), in every format and plain, and
/// their plain copies (`p{rank}.a`, ...) in the order xsort reads node-local inputs.
fn compressed_inputs(f: &Fixture, make: impl Fn(usize) -> Vec<u8>) -> Vec<String> {
    // Rank 0: gzip and plain; rank 1: zstd and xz; rank 2: bzip2 and two gzip members one after
    // the other (as `cat a.gz b.gz` makes them).
    let formats = [[Some("gzip"), None], [Some("zstd"), Some("xz")], [Some("bzip2"), Some("gzip")]];
    let mut plain = Vec::new();
    for (r, pair) in formats.iter().enumerate() {
        for (k, tool) in pair.iter().enumerate() {
            let (name, data) = (format!("in{r}.{}", ["a", "b"][k]), make(2 * r + k));
            match tool {
                Some(t) => compress_with(f, t, &data, &name),
                None => std::fs::write(f.path(&name), &data).expect("write"),
            }
            if r == 2 && k == 1 {
                let half = data.len() / 2 / 100 * 100;
                compress_with(f, "gzip", &data[..half], "first.gz");
                compress_with(f, "gzip", &data[half..], "second.gz");
                std::fs::write(f.path(&name), [f.read("first.gz"), f.read("second.gz")].concat()).expect("write");
            }
            let copy = format!("p{r}.{}", ["a", "b"][k]);
            std::fs::write(f.path(&copy), &data).expect("write");
            plain.push(copy);
        }
    }
    plain
}

#[test]
fn node_local_compressed_inputs_of_every_format_sort_as_plain_ones() {
    let f = Fixture::new();
    // Records (sorted in place), many with equal keys: the parts in rank order are xsort's output
    // of the plain inputs, equal keys in input order.
    let plain = compressed_inputs(&f, |i| {
        let name = format!("g{i}");
        generate_file(&f.path(&name), 10_000 * i as u128, 3_000 + 500 * i as u64, GenOptions::default(), 1).expect("gensort");
        let mut data = f.read(&name);
        data.chunks_mut(100).step_by(3).for_each(|r| r[..10].copy_from_slice(b"0123456789"));
        data
    });
    let opts = ["--record-size", "100", "--key-bytes", "0:10"];
    let plain: Vec<&str> = plain.iter().map(String::as_str).collect();
    f.single(&[&opts[..], &["-o", "ref"], &plain].concat());
    f.cluster(3, &[&opts[..], &["--stats-json", "s.json", "-o", "out{rank}", "in{rank}.a", "in{rank}.b"]].concat());
    let parts: Vec<u8> = (0..3).flat_map(|r| f.read(&format!("out{r}"))).collect();
    assert!(parts == f.read("ref"), "the parts of compressed inputs differ from xsort's output of the plain ones");
    let stats: Value = serde_json::from_slice(&f.read("s.json")).expect("stats JSON");
    let input: u64 =
        stats["per_rank"].as_array().expect("per_rank").iter().map(|r| r["exchange"]["input_bytes"].as_u64().unwrap_or(0)).sum();
    assert_eq!(input, f.read("ref").len() as u64, "the input's bytes are the decompressed ones");
    // Through the engine too (-S 2M: the in-place sort does not fit), into one shared output.
    f.cluster(3, &[&opts[..], &["-S", "2M", "-o", "out", "in{rank}.a", "in{rank}.b"]].concat());
    assert!(f.read("out") == f.read("ref"), "through the engine, the output differs from xsort's");
    // Lines, whose last line in a file has no newline, with -u.
    for name in ["in0.a", "in0.b", "in1.a", "in1.b", "in2.a", "in2.b", "first.gz", "second.gz"] {
        std::fs::remove_file(f.path(name)).expect("remove");
    }
    let plain = compressed_inputs(&f, |i| {
        let mut data = numbered_lines(4_000 + 700 * i, i as u64);
        data.pop();
        data
    });
    let plain: Vec<&str> = plain.iter().map(String::as_str).collect();
    for opts in [&["-t,", "-k2,2n"][..], &["-t,", "-k1,1", "-u"]] {
        f.single(&[opts, &["-o", "ref"], &plain].concat());
        f.cluster(3, &[opts, &["-o", "out", "in{rank}.a", "in{rank}.b"]].concat());
        assert!(f.read("out") == f.read("ref"), "{opts:?}: the output of compressed lines differs from xsort's");
    }
}

#[test]
fn compressed_parts_and_shared_outputs_decompress_to_the_sorted_whole() {
    let f = Fixture::new();
    f.records("a", 30_000, false);
    std::fs::write(f.path("t.txt"), numbered_lines(20_000, 7)).expect("write");
    let recs = ["--record-size", "100", "--key-bytes", "0:10"];
    f.single(&[&recs[..], &["-o", "ref", "a"]].concat());
    f.single(&["-t,", "-k2,2n", "-o", "ref.txt", "t.txt"]);
    f.single(&["-t,", "-k1,1", "-u", "-o", "ref.u", "t.txt"]);
    let parts = |stem: &str, ext: &str, np: usize| (0..np).map(|r| format!("{stem}{r}.{ext}")).collect::<Vec<_>>();
    for (tool, ext) in TOOLS {
        // Parts by their extension: records (sorted in place), lines (through the engine), lines
        // with -u (the output staged first), each part one complete stream.
        let part = format!("out{{rank}}.{ext}");
        f.cluster(3, &[&recs[..], &["-o", &part, "a"]].concat());
        assert!(decompress_each(&f, tool, &parts("out", ext, 3)) == f.read("ref"), "{tool}: record parts");
        f.cluster(3, &["-t,", "-k2,2n", "-o", &part, "t.txt"]);
        assert!(decompress_each(&f, tool, &parts("out", ext, 3)) == f.read("ref.txt"), "{tool}: line parts");
        f.cluster(2, &["-t,", "-k1,1", "-u", "-o", &part, "t.txt"]);
        assert!(decompress_each(&f, tool, &parts("out", ext, 2)) == f.read("ref.u"), "{tool}: -u parts");
        // One shared output: each rank's members or frames at its offset, in rank order (with 4
        // ranks on the 3 distinct keys of -u, one rank's range is empty).
        let shared = format!("out.{ext}");
        f.cluster(3, &[&recs[..], &["--stats-json", "s.json", "-o", &shared, "a"]].concat());
        assert!(decompress_each(&f, tool, std::slice::from_ref(&shared)) == f.read("ref"), "{tool}: shared records");
        let stats: Value = serde_json::from_slice(&f.read("s.json")).expect("stats JSON");
        let packed: u64 = stats["per_rank"]
            .as_array()
            .expect("per_rank")
            .iter()
            .map(|r| r["output_compressed_bytes"].as_u64().expect("compressed"))
            .sum();
        assert_eq!(packed, f.read(&shared).len() as u64, "{tool}: {stats}");
        f.cluster(4, &["-t,", "-k1,1", "-u", "-o", &shared, "t.txt"]);
        assert!(decompress_each(&f, tool, std::slice::from_ref(&shared)) == f.read("ref.u"), "{tool}: shared -u lines");
    }
    // --compress whatever the name, and at a level; --compress=none writes a .gz name plain.
    f.cluster(2, &[&recs[..], &["--compress=xz:1", "-o", "part{rank}", "a"]].concat());
    assert!(decompress_each(&f, "xz", &["part0".into(), "part1".into()]) == f.read("ref"));
    f.cluster(3, &["--compress", "zstd:19", "-t,", "-k2,2n", "-o", "whole", "t.txt"]);
    assert!(decompress_each(&f, "zstd", &["whole".into()]) == f.read("ref.txt"));
    f.cluster(2, &[&recs[..], &["--compress=none", "-o", "plain.gz", "a"]].concat());
    assert!(f.read("plain.gz") == f.read("ref"));
    let out = f.mpirun(2, &[&recs[..], &["--compress=lz4", "-o", "x", "a"]].concat(), &[]);
    assert!(one_error_line(&out).contains("invalid --compress 'lz4': unknown compressed format 'lz4'"), "{out:?}");
}

#[test]
fn a_corrupt_or_truncated_compressed_part_fails_naming_it_and_leaves_nothing() {
    let f = Fixture::new();
    let mut inputs = Vec::new();
    for (r, (tool, ext)) in TOOLS.iter().enumerate().take(3) {
        let name = format!("in{r}.{ext}");
        compress_with(&f, tool, &numbered_lines(30_000, r as u64), &name);
        inputs.push(name);
    }
    let named = |r: usize| inputs[r].clone();
    let run = |input: &str| f.mpirun(3, &["-t,", "-k2,2n", "--stats-json", "s.json", "-o", "out{rank}.gz", input], &[]);
    // Rank 1's zstd part cut short, rank 2's bzip2 part intact: rank 1 says which file, and why.
    std::fs::rename(f.path(&named(1)), f.path("whole.zst")).expect("rename");
    let whole = f.read("whole.zst");
    std::fs::write(f.path(&named(1)), &whole[..whole.len() / 2]).expect("write");
    let links: Vec<String> = (0..3).map(|r| format!("part{r}")).collect();
    for (r, link) in links.iter().enumerate() {
        std::os::unix::fs::symlink(named(r), f.path(link)).expect("symlink");
    }
    let out = run("part{rank}");
    let cut = whole.len() / 2;
    assert_eq!(
        one_error_line(&out),
        format!("xsort-mpi: rank 1: part1: truncated zstd data: it ends at byte {cut} before the end of its stream")
    );
    let kept: Vec<&str> = inputs.iter().chain(&links).map(String::as_str).chain(["whole.zst"]).collect();
    assert_nothing_left(&f, &kept);
    // Rank 0's gzip part corrupt in the middle.
    std::fs::write(f.path(&named(1)), &whole).expect("write");
    let mut bad = f.read(&named(0));
    let mid = bad.len() / 2;
    bad[mid..mid + 64].iter_mut().for_each(|b| *b ^= 0x5a);
    std::fs::write(f.path(&named(0)), &bad).expect("write");
    let line = one_error_line(&run("part{rank}"));
    assert!(line.starts_with("xsort-mpi: rank 0: part0: corrupt gzip data, found "), "{line}");
    assert_nothing_left(&f, &kept);
}

#[test]
fn a_full_disk_under_a_compressed_part_or_while_decompressing_publishes_nothing() {
    if !xsort_testkit::root() {
        return;
    }
    // Records of random bytes, which do not compress: rank 2's 2 MB part does not fit its 1 MiB
    // tmpfs, found as its compressed blocks are written (their size is not known before).
    let f = Fixture::new();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for r in 0..3 {
        let data: Vec<u8> = (0..2_000_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        std::fs::write(f.path(&format!("in{r}")), data).expect("write");
        std::fs::create_dir(f.path(&format!("d{r}"))).expect("dir");
        std::fs::write(f.path(&format!("d{r}/out.gz")), b"old").expect("write");
    }
    let _full = Tmpfs::mount(&f.path("d2"), "1m");
    std::fs::write(f.path("d2/out.gz"), b"old").expect("write");
    let out = f.mpirun(3, &["--record-size", "100", "-o", "d{rank}/out.gz", "in{rank}"], &[]);
    assert_eq!(one_error_line(&out), "xsort-mpi: rank 2: d2/out.gz: write error: No space left on device");
    for r in 0..3 {
        let d = f.path(&format!("d{r}"));
        assert_eq!(names(&d), ["out.gz"], "rank {r}'s directory");
        assert_eq!(std::fs::read(d.join("out.gz")).expect("read"), b"old", "rank {r}'s old part changed");
    }
    // Compressed inputs that the full tmpfs, as every rank's -T, cannot hold decompressed.
    for r in 0..3 {
        compress_with(&f, "zstd", &numbered_lines(100_000, r), &format!("in{r}.zst"));
    }
    let out = f.mpirun(3, &["-T", "d2", "-o", "out{rank}", "in{rank}.zst"], &[]);
    let line = one_error_line(&out);
    assert!(
        line.starts_with("xsort-mpi: rank ") && line.ends_with(".zst: cannot decompress into a temp file in d2: No space left on device"),
        "{line}"
    );
    assert_eq!(names(&f.path("d2")), ["out.gz"]);
    assert_nothing_left(&f, &["d0", "d1", "d2", "in0", "in1", "in2", "in0.zst", "in1.zst", "in2.zst"]);
}
