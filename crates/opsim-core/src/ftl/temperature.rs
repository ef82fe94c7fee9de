//! Temperature separation in the FTL (`ftl.separation`, `config::separation`): which open
//! unit a page goes to by how long its data is likely to live.
//!
//! * GC classes (`"gc-age"` and `"sepbit"`): a victim written by the host sends its valid
//!   pages to GC class 0, a victim written by GC class `k` to class `k + 1`, the last class
//!   taking everything older.
//! * Host classes (`"sepbit"`, SepBIT's user-write classes, Wang et al., FAST'22): a host
//!   write whose previous version lived less than a threshold goes to the stream's hot
//!   frontier, any other (a first write, or data older than the threshold, or data GC has
//!   moved) to its cold one.  A version's lifetime is the host pages written since the block
//!   holding it was opened (the FTL keeps a block's opening time, not a page's: a block fills
//!   in a short time against the lifetimes it separates); the threshold is the mean lifetime
//!   of the last [`WINDOW`] hot blocks GC collected (from their opening to their
//!   collection), infinite until the first (SepBIT's rule).

use crate::error::Result;
use crate::memory::try_vec;

/// A host block of a hot frontier (`Temperature::class`).
pub(super) const HOT: u8 = u8::MAX;
/// Collected hot blocks whose lifetimes set the threshold (SepBIT's 16 segments).
pub(super) const WINDOW: usize = 16;

pub(super) struct Temperature {
    /// GC classes per group (1: one GC frontier, no classes kept).
    pub classes: u32,
    /// Host frontiers per stream (2 with host classes: hot then cold; 1: off).
    pub host_classes: u32,
    /// Per block, with any classes: 0 written by the host (cold, or with no host classes),
    /// [`HOT`] by a hot host frontier, `k + 1` by GC class `k`.  Empty when off.
    pub class: Vec<u8>,
    /// Per block, with host classes: the host pages written when it was opened.
    birth: Vec<u64>,
    /// Lifetimes of the last collected hot blocks, and how many were seen.
    window: [u64; WINDOW],
    seen: u64,
    /// [`Temperature::threshold`], kept as the window changes.
    hot_below: u64,
}

impl Temperature {
    pub(super) fn new(blocks: u32, classes: u32, host_classes: u32) -> Result<Self> {
        let (classes, host_classes) = (classes.max(1), host_classes.max(1));
        let on = classes > 1 || host_classes > 1;
        Ok(Temperature {
            classes,
            host_classes,
            class: if on { try_vec(blocks as usize, 0u8, "block temperature classes")? } else { Vec::new() },
            birth: if host_classes > 1 { try_vec(blocks as usize, 0u64, "block opening times")? } else { Vec::new() },
            window: [0; WINDOW],
            seen: 0,
            hot_below: u64::MAX,
        })
    }

    /// The hot threshold in host pages: the window's mean lifetime (none yet: infinite).
    #[cfg(test)]
    fn threshold(&self) -> u64 {
        self.hot_below
    }

    fn window_mean(&self) -> u64 {
        match self.seen.min(WINDOW as u64) {
            0 => u64::MAX,
            n => self.window[..n as usize].iter().sum::<u64>() / n,
        }
    }

    /// The host frontier (a virtual stream) of a write on `stream` whose previous version
    /// is in block `old` (None: a first write), at `now` host pages.
    #[inline(never)]
    pub(super) fn host_stream(&self, old: Option<u32>, stream: u32, now: u64) -> u32 {
        let hot = old.is_some_and(|b| {
            let c = self.class[b as usize];
            (c == 0 || c == HOT) && now.saturating_sub(self.birth[b as usize]) < self.hot_below
        });
        stream * 2 + u32::from(!hot)
    }

    /// Host block `b` opened by virtual stream `vstream` at `now`.
    pub(super) fn open_host(&mut self, b: u32, vstream: u32, now: u64) {
        self.class[b as usize] = if vstream % 2 == 0 { HOT } else { 0 };
        self.birth[b as usize] = now;
    }

    /// Whether `vstream` (an index over streams x host classes) is a hot frontier.
    pub(super) fn is_hot(&self, vstream: u32) -> bool {
        self.host_classes > 1 && vstream % 2 == 0
    }

    /// The GC class victim `v`'s valid pages go to (collected at `now`); a hot victim's
    /// lifetime joins the threshold's window.
    #[inline(never)]
    pub(super) fn gc_class(&mut self, v: u32, now: u64) -> u32 {
        let c = self.class[v as usize];
        if c == HOT {
            self.window[(self.seen % WINDOW as u64) as usize] = now.saturating_sub(self.birth[v as usize]);
            self.seen += 1;
            self.hot_below = self.window_mean();
        }
        match c {
            0 | HOT => 0,
            k => (k as u32).min(self.classes - 1),
        }
    }

    /// Block `b` erased (or purged).
    #[inline(always)]
    pub(super) fn erase(&mut self, b: u32) {
        if let Some(c) = self.class.get_mut(b as usize) {
            *c = 0;
        }
    }

    /// Every block erased, the threshold forgotten.
    pub(super) fn clear(&mut self) {
        self.class.iter_mut().for_each(|c| *c = 0);
        self.birth.iter_mut().for_each(|t| *t = 0);
        self.seen = 0;
        self.hot_below = u64::MAX;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_is_the_mean_of_the_last_hot_victims() {
        let mut t = Temperature::new(64, 4, 2).unwrap();
        assert_eq!(t.threshold(), u64::MAX);
        // no threshold yet: any overwrite of host data is hot, a first write cold
        assert_eq!((t.host_stream(Some(3), 1, 10), t.host_stream(None, 1, 10)), (2, 3));
        t.open_host(5, 0, 100);
        assert_eq!(t.gc_class(5, 400), 0);
        assert_eq!(t.threshold(), 300);
        for k in 0..WINDOW as u64 {
            t.open_host(6, 0, 0);
            t.gc_class(6, 1000 + k);
        }
        // the first victim left the window
        assert_eq!(t.threshold(), 1000 + (WINDOW as u64 - 1) / 2);
        // older than the threshold, or moved by GC: cold
        t.open_host(7, 1, 0);
        assert_eq!(t.host_stream(Some(7), 0, 500), 0);
        assert_eq!(t.host_stream(Some(7), 0, 5000), 1);
        t.class[8] = 2;
        assert_eq!(t.host_stream(Some(8), 0, 1), 1);
        // GC ages: host victims to class 0, class k's to k + 1, the last keeps the oldest
        assert_eq!((t.gc_class(8, 1), t.gc_class(7, 1)), (2, 0));
        t.class[9] = 4;
        assert_eq!(t.gc_class(9, 1), 3);
        t.clear();
        assert_eq!(t.threshold(), u64::MAX);
    }
}
