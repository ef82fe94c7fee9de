//! The resolved drive, without building its model: the config with the preset applied and
//! the defaults filled, the geometry, OP in every basis (with the planner's `added` basis and
//! the OP garbage collection sees), the SLC cache's limits, the timing resolved to the units
//! the cost model charges, and the cost model's inputs.  Nothing the size of the drive is
//! allocated (no mapping tables, no block metadata): a 100 TB drive is described as fast as
//! a small one.

use crate::config::{Config, OpBasis, Precondition, WorkloadType};
use crate::error::{Error, Result};
pub use crate::geometry::gc_pool_blocks;
use crate::geometry::{Geometry, OpReport};
use crate::resolve::ModelSpec;
use crate::sim::{drive_report, resolve_timing, DriveReport};
use crate::timed::costs::CostModel;
use crate::timed::Resolved;
use crate::units::ByteSize;
use serde::Serialize;

/// A drive as the core resolves it.
#[derive(Clone, Debug, Serialize)]
pub struct Description {
    /// The config, preset applied and defaults filled.
    pub config: Config,
    pub drive: DriveReport,
    pub op: OpBases,
    /// The SLC cache's limits, when it is on.
    pub slc_cache: Option<SlcReport>,
    /// The timing resolved (ns, counts), with a `[timing]` table.
    pub timing: Option<Resolved>,
    /// What the cost model (`timed::costs`) needs, with a `[timing]` table.
    pub cost_model: Option<CostModel>,
    /// Whether `run.precondition = "analytic"` can lay out the steady state of this config's
    /// `[workload]` on this drive (the simulator's checks before its first round).
    pub analytic_precondition: bool,
    /// Whether the simulator can model this drive (memory limit, 32-bit mapping tables);
    /// always true when the description was asked with the model's limits checked.
    pub fits_model: bool,
}

/// OP in every basis at one user capacity.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct OpBases {
    #[serde(flatten)]
    pub report: OpReport,
    /// (native - user) / user: OP added over the native capacity (SanDisk, SK hynix
    /// "level 2"), when the native capacity is known.
    pub added: Option<f64>,
    /// OP (user basis) garbage collection sees: the physical pages outside the free-block
    /// reserve and the SLC cache's static part (the pool GC collects in), over the user
    /// pages.  `report.effective` leaves the SLC cache in.
    pub seen_by_gc: f64,
    /// Blocks of that pool.
    pub gc_pool_blocks: u64,
}

/// The SLC cache resolved to blocks.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SlcReport {
    pub max_blocks: u32,
    pub min_blocks: u32,
    pub bits: u32,
    pub fold_when_full: bool,
    /// In steady state (every LBA written) the cache is its static part; with one and folding
    /// when full, every host write is programmed in SLC mode and folded.
    pub steady_folds: bool,
}

/// A scale model of the drive ([`Description::scale_model`]): the same NAND (page, dies,
/// planes and timing) in fewer pages, its free-block reserve and SLC cache's static part as
/// the core keeps them at that size (GC groups, `ftl.gc_reserve`, the SLC share of the
/// blocks), holding the user pages that give garbage collection a given OP (`seen_by_gc`,
/// user basis).  FTL blocks: fewer blocks of the drive's size; superblocks: as many as the
/// drive has (at most the blocks asked for), each holding fewer pages.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ScaleModel {
    /// GC units (blocks or superblocks) of the model.
    pub blocks: u32,
    /// Mapping units per GC unit of the model: the drive's for FTL blocks, the superblock's
    /// / the scale for superblocks.
    pub pages_per_block: u32,
    /// `ftl.superblock_scale` of the model (superblock drives; None for blocks).
    pub superblock_scale: Option<u32>,
    pub physical_bytes: u64,
    pub user_pages: u64,
    pub user_bytes: u64,
    /// Blocks of the pool GC collects in (`blocks` less the reserve and the SLC static part).
    pub gc_pool_blocks: u64,
}

/// The pages a superblock drive's scale model of `blocks` blocks holds at most, per block
/// asked for: as many as that many FTL blocks of 256 pages (`drive.pages_per_block`'s
/// default), so a model asked in blocks costs about the same whatever the drive's unit.
pub const SCALE_MODEL_BLOCK_PAGES: u64 = 256;

/// The scale rule (`Description::scaled`): what a model `scale` times smaller than the drive
/// sets.  A drive of FTL blocks (`gc_unit = "block"`) keeps its block and has `scale` times
/// fewer of them; a superblock drive keeps its number of superblocks and each holds `scale`
/// times fewer pages (`ftl.superblock_scale`), so the number of units GC chooses among, the
/// open units and what a zone or a stream fills of a unit stay as on the full drive.  Either
/// way the physical and user capacities are divided by `scale`, and so is any size measured
/// against the unit (`size`: a zoned workload's `zone_size`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Scaled {
    pub scale: u64,
    /// `drive.physical_capacity` and `drive.user_capacity` of the model, bytes.
    pub physical_capacity: u64,
    pub user_capacity: u64,
    /// `ftl.superblock_scale` of the model (superblock drives; None for blocks).
    pub superblock_scale: Option<u32>,
    /// `workload.zone_size` of the model: a size measured against the GC unit (a zone) is
    /// divided by the scale, as the unit is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone_size: Option<u64>,
}

/// OP in every basis for the drive's own user capacity.
pub fn op_bases(geo: &Geometry, gc_low: u32, slc_static: u32) -> OpBases {
    let report = geo.op_report(gc_low);
    let pool = gc_pool_blocks(geo, gc_low, slc_static);
    let up = geo.user_pages as f64;
    let user = geo.user_bytes as f64;
    OpBases {
        added: geo.native_bytes.map(|n| (n as f64 - user) / user),
        seen_by_gc: (pool as f64 * geo.pages_per_block as f64 - up) / up,
        gc_pool_blocks: pool,
        report,
    }
}

/// Describe the drive `cfg` builds.  `model_limits`: refuse, as the simulator would, a drive
/// whose model exceeds the memory limit or the 32-bit mapping tables; false describes any
/// drive (and says in `fits_model` whether the simulator could model it).
pub fn describe(cfg: Config, model_limits: bool) -> Result<Description> {
    let spec = ModelSpec::resolve(&cfg, model_limits)?;
    let fits_model = model_limits || ModelSpec::resolve(&cfg, true).is_ok();
    describe_model(cfg, spec, fits_model)
}

/// Describe the drive `cfg` as `spec` (resolved from it) describes it; `fits_model`: whether
/// the simulator can model it.
pub(crate) fn describe_model(cfg: Config, spec: ModelSpec, fits_model: bool) -> Result<Description> {
    let cfg = cfg.echoed();
    let ModelSpec { geo, map_cache, memory, slc, gc, .. } = spec;
    let gc_low = gc.reserve_blocks();
    let slc_static = slc.map_or(0, |s| s.min_blocks);
    let timing = match &cfg.timing {
        Some(tc) => Some(resolve_timing(tc, &geo, slc.as_ref(), map_cache.as_ref())?),
        None => None,
    };
    let slc_cache = slc.map(|s| SlcReport {
        max_blocks: s.max_blocks,
        min_blocks: s.min_blocks,
        bits: s.bits,
        fold_when_full: s.fold_when_full,
        steady_folds: s.min_blocks > 0 && s.fold_when_full,
    });
    let cost_model = match (&timing, &cfg.timing) {
        (Some(r), Some(tc)) => Some(CostModel {
            timing: r.clone(),
            write_cache: tc.write_cache,
            slc_folds: slc_cache.as_ref().is_some_and(|s| s.steady_folds),
            slc_burst: false,
            ftl_block_units: geo.physical_pages() / geo.blocks.max(1) as u64,
            superblock: crate::timed::costs::SuperblockErase::of(&geo.unit),
            meta_writes: cfg.ftl.meta_writes,
        }),
        _ => None,
    };
    Ok(Description {
        analytic_precondition: analytic_precondition(&cfg, &geo),
        drive: drive_report(&geo, memory),
        op: op_bases(&geo, gc_low, slc_static),
        slc_cache,
        timing,
        cost_model,
        fits_model,
        config: cfg,
    })
}

/// Whether analytic preconditioning applies to `cfg`'s workload on `geo`: the config with
/// `run.precondition = "analytic"` passes the core's checks, and the mean-field model covers
/// its workload (uniform random writes that each rewrite one page) and GC policy.
fn analytic_precondition(cfg: &Config, geo: &Geometry) -> bool {
    let mut analytic = cfg.clone();
    analytic.run.precondition = Precondition::Analytic;
    if ModelSpec::resolve(&analytic, false).is_err() {
        return false;
    }
    let w = &cfg.workload;
    let single_page = w.kind == WorkloadType::Uniform
        && crate::workload::build(
            w,
            w.kind,
            geo.user_sectors(),
            geo.sector_size as u64,
            geo.page_size,
            cfg.ftl.streams,
            None,
        )
        .is_ok_and(|wl| wl.uniform_page_span(geo.sectors_per_page()).is_some());
    crate::meanfield::analytic_refusal(w.kind, single_page, cfg.ftl.gc).is_none()
}

impl Description {
    /// OP in every basis were the drive set to `user_bytes` (a whole number of sectors; the
    /// physical and native capacities, reserve and SLC cache as described).
    pub fn op_at(&self, user_bytes: u64) -> Result<OpBases> {
        let d = &self.drive;
        if user_bytes == 0 || user_bytes % d.sector_size as u64 != 0 {
            return Err(Error::capacity(
                "user_bytes",
                format!("{user_bytes} is not a positive whole number of {}-byte sectors", d.sector_size),
            ));
        }
        let geo = Geometry {
            page_size: d.page_size,
            pages_per_block: d.pages_per_block,
            blocks: d.blocks,
            sector_size: d.sector_size,
            user_bytes,
            user_pages: user_bytes.div_ceil(d.page_size),
            native_bytes: d.native_bytes,
            unit: d.gc_unit,
        };
        let slc_static = self.slc_cache.as_ref().map_or(0, |s| s.min_blocks);
        let reserve = crate::config::gc::GcLayout::resolve(&self.config)?.reserve_blocks();
        Ok(op_bases(&geo, reserve, slc_static))
    }

    /// The scale model of `blocks` blocks whose user pages give garbage collection the OP
    /// `seen_by_gc` (user basis): the most user pages with (pool pages - user pages) / user
    /// pages at least `seen_by_gc`, the pool as the core resolves it for the model (this
    /// drive's config with its physical capacity cut to the model's units).
    ///
    /// FTL blocks (`gc_unit = "block"`): `blocks` blocks of the drive's size.  Superblocks:
    /// the scale rule ([`Scaled`]): the drive's superblocks, or `blocks` of them if it has
    /// more, each divided by the smallest `k` (a divisor of its pages) that leaves the model
    /// at most `blocks` x [`SCALE_MODEL_BLOCK_PAGES`] pages (`ftl.superblock_scale` = the
    /// drive's x `k`): a 7450 PRO's 2,960 superblocks of 98,304 pages asked as 2,048 blocks
    /// are 2,048 superblocks of 256 pages; a 64 GiB drive's 211 of them, 211 of 2,048.
    pub fn scale_model(&self, blocks: u32, seen_by_gc: f64) -> Result<ScaleModel> {
        let key = "scale_blocks";
        let d = &self.drive;
        if blocks == 0 || !(seen_by_gc.is_finite() && seen_by_gc > -1.0) {
            return Err(Error::capacity(
                key,
                format!("{blocks} blocks at an OP seen by GC of {seen_by_gc} is no drive"),
            ));
        }
        let (units, ppb, superblock_scale) = match self.superblock_model(blocks)? {
            Some((units, k)) => (units, d.pages_per_block / k, Some(d.gc_unit.scale * k)),
            None => (blocks, d.pages_per_block, None),
        };
        let ppb = ppb as u64;
        let physical_bytes = units as u64 * ppb * d.page_size;
        let pool = describe(self.config_with_blocks(units, ppb, superblock_scale), false)?.op.gc_pool_blocks;
        let user_pages = (pool as f64 * ppb as f64 / (1.0 + seen_by_gc)).floor() as u64;
        if user_pages == 0 {
            return Err(Error::capacity(
                key,
                format!("a scale model of {units} blocks leaves garbage collection {pool} blocks: no user page fits"),
            ));
        }
        Ok(ScaleModel {
            blocks: units,
            pages_per_block: ppb as u32,
            superblock_scale,
            physical_bytes,
            user_pages,
            user_bytes: user_pages * d.page_size,
            gc_pool_blocks: pool,
        })
    }

    /// A superblock drive's scale model of `blocks` blocks ([`Description::scale_model`]):
    /// (superblocks, the factor `k` dividing each); None for FTL blocks.
    fn superblock_model(&self, blocks: u32) -> Result<Option<(u32, u32)>> {
        let d = &self.drive;
        let u = &d.gc_unit;
        if u.kind == crate::config::gc::GcUnitKind::Block {
            return Ok(None);
        }
        let units = d.blocks.min(blocks).max(1);
        let most = (blocks as u64 * SCALE_MODEL_BLOCK_PAGES / units as u64).max(2);
        let pages = u.pages;
        // the smallest k leaving a unit of at most `most` pages (and 2 or more); a unit with
        // no such divisor stays as it is
        let k = (1..=pages / 2).find(|&k| pages % k == 0 && (pages / k) as u64 <= most).unwrap_or(1);
        if u.scale as u64 * k as u64 > u32::MAX as u64 {
            return Err(Error::capacity(
                "scale_blocks",
                format!(
                    "a scale model of {blocks} blocks divides the superblock by more than ftl.superblock_scale holds"
                ),
            ));
        }
        Ok(Some((units, k)))
    }
    /// The scale model `scale` times smaller than this drive ([`Scaled`]); `user_bytes`: the
    /// full-size drive's user capacity (default its own).  User capacity is rounded down to
    /// whole 4 KiB (the FTL block rule, as before) or whole mapping units (superblocks).
    pub fn scaled(&self, scale: u64, user_bytes: Option<u64>) -> Result<Scaled> {
        let d = &self.drive;
        let u = &d.gc_unit;
        let bad = |why: String| Err(Error::config("scale", why));
        if scale == 0 {
            return bad("must be at least 1".into());
        }
        let user = user_bytes.unwrap_or(d.user_bytes);
        let zone_size = self.config.workload.zone_size.map(|z| z.0 / scale);
        if u.kind == crate::config::gc::GcUnitKind::Block {
            let physical = self.config.drive.physical_capacity.map_or(d.physical_bytes, |p| p.0);
            return Ok(Scaled {
                scale,
                physical_capacity: physical / scale,
                user_capacity: user / scale / 4096 * 4096,
                superblock_scale: None,
                zone_size,
            });
        }
        let total = u.scale as u64 * scale;
        if u.pages as u64 % scale != 0 || u.pages as u64 / scale < 2 || total > u32::MAX as u64 {
            return bad(format!(
                "{scale} does not divide the superblock's {} mapping units into a unit of 2 or more",
                u.pages
            ));
        }
        let unit_bytes = u.bytes / scale;
        Ok(Scaled {
            scale,
            physical_capacity: d.blocks as u64 * unit_bytes,
            user_capacity: user / scale / d.page_size * d.page_size,
            superblock_scale: Some(total as u32),
            zone_size,
        })
    }

    /// This drive's config with the scale model `s` applied.
    pub fn scaled_config(&self, s: &Scaled) -> Config {
        let mut cfg = self.config.clone();
        let c = &mut cfg.drive;
        c.physical_capacity = Some(ByteSize(s.physical_capacity));
        c.user_capacity = Some(ByteSize(s.user_capacity));
        (c.op, c.native_capacity, c.native_op, c.op_basis) = (None, None, None, OpBasis::User);
        cfg.ftl.superblock_scale = s.superblock_scale;
        if let Some(z) = s.zone_size {
            cfg.workload.zone_size = Some(ByteSize(z));
        }
        cfg
    }

    /// This drive's config cut to `blocks` blocks of `ppb` pages (with `superblock_scale`,
    /// superblocks that much smaller), set to the share of its user capacity (whole pages, at
    /// least one) those pages hold: the pool does not depend on it.
    fn config_with_blocks(&self, blocks: u32, ppb: u64, superblock_scale: Option<u32>) -> Config {
        let d = &self.drive;
        let block_bytes = ppb * d.page_size;
        let (model, drive) = (blocks as u128 * ppb as u128, d.blocks.max(1) as u128 * d.pages_per_block as u128);
        let share = (d.user_bytes as u128 * model / drive) as u64;
        let mut cfg = self.config.clone();
        let c = &mut cfg.drive;
        c.physical_capacity = Some(ByteSize(blocks as u64 * block_bytes));
        c.user_capacity = Some(ByteSize((share / d.page_size).max(1) * d.page_size));
        (c.op, c.native_capacity, c.native_op, c.op_basis) = (None, None, None, OpBasis::User);
        if superblock_scale.is_some() {
            cfg.ftl.superblock_scale = superblock_scale;
        }
        cfg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Simulator;

    fn cfg(toml: &str) -> Config {
        Config::from_toml_str(toml).unwrap()
    }

    #[test]
    fn describes_what_new_builds() {
        let c = cfg("[drive]\nuser_capacity = \"64MiB\"\nop = 0.28\npages_per_block = 64\n[timing]\n");
        let sim = Simulator::new(c.clone()).unwrap();
        let d = describe(c, true).unwrap();
        assert_eq!(d.drive, sim.drive_report());
        assert_eq!(d.op.report, sim.op_report());
        assert!(d.fits_model);
        let t = d.timing.as_ref().unwrap();
        assert_eq!(t.dies, 16);
        assert_eq!(d.cost_model.as_ref().unwrap().ftl_block_units, 64);
        // the drive's own capacity through op_at: the same figures
        assert_eq!(d.op_at(d.drive.user_bytes).unwrap(), d.op);
    }

    #[test]
    fn added_and_seen_by_gc() {
        let d = describe(
            cfg("[drive]\nuser_capacity = \"200GB\"\nphysical_capacity = \"256GiB\"\nnative_capacity = \"256GB\"\npage_size = \"16KiB\"\n"),
            true,
        )
        .unwrap();
        assert!((d.op.added.unwrap() - 0.28).abs() < 1e-12);
        assert!((d.op.report.native.unwrap() - 56.0 / 256.0).abs() < 1e-12);
        // without an SLC cache, GC sees what `effective` reports
        assert_eq!(d.op.seen_by_gc, d.op.report.effective);
    }

    #[test]
    fn slc_static_part_is_out_of_the_gc_pool() {
        let d = describe(
            cfg("[drive]\nuser_capacity = \"48MiB\"\nphysical_capacity = \"64MiB\"\npages_per_block = 64\n[ftl.slc_cache]\nmin_fraction = 0.05\nmax_fraction = 0.1\n[timing]\n"),
            true,
        )
        .unwrap();
        let s = d.slc_cache.as_ref().unwrap();
        assert_eq!(s.min_blocks, 12);
        assert!(s.steady_folds && d.cost_model.as_ref().unwrap().slc_folds);
        assert_eq!(d.op.gc_pool_blocks, 256 - 2 - 12);
        assert!(d.op.seen_by_gc < d.op.report.effective);
    }

    /// 100 TB of 4 KiB pages: more pages than the simulator's tables hold and far more memory
    /// than a test machine has, described from the geometry alone.
    #[test]
    fn huge_drive_is_described_not_built() {
        let c = cfg("[drive]\nuser_capacity = \"100TB\"\nop = 0.07\n[run]\nmemory_limit = \"1MiB\"\n[timing]\n");
        let d = describe(c.clone(), false).unwrap();
        assert!(!d.fits_model);
        assert_eq!(d.drive.user_bytes, 100_000_000_000_000);
        assert!(d.drive.model_memory_bytes > 100 << 30);
        assert!((d.op.report.user - 0.07).abs() < 1e-6);
        // with the model's limits, refused as the simulator refuses it: for its memory, first
        let e = describe(c, true).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("drive.user_capacity"));
        assert!(e.message.contains("memory"), "{e}");
    }

    #[test]
    fn op_at_refuses_partial_sectors() {
        let d = describe(cfg("[drive]\nuser_capacity = \"64MiB\"\nop = 0.28\npages_per_block = 64\n"), true).unwrap();
        assert_eq!(d.op_at(100).unwrap_err().key.as_deref(), Some("user_bytes"));
        assert!(d.timing.is_none() && d.cost_model.is_none());
    }

    /// The scale model's pool as the core's FTL keeps it: GC groups and `gc_reserve` count
    /// their reserve per die or plane, the SLC cache's static part is its share of the model.
    #[test]
    fn scale_model_keeps_the_core_reserve() {
        let drive = "[drive]\nuser_capacity = \"60GiB\"\nphysical_capacity = \"64GiB\"\ndies = 8\nplanes_per_die = 2\n";
        for (ftl, pool) in [
            ("", 65534),
            ("[ftl]\ngc_scope = \"die\"\n", 65520),
            ("[ftl]\ngc_scope = \"plane\"\n", 65504),
            ("[ftl]\ngc_reserve = \"20 blocks per plane\"\n", 65216),
        ] {
            let d = describe(cfg(&format!("{drive}{ftl}")), false).unwrap();
            assert_eq!(d.op.gc_pool_blocks, pool, "{ftl}");
            // the whole drive as its own scale model: the core's own pool and user pages
            let m = d.scale_model(d.drive.blocks, d.op.seen_by_gc).unwrap();
            assert_eq!((m.gc_pool_blocks, m.user_pages), (pool, d.drive.user_bytes / 4096), "{ftl}");
            let m = d.scale_model(1024, d.op.seen_by_gc).unwrap();
            assert_eq!(m.gc_pool_blocks, 1024 - (65536 - pool), "{ftl}");
            assert_eq!(m.user_pages, (m.gc_pool_blocks as f64 * 256.0 / (1.0 + d.op.seen_by_gc)).floor() as u64);
        }
        let d = describe(
            cfg("[drive]\nuser_capacity = \"48MiB\"\nphysical_capacity = \"64MiB\"\npages_per_block = 64\n[ftl.slc_cache]\nmin_fraction = 0.05\nmax_fraction = 0.1\n"),
            true,
        )
        .unwrap();
        let m = d.scale_model(100, 0.2).unwrap();
        assert_eq!((m.gc_pool_blocks, m.physical_bytes), (100 - 2 - 5, 100 * 64 * 4096));
        let plain = describe(cfg("[drive]\nuser_capacity = \"48MiB\"\nphysical_capacity = \"64MiB\"\n"), true).unwrap();
        assert_eq!(plain.scale_model(2, 0.2).unwrap_err().key.as_deref(), Some("scale_blocks"));
    }

    /// A superblock drive's scale model follows the scale rule: its superblocks kept (at most
    /// the blocks asked for), each divided so the model holds at most blocks x 256 pages.
    #[test]
    fn scale_model_of_superblocks_keeps_them_smaller() {
        let sb = "[ftl]\ngc_unit = \"superblock\"\n[timing]\nnand_block_size = \"12MiB\"\nplanes = 2\nchannels = 8\ndies_per_channel = 2\n";
        // 53 superblocks of 98,304 pages: all kept, 8,192 pages each (98,304 / 12)
        let d =
            describe(cfg(&format!("[drive]\nuser_capacity = \"16GiB\"\nphysical_capacity = \"20GiB\"\n{sb}")), false)
                .unwrap();
        assert_eq!((d.drive.blocks, d.drive.pages_per_block), (53, 98_304));
        let m = d.scale_model(2048, d.op.seen_by_gc).unwrap();
        assert_eq!((m.blocks, m.pages_per_block, m.superblock_scale), (53, 8192, Some(12)));
        assert_eq!(m.physical_bytes, 53 * 8192 * 4096);
        // the model is a drive the core builds: its pool and OP seen by GC are the model's
        let mut c = d.config.clone();
        (c.drive.physical_capacity, c.drive.user_capacity) =
            (Some(ByteSize(m.physical_bytes)), Some(ByteSize(m.user_bytes)));
        (c.drive.op, c.drive.native_capacity, c.drive.native_op) = (None, None, None);
        c.ftl.superblock_scale = m.superblock_scale;
        let model = describe(c, true).unwrap();
        assert_eq!((model.drive.blocks, model.drive.pages_per_block), (53, 8192));
        assert_eq!(model.op.gc_pool_blocks, m.gc_pool_blocks);
        assert_eq!(m.gc_pool_blocks, 53 - 2);
        assert!(model.op.seen_by_gc >= d.op.seen_by_gc);
        assert_eq!(m.user_pages, (51.0 * 8192.0 / (1.0 + d.op.seen_by_gc)).floor() as u64);
        // fewer blocks asked: fewer, smaller superblocks
        let m = d.scale_model(16, d.op.seen_by_gc).unwrap();
        assert_eq!((m.blocks, m.pages_per_block, m.superblock_scale), (16, 256, Some(384)));
        // the whole drive as its own model
        let m = d.scale_model(53 * 384, d.op.seen_by_gc).unwrap();
        assert_eq!((m.blocks, m.pages_per_block, m.gc_pool_blocks), (53, 98_304, d.op.gc_pool_blocks));
        // the 7450 PRO preset (superblocks of 12 MiB x 4 planes x 16 dies: 196,608 pages), asked
        // as 2,048 blocks: its superblocks kept (fewer than 2,048), each of 256 pages, not
        // 196,608
        let p = describe(cfg("preset = \"micron-7450-pro-960gb\"\n"), false).unwrap();
        assert_eq!(p.drive.pages_per_block, 196_608);
        assert!(p.drive.blocks < 2048);
        let m = p.scale_model(2048, p.op.seen_by_gc).unwrap();
        assert_eq!((m.blocks, m.pages_per_block, m.superblock_scale), (p.drive.blocks, 256, Some(768)));
        assert!(m.blocks as u64 * m.pages_per_block as u64 <= 2048 * SCALE_MODEL_BLOCK_PAGES);
        // a drive already scaled (106 superblocks of 49,152 pages): the factors multiply
        let half = describe(
            cfg(&format!(
                "[drive]\nuser_capacity = \"16GiB\"\nphysical_capacity = \"20GiB\"\n{}",
                sb.replace("[timing]", "superblock_scale = 2\n[timing]")
            )),
            false,
        )
        .unwrap();
        let m = half.scale_model(2048, half.op.seen_by_gc).unwrap();
        assert_eq!((m.blocks, m.pages_per_block, m.superblock_scale), (106, 4096, Some(24)));
    }

    #[test]
    fn analytic_precondition_as_the_simulator_checks_it() {
        let drive = "[drive]\nuser_capacity = \"64MiB\"\nop = 0.28\npages_per_block = 64\n";
        for (rest, yes) in [
            ("", true),
            ("[workload]\nrequest_size = 8192\n", false),
            // one page every other page: not the layout of the pages it writes
            ("[workload]\nalign = 8192\n", false),
            ("[workload]\ntype = \"sequential\"\n", false),
            ("[ftl]\ngc = \"fifo\"\n", true),
            ("[ftl]\ngc = \"cost-benefit\"\n", false),
            ("[drive]\n", true),
        ] {
            let text = if rest == "[drive]\n" { drive.to_string() } else { format!("{drive}{rest}") };
            assert_eq!(describe(cfg(&text), true).unwrap().analytic_precondition, yes, "{rest}");
        }
        // a 4 KiB write to a 16 KiB page rewrites one page: the layout is its steady state too;
        // not when it can straddle two pages (aligned to 2 KiB)
        let part = "[drive]\nuser_capacity = \"64MiB\"\nop = 0.28\npages_per_block = 64\npage_size = \"16KiB\"\n\
                    [workload]\nrequest_size = 4096\n";
        assert!(describe(cfg(part), true).unwrap().analytic_precondition);
        assert!(!describe(cfg(&format!("{part}align = 2048\n")), true).unwrap().analytic_precondition);
        let scoped = "[drive]\nuser_capacity = \"64MiB\"\nop = 0.28\npages_per_block = 64\ndies = 4\n[ftl]\ngc_scope = \"die\"\n";
        assert!(!describe(cfg(scoped), true).unwrap().analytic_precondition);
    }
}
