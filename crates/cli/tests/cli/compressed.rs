//! Compressed inputs and outputs: gzip, zstd, bzip2 and xz files made by the system's own tools are
//! read (recognised by their first bytes, as files, through standard input, several of different
//! kinds at once, as members or frames concatenated), and outputs are written in the format their
//! name or `--compress` asks for and read back by those tools. Corrupt and truncated inputs are
//! errors naming the file, with nothing at the target and no temp file left.

use crate::common::*;
use std::path::Path;
use std::process::{Command, Stdio};

/// The formats: their tool, its options to compress to standard output, and the extension.
const FORMATS: [(&str, &str); 4] = [("gzip", "gz"), ("zstd", "zst"), ("bzip2", "bz2"), ("xz", "xz")];

/// `data` compressed by the system's `tool`.
fn compress_with(tool: &str, data: &[u8]) -> Vec<u8> {
    pipe_through(Command::new(tool).args(["-c", "-q"]), data)
}

/// The decompressed content of the file at `path`, by the system's `tool`.
fn decompress_with(tool: &str, path: &Path) -> Vec<u8> {
    let out = Command::new(tool).args(["-d", "-c", "-q"]).arg(path).output().unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(out.status.success(), "{tool} -d {}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn pipe_through(cmd: &mut Command, data: &[u8]) -> Vec<u8> {
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    let data = data.to_vec();
    let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &data));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "{cmd:?} failed");
    out.stdout
}

/// `n` lines of words, unsorted.
fn text(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for _ in 0..n {
        for w in 0..1 + rng.below(4) {
            if w > 0 {
                out.push(b' ');
            }
            out.extend((0..1 + rng.below(8)).map(|_| b'a' + rng.below(26) as u8));
        }
        out.push(b'\n');
    }
    out
}

#[test]
fn every_format_is_read_and_written_and_the_tools_read_the_output() {
    let fx = Fixture::new();
    let data = text(30_000, 1);
    let want = sorted_lines(&data);
    for (i, (tool, ext)) in FORMATS.iter().enumerate() {
        fx.write(&format!("in.{ext}"), &compress_with(tool, &data));
        // Each input format, written in the next format (and the plain output too).
        let (out_tool, out_ext) = FORMATS[(i + 1) % FORMATS.len()];
        let out = format!("out.{out_ext}");
        ok(fx.cmd().args(["-o", &out, &format!("in.{ext}")]));
        assert_eq!(decompress_with(out_tool, &fx.path(&out)), want, "{tool} in, {out_tool} out");
        let plain = ok(fx.cmd().arg(format!("in.{ext}"))).stdout;
        assert_eq!(plain, want, "{tool} in, plain out");
    }
    fx.assert_clean();
}

#[test]
fn inputs_of_every_kind_at_once_with_members_and_frames_concatenated() {
    let fx = Fixture::new();
    let mut all = Vec::new();
    let mut args = Vec::new();
    for (k, (tool, ext)) in FORMATS.iter().enumerate() {
        // Two streams of the format back to back in one file, as `cat a.gz b.gz` makes.
        let (a, b) = (text(2_000, 10 + k as u64), text(3_000, 20 + k as u64));
        let joined = [compress_with(tool, &a), compress_with(tool, &b)].concat();
        fx.write(&format!("two.{ext}"), &joined);
        args.push(format!("two.{ext}"));
        all.extend(a);
        all.extend(b);
    }
    let plain = text(1_000, 30);
    fx.write("plain", &plain);
    all.extend(&plain);
    args.push("plain".into());
    let out = ok(fx.cmd().args(&args)).stdout;
    assert_eq!(out, sorted_lines(&all));
    fx.assert_clean();
}

#[test]
fn standard_input_is_decompressed_and_named_files_are_recognised_by_content_not_name() {
    let fx = Fixture::new();
    let data = text(5_000, 2);
    let want = sorted_lines(&data);
    for (tool, _) in FORMATS {
        let packed = compress_with(tool, &data);
        assert_eq!(ok_with_stdin(&mut fx.cmd(), Some(&packed)).stdout, want, "{tool} on standard input");
        // A compressed file under a plain name, and `-` among files.
        fx.write("data.txt", &packed);
        assert_eq!(ok_with_stdin(fx.cmd().args(["data.txt"]), None).stdout, want, "{tool} named .txt");
    }
    // A plain file named .gz is read as it is.
    fx.write("plain.gz", &data);
    assert_eq!(ok(fx.cmd().arg("plain.gz")).stdout, want);
    fx.assert_clean();
}

#[test]
fn output_compression_follows_the_name_or_the_option() {
    let fx = Fixture::new();
    let data = text(10_000, 3);
    let want = sorted_lines(&data);
    fx.write("in", &data);
    // --compress wins over the name, reaches standard output, and takes a level.
    ok(fx.cmd().args(["--compress=none", "-o", "plain.gz", "in"]));
    assert_eq!(std::fs::read(fx.path("plain.gz")).unwrap(), want);
    let out = ok(fx.cmd().args(["--compress=zstd:19", "in"])).stdout;
    fx.write("stdout.zst", &out);
    assert_eq!(decompress_with("zstd", &fx.path("stdout.zst")), want);
    ok(fx.cmd().args(["--compress=xz:0", "-o", "out.txt", "in"]));
    assert_eq!(decompress_with("xz", &fx.path("out.txt")), want);
    // Bad values are usage errors.
    let e = fail(fx.cmd().args(["--compress=gzip:10", "in"]));
    assert!(e.contains("invalid --compress 'gzip:10': gzip levels go from 1 to 9"), "{e}");
    let e = fail(fx.cmd().args(["--compress=lz4", "in"]));
    assert!(e.contains("unknown compressed format 'lz4' (known: gzip, zstd, bzip2, xz)"), "{e}");
    fx.assert_clean();
}

#[test]
fn an_empty_output_is_a_valid_compressed_file_and_empty_compressed_inputs_are_empty() {
    let fx = Fixture::new();
    fx.write("empty", b"");
    for (tool, ext) in FORMATS {
        let out = format!("out.{ext}");
        ok(fx.cmd().args(["-o", &out, "empty"]));
        assert_eq!(decompress_with(tool, &fx.path(&out)), b"", "{tool}");
        fx.write(&format!("empty.{ext}"), &compress_with(tool, b""));
        assert_eq!(ok(fx.cmd().arg(format!("empty.{ext}"))).stdout, b"", "{tool}");
    }
    fx.assert_clean();
}

#[test]
fn truncated_and_corrupt_inputs_fail_naming_the_file_with_nothing_at_the_target() {
    let fx = Fixture::new();
    let data = text(60_000, 4);
    for (tool, ext) in FORMATS {
        let packed = compress_with(tool, &data);
        let name = format!("cut.{ext}");
        fx.write(&name, &packed[..packed.len() * 3 / 4]);
        let e = fail(fx.cmd().args(["-o", "out", &name]));
        assert!(e.starts_with(&format!("xsort: {name}: truncated {tool} data: it ends at byte ")), "{e}");
        assert!(!fx.path("out").exists(), "{tool}: an output appeared");
        let mut bad = packed.clone();
        let mid = bad.len() / 2;
        bad[mid..mid + 100].iter_mut().for_each(|b| *b = !*b);
        let name = format!("bad.{ext}");
        fx.write(&name, &bad);
        // Spilling too (a tiny budget): the runs written before the error are removed.
        let e = fail(fx.cmd().args(["-S", TINY, "-o", "out", &name]));
        assert!(e.starts_with(&format!("xsort: {name}: corrupt {tool} data, found ")), "{e}");
        assert!(!fx.path("out").exists(), "{tool}: an output appeared");
    }
    fx.assert_clean();
}

#[test]
fn records_merges_checks_and_spills_read_compressed_inputs() {
    let fx = Fixture::new();
    let sum = gensort(&fx.path("rec"), 0, 20_000, false);
    let records = std::fs::read(fx.path("rec")).unwrap();
    fx.write("rec.zst", &compress_with("zstd", &records));
    // Fixed-size records, spilled under a small budget, into a gzip output.
    ok(fx.cmd().args(["--record-size=100", "--key-bytes=0:10", "-S", TINY, "-o", "sorted.gz", "rec.zst"]));
    fx.write("sorted", &decompress_with("gzip", &fx.path("sorted.gz")));
    assert_valsort_clean(&fx.path("sorted"), 20_000, sum);
    // A merge of sorted compressed inputs, and a check of one.
    let (a, b) = (sorted_lines(&text(3_000, 5)), sorted_lines(&text(3_000, 6)));
    fx.write("a.gz", &compress_with("gzip", &a));
    fx.write("b.xz", &compress_with("xz", &b));
    assert_eq!(ok(fx.cmd().args(["-m", "a.gz", "b.xz"])).stdout, sorted_lines(&[a.clone(), b].concat()));
    ok(fx.cmd().args(["-c", "a.gz"]));
    fx.write("unsorted.bz2", &compress_with("bzip2", b"b\na\n"));
    let out = run(fx.cmd().args(["-c", "unsorted.bz2"]));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "xsort: unsorted.bz2:2: disorder: a\n");
    fx.assert_clean();
}

#[test]
fn no_decompress_sorts_the_bytes_as_they_are() {
    let fx = Fixture::new();
    fx.write("in.gz", &compress_with("gzip", &text(2_000, 7)));
    let raw = ok(fx.cmd().args(["--no-decompress", "in.gz"])).stdout;
    let gnu = Command::new("sort").arg("in.gz").env("LC_ALL", "C").current_dir(fx.root()).output().unwrap();
    assert!(gnu.status.success());
    assert_eq!(raw, gnu.stdout, "as GNU sort reads it");
    fx.assert_clean();
}
