//! README.md's Rust example, word for word after these lines (`tests/readme.rs` checks that README.md
//! shows it, and runs it). `cargo run --release -p xsort-core --example quickstart` runs it.

use xsort_core::{Sort, SortError};

fn main() -> Result<(), SortError> {
    // Text lines with GNU sort's options (`sort -t, -k2,2n -k1,1r`), from memory into any writer.
    let mut out = Vec::new();
    let mut sorting = Sort::lines().gnu_args(["-t,", "-k2,2n", "-k1,1r"])?.start()?;
    sorting.push(b"b,2\na,10\nc,2\n")?;
    sorting.write_to(&mut out)?;
    assert_eq!(out, b"c,2\nb,2\na,10\n");

    // 100-byte records already in memory, sorted in place on their first 10 bytes.
    let mut records: Vec<u8> = (0..1000u32).rev().flat_map(|i| format!("{i:010}{:>90}", "payload").into_bytes()).collect();
    Sort::records(100).key_bytes("0:10")?.sort_slice(&mut records)?;
    assert!(records.starts_with(b"0000000000"));
    println!("sorted {} records", records.len() / 100);
    Ok(())
}
