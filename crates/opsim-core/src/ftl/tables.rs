//! Low-level helpers of the FTL's tables: exact division by the block size, bitmap ranges,
//! a block's valid pages gathered and a run of pages mapped (garbage collection's two
//! loops), large tables on huge pages, write prefetch.  None of them changes a result.

use crate::error::Result;
use crate::interrupt::Interrupt;
use crate::memory::{fill_polled, try_with_capacity};

/// Exact division of a 32-bit value by a fixed divisor with one 128-bit multiply
/// (Lemire, Kaser and Kurz 2019).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FastDiv {
    m: u64,
}

impl FastDiv {
    pub(crate) fn new(d: u32) -> Self {
        assert!(d >= 2);
        FastDiv { m: u64::MAX / d as u64 + 1 }
    }
    #[inline(always)]
    pub(crate) fn div(self, n: u32) -> u32 {
        ((self.m as u128 * n as u128) >> 64) as u32
    }
}

/// Set bits `from..to` of a bitmap.
#[inline]
pub(super) fn set_bit_range(words: &mut [u64], from: u32, to: u32) {
    let mut i = from;
    while i < to {
        let w = (i >> 6) as usize;
        let lo = i & 63;
        let hi = (to - (i & !63)).min(64);
        let mask = if hi - lo == 64 { u64::MAX } else { ((1u64 << (hi - lo)) - 1) << lo };
        words[w] |= mask;
        i = (i & !63) + hi;
    }
}

/// Call `f` with the index of every bit set in `words`, in order.
#[inline]
pub(super) fn for_each_bit(words: &[u64], mut f: impl FnMut(usize)) {
    for (wi, &word) in words.iter().enumerate() {
        let mut w = word;
        while w != 0 {
            f(wi * 64 + w.trailing_zeros() as usize);
            w &= w - 1;
        }
    }
}

/// Take a block's valid pages out of its validity `words` (left cleared), in page order:
/// each one's logical page, read from the block's reverse map `p2l`, goes to `out` and its
/// mapping entry in `l2p` is prefetched for the copy.  Returns how many.  On slices rather
/// than the FTL's fields and a `Vec`, so that the compiler keeps the tables' addresses and
/// lengths in registers (issue 37: 27 instructions a valid page with the fields, 16 here).
#[inline(always)]
pub(super) fn gather(words: &mut [u64], p2l: &[u32], l2p: &[u32], out: &mut [u32]) -> usize {
    let mut n = 0;
    for (wi, word) in words.iter_mut().enumerate() {
        let mut w = std::mem::take(word);
        while w != 0 {
            let lpn = p2l[wi * 64 + w.trailing_zeros() as usize];
            w &= w - 1;
            prefetch_write(l2p, lpn as usize);
            out[n] = lpn;
            n += 1;
        }
    }
    n
}

/// Map the logical pages `lpns` to the consecutive physical pages from `start`: their
/// reverse map `p2l` (the run's slice of it: one copy) and their entries in `l2p`
/// (issue 37: 8 instructions a page, 14 with the fields).
#[inline(always)]
pub(super) fn map_run(l2p: &mut [u32], p2l: &mut [u32], lpns: &[u32], start: u32) {
    p2l.copy_from_slice(lpns);
    for (k, &lpn) in lpns.iter().enumerate() {
        l2p[lpn as usize] = start + k as u32;
    }
}

/// A vector of `n` copies of `value` (a capacity error when it cannot be allocated).  Large
/// tables are advised to use transparent huge pages before they are first touched: the
/// mapping tables are accessed at random, and 2 MiB pages cut TLB misses (no effect on
/// results).  The filling (gigabytes for a drive of terabytes) asks `interrupt` every few
/// MiB: an `Interrupted` error when it says stop.
pub(super) fn table<T: Copy>(n: usize, value: T, what: &str, interrupt: &mut Interrupt) -> Result<Vec<T>> {
    let mut v: Vec<T> = try_with_capacity(n, what)?;
    #[cfg(target_os = "linux")]
    {
        let bytes = n * std::mem::size_of::<T>();
        if bytes >= 4 << 20 {
            let start = v.as_mut_ptr() as usize;
            let page = 4096usize;
            let aligned = (start + page - 1) & !(page - 1);
            let len = (start + bytes).saturating_sub(aligned) & !(page - 1);
            if len > 0 {
                // SAFETY: the range lies inside our own allocation; MADV_HUGEPAGE is advice only.
                unsafe {
                    libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
                }
            }
        }
    }
    fill_polled(&mut v, n, value, interrupt)?;
    Ok(v)
}

/// Hint that `v[i]` will soon be written (no effect on results).
#[inline(always)]
pub fn prefetch_write<T>(v: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if i < v.len() {
        // SAFETY: the pointer is in bounds; prefetch has no architectural effect.
        unsafe {
            core::arch::x86_64::_mm_prefetch(v.as_ptr().add(i) as *const i8, core::arch::x86_64::_MM_HINT_T0);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_takes_the_valid_pages_in_order_and_clears_the_words() {
        // a 130-page block: pages 0, 63, 64, 100 and 129 valid
        let mut words = [1u64 | 1 << 63, 1 | 1 << 36, 1 << 1];
        let p2l: Vec<u32> = (0..130).map(|p| 1000 + p).collect();
        let l2p = vec![0u32; 2000];
        let mut out = vec![0u32; 130];
        let n = gather(&mut words, &p2l, &l2p, &mut out);
        assert_eq!(&out[..n], &[1000, 1063, 1064, 1100, 1129]);
        assert_eq!(words, [0, 0, 0]);
        let mut seen = vec![];
        for_each_bit(&[1 << 5, 1 << 2 | 1 << 3], |p| seen.push(p));
        assert_eq!(seen, [5, 66, 67]);
    }

    #[test]
    fn map_run_maps_both_ways() {
        let mut l2p = vec![u32::MAX; 10];
        let mut p2l = [u32::MAX; 8];
        map_run(&mut l2p, &mut p2l[3..6], &[7, 2, 9], 3);
        assert_eq!(&p2l[..], &[u32::MAX, u32::MAX, u32::MAX, 7, 2, 9, u32::MAX, u32::MAX]);
        assert_eq!((l2p[7], l2p[2], l2p[9], l2p[0]), (3, 4, 5, u32::MAX));
    }
}
