//! The simulator's event schedule: an indexed 4-ary heap with at most one
//! entry per slot (the simulator gives each flow one slot, keyed by its
//! earliest stage deadline), keyed by its next deadline. Moving a deadline
//! sifts the slot's one entry instead of leaving a stale one behind, so the
//! heap never holds more entries than there are slots and every change is
//! O(log slots).

/// A schedule key: ordered, and naming the slot it belongs to, so a heap
/// entry is the key alone (8 bytes for the simulator's: a node's four
/// children are half a cache line).
pub(crate) trait SlotKey: Ord + Copy {
    fn slot(self) -> usize;
}

/// A min-heap of `slots` entries with keys `K` (unique per slot, so the
/// order of equal-time entries is the key's own, never insertion order).
pub(crate) struct Schedule<K> {
    /// Keys in heap order.
    heap: Vec<K>,
    /// Where each slot sits in `heap` (`NONE`: not scheduled).
    pos: Vec<u32>,
}

const NONE: u32 = u32::MAX;
/// Children per node: a 4-ary heap is half as deep as a binary one, and a
/// node's children share a cache line.
const ARITY: usize = 4;

impl<K: SlotKey> Schedule<K> {
    pub fn new(slots: usize) -> Self {
        Schedule { heap: Vec::with_capacity(slots), pos: vec![NONE; slots] }
    }

    /// The key `slot` is scheduled at.
    #[cfg(test)]
    pub fn get(&self, slot: usize) -> Option<K> {
        let i = self.pos[slot];
        (i != NONE).then(|| self.heap[i as usize])
    }

    /// The earliest entry.
    pub fn peek(&self) -> Option<K> {
        self.heap.first().copied()
    }

    /// The earliest entry after the first: the smallest of the root's
    /// children.
    pub fn second(&self) -> Option<K> {
        self.heap.get(1..self.heap.len().min(ARITY + 1))?.iter().copied().min()
    }

    /// Schedule `slot` at `key` (whose slot it must be), move it, or
    /// (`None`) take it off.
    pub fn set(&mut self, slot: usize, key: Option<K>) {
        debug_assert!(key.is_none_or(|k| k.slot() == slot));
        let at = self.pos[slot];
        match (at, key) {
            (NONE, None) => {}
            (NONE, Some(k)) => {
                self.heap.push(k);
                let i = self.heap.len() - 1;
                self.pos[slot] = i as u32;
                self.up(i);
            }
            (i, None) => {
                let i = i as usize;
                let last = self.heap.pop().expect("scheduled slot is in the heap");
                self.pos[slot] = NONE;
                if i < self.heap.len() {
                    self.put(i, last);
                    self.up(i);
                    self.down(i);
                }
            }
            (i, Some(k)) => {
                let i = i as usize;
                let old = self.heap[i];
                if k == old {
                    return;
                }
                self.heap[i] = k;
                if k < old {
                    self.up(i);
                } else {
                    self.down(i);
                }
            }
        }
    }

    /// Put key `k` at heap index `i`.
    fn put(&mut self, i: usize, k: K) {
        self.heap[i] = k;
        self.pos[k.slot()] = i as u32;
    }

    /// Move the entry at `i` towards the root while it is smaller than its
    /// parent (a hole moves instead of repeated swaps).
    fn up(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let p = (i - 1) / ARITY;
            if e >= self.heap[p] {
                break;
            }
            self.put(i, self.heap[p]);
            i = p;
        }
        self.put(i, e);
    }

    /// Move the entry at `i` away from the root while a child is smaller.
    fn down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let e = self.heap[i];
        loop {
            let first = ARITY * i + 1;
            // The grandchildren are contiguous: with many slots the heap
            // leaves L1 between events, and the next level's compares then
            // find their line on its way instead of each waiting for it.
            // Unconditional: with few slots there are no grandchildren, or
            // they are in L1 already.
            let grand = ARITY * first + 1;
            if grand < n {
                rtcc_core::cache::prefetch(
                    self.heap.as_ptr().wrapping_add(grand) as *const u8,
                    ARITY * ARITY * std::mem::size_of::<K>(),
                );
            }
            let c = if first + ARITY <= n {
                // A full node: the smaller of two pairs' smaller (branch-free).
                let ch: &[K; ARITY] = self.heap[first..first + ARITY].try_into().expect("four children");
                let a = if ch[1] < ch[0] { 1 } else { 0 };
                let b = if ch[3] < ch[2] { 3 } else { 2 };
                first + if ch[b] < ch[a] { b } else { a }
            } else if first < n {
                (first + 1..n).fold(first, |c, k| if self.heap[k] < self.heap[c] { k } else { c })
            } else {
                break;
            };
            if self.heap[c] >= e {
                break;
            }
            self.put(i, self.heap[c]);
            i = c;
        }
        self.put(i, e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtcc_core::rng::Rng;

    /// (time, slot): the slot breaks ties.
    impl SlotKey for (u32, usize) {
        fn slot(self) -> usize {
            self.1
        }
    }

    /// Random sets, moves and removals give the same order as sorting: the
    /// first and second entries are the sorted reference's.
    #[test]
    fn matches_a_sorted_reference() {
        let mut rng = Rng::new(7);
        let n = 64;
        let mut s = Schedule::<(u32, usize)>::new(n);
        let mut reference: Vec<Option<(u32, usize)>> = vec![None; n];
        for _ in 0..20_000 {
            let slot = (rng.next_u64() % n as u64) as usize;
            let key = (!rng.next_u64().is_multiple_of(5)).then(|| ((rng.next_u64() % 50) as u32, slot));
            s.set(slot, key);
            reference[slot] = key;
            let mut sorted: Vec<_> = reference.iter().filter_map(|k| *k).collect();
            sorted.sort();
            assert_eq!(s.peek(), sorted.first().copied());
            assert_eq!(s.second(), sorted.get(1).copied());
            assert_eq!(s.get(slot), key);
        }
        // Draining in order.
        let mut last = None;
        while let Some(k) = s.peek() {
            assert!(last <= Some(k));
            last = Some(k);
            s.set(k.1, None);
        }
        assert!(s.heap.is_empty());
    }
}
