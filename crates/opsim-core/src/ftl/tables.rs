//! Low-level helpers of the FTL's tables: exact division by the block size, bitmap ranges,
//! large tables on huge pages, write prefetch.  None of them changes a result.

use crate::error::Result;
use crate::interrupt::Interrupt;
use crate::memory::{fill_polled, try_with_capacity};

/// Exact division of a 32-bit value by a fixed divisor with one 128-bit multiply
/// (Lemire, Kaser and Kurz 2019).
#[derive(Clone, Copy, Debug)]
pub(super) struct FastDiv {
    m: u64,
}

impl FastDiv {
    pub(super) fn new(d: u32) -> Self {
        assert!(d >= 2);
        FastDiv { m: u64::MAX / d as u64 + 1 }
    }
    #[inline(always)]
    pub(super) fn div(self, n: u32) -> u32 {
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
