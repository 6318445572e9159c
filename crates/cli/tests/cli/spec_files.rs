//! Nsort command lines as Nsort's users print them, through the real `xsort` binary: blanks and
//! line breaks after a comma inside a statement (NTOSort's 10 GB and 100 GB lines), and
//! statements read from `-specification` files, with their loop check; `position`, `-threads` and
//! `-nowarn` as Nsort and its clients write them.

use crate::common::*;
use std::io::Write;

/// NTOSort's 10 GB line, with Linux paths for `d:\ns.dat`: a blank after a comma inside the file
/// statements, as printed.
fn ntosort_line(input: &str, output: &str) -> String {
    format!(
        "-format=size:100 -field=name:key,size:10,off:0,character -key=key -memory=64M -processes=2 \
         -in_file={input},direct,transfer_size=16M, count=64 \
         -out_file={output},direct,transfer_size=128M, count=8, preallocate"
    )
}

/// The 100 GB version: statements broken across lines after a comma.
fn ntosort_lines(input: &str, output: &str, temp: &str) -> String {
    format!(
        "# NTOSort, 100 GB\n\
         -format=size:100\n\
         -field=name:key,size:10,off:0,character -key=key\n\
         -in_file={input},direct,\n    transfer_size=16M,\n    count=64\n\
         -out_file={output},direct,transfer_size=128M,\n    count=8,   # fewer, larger writes\n    preallocate\n\
         -temp={temp},\n    transfer_size=1M, count=4\n"
    )
}

#[test]
fn ntosort_line_as_printed_sorts() {
    let fx = Fixture::new();
    let n = 20_000;
    let sum = gensort(&fx.path("ns.dat"), 0, n, false);
    let input = fx.path("ns.dat").display().to_string();
    let output = fx.path("ns.out").display().to_string();
    let out = ok(fx.cmd().arg("--spec").arg(ntosort_line(&input, &output)));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_valsort_clean(&fx.path("ns.out"), n, sum);
    fx.assert_clean();
}

#[test]
fn ntosort_lines_broken_after_commas_sort_from_a_string_and_from_a_file() {
    let fx = Fixture::new();
    let n = 30_000;
    let sum = gensort(&fx.path("ns.dat"), 7, n, false);
    let temp = fx.mkdir("t");
    let text = ntosort_lines("ns.dat", "ns.out", "t");
    // In a --spec string (newlines included), spilling into -temp under a small budget.
    ok(fx.cmd().args(["-S", TINY, "--stats-json", "s.json", "--spec", &text]));
    assert_valsort_clean(&fx.path("ns.out"), n, sum);
    assert!(stat_u64(&read_stats(&fx.path("s.json")), "runs") > 1, "the sort should spill");
    assert_dir_empty(&temp);
    std::fs::remove_file(fx.path("ns.out")).unwrap();

    // The same statements in a file named by -specification, itself named from another file.
    fx.write("ntosort.spec", text.as_bytes());
    fx.write("outer.spec", b"-stat   # print the report\n-specification=ntosort.spec\n");
    let out = ok(fx.cmd().args(["-S", TINY, "--spec", "-specification=outer.spec"]));
    assert!(String::from_utf8_lossy(&out.stderr).contains("xsort statistics"), "the outer file's -stat applies");
    assert_valsort_clean(&fx.path("ns.out"), n, sum);
    fx.assert_clean();
}

#[test]
fn specification_files_that_loop_or_fail_are_one_line_errors() {
    let fx = Fixture::new();
    gensort(&fx.path("ns.dat"), 0, 100, false);
    fx.write("out", b"kept");
    fx.write("a.spec", b"-format=size:100\n-specification=b.spec\n");
    fx.write("b.spec", b"-stat\n\n-specification=a.spec\n");
    let msg = fail(fx.cmd().args(["--spec", "-specification=a.spec", "-o", "out", "ns.dat"]));
    assert_eq!(
        msg,
        "xsort: --spec: b.spec:3: invalid statement '-specification=a.spec': 'a.spec' includes itself: a.spec -> b.spec -> a.spec"
    );
    fx.write("bad.spec", b"-format=size:100\n-in_file=ns.dat,\n  direct, count=lots\n");
    let msg = fail(fx.cmd().args(["--spec", "-specification=bad.spec", "-o", "out"]));
    assert_eq!(
        msg,
        "xsort: --spec: bad.spec:2: invalid statement '-in_file=ns.dat,direct,count=lots': count must be a whole number, not 'lots'"
    );
    // Errors found once every statement is read name the file and line too.
    fx.write("late.spec", b"-format=size:100\n\n-key=kye\n");
    let msg = fail(fx.cmd().args(["--spec", "-specification=late.spec", "-o", "out", "ns.dat"]));
    assert_eq!(
        msg,
        "xsort: --spec: late.spec:3: invalid statement '-key=kye': no -field is named 'kye' (no fields are defined; field names are case-sensitive)"
    );
    fx.write("past.spec", b"-field=name:k,size:10,off:95\n-key=k\n-format=size:100\n");
    let msg = fail(fx.cmd().args(["--spec", "-specification=past.spec", "-o", "out", "ns.dat"]));
    assert!(
        msg.starts_with("xsort: --spec: past.spec:1: invalid statement '-field=name:k,size:10,off:95': the field covers bytes 95..105"),
        "{msg}"
    );
    let msg = fail(fx.cmd().args(["--spec", "-specification=none.spec", "-o", "out"]));
    assert_eq!(msg, "xsort: --spec: invalid statement '-specification=none.spec': cannot read 'none.spec': No such file or directory");
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), b"kept");
    fx.assert_clean();
}

/// Nsort counts `position:N` from 1: `position:2` is the record's second byte (`offset:1`), and
/// `position:0` is refused rather than read as some other byte.
#[test]
fn position_counts_bytes_from_one_as_nsort_does() {
    let fx = Fixture::new();
    fx.write("in", b"azbycx");
    for key in ["position:2,size:1", "offset:1,size:1"] {
        let out = ok(fx.cmd().args(["--spec", &format!("-format=size:2 -key={key}"), "in"]));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "cxbyaz", "-key={key} sorts on the second byte");
    }
    let e = fail(fx.cmd().args(["--spec", "-format=size:2 -key=position:0,size:1", "in"]));
    assert!(e.contains("position:N counts bytes from 1, but N was zero"), "{e}");
    fx.assert_clean();
}

/// What Nsort clients add to every definition: `-threads=N` (as `-processes`), and `-nowarn`, which
/// silences the warning of a memory budget clamped to the machine's.
#[test]
fn threads_and_nowarn_as_nsort_clients_write_them() {
    let fx = Fixture::new();
    fx.write("in", b"cxbyaz");
    let spec = |extra: &str| format!("-threads=1 -format=size:2 -key=offset:0,size:1 -memory=1000T {extra}");
    let out = ok(fx.cmd().args(["--spec", &spec(""), "--stats-json", "s.json", "in"]));
    assert_eq!(out.stdout, b"azbycx");
    assert_eq!(stat_u64(&read_stats(&fx.path("s.json")), "threads"), 1, "-threads=1 is one worker thread");
    let warned = String::from_utf8_lossy(&out.stderr);
    assert!(warned.contains("warning: memory budget"), "a 1000T budget is clamped with a warning: {warned}");
    let out = ok(fx.cmd().args(["--spec", &spec("-nowarn"), "in"]));
    assert_eq!((out.stdout.as_slice(), String::from_utf8_lossy(&out.stderr).as_ref()), (&b"azbycx"[..], ""), "-nowarn prints nothing");
    fx.assert_clean();
}

#[test]
fn out_file_append_adds_the_sorted_records_at_the_end() {
    let fx = Fixture::new();
    fx.mkdir("t");
    gensort(&fx.path("in"), 0, 30_000, false);
    let input = std::fs::read(fx.path("in")).unwrap();
    let sorted = reference_sort(&input, 100, &["0:10"]);
    fx.write("out", b"kept as it was\n");
    let spec = |memory: &str| {
        format!(
            "-format=size:100 -key=position:1,size:10 -memory={memory} -temp={} -out_file={},append",
            fx.path("t").display(),
            fx.path("out").display()
        )
    };
    // In memory, then spilled: each run adds one sorted copy after what the file held.
    ok(fx.cmd().args(["--spec", &spec("64M"), "in"]));
    ok(fx.cmd().args(["--spec", &spec("1M"), "in"]));
    assert!(std::fs::read(fx.path("out")).unwrap() == [&b"kept as it was\n"[..], &sorted, &sorted].concat(), "appended twice");
    // A new file is made; append is for -out_file only, and not for standard output.
    ok(fx.cmd().args(["--spec", &format!("-format=size:100 -out_file={},append", fx.path("new").display()), "in"]));
    assert_eq!(std::fs::read(fx.path("new")).unwrap().len(), input.len());
    let msg = fail(fx.cmd().args(["--spec", "-format=size:100 -in_file=in,append"]));
    assert!(msg.contains("'append' applies only to -out_file"), "{msg}");
    assert_dir_empty(&fx.path("t"));
}

#[test]
fn each_later_out_file_gets_a_copy_of_the_sorted_output() {
    let fx = Fixture::new();
    fx.mkdir("t");
    gensort(&fx.path("in"), 0, 30_000, false);
    let input = std::fs::read(fx.path("in")).unwrap();
    let sorted = reference_sort(&input, 100, &["0:10"]);
    fx.write("log", b"earlier\n");
    fx.write("old", b"replaced\n");
    let spec = |memory: &str, outputs: &str| {
        format!("-format=size:100 -key=position:1,size:10 -memory={memory} -temp={} {outputs}", fx.path("t").display())
    };
    let three = format!(
        "-out_file={} -out_file={},append -out_file={},sync",
        fx.path("first").display(),
        fx.path("log").display(),
        fx.path("old").display()
    );
    // In memory, then spilled: every file gets the sorted records, the appended one after what it held.
    ok(fx.cmd().args(["--spec", &spec("64M", &three), "in"]));
    ok(fx.cmd().args(["--spec", &spec("1M", &three), "in"]));
    assert!(std::fs::read(fx.path("first")).unwrap() == sorted, "the first output file");
    assert!(std::fs::read(fx.path("old")).unwrap() == sorted, "a copy replaces its file");
    assert!(std::fs::read(fx.path("log")).unwrap() == [&b"earlier\n"[..], &sorted, &sorted].concat(), "a copy appended twice");
    // Lines too.
    fx.write("lines", b"b\nc\na\n");
    let outputs = format!("-format=delimiter:'\\n' -out_file={} -out_file={}", fx.path("l1").display(), fx.path("l2").display());
    ok(fx.cmd().args(["--spec", &outputs, "lines"]));
    assert_eq!(
        (std::fs::read(fx.path("l1")).unwrap(), std::fs::read(fx.path("l2")).unwrap()),
        (b"a\nb\nc\n".to_vec(), b"a\nb\nc\n".to_vec())
    );
    // A copy that cannot be made fails the sort before it starts, and no target changes: an
    // unwritable place, a device, a file named twice, another compression.
    // Another name of an output file (a hard link), and a FIFO, which is refused before it is
    // opened (opening it would wait for a reader).
    std::fs::hard_link(fx.path("old"), fx.path("hard")).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(fx.path("fifo")).status().unwrap().success());
    let before: Vec<Vec<u8>> = ["first", "log", "old"].iter().map(|f| std::fs::read(fx.path(f)).unwrap()).collect();
    for (extra, want) in [
        (format!("-out_file={}", fx.path("no-such-dir/x").display()), "no-such-dir"),
        ("-out_file=/dev/null".to_string(), "'/dev/null' is not a regular file"),
        (format!("-out_file={}", fx.path("first").display()), "is already an output file"),
        (format!("-out_file={}/./first,append", fx.path("").display()), "is already an output file"),
        (
            format!("-out_file={}/../{}/first", fx.path("").display(), fx.path("").file_name().unwrap().to_string_lossy()),
            "is already an output file (as ",
        ),
        (format!("-out_file={}", fx.path("hard").display()), "is already an output file (as "),
        (format!("-out_file={}", fx.path("fifo").display()), "fifo' is not a regular file"),
        (format!("-out_file={}", fx.path("x.gz").display()), "compressed differently"),
    ] {
        let msg = fail(fx.cmd().args(["--spec", &spec("64M", &format!("{three} {extra}")), "in"]));
        assert!(msg.contains(want), "{extra}: {msg}");
        let after: Vec<Vec<u8>> = ["first", "log", "old"].iter().map(|f| std::fs::read(fx.path(f)).unwrap()).collect();
        assert!(after == before, "{extra}: a target changed");
    }
    // A file to be appended to that changes while the sort runs fails the sort before any
    // target changes: here while the sort waits for the rest of its input.
    let mut sorting = fx
        .cmd()
        .args(["--spec", &spec("64M", &three), "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = sorting.stdin.take().unwrap();
    stdin.write_all(&input[..input.len() / 2]).unwrap();
    std::fs::OpenOptions::new().append(true).open(fx.path("log")).unwrap().write_all(b"meanwhile\n").unwrap();
    stdin.write_all(&input[input.len() / 2..]).unwrap();
    drop(stdin);
    let out = sorting.wait_with_output().unwrap();
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(2) && msg.contains("changed while the sort ran"), "{msg}");
    let after: Vec<Vec<u8>> = ["first", "log", "old"].iter().map(|f| std::fs::read(fx.path(f)).unwrap()).collect();
    assert!(after[0] == before[0] && after[2] == before[2], "a target changed though an appended one had changed");
    assert!(after[1] == [&before[1][..], b"meanwhile\n"].concat(), "the appended file");
    for leftover in ["x", "x.gz"] {
        assert!(!fx.path(leftover).exists(), "{leftover} was left behind");
    }
    assert_dir_empty(&fx.path("t"));
}
