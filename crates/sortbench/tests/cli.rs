//! The real `gensort` and `valsort` binaries on real files: bytes, stderr
//! lines and exit codes, as the reference tools produce them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use xsort_sortbench::{fill_records, GenOptions, REC_SIZE, SUMMARY_SIZE};

const GENSORT: &str = env!("CARGO_BIN_EXE_gensort");
const VALSORT: &str = env!("CARGO_BIN_EXE_valsort");

/// Exit code and stderr of one run.
fn run(bin: &str, args: &[&str]) -> (i32, String) {
    let out = Command::new(bin).args(args).output().expect("binary runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn p(path: &Path) -> &str {
    path.to_str().expect("temp paths are UTF-8")
}

fn records(first: u128, count: usize, opts: GenOptions) -> Vec<u8> {
    let mut buf = vec![0u8; count * REC_SIZE];
    fill_records(&mut buf, first, opts);
    buf
}

fn sorted(data: &[u8]) -> Vec<u8> {
    let mut recs: Vec<&[u8]> = data.chunks_exact(REC_SIZE).collect();
    recs.sort_by(|a, b| a[..10].cmp(&b[..10]));
    recs.concat()
}

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Dir {
        Dir(tempfile::tempdir().expect("tempdir"))
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
}

#[test]
fn gensort_checksum_line_and_bytes() {
    let dir = Dir::new();
    let f = dir.path("g");
    assert_eq!(run(GENSORT, &["-c", "1000", p(&f)]), (0, "1ea6370b955\n".into()));
    assert_eq!(std::fs::read(&f).expect("output"), records(0, 1000, GenOptions::default()));
    assert_eq!(run(GENSORT, &["-a", "-c", "1000", p(&f)]), (0, "1f5dfb3631a\n".into()));
    assert_eq!(run(GENSORT, &["-s", "-c", "1000", "/dev/null"]), (0, "1e96301166b\n".into()));
    assert_eq!(run(GENSORT, &["-c", "-b0", "500", "/dev/null"]), (0, "f63842aeda\n".into()));
    assert_eq!(run(GENSORT, &["-c", "-b500", "500", "/dev/null"]), (0, "f42b2e0a7b\n".into()));
    assert_eq!(run(GENSORT, &["1000", p(&f)]), (0, String::new()));
}

#[test]
fn gensort_same_bytes_for_any_threads_and_io() {
    let dir = Dir::new();
    // Spans several 8 MiB blocks and ends on a tail that is not 4 KiB aligned.
    let n = 250_003;
    for opts in [GenOptions { ascii: false, skew: true }, GenOptions { ascii: true, skew: true }] {
        let expect = records(77, n, opts);
        let mut flags = vec!["-b77"];
        if opts.ascii {
            flags.push("-a");
        }
        flags.push("-s");
        for (threads, suffix) in [("-t1", ""), ("-t2", ",buf"), ("-t3", ",trans=1m,count=3"), ("-t0", "")] {
            let f = dir.path(&format!("t{threads}"));
            let target = format!("{}{suffix}", p(&f));
            let count = n.to_string();
            let mut args = flags.clone();
            args.extend([threads, count.as_str(), target.as_str()]);
            assert_eq!(run(GENSORT, &args).0, 0);
            let got = std::fs::read(&f).expect("output");
            assert!(got == expect, "{opts:?} {threads}{suffix}");
        }
    }
}

#[test]
fn gensort_beyond_2_pow_64() {
    let dir = Dir::new();
    let start: u128 = (1 << 64) - 2;
    let f = dir.path("big");
    let b = format!("-b{start}");
    assert_eq!(run(GENSORT, &["-a", &b, "4", p(&f)]).0, 0);
    let got = std::fs::read(&f).expect("output");
    assert_eq!(got, records(start, 4, GenOptions { ascii: true, skew: false }));
    assert_eq!(&got[2 * REC_SIZE + 12..2 * REC_SIZE + 44], b"00000000000000010000000000000000");
    // Partitions on either side of the boundary concatenate to the whole.
    let (a, c) = (dir.path("a"), dir.path("c"));
    let b2 = format!("-b{}", start + 3);
    assert_eq!(run(GENSORT, &["-s", &b, "3", p(&a)]).0, 0);
    assert_eq!(run(GENSORT, &["-s", &b2, "1", p(&c)]).0, 0);
    let mut joined = std::fs::read(&a).expect("a");
    joined.extend(std::fs::read(&c).expect("c"));
    assert_eq!(joined, records(start, 4, GenOptions { ascii: false, skew: true }));
}

#[test]
fn gensort_to_a_pipe() {
    let out = Command::new(GENSORT).args(["-a", "1000", "/dev/stdout"]).stdout(Stdio::piped()).output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, records(0, 1000, GenOptions { ascii: true, skew: false }));
}

#[test]
fn gensort_usage_and_open_errors() {
    for args in [&[][..], &["1000"], &["-x", "1000", "f"], &["1", "2", "3"], &["--help"]] {
        let (code, err) = run(GENSORT, args);
        assert_eq!(code, 1, "{args:?}");
        assert!(err.starts_with("Gensort Sort Input Generator"), "{args:?}: {err}");
        assert!(err.contains("usage: gensort [-a] [-c] [-bSTARTING_REC_NUM] [-s] [-tN] NUM_RECS"));
    }
    let (code, err) = run(GENSORT, &["10", "/nonexistent-dir/f"]);
    assert_eq!((code, err.as_str()), (1, "/nonexistent-dir/f: No such file or directory\n"));
}

#[test]
fn valsort_reports() {
    let dir = Dir::new();
    let unsorted = dir.path("u");
    std::fs::write(&unsorted, records(0, 1000, GenOptions::default())).expect("write");
    let expect = "First unordered record is record 2\nRecords: 1000\nChecksum: 1ea6370b955\n\
                  ERROR - there are 483 unordered records\n";
    assert_eq!(run(VALSORT, &[p(&unsorted)]), (1, expect.into()));
    assert_eq!(run(VALSORT, &["-t1", p(&unsorted)]), (1, expect.into()));
    let buffered = format!("{},buf,trans=100k", p(&unsorted));
    assert_eq!(run(VALSORT, &["-t3", &buffered]), (1, expect.into()));
    assert_eq!(run(VALSORT, &["-q", p(&unsorted)]), (1, String::new()));
    let good = dir.path("s");
    std::fs::write(&good, sorted(&records(0, 1000, GenOptions::default()))).expect("write");
    let ok = "Records: 1000\nChecksum: 1ea6370b955\nDuplicate keys: 0\nSUCCESS - all records are in order\n";
    assert_eq!(run(VALSORT, &[p(&good)]), (0, ok.into()));
    assert_eq!(run(VALSORT, &["-q", &format!("{},buf", p(&good))]), (0, String::new()));
}

#[test]
fn valsort_input_errors() {
    let dir = Dir::new();
    let missing = dir.path("nosuch");
    let (code, err) = run(VALSORT, &[p(&missing)]);
    assert_eq!((code, err), (1, format!("{}: No such file or directory\n", p(&missing))));
    let empty = dir.path("empty");
    std::fs::write(&empty, b"").expect("write");
    let msg = "there must be at least one record to be validated\n";
    assert_eq!(run(VALSORT, &[p(&empty)]), (1, msg.into()));
    assert_eq!(run(VALSORT, &["-q", p(&empty)]), (1, msg.into()));
    let partial = dir.path("partial");
    let mut data = records(0, 10, GenOptions::default());
    data.truncate(950);
    std::fs::write(&partial, &data).expect("write");
    assert_eq!(run(VALSORT, &[p(&partial)]), (1, "partial record found at end\n".into()));
    for args in [&[][..], &["a", "b"], &["-z", "f"], &["-o", "x.sum"], &["-o", "-q", "f"]] {
        let (code, err) = run(VALSORT, args);
        assert_eq!(code, 1, "{args:?}");
        assert!(err.starts_with("Valsort Sort Output Validator"), "{args:?}: {err}");
    }
}

#[test]
fn valsort_reads_pipes() {
    let data = sorted(&records(0, 30_000, GenOptions { ascii: true, skew: true }));
    let mut child = Command::new(VALSORT).arg("/dev/stdin").stdin(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&data[..data.len() - 1]); // one byte short
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "partial record found at end\n");
}

#[test]
fn valsort_partition_summaries() {
    let dir = Dir::new();
    let all = sorted(&records(0, 1_000_000, GenOptions::default()));
    let mut sums = Vec::new();
    for (k, part) in all.chunks(250_000 * REC_SIZE).enumerate() {
        let (dat, sum) = (dir.path(&format!("p{k}")), dir.path(&format!("p{k}.sum")));
        std::fs::write(&dat, part).expect("write part");
        let (code, _) = run(VALSORT, &["-q", "-o", p(&sum), p(&dat)]);
        assert_eq!(code, 0);
        let bytes = std::fs::read(&sum).expect("summary");
        assert_eq!(bytes.len(), SUMMARY_SIZE);
        sums.push(bytes);
    }
    let bad = dir.path("bad.sum");
    std::fs::write(&bad, [&sums[3][..], &sums[0], &sums[1], &sums[2]].concat()).expect("write");
    let expect = "First unordered record is record 250000\nRecords: 1000000\n\
                  Checksum: 7a0e0d4868cd4\nERROR - there are 1 unordered records\n";
    assert_eq!(run(VALSORT, &["-s", p(&bad)]), (1, expect.into()));
    let good = dir.path("all.sum");
    std::fs::write(&good, sums.concat()).expect("write");
    let ok = "Records: 1000000\nChecksum: 7a0e0d4868cd4\nDuplicate keys: 0\n\
              SUCCESS - all records are in order\n";
    assert_eq!(run(VALSORT, &["-s", p(&good)]), (0, ok.into()));
    // -o in -s mode writes the combined summary, which -s accepts again.
    let total = dir.path("total.sum");
    assert_eq!(run(VALSORT, &["-q", "-o", p(&total), "-s", p(&good)]).0, 0);
    assert_eq!(run(VALSORT, &["-s", p(&total)]), (0, ok.into()));
    let cut = dir.path("cut.sum");
    std::fs::write(&cut, &sums.concat()[..3 * SUMMARY_SIZE + 10]).expect("write");
    assert_eq!(run(VALSORT, &["-s", p(&cut)]), (1, "partial partition summary found at end\n".into()));
}

#[test]
fn valsort_summary_file_is_created_first() {
    let dir = Dir::new();
    let sum = dir.path("made.sum");
    let (code, _) = run(VALSORT, &["-o", p(&sum), p(&dir.path("missing"))]);
    assert_eq!(code, 1);
    assert_eq!(std::fs::metadata(&sum).expect("created").len(), 0);
    let (code, err) = run(VALSORT, &["-o", "/nonexistent-dir/s.sum", p(&sum)]);
    assert_eq!((code, err.as_str()), (1, "/nonexistent-dir/s.sum: No such file or directory\n"));
}

#[test]
fn tmpfs_falls_back_to_buffered_io() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        return; // no tmpfs on this machine: nothing to check
    }
    let dir = tempfile::tempdir_in(shm).expect("tmpfs dir");
    let f = dir.path().join("g");
    let data = records(0, 3001, GenOptions::default());
    let line = format!("{:x}\n", xsort_sortbench::checksum_of(&data));
    assert_eq!(run(GENSORT, &["-c", "3001", p(&f)]), (0, line));
    assert_eq!(std::fs::read(&f).expect("output"), data);
    let (code, _) = run(VALSORT, &["-q", p(&f)]);
    assert_eq!(code, 1);
}
