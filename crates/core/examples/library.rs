//! docs/LIBRARY.md's Rust example: xsort as a library (checked against docs/LIBRARY.md by
//! `crates/core/tests/readme.rs`, built and run by `cargo test`).

use xsort_core::{Sort, SortError};

fn main() -> Result<(), SortError> {
    // 100-byte records keyed on their first 10 bytes, released in any chunking and pulled back
    // sorted; past 64 MiB the sort spills to temp files and merges, as the xsort command does.
    let records: Vec<u8> = (0..1000u32).rev().flat_map(|i| format!("{i:010}{:>90}", "payload").into_bytes()).collect();
    let mut sorting = Sort::records(100).key_bytes("0:10")?.memory(64 << 20).threads(2).start()?;
    for chunk in records.chunks(4096) {
        sorting.push(chunk)?;
    }
    sorting.finish()?;
    let mut sorted = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = sorting.pull(&mut buf)?; // whole records only
        if n == 0 {
            break;
        }
        sorted.extend_from_slice(&buf[..n]);
    }
    assert!(sorted.chunks(100).zip(sorted.chunks(100).skip(1)).all(|(a, b)| a[..10] <= b[..10]));
    println!("{}", sorting.stats().map_or(String::new(), |s| s.render()));

    // Text lines with GNU sort's options, from memory into any writer.
    let mut out = Vec::new();
    let mut sorting = Sort::lines().gnu_args(["-t,", "-k2,2n", "-k1,1r"])?.start()?;
    sorting.push(b"b,2\na,10\nc,2\n")?;
    sorting.write_to(&mut out)?;
    assert_eq!(out, b"c,2\nb,2\na,10\n");

    // Records already in memory, sorted in place by a typed key (a big-endian i64 at offset 8).
    let mut rows: Vec<u8> = [7i64, -3, 42].iter().flat_map(|v| [*b"row:....", v.to_be_bytes()].concat()).collect();
    Sort::records(16).key_bytes("8:8:i64be")?.sort_slice(&mut rows)?;
    assert_eq!(rows[8..16], (-3i64).to_be_bytes());
    Ok(())
}
