//! The timed SSD model: host interface, controller, DRAM write buffer and NAND array on top
//! of the functional FTL (the same `Ftl` code, not a copy).
//!
//! Every host command runs through the functional FTL, which decides what NAND work it
//! causes (the host page programs, and any garbage-collection reads, programs and erases,
//! read off its counters).  This module charges that work to resource timelines: the
//! controller's firmware, the host link, each flash channel and each die.  A command's
//! completion time follows when it is issued; the event queue (`engine`) orders completions
//! and, under a closed-loop queue depth, issues the next command at each completion.
//!
//! Model (documented in docs/timed.md):
//! * FTL blocks are superblocks striped across every die and plane: consecutive pages of a
//!   frontier go to consecutive dies; erasing a superblock occupies every die for tBERS.
//! * A program operation writes `nand_page_size / page_size x planes` mapping units at once
//!   (multi-plane); with the write cache on, units are aggregated, so each unit costs
//!   tPROG / units on its die; with the cache off, every command programs (and pads) whole
//!   program units: the Micron note's warning in numbers.
//! * Page types (optional `t_read_page_us`, `t_prog_page_us`): a program unit is a word line
//!   on every plane, its units LSB first; a unit's place on its die gives its page type,
//!   whose tR a read costs; programmed page by page, a word line costs the sum of its
//!   pages' tPROG (the cache off pads one page).  Precomputed per position (`PageCosts`).
//! * Reads (optional `read_planes`, `read_whole_pages`): a sense reads one page of one
//!   plane; a die's planes split into `read_planes` groups that sense independently (programs
//!   and erases still hold the whole die), and a command's units in one NAND page share one
//!   sense (`ReadTiming` gives a unit's group and page from its position on the die).
//! * Garbage-collection copies are spread over the dies round-robin, each read and
//!   programmed on its own die (copyback style), so dies collect in parallel;
//!   foreground GC delays the host pages that needed its free block.  Background GC runs
//!   only on dies that would otherwise idle.
//! * The write buffer holds units until their program ends; a write completes to the host
//!   when it has room in the buffer (cache on) or when its program ends (cache off).
//! * The controller's firmware runs host commands (`fw_overhead_us` each) and garbage
//!   collection (`gc_fw_us` per copied page) on one timeline: a client controller is
//!   often the bottleneck in steady state, not the NAND.
//! * Urgent state (SK hynix, `urgent`): while the pool of free blocks is below
//!   `urgent_free_pct` of a reference block count, garbage collection takes over the NAND
//!   time and host writes are admitted at `urgent_perf_pct` of the sustained write rate.
//! * Mapping-table cache (`map_cache`, DFTL-style, off unless given): a command's translation
//!   pages are looked up in an LRU; a miss reads its page from NAND before the data access, a
//!   dirty eviction programs one (`mapcache`).
//!
//! Rooms: `device` (the resource timelines and what each NAND operation costs), `channel`
//! (the flash channels' timelines in issue or ready order), `state` (a
//! run's state and event loop), `record` (series, rounds, latency), `engine` and `stop` (the
//! event queue and where a loop stops), `costs` (the per-command cost rules, closed form), `mixed` (its latency bound of a
//! read/write mix: a mixed queueing network),
//! `mapcache`, `urgent`, `pts`, `hist`.  The schema itself is `config::timing`, resolved to ns
//! and counts in `config::timing_resolved` (`Resolved`, re-exported here).

mod channel;
pub mod costs;
mod device;
pub mod engine;
pub mod hist;
pub mod mapcache;
mod mixed;
pub mod pts;
mod record;
mod state;
mod stop;
pub mod urgent;

pub use crate::config::timing_resolved::{PageTiming, Resolved, SlcTiming};
use device::Device;
pub use record::{phases, Phases, Recorder, RoundDone, SeriesAcc, SeriesPoint, TimedRound};
pub use state::TimedState;
pub use stop::Stop;
