//! A config resolved against its drive, nothing allocated: [`ModelSpec`], what
//! `Simulator::new` builds the model from and what `describe` reports.  Every check of a
//! config happens here or in `config` (the checks that need no drive), in a fixed order (the
//! first error is reported).  This room sits above `config` and `geometry` (the drive cut into
//! blocks, itself computed from the config) and below `sim` and `describe`.
//!
//! Rooms: `memory` (the model's memory and its limit), `slc` (the SLC cache in blocks),
//! `unit` (the GC unit: FTL block or superblock).

mod memory;
mod slc;
pub mod unit;

pub(crate) use memory::memory_limit;

use crate::config::gc::GcLayout;
use crate::config::map_cache::MapCacheParams;
use crate::config::{checks, placement, Config};
use crate::error::Result;
use crate::ftl::SlcParams;
use crate::geometry::Geometry;

/// The resolved model description: the geometry, the mapping-table cache, the model's
/// memory, the SLC cache's limits, the GC policy's parameter, placement and GC's layout.
#[derive(Clone, Debug)]
pub struct ModelSpec {
    pub geo: Geometry,
    pub map_cache: Option<MapCacheParams>,
    /// Bytes the model allocates.
    pub memory: u64,
    pub slc: Option<SlcParams>,
    /// d of d-choices, the window of windowed greedy, 1 for random, else 0.
    pub policy_param: u32,
    /// Namespaces and placement (None: off).
    pub placement: Option<placement::Resolved>,
    /// Garbage collection's frontier, scope and reserve.
    pub gc: GcLayout,
}

impl ModelSpec {
    /// Check `cfg` and resolve it against its drive without allocating the model.
    /// `model_limits`: also refuse what the simulator cannot model (the memory limit and the
    /// 32-bit mapping tables), as `Simulator::new` does; false describes any drive.
    pub fn resolve(cfg: &Config, model_limits: bool) -> Result<ModelSpec> {
        let gc = GcLayout::resolve(cfg)?;
        let policy_param = checks::ftl_knobs(&cfg.ftl)?;
        if let Some(t) = &cfg.timing {
            t.check_bounds()?; // before anything is built: docs/timed.md, "Bounds"
        }
        checks::run_lengths(&cfg.run)?;
        let (mut geo, limit) = memory::geometry(cfg, &gc, model_limits)?;
        let map_cache = match cfg.timing.as_ref().and_then(|t| t.map_cache.as_ref().map(|m| (t, m))) {
            Some((t, m)) => m.resolve(geo.page_size, geo.user_pages, t.nand_page_size.0)?,
            None => None,
        };
        let block_bytes = geo.page_size * geo.pages_per_block as u64;
        let placement = placement::resolve(cfg, geo.user_sectors(), geo.sectors_per_page(), block_bytes)?;
        (geo.unit.open_host, geo.unit.open_gc) = open_units(cfg, &gc, placement.as_ref());
        let memory = memory::model_memory(cfg, &geo, &gc, placement.as_ref(), map_cache.as_ref(), &limit)?;
        // (the SLC-mode times of [timing] are ignored without a cache: a preset sets them
        // and `enabled = false` turns its cache off)
        let slc = match &cfg.ftl.slc_cache {
            Some(c) if c.enabled => Some(slc::slc_params(c, cfg, &geo, gc.reserve_blocks())?),
            _ => None,
        };
        checks::pts(cfg)?;
        checks::peer_knobs(cfg, &gc, placement.as_ref())?;
        Ok(ModelSpec { geo, map_cache, memory, slc, policy_param, placement, gc })
    }
}

/// Units (blocks or superblocks) the FTL keeps open, as `ftl::Ftl` keeps them: (host, GC).
/// Host writes: one per host stream (and host class, `ftl.separation`), or per placement handle, in each GC group; GC copies:
/// one per GC group and class (`ftl.separation`; none with `gc_frontier = "shared"`, which copies into the host's), or
/// with FDP persistent isolation one per handle.
fn open_units(cfg: &Config, gc: &GcLayout, placement: Option<&placement::Resolved>) -> (u32, u32) {
    let streams = placement.map_or(cfg.ftl.streams, |p| if p.placed() { p.handles } else { cfg.ftl.streams });
    let gc_open = match placement {
        _ if gc.shared => 0,
        Some(p) if p.persistent() => p.handles.max(1),
        _ => gc.groups.saturating_mul(gc.classes),
    };
    (streams.saturating_mul(gc.host_classes).saturating_mul(gc.groups), gc_open)
}
