//! Sorting correctness of the real `xsort` binary on real files: one pass and spilled (multi-level
//! merges, several temp dirs, a low descriptor limit), gensort data checked with the independent
//! valsort, and every other shape of record and key checked byte for byte against a stable
//! `sort_by` reference (which checks order, stability, count and content at once).

use crate::common::*;

/// How a sort is asked to run.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// Default budget: the data fits, one pass, no temp file.
    OnePass,
    /// The smallest budget: runs are written and merged.
    Spilled,
}

/// Sorts `data` (one input file) with `--record-size=rec`, `keys` and `extra` options, and checks
/// the output exactly against the stable reference, the input unchanged, the temp dirs untouched
/// (one pass) or emptied (spilled) and no xsort file left anywhere. Returns the stats JSON.
fn check_sort(data: &[u8], rec: usize, keys: &[&str], mode: Mode, extra: &[&str]) -> serde_json::Value {
    let fx = Fixture::new();
    let input = fx.write("in.dat", data);
    let temp = fx.mkdir("temp");
    watch_dir(&temp);
    watch_dir(&fx.tmp());
    let mut cmd = fx.cmd();
    cmd.arg(format!("--record-size={rec}")).args(key_args(keys)).args(extra).arg("-T").arg(&temp);
    if mode == Mode::Spilled {
        // Read from disk: a cached input whose entries fit would sort in one pass from its mapping.
        evict(&input);
        cmd.args(["-S", TINY]);
    }
    cmd.args(["--stats-json", "stats.json", "-o", "out.dat"]).arg(&input);
    let out = ok(&mut cmd);
    assert!(out.stdout.is_empty(), "nothing on stdout with -o");
    let what = format!("record size {rec}, keys {keys:?}, {mode:?}, {extra:?}");
    let actual = std::fs::read(fx.path("out.dat")).unwrap();
    assert_same_records(&actual, &reference_sort(data, rec, keys), rec, &what);
    assert_eq!(std::fs::read(&input).unwrap(), data, "{what}: the input was modified");
    let stats = read_stats(&fx.path("stats.json"));
    assert_eq!(stat_u64(&stats, "records"), (data.len() / rec) as u64, "{what}: stats records");
    match mode {
        Mode::OnePass => {
            assert_eq!(stat_u64(&stats, "passes"), 1, "{what}: one pass expected");
            assert_eq!(stat_u64(&stats, "runs"), 0, "{what}: no runs expected");
            assert!(!dir_was_used(&temp), "{what}: a temp file was created in a one-pass sort");
        }
        Mode::Spilled => {
            assert!(stat_u64(&stats, "runs") >= 2, "{what}: the sort should have spilled: {stats}");
            assert!(stat_u64(&stats, "passes") >= 2, "{what}: passes");
            assert!(dir_was_used(&temp), "{what}: the -T directory was not used");
        }
    }
    assert!(!dir_was_used(&fx.tmp()), "{what}: TMPDIR used although -T was given");
    assert_dir_empty(&temp);
    fx.assert_clean();
    stats
}

/// [`check_sort`] in both modes and with both in-memory methods.
fn check_all_ways(data: &[u8], rec: usize, keys: &[&str]) {
    for method in ["radix", "merge"] {
        for mode in [Mode::OnePass, Mode::Spilled] {
            check_sort(data, rec, keys, mode, &["--method", method]);
        }
    }
}

// ------------------------------------------------------------------------------------------------
// gensort data, valsort as the independent check

#[test]
fn one_pass_gensort_is_valsort_clean_without_temp_file() {
    let fx = Fixture::new();
    let input = fx.path("in.dat");
    let n = 10_000;
    let sum = gensort(&input, 0, n, false);
    let before = std::fs::read(&input).unwrap();
    let temp = fx.mkdir("temp");
    watch_dir(&temp);
    watch_dir(&fx.tmp());
    ok(fx.cmd().args(["--record-size=100", "--key-bytes=0:10", "-T"]).arg(&temp).args([
        "--stats-json",
        "s.json",
        "-o",
        "out.dat",
        "in.dat",
    ]));
    assert_valsort_clean(&fx.path("out.dat"), n, sum);
    let out = std::fs::read(fx.path("out.dat")).unwrap();
    assert_eq!(xsort_sortbench::checksum_of(&out), sum);
    assert_same_records(&out, &reference_sort(&before, 100, &["0:10"]), 100, "gensort one pass");
    let stats = read_stats(&fx.path("s.json"));
    assert_eq!(stat_u64(&stats, "passes"), 1);
    assert_eq!(stat_u64(&stats, "runs"), 0);
    assert_eq!(stat_u64(&stats, "merge_levels"), 0);
    assert_eq!(phase_bytes(&stats, "temp write"), None, "no temp write in one pass");
    assert_eq!(phase_bytes(&stats, "temp read"), None, "no temp read in one pass");
    // A temp file, even unnamed, would have been opened in one of them.
    assert!(!dir_was_used(&temp), "one-pass sort created a file in -T dir");
    assert!(!dir_was_used(&fx.tmp()), "one-pass sort created a file in TMPDIR");
    assert_dir_empty(&temp);
    assert_eq!(std::fs::read(&input).unwrap(), before, "input modified");
    fx.assert_clean();
}

/// A tiny budget on 3 MB: many runs spread over three -T dirs and a multi-level merge.
fn spilled_gensort(fx: &Fixture, cmd: &mut std::process::Command) {
    let input = fx.path("in.dat");
    let n = 30_000;
    let sum = gensort(&input, 1_000_000, n, false);
    let before = std::fs::read(&input).unwrap();
    let dirs: Vec<_> = ["t1", "t2", "t3"].iter().map(|d| fx.mkdir(d)).collect();
    for d in dirs.iter().chain([&fx.tmp()]) {
        watch_dir(d);
    }
    cmd.args(["--record-size=100", "--key-bytes=0:10", "-S", TINY]);
    for d in &dirs {
        cmd.arg("-T").arg(d);
    }
    ok(cmd.args(["--stats-json", "s.json", "-o", "out.dat", "in.dat"]));
    assert_valsort_clean(&fx.path("out.dat"), n, sum);
    let out = std::fs::read(fx.path("out.dat")).unwrap();
    assert_same_records(&out, &reference_sort(&before, 100, &["0:10"]), 100, "gensort spilled");
    let stats = read_stats(&fx.path("s.json"));
    assert_multilevel(&stats);
    // Transfers this small would pay the device's latency each time: the page cache is used.
    assert_eq!(phase_mode(&stats, "temp write"), "buffered");
    for d in &dirs {
        assert!(dir_was_used(d), "temp dir {} was never used", d.display());
        assert_dir_empty(d);
    }
    assert!(!dir_was_used(&fx.tmp()), "TMPDIR used although -T was given");
    assert_eq!(std::fs::read(&input).unwrap(), before, "input modified");
    fx.assert_clean();
}

#[test]
fn spilled_multilevel_merge_over_several_temp_dirs() {
    let fx = Fixture::new();
    spilled_gensort(&fx, &mut fx.cmd());
}

#[test]
fn spilled_multilevel_merge_with_16_descriptors() {
    let fx = Fixture::new();
    spilled_gensort(&fx, &mut fx.cmd_under_sh("ulimit -n 16"));
}

fn skewed(mode: Mode, method: &str) {
    let fx = Fixture::new();
    let input = fx.path("in.dat");
    let n = 20_000;
    let sum = gensort(&input, 0, n, true);
    let data = std::fs::read(&input).unwrap();
    let stats = check_sort(&data, 100, &["0:10"], mode, &["--method", method]);
    assert_eq!(stat_u64(&stats, "bytes"), n * 100);
    // valsort on the same output, through a second sort to a file we keep here.
    let mut cmd = fx.cmd();
    cmd.args(["--record-size=100", "--key-bytes=0:10", "--method", method, "-o", "out.dat", "in.dat"]);
    if mode == Mode::Spilled {
        cmd.args(["-S", TINY]);
    }
    ok(&mut cmd);
    assert_valsort_clean(&fx.path("out.dat"), n, sum);
    fx.assert_clean();
}

#[test]
fn skewed_keys_one_pass_radix() {
    skewed(Mode::OnePass, "radix");
}

#[test]
fn skewed_keys_one_pass_merge() {
    skewed(Mode::OnePass, "merge");
}

#[test]
fn skewed_keys_spilled_radix() {
    skewed(Mode::Spilled, "radix");
}

#[test]
fn skewed_keys_spilled_merge() {
    skewed(Mode::Spilled, "merge");
}

// ------------------------------------------------------------------------------------------------
// Stability

/// 16-byte records: a 4-byte key from a two-letter alphabet (16 distinct keys), the record's input
/// position in the last 8 bytes.
fn tiny_alphabet_records(n: usize, alphabet: &[u8], seed: u64) -> Vec<u8> {
    let mut d = alphabet_records(n, 16, alphabet, seed);
    stamp_sequence(&mut d, 16, 8, 8);
    d
}

#[test]
fn equal_keys_keep_input_order_radix() {
    check_all_ways(&tiny_alphabet_records(40_000, b"ab", 1), 16, &["0:4"]);
}

#[test]
fn equal_keys_keep_input_order_merge_and_descending() {
    let data = tiny_alphabet_records(40_000, b"ab", 2);
    for mode in [Mode::OnePass, Mode::Spilled] {
        check_sort(&data, 16, &["0:4:r"], mode, &["--method", "merge"]);
        check_sort(&data, 16, &["0:4:r"], mode, &["--method", "radix"]);
    }
}

#[test]
fn all_keys_equal_output_is_input() {
    let data = tiny_alphabet_records(40_000, b"k", 3);
    for method in ["radix", "merge"] {
        for mode in [Mode::OnePass, Mode::Spilled] {
            // Reference and input coincide: all keys are equal, so nothing may move.
            assert_eq!(reference_sort(&data, 16, &["0:4"]), data);
            check_sort(&data, 16, &["0:4"], mode, &["--method", method]);
        }
    }
}

#[test]
fn stability_across_a_multilevel_merge() {
    // Ties between records of different runs, through intermediate merge levels, keep input order.
    let data = tiny_alphabet_records(100_000, b"ab", 27);
    for method in ["radix", "merge"] {
        assert_multilevel(&check_sort(&data, 16, &["0:2"], Mode::Spilled, &["--method", method]));
    }
    let same = tiny_alphabet_records(100_000, b"z", 28);
    assert_multilevel(&check_sort(&same, 16, &["0:4"], Mode::Spilled, &[]));
}

#[test]
fn same_bytes_on_any_thread_count() {
    // Each run is compared with the one stable reference, so all thread counts agree byte for byte.
    let data = tiny_alphabet_records(30_000, b"abc", 4);
    for mode in [Mode::OnePass, Mode::Spilled] {
        for threads in ["1", "2", "3"] {
            check_sort(&data, 16, &["1:2"], mode, &["--parallel", threads]);
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Keys and record shapes

#[test]
fn descending_and_multiple_keys() {
    let mut data = alphabet_records(40_000, 8, b"abc", 5);
    stamp_sequence(&mut data, 8, 6, 2);
    check_all_ways(&data, 8, &["4:2:r", "0:3"]);
}

#[test]
fn whole_record_key() {
    let data = alphabet_records(30_000, 12, b"abcd", 6);
    check_all_ways(&data, 12, &[]);
}

#[test]
fn whole_record_key_gensort() {
    let fx = Fixture::new();
    let input = fx.path("in.dat");
    // Skewed data repeats keys, so the bytes after the key decide.
    gensort(&input, 0, 5_000, true);
    let data = std::fs::read(&input).unwrap();
    for mode in [Mode::OnePass, Mode::Spilled] {
        check_sort(&data, 100, &[], mode, &[]);
    }
}

#[test]
fn one_byte_records() {
    let data = random_bytes(100_000, 7);
    check_all_ways(&data, 1, &[]);
    check_sort(&data, 1, &["0:1:r"], Mode::Spilled, &[]);
}

#[test]
fn seven_byte_records() {
    let mut data = alphabet_records(50_000, 7, b"xyz", 8);
    stamp_sequence(&mut data, 7, 5, 2);
    check_all_ways(&data, 7, &["2:3"]);
    check_all_ways(&data, 7, &["6:1:r", "0:2"]);
}

#[test]
fn page_and_a_byte_records() {
    let rec = 4097;
    let mut data = random_bytes(700 * rec, 9);
    // A key from a small alphabet that straddles the 4 KiB boundary, then the record's position.
    for (i, r) in data.chunks_exact_mut(rec).enumerate() {
        r[4090..4094].copy_from_slice(&[b'a' + (i % 3) as u8, b'q', b'a' + (i % 2) as u8, b'q']);
    }
    check_all_ways(&data, rec, &["4090:7"]);
    check_sort(&data, rec, &[], Mode::Spilled, &[]);
    check_sort(&data, rec, &["4096:1:r", "4090:3"], Mode::Spilled, &["--method", "merge"]);
}

/// 48-byte records whose 30-byte key (bytes 2..32) mostly shares its first 18 bytes, so entries'
/// normalized prefixes tie and the full-key tie-break decides; the position is in bytes 40..48.
fn long_key_records(n: usize, seed: u64) -> Vec<u8> {
    let mut d = alphabet_records(n, 48, b"ab", seed);
    let mut rng = Rng::new(seed ^ 77);
    for r in d.chunks_exact_mut(48) {
        r[2..20].fill(b'm');
        if rng.below(8) == 0 {
            r[11] = b'n';
        }
    }
    stamp_sequence(&mut d, 48, 40, 8);
    d
}

#[test]
fn keys_longer_than_16_bytes() {
    let data = long_key_records(20_000, 10);
    check_all_ways(&data, 48, &["2:30"]);
}

#[test]
fn keys_longer_than_16_bytes_descending_and_multipart() {
    let data = long_key_records(20_000, 11);
    for mode in [Mode::OnePass, Mode::Spilled] {
        check_sort(&data, 48, &["2:30:r"], mode, &[]);
        check_sort(&data, 48, &["0:1", "2:25", "27:5:r"], mode, &["--method", "merge"]);
        check_sort(&data, 48, &["0:1", "2:25", "27:5:r"], mode, &["--method", "radix"]);
    }
}

// ------------------------------------------------------------------------------------------------
// Inputs and outputs

/// Three inputs of 16-byte records with lengths that are not multiples of 4096, keys with many
/// ties across files, each record stamped with its position in the concatenation `a b c`.
fn three_inputs(fx: &Fixture) -> [(std::path::PathBuf, Vec<u8>); 3] {
    let counts = [1001, 2503, 777];
    let total: usize = counts.iter().sum();
    let mut all = alphabet_records(total, 16, b"ab", 12);
    stamp_sequence(&mut all, 16, 8, 8);
    let mut at = 0;
    let mut files = Vec::new();
    for (name, c) in ["a.dat", "b.dat", "c.dat"].iter().zip(counts) {
        let part = all[at * 16..(at + c) * 16].to_vec();
        assert_ne!(part.len() % 4096, 0);
        files.push((fx.write(name, &part), part));
        at += c;
    }
    files.try_into().unwrap()
}

#[test]
fn several_inputs_in_operand_order() {
    let fx = Fixture::new();
    let [a, b, c] = three_inputs(&fx);
    for budget in [None, Some(TINY)] {
        for order in [[&a, &b, &c], [&c, &a, &b], [&b, &b, &a]] {
            let mut cmd = fx.cmd();
            cmd.args(["--record-size=16", "--key-bytes=0:2", "-o", "out.dat"]);
            if let Some(s) = budget {
                cmd.args(["-S", s]);
            }
            ok(cmd.args(order.iter().map(|f| &f.0)));
            let concat: Vec<u8> = order.iter().flat_map(|f| f.1.iter().copied()).collect();
            assert_sorted_file(&fx.path("out.dat"), &concat, 16, &["0:2"]);
        }
    }
    for (p, d) in [a, b, c] {
        assert_eq!(std::fs::read(p).unwrap(), d, "input modified");
    }
    fx.assert_clean();
}

#[test]
fn spilled_inputs_from_several_files_are_stable() {
    // Large enough per file that every file spans several runs.
    let fx = Fixture::new();
    let mut all = alphabet_records(60_000, 16, b"ab", 13);
    stamp_sequence(&mut all, 16, 8, 8);
    let cuts = [0, 17_333, 41_011, 60_000];
    let names: Vec<_> = (0..3).map(|i| fx.write(&format!("p{i}"), &all[cuts[i] * 16..cuts[i + 1] * 16])).collect();
    ok(fx.cmd().args(["--record-size=16", "--key-bytes=0:3", "-S", TINY, "--stats-json", "s.json", "-o", "out"]).args(&names));
    assert!(stat_u64(&read_stats(&fx.path("s.json")), "runs") >= 6);
    assert_sorted_file(&fx.path("out"), &all, 16, &["0:3"]);
    fx.assert_clean();
}

#[test]
fn stdin_without_operand_to_stdout() {
    let fx = Fixture::new();
    let data = tiny_alphabet_records(20_000, b"ab", 14);
    let expected = reference_sort(&data, 16, &["0:4"]);
    for budget in [None, Some(TINY)] {
        let mut cmd = fx.cmd();
        cmd.args(["--record-size=16", "--key-bytes=0:4"]);
        if let Some(s) = budget {
            cmd.args(["-S", s]);
        }
        let out = ok_with_stdin(&mut cmd, Some(&data));
        assert_same_records(&out.stdout, &expected, 16, &format!("stdin to stdout, budget {budget:?}"));
    }
    fx.assert_clean();
}

#[test]
fn dash_operand_and_dash_output() {
    let fx = Fixture::new();
    let data = tiny_alphabet_records(20_000, b"ab", 15);
    let expected = reference_sort(&data, 16, &["0:4"]);
    // '-' as the only operand, to stdout.
    let out = ok_with_stdin(fx.cmd().args(["--record-size=16", "--key-bytes=0:4", "-"]), Some(&data));
    assert_same_records(&out.stdout, &expected, 16, "- to stdout");
    // -o - is standard output too, spilled.
    let out = ok_with_stdin(fx.cmd().args(["--record-size=16", "--key-bytes=0:4", "-S", TINY, "-o", "-", "-"]), Some(&data));
    assert_same_records(&out.stdout, &expected, 16, "- to -o -");
    // stdin to a file.
    ok_with_stdin(fx.cmd().args(["--record-size=16", "--key-bytes=0:4", "-o", "out"]), Some(&data));
    assert_sorted_file(&fx.path("out"), &data, 16, &["0:4"]);
    fx.assert_clean();
}

#[test]
fn stdin_between_files_keeps_operand_order() {
    let fx = Fixture::new();
    let [a, b, c] = three_inputs(&fx);
    for budget in [None, Some(TINY)] {
        let mut cmd = fx.cmd();
        cmd.args(["--record-size=16", "--key-bytes=0:2"]);
        if let Some(s) = budget {
            cmd.args(["-S", s]);
        }
        cmd.arg(&a.0).arg("-").arg(&c.0);
        let out = ok_with_stdin(&mut cmd, Some(&b.1));
        let concat = [a.1.clone(), b.1.clone(), c.1.clone()].concat();
        assert_same_records(&out.stdout, &reference_sort(&concat, 16, &["0:2"]), 16, &format!("a - c, budget {budget:?}"));
    }
    fx.assert_clean();
}

#[test]
fn in_place_sort() {
    let fx = Fixture::new();
    let data = tiny_alphabet_records(30_000, b"abc", 16);
    for budget in [None, Some(TINY)] {
        let f = fx.write("f.dat", &data);
        let mut cmd = fx.cmd();
        cmd.args(["--record-size=16", "--key-bytes=0:4", "-o", "f.dat", "f.dat"]);
        if let Some(s) = budget {
            cmd.args(["-S", s]);
        }
        ok(&mut cmd);
        assert_sorted_file(&f, &data, 16, &["0:4"]);
        fx.assert_clean();
    }
    // The output is one of several inputs: all of it is read before it is replaced.
    let other = tiny_alphabet_records(5_000, b"abc", 17);
    let f = fx.write("f.dat", &data);
    let g = fx.write("g.dat", &other);
    ok(fx.cmd().args(["--record-size=16", "--key-bytes=0:4", "-S", TINY, "-o", "f.dat", "g.dat", "f.dat"]));
    assert_sorted_file(&f, &[other.clone(), data.clone()].concat(), 16, &["0:4"]);
    assert_eq!(std::fs::read(&g).unwrap(), other, "the other input was modified");
    let names: Vec<_> = std::fs::read_dir(fx.root()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    let mut names = names;
    names.sort();
    assert_eq!(names, ["f.dat", "g.dat", "tmp"], "unexpected files beside the output");
    fx.assert_clean();
}

#[test]
fn output_replaces_existing_target_and_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    let data = tiny_alphabet_records(2_000, b"ab", 18);
    fx.write("in", &data);
    let target = fx.write("out", b"old contents");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
    ok(fx.cmd().args(["--record-size=16", "--key-bytes=0:4", "-o", "out", "in"]));
    assert_sorted_file(&target, &data, 16, &["0:4"]);
    assert_eq!(std::fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o640, "mode of the replaced target");
    fx.assert_clean();
}

#[test]
fn empty_input_gives_empty_output() {
    let fx = Fixture::new();
    fx.write("empty", b"");
    fx.write("empty2", b"");
    // A file.
    fx.write("out", b"previous contents");
    let out = ok(fx.cmd().args(["--record-size=100", "--key-bytes=0:10", "--stats-json", "s.json", "-o", "out", "empty"]));
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), b"", "target must be replaced by the empty result");
    let stats = read_stats(&fx.path("s.json"));
    assert_eq!(stat_u64(&stats, "records"), 0);
    assert_eq!(stat_u64(&stats, "bytes"), 0);
    // Several empty files, spilled budget.
    ok(fx.cmd().args(["--record-size=7", "-S", TINY, "-o", "out2", "empty", "empty2"]));
    assert_eq!(std::fs::read(fx.path("out2")).unwrap(), b"");
    // Standard input to standard output.
    let out = ok_with_stdin(fx.cmd().args(["--record-size=16"]), Some(b""));
    assert!(out.stdout.is_empty());
    let out = ok(fx.cmd().args(["--record-size=4097", "-", "empty"]));
    assert!(out.stdout.is_empty());
    fx.assert_clean();
}

#[test]
fn empty_file_among_other_inputs() {
    let fx = Fixture::new();
    let a = tiny_alphabet_records(3_000, b"ab", 20);
    let b = tiny_alphabet_records(2_000, b"ab", 21);
    fx.write("a", &a);
    fx.write("b", &b);
    fx.write("empty", b"");
    for budget in ["1M", TINY] {
        ok(fx.cmd().args(["--record-size=16", "--key-bytes=0:4", "-S", budget, "-o", "out", "a", "empty", "b", "empty"]));
        assert_sorted_file(&fx.path("out"), &[a.clone(), b.clone()].concat(), 16, &["0:4"]);
    }
    fx.assert_clean();
}

#[test]
fn many_inputs_with_16_descriptors() {
    // 40 input files under a 16-descriptor limit: inputs must not all be held open at once.
    let fx = Fixture::new();
    let mut all = alphabet_records(40 * 100, 16, b"ab", 22);
    stamp_sequence(&mut all, 16, 8, 8);
    let names: Vec<String> = (0..40).map(|i| format!("in{i:02}")).collect();
    for (i, n) in names.iter().enumerate() {
        fx.write(n, &all[i * 1600..(i + 1) * 1600]);
    }
    for budget in ["1M", TINY] {
        ok(fx.cmd_under_sh("ulimit -n 16").args(["--record-size=16", "--key-bytes=0:3", "-S", budget, "-o", "out"]).args(&names));
        assert_sorted_file(&fx.path("out"), &all, 16, &["0:3"]);
    }
    fx.assert_clean();
}

#[test]
fn fifo_input_is_read_to_its_end() {
    use std::os::unix::fs::OpenOptionsExt;
    let fx = Fixture::new();
    let data = tiny_alphabet_records(30_000, b"ab", 29);
    let fifo = fx.path("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for budget in ["1M", TINY] {
        let mut child = fx
            .cmd()
            .args(["--record-size=16", "--key-bytes=0:4", "-S", budget, "-o", "out", "fifo"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + COMMAND_TIMEOUT;
        let check = |child: &mut std::process::Child| {
            assert!(child.try_wait().unwrap().is_none(), "xsort exited before its FIFO input was written");
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("timed out writing the FIFO");
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        // Non-blocking write end: ENXIO until xsort opens the FIFO for reading.
        let mut w = loop {
            match std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(&fifo) {
                Ok(f) => break f,
                Err(e) if e.raw_os_error() == Some(libc::ENXIO) => check(&mut child),
                Err(e) => panic!("open FIFO: {e}"),
            }
        };
        let mut at = 0;
        while at < data.len() {
            match std::io::Write::write(&mut w, &data[at..]) {
                Ok(n) => at += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => check(&mut child),
                Err(e) => panic!("write FIFO: {e}"),
            }
        }
        drop(w); // EOF
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            assert!(std::time::Instant::now() < deadline, "xsort did not finish after EOF");
            std::thread::sleep(std::time::Duration::from_millis(2));
        };
        assert!(status.success(), "{status}");
        assert_sorted_file(&fx.path("out"), &data, 16, &["0:4"]);
    }
    std::fs::remove_file(&fifo).unwrap();
    fx.assert_clean();
}

#[test]
fn output_to_dev_null() {
    // Special targets are written in place, not replaced.
    let fx = Fixture::new();
    fx.write("in", &tiny_alphabet_records(20_000, b"ab", 23));
    for budget in ["1M", TINY] {
        ok(fx.cmd().args(["--record-size=16", "--key-bytes=0:4", "-S", budget, "-o", "/dev/null", "in"]));
    }
    fx.assert_clean();
}

/// `-o /dev/stdout` with standard output a pipe (a script's idiom): the link leads to a pipe with
/// no name, written in place; records and lines alike.
#[test]
fn output_to_dev_stdout_on_a_pipe() {
    let fx = Fixture::new();
    let data = tiny_alphabet_records(2_000, b"ab", 25);
    fx.write("in", &data);
    let out = ok(fx.cmd().args(["--record-size=16", "--key-bytes=0:4", "-o", "/dev/stdout", "in"]));
    fx.write("got", &out.stdout);
    assert_sorted_file(&fx.path("got"), &data, 16, &["0:4"]);
    fx.write("lines", b"b\nc\na\n");
    let out = ok(fx.cmd().args(["-o", "/dev/stdout", "lines"]));
    assert_eq!(out.stdout, b"a\nb\nc\n");
    fx.assert_clean();
}

#[test]
fn output_to_a_fifo() {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let fx = Fixture::new();
    let data = tiny_alphabet_records(20_000, b"ab", 24);
    fx.write("in", &data);
    let fifo = fx.path("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for budget in ["1M", TINY] {
        // Opened for reading and writing, non-blocking: xsort's open never blocks and the test never
        // blocks on a read.
        let mut r = std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
        let mut child = fx
            .cmd()
            .args(["--record-size=16", "--key-bytes=0:4", "-S", budget, "-o", "fifo", "in"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut got = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        let deadline = std::time::Instant::now() + COMMAND_TIMEOUT;
        let status = loop {
            match r.read(&mut buf) {
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if let Some(st) = child.try_wait().unwrap() {
                        // Drain what is left after the exit.
                        while let Ok(n) = r.read(&mut buf) {
                            got.extend_from_slice(&buf[..n]);
                        }
                        break st;
                    }
                    if std::time::Instant::now() > deadline {
                        let _ = child.kill();
                        let _ = child.wait();
                        panic!("xsort writing to a FIFO did not finish");
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Err(e) => panic!("read FIFO: {e}"),
            }
        };
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert!(status.success(), "xsort -o FIFO failed ({status}): {err}");
        assert_same_records(&got, &reference_sort(&data, 16, &["0:4"]), 16, &format!("FIFO output, budget {budget}"));
    }
    std::fs::remove_file(&fifo).unwrap();
    fx.assert_clean();
}

#[test]
fn progress_flags() {
    let data = long_key_records(10_000, 25);
    for mode in [Mode::OnePass, Mode::Spilled] {
        check_sort(&data, 48, &["2:30"], mode, &["--progress"]);
        check_sort(&data, 48, &["2:30"], mode, &["--no-progress"]);
    }
    let fx = Fixture::new();
    fx.write("in", &data);
    // A usage error found by the flag parser: exit 2, naming the flags (clap's own format).
    let out = run(fx.cmd().args(["--record-size=48", "--progress", "--no-progress", "-o", "out", "in"]));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--no-progress"));
    assert!(!fx.path("out").exists());
    fx.assert_clean();
}

#[test]
fn keys_at_the_record_boundaries() {
    let mut data = alphabet_records(20_000, 20, b"ab", 26);
    stamp_sequence(&mut data, 20, 0, 2);
    for keys in [&["18:2"][..], &["0:20"], &["19:1:r", "0:1"], &["0:20:r"]] {
        check_sort(&data, 20, keys, Mode::OnePass, &[]);
        check_sort(&data, 20, keys, Mode::Spilled, &[]);
    }
}

#[test]
fn help_and_version() {
    let fx = Fixture::new();
    let out = ok(fx.cmd().arg("--help"));
    let help = String::from_utf8(out.stdout).unwrap();
    for flag in ["--record-size", "--key-bytes", "--memory", "--spec", "--stats-json", "--temporary-directory"] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }
    let out = ok(fx.cmd().arg("--version"));
    assert!(String::from_utf8(out.stdout).unwrap().starts_with("xsort "));
    fx.assert_clean();
}

#[test]
fn io_flags_do_not_change_the_result() {
    let data = long_key_records(10_000, 19);
    for mode in [Mode::OnePass, Mode::Spilled] {
        check_sort(&data, 48, &["2:30"], mode, &["--buffered", "--sync", "--touch", "-s"]);
        check_sort(&data, 48, &["2:30"], mode, &["--transfer-size", "64K", "--parallel", "1"]);
        check_sort(&data, 48, &["2:30"], mode, &["--transfer-size", "4K", "--buffered"]);
    }
}

#[test]
fn keys_longer_than_the_entry_prefix_stay_in_order_across_pieces() {
    // 300,000 records of 32 bytes (9.6 MB: a 13-byte prefix beside 24 offset bits) keyed on 20
    // bytes: 12 shared bytes, then '0' or '1', which differ in the prefix's last bit only. The
    // sorted pieces must not be split on the offset bits below it, or ties broken on bytes 13..20
    // would be ordered only within each piece.
    let fx = Fixture::new();
    let mut rng = Rng::new(17);
    let mut data = Vec::with_capacity(300_000 * 32);
    for _ in 0..300_000 {
        data.extend_from_slice(b"AAAAAAAAAAAA");
        data.push(b'0' + rng.below(2) as u8);
        data.extend((0..7).map(|_| b'a' + rng.below(26) as u8));
        data.extend_from_slice(b"...........\n");
    }
    fx.write("in", &data);
    ok(fx.cmd().args(["--record-size=32", "--key-bytes=0:20", "-o", "out", "in"]));
    assert_sorted_file(&fx.path("out"), &data, 32, &["0:20"]);
    fx.assert_clean();
}
