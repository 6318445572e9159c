//! Property tests: partitions, permutations and crafted inputs against a
//! hand count (a plain loop over the records, written here independently).

use proptest::prelude::*;
use xsort_sortbench::{
    checksum_of, combine_summaries, fill_records, generated_checksum, record_crc, validate_bytes, Error, GenOptions, KeyOrder, Summary,
    ValidateOptions, REC_SIZE,
};

fn records(first: u128, count: usize, opts: GenOptions) -> Vec<u8> {
    let mut buf = vec![0u8; count * REC_SIZE];
    fill_records(&mut buf, first, opts);
    buf
}

fn any_opts() -> impl Strategy<Value = GenOptions> {
    (any::<bool>(), any::<bool>()).prop_map(|(ascii, skew)| GenOptions { ascii, skew })
}

/// Record numbers worth trying: small, near 2^64, near 2^128, anywhere.
fn any_start() -> impl Strategy<Value = u128> {
    prop_oneof![0u128..5_000, ((1u128 << 64) - 3_000)..((1u128 << 64) + 3_000), (u128::MAX - 3_000)..=u128::MAX, any::<u128>(),]
}

/// What valsort must report, counted the obvious way.
struct HandCount {
    first_unordered: Option<u128>,
    unordered: u128,
    duplicates: u128,
    checksum: u128,
}

fn hand_count(data: &[u8]) -> HandCount {
    let recs: Vec<&[u8]> = data.chunks(REC_SIZE).collect();
    let mut count = HandCount { first_unordered: None, unordered: 0, duplicates: 0, checksum: 0 };
    for (i, rec) in recs.iter().enumerate() {
        count.checksum += u128::from(record_crc(rec));
        if i == 0 {
            continue;
        }
        match recs[i - 1][..10].cmp(&rec[..10]) {
            std::cmp::Ordering::Equal => count.duplicates += 1,
            std::cmp::Ordering::Greater => {
                count.unordered += 1;
                count.first_unordered.get_or_insert(i as u128);
            }
            std::cmp::Ordering::Less => {}
        }
    }
    count
}

fn assert_matches_hand_count(s: &Summary, data: &[u8]) {
    let hand = hand_count(data);
    assert_eq!(s.records, (data.len() / REC_SIZE) as u128);
    assert_eq!(s.first_unordered, hand.first_unordered);
    assert_eq!(s.unordered, hand.unordered);
    assert_eq!(s.duplicates, hand.duplicates);
    assert_eq!(s.checksum, hand.checksum);
    assert_eq!(&s.first_record[..], &data[..REC_SIZE]);
    assert_eq!(&s.last_record[..], &data[data.len() - REC_SIZE..]);
}

fn sorted(data: &[u8]) -> Vec<u8> {
    let mut recs: Vec<&[u8]> = data.chunks_exact(REC_SIZE).collect();
    recs.sort_by(|a, b| a[..10].cmp(&b[..10]));
    recs.concat()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn partitions_concatenate_and_checksums_add(
        start in any_start(),
        sizes in prop::collection::vec(0usize..700, 1..5),
        opts in any_opts(),
    ) {
        let total: usize = sizes.iter().sum();
        let whole = records(start, total, opts);
        let mut joined = Vec::new();
        let mut sum = 0u128;
        let mut at = start;
        for &n in &sizes {
            joined.extend(records(at, n, opts));
            sum = sum.wrapping_add(generated_checksum(at, n as u64, opts));
            at = at.wrapping_add(n as u128);
        }
        prop_assert!(joined == whole);
        prop_assert_eq!(sum, checksum_of(&whole));
        prop_assert_eq!(sum, generated_checksum(start, total as u64, opts));
    }

    #[test]
    fn any_permutation_keeps_the_checksum(
        start in any_start(),
        opts in any_opts(),
        order in Just((0..300usize).collect::<Vec<_>>()).prop_shuffle(),
    ) {
        let data = records(start, order.len(), opts);
        let permuted: Vec<u8> =
            order.iter().flat_map(|&i| data[i * REC_SIZE..(i + 1) * REC_SIZE].to_vec()).collect();
        prop_assert_eq!(checksum_of(&permuted), checksum_of(&data));
    }

    #[test]
    fn one_swap_in_sorted_data(n in 2usize..400, pick in any::<prop::sample::Index>(), opts in any_opts()) {
        let mut data = sorted(&records(0, n, opts));
        let i = pick.index(n - 1);
        let (a, b) = data.split_at_mut((i + 1) * REC_SIZE);
        a[i * REC_SIZE..].swap_with_slice(&mut b[..REC_SIZE]);
        let s = validate_bytes(&data, &ValidateOptions::default()).expect("whole records");
        assert_matches_hand_count(&s, &data);
        prop_assert!(s.unordered <= 1);
    }

    #[test]
    fn crafted_keys_any_split(
        keys in prop::collection::vec(0u8..4, 1..300),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
        threads in 1usize..4,
    ) {
        // Few distinct keys: many duplicates and inversions, some at the cuts.
        let mut data = Vec::new();
        for (j, &k) in keys.iter().enumerate() {
            let mut rec = [k; REC_SIZE];
            rec[50..58].copy_from_slice(&(j as u64).to_le_bytes());
            data.extend_from_slice(&rec);
        }
        let opts = ValidateOptions { threads, ..Default::default() };
        let s = validate_bytes(&data, &opts).expect("whole records");
        assert_matches_hand_count(&s, &data);
        // Partition summaries, combined in order, give the same result.
        let mut bounds: Vec<usize> = cuts.iter().map(|c| c.index(keys.len())).collect();
        bounds.extend([0, keys.len()]);
        bounds.sort_unstable();
        bounds.dedup();
        let parts: Vec<Summary> = bounds
            .windows(2)
            .map(|w| validate_bytes(&data[w[0] * REC_SIZE..w[1] * REC_SIZE], &opts).expect("part"))
            .collect();
        let bytes: Vec<u8> = parts.iter().flat_map(|p| p.to_bytes()).collect();
        let combined = combine_summaries(parts, KeyOrder::Bytes).expect("one part or more");
        prop_assert_eq!(combined, s);
        prop_assert_eq!(xsort_sortbench::validate_summaries(&bytes, KeyOrder::Bytes).expect("parse"), s);
    }

    #[test]
    fn partial_records_are_refused(n in 0usize..20, extra in 1usize..100) {
        let mut data = records(0, n, GenOptions::default());
        data.extend(vec![0u8; extra]);
        let err = validate_bytes(&data, &ValidateOptions::default());
        prop_assert!(matches!(err, Err(Error::PartialRecord)));
    }
}

#[test]
fn empty_input_is_refused() {
    let err = validate_bytes(&[], &ValidateOptions::default());
    assert!(matches!(err, Err(Error::Empty)));
}

#[test]
fn duplicates_at_a_partition_boundary() {
    let mut data = sorted(&records(0, 200, GenOptions::default()));
    // Make records 99 and 100 (the last of part one, the first of part two) share a key.
    let key: Vec<u8> = data[99 * REC_SIZE..99 * REC_SIZE + 10].to_vec();
    data[100 * REC_SIZE..100 * REC_SIZE + 10].copy_from_slice(&key);
    let opts = ValidateOptions::default();
    let a = validate_bytes(&data[..100 * REC_SIZE], &opts).expect("part one");
    let b = validate_bytes(&data[100 * REC_SIZE..], &opts).expect("part two");
    assert_eq!((a.duplicates, b.duplicates), (0, 0));
    let whole = combine_summaries([a, b], KeyOrder::Bytes).expect("two parts");
    assert_eq!((whole.duplicates, whole.unordered), (1, 0));
    assert_matches_hand_count(&whole, &data);
}
