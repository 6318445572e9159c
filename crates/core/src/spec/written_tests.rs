//! Unit tests of how statements are written: blanks and line breaks after a comma (Nsort's own
//! examples), and `-specification=FILE` with its nesting, loop and depth checks.

use super::*;
use std::path::Path;

pub(super) fn ok(text: &str) -> NsortSpec {
    parse_spec(text).unwrap_or_else(|e| panic!("{text:?} failed: {e}"))
}

pub(super) fn err(text: &str) -> String {
    match parse_spec(text) {
        Ok(s) => panic!("{text:?} should fail, gave {s:?}"),
        Err(e) => e.to_string(),
    }
}

fn io(path: &str, mib: u64, count: usize, preallocate: bool) -> FileSpec {
    FileSpec {
        path: PathBuf::from(path),
        direct: Some(true),
        transfer_size: Some(mib << 20),
        count: Some(count),
        preallocate,
        sync: false,
        append: false,
    }
}

/// The shape of NTOSort's printed 10 GB line: a blank after a comma inside file statements.
const ONE_LINE: &str = "-format=size:100 -field=name:key,size:10,off:0,character -key=key \
    -in_file=/data/ns.dat,direct,transfer_size=16M, count=64 \
    -out_file=/data/ns.out,direct,transfer_size=128M, count=8, preallocate";

/// The 100 GB version: statements broken across lines after a comma, with comments between.
const BROKEN: &str = "
-format=size:100
-field=name:key,
       size:10, off:0,   # the key
       character
-key=key
-in_file=/data/ns.dat,direct,
         transfer_size=16M,
         count=64
-out_file=/data/ns.out , direct ,transfer_size=128M,
  count=8,
  preallocate
";

#[test]
fn blanks_and_line_breaks_after_a_comma_continue_the_statement() {
    for text in [ONE_LINE, BROKEN] {
        let s = ok(text);
        assert_eq!(s.record_size, Some(100), "{text}");
        assert_eq!((s.fields.len(), s.keys.len()), (1, 1), "{text}");
        assert_eq!((s.keys[0].offset, s.keys[0].size), (0, 10), "{text}");
        assert_eq!(s.in_files, vec![io("/data/ns.dat", 16, 64, false)], "{text}");
        assert_eq!(s.out_file, Some(io("/data/ns.out", 128, 8, true)), "{text}");
    }
}

/// NTOSort's line as the seed paper prints it: blanks where Nsort's keywords have underscores.
const AS_PRINTED: &str = "-format=size:100 -field=name:key,size:10,off:0,character -key=key \
    -in file=/data/ns.dat,direct,transfer size=16M, count=64 \
    -out FILE=/data/ns.out,direct,transfer_size=128M, count=8, preallocate";

#[test]
fn a_blank_may_stand_for_the_underscore_of_a_two_word_keyword() {
    let s = ok(AS_PRINTED);
    assert_eq!(s.in_files, vec![io("/data/ns.dat", 16, 64, false)]);
    assert_eq!(s.out_file, Some(io("/data/ns.out", 128, 8, true)));
    // Only where the two words spell such a keyword: any other word stays apart, and is refused.
    assert!(err("-format=size:100 -key=offset:0,size:10 -in file=/a size=3").contains("'size=3' is not an Nsort statement"));
    assert!(err("-format=size:100 foo").contains("'foo' is not an Nsort statement"));
    assert!(err("-in_file=/a transfer").contains("'transfer' is not an Nsort statement"));
}

#[test]
fn a_comma_before_a_new_statement_is_still_an_empty_option() {
    assert_eq!(err("-in_file=/a, -stat"), "invalid statement '-in_file=/a,': empty option (two commas in a row, or a comma at an end)");
    assert_eq!(err("-in_file=/a,\n"), "invalid statement '-in_file=/a,': empty option (two commas in a row, or a comma at an end)");
    // Two commas around a blank are still two commas.
    assert!(err("-in_file=/a,direct, ,count=2").contains("empty option"));
    // Without a comma, a blank still ends a statement.
    assert!(err("-in_file=/a direct").contains("'direct' is not an Nsort statement"));
}

/// A directory for spec files, and a writer of them.
fn files() -> (tempfile::TempDir, impl Fn(&str, &str) -> String) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let write = move |name: &str, text: &str| {
        let p = root.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    (dir, write)
}

#[test]
fn specification_files_are_read_in_place_and_nest() {
    let (_d, write) = files();
    let io_file = write("io.spec", "# where the data is\n-in_file=/data/ns.dat,direct,\n   transfer_size=16M, count=64\n");
    let outer = write("sort.spec", &format!("-format=size:100\n-spec={io_file}   # prefix of -specification\n-memory=1G\n"));
    let s = ok(&format!("-processes=2 -specification={outer} -memory=2G"));
    assert_eq!(s.record_size, Some(100));
    assert_eq!(s.in_files, vec![io("/data/ns.dat", 16, 64, false)]);
    assert_eq!(s.processes, Some(2));
    // Statements apply in order: the outer 2G comes after the file's 1G.
    assert_eq!(s.memory, Some(MemorySize::Bytes(2 << 30)));
    // The same file twice, one after the other, is no loop.
    let twice = ok(&format!("-specification={io_file} -specification={io_file}"));
    assert_eq!(twice.in_files.len(), 2);
}

#[test]
fn an_error_in_a_file_names_the_file_and_line() {
    let (_d, write) = files();
    let inner = write("inner.spec", "-format=size:100\n\n-in_file=/a,\n   bogus\n");
    let outer = write("outer.spec", &format!("-stat\n-specification={inner}\n"));
    let e = err(&format!("-specification={outer}"));
    assert_eq!(e, format!("{inner}:3: invalid statement '-in_file=/a,bogus': unknown file option 'bogus'; expected one of direct, buffered, transfer_size, count, preallocate, sync, append"));
}

#[test]
fn a_file_that_includes_itself_is_an_error_naming_the_chain() {
    let (d, write) = files();
    let a = d.path().join("a.spec").display().to_string();
    write("a.spec", &format!("-stat -specification={a}\n"));
    let e = err(&format!("-specification={a}"));
    assert_eq!(e, format!("{a}:1: invalid statement '-specification={a}': '{a}' includes itself: {a} -> {a}"));

    // Indirectly, and through a different spelling of the same file.
    let b = d.path().join("b.spec").display().to_string();
    let a_again = d.path().join(".").join("a.spec").display().to_string();
    write("a.spec", &format!("-specification={b}\n"));
    write("b.spec", &format!("-stat\n-specification={a_again}\n"));
    let e = err(&format!("-specification={a}"));
    assert_eq!(e, format!("{b}:2: invalid statement '-specification={a_again}': '{a_again}' includes itself: {a} -> {b} -> {a_again}"));
}

#[test]
fn nesting_is_limited_and_missing_files_are_named() {
    let (d, write) = files();
    // f0 names f1, ..., each a different file: deeper than the limit.
    let name = |i: usize| d.path().join(format!("f{i}.spec")).display().to_string();
    for i in 0..=MAX_SPECIFICATION_DEPTH {
        write(&format!("f{i}.spec"), &format!("-specification={}\n", name(i + 1)));
    }
    write(&format!("f{}.spec", MAX_SPECIFICATION_DEPTH + 1), "-stat\n");
    let e = err(&format!("-specification={}", name(0)));
    assert!(e.contains(&format!("specification files nest more than {MAX_SPECIFICATION_DEPTH} deep: {} -> ", name(0))), "{e}");
    // At the limit (f2 to f17: 16 files) it works.
    let s = ok(&format!("-specification={}", name(2)));
    assert_eq!(s.statistics, Some(true));

    let missing = d.path().join("none.spec");
    assert_eq!(
        err(&format!("-specification={}", missing.display())),
        format!("invalid statement '-specification={0}': cannot read '{0}': No such file or directory", missing.display())
    );
    assert!(err("-specification").contains("-specification needs a value"));
    let bin = write("bin.spec", "");
    std::fs::write(Path::new(&bin), [0xff, 0xfe, b'\n']).unwrap();
    assert!(err(&format!("-specification={bin}")).contains("is not text"));
}
