//! The threaded run: the dispatcher (the calling thread) generates and splits the commands
//! and publishes them in chunks; `threads - 1` scoped workers, and the dispatcher whenever the
//! board is full, apply the chunks' shards.  It returns once every published item is applied:
//! the pools then stand where one FTL would stand after the same commands.
//!
//! Errors: the dispatcher's (an interrupt, a command out of range) end the generation; a
//! pool's ends publishing, and the run reports the pool error met first in the drive's order
//! (every item before it is applied by then, whatever the threads did).  A panic in a worker
//! is caught where the task runs and becomes an internal error; one in the dispatcher unwinds
//! after the workers have left.

use super::apply::{apply, Pool};
use super::board::{Board, Chunk, Task};
use super::item::{Item, Sink, Split};
use super::pools::Pools;
use crate::error::{Error, Result};
use crate::ftl::Policy;
use crate::interrupt::Interrupt;
use crate::rng::Rng;
use crate::timed::Stop;
use crate::workload::Workload;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, PoisonError};

/// Items in a chunk (a chunk may end a little later, at the end of its page).
pub(crate) const CHUNK: usize = 16 * 1024;
/// Chunks in flight before the dispatcher helps rather than generates.
pub(crate) const MAX_SLOTS: usize = 4;
/// Each worker's stack.
pub(crate) const STACK: usize = 1 << 20;

type Cells<'a, P> = [Mutex<&'a mut Vec<Pool<P>>>];

impl<P: Policy + Send> Pools<P> {
    /// The functional loop (`sim::functional::run_until`) on the pools: drive `wl` until
    /// `stop` (or the end of the stream), on the pools' threads.
    pub fn drive(&mut self, wl: &mut Workload, rng: &mut Rng, stop: Stop, intr: &mut Interrupt) -> Result<()> {
        let limited = stop.cmds != u64::MAX;
        let pages = wl.pages;
        self.run(self.threads, |split, sink| {
            let mut left = 1; // commands until the interrupt is asked (as the serial loop asks it)
            while split.c.host_write_bytes < stop.write_bytes && !(limited && split.c.commands() >= stop.cmds) {
                intr.tick(&mut left)?;
                let (op, _) = wl.next_ahead(rng);
                if op.len == 0 {
                    break; // the end of a trace, or a generator stopped
                }
                split.command(&op, pages, sink)?;
            }
            Ok(())
        })
    }

    /// Run `generate` (the serial part, on this thread) with the pools' work on `threads`
    /// threads (this one included); returns once every item it made is applied.
    pub(crate) fn run(
        &mut self,
        threads: usize,
        generate: impl FnOnce(&mut Split, &mut Feed<'_, '_, P>) -> Result<()>,
    ) -> Result<()> {
        let shards = self.shards.len();
        let board = Board::new(shards, std::mem::take(&mut self.free), MAX_SLOTS);
        let cells: Vec<Mutex<&mut Vec<Pool<P>>>> = self.shards.iter_mut().map(Mutex::new).collect();
        let split = &mut self.split;
        let made = std::thread::scope(|s| {
            for _ in 1..threads.min(shards) {
                // a thread the system refuses is one helper less: the dispatcher does its share
                let _ = std::thread::Builder::new().stack_size(STACK).spawn_scoped(s, || {
                    while let Some(t) = board.wait_task() {
                        run_task(&board, &cells, t);
                    }
                });
            }
            let leave = Leave(&board); // a panic below: the workers finish and leave
            let mut feed = Feed { board: &board, cells: &cells, chunk: Chunk::new(shards), stopped: false };
            let made = generate(split, &mut feed).and(feed.flush());
            board.close(&mut |t| run_task(&board, &cells, t));
            drop(leave);
            made
        });
        drop(cells);
        let (free, failed) = board.into_parts();
        self.free = free;
        self.refresh();
        match failed {
            Some((_, e)) => Err(e),
            None => made,
        }
    }
}

/// Closes the board when dropped (the dispatcher unwinding), so that the workers leave.
struct Leave<'a>(&'a Board);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0.abandon();
    }
}

/// The dispatcher's sink: items into the chunk being made, published when full.
pub(crate) struct Feed<'a, 'b, P: Policy> {
    board: &'a Board,
    cells: &'a Cells<'b, P>,
    chunk: Chunk,
    /// A pool failed: nothing more is published.
    stopped: bool,
}

impl<P: Policy + Send> Feed<'_, '_, P> {
    /// Publish the chunk being made (if it holds anything).
    fn flush(&mut self) -> Result<()> {
        if self.chunk.len == 0 || self.stopped {
            return Ok(());
        }
        let full = std::mem::replace(&mut self.chunk, Chunk { base: 0, shards: Vec::new(), len: 0 });
        let (board, cells) = (self.board, self.cells);
        match board.publish(full, &mut |t| run_task(board, cells, t)) {
            Some(next) => {
                self.chunk = next;
                Ok(())
            }
            None => {
                self.stopped = true;
                // the pool's error is the run's (Pools::run)
                Err(Error::internal("stopped: a GC pool failed"))
            }
        }
    }
}

impl<P: Policy + Send> Sink for Feed<'_, '_, P> {
    #[inline(always)]
    fn put(&mut self, shard: usize, mut item: Item, seq: u64) -> Result<()> {
        if self.chunk.len == 0 {
            self.chunk.base = seq;
        }
        item.off = (seq - self.chunk.base) as u32;
        self.chunk.shards[shard].push(item);
        self.chunk.len += 1;
        if self.chunk.len >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }
}

/// Apply task `t` (on whichever thread took it) and report it done; a panic becomes the
/// shard's error (its pools marked failed: their state is unknown).
fn run_task<P: Policy + Send>(board: &Board, cells: &Cells<'_, P>, t: Task) {
    let Task { shard, number, chunk } = t;
    let mut events = Vec::new();
    let err = {
        let mut pools = cells[shard].lock().unwrap_or_else(PoisonError::into_inner);
        let items = &chunk.shards[shard];
        let r = catch_unwind(AssertUnwindSafe(|| {
            apply(&mut pools, shard as u32, cells.len() as u32, items, chunk.base, &mut events)
        }));
        r.unwrap_or_else(|panic| {
            pools.iter_mut().for_each(|p| p.failed = true);
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Some((chunk.base, Error::internal(format!("a simulation thread panicked: {msg}"))))
        })
    };
    drop(chunk); // before finish: the board takes the buffer back
    board.finish(shard, number, events, err);
}
