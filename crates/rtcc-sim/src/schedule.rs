//! The simulator's event schedule: an indexed 4-ary heap with at most one
//! entry per slot (the simulator gives each flow one slot, keyed by its
//! earliest stage deadline), keyed by its next deadline. Moving a deadline
//! sifts the slot's one entry instead of leaving a stale one behind, so the
//! heap never holds more entries than there are slots and every change is
//! O(log slots).

/// A min-heap of `slots` entries with keys `K` (unique per slot, so the
/// order of equal-time entries is the key's own, never insertion order).
pub(crate) struct Schedule<K> {
    /// Keys and their slots in heap order (keys inline: sifting compares
    /// neighbours without chasing an index).
    heap: Vec<(K, u32)>,
    /// Where each slot sits in `heap` (`NONE`: not scheduled).
    pos: Vec<u32>,
}

const NONE: u32 = u32::MAX;
/// Children per node: a 4-ary heap is half as deep as a binary one, and a
/// node's children share a cache line.
const ARITY: usize = 4;

impl<K: Ord + Copy> Schedule<K> {
    pub fn new(slots: usize) -> Self {
        Schedule { heap: Vec::with_capacity(slots), pos: vec![NONE; slots] }
    }

    /// The key `slot` is scheduled at.
    #[cfg(test)]
    pub fn get(&self, slot: usize) -> Option<K> {
        let i = self.pos[slot];
        (i != NONE).then(|| self.heap[i as usize].0)
    }

    /// The earliest entry.
    pub fn peek(&self) -> Option<(usize, K)> {
        self.heap.first().map(|&(k, s)| (s as usize, k))
    }

    /// Schedule `slot` at `key`, move it, or (`None`) take it off.
    pub fn set(&mut self, slot: usize, key: Option<K>) {
        let at = self.pos[slot];
        match (at, key) {
            (NONE, None) => {}
            (NONE, Some(k)) => {
                self.heap.push((k, slot as u32));
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
                let old = self.heap[i].0;
                if k == old {
                    return;
                }
                self.heap[i].0 = k;
                if k < old {
                    self.up(i);
                } else {
                    self.down(i);
                }
            }
        }
    }

    /// Move the entry at `i` towards the root while it is smaller than its
    /// parent (a hole moves instead of repeated swaps).
    /// Put entry `e` at heap index `i`.
    fn put(&mut self, i: usize, e: (K, u32)) {
        self.heap[i] = e;
        self.pos[e.1 as usize] = i as u32;
    }

    fn up(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let p = (i - 1) / ARITY;
            if e.0 >= self.heap[p].0 {
                break;
            }
            self.put(i, self.heap[p]);
            i = p;
        }
        self.put(i, e);
    }

    fn down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let e = self.heap[i];
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            // The smallest child.
            let mut c = first;
            for k in first + 1..(first + ARITY).min(n) {
                if self.heap[k].0 < self.heap[c].0 {
                    c = k;
                }
            }
            if self.heap[c].0 >= e.0 {
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

    /// Random sets, moves and removals give the same order as sorting.
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
            let want = reference.iter().enumerate().filter_map(|(i, k)| k.map(|k| (k, i))).min();
            assert_eq!(s.peek().map(|(i, k)| (k, i)), want);
            assert_eq!(s.get(slot), key);
        }
        // Draining in order.
        let mut last = None;
        while let Some((slot, k)) = s.peek() {
            assert!(last <= Some(k));
            last = Some(k);
            s.set(slot, None);
        }
        assert!(s.heap.is_empty());
    }
}
