//! The chunks in flight between the dispatcher and the workers: a task board under one lock,
//! taken once per chunk and shard (thousands of pages), never per command.
//!
//! The dispatcher publishes chunks in order (at most `max_slots` in flight; when full it takes
//! tasks itself rather than wait).  A task is one shard's items of one chunk; a shard takes
//! its chunks in order, one thread at a time, and any thread may take any shard (the oldest
//! chunk first), so the load balances itself.  When every shard is done with the oldest chunk
//! its free-block events are merged ([`FreeTrack`]) and its buffers go back to the dispatcher.

use super::apply::Event;
use super::free::FreeTrack;
use super::item::Item;
use crate::error::Error;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// A chunk of items: per shard, its items in the drive's order.
pub(crate) struct Chunk {
    /// The drive's host page count before the chunk's first item.
    pub base: u64,
    pub shards: Vec<Vec<Item>>,
    /// Items in all shards.
    pub len: usize,
}

impl Chunk {
    pub(crate) fn new(shards: usize) -> Chunk {
        Chunk { base: 0, shards: (0..shards).map(|_| Vec::new()).collect(), len: 0 }
    }
}

/// One shard's items of one chunk, for a thread to apply.
pub(crate) struct Task {
    pub shard: usize,
    /// The chunk's number.
    pub number: u64,
    pub chunk: Arc<Chunk>,
}

struct Slot {
    chunk: Arc<Chunk>,
    /// Shards not done with it.
    left: usize,
    events: Vec<Event>,
}

struct State {
    /// Published chunks some shard is not done with, oldest first; `first` is the number of
    /// the oldest.
    slots: VecDeque<Slot>,
    first: u64,
    /// Per shard: the chunk it takes next, and whether a thread holds it.
    next: Vec<u64>,
    busy: Vec<bool>,
    /// No more chunks will be published.
    closed: bool,
    /// The earliest error met (the drive's host page count at it).
    failed: Option<(u64, Error)>,
    free: FreeTrack,
    /// Buffers of done chunks, for the dispatcher.
    spare: Vec<Chunk>,
}

pub(crate) struct Board {
    st: Mutex<State>,
    cv: Condvar,
    max_slots: usize,
}

impl Board {
    pub(crate) fn new(shards: usize, free: FreeTrack, max_slots: usize) -> Board {
        Board {
            st: Mutex::new(State {
                slots: VecDeque::new(),
                first: 0,
                next: vec![0; shards],
                busy: vec![false; shards],
                closed: false,
                failed: None,
                free,
                spare: Vec::new(),
            }),
            cv: Condvar::new(),
            max_slots: max_slots.max(1),
        }
    }

    /// The merged free blocks and the earliest error, once every thread has left.
    pub(crate) fn into_parts(self) -> (FreeTrack, Option<(u64, Error)>) {
        let st = self.st.into_inner().unwrap_or_else(PoisonError::into_inner);
        (st.free, st.failed)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // the lock is never held across a user's code: a poisoned one holds a consistent state
        self.st.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.cv.wait(g).unwrap_or_else(PoisonError::into_inner)
    }

    /// Publish `chunk`; while `max_slots` chunks are in flight, run tasks with `help` (or wait).
    /// Returns a buffer for the next chunk, or None when a pool has failed (stop publishing).
    pub(crate) fn publish(&self, chunk: Chunk, help: &mut impl FnMut(Task)) -> Option<Chunk> {
        let shards = chunk.shards.len();
        let mut st = self.lock();
        loop {
            if st.failed.is_some() {
                return None;
            }
            if st.slots.len() < self.max_slots {
                st.slots.push_back(Slot { chunk: Arc::new(chunk), left: shards, events: Vec::new() });
                let next = st.spare.pop().unwrap_or_else(|| Chunk::new(shards));
                self.cv.notify_all();
                return Some(next);
            }
            st = self.help_or_wait(st, help);
        }
    }

    /// No more chunks: run tasks with `help` until every published chunk is done.
    pub(crate) fn close(&self, help: &mut impl FnMut(Task)) {
        let mut st = self.lock();
        st.closed = true;
        self.cv.notify_all();
        while !st.slots.is_empty() {
            st = self.help_or_wait(st, help);
        }
    }

    /// No more chunks (the dispatcher is unwinding): the workers finish what was published
    /// and leave.
    pub(crate) fn abandon(&self) {
        self.lock().closed = true;
        self.cv.notify_all();
    }

    fn help_or_wait<'a>(&'a self, mut st: MutexGuard<'a, State>, help: &mut impl FnMut(Task)) -> MutexGuard<'a, State> {
        match take(&mut st) {
            Some(t) => {
                drop(st);
                help(t);
                self.lock()
            }
            None => self.wait(st),
        }
    }

    /// A worker's next task, waiting for one; None once the board is closed and done.
    pub(crate) fn wait_task(&self) -> Option<Task> {
        let mut st = self.lock();
        loop {
            if let Some(t) = take(&mut st) {
                return Some(t);
            }
            if st.closed && st.slots.is_empty() {
                return None;
            }
            st = self.wait(st);
        }
    }

    /// Shard `shard` is done with chunk `number`: its free-block events and its first error.
    pub(crate) fn finish(&self, shard: usize, number: u64, events: Vec<Event>, err: Option<(u64, Error)>) {
        let mut st = self.lock();
        let st = &mut *st;
        st.busy[shard] = false;
        st.next[shard] = number + 1;
        let slot = &mut st.slots[(number - st.first) as usize];
        slot.left -= 1;
        slot.events.extend(events);
        if let Some((at, e)) = err {
            if st.failed.as_ref().is_none_or(|(f, _)| at < *f) {
                st.failed = Some((at, e));
            }
        }
        while st.slots.front().is_some_and(|s| s.left == 0) {
            let mut done = st.slots.pop_front().expect("a front slot");
            st.first += 1;
            st.free.merge(&mut done.events);
            if let Ok(mut c) = Arc::try_unwrap(done.chunk) {
                c.shards.iter_mut().for_each(Vec::clear);
                c.len = 0;
                st.spare.push(c);
            }
        }
        self.cv.notify_all();
    }
}

/// The task of the shard furthest behind that is free and has a published chunk to do.
fn take(st: &mut State) -> Option<Task> {
    let published = st.first + st.slots.len() as u64;
    let shard = (0..st.next.len()).filter(|&s| !st.busy[s] && st.next[s] < published).min_by_key(|&s| st.next[s])?;
    st.busy[shard] = true;
    let number = st.next[shard];
    Some(Task { shard, number, chunk: Arc::clone(&st.slots[(number - st.first) as usize].chunk) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_take_chunks_in_order_and_the_earliest_error_is_kept() {
        let b = Board::new(2, FreeTrack::new(&[4, 4]), 2);
        let mut none = |_: Task| panic!("no help needed");
        let c = b.publish(Chunk::new(2), &mut none).unwrap();
        b.publish(c, &mut none).unwrap();
        let t0 = b.wait_task().unwrap();
        let t1 = b.wait_task().unwrap();
        assert_eq!([(t0.shard, t0.number), (t1.shard, t1.number)], [(0, 0), (1, 0)], "the oldest chunk first");
        drop((t0, t1));
        b.finish(0, 0, vec![Event { off: 0, pool: 0, min: 1, after: 3 }], None);
        let t2 = b.wait_task().unwrap();
        assert_eq!((t2.shard, t2.number), (0, 1), "a shard's chunks in order");
        drop(t2);
        b.finish(1, 0, Vec::new(), Some((7, Error::internal("later"))));
        b.finish(0, 1, Vec::new(), Some((5, Error::internal("earlier"))));
        let (mut free, failed) = b.into_parts();
        assert_eq!(free.take(), 5, "chunk 0's event merged: 1 + 4");
        assert_eq!(failed.map(|(at, e)| (at, e.message)), Some((5, "earlier".to_string())));
    }

    #[test]
    fn a_full_board_has_the_dispatcher_help_and_gives_buffers_back() {
        let b = Board::new(1, FreeTrack::new(&[1]), 1);
        let c = b.publish(Chunk::new(1), &mut |_: Task| panic!("room left")).unwrap();
        let mut helped = Vec::new();
        let c = b.publish(c, &mut |t: Task| {
            helped.push(t.number);
            let (s, n) = (t.shard, t.number);
            drop(t);
            b.finish(s, n, Vec::new(), None);
        });
        assert_eq!(helped, [0]);
        assert!(c.is_some());
        let mut ran = Vec::new();
        b.close(&mut |t: Task| {
            ran.push(t.number);
            let (s, n) = (t.shard, t.number);
            drop(t);
            b.finish(s, n, Vec::new(), None);
        });
        assert_eq!(ran, [1]);
        assert!(b.wait_task().is_none(), "closed and done");
    }
}
