//! A tournament (loser) tree for k-way merging.
//!
//! The tree stores only source indices; the caller owns the sources and
//! answers "does source i's head order strictly before source j's?" through
//! a closure. Each internal node keeps the loser of the match played there,
//! so after the winner's head changes only its path to the root is
//! replayed: about log2(k) comparisons per output item, against 2 log2(k)
//! for a binary heap.
//!
//! Layout: for k sources the tree has k - 1 internal nodes at indices
//! 1..k (node n has children 2n and 2n + 1) and k leaves at indices k..2k,
//! leaf k + s standing for source s. Every internal node has exactly two
//! children for any k, so k need not be a power of two.

/// A loser tree over `k` sources; see the module docs.
#[derive(Clone, Debug)]
pub struct LoserTree {
    /// `losers[n]` is the source that lost at internal node `n` (1..k);
    /// index 0 is unused.
    losers: Vec<usize>,
    /// The source that won the whole tournament.
    winner: usize,
}

// A tree always has at least one source, so `is_empty` would always be false.
#[allow(clippy::len_without_is_empty)]
impl LoserTree {
    /// Builds the tree over sources `0..k` by playing every match once.
    ///
    /// `less(i, j)` must say whether source i's current head orders strictly
    /// before source j's, treating an exhausted source as greater than
    /// everything and breaking ties by source index (lower first), so that
    /// the merge is stable.
    ///
    /// # Panics
    ///
    /// If `k == 0`.
    pub fn new(k: usize, mut less: impl FnMut(usize, usize) -> bool) -> Self {
        assert!(k >= 1, "LoserTree needs at least one source");
        let mut losers = vec![0; k];
        // Winners of the subtrees under each internal node, filled bottom-up
        // (children have larger indices than their parents).
        let mut winners = vec![0; k];
        for node in (1..k).rev() {
            let [a, b] = [2 * node, 2 * node + 1].map(|c| if c >= k { c - k } else { winners[c] });
            let (win, lose) = if less(b, a) { (b, a) } else { (a, b) };
            winners[node] = win;
            losers[node] = lose;
        }
        let winner = if k == 1 { 0 } else { winners[1] };
        LoserTree { losers, winner }
    }

    /// The source with the smallest head (an exhausted source only when all
    /// are exhausted).
    #[inline]
    pub fn winner(&self) -> usize {
        self.winner
    }

    /// Call after the winner's head changed (advanced, or became
    /// exhausted): replays its path to the root. `less` as in [`new`].
    ///
    /// [`new`]: LoserTree::new
    #[inline]
    pub fn replay(&mut self, mut less: impl FnMut(usize, usize) -> bool) {
        let k = self.losers.len();
        let mut cur = self.winner;
        let mut node = (cur + k) / 2;
        while node >= 1 {
            let other = self.losers[node];
            // Written as selects, not an `if`: the outcome is a coin toss
            // for merged data, and cmov beats a mispredicted branch.
            let swap = less(other, cur);
            self.losers[node] = if swap { cur } else { other };
            cur = if swap { other } else { cur };
            node /= 2;
        }
        self.winner = cur;
    }

    /// The number of sources, `k`.
    pub fn len(&self) -> usize {
        self.losers.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Merges `sources` through the tree, returning (value, source) pairs.
    fn merge(sources: &[Vec<u32>]) -> Vec<(u32, usize)> {
        let mut pos = vec![0; sources.len()];
        let less = |pos: &[usize], i: usize, j: usize| match (sources[i].get(pos[i]), sources[j].get(pos[j])) {
            (Some(x), Some(y)) => x < y || (x == y && i < j),
            (Some(_), None) => true,
            (None, _) => false,
        };
        let mut tree = LoserTree::new(sources.len(), |i, j| less(&pos, i, j));
        let total: usize = sources.iter().map(Vec::len).sum();
        let mut out = Vec::with_capacity(total);
        for _ in 0..total {
            let w = tree.winner();
            out.push((sources[w][pos[w]], w));
            pos[w] += 1;
            tree.replay(|i, j| less(&pos, i, j));
        }
        out
    }

    #[test]
    fn merges_small_cases() {
        assert_eq!(merge(&[vec![1, 2]]), vec![(1, 0), (2, 0)]);
        assert_eq!(merge(&[vec![2, 2], vec![], vec![1, 2]]), vec![(1, 2), (2, 0), (2, 0), (2, 2)]);
        assert_eq!(merge(&[vec![], vec![]]), vec![]);
    }

    #[test]
    fn len_is_k() {
        for k in 1..10 {
            assert_eq!(LoserTree::new(k, |i, j| i < j).len(), k);
        }
    }

    #[test]
    #[should_panic(expected = "at least one source")]
    fn zero_sources_panics() {
        LoserTree::new(0, |_, _| false);
    }
}
