//! The FTL's side of data placement and namespaces: which namespace each logical page
//! belongs to, which handle wrote its current data, per-namespace and per-handle counters,
//! and (FDP, persistently isolated) a garbage-collection frontier per handle.
//!
//! Off (no namespaces, mode none) the FTL holds none of this and runs as before.

use super::{Frontier, EMPTY_FRONTIER};
use crate::error::Result;
use crate::interrupt::Interrupt;
use crate::memory::{try_vec, try_vec_polled};
use serde::Serialize;

/// What the FTL needs to know: namespace boundaries (logical pages), handles, isolation.
#[derive(Clone, Debug)]
pub struct PlacementParams {
    /// First logical page of each namespace, and the end of the last (len = namespaces + 1).
    pub ns_bounds: Vec<u32>,
    /// Handles whose writes are counted (0: mode none, no per-handle figures).
    pub handles: u32,
    /// GC copies stay with their handle (FDP, persistently isolated).
    pub persistent: bool,
}

/// Counters, 64-bit, never reset (the simulator takes differences).  Namespace index
/// `namespaces` holds pages outside every namespace (written by direct host commands).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct PlacementCounters {
    pub ns_host_write_bytes: Vec<u64>,
    /// Pages programmed with the namespace's data: host writes, GC copies and folds.
    pub ns_nand_write_pages: Vec<u64>,
    pub ns_gc_copy_pages: Vec<u64>,
    pub handle_host_write_pages: Vec<u64>,
    /// GC copies (and folds) of the handle's data: the FDP "media reallocated" event.
    pub handle_media_reallocated_pages: Vec<u64>,
    /// Reclaim units (blocks) opened for the handle's host writes.
    pub handle_reclaim_units: Vec<u64>,
    /// Metadata pages (`ftl.meta_writes`) written with the handle's host writes.
    pub handle_meta_pages: Vec<u64>,
}

impl PlacementCounters {
    pub fn minus(&self, o: &PlacementCounters) -> PlacementCounters {
        let d = |a: &[u64], b: &[u64]| a.iter().zip(b).map(|(x, y)| x - y).collect();
        PlacementCounters {
            ns_host_write_bytes: d(&self.ns_host_write_bytes, &o.ns_host_write_bytes),
            ns_nand_write_pages: d(&self.ns_nand_write_pages, &o.ns_nand_write_pages),
            ns_gc_copy_pages: d(&self.ns_gc_copy_pages, &o.ns_gc_copy_pages),
            handle_host_write_pages: d(&self.handle_host_write_pages, &o.handle_host_write_pages),
            handle_media_reallocated_pages: d(&self.handle_media_reallocated_pages, &o.handle_media_reallocated_pages),
            handle_reclaim_units: d(&self.handle_reclaim_units, &o.handle_reclaim_units),
            handle_meta_pages: d(&self.handle_meta_pages, &o.handle_meta_pages),
        }
    }
}

pub(super) struct Placement {
    /// Namespace of each logical page.
    ns_of: Vec<u8>,
    /// Handle that wrote each logical page's current data (empty with mode none).
    handle_of: Vec<u8>,
    pub(super) c: PlacementCounters,
    /// Per-handle GC frontiers (persistently isolated; else empty).
    pub(super) gc: Vec<Frontier>,
    /// Handle each block was opened for ([`SHARED`]: a shared GC or fold destination).
    block_handle: Vec<u8>,
}

/// The tag of a block written by the shared GC or fold frontier.
pub(super) const SHARED: u8 = u8::MAX;

/// Bytes of the placement tables per logical page (for the memory estimate): the
/// namespace tag, and the handle tag when writes carry handles.
pub fn bytes_per_page(handles: u32) -> u64 {
    1 + (handles > 0) as u64
}

impl Placement {
    pub(super) fn new(p: &PlacementParams, lpns: u32, blocks: u32, interrupt: &mut Interrupt) -> Result<Placement> {
        let n = p.ns_bounds.len().saturating_sub(1);
        let mut ns_of = try_vec_polled(lpns as usize, n as u8, "namespace map", interrupt)?;
        for i in 0..n {
            let (a, b) = (p.ns_bounds[i] as usize, (p.ns_bounds[i + 1] as usize).min(lpns as usize));
            ns_of[a..b].iter_mut().for_each(|x| *x = i as u8);
        }
        let h = p.handles as usize;
        Ok(Placement {
            ns_of,
            handle_of: if h > 0 { try_vec_polled(lpns as usize, 0u8, "handle map", interrupt)? } else { Vec::new() },
            c: PlacementCounters {
                ns_host_write_bytes: vec![0; n + 1],
                ns_nand_write_pages: vec![0; n + 1],
                ns_gc_copy_pages: vec![0; n + 1],
                handle_host_write_pages: vec![0; h],
                handle_media_reallocated_pages: vec![0; h],
                handle_reclaim_units: vec![0; h],
                handle_meta_pages: vec![0; h],
            },
            gc: if p.persistent { vec![EMPTY_FRONTIER; h] } else { Vec::new() },
            block_handle: try_vec(blocks as usize, SHARED, "block handle tags")?,
        })
    }

    /// A host command of `bytes` starting at logical page `lpn`.
    #[inline(always)]
    pub(super) fn host_command(&mut self, lpn: u32, bytes: u64) {
        self.c.ns_host_write_bytes[self.ns_of[lpn as usize] as usize] += bytes;
    }

    /// A host page programmed for `lpn` by handle `stream`.
    #[inline(always)]
    pub(super) fn host_page(&mut self, lpn: u32, stream: u32) {
        self.c.ns_nand_write_pages[self.ns_of[lpn as usize] as usize] += 1;
        if let Some(h) = self.handle_of.get_mut(lpn as usize) {
            *h = stream as u8;
            self.c.handle_host_write_pages[stream as usize] += 1;
        }
    }

    /// A metadata page written for the host write of `lpn` by handle `stream` (counted as its
    /// namespace's and its handle's).
    #[inline(always)]
    pub(super) fn meta_page(&mut self, lpn: u32, stream: u32) {
        self.c.ns_nand_write_pages[self.ns_of[lpn as usize] as usize] += 1;
        if let Some(m) = self.c.handle_meta_pages.get_mut(stream as usize) {
            *m += 1;
        }
    }

    /// A page of `lpn` moved by garbage collection (or a fold).
    #[inline(always)]
    pub(super) fn moved(&mut self, lpn: u32) {
        let ns = self.ns_of[lpn as usize] as usize;
        self.c.ns_nand_write_pages[ns] += 1;
        self.c.ns_gc_copy_pages[ns] += 1;
        if let Some(&h) = self.handle_of.get(lpn as usize) {
            self.c.handle_media_reallocated_pages[h as usize] += 1;
        }
    }

    /// The handle that wrote `lpn`'s current data.
    #[inline(always)]
    pub(super) fn handle(&self, lpn: u32) -> usize {
        self.handle_of[lpn as usize] as usize
    }

    /// Block `b` opened for handle `stream`'s host writes.
    pub(super) fn opened(&mut self, b: u32, stream: usize) {
        self.block_handle[b as usize] = stream as u8;
        if let Some(n) = self.c.handle_reclaim_units.get_mut(stream) {
            *n += 1;
        }
    }

    /// Block `b` opened as a GC destination of `tag` (a handle, or [`SHARED`]).
    pub(super) fn opened_gc(&mut self, b: u32, tag: u8) {
        self.block_handle[b as usize] = tag;
    }

    /// Blocks holding data (not free) per handle, and those of the shared destinations.
    pub(super) fn blocks_per_handle(&self, state: &[super::BlockState]) -> (Vec<u64>, u64) {
        let mut v = vec![0u64; self.c.handle_reclaim_units.len()];
        let mut shared = 0;
        for (&t, &st) in self.block_handle.iter().zip(state) {
            if st == super::BlockState::Free {
                continue;
            }
            match v.get_mut(t as usize) {
                Some(n) => *n += 1,
                None => shared += 1,
            }
        }
        (v, shared)
    }
}
