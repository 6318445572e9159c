//! CSV and TSV records through the command (`--csv`, `--tsv`, `--csv-separator`, `--header`,
//! `-k NAME`, `--strict`): records that span lines, keys on unquoted values, headers across
//! inputs and standard input, sorts that spill and merge, `-m` and `-c`, compressed CSV, and the
//! errors (a quote left open, a stray quote under `--strict`, a differing header, an unknown
//! column) with nothing at the target. The randomized comparison with Python's `csv` module is in
//! `csv_random.rs`.

use crate::common::*;
use std::process::{Command, Stdio};

/// A CSV of `n` records under a header: an id, a price (ties, negatives, decimals), and a text
/// field that is sometimes quoted with a comma, doubled quotes or a newline inside. Returns the
/// file and its records (each without its newline) in input order.
fn priced(n: usize, seed: u64) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut rng = Rng::new(seed);
    let mut records = Vec::new();
    for i in 0..n {
        let price = format!("{}{}.{}", if rng.below(4) == 0 { "-" } else { "" }, rng.below(500), rng.below(10));
        let note = match rng.below(5) {
            0 => "plain".to_string(),
            1 => "\"a, b\"".to_string(),
            2 => "\"say \"\"hi\"\"\"".to_string(),
            3 => format!("\"line {i}\nnext\"").to_string(),
            _ => String::new(),
        };
        records.push(format!("{i},{price},{note}").into_bytes());
    }
    let mut file = b"id,price,note\n".to_vec();
    for r in &records {
        file.extend_from_slice(r);
        file.push(b'\n');
    }
    (file, records)
}

/// The price of a record of [`priced`] (its second field is never quoted).
fn price(rec: &[u8]) -> f64 {
    std::str::from_utf8(rec).unwrap().split(',').nth(1).unwrap().parse().unwrap()
}

/// The header, then the records stably sorted by price.
fn by_price(records: &[Vec<u8>]) -> Vec<u8> {
    let mut sorted = records.to_vec();
    sorted.sort_by(|a, b| price(a).partial_cmp(&price(b)).unwrap());
    let mut out = b"id,price,note\n".to_vec();
    for r in sorted {
        out.extend_from_slice(&r);
        out.push(b'\n');
    }
    out
}

#[test]
fn a_header_stays_first_and_keys_sort_unquoted_values_in_memory_and_spilled() {
    let fx = Fixture::new();
    let (file, records) = priced(40_000, 7);
    fx.write("in.csv", &file);
    let want = by_price(&records);
    for (memory, key) in [("1G", "-k2,2n"), ("1M", "-kprice:n"), ("1M", "--key=price:n")] {
        let out = ok(fx.cmd().args(["--csv", "--header", "-s", "-S", memory, key, "in.csv"]));
        assert!(out.stdout == want, "{memory} {key}: the output differs from a stable sort by price");
    }
    // Through standard input, and as two files sharing the header (the second one's dropped).
    let out = ok_with_stdin(fx.cmd().args(["--csv", "--header", "-s", "-k2,2n"]), Some(&file));
    assert!(out.stdout == want, "standard input");
    let (half, rest) = records.split_at(records.len() / 2);
    let with_header =
        |rs: &[Vec<u8>]| [b"id,price,note\n".to_vec(), rs.iter().flat_map(|r| [r.clone(), b"\n".to_vec()]).flatten().collect()].concat();
    fx.write("a.csv", &with_header(half));
    fx.write("b.csv", &with_header(rest));
    let out = ok(fx.cmd().args(["--csv", "--header", "-s", "-k", "price:n", "-S", "1M", "a.csv", "-", "b.csv"]));
    assert!(out.stdout == want, "three inputs, the middle one empty standard input");
    fx.assert_clean();
}

#[test]
fn tsv_other_separators_and_keys_across_fields() {
    let fx = Fixture::new();
    fx.write("t.tsv", b"b\t\"x\ty\"\t2\na\tz\t10\nc\t\"q\"\"\"\t1\n");
    let out = ok(fx.cmd().args(["--tsv", "-k3,3n", "t.tsv"]));
    assert_eq!(out.stdout, b"c\t\"q\"\"\"\t1\nb\t\"x\ty\"\t2\na\tz\t10\n");
    // The key runs over fields 2 and 3: the unquoted values joined by the separator.
    let out = ok(fx.cmd().args(["--tsv", "-k2,3", "t.tsv"]));
    assert_eq!(out.stdout, b"c\t\"q\"\"\"\t1\nb\t\"x\ty\"\t2\na\tz\t10\n");
    fx.write("s.csv", b"k;v\n\"b;1\";2\na;3\n\"\";1\n");
    let out = ok(fx.cmd().args(["--csv-separator=;", "--header", "-k", "k", "s.csv"]));
    assert_eq!(out.stdout, b"k;v\n\"\";1\na;3\n\"b;1\";2\n");
    // -t gives a CSV its separator too; the quoted `b;1` is one field.
    let out = ok(fx.cmd().args(["--csv", "-t;", "--header", "-k2,2nr", "s.csv"]));
    assert_eq!(out.stdout, b"k;v\na;3\n\"b;1\";2\n\"\";1\n");
}

#[test]
fn crlf_records_and_a_last_record_without_its_newline_are_written_as_read() {
    let fx = Fixture::new();
    fx.write("w.csv", b"name,n\r\n\"b\r\nb\",2\r\na,1\r\nc,\"0\"");
    let out = ok(fx.cmd().args(["--csv", "--header", "-k2,2n", "w.csv"]));
    assert_eq!(out.stdout, b"name,n\r\nc,\"0\"\na,1\r\n\"b\r\nb\",2\r\n");
}

#[test]
fn merge_check_and_compressed_inputs_read_csv_records() {
    let fx = Fixture::new();
    fx.write("a.csv", b"h,v\n\"x\ny\",1\nb,3\n");
    fx.write("b.csv", b"h,v\nc,2\n\"d\"\"\",4\n");
    let out = ok(fx.cmd().args(["--csv", "--header", "-m", "-k", "v:n", "a.csv", "b.csv"]));
    assert_eq!(out.stdout, b"h,v\n\"x\ny\",1\nc,2\nb,3\n\"d\"\"\",4\n");
    fx.write("m.csv", &out.stdout);
    ok(fx.cmd().args(["--csv", "--header", "-c", "-s", "-k2,2n", "m.csv"]));
    let out = run(fx.cmd().args(["--csv", "--header", "-c", "-s", "-k2,2nr", "m.csv"]));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "xsort: m.csv:3: disorder: c,2\n");
    let mut gzip = Command::new("gzip").args(["-c", "-q"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(&mut gzip.stdin.take().unwrap(), b"h,v\n\"z\nz\",0\n").unwrap();
    fx.write("c.csv.gz", &gzip.wait_with_output().unwrap().stdout);
    let out = ok(fx.cmd().args(["--csv", "--header", "-s", "-k2,2n", "a.csv", "c.csv.gz"]));
    assert_eq!(out.stdout, b"h,v\n\"z\nz\",0\n\"x\ny\",1\nb,3\n");
}

#[test]
fn malformed_csv_is_an_error_naming_the_file_and_line_with_nothing_at_the_target() {
    let fx = Fixture::new();
    let (mut big, _) = priced(30_000, 3);
    big.extend_from_slice(b"999,1,\"never closed\n");
    fx.write("open.csv", &big);
    let lines = big.iter().filter(|&&b| b == b'\n').count();
    for memory in ["1G", "1M"] {
        let err = fail(fx.cmd().args(["--csv", "--header", "-S", memory, "-k2,2n", "-o", "out.csv", "open.csv"]));
        assert_eq!(
            err,
            format!("xsort: open.csv: line {lines}: a quoted field is still open at the end of the file (the record starts on this line)")
        );
        assert!(!fx.path("out.csv").exists());
        fx.assert_clean();
    }
    fx.write("stray.csv", b"a,b\n1,x\"y\n");
    ok(fx.cmd().args(["--csv", "stray.csv"]));
    let err = fail(fx.cmd().args(["--csv", "--strict", "stray.csv", "-o", "out.csv"]));
    assert_eq!(err, "xsort: stray.csv: line 2: a quote inside a field that is not quoted (--strict)");
    fx.write("after.csv", b"\"a\"b,c\n");
    let err = fail(fx.cmd().args(["--csv", "--strict", "after.csv"]));
    assert_eq!(err, "xsort: after.csv: line 1: text after the quote that closes a field (--strict)");
    fx.write("h1.csv", b"h,v\na,1\n");
    fx.write("h2.csv", b"h,w\nb,2\n");
    let err = fail(fx.cmd().args(["--csv", "--header", "h1.csv", "h2.csv", "-o", "out.csv"]));
    assert_eq!(err, "xsort: h2.csv: its header (its first record) differs from the first input's");
    let err = fail(fx.cmd().args(["--csv", "--header", "-k", "price:n", "h1.csv"]));
    assert_eq!(err, "xsort: key 'price' names no column of the header (its columns: h, v)");
    // Without a header, a name is not a key: refused, with GNU's refusal of the KEYDEF (which a
    // sort of plain lines gives alone, as GNU does).
    let err = fail(fx.cmd().args(["--csv", "-k", "v", "h1.csv"]));
    assert_eq!(
        err,
        "xsort: key 'v' names a column, which needs --header (as a KEYDEF: invalid number at field start: invalid count at start of 'v')"
    );
    let err = fail(fx.cmd().args(["-k", "v", "h1.csv"]));
    assert_eq!(err, "xsort: invalid number at field start: invalid count at start of 'v'");
    assert!(!fx.path("out.csv").exists());
    fx.assert_clean();
}

#[test]
fn csv_options_are_checked() {
    let fx = Fixture::new();
    fx.write("x.csv", b"a\n");
    assert_eq!(fail(fx.cmd().args(["--csv-separator=ab", "x.csv"])), "xsort: --csv-separator takes one byte, not 'ab'");
    assert_eq!(fail(fx.cmd().args(["--strict", "x.csv"])), "xsort: --strict applies to CSV records (--csv, --tsv)");
    assert_eq!(fail(fx.cmd().args(["--header=x", "x.csv"])), "xsort: invalid header count 'x': give a number of records");
    assert_eq!(
        fail(fx.cmd().args(["--record-size=4", "--csv", "x.csv"])),
        "xsort: --csv applies to text lines; records take --key-bytes (see --help)"
    );
    assert_eq!(
        fail(fx.cmd().args(["--csv", "--debug", "x.csv"])),
        "xsort: --debug annotates plain lines; it does not take --csv, --tsv, --jsonl or --header"
    );
    // A header of plain lines, and a column named among blank-separated words.
    fx.write("p.txt", b"name size\nb 10\na 9\n");
    let out = ok(fx.cmd().args(["--header", "-k", "size:n", "p.txt"]));
    assert_eq!(out.stdout, b"name size\na 9\nb 10\n");
}
