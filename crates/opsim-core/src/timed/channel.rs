//! The flash channels' timelines (`timing.channel_order`).  In issue order ("issue", the
//! default) a channel keeps one "free at" time: a transfer starts at the later of its data's
//! ready time and that, and the channel is free again at its end, so a transfer whose data
//! is ready late holds up every later-issued one (head-of-line blocking).  In ready order
//! ("ready") a channel keeps its reserved intervals, sorted: a transfer takes the earliest
//! gap at or after its ready time that fits it (a controller that moves whichever page is
//! ready).  The list is bounded (`MAX_INTERVALS`): when full, the earliest interval is
//! dropped and its end becomes a floor no placement may precede (conservative: a transfer
//! can only start later than with an unbounded list, never earlier or overlapping).

use crate::config::timing::ChannelOrder;

/// Reserved intervals kept per channel in ready order.
pub(super) const MAX_INTERVALS: usize = 256;

/// One channel's reserved intervals `[start, end)`, sorted, disjoint and not touching
/// (touching intervals are merged), and the floor.
#[derive(Default, Clone, Debug)]
pub(super) struct Busy {
    iv: Vec<(u64, u64)>,
    floor: u64,
}

impl Busy {
    /// Reserve `len` ns at the earliest gap at or after `ready` (and the floor); returns the
    /// end.
    pub(super) fn place(&mut self, ready: u64, len: u64) -> u64 {
        let mut t = ready.max(self.floor);
        // the first interval that ends after t
        let mut i = self.iv.partition_point(|&(_, e)| e <= t);
        while i < self.iv.len() && self.iv[i].0 < t + len {
            t = t.max(self.iv[i].1);
            i += 1;
        }
        let end = t + len;
        self.insert(i, t, end);
        end
    }

    /// Insert `[s, e)` before interval `i` (after `i - 1`), merging with touching neighbours.
    fn insert(&mut self, i: usize, s: u64, e: u64) {
        let left = i > 0 && self.iv[i - 1].1 == s;
        let right = i < self.iv.len() && self.iv[i].0 == e;
        match (left, right) {
            (true, true) => {
                self.iv[i - 1].1 = self.iv[i].1;
                self.iv.remove(i);
            }
            (true, false) => self.iv[i - 1].1 = e,
            (false, true) => self.iv[i].0 = s,
            (false, false) => {
                if self.iv.len() >= MAX_INTERVALS {
                    if i == 0 {
                        // the new interval is the earliest: keep only its end, as the floor
                        self.floor = self.floor.max(e);
                        return;
                    }
                    self.drop_oldest();
                    self.iv.insert(i - 1, (s, e));
                    return;
                }
                self.iv.insert(i, (s, e));
            }
        }
    }

    /// Forget the earliest interval; no placement may start before its end any more.
    fn drop_oldest(&mut self) {
        let (_, e) = self.iv.remove(0);
        self.floor = self.floor.max(e);
    }

    /// The reserved intervals, in order (tests).
    #[cfg(test)]
    pub(super) fn intervals(&self) -> &[(u64, u64)] {
        &self.iv
    }

    #[cfg(test)]
    pub(super) fn floor(&self) -> u64 {
        self.floor
    }
}

/// Every channel's timeline, in either order.
pub(super) struct Channels {
    /// Issue order: each channel's "free at" time.
    free: Vec<u64>,
    /// Ready order: each channel's reserved intervals (empty in issue order).
    busy: Vec<Busy>,
}

impl Channels {
    pub(super) fn new(channels: usize, order: ChannelOrder) -> Self {
        match order {
            ChannelOrder::Issue => Channels { free: vec![0; channels], busy: Vec::new() },
            ChannelOrder::Ready => Channels { free: Vec::new(), busy: vec![Busy::default(); channels] },
        }
    }

    /// Move `xfer` ns of data on channel `c`, ready at `ready`; returns the end.
    #[inline(always)]
    pub(super) fn channel(&mut self, c: usize, ready: u64, xfer: u64) -> u64 {
        if self.busy.is_empty() {
            let end = ready.max(self.free[c]) + xfer;
            self.free[c] = end;
            return end;
        }
        self.busy[c].place(ready, xfer)
    }

    /// A transfer that goes first on channel `c` (a read that suspended die work): in
    /// issue order it ends `xfer` after `ready` and pushes the channel's queue back by
    /// `xfer`; in ready order it takes the earliest gap like any other.
    #[inline]
    pub(super) fn channel_first(&mut self, c: usize, ready: u64, xfer: u64) -> u64 {
        if self.busy.is_empty() {
            let end = ready + xfer;
            if self.free[c] > ready {
                self.free[c] += xfer;
            } else {
                self.free[c] = end;
            }
            return end;
        }
        self.busy[c].place(ready, xfer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transfer_ready_later_does_not_delay_one_ready_earlier_in_ready_order() {
        let mut ready = Channels::new(1, ChannelOrder::Ready);
        assert_eq!(ready.channel(0, 1_000_000, 100), 1_000_100);
        assert_eq!(ready.channel(0, 0, 100), 100, "fits in the gap before the late transfer");
        let mut issue = Channels::new(1, ChannelOrder::Issue);
        assert_eq!(issue.channel(0, 1_000_000, 100), 1_000_100);
        assert_eq!(issue.channel(0, 0, 100), 1_000_200, "issue order: waits behind the late transfer");
    }

    #[test]
    fn a_gap_too_small_is_skipped_and_touching_intervals_merge() {
        let mut b = Busy::default();
        b.place(0, 100);
        b.place(150, 100); // [150, 250)
        assert_eq!(b.place(0, 100), 350, "the 50 ns gap is too small");
        assert_eq!(b.place(100, 50), 150, "exactly fills the gap");
        assert_eq!(b.intervals(), &[(0, 350)]);
    }

    #[test]
    fn intervals_never_overlap_and_no_transfer_starts_before_it_is_ready() {
        // a small LCG: random ready times and lengths, more transfers than the bound
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        let mut b = Busy::default();
        let mut placed = Vec::new();
        for _ in 0..5000 {
            let ready = next() % 2_000_000;
            let len = 1 + next() % 900;
            let floor = b.floor();
            let end = b.place(ready, len);
            assert!(end - len >= ready, "started before ready");
            assert!(end - len >= floor, "started before the floor");
            placed.push((end - len, end));
            let iv = b.intervals();
            assert!(iv.len() <= MAX_INTERVALS);
            for w in iv.windows(2) {
                assert!(w[0].0 < w[0].1 && w[0].1 < w[1].0, "overlap or touch: {w:?}");
            }
        }
        placed.sort();
        for w in placed.windows(2) {
            assert!(w[0].1 <= w[1].0, "two transfers overlap: {w:?}");
        }
    }

    #[test]
    fn a_full_list_drops_its_earliest_interval_and_keeps_its_end_as_a_floor() {
        let mut b = Busy::default();
        for k in 0..MAX_INTERVALS as u64 {
            b.place(1000 * k, 10);
        }
        assert_eq!(b.intervals().len(), MAX_INTERVALS);
        assert_eq!(b.floor(), 0);
        b.place(1000 * MAX_INTERVALS as u64, 10);
        assert_eq!(b.intervals().len(), MAX_INTERVALS);
        assert_eq!(b.floor(), 10, "the first interval's end");
        assert_eq!(b.intervals()[0], (1000, 1010));
        // a transfer ready at 0 may no longer use the gap before 1000 that ends below the floor
        assert_eq!(b.place(0, 10), 20, "placed at the floor, not at 0");
    }
}
