//! Nsort's delimited records through the real binary: `--spec '-format=delimiter:C
//! -field=...,delimiter:C -key=...'` sorts as `LC_ALL=C sort -s -t SEP -k ...` does, in one pass
//! and spilled, with the spec's files, statistics and `-noduplicates`; statements that cannot map
//! onto GNU fields fail with one line quoting the statement.

use crate::common::*;
use std::process::Command;

/// Random CSV records: `word,number,word,free text` with many ties (small alphabets), signed and
/// fractional numbers, blanks and a few short records (missing fields).
fn random_csv(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for _ in 0..n {
        let word = |rng: &mut Rng, len: usize| -> String { (0..rng.below(len)).map(|_| b"abAB z"[rng.below(6)] as char).collect() };
        let a = word(&mut rng, 4);
        let num = match rng.below(5) {
            0 => format!("-{}", rng.below(1000)),
            1 => format!("{}.{}", rng.below(100), rng.below(100)),
            2 => format!(" {}", rng.below(50)),
            3 => "x".to_string(),
            _ => rng.below(1000).to_string(),
        };
        let c = word(&mut rng, 3);
        let rest = format!("{} {},{}", word(&mut rng, 5), rng.below(10), word(&mut rng, 2));
        let line = match rng.below(20) {
            0 => a,
            1 => format!("{a},{num}"),
            _ => format!("{a},{num},{c},{rest}"),
        };
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out
}

/// GNU sort's output for `args` over `files`, in the C locale.
fn gnu(fx: &Fixture, args: &[&str]) -> Vec<u8> {
    let mut c = Command::new("sort");
    c.env("LC_ALL", "C").current_dir(fx.root()).args(args);
    let out = run(&mut c);
    assert!(out.status.success(), "GNU sort failed: {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// The fields of [`random_csv`], comma-delimited, the last one running to the end of the record.
const CSV_FIELDS: &str = "-format=delimiter:'\\n' -field=name:a,delimiter:',' \
    -field=name:num,delimiter:',',decimal -field=name:c,delim=',' -field=name:rest,delimiter:newline";

/// Keys of the spec next to GNU sort's options for the same order.
const CASES: &[(&str, &[&str])] = &[
    ("", &["-s"]),
    ("-key=a", &["-s", "-t,", "-k1,1"]),
    ("-key=num", &["-s", "-t,", "-k2,2n"]),
    ("-key=num,descending -key=a", &["-s", "-t,", "-k2,2nr", "-k1,1"]),
    ("-key=c,desc -key=num", &["-s", "-t,", "-k3,3r", "-k2,2n"]),
    ("-key=rest -key=a,descending", &["-s", "-t,", "-k4", "-k1,1r"]),
    ("-key=a -noduplicates", &["-s", "-u", "-t,", "-k1,1"]),
    ("-key=num,descending -nodup", &["-s", "-u", "-t,", "-k2,2nr"]),
];

#[test]
fn delimited_fields_sort_as_gnu_sort_with_t_and_k() {
    let fx = Fixture::new();
    fx.write("in", &random_csv(3000, 1));
    for (keys, gnu_args) in CASES {
        let out = ok(fx.cmd().args(["--spec", CSV_FIELDS, "--spec", keys, "in"]));
        let mut want_args = gnu_args.to_vec();
        want_args.push("in");
        assert_eq!(out.stdout, gnu(&fx, &want_args), "spec keys {keys:?}");
    }
    // -u on the command line is -noduplicates.
    let out = ok(fx.cmd().args(["-u", "--spec", CSV_FIELDS, "--spec", "-key=c", "in"]));
    assert_eq!(out.stdout, gnu(&fx, &["-s", "-u", "-t,", "-k3,3", "in"]));
    fx.assert_clean();
}

#[test]
fn spilled_sort_with_spec_files_and_memory() {
    let fx = Fixture::new();
    fx.write("in", &random_csv(150_000, 2));
    fx.mkdir("t");
    let spec = format!("{CSV_FIELDS} -key=num,descending -key=c -memory=1M -temp=t -in_file=in -out_file=out -processes=2");
    ok(fx.cmd().args(["--spec", &spec, "--stats-json", "stats.json"]));
    let stats = read_stats(&fx.path("stats.json"));
    assert!(stat_u64(&stats, "runs") >= 2, "expected several runs: {stats}");
    let want = gnu(&fx, &["-s", "-t,", "-k2,2nr", "-k3,3", "in"]);
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), want);
    assert_dir_empty(&fx.path("t"));
    // The -S flag wins over -memory, as for records.
    let out = ok(fx.cmd().args(["-S", TINY, "--spec", CSV_FIELDS, "--spec", "-key=a -key=rest,desc -nodup", "in"]));
    assert_eq!(out.stdout, gnu(&fx, &["-s", "-u", "-t,", "-k1,1", "-k4r", "in"]));
    fx.assert_clean();
}

#[test]
fn other_delimiters() {
    let fx = Fixture::new();
    let csv = random_csv(2000, 3);
    // Tab-separated fields.
    let tsv: Vec<u8> = csv.iter().map(|&b| if b == b',' { b'\t' } else { b }).collect();
    fx.write("tsv", &tsv);
    let spec = "-format=delimiter:'\\n' -field=name:a,delimiter:tab -field=name:n,delimiter:'\\t',decimal -key=n -key=a,desc";
    let out = ok(fx.cmd().args(["--spec", spec, "tsv"]));
    assert_eq!(out.stdout, gnu(&fx, &["-s", "-t\t", "-k2,2n", "-k1,1r", "tsv"]));
    // NUL-terminated records (GNU's -z), a field delimiter written in octal.
    let z: Vec<u8> = csv.iter().map(|&b| if b == b'\n' { 0 } else { b }).collect();
    fx.write("z", &z);
    let spec = "-format=delimiter:nul -field=name:a,delimiter:'\\054' -field=name:n,delimiter:comma,decimal -key=n,desc";
    let out = ok(fx.cmd().args(["--spec", spec, "z"]));
    assert_eq!(out.stdout, gnu(&fx, &["-z", "-s", "-t,", "-k2,2nr", "z"]));
    // Records ended by '|', a byte GNU cannot end lines with: compare through newlines.
    let bars: Vec<u8> = csv.iter().map(|&b| if b == b'\n' { b'|' } else { b }).collect();
    fx.write("bars", &bars);
    let spec = "-format=delimiter:'|' -field=name:a,delimiter:',' -field=name:n,delimiter:',',decimal -key=n -key=a";
    let out = ok(fx.cmd().args(["--spec", spec, "bars"]));
    fx.write("csv", &csv);
    let want: Vec<u8> = gnu(&fx, &["-s", "-t,", "-k2,2n", "-k1,1", "csv"]).iter().map(|&b| if b == b'\n' { b'|' } else { b }).collect();
    assert_eq!(out.stdout, want);
    fx.assert_clean();
}

#[test]
fn fixed_positions_inside_delimited_records() {
    let fx = Fixture::new();
    let mut rng = Rng::new(4);
    let mut data = Vec::new();
    for _ in 0..3000 {
        let len = rng.below(12);
        for _ in 0..len {
            data.push(b"ab ,1-9."[rng.below(8)]);
        }
        data.push(b'\n');
    }
    fx.write("in", &data);
    let spec = "-format=delimiter:'\\n' -field=name:k,size:3,off:1 -field=name:n,size:4,off:4,decimal -key=n,descending -key=k -key=position:1,size:1";
    let out = ok(fx.cmd().args(["--spec", spec, "in"]));
    assert_eq!(out.stdout, gnu(&fx, &["-s", "-t\n", "-k1.5,1.8nr", "-k1.2,1.4", "-k1.1,1.1", "in"]));
    fx.assert_clean();
}

#[test]
fn statistics_statement_prints_the_report() {
    let fx = Fixture::new();
    fx.write("in", &random_csv(500, 5));
    let out = ok(fx.cmd().args(["--spec", CSV_FIELDS, "--spec", "-key=a -stat -out_file=out", "in"]));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("xsort statistics"), "{err}");
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), gnu(&fx, &["-s", "-t,", "-k1,1", "in"]));
    fx.assert_clean();
}

#[test]
fn statements_that_do_not_map_fail_naming_the_statement() {
    let fx = Fixture::new();
    fx.write("in", b"a,1\n");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--spec", "-format=delimiter:'\\n' -field=name:a,delimiter:',' -field=name:b,delimiter:';' -key=b"],
            "'-field=name:b,delimiter:';''",
        ),
        (&["--spec", "-format=delimiter:'\\n' -field=name:a,delimiter:',' -field=name:b,size:4"], "'-field=name:b,size:4'"),
        (&["--spec", "-format=delimiter:'\\n' -field=name:a,delimiter:',',integer"], "'-field=name:a,delimiter:',',integer'"),
        (&["--spec", "-format=delimiter:'\\n' -field=name:a,delimiter:',' -key=position:1,size:1"], "'-key=position:1,size:1'"),
        (&["--spec", "-format=delimiter:ab"], "'-format=delimiter:ab'"),
        (&["--spec", "-field=name:a,delimiter:',' -key=a"], "'-field=name:a,delimiter:','"),
        (&["--spec", "-format=delimiter:'\\n' -key=nosuch"], "'-key=nosuch'"),
        (&["--record-size=10", "--spec", "-format=delimiter:'\\n'"], "--record-size"),
        (&["--key-bytes=0:2", "--spec", "-format=delimiter:'\\n'"], "--key-bytes"),
        // GNU's options order plain lines (as the nsort command takes them), not records with fields.
        (&["-k1,1", "--spec", "-format=delimiter:'\\n' -field=name:a,delimiter:','"], "-k"),
        (&["-o", "x", "--spec", "-format=delimiter:'\\n' -out_file=y"], "-out_file"),
    ];
    for (args, names) in cases {
        let mut a = args.to_vec();
        a.push("in");
        let line = fail(fx.cmd().args(&a));
        assert!(line.contains(names), "{args:?}: '{line}' should name {names}");
    }
    assert!(!fx.path("x").exists() && !fx.path("y").exists());
    // Statements that only say the records are lines leave their order to GNU's options.
    fx.write("in", b"b 2\na 10\n");
    assert_eq!(ok(fx.cmd().args(["-k2n", "--spec", "-format=delimiter:'\\n' -memory=64m", "in"])).stdout, b"b 2\na 10\n");
    fx.assert_clean();
}
