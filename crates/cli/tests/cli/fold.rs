//! Records with equal keys folded into one: `-u` and Nsort's `-noduplicates` keep the first of each
//! group (in input order), `-summarize` sums integer fields over the group; one pass and spilled,
//! checked against a reference computed here.

use crate::common::*;
use std::collections::BTreeMap;

const REC: usize = 16;

/// Records: a 2-byte key from a small alphabet (many duplicates), a 4-byte big-endian sequence
/// number, a 4-byte little-endian unsigned count, and padding.
fn records(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(n * REC);
    for i in 0..n {
        out.push(b"abcd"[rng.below(4)]);
        out.push(b"xyz"[rng.below(3)]);
        out.extend_from_slice(&(i as u32).to_be_bytes());
        out.extend_from_slice(&(rng.below(1000) as u32).to_le_bytes());
        out.extend_from_slice(&[b'.'; 6]);
    }
    out
}

/// The reference: per key (in order), the first record, with the count field summed when `sum`.
fn reference(data: &[u8], sum: bool) -> Vec<u8> {
    let mut groups: BTreeMap<[u8; 2], Vec<u8>> = BTreeMap::new();
    for rec in data.chunks(REC) {
        let key = [rec[0], rec[1]];
        match groups.get_mut(&key) {
            None => {
                groups.insert(key, rec.to_vec());
            }
            Some(first) if sum => {
                let total = u32::from_le_bytes(first[6..10].try_into().unwrap()) + u32::from_le_bytes(rec[6..10].try_into().unwrap());
                first[6..10].copy_from_slice(&total.to_le_bytes());
            }
            Some(_) => {}
        }
    }
    groups.into_values().flatten().collect()
}

fn fold_runs(extra: &[&str], sum: bool) {
    let fx = Fixture::new();
    let data = records(100_000, 7);
    fx.write("in", &data);
    let expect = reference(&data, sum);
    for spilled in [false, true] {
        let mut args = vec!["--record-size=16", "-o", "out", "--stats-json", "stats.json"];
        args.extend_from_slice(extra);
        if spilled {
            args.extend(["-S", TINY]);
        }
        args.push("in");
        ok(fx.cmd().args(&args));
        assert_eq!(std::fs::read(fx.path("out")).unwrap(), expect, "{args:?}");
        let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(fx.path("stats.json")).unwrap()).unwrap();
        assert_eq!(stats["runs"].as_u64().unwrap() > 1, spilled, "{stats}");
    }
    fx.assert_clean();
}

#[test]
fn unique_keeps_the_first_record_of_each_key() {
    fold_runs(&["--key-bytes=0:2", "-u"], false);
    fold_runs(&["--spec", "-field=name:k,off:0,size:2,character -key=k -noduplicates"], false);
}

#[test]
fn summarize_sums_the_named_fields() {
    fold_runs(
        &["--spec", "-field=name:k,off:0,size:2,character -field=name:n,off:6,size:4,unsigned,little_endian -key=k -summarize=n"],
        true,
    );
}

#[test]
fn summarize_overflow_keeps_records_apart_with_a_warning() {
    let fx = Fixture::new();
    fx.mkdir("t");
    // Key k: 200 + 200 would overflow the one-byte field, so would the next 200; 200 + 10 fits.
    // Many more records of other keys make the small budget spill.
    let mut data = b"k\xc8k\xc8j\x05k\xc8k\x0a".to_vec();
    for i in 0..300_000u32 {
        data.extend_from_slice(&[b'a' + (i % 7) as u8, 0]);
    }
    fx.write("in", &data);
    let spec = "-field=name:k,off:0,size:1 -field=name:n,off:1,size:1,unsigned -key=k -summarize=n";
    for memory in ["64M", "1M"] {
        let out =
            ok(fx.cmd().args(["--record-size=2", "-S", memory, "-T", "t", "--stats-json", "s.json", "--spec", spec, "-o", "out", "in"]));
        let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(fx.path("s.json")).unwrap()).unwrap();
        let written = std::fs::metadata(fx.path("out")).unwrap().len() / 2;
        assert_eq!((stat_u64(&stats, "records"), stat_u64(&stats, "records_written")), (data.len() as u64 / 2, written), "{memory}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("warning: -summarize: 2 records would have overflowed a summed field"), "{memory}: {stderr}");
        let sorted = std::fs::read(fx.path("out")).unwrap();
        let tail: Vec<&[u8]> = sorted.chunks(2).filter(|r| r[0] >= b'j').collect();
        assert_eq!(tail, [&b"j\x05"[..], b"k\xc8", b"k\xc8", b"k\xd2"], "{memory}");
        let kept: u64 = sorted.chunks(2).map(|r| u64::from(r[1])).sum();
        assert_eq!(kept, data.chunks(2).map(|r| u64::from(r[1])).sum::<u64>(), "{memory}: the sums lost a value");
    }
    let out = ok(fx.cmd().args(["--record-size=2", "--spec", spec, "--spec", "-nowarn", "-o", "out", "in"]));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    fx.write("out", b"keep");
    let msg = fail(fx.cmd().args(["--record-size=2", "--spec", "-field=name:k,off:0,size:1 -key=k -summarize=k", "-o", "out", "in"]));
    assert!(msg.contains("-summarize=k") && msg.contains("integer"), "{msg}");
    let msg = fail(fx.cmd().args(["--record-size=2", "--spec", "-field=name:k,off:0,size:1 -key=k -summarize=nope", "-o", "out", "in"]));
    assert!(msg.contains("nope"), "{msg}");
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), b"keep");
}

/// `records` (REC bytes each) in order, each after Nsort's `-match` byte: `1` when it equals the
/// one before in its first `same` bytes, else `0`.
fn marked(sorted: &[&[u8]], same: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, r) in sorted.iter().enumerate() {
        out.push(if i > 0 && sorted[i - 1][..same] == r[..same] { b'1' } else { b'0' });
        out.extend_from_slice(r);
    }
    out
}

#[test]
fn match_marks_each_record_against_the_one_before() {
    let fx = Fixture::new();
    fx.mkdir("t");
    let data = records(100_000, 11);
    fx.write("in", &data);
    let fields = "-field=name:a,off:0,size:1,character -field=name:b,off:1,size:1,character -key=a -key=b";
    let mut by_key: Vec<&[u8]> = data.chunks(REC).collect();
    by_key.sort_by_key(|r| [r[0], r[1]]); // stable, as xsort's fixed-size records with -noduplicates
    let mut first_of_each: Vec<&[u8]> = by_key.clone();
    first_of_each.dedup_by(|b, a| a[..2] == b[..2]);
    for memory in ["64M", TINY] {
        for (statements, want) in [
            ("-match", marked(&by_key, 2)),
            ("-match=2", marked(&by_key, 2)),
            ("-match=1", marked(&by_key, 1)),
            ("-match=1 -noduplicates", marked(&first_of_each, 1)),
        ] {
            let spec = format!("{fields} {statements}");
            let args = ["--record-size=16", "-S", memory, "-T", "t", "--spec", &spec, "-o", "out", "in"];
            ok(fx.cmd().args(args));
            assert!(std::fs::read(fx.path("out")).unwrap() == want, "{memory} {statements}: not the records in order after their marks");
        }
    }
    // Lines (separated records), in memory and spilled, and a merge of sorted inputs.
    let lines: Vec<String> =
        data.chunks(REC).map(|r| format!("{},{}\n", r[0] as char, u32::from_be_bytes(r[2..6].try_into().unwrap()) % 97)).collect();
    fx.write("lines", lines.concat().as_bytes());
    let mut sorted: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
    sorted.sort_by_key(|l| l[0]);
    let want = marked(&sorted, 1);
    for memory in ["64M", TINY] {
        ok(fx.cmd().args(["-S", memory, "-T", "t", "--spec", "-format=separator:comma -key=position:1 -match", "-o", "out", "lines"]));
        assert!(std::fs::read(fx.path("out")).unwrap() == want, "{memory}: lines not in order after their marks");
    }
    let (a, b) = sorted.split_at(sorted.len() / 3);
    fx.write("a", &a.concat());
    fx.write("b", &b.concat());
    ok(fx.cmd().args(["--spec", "-format=separator:comma -key=position:1 -merge -match", "-o", "out", "a", "b"]));
    let mut merged = sorted.clone();
    merged.sort_by_key(|l| l[0]);
    assert!(std::fs::read(fx.path("out")).unwrap() == marked(&merged, 1), "a merge's lines not in order after their marks");
    // Statements that give no record format, with GNU's options (as `nsort -match -t, -k1,1 in`):
    // lines in GNU's order (ties by the whole line), marked by the -k keys.
    let mut gnu: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
    gnu.sort_by(|a, b| a[0].cmp(&b[0]).then_with(|| a.cmp(b)));
    ok(fx.cmd().args(["--spec", "-memory=8m -match", "-t,", "-k1,1", "-o", "out", "lines"]));
    assert!(std::fs::read(fx.path("out")).unwrap() == marked(&gnu, 1), "GNU-ordered lines not in order after their marks");
    // More keys than the sort has, and a count of none, are refused.
    for (bad, why) in [("-match=3", "-match=3: the sort has 2 keys"), ("-match=0", "at least 1")] {
        let msg = fail(fx.cmd().args(["--record-size=16", "--spec", &format!("{fields} {bad}"), "-o", "out", "in"]));
        assert!(msg.contains(why), "{bad}: {msg}");
    }
    fx.assert_clean();
}
