//! A tiny deterministic discrete-event core: simulated time in nanoseconds, events ordered
//! by time and, at equal times, by insertion order (as in SimPy).  It knows nothing about
//! devices; the device models push and pop their own event type.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    t: u64,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.t == o.t && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // BinaryHeap is a max-heap: reverse so the earliest (time, seq) pops first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.t, o.seq).cmp(&(self.t, self.seq))
    }
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), seq: 0, now: 0 }
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }
    /// Schedule `ev` at time `t` (not before the current time).
    pub fn push(&mut self, t: u64, ev: E) {
        debug_assert!(t >= self.now, "event scheduled in the past");
        self.heap.push(Entry { t: t.max(self.now), seq: self.seq, ev });
        self.seq += 1;
    }
    /// The next event; advances the clock to its time.
    pub fn pop(&mut self) -> Option<(u64, E)> {
        let e = self.heap.pop()?;
        self.now = e.t;
        Some((e.t, e.ev))
    }
    pub fn now(&self) -> u64 {
        self.now
    }
    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.t)
    }
    /// Move the clock forward to `t` (an external event such as an open-loop arrival);
    /// never past the next queued event.
    pub fn advance_to(&mut self, t: u64) {
        debug_assert!(self.peek_time().is_none_or(|n| t <= n));
        self.now = self.now.max(t);
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_order_then_insertion_order() {
        let mut q = EventQueue::new();
        q.push(5, "c");
        q.push(1, "a");
        q.push(5, "d");
        q.push(1, "b");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(1, "a"), (1, "b"), (5, "c"), (5, "d")]);
        assert_eq!(q.now(), 5);
    }
}
