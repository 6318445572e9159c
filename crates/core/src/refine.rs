//! The refinement of ties, one driver for every framing: entries sorted as integers by a key
//! prefix leave groups whose prefixes are equal; each group is put in order by the key's next
//! level, MSD-style, as Nsort and psort refine ties. The next level's prefix of each entry's
//! record replaces the entry's prefix, the group is sorted again as integers, and each run that
//! still ties is refined by the level after, until the key is used up. Locations stay in the
//! entries' low bits and grow with input order, so full ties keep input order: the sort is
//! stable. Small groups are compared record by record instead.
//!
//! A framing says what its levels are through [`Tied`]. Fixed-size records ([`crate::entry`])
//! cut the normalized key into windows as wide as the entry's prefix: equal windows are equal
//! key bytes, so a tied group always goes one level down. Lines ([`crate::text`]) have the
//! order's key levels (`-k` keys one after the other), whose prefixes are not exact: a group is
//! refined by the next level only when its lines are in fact equal at this one, and otherwise
//! sorted by comparing lines.

use rayon::prelude::*;
use std::cmp::Ordering;
use std::sync::atomic::{AtomicBool, Ordering as Atomic};
use xsort_kernels::Method;

/// A test of entries' records against one fixed entry's at one level.
pub(crate) type EntryMatcher<'a> = Box<dyn Fn(u128) -> bool + Sync + 'a>;

/// One framing's entries as the refinement sees them.
pub(crate) trait Tied: Sync {
    /// The kernel that sorts entries by their prefixes.
    fn method(&self) -> Method;
    /// A flag that stops the refinement, leaving entries in unspecified contents once set.
    fn stop(&self) -> &AtomicBool;
    /// The low bits of an entry that locate its record; the refinement keeps them.
    fn location_mask(&self) -> u128;
    /// How many levels the key has: records equal at every level are equal.
    fn levels(&self) -> usize;
    /// Bytes of the prefix an entry holds at `level`, at the top of the entry.
    fn prefix_bytes(&self, level: usize) -> usize;
    /// The prefix of `e`'s record at `level` (at least 1), in the entry's top bits.
    fn level_prefix(&self, e: u128, level: usize) -> u128;
    /// A test for entries whose records equal `first`'s at `level`, or None when equal prefixes at
    /// that level already are equal records there.
    fn level_matcher(&self, first: u128, level: usize) -> Option<EntryMatcher<'_>>;
    /// The full order of two entries' records.
    fn compare(&self, a: u128, b: u128) -> Ordering;
    /// Asks the CPU for `e`'s record, which is read soon.
    fn prefetch(&self, e: u128);
    /// Whether [`Tied::compare`] is a total order xsort vouches for; false where a program's own
    /// function decides (Nsort's `compare=NAME`), which may be inconsistent: groups are then
    /// sorted by [`merge_sort_untrusted`].
    fn compare_is_trusted(&self) -> bool {
        true
    }
    /// Appends to `out` bytes of `e`'s record whose order never contradicts `level`'s (see
    /// [`crate::framing::RecordOrder::level_transform`]); whether they are reversed, or None.
    fn level_transform(&self, e: u128, level: usize, out: &mut Vec<u8>) -> Option<bool> {
        let _ = (e, level, out);
        None
    }
}

/// Groups of tied entries at most this long are put in order by comparing their records.
pub(crate) const COMPARE_MAX: usize = 16;

/// Below this many entries a job is not worth splitting across threads.
const PAR_MIN: usize = 1 << 14;

/// Entries (or lines) ahead whose records are fetched while the current one's is read: entries
/// in key order visit records scattered over the buffer, each a cache (and often TLB) miss.
pub(crate) const PREFETCH_AHEAD: usize = 16;

/// Puts each group of `entries` (sorted by their prefix at level 0) whose prefixes are equal in
/// order by the full key; `scratch` is working space as long as `entries`. Each entry gets back
/// its level-0 prefix afterwards (merges of sorted entries compare them): only locations move.
pub(crate) fn sort_ties<T: Tied>(t: &T, entries: &mut [u128], scratch: &mut [u128]) {
    sort_groups(t, entries, scratch, 0);
}

/// Refines every group of `entries` whose prefixes at `level` are equal: big groups one after the
/// other (each on every thread), small ones in parallel batches. At level 0 each group's prefix
/// is put back afterwards.
fn sort_groups<T: Tied>(t: &T, entries: &mut [u128], scratch: &mut [u128], level: usize) {
    let groups = xsort_kernels::equal_prefix_runs(entries, (t.prefix_bytes(level) * 8) as u32);
    let refine_one = |group: &mut [u128], work: &mut [u128]| {
        let prefix = group[0] & !t.location_mask();
        refine(t, group, work, level);
        if level == 0 {
            for e in group.iter_mut() {
                *e = prefix | (*e & t.location_mask());
            }
        }
    };
    let mut small = Vec::with_capacity(groups.len());
    for (group, work) in split_groups(entries, scratch, &groups) {
        if group.len() >= PAR_MIN {
            refine_one(group, work);
        } else {
            small.push((group, work));
        }
    }
    // Small groups in parallel batches, each group's records fetched a few groups ahead.
    const AHEAD: usize = 4;
    let batch = small.len().div_ceil(4 * rayon::current_num_threads()).clamp(1, PAR_MIN / 16);
    small.par_chunks_mut(batch).for_each(|batch| {
        for i in 0..batch.len() {
            if t.stop().load(Atomic::Relaxed) {
                return;
            }
            if let Some((ahead, _)) = batch.get(i + AHEAD) {
                ahead.iter().for_each(|&e| t.prefetch(e));
            }
            let (group, work) = &mut batch[i];
            refine_one(group, work);
        }
    });
}

/// Orders a group of entries whose prefixes at `level` are equal (see the module doc). One visit
/// per record (each a cache miss: the group is in key order, not memory order) checks that it
/// equals the first at this level and re-keys it with the next level's prefix.
fn refine<T: Tied>(t: &T, group: &mut [u128], work: &mut [u128], level: usize) {
    let location = |e: u128| e & t.location_mask();
    let big = group.len() >= PAR_MIN;
    if t.stop().load(Atomic::Relaxed) {
        return;
    }
    if group.len() <= COMPARE_MAX {
        sort_by_record(t, group, level);
        return;
    }
    let next = level + 1;
    let last = next >= t.levels();
    let matcher = t.level_matcher(group[0], level);
    if last && matcher.is_none() {
        // Equal at every level: input order.
        group.sort_unstable_by_key(|&e| location(e));
        return;
    }
    let common = group[0] & !t.location_mask();
    let visit_all = |part: &mut [u128]| {
        // Every entry is visited (it is re-keyed) unless this is the last level, but the matcher
        // (which may be costly: a locale's collation) only until one record differs.
        let mut equal = true;
        for i in 0..part.len() {
            if let Some(&ahead) = part.get(i + PREFETCH_AHEAD) {
                t.prefetch(ahead);
            }
            let e = part[i];
            equal = equal && matcher.as_ref().is_none_or(|m| m(e));
            if !last {
                part[i] = t.level_prefix(e, next) | location(e);
            } else if !equal {
                break;
            }
        }
        equal
    };
    let all_equal = if big { group.par_chunks_mut(PAR_MIN).map(visit_all).reduce(|| true, |a, b| a && b) } else { visit_all(group) };
    if !all_equal {
        if !last {
            group.iter_mut().for_each(|e| *e = common | location(*e));
        }
        sort_by_record(t, group, level);
        return;
    }
    if last {
        group.sort_unstable_by_key(|&e| location(e));
        return;
    }
    if big {
        if !xsort_kernels::sort_entries_until(t.method(), group, work, t.prefix_bytes(next), t.stop()) {
            return;
        }
    } else {
        group.sort_unstable();
    }
    sort_groups(t, group, work, next);
}

/// Groups of ties at least this long are ordered by the level's transform, where it has one.
const TRANSFORM_MIN: usize = 4;

/// The most bytes of transforms one group of ties holds (beside the budget): a bigger group is
/// ordered by comparing records.
const TRANSFORM_BYTES: usize = 8 << 20;

/// Puts a group of entries, equal at the levels before `level`, in order by their records (ties in
/// input order). Where `level` has a transform ([`Tied::level_transform`]), each record's is made
/// once and the group is sorted by the transforms, comparing records only where they are equal.
fn sort_by_record<T: Tied>(t: &T, group: &mut [u128], level: usize) {
    let location = |e: u128| e & t.location_mask();
    let by_record = |a: &u128, b: &u128| t.compare(*a, *b).then(location(*a).cmp(&location(*b)));
    if !t.compare_is_trusted() {
        return merge_sort_untrusted(group, &by_record);
    }
    if group.len() >= TRANSFORM_MIN && group.len() * 24 < TRANSFORM_BYTES {
        if let Some((keyed, bytes, reversed)) = transforms(t, group, level) {
            let by_transform = |a: &(usize, usize, u128), b: &(usize, usize, u128)| {
                let o = bytes[a.0..a.1].cmp(&bytes[b.0..b.1]);
                if reversed { o.reverse() } else { o }.then_with(|| by_record(&a.2, &b.2))
            };
            let mut keyed = keyed;
            if group.len() >= PAR_MIN {
                keyed.par_sort_unstable_by(by_transform);
            } else {
                keyed.sort_unstable_by(by_transform);
            }
            group.iter_mut().zip(&keyed).for_each(|(e, k)| *e = k.2);
            return;
        }
    }
    if group.len() >= PAR_MIN {
        group.par_sort_unstable_by(by_record);
    } else {
        group.sort_unstable_by(by_record);
    }
}

/// Runs of this many elements are sorted by insertion before [`merge_sort_untrusted`] merges them.
const UNTRUSTED_RUN: usize = 16;

/// Sorts `v` stably by `cmp` without trusting it to be a total order (a program's own comparison
/// function): a bottom-up merge sort, each pass's merges in parallel, which neither recurses nor
/// checks the order, so that an inconsistent `cmp` gives some order of the same elements, never
/// a panic or an unbounded recursion (the standard library's sorts may panic on such an order).
pub(crate) fn merge_sort_untrusted<T: Copy + Send + Sync>(v: &mut [T], cmp: &(impl Fn(&T, &T) -> Ordering + Sync)) {
    let n = v.len();
    let insertion = |run: &mut [T]| {
        for i in 1..run.len() {
            let mut j = i;
            while j > 0 && cmp(&run[j], &run[j - 1]) == Ordering::Less {
                run.swap(j, j - 1);
                j -= 1;
            }
        }
    };
    if n <= UNTRUSTED_RUN {
        return insertion(v);
    }
    v.par_chunks_mut(UNTRUSTED_RUN).for_each(insertion);
    let mut buf = v.to_vec();
    let pass = |src: &[T], dst: &mut [T], width: usize| {
        dst.par_chunks_mut(2 * width).zip(src.par_chunks(2 * width)).for_each(|(d, s)| {
            let (a, b) = s.split_at(width.min(s.len()));
            let (mut i, mut j) = (0, 0);
            for out in d.iter_mut() {
                // Equal elements: the first run's first, so the sort is stable.
                let from_b = i == a.len() || (j < b.len() && cmp(&b[j], &a[i]) == Ordering::Less);
                *out = if from_b { b[j] } else { a[i] };
                if from_b {
                    j += 1;
                } else {
                    i += 1;
                }
            }
        })
    };
    let (mut width, mut in_v) = (UNTRUSTED_RUN, true);
    while width < n {
        if in_v {
            pass(v, &mut buf, width);
        } else {
            pass(&buf, v, width);
        }
        (width, in_v) = (width * 2, !in_v);
    }
    if !in_v {
        v.copy_from_slice(&buf);
    }
}

/// Each entry of `group` with its record's transform at `level` (a range of the returned bytes),
/// and whether the level is reversed; None when the level has none for some record, or when the
/// transforms outgrow [`TRANSFORM_BYTES`].
type Keyed = (Vec<(usize, usize, u128)>, Vec<u8>, bool);
fn transforms<T: Tied>(t: &T, group: &[u128], level: usize) -> Option<Keyed> {
    let mut bytes = Vec::new();
    let reversed = t.level_transform(group[0], level, &mut bytes)?;
    let mut keyed = Vec::with_capacity(group.len());
    keyed.push((0, bytes.len(), group[0]));
    for &e in &group[1..] {
        let start = bytes.len();
        t.level_transform(e, level, &mut bytes)?;
        if bytes.len() + keyed.capacity() * 24 > TRANSFORM_BYTES {
            return None;
        }
        keyed.push((start, bytes.len(), e));
    }
    Some((keyed, bytes, reversed))
}

/// The `groups` (ascending, disjoint index ranges) of `entries`, each with the same range of
/// `scratch`.
pub(crate) fn split_groups<'a, E>(
    mut entries: &'a mut [E],
    mut scratch: &'a mut [E],
    groups: &[std::ops::Range<usize>],
) -> Vec<(&'a mut [E], &'a mut [E])> {
    let mut consumed = 0;
    let mut slices = Vec::with_capacity(groups.len());
    for g in groups {
        let (_, from_start) = std::mem::take(&mut entries).split_at_mut(g.start - consumed);
        let (group, after) = from_start.split_at_mut(g.len());
        let (_, work_from) = std::mem::take(&mut scratch).split_at_mut(g.start - consumed);
        let (work, work_after) = work_from.split_at_mut(g.len());
        consumed = g.end;
        (entries, scratch) = (after, work_after);
        slices.push((group, work));
    }
    slices
}

#[cfg(test)]
mod tests {
    use super::merge_sort_untrusted;
    use std::cmp::Ordering;
    use std::sync::atomic::{AtomicU64, Ordering as Atomic};

    #[test]
    fn the_untrusted_sort_is_stable_and_survives_any_order() {
        for n in [0usize, 1, 15, 16, 17, 100, 1000, 70_000] {
            let v: Vec<(u32, usize)> = (0..n).map(|i| ((i as u32).wrapping_mul(2_654_435_761) % 97, i)).collect();
            let mut got = v.clone();
            merge_sort_untrusted(&mut got, &|a: &(u32, usize), b: &(u32, usize)| a.0.cmp(&b.0));
            let mut want = v.clone();
            want.sort_by_key(|e| e.0); // stable
            assert_eq!(got, want, "n {n}");
            // Orders that are none: always less, always greater, random. Some order of the same
            // elements comes back, with no panic.
            let state = AtomicU64::new(n as u64 + 1);
            let random = |_: &(u32, usize), _: &(u32, usize)| {
                let x = state.fetch_add(0x9E37_79B9_7F4A_7C15, Atomic::Relaxed);
                [Ordering::Less, Ordering::Equal, Ordering::Greater][(x >> 61) as usize % 3]
            };
            for order in [
                &(|_: &(u32, usize), _: &(u32, usize)| Ordering::Less) as &(dyn Fn(&(u32, usize), &(u32, usize)) -> Ordering + Sync),
                &|_, _| Ordering::Greater,
                &random,
            ] {
                let mut got = v.clone();
                merge_sort_untrusted(&mut got, &order);
                got.sort_by_key(|e| e.1);
                assert_eq!(got, v, "n {n}: not a permutation");
            }
        }
    }
}
