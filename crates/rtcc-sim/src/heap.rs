//! Heap accounting for `rtcc bench`: the bytes this thread holds and their
//! peak, kept by the allocator wrapper [`Counting`] that rtcc's binaries
//! install. Resident memory cannot say what one run needs: an allocator keeps
//! what a finished run freed and hands it to the next.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

thread_local! {
    // Constant-initialised and without a destructor: usable from inside the
    // allocator (no lazy set-up that could allocate) where std keeps
    // thread-locals natively, as on Linux, macOS and Windows.
    static LIVE: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

/// An allocator that also counts the bytes each thread holds.
pub struct Counting<A>(pub A);

fn add(delta: i64) {
    let live = LIVE.with(|l| {
        l.set(l.get() + delta);
        l.get()
    });
    PEAK.with(|p| p.set(p.get().max(live)));
    COUNTED.with(|c| c.set(true));
}

// SAFETY: every call is forwarded unchanged to the inner allocator; the
// counting touches only this thread's constant-initialised cells.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc(layout);
        if !p.is_null() {
            add(layout.size() as i64);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc_zeroed(layout);
        if !p.is_null() {
            add(layout.size() as i64);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.0.dealloc(ptr, layout);
        add(-(layout.size() as i64));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = self.0.realloc(ptr, layout, new_size);
        if !p.is_null() {
            add(new_size as i64 - layout.size() as i64);
        }
        p
    }
}

/// Start a peak measurement on this thread: the peak is reset to what is
/// held now, which is returned. `None` when no [`Counting`] allocator is
/// installed (nothing was ever counted).
pub fn mark() -> Option<i64> {
    if !COUNTED.with(Cell::get) {
        return None;
    }
    let live = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(live));
    Some(live)
}

/// The most this thread has held since the last [`mark`].
pub fn peak() -> i64 {
    PEAK.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::System;

    #[test]
    fn counts_what_is_held_and_its_peak() {
        let a = Counting(System);
        let l = Layout::from_size_align(1000, 8).unwrap();
        let before = LIVE.with(Cell::get);
        unsafe {
            let p = a.alloc(l);
            let base = mark().expect("counted");
            let q = a.alloc(l);
            let q = a.realloc(q, l, 3000);
            let z = a.alloc_zeroed(l);
            assert_eq!(*z.add(999), 0);
            a.dealloc(q, Layout::from_size_align(3000, 8).unwrap());
            a.dealloc(z, l);
            assert_eq!(peak() - base, 4000);
            assert_eq!(LIVE.with(Cell::get), base);
            a.dealloc(p, l);
        }
        assert_eq!(LIVE.with(Cell::get), before);
    }
}
