//! C programs on the rest of the API: delimited records (tests/c/lines.c), separated records
//! selected and reformatted (lines.c), merges fed by callbacks (merge.c), keys ordered by a
//! declared comparison function (compare.c), -in_file / -out_file
//! sorts (files.c), two contexts sorting at once from two threads (threads.c), sorts ended early
//! leaving no temp file (cancel.c), paths that are not UTF-8 (files.c), a program that knows only
//! Nsort's published names, typedefs and NSORT_MSG_IS_* macros (nsort_names.c), and the example
//! that README.md and docs/NSORT.md show (examples/example.c).

mod support;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use support::*;

/// Lines of varying length (a few of 10-40 KB), "WORD,KEY,PAD", whose KEY fields are unique.
fn make_lines(count: u64) -> Vec<Vec<u8>> {
    (0..count)
        .map(|i| {
            let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17);
            let pad = if i % 5000 == 7 { 10_000 + (h % 30_000) as usize } else { (h % 40) as usize };
            format!("w{},{:x},{}\n", h % 1000, (i as u32).wrapping_mul(2_654_435_761).reverse_bits(), "p".repeat(pad)).into_bytes()
        })
        .collect()
}

fn sort_lines(names: Names, statements: &str, key: impl Fn(&[u8]) -> &[u8]) {
    let dir = tempdir();
    let exe = compile("tests/c/lines.c", dir.path(), Link::Dynamic, names);
    let mut lines = make_lines(200_000);
    let (input, output) = (dir.path().join("in"), dir.path().join("out"));
    std::fs::write(&input, lines.concat()).unwrap();
    let out = run_ok(&exe, &[statements, input.to_str().unwrap(), output.to_str().unwrap()]);
    // The buffers of 7 and 40 bytes are too small for some lines: those returns were refused.
    assert!(String::from_utf8_lossy(&out.stdout).trim() != "small 0", "no return was refused as too small");
    lines.sort_by(|a, b| key(a).cmp(key(b)).then_with(|| a.cmp(b)));
    assert!(std::fs::read(&output).unwrap() == lines.concat(), "the output is not the input's lines in order");
}

/// The second comma-separated field of a line.
fn second_field(line: &[u8]) -> &[u8] {
    line.split(|&b| b == b',').nth(1).unwrap()
}

#[test]
fn delimited_records_whole_line_key() {
    sort_lines(Names::Xsort, "-format=delimiter:'\\n' -memory=64m", |l| l);
}

#[test]
fn delimited_records_field_key() {
    let statements = "-format=delimiter:newline -field=name:word,delimiter:',' -field=name:k,delimiter:',' -key=k -memory=64m";
    sort_lines(Names::Nsort, statements, second_field);
}

/// Selection and reformatting reach the C library's sorts: separated records released by lines.c
/// through Nsort's names, lines whose word starts with "w1" omitted, the rest rewritten as their
/// key and word.
#[test]
fn separated_records_selected_and_reformatted() {
    let dir = tempdir();
    let exe = compile("tests/c/lines.c", dir.path(), Link::Dynamic, Names::Nsort);
    let lines = make_lines(50_000);
    let (input, output) = (dir.path().join("in"), dir.path().join("out"));
    std::fs::write(&input, lines.concat()).unwrap();
    let statements = "-format=separator:comma -field=name:word -field=name:k -field=name:pad -key=k \
                      -omit=(word matches '^w1') -reformat=k,word -memory=64m";
    run_ok(&exe, &[statements, input.to_str().unwrap(), output.to_str().unwrap(), "resized"]);
    let mut want: Vec<Vec<u8>> = lines
        .iter()
        .filter(|l| !l.starts_with(b"w1"))
        .map(|l| {
            let f: Vec<&[u8]> = l.split(|&b| b == b',').collect();
            [f[1], b",", f[0], b"\n"].concat()
        })
        .collect();
    want.sort();
    assert!(!want.is_empty() && want.len() < lines.len());
    assert!(std::fs::read(&output).unwrap() == want.concat(), "the output is not the kept lines, rewritten, in order");
}

/// Each record `records` in order, preceded by Nsort's `-match` byte: `1` when `same(previous,
/// record)`, else `0`.
fn marked(records: &[Vec<u8>], same: impl Fn(&[u8], &[u8]) -> bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, r) in records.iter().enumerate() {
        out.push(if i > 0 && same(&records[i - 1], r) { b'1' } else { b'0' });
        out.extend_from_slice(r);
    }
    out
}

/// Nsort's `-match`, as Ordinal's SUMP Pump defines its sorts: returned records each come after a
/// byte that says whether its keys match the record's before it. Separated records released by
/// lines.c (keyed by their word, which repeats, then by all keys and by the first of two), and
/// fixed-size records returned whole at their size plus one (files.c).
#[test]
fn matches_marked_for_a_group_by_reader() {
    let dir = tempdir();
    let exe = compile("tests/c/lines.c", dir.path(), Link::Dynamic, Names::Nsort);
    let lines = make_lines(30_000);
    let (input, output) = (dir.path().join("in"), dir.path().join("out"));
    std::fs::write(&input, lines.concat()).unwrap();
    let field = |l: &[u8], i: usize| l.split(|&b| b == b',').nth(i).unwrap().to_vec();
    for (keys, sorted_by, same) in [("-key=word -match", 1, 1), ("-key=word -key=k -match=1", 2, 1), ("-key=word -key=k -match", 2, 2)] {
        let statements = format!("-format=separator:comma -field=name:word -field=name:k -field=name:pad {keys} -memory=64m");
        run_ok(&exe, &[&statements, input.to_str().unwrap(), output.to_str().unwrap(), "resized"]);
        let mut sorted = lines.clone();
        sorted.sort_by_key(|l| (0..sorted_by).map(|i| field(l, i)).collect::<Vec<_>>()); // stable: ties in input order
        let want = marked(&sorted, |a, b| (0..same).all(|i| field(a, i) == field(b, i)));
        assert!(std::fs::read(&output).unwrap() == want, "{keys}: not the lines in order, each after its mark");
    }

    let input = dir.path().join("records");
    let summary = gensort(&input, 50_000);
    // A two-byte key: gensort's keys are random bytes, so about half the records share theirs.
    let statements = format!("-format=size:100 -key=position:1,size:2 -match -in_file={}", input.display());
    files(Names::Nsort, statements, Some(&output));
    let got = std::fs::read(&output).unwrap();
    assert_eq!(got.len(), 101 * 50_000, "records of 101 bytes");
    let mut records: Vec<Vec<u8>> = std::fs::read(&input).unwrap().chunks(100).map(<[u8]>::to_vec).collect();
    records.sort_by_key(|r| r[..2].to_vec());
    assert!(got == marked(&records, |a, b| a[..2] == b[..2]), "the records in order, each after its mark");
    assert!(got.chunks(101).filter(|r| r[0] == b'1').count() > 10_000, "few records matched: {summary:?}");
}

/// nsort_merge_define merges three streams fed by callbacks, fails on a raised error, a misordered
/// stream and a bad width with Nsort's codes (merge.c), linked both ways.
#[test]
fn merges_fed_by_callbacks() {
    let dir = tempdir();
    for link in [Link::Dynamic, Link::Static] {
        let exe = compile("tests/c/merge.c", dir.path(), link, Names::Nsort);
        let out = run_ok(&exe, &["20000"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("stream 1 lost its connection"), "{stderr}");
        assert!(stderr.contains("merge input 2: record") && stderr.contains("is out of order"), "{stderr}");
    }
}

/// nsort_declare_function's comparison orders keys alone and after a character field, ascending
/// and descending, in memory and spilled; an undeclared name and a raised error fail with Nsort's
/// codes (compare.c), linked both ways.
#[test]
fn keys_ordered_by_a_declared_comparison_function() {
    let dir = tempdir();
    for link in [Link::Dynamic, Link::Static] {
        let exe = compile("tests/c/compare.c", dir.path(), link, Names::Nsort);
        let out = run_ok(&exe, &["150000"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("no comparison function named 'nobody' is declared"), "{stderr}");
        assert!(stderr.contains("the comparison function 'le_number' failed: value 7 is not comparable"), "{stderr}");
    }
}

/// Runs files.c; returns what it printed (the statistics).
fn files(names: Names, statements: impl AsRef<OsStr>, output: Option<&Path>) -> String {
    let dir = tempdir();
    let exe = compile("tests/c/files.c", dir.path(), Link::Dynamic, names);
    let mut args = vec![statements.as_ref()];
    if let Some(o) = output {
        args.push(o.as_os_str());
    }
    String::from_utf8(run_ok(&exe, &args).stdout).unwrap()
}

#[test]
fn in_file_to_out_file_spilled() {
    let (dir, temp) = (tempdir(), tempdir());
    let (a, b, out) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("out"));
    let (sa, sb) = (gensort(&a, 150_000), gensort(&b, 150_000));
    let statements = format!(
        "-format=size:100 -key=position:1,size:10 -in_file={} -in_file={} -out_file={} -memory=16m -temp={}",
        a.display(),
        b.display(),
        out.display(),
        temp.path().display()
    );
    let stats = files(Names::Nsort, &statements, None);
    assert!(stats.contains("xsort statistics"), "no statistics printed:\n{stats}");
    let got = valsort(&out);
    assert_eq!((got.records, got.unordered), (300_000, 0));
    // Both inputs are there once: gensort's records 0.. of each file, so every key twice.
    assert_eq!(got.checksum, sa.checksum.wrapping_add(sb.checksum));
    assert_eq!(got.duplicates, 150_000);
    assert_eq!(entries(temp.path()), Vec::<String>::new(), "temp files left");
}

/// Paths are bytes on Linux, and the xsort command sorts files whatever their names: the
/// statements' -in_file, -out_file and -temp_file may name paths that are not UTF-8.
#[test]
fn paths_that_are_not_utf8() {
    let (dir, temp) = (tempdir(), tempdir());
    let named = |dir: &Path, name: &[u8]| dir.join(OsStr::from_bytes(name));
    let (input, out, spill) = (named(dir.path(), b"in\xff"), named(dir.path(), b"out\xfe\xc3\xa9"), named(temp.path(), b"t\xfd"));
    std::fs::create_dir(&spill).unwrap();
    let summary = gensort(&input, 300_000);
    let mut statements = OsString::from("-format=size:100 -key=position:1,size:10 -memory=16m -in_file=");
    for (path, next) in [(&input, " -out_file="), (&out, ",sync -temp="), (&spill, "")] {
        statements.push(path);
        statements.push(next);
    }
    let stats = files(Names::Xsort, &statements, None);
    assert_sorted_copy(&summary, &out);
    assert!(stats.contains(" runs, "), "the sort did not spill to the temp directory:\n{stats}");
    assert_eq!(entries(&spill), Vec::<String>::new(), "temp files left");
    assert_eq!(entries(dir.path()).len(), 2, "{:?}", entries(dir.path()));
}

#[test]
fn in_file_returned_to_the_program() {
    let dir = tempdir();
    let (input, out) = (dir.path().join("in"), dir.path().join("out"));
    let summary = gensort(&input, 200_000);
    files(Names::Xsort, format!("-format=size:100 -key=position:1,size:10 -in_file={}", input.display()), Some(&out));
    assert_sorted_copy(&summary, &out);
}

#[test]
fn two_threads_two_contexts() {
    let dir = tempdir();
    for names in [Names::Xsort, Names::Nsort] {
        let exe = compile("tests/c/threads.c", dir.path(), Link::Dynamic, names);
        let out = run_ok(&exe, &["-format=size:100 -key=position:1,size:10 -memory=256m -processes=2", "200000"]);
        assert!(String::from_utf8_lossy(&out.stdout).contains("both sorts passed"));
    }
}

#[test]
fn ended_sorts_leave_no_temp_file() {
    let (dir, temp) = (tempdir(), tempdir());
    let exe = compile("tests/c/cancel.c", dir.path(), Link::Static, Names::Xsort);
    let statements = format!("-format=size:100 -key=position:1,size:10 -memory=16m -temp={}", temp.path().display());
    run_ok(&exe, &[&statements, temp.path().to_str().unwrap(), "400000"]);
    assert_eq!(entries(temp.path()), Vec::<String>::new());
}

/// nsort_names.c includes only nsort.h (which brings nsorterrno.h), as a program written for Nsort
/// does: it builds with -Wall -Wextra -Werror and sorts, linked either way.
#[test]
fn a_program_of_nsorts_names_only() {
    let dir = tempdir();
    for link in [Link::Dynamic, Link::Static] {
        let exe = compile("tests/c/nsort_names.c", dir.path(), link, Names::Nsort);
        let out = run_ok::<&str>(&exe, &[]);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "nsort names passed\n");
    }
}

#[test]
fn readme_example_compiles_and_runs() {
    let dir = tempdir();
    for link in [Link::Dynamic, Link::Static] {
        let exe = compile("examples/example.c", dir.path(), link, Names::Xsort);
        let out = run_ok::<&str>(&exe, &[]);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "apple\nfig\npear\n");
    }
    // README.md and docs/NSORT.md show the example as it is in the file.
    let example = std::fs::read_to_string(crate_dir().join("examples/example.c")).unwrap();
    for doc in ["README.md", "docs/NSORT.md"] {
        let text = std::fs::read_to_string(crate_dir().join("../..").join(doc)).unwrap();
        assert!(text.contains(&format!("```c\n{example}```")), "{doc}'s C example differs from crates/capi/examples/example.c");
    }
}

/// files.c compiled in `dir` with `names`, the statements of a sort of `records` gensort records
/// (`dir/in`) into `dir/out` (holding "old") under `-memory=MEMORY`, spilling to `temp`, and the
/// output's path.
fn spilling_files_program(
    dir: &Path,
    temp: &Path,
    records: u64,
    memory: &str,
    names: Names,
) -> (std::path::PathBuf, String, std::path::PathBuf) {
    let (input, out) = (dir.join("in"), dir.join("out"));
    gensort(&input, records);
    std::fs::write(&out, b"old").unwrap();
    let exe = compile("tests/c/files.c", dir, Link::Dynamic, names);
    let statements = format!(
        "-format=size:100 -key=position:1,size:10 -memory={memory} -in_file={} -out_file={} -temp={}",
        input.display(),
        out.display(),
        temp.display()
    );
    (exe, statements, out)
}

#[test]
fn a_full_temp_disk_is_an_error_that_leaves_the_output_and_the_disk_as_they_were() {
    let (dir, temp) = (tempdir(), tempdir());
    if !xsort_testkit::root() {
        return;
    }
    let _disk = xsort_testkit::Tmpfs::mount(temp.path(), "1m");
    let (exe, statements, out) = spilling_files_program(dir.path(), temp.path(), 100_000, "2m", Names::Nsort);
    let got = run(&exe, &[&statements]);
    let err = String::from_utf8_lossy(&got.stderr);
    assert_eq!(got.status.code(), Some(1), "{err}");
    assert!(err.contains("release_end") && err.contains("write error: No space left on device"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
    assert_eq!(entries(temp.path()), Vec::<String>::new(), "temp files left on the full disk");
    let beside: Vec<String> = entries(dir.path()).into_iter().filter(|e| !e.starts_with("files")).collect();
    assert_eq!(beside, ["in", "out"], "files left beside the output");
}

#[test]
fn a_program_killed_mid_spill_leaves_no_temp_file_and_the_output_as_it_was() {
    let (dir, temp) = (tempdir(), tempdir());
    let (exe, statements, out) = spilling_files_program(dir.path(), temp.path(), 1_000_000, "4m", Names::Xsort);
    let mut child = std::process::Command::new(&exe).arg(&statements).stdout(std::process::Stdio::null()).spawn().unwrap();
    // The runs live in an unnamed file in the temp directory: /proc shows it as "TEMP/#INODE (deleted)".
    let marker = format!("{}/", temp.path().display());
    let started = std::time::Instant::now();
    let fds = format!("/proc/{}/fd", child.id());
    let spilling = || {
        std::fs::read_dir(&fds)
            .map(|fds| fds.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok()).any(|l| l.to_string_lossy().starts_with(&marker)))
            .unwrap_or(false)
    };
    while !spilling() {
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "no temp run appeared");
        assert!(child.try_wait().unwrap().is_none(), "the sort ended before it could be killed mid-spill");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
    assert_eq!(entries(temp.path()), Vec::<String>::new(), "temp files left");
    let beside: Vec<String> = entries(dir.path()).into_iter().filter(|e| !e.starts_with("files")).collect();
    assert_eq!(beside, ["in", "out"], "files left beside the output");
}
