//! Software prefetch. With many flows a flow's state has left the cache by
//! its next event; a driver that knows which flow comes next can ask for
//! that state's lines one event ahead, so the misses overlap the current
//! event's work and each other instead of stalling one after another. A
//! hint only: results never depend on it.

/// Start loading the cache lines holding `bytes` bytes from `p`.
#[inline(always)]
pub fn prefetch(p: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let mut at = p as usize & !63;
        let end = p as usize + bytes;
        while at < end {
            // SAFETY: a prefetch never faults and writes nothing, whatever
            // the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(at as *const i8) };
            at += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}

/// Start loading the lines of `v`.
#[inline(always)]
pub fn prefetch_val<T>(v: &T) {
    prefetch_with_next(v, 0);
}

/// Start loading the lines of `v` and of the `next` values after it in
/// memory: for the last element of a buffer, where the next pushes write
/// (past the buffer's end the hint is wasted, never harmful).
#[inline(always)]
pub fn prefetch_with_next<T>(v: &T, next: usize) {
    prefetch(v as *const T as *const u8, std::mem::size_of::<T>() * (1 + next));
}
