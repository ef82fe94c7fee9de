//! Both cores for one drive (issue 40): the functional model of a drive whose garbage
//! collection pools are independent run on several threads, with results that do not depend
//! on the thread count (docs/parallel.md).
//!
//! **The cut.** With `ftl.gc_scope = "die"` or `"plane"` logical page `l` lives in pool
//! `l mod pools`, and each pool has its own blocks, free pool, write frontiers and victim index:
//! nothing a pool decides reads another pool.  Each pool here is an FTL of its own
//! ([`crate::ftl::Ftl`] over its blocks and its pages `l / pools`).
//!
//! **The serial part** (the calling thread, the dispatcher): the seeded generator makes the
//! host commands exactly as the serial loop does, and stops where it stops (the stop reads only
//! host counters, which the dispatcher keeps); each command is split by page into items for the
//! pools ([`item::Split`]: the command counters, the host page clock, the metadata pages owed).
//! Items go out in chunks of [`drive::CHUNK`] pages, per shard of pools.
//!
//! **The parallel part**: threads take (shard, chunk) tasks from a board ([`board`]) under one
//! lock per task; a shard's chunks are applied in order, so every pool sees its own pages in
//! the drive's order, whatever thread applies them ([`apply`]).
//!
//! **Why exact.** A pool's state after a sequence of its pages is the same as the group's state
//! in one FTL after the same pages, provided what it reads from outside is the same: its pages
//! (in order), the drive's host page clock at each (cost-benefit's ages; items carry it), and
//! nothing else (the policies that draw random numbers share one stream, and run serial; see
//! [`plan`]).  What one FTL keeps for the whole drive is merged in a fixed order: counters are
//! sums; the erase counts and victim histograms are the pools' in pool order and sums; the
//! fewest free blocks of the drive is the minimum over the drive's writes of the pools' sum
//! ([`free`]).  Errors are reported as the first in the drive's order.
//!
//! Rooms: `plan` (how many threads and why), `item` (a command into items), `apply` (a shard's
//! items on its pools), `free` (the drive's fewest free blocks), `board` (the chunks in flight),
//! `pools` (the pools as one drive), `drive` (the threaded run).  Its tests, against the serial
//! run, are the simulator's (`sim/parallel_tests.rs`).

mod apply;
mod board;
mod drive;
mod free;
mod item;
mod plan;
mod pools;

pub(crate) use plan::shards;
pub use plan::{cores, plan, Parallelism, MAX_THREADS};
pub use pools::Pools;
