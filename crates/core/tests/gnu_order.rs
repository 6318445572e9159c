//! Differential test of `xsort_core::order` against GNU sort 9.1 (`LC_ALL=C sort`), the oracle.
//!
//! Seeded random files (blank- or separator-separated fields holding numbers in every notation GNU
//! parses, human sizes, month names, version strings, words, empty fields, duplicates, blanks,
//! control and high bytes) are sorted by GNU sort with random option sets (global flags, 0-3 `-k`
//! or obsolescent `+POS1 -POS2` keys with their own flags and `.C` positions, `-t`, `-s`, `-u`,
//! `-r`, `-z`, `--debug`) and by a
//! stable `sort_by(LineOrder::compare)`; the bytes must be identical. Invalid key specs and
//! incompatible flags must give GNU's message. `-R` is not compared with GNU (its hash is not
//! GNU's): equal keys must be adjacent and the order reproducible. The prefix invariants are checked
//! on every pair of lines. `-g` keys on files with several NaN lines are not compared (GNU 9.1 reads
//! uninitialized padding bytes there, see `nan_unique_ub`).
//!
//! `XSORT_GNU_DIFF_CASES=N` runs N cases (default 1200), `XSORT_GNU_DIFF_SEED=S` changes the seed.
//! The tests need GNU sort 9.1 as `sort` (the gate of `xsort_testkit::gnu_sort`): without it, they
//! say NOT RUN and why outside CI, and fail under CI.

use std::cmp::Ordering;
use std::io::Write;
use std::process::{Command, Stdio};

use xsort_core::order::{KeyField, LineOrder, LineOrderConfig, OrderFlags};
use xsort_core::SortError;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

fn digits(rng: &mut Rng, max: usize) -> String {
    let n = 1 + rng.below(max);
    (0..n).map(|_| (b'0' + rng.below(10) as u8) as char).collect()
}

/// One random token of a field.
fn token(rng: &mut Rng, zero_terminated: bool) -> Vec<u8> {
    let s: String = match rng.below(14) {
        0 | 1 => {
            // decimal numbers: signs, leading zeros, fractions
            let mut s = String::new();
            match rng.below(8) {
                0 | 1 => s.push('-'),
                2 => s.push('+'),
                _ => {}
            }
            if rng.chance(25) {
                s.push_str(&"0".repeat(1 + rng.below(3)));
            }
            if !rng.chance(15) {
                let max = if rng.chance(10) { 30 } else { 4 };
                s.push_str(&digits(rng, max));
            }
            if rng.chance(40) {
                s.push('.');
                if !rng.chance(20) {
                    s.push_str(&digits(rng, 5));
                }
                if rng.chance(20) {
                    s.push_str("00");
                }
            }
            s
        }
        2 => {
            // exponents
            let mut s = rng.pick(&["", "-", "+"]).to_string();
            s.push_str(&digits(rng, 3));
            if rng.chance(50) {
                s.push('.');
                s.push_str(&digits(rng, 3));
            }
            s.push_str(rng.pick(&["e", "E", "e-", "e+", "E-"]));
            if !rng.chance(10) {
                s.push_str(&digits(rng, 4));
            }
            s
        }
        3 => {
            // hex floats
            let hex = |rng: &mut Rng, n: usize| -> String {
                (0..1 + rng.below(n)).map(|_| rng.pick(&['0', '1', '8', 'a', 'F', 'c', '3'])).collect()
            };
            let mut s = rng.pick(&["", "-", "+"]).to_string();
            s.push_str(rng.pick(&["0x", "0X"]));
            s.push_str(&hex(rng, 4));
            if rng.chance(50) {
                s.push('.');
                s.push_str(&hex(rng, 3));
            }
            if rng.chance(60) {
                s.push_str(rng.pick(&["p", "P", "p-", "p+"]));
                s.push_str(&digits(rng, 2));
            }
            s
        }
        4 => rng
            .pick(&[
                "inf",
                "-inf",
                "Infinity",
                "+INF",
                "nan",
                "-nan",
                "NaN(123)",
                "nanx",
                "-NAN",
                "infinit",
                "0",
                "-0",
                "00",
                "-0.0",
                ".",
                "-",
                "-.",
                "+",
                "1e5000",
                "-1e5000",
                "1e-5000",
                "0x",
                "1e",
                "4.9e-4951",
                "1.18973e4932",
            ])
            .to_string(),
        5 | 6 => {
            // human sizes
            let mut s = rng.pick(&["", "", "-", "0"]).to_string();
            s.push_str(&digits(rng, 3));
            if rng.chance(30) {
                s.push('.');
                s.push_str(&digits(rng, 2));
            }
            s.push_str(rng.pick(&["", "K", "M", "G", "T", "P", "E", "Z", "Y", "k", "m", "R", "Q", "KiB", "x"]));
            s
        }
        7 => {
            // months
            let m = rng.pick(&[
                "jan", "FEB", "Mar", "apr", "MAY", "jun", "Jul", "aug", "sEp", "oct", "NOV", "dec", "ja", "xyz", "January", "DECEMBER",
                "mayo",
            ]);
            let mut s = String::new();
            if rng.chance(20) {
                s.push(' ');
            }
            s.push_str(m);
            s
        }
        8 | 9 => {
            // versions
            let mut s = String::new();
            if rng.chance(10) {
                s.push('.');
            }
            if rng.chance(30) {
                s.push_str(rng.pick(&["foo-", "a", "lib", "x_", "Z", "~"]));
            }
            let parts = 1 + rng.below(4);
            for i in 0..parts {
                if i > 0 {
                    s.push_str(rng.pick(&[".", ".", "-", "_", "~", "+"]));
                }
                if rng.chance(15) {
                    s.push('0');
                }
                s.push_str(&digits(rng, 3));
                if rng.chance(25) {
                    s.push_str(rng.pick(&["a", "b", "rc", "~rc1", "~", "alpha", "Z"]));
                }
            }
            if rng.chance(25) {
                s.push_str(rng.pick(&[".tar.gz", ".txt", ".a1", ".~x", ".1", "~"]));
            }
            s
        }
        10 => String::new(),
        11 | 12 => {
            // words
            let n = 1 + rng.below(6);
            (0..n)
                .map(|_| rng.pick(&['a', 'b', 'B', 'z', 'A', 'Z', 'm', '_', '-', '.', ',', ':', '!', '0', '9', 'e', 'x', '~', '/']))
                .collect()
        }
        _ => {
            // odd bytes
            let mut v: Vec<u8> = Vec::new();
            for _ in 0..1 + rng.below(4) {
                let c = rng.pick(&[b'a', b'A', 0x01, 0x7f, 0xe9, 0xff, 0x80, b'\r', 0x0b, 0x0c, b'1', b'-', b' ', b'\t', b'.']);
                v.push(c);
            }
            if rng.chance(10) {
                v.push(if zero_terminated { b'\n' } else { 0 });
            }
            return v;
        }
    };
    s.into_bytes()
}

/// One random line of fields.
fn line(rng: &mut Rng, sep: Option<u8>, zero_terminated: bool) -> Vec<u8> {
    let mut v = Vec::new();
    if rng.chance(8) {
        return v;
    }
    if sep.is_none() || rng.chance(20) {
        for _ in 0..rng.below(3) {
            v.push(rng.pick(b"  \t"));
        }
    }
    let nfields = 1 + rng.below(4);
    for i in 0..nfields {
        if i > 0 {
            match sep {
                Some(t) => {
                    v.push(t);
                    if rng.chance(10) {
                        v.push(t);
                    }
                }
                None => {
                    let blanks: &[u8] = rng.pick(&[&b" "[..], b" ", b"\t", b"  ", b" \t", b"\t "]);
                    v.extend_from_slice(blanks);
                    if zero_terminated && rng.chance(10) {
                        v.push(b'\n');
                    }
                }
            }
            if sep.is_some() && rng.chance(20) {
                v.push(b' ');
            }
        }
        v.extend(token(rng, zero_terminated));
    }
    if rng.chance(5) {
        v.push(b' ');
    }
    v
}

/// A random set of key flags, mostly compatible.
fn flags(rng: &mut Rng, allow_random: bool) -> String {
    let mut s = String::new();
    if rng.chance(25) {
        s.push('b');
    }
    let main: &[&str] = if allow_random {
        &["", "", "n", "g", "h", "M", "V", "d", "i", "di", "R", "dV", "Vi"]
    } else {
        &["", "", "n", "g", "h", "M", "V", "d", "i", "di", "dV", "Vi"]
    };
    s.push_str(rng.pick(main));
    if rng.chance(3) {
        s.push_str(rng.pick(&["n", "g", "M", "d"]));
    }
    if rng.chance(25) {
        s.push('f');
    }
    if rng.chance(25) {
        s.push('r');
    }
    s
}

#[derive(Clone, Debug)]
struct Case {
    args: Vec<String>,
    keys: Vec<String>,
    global: String,
    sep: Option<u8>,
    stable: bool,
    unique: bool,
    zero: bool,
    debug: bool,
    random: bool,
    /// Compare even with several NaN lines (they must have distinct NaN bit patterns).
    trust_nans: bool,
    lines: Vec<Vec<u8>>,
}

fn gen_case(rng: &mut Rng) -> Case {
    let allow_random = rng.chance(8);
    let sep = if rng.chance(35) { Some(rng.pick(b",,: .-\t")) } else { None };
    let zero = rng.chance(8);
    let mut keys = Vec::new();
    for _ in 0..rng.below(4) {
        let spec = if rng.chance(6) {
            // obsolescent +POS1 [-POS2]
            let mut s = format!("obs:+{}", rng.below(4));
            if rng.chance(30) {
                s.push_str(&format!(".{}", rng.below(4)));
            }
            if rng.chance(30) {
                s.push_str(&flags(rng, allow_random));
            }
            if rng.chance(60) {
                s.push_str(&format!(" -{}", rng.below(5)));
                if rng.chance(30) {
                    s.push_str(&format!(".{}", rng.below(4)));
                }
                if rng.chance(20) {
                    s.push_str(&flags(rng, allow_random));
                }
            }
            s
        } else if rng.chance(2) {
            rng.pick(&["0", "", "1.0", "1.x", "1x", "1,0", "1,x", "1,2x", "-1", "1.1.1", "a", "+2", " 3", "1,2.0b"]).to_string()
        } else {
            let mut s = format!("{}", 1 + rng.below(4));
            if rng.chance(35) {
                s.push_str(&format!(".{}", 1 + rng.below(5)));
            }
            if rng.chance(55) {
                s.push_str(&flags(rng, allow_random));
            }
            if rng.chance(60) {
                s.push_str(&format!(",{}", 1 + rng.below(4)));
                if rng.chance(35) {
                    s.push_str(&format!(".{}", rng.below(6)));
                }
                if rng.chance(30) {
                    s.push_str(&flags(rng, allow_random));
                }
            }
            s
        };
        keys.push(spec);
    }
    let global = if rng.chance(55) { flags(rng, allow_random) } else { String::new() };
    let stable = rng.chance(25);
    let unique = rng.chance(20);
    let debug = rng.chance(20);
    let mut args = Vec::new();
    for c in global.chars() {
        args.push(format!("-{c}"));
    }
    for k in &keys {
        if let Some(obs) = k.strip_prefix("obs:") {
            args.extend(obs.split(' ').map(String::from));
        } else {
            args.push("-k".into());
            args.push(k.clone());
        }
    }
    if let Some(t) = sep {
        args.push(format!("-t{}", t as char));
    }
    for (on, a) in [(stable, "-s"), (unique, "-u"), (zero, "-z"), (debug, "--debug")] {
        if on {
            args.push(a.into());
        }
    }
    let max_lines = if rng.chance(20) { 60 } else { 25 };
    let nlines = 1 + rng.below(max_lines);
    let mut lines: Vec<Vec<u8>> = Vec::new();
    for _ in 0..nlines {
        if !lines.is_empty() && rng.chance(20) {
            let l = lines[rng.below(lines.len())].clone();
            lines.push(l);
        } else {
            lines.push(line(rng, sep, zero));
        }
    }
    let random = allow_random && (global.contains('R') || keys.iter().any(|k| k.contains('R')));
    Case { args, keys, global, sep, stable, unique, zero, debug, random, trust_nans: false, lines }
}

/// Our LineOrder for a case, or GNU's error message.
fn build(case: &Case, seed: &[u8]) -> Result<LineOrder, String> {
    let mut keys = Vec::new();
    for k in &case.keys {
        if let Some(obs) = k.strip_prefix("obs:") {
            let mut parts = obs.split(' ');
            let start = &parts.next().unwrap()[1..];
            let end = parts.next().map(|e| &e[1..]);
            keys.push(KeyField::parse_obsolete(start, end).map_err(msg)?.expect("valid +POS"));
        } else {
            keys.push(KeyField::parse(k).map_err(msg)?);
        }
    }
    let mut global = OrderFlags::default();
    for c in case.global.chars() {
        assert!(global.set_global(c));
    }
    LineOrder::new(LineOrderConfig {
        keys,
        global,
        separator: case.sep,
        stable: case.stable,
        unique: case.unique,
        random_seed: seed.to_vec(),
        ..Default::default()
    })
    .map_err(msg)
}

fn msg(e: SortError) -> String {
    match e {
        SortError::BadOption(m) => m,
        other => panic!("unexpected error kind {other:?}"),
    }
}

/// Sorts like `sort` with this order: a stable sort, then -u's "first of each equal run".
fn our_sort<'a>(order: &LineOrder, lines: &'a [Vec<u8>], unique: bool) -> Vec<&'a [u8]> {
    let mut v: Vec<&[u8]> = lines.iter().map(|l| &l[..]).collect();
    v.sort_by(|a, b| order.compare(a, b));
    if unique {
        let mut out: Vec<&[u8]> = Vec::new();
        for l in v {
            let dup = matches!(out.last(), Some(last) if order.compare(last, l) == Ordering::Equal);
            if !dup {
                out.push(l);
            }
        }
        v = out;
    }
    v
}

struct GnuOut {
    status: i32,
    stdout: Vec<u8>,
    stderr: String,
}

fn run_gnu(case: &Case) -> GnuOut {
    let term = if case.zero { 0 } else { b'\n' };
    let mut input = Vec::new();
    for l in &case.lines {
        input.extend_from_slice(l);
        input.push(term);
    }
    let mut child = Command::new("sort")
        .args(&case.args)
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sort");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("sort output");
    writer.join().unwrap();
    GnuOut { status: out.status.code().unwrap_or(-1), stdout: out.stdout, stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
}

/// What a passing case exercised.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Same output as GNU sort.
    Sorted,
    /// Same error message as GNU sort.
    Error,
    /// -R: invariants only.
    Random,
    /// Not compared (see `nan_unique_ub`).
    Skipped,
}

/// Checks one case; Err describes the mismatch.
fn check(case: &Case) -> Result<Outcome, String> {
    let seed = b"gnu_order test seed";
    let built = build(case, seed);
    if case.random {
        return match built {
            Ok(order) => check_random(case, &order, seed).map(|_| Outcome::Random),
            Err(_) => Ok(Outcome::Skipped),
        };
    }
    if !case.trust_nans && nan_unique_ub(case) {
        return Ok(Outcome::Skipped);
    }
    let gnu = run_gnu(case);
    let order = match built {
        Err(m) => {
            let want = format!("sort: {m}\n");
            return if gnu.status == 2 && gnu.stderr == want {
                Ok(Outcome::Error)
            } else {
                Err(format!("we fail with {want:?}; GNU exits {} with {:?}", gnu.status, gnu.stderr))
            };
        }
        Ok(o) => o,
    };
    if gnu.status != 0 {
        return Err(format!("GNU fails ({}) with {:?}; we accept", gnu.status, gnu.stderr));
    }
    let sorted = our_sort(&order, &case.lines, case.unique);
    let mut ours = Vec::new();
    let term = if case.zero { 0 } else { b'\n' };
    for l in &sorted {
        if case.debug {
            order.debug_annotate(l, &mut ours);
        } else {
            ours.extend_from_slice(l);
            ours.push(term);
        }
    }
    if ours != gnu.stdout {
        return Err(format!(
            "output differs\n--- GNU:\n{}\n--- ours:\n{}",
            String::from_utf8_lossy(&gnu.stdout).escape_debug(),
            String::from_utf8_lossy(&ours).escape_debug()
        ));
    }
    if case.debug {
        let want: String = order.debug_warnings().iter().map(|w| format!("sort: {w}\n")).collect();
        if want != gnu.stderr {
            return Err(format!("debug warnings differ\n--- GNU:\n{}--- ours:\n{}", gnu.stderr, want));
        }
    }
    check_invariants(&order, &case.lines).map(|_| Outcome::Sorted)
}

/// GNU 9.1 compares two NaN -g keys by memcmp of whole `long double`s, padding bytes included
/// (undefined behaviour: on x86, 6 of the 16 bytes are stack garbage). So NaN keys of equal value
/// compare unequal in an unpredictable direction: -u keeps such lines, and their order (with -s,
/// or by the last resort) can differ from ours, which takes them as equal. Cases with -g keys and
/// two or more lines holding a NaN are therefore not compared.
fn nan_unique_ub(case: &Case) -> bool {
    let g = case.global.contains('g') || case.keys.iter().any(|k| k.contains('g'));
    let nan_lines = case.lines.iter().filter(|l| l.to_ascii_lowercase().windows(3).any(|w| w == b"nan")).count();
    g && nan_lines >= 2
}

/// Prefix invariants and antisymmetry on every pair.
fn check_invariants(order: &LineOrder, lines: &[Vec<u8>]) -> Result<(), String> {
    let prefixes: Vec<u128> = lines.iter().map(|l| order.prefix(l)).collect();
    for (i, a) in lines.iter().enumerate() {
        if prefixes[i] & 0xffff_ffff != 0 {
            return Err(format!("prefix uses the low 32 bits: {:?}", String::from_utf8_lossy(a)));
        }
        for (j, b) in lines.iter().enumerate() {
            let c = order.compare(a, b);
            if c != order.compare(b, a).reverse() {
                return Err(format!("compare not antisymmetric: {:?} {:?}", String::from_utf8_lossy(a), String::from_utf8_lossy(b)));
            }
            let (pa, pb) = (prefixes[i], prefixes[j]);
            if (pa < pb && c != Ordering::Less) || (c == Ordering::Equal && pa != pb) {
                return Err(format!(
                    "prefix invariant broken: {:?} {pa:032x} vs {:?} {pb:032x}: compare {c:?}",
                    String::from_utf8_lossy(a),
                    String::from_utf8_lossy(b)
                ));
            }
        }
    }
    Ok(())
}

/// -R: reproducible, a valid total order (equal keys adjacent), prefix invariants.
fn check_random(case: &Case, order: &LineOrder, seed: &[u8]) -> Result<(), String> {
    let first = our_sort(order, &case.lines, case.unique);
    let again = build(case, seed).unwrap();
    let second = our_sort(&again, &case.lines, case.unique);
    if first != second {
        return Err("-R order not reproducible with the same seed".into());
    }
    for i in 0..first.len() {
        for j in i + 1..first.len() {
            if order.compare(first[i], first[j]) == Ordering::Greater {
                return Err("-R sorted output not ordered".into());
            }
            if order.compare(first[i], first[j]) == Ordering::Equal && (i..j).any(|k| order.compare(first[i], first[k]) != Ordering::Equal)
            {
                return Err("-R equal keys not adjacent".into());
            }
        }
    }
    check_invariants(order, &case.lines)
}

/// Removes lines (and then bytes) while the case still fails.
fn minimize(mut case: Case) -> Case {
    let mut i = 0;
    while i < case.lines.len() {
        let mut smaller = case.clone();
        smaller.lines.remove(i);
        if !smaller.lines.is_empty() && check(&smaller).is_err() {
            case = smaller;
        } else {
            i += 1;
        }
    }
    for li in 0..case.lines.len() {
        let mut bi = 0;
        while bi < case.lines[li].len() {
            let mut smaller = case.clone();
            smaller.lines[li].remove(bi);
            if check(&smaller).is_err() {
                case = smaller;
            } else {
                bi += 1;
            }
        }
    }
    case
}

#[test]
fn matches_gnu_sort() {
    if !xsort_testkit::gnu_sort() {
        return;
    }
    let cases = xsort_testkit::env_number("XSORT_GNU_DIFF_CASES").map_or(1200, |n| n as usize);
    let seed = xsort_testkit::env_number("XSORT_GNU_DIFF_SEED").unwrap_or(20240601);
    let mut rng = Rng(seed);
    let mut failures = Vec::new();
    let mut counts = [0usize; 4];
    for n in 0..cases {
        let case = gen_case(&mut rng);
        let result = check(&case);
        if let Ok(outcome) = result {
            counts[outcome as usize] += 1;
        }
        if let Err(e) = result {
            let small = minimize(case.clone());
            let err = check(&small).err().unwrap_or(e);
            let lines: Vec<String> = small.lines.iter().map(|l| format!("{:?}", String::from_utf8_lossy(l))).collect();
            failures.push(format!(
                "case {n}: LC_ALL=C sort {}\n  minimized input lines: [{}]\n  {err}",
                small.args.iter().map(|a| format!("{a:?}")).collect::<Vec<_>>().join(" "),
                lines.join(", ")
            ));
            if failures.len() >= 5 {
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{} failing case(s):\n{}", failures.len(), failures.join("\n\n"));
    eprintln!(
        "gnu_order: {cases} cases: {} sorted identically to GNU sort, {} with GNU's error message, {} -R checked, {} skipped",
        counts[0], counts[1], counts[2], counts[3]
    );
}

#[test]
fn special_files_match_gnu_sort() {
    if !xsort_testkit::gnu_sort() {
        return;
    }
    let lines: Vec<Vec<u8>> = [
        "-nan",
        "nan",
        "NaN(1)",
        "-inf",
        "inf",
        "0",
        "-0",
        "+0",
        "0x1p-16445",
        "1e-4951",
        "0.1",
        "0x1.999999999999999ap-4",
        "1",
        "1.0000000000000000001",
        "1.00000000000000000001",
        "abc",
        "",
        " 5",
        "\x0b5",
        "\r5",
        "1e4932",
        "1.18973149535723176502e+4932",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    for args in [&["-g"][..], &["-g", "-s"], &["-gr"], &["-n"], &["-h"], &["-V"], &["-M"], &["-d"], &["-i", "-f"]] {
        let case = Case {
            args: args.iter().map(|s| s.to_string()).collect(),
            keys: vec![],
            global: args.iter().flat_map(|a| a.trim_start_matches('-').chars()).filter(|&c| c != 's').collect(),
            sep: None,
            stable: args.contains(&"-s"),
            unique: false,
            zero: false,
            debug: false,
            random: false,
            trust_nans: true,
            lines: lines.clone(),
        };
        match check(&case) {
            Ok(outcome) => assert!(outcome == Outcome::Sorted, "sort {args:?}: not compared"),
            Err(e) => panic!("sort {args:?}: {e}"),
        }
    }
}
