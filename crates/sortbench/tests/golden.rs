//! Golden tests: the reference tools' outputs listed in FORMAT.md, reproduced
//! through the library (the binaries get the same through `cli.rs`).
//!
//! Checksums up to 2*10^7 records run here (a few CPU-seconds in all); the
//! 10^8 and 10^9 rows are `#[ignore]`d and run with `--ignored`.

use xsort_sortbench::{checksum_of, fill_records, generated_checksum, validate_bytes, GenOptions, Summary, ValidateOptions, REC_SIZE};

const BINARY: GenOptions = GenOptions { ascii: false, skew: false };
const ASCII: GenOptions = GenOptions { ascii: true, skew: false };
const SKEW: GenOptions = GenOptions { ascii: false, skew: true };
const ASCII_SKEW: GenOptions = GenOptions { ascii: true, skew: true };

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn generate(first: u128, count: usize, opts: GenOptions) -> Vec<u8> {
    let mut buf = vec![0u8; count * REC_SIZE];
    fill_records(&mut buf, first, opts);
    buf
}

fn sum_hex(first: u128, count: u64, opts: GenOptions) -> String {
    format!("{:x}", generated_checksum(first, count, opts))
}

#[test]
fn first_binary_record() {
    let data = generate(0, 1, BINARY);
    assert_eq!(
        hex(&data),
        "4a696d4772617952495065080060836b392cd58b8f5e55961855e79b87f02283a466b6aa\
         b1f9e0cacf1e26b3292afd1064bb18b56ac07d6f656b1d2f430d57bde7e47d81f36a6dd2\
         67948bbc2397bfe28c334e4ad82b8e70166293cfaa0116bfda3bb1ab"
    );
    assert_eq!(&data[..10], b"JimGrayRIP");
}

#[test]
fn first_ascii_records() {
    let data = generate(0, 3, ASCII);
    let expect = "\
AsfAGHM5om  00000000000000000000000000000000  0000222200002222000022220000222200002222000000001111\r\n\
~sHd0jDv6X  00000000000000000000000000000001  77779999444488885555CCCC777755555555BBBB666644446666\r\n\
uI^EYm8s=|  00000000000000000000000000000002  CCCCFFFF777799995555FFFF11112222999988884444DDDDFFFF\r\n";
    assert_eq!(String::from_utf8_lossy(&data), expect);
}

#[test]
fn checksums_1000_and_3000() {
    assert_eq!(sum_hex(0, 1000, BINARY), "1ea6370b955");
    assert_eq!(sum_hex(0, 1000, ASCII), "1f5dfb3631a");
    assert_eq!(sum_hex(0, 1000, SKEW), "1e96301166b");
    assert_eq!(sum_hex(0, 3000, BINARY), "5d28248a65f");
    assert_eq!(sum_hex(0, 3000, ASCII), "5e03884acd8");
    assert_eq!(sum_hex(0, 3000, SKEW), "5cbadc00e0c");
    assert_eq!(sum_hex(0, 3000, ASCII_SKEW), "5cd2c24200d");
}

#[test]
fn checksums_of_materialised_records_agree() {
    for opts in [BINARY, ASCII, SKEW, ASCII_SKEW] {
        let data = generate(0, 3000, opts);
        assert_eq!(checksum_of(&data), generated_checksum(0, 3000, opts), "{opts:?}");
    }
}

#[test]
fn checksums_one_million() {
    assert_eq!(sum_hex(0, 1_000_000, BINARY), "7a0e0d4868cd4");
    assert_eq!(sum_hex(0, 1_000_000, ASCII), "7a19cff467438");
    assert_eq!(sum_hex(0, 1_000_000, SKEW), "79f9a7e6de673");
    assert_eq!(sum_hex(0, 1_000_000, ASCII_SKEW), "7a135fbce6df2");
}

#[test]
fn checksums_twenty_million() {
    assert_eq!(sum_hex(0, 20_000_000, BINARY), "9895a07fd554e5");
    assert_eq!(sum_hex(0, 20_000_000, ASCII), "98923e9cff98ac");
}

#[test]
#[ignore = "10 GB of records in each of two modes: several CPU-seconds"]
fn checksums_ten_gigabytes() {
    assert_eq!(sum_hex(0, 100_000_000, BINARY), "2faf4162801872c");
    assert_eq!(sum_hex(0, 100_000_000, ASCII), "2faf0ab746e89a8");
}

#[test]
#[ignore = "100 GB of records in each of two modes: about half a CPU-minute"]
fn checksums_hundred_gigabytes() {
    assert_eq!(sum_hex(0, 1_000_000_000, BINARY), "1dcd7f0bb4142463");
    assert_eq!(sum_hex(0, 1_000_000_000, SKEW), "1dcd8124292c1127");
}

#[test]
fn partition_pair_adds_up() {
    let a = generated_checksum(0, 500, BINARY);
    let b = generated_checksum(500, 500, BINARY);
    assert_eq!(format!("{a:x}"), "f63842aeda");
    assert_eq!(format!("{b:x}"), "f42b2e0a7b");
    assert_eq!(format!("{:x}", a + b), "1ea6370b955");
    let whole = generate(0, 1000, BINARY);
    assert_eq!(generate(500, 500, BINARY), whole[500 * REC_SIZE..]);
}

#[test]
fn unsorted_thousand_report() {
    let data = generate(0, 1000, BINARY);
    let s = validate_bytes(&data, &ValidateOptions::default()).expect("whole records");
    assert_eq!(
        s.report(),
        "First unordered record is record 2\n\
         Records: 1000\n\
         Checksum: 1ea6370b955\n\
         ERROR - there are 483 unordered records\n"
    );
    assert_eq!(s.exit_code(), 1);
}

/// Sorts 100-byte records by their 10-byte key, stably.
pub fn sort_records(data: &[u8]) -> Vec<u8> {
    let mut recs: Vec<&[u8]> = data.chunks_exact(REC_SIZE).collect();
    recs.sort_by(|a, b| a[..10].cmp(&b[..10]));
    recs.concat()
}

#[test]
fn sorted_million_duplicates() {
    // FORMAT.md: sorted 10^6 records of -a -s hold 35 duplicate keys; -s none.
    for (opts, dups) in [(ASCII_SKEW, 35), (SKEW, 0), (BINARY, 0)] {
        let sorted = sort_records(&generate(0, 1_000_000, opts));
        let s = validate_bytes(&sorted, &ValidateOptions::default()).expect("whole records");
        assert_eq!((s.unordered, s.duplicates), (0, dups), "{opts:?}");
        assert_eq!(s.checksum, generated_checksum(0, 1_000_000, opts));
    }
}

#[test]
fn partition_summaries_out_of_order() {
    let sorted = sort_records(&generate(0, 1_000_000, BINARY));
    let part = 250_000 * REC_SIZE;
    let sums: Vec<Summary> = sorted.chunks(part).map(|p| validate_bytes(p, &ValidateOptions::default()).expect("whole records")).collect();
    let mut bad = Vec::new();
    for k in [3, 0, 1, 2] {
        bad.extend_from_slice(&sums[k].to_bytes());
    }
    let s = xsort_sortbench::validate_summaries(&bad, Default::default()).expect("summaries");
    assert_eq!(
        s.report(),
        "First unordered record is record 250000\n\
         Records: 1000000\n\
         Checksum: 7a0e0d4868cd4\n\
         ERROR - there are 1 unordered records\n"
    );
    let good = xsort_sortbench::combine_summaries(sums, Default::default()).expect("four parts");
    assert_eq!(good.report(), "Records: 1000000\nChecksum: 7a0e0d4868cd4\nDuplicate keys: 0\nSUCCESS - all records are in order\n");
}
