//! The mapped path at any size: a single input mostly in the page cache is sorted from a read-only
//! mapping of the cache, in one pass and with no temp file, whenever its entries fit the budget
//! (32 bytes a record or a line; for records, about 17 when sorted in batches and merged), however
//! much larger than the budget the input itself is. When they do not fit, or the input is on disk,
//! the sort spills as before. And the time spent faulting in fresh buffers shows as the "memory
//! touch" phase of the statistics. `input_read` names the strategy each sort used.

use crate::common::*;
use xsort_sortbench as sb;

/// 20 MB of 100-byte records (or lines): 6.4 MB of entries and scratch, which fit an 8 MiB budget
/// and not a 4 MiB one; the entries with one batch's scratch (4.25 MB) fit 5 MiB and not 3 MiB; the
/// data fits none of them.
const N: u64 = 200_000;

/// Reads the file at `path` through, so that it is in the page cache.
fn cache(path: &std::path::Path) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    assert!(!bytes.is_empty());
    let f = std::fs::File::open(path).unwrap();
    assert!(xsort_io::page_cache_fraction(&f).unwrap_or(0.0) > 0.9, "{} is not in the page cache", path.display());
}

/// Sorts the records file `in` of `fx` with `-S budget` and extra options into `out`, temp files
/// in `t/`, and returns the stats JSON, the --stats report and whether `t/` was used.
fn sort_records(fx: &Fixture, budget: &str) -> (serde_json::Value, String, bool) {
    let temp = fx.mkdir("t");
    watch_dir(&temp);
    let out = ok(fx
        .cmd()
        .args(["--record-size=100", "--key-bytes=0:10", "-S", budget, "-T", "t", "--stats", "--stats-json", "s.json"])
        .args(["-o", "out", "in"]));
    assert_dir_empty(&temp);
    (read_stats(&fx.path("s.json")), String::from_utf8(out.stderr).unwrap(), dir_was_used(&temp))
}

#[test]
fn a_cached_input_larger_than_the_budget_sorts_in_one_pass_when_its_entries_fit() {
    let fx = Fixture::new();
    let sum = gensort(&fx.path("in"), 0, N, false);
    cache(&fx.path("in"));
    let (s, report, used) = sort_records(&fx, "8M");
    assert_eq!((stat_u64(&s, "passes"), stat_u64(&s, "runs")), (1, 0), "one pass expected: {s}");
    assert!(!used, "a temp file was created: {s}");
    assert_eq!((&s["input_mapped"], &s["input_read"]), (&true.into(), &"mapped_whole".into()), "{s}");
    let entries = stat_u64(&s, "entries_bytes");
    assert!((N * 32..=N * 32 + 2 * 4096).contains(&entries), "entries and scratch, 32 bytes a record (in whole pages): {s}");
    assert!(stat_u64(&s, "memory_planned_bytes") <= 8 << 20, "the plan counts the entries, not the cached input: {s}");
    assert_eq!(phase_mode(&s, "input read"), "buffered");
    assert!(report.contains("input mapped, not copied: entries 6.1 MiB"), "{report}");
    assert!(report.contains("  input        mapped, sorted whole\n"), "{report}");
    assert!(report.contains("one pass in memory, no temp file"), "{report}");
    assert_valsort_clean(&fx.path("out"), N, sum);
    fx.assert_clean();
}

#[test]
fn a_cached_input_whose_entries_fit_only_without_a_whole_scratch_copy_sorts_in_batches_in_one_pass() {
    let fx = Fixture::new();
    let sum = gensort(&fx.path("in"), 0, N, false);
    cache(&fx.path("in"));
    let (s, _, used) = sort_records(&fx, "5M");
    assert_eq!((stat_u64(&s, "passes"), stat_u64(&s, "runs")), (1, 0), "one pass expected: {s}");
    assert!(!used, "a temp file was created: {s}");
    assert_eq!((&s["input_mapped"], &s["input_read"]), (&true.into(), &"mapped_batches".into()), "{s}");
    let entries = stat_u64(&s, "entries_bytes");
    assert!(entries < N * 22, "entries and one batch's scratch, not a whole scratch copy: {s}");
    assert!(stat_u64(&s, "memory_planned_bytes") <= 5 << 20, "{s}");
    assert_valsort_clean(&fx.path("out"), N, sum);
    fx.assert_clean();
}

#[test]
fn a_cached_input_whose_entries_do_not_fit_still_spills() {
    let fx = Fixture::new();
    let sum = gensort(&fx.path("in"), 0, N, false);
    cache(&fx.path("in"));
    let (s, _, used) = sort_records(&fx, "3M");
    assert!(stat_u64(&s, "runs") >= 2 && used, "4.25 MB of entries exceed 3 MiB: the sort spills: {s}");
    assert_eq!((&s["input_mapped"], &s["input_read"]), (&false.into(), &"file_batches".into()), "{s}");
    assert!(stat_u64(&s, "memory_planned_bytes") <= 3 << 20, "{s}");
    assert_valsort_clean(&fx.path("out"), N, sum);
    fx.assert_clean();
}

#[test]
fn an_input_on_disk_is_read_and_its_buffers_touched_ahead_of_the_reads() {
    let fx = Fixture::new();
    let sum = gensort(&fx.path("in"), 0, N, false);
    evict(&fx.path("in"));
    let (s, report, used) = sort_records(&fx, "8M");
    assert!(stat_u64(&s, "runs") >= 2 && used, "an input on disk larger than the budget spills: {s}");
    assert_eq!(s["input_mapped"], false, "{s}");
    // The buffers of the sort phase and the writers', faulted in by the prefault thread: the
    // memory touch phase. Each buffer is whole pages, so the planned bytes round up a little.
    let touched = phase_bytes(&s, "memory touch").unwrap_or_else(|| panic!("no memory touch phase: {s}"));
    assert!(touched > 0 && touched <= (8 << 20) + 8 * 4096, "touched {touched} bytes under an 8 MiB budget: {s}");
    assert_eq!(phase_mode(&s, "memory touch"), "memory");
    assert!(report.lines().any(|l| l.trim_start().starts_with("memory touch")), "{report}");
    assert!(stat_u64(&s, "minor_faults") > 0, "{s}");
    assert_valsort_clean(&fx.path("out"), N, sum);
    fx.assert_clean();
}

/// `N` gensort lines (`gensort -a`: 100 bytes each, ending in CR LF),
/// in the page cache, and the same lines sorted by `key` (None: whole lines) stably.
fn cached_lines(fx: &Fixture, key: Option<usize>) -> Vec<u8> {
    sb::generate_file(&fx.path("in"), 0, N, sb::GenOptions { ascii: true, skew: false }, 1).expect("gensort -a");
    cache(&fx.path("in"));
    let data = std::fs::read(fx.path("in")).unwrap();
    let mut lines: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
    assert_eq!(lines.len() as u64, N);
    match key {
        Some(k) => lines.sort_by(|a, b| a[..k].cmp(&b[..k])),
        None => lines.sort_by(|a, b| a[..a.len() - 1].cmp(&b[..b.len() - 1])),
    }
    lines.concat()
}

/// Sorts the lines file `in` of `fx` with `-S budget` and `args`, checks the output against `want`,
/// and returns the stats JSON and whether the temp dir was used.
fn sort_lines(fx: &Fixture, budget: &str, args: &[&str], want: &[u8]) -> (serde_json::Value, bool) {
    let temp = fx.mkdir("t");
    watch_dir(&temp);
    ok(fx.cmd().args(["-S", budget, "-T", "t", "--stats-json", "s.json"]).args(args).args(["-o", "out", "in"]));
    assert_dir_empty(&temp);
    assert!(std::fs::read(fx.path("out")).unwrap() == want, "{args:?} under -S {budget}: the output is not the sorted input");
    (read_stats(&fx.path("s.json")), dir_was_used(&temp))
}

#[test]
fn cached_lines_larger_than_the_budget_sort_in_one_pass_when_their_index_fits() {
    for (key, args) in [(Some(10), &["-s", "-k1.1,1.10"][..]), (None, &[][..])] {
        let fx = Fixture::new();
        let want = cached_lines(&fx, key);
        let (s, used) = sort_lines(&fx, "8M", args, &want);
        assert_eq!((stat_u64(&s, "passes"), stat_u64(&s, "runs")), (1, 0), "{args:?}: one pass expected: {s}");
        assert!(!used, "{args:?}: a temp file was created");
        assert_eq!((&s["input_mapped"], &s["input_read"]), (&true.into(), &"mapped_whole".into()), "{s}");
        assert!(stat_u64(&s, "memory_planned_bytes") <= 8 << 20, "the plan counts the index, not the cached input: {s}");
        // Whose index does not fit: spilled, as before.
        let (s, used) = sort_lines(&fx, "4M", args, &want);
        assert!(stat_u64(&s, "runs") >= 2 && used, "{args:?}: 6.4 MB of index exceed 4 MiB: the sort spills: {s}");
        assert_eq!((&s["input_mapped"], &s["input_read"]), (&false.into(), &"file_batches".into()), "{s}");
        fx.assert_clean();
    }
}

#[test]
fn standard_input_is_read_as_a_stream_whatever_the_framing() {
    for (args, data) in [(&["--record-size=3"][..], &b"dddcccbbbaaa"[..]), (&[][..], &b"c\nb\na\n"[..])] {
        let fx = Fixture::new();
        let out = ok_with_stdin(fx.cmd().args(args).args(["--stats-json", "s.json"]), Some(data));
        assert!(out.stdout.starts_with(b"a") && out.stdout.len() == data.len(), "{args:?}: {:?}", String::from_utf8_lossy(&out.stdout));
        let s = read_stats(&fx.path("s.json"));
        assert_eq!((&s["input_mapped"], &s["input_read"]), (&false.into(), &"stream".into()), "{args:?}: {s}");
        fx.assert_clean();
    }
}

/// Nsort's `-reformat` of fixed fields on a cached input is gathered from the mapping (the fields
/// written, in their new order), with or without a selection and a key; a sort whose entries only
/// fit when merged in batches reads the input as a stream (rewritten as read) instead, to the same
/// bytes.
#[test]
fn a_reformat_of_fixed_fields_is_gathered_from_the_mapping() {
    let fx = Fixture::new();
    let input = fx.path("in");
    gensort(&input, 0, N, false);
    cache(&input);
    let data = std::fs::read(&input).unwrap();
    let fields = "-format=size:100 -field=name:k,size:10 -field=name:a,size:12,off:10 -field=name:b,size:78,off:22";
    /// The statements, the records kept, each one's output and sort key, and the direction.
    struct Case {
        statements: &'static str,
        keep: fn(&[u8]) -> bool,
        out: fn(&[u8]) -> Vec<u8>,
        key: fn(&[u8]) -> Vec<u8>,
        descending: bool,
    }
    let cases = [
        Case {
            statements: "-key=k -reformat=b,k",
            keep: |_| true,
            out: |r| [&r[22..], &r[..10]].concat(),
            key: |r| r[..10].to_vec(),
            descending: false,
        },
        Case {
            statements: "-key=a,descending -include=(k lt x'80') -reformat=k,a",
            keep: |r| r[0] < 0x80,
            out: |r| r[..22].to_vec(),
            key: |r| r[10..22].to_vec(),
            descending: true,
        },
        // No key: the whole rewritten record.
        Case {
            statements: "-reformat=a,k",
            keep: |_| true,
            out: |r| [&r[10..22], &r[..10]].concat(),
            key: |r| [&r[10..22], &r[..10]].concat(),
            descending: false,
        },
    ];
    for c in cases {
        let spec = format!("{fields} {}", c.statements);
        let mut kept: Vec<&[u8]> = data.chunks(100).filter(|r| (c.keep)(r)).collect();
        kept.sort_by(|a, b| {
            let o = (c.key)(a).cmp(&(c.key)(b));
            if c.descending {
                o.reverse()
            } else {
                o
            }
        });
        let want: Vec<u8> = kept.iter().flat_map(|r| (c.out)(r)).collect();
        for budget in ["64M", "5M"] {
            ok(fx.cmd().args(["-S", budget, "--stats-json", "s.json", "--spec", &spec, "-o", "out", "in"]));
            let s: serde_json::Value = serde_json::from_slice(&std::fs::read(fx.path("s.json")).unwrap()).unwrap();
            let expected = if budget == "64M" { "mapped_whole" } else { "stream" };
            assert_eq!(s["input_read"], expected, "{spec} -S {budget}: {s}");
            assert!(std::fs::read(fx.path("out")).unwrap() == want, "{spec} -S {budget}: the output differs");
        }
    }
}
