//! Drive geometry and over-provisioning in every basis the industry uses.
//!
//! The physical budget is whole NAND blocks.  Everything the FTL keeps for itself comes out
//! of it: the free-block reserve (GC low watermark), the open write frontiers (one per host
//! stream plus the GC frontier), and the spare area GC works with.  [`OpReport::effective`]
//! is the OP garbage collection actually sees: the physical pages outside the free-block
//! reserve, over the user pages.

use crate::config::gc::{GcLayout, GcUnitKind};
use crate::config::{check_fraction, DriveConfig, OpBasis};
use crate::error::{Error, Result};
pub use crate::memory::available_memory;
use serde::Serialize;

/// Largest page index the 32-bit mapping tables hold (u32::MAX is the "unmapped" marker).
pub const MAX_PAGES: u64 = u32::MAX as u64 - 1;
/// Largest page (mapping unit) size.
pub const MAX_PAGE_SIZE: u64 = 1 << 20;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Geometry {
    pub page_size: u64,
    pub pages_per_block: u32,
    pub blocks: u32,
    pub sector_size: u32,
    /// Host-visible capacity in bytes (the native max address).
    pub user_bytes: u64,
    /// Logical pages (mapping units) covering the user capacity.
    pub user_pages: u64,
    /// The native user capacity, when known (for the `native` OP basis).
    pub native_bytes: Option<u64>,
    /// What a block is: the unit garbage collection collects and erases.
    pub unit: GcUnit,
}

/// The unit garbage collection collects and erases, the FTL's block (`resolve::unit`
/// resolves it): `pages_per_block` mapping units, and for a superblock the NAND it stripes.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct GcUnit {
    pub kind: GcUnitKind,
    /// Mapping units per unit (the geometry's `pages_per_block`).
    pub pages: u32,
    pub bytes: u64,
    /// A superblock's stripe: dies, planes per die, NAND blocks (dies x planes); None for a block.
    pub dies: Option<u32>,
    pub planes: Option<u32>,
    pub nand_blocks: Option<u32>,
    /// Scale factor of a scale model (1: the full-size drive): a superblock's pages are the
    /// full drive's divided by it.
    pub scale: u32,
    /// Units open at once for host writes (one per host stream or placement handle, in each
    /// GC group) and for GC copies (one per GC group, and per handle with persistent isolation).
    pub open_host: u32,
    pub open_gc: u32,
}

impl GcUnit {
    /// The FTL block of `pages` mapping units of `page_size` bytes (open units not yet known).
    pub fn block(pages: u32, page_size: u64) -> GcUnit {
        GcUnit {
            kind: GcUnitKind::Block,
            pages,
            bytes: pages as u64 * page_size,
            dies: None,
            planes: None,
            nand_blocks: None,
            scale: 1,
            open_host: 0,
            open_gc: 0,
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct OpReport {
    /// (physical - user) / user
    pub user: f64,
    /// (physical - user) / physical ("spare area")
    pub physical: f64,
    /// (native - user) / native, when the native capacity is known
    pub native: Option<f64>,
    /// physical / user
    pub ratio: f64,
    pub physical_bytes: u64,
    pub user_bytes: u64,
    pub native_bytes: Option<u64>,
    /// OP (user basis) that garbage collection sees: physical pages outside the free-block
    /// reserve, over user pages.
    pub effective: f64,
    pub reserved_blocks: u32,
    pub spare_blocks: f64,
}

impl Geometry {
    pub fn block_bytes(&self) -> u64 {
        self.page_size * self.pages_per_block as u64
    }
    pub fn physical_pages(&self) -> u64 {
        self.blocks as u64 * self.pages_per_block as u64
    }
    pub fn physical_bytes(&self) -> u64 {
        self.physical_pages() * self.page_size
    }
    pub fn user_sectors(&self) -> u64 {
        self.user_bytes / self.sector_size as u64
    }
    pub fn sectors_per_page(&self) -> u64 {
        self.page_size / self.sector_size as u64
    }

    pub fn op_report(&self, reserved_blocks: u32) -> OpReport {
        let phys = self.physical_bytes() as f64;
        let user = self.user_bytes as f64;
        let up = self.user_pages as f64;
        let eff_pages = (self.blocks.saturating_sub(reserved_blocks)) as f64 * self.pages_per_block as f64;
        OpReport {
            user: (phys - user) / user,
            physical: (phys - user) / phys,
            native: self.native_bytes.map(|n| (n as f64 - user) / n as f64),
            ratio: phys / user,
            physical_bytes: self.physical_bytes(),
            user_bytes: self.user_bytes,
            native_bytes: self.native_bytes,
            effective: (eff_pages - up) / up,
            reserved_blocks,
            spare_blocks: (self.physical_pages() as f64 - up) / self.pages_per_block as f64,
        }
    }

    /// Build the geometry of a config's `[drive]` table, checking every value, for its FTL
    /// (host streams and GC layout).
    pub fn from_config(cfg: &crate::config::Config) -> Result<Geometry> {
        let gc = crate::config::gc::GcLayout::resolve(cfg)?;
        Self::from_capacities(Self::capacities(&cfg.drive)?, cfg.ftl.streams, &gc, true)
    }

    /// The capacities the `[drive]` table asks for, checked, before they are cut into
    /// blocks (so that the memory a model of them needs can be told first, whatever the size).
    pub fn capacities(d: &DriveConfig) -> Result<Capacities> {
        let (sector, page, ppb) = check_units(d)?;
        let op = match d.op {
            Some(o) => Some(check_fraction("drive.op", o.0, 0.0, 100.0, true, false)?),
            None => None,
        };
        let (user_bytes, physical_bytes, native_bytes) = match d.op_basis {
            OpBasis::User | OpBasis::Physical => user_or_physical_basis(d, op, sector)?,
            OpBasis::Native => native_basis(d, op, sector)?,
        };
        if user_bytes == 0 {
            return Err(Error::capacity("drive.user_capacity", "resolves to zero bytes"));
        }
        if user_bytes % sector != 0 {
            return Err(Error::capacity(
                "drive.user_capacity",
                format!("{user_bytes} bytes is not a whole number of {sector}-byte sectors"),
            ));
        }
        Ok(Capacities {
            page_size: page,
            pages_per_block: ppb,
            unit: GcUnit::block(ppb, page),
            sector_size: sector,
            user_bytes,
            physical_bytes,
            native_bytes,
        })
    }

    /// Cut checked capacities into pages and blocks for an FTL of `streams` host streams and
    /// GC layout `gc`.  `model_limits`: refuse a drive the simulator cannot model: more pages
    /// than its 32-bit mapping tables hold, too little spare for its FTL to collect garbage,
    /// or blocks that do not split over the GC groups (false: describe such a drive all the
    /// same, e.g. 100 TB of 4 KiB pages).
    pub fn from_capacities(c: Capacities, streams: u32, gc: &GcLayout, model_limits: bool) -> Result<Geometry> {
        let Capacities {
            page_size: page,
            pages_per_block: ppb,
            unit,
            sector_size: sector,
            user_bytes,
            physical_bytes,
            native_bytes,
        } = c;
        let block_bytes = page * ppb as u64;
        // a superblock drive holds whole superblocks (the remainder is lost: less than one
        // superblock); FTL blocks round to the nearest, as before
        let blocks_f = match unit.kind {
            GcUnitKind::Superblock => (physical_bytes / block_bytes as f64).floor(),
            GcUnitKind::Block => (physical_bytes / block_bytes as f64).round(),
        };
        if blocks_f.is_nan() || blocks_f < 1.0 {
            let what = if unit.kind == GcUnitKind::Superblock { "superblock" } else { "NAND block" };
            return Err(Error::capacity("drive.physical_capacity", format!("gives no whole {what}")));
        }
        let user_pages = user_bytes.div_ceil(page);
        let physical_pages = blocks_f * ppb as f64;
        if model_limits && (physical_pages > MAX_PAGES as f64 || user_pages > MAX_PAGES) {
            let (key, advice) = if page < MAX_PAGE_SIZE {
                ("drive.page_size", "use a larger page_size (up to 1 MiB), a smaller user_capacity or a scale model")
            } else {
                (
                    "drive.user_capacity",
                    "use a smaller user_capacity or a scale model (a smaller drive with the same OP and workload)",
                )
            };
            return Err(Error::capacity(
                key,
                format!(
                    "{:.0} physical pages of {} exceed the 2^32-page limit of the mapping tables; {advice}",
                    physical_pages.max(user_pages as f64),
                    crate::units::format_size(page)
                ),
            ));
        }
        let blocks = blocks_f as u64;
        let geo = Geometry {
            page_size: page,
            pages_per_block: ppb,
            blocks: blocks as u32,
            sector_size: sector as u32,
            user_bytes,
            user_pages,
            native_bytes,
            unit,
        };
        if model_limits {
            geo.check_room_for_gc(streams, gc)?;
        }
        Ok(geo)
    }

    fn check_room_for_gc(&self, streams: u32, gc: &GcLayout) -> Result<()> {
        if self.blocks % gc.groups != 0 {
            return Err(Error::capacity(
                "drive.physical_capacity",
                format!(
                    "{} blocks do not split evenly over the {} dies or planes ftl.gc_scope collects within; \
                     give a physical capacity of a multiple of {} blocks of {} bytes",
                    self.blocks,
                    gc.groups,
                    gc.groups,
                    self.block_bytes()
                ),
            ));
        }
        let b = self.pages_per_block as u64;
        let data_blocks = self.user_pages.div_ceil(b);
        let need = data_blocks + gc.fixed_blocks(streams) + 1;
        if (self.blocks as u64) < need {
            let spare = self.blocks as i64 - data_blocks as i64;
            return Err(Error::capacity(
                "drive.op",
                format!(
                    "no room for garbage collection: {} blocks of {} bytes hold {} user pages with {} blocks to spare, \
                     but the FTL needs at least {} (free-block reserve {}, {} host frontier(s) and {} GC frontier{}{}, \
                     and 1 block of spare for GC to make progress); raise the OP",
                    self.blocks,
                    self.block_bytes(),
                    self.user_pages,
                    spare,
                    need - data_blocks,
                    gc.reserve_blocks(),
                    streams * gc.host_classes,
                    gc.classes,
                    if gc.classes > 1 { "s (ftl.separation's classes)" } else { "" },
                    if gc.groups > 1 { format!(" in each of {} pools", gc.groups) } else { String::new() }
                ),
            ));
        }
        Ok(())
    }

    /// Bytes the FTL model allocates (mapping tables, bitmaps, block metadata).
    pub fn memory_estimate(&self, track_data: bool) -> u64 {
        let words_per_block = (self.pages_per_block as u64).div_ceil(64);
        let per_block = 4 /*valid*/ + 4 /*erase*/ + 1 /*state*/ + 8 /*timestamp*/ + 12 /*policy links*/ + 4 /*free queue*/;
        self.user_pages * 4
            + self.physical_pages() * 4
            + self.blocks as u64 * words_per_block * 8
            + self.blocks as u64 * per_block
            + if track_data { self.physical_pages() * 8 + self.user_pages * 8 } else { 0 }
    }
}

/// The capacities of a `[drive]` table, checked but not yet cut into blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct Capacities {
    pub page_size: u64,
    pub pages_per_block: u32,
    /// The GC unit those pages per block make (`resolve::unit` sets a superblock).
    pub unit: GcUnit,
    pub sector_size: u64,
    pub user_bytes: u64,
    /// Physical bytes asked for (whole blocks are made of it).
    pub physical_bytes: f64,
    pub native_bytes: Option<u64>,
}

impl Capacities {
    /// [`Geometry::memory_estimate`] of the drive these capacities make, in floating point:
    /// any size, no overflow (a model too large for the mapping tables' 32-bit page numbers
    /// gets its true size too).
    pub fn memory_estimate(&self, track_data: bool) -> f64 {
        let ppb = self.pages_per_block as f64;
        let blocks = (self.physical_bytes / (self.page_size as f64 * ppb)).round().max(1.0);
        let physical_pages = blocks * ppb;
        let user_pages = (self.user_bytes as f64 / self.page_size as f64).ceil();
        let words_per_block = (self.pages_per_block as u64).div_ceil(64) as f64;
        let per_block = (4 + 4 + 1 + 8 + 12 + 4) as f64;
        user_pages * 4.0
            + physical_pages * 4.0
            + blocks * words_per_block * 8.0
            + blocks * per_block
            + if track_data { physical_pages * 8.0 + user_pages * 8.0 } else { 0.0 }
    }
}

/// Blocks garbage collection works in: all but the free-block reserve (`gc_low`) and the SLC
/// cache's static part (the analytic preconditioning lays the data out in these).
pub fn gc_pool_blocks(geo: &Geometry, gc_low: u32, slc_static: u32) -> u64 {
    (geo.blocks as u64).saturating_sub(gc_low as u64 + slc_static as u64)
}

/// `drive.sector_size`, `page_size` and `pages_per_block` checked: (sector, page, pages per block).
fn check_units(d: &DriveConfig) -> Result<(u64, u64, u32)> {
    let sector = d.sector_size as u64;
    if sector != 512 && sector != 4096 {
        return Err(Error::capacity("drive.sector_size", format!("{sector} is not supported; use 512 or 4096")));
    }
    let page = d.page_size.0;
    if page < sector || page % sector != 0 {
        return Err(Error::capacity(
            "drive.page_size",
            format!("{page} bytes is not a positive multiple of the {sector}-byte sector"),
        ));
    }
    if page > MAX_PAGE_SIZE {
        return Err(Error::capacity("drive.page_size", format!("{page} bytes is larger than 1 MiB")));
    }
    let ppb = d.pages_per_block();
    if !(2..=65536).contains(&ppb) {
        return Err(Error::capacity("drive.pages_per_block", format!("{ppb} is out of range; expected 2..=65536")));
    }
    Ok((sector, page, ppb))
}

/// `v`, refused when zero.
fn nonzero(key: &str, v: u64) -> Result<u64> {
    if v == 0 {
        Err(Error::capacity(key, "must be greater than zero"))
    } else {
        Ok(v)
    }
}

/// Bytes rounded down to whole sectors.
fn round_down_sector(b: f64, sector: u64) -> u64 {
    ((b / sector as f64).floor() as u64) * sector
}

/// (user, physical, native) bytes with OP relative to the user or the physical capacity:
/// two of user capacity, physical capacity and OP.
fn user_or_physical_basis(d: &DriveConfig, op: Option<f64>, sector: u64) -> Result<(u64, f64, Option<u64>)> {
    if d.native_op.is_some() {
        return Err(Error::config("drive.native_op", "is only used with op_basis = \"native\""));
    }
    let to_phys = |u: f64, o: f64| if d.op_basis == OpBasis::User { u * (1.0 + o) } else { u / (1.0 - o) };
    if d.op_basis == OpBasis::Physical {
        if let Some(o) = op {
            check_fraction("drive.op", o, 0.0, 1.0, true, false)?;
        }
    }
    Ok(match (d.user_capacity, d.physical_capacity, op) {
        (Some(u), None, Some(o)) => {
            let u = nonzero("drive.user_capacity", u.0)?;
            (u, to_phys(u as f64, o), d.native_capacity.map(|n| n.0))
        }
        (Some(u), Some(p), None) => (
            nonzero("drive.user_capacity", u.0)?,
            nonzero("drive.physical_capacity", p.0)? as f64,
            d.native_capacity.map(|n| n.0),
        ),
        (None, Some(p), Some(o)) => {
            let p = nonzero("drive.physical_capacity", p.0)? as f64;
            let u = if d.op_basis == OpBasis::User { p / (1.0 + o) } else { p * (1.0 - o) };
            (round_down_sector(u, sector), p, d.native_capacity.map(|n| n.0))
        }
        (Some(_), Some(_), Some(_)) => {
            return Err(Error::config("drive.op", "give two of user_capacity, physical_capacity and op, not all three"))
        }
        _ => {
            return Err(Error::config(
                "drive",
                "give user_capacity with op (or with physical_capacity), or physical_capacity with op",
            ))
        }
    })
}

/// (user, physical, native) bytes with OP relative to the native capacity: the native
/// capacity with one of physical capacity and native OP, and one of user capacity and OP.
fn native_basis(d: &DriveConfig, op: Option<f64>, sector: u64) -> Result<(u64, f64, Option<u64>)> {
    let native = d
        .native_capacity
        .ok_or_else(|| Error::config("drive.native_capacity", "is required with op_basis = \"native\""))?
        .0;
    let native = nonzero("drive.native_capacity", native)?;
    let phys = match (d.physical_capacity, d.native_op) {
        (Some(p), None) => nonzero("drive.physical_capacity", p.0)? as f64,
        (None, Some(o)) => native as f64 * (1.0 + check_fraction("drive.native_op", o.0, 0.0, 100.0, true, false)?),
        _ => {
            return Err(Error::config(
                "drive.physical_capacity",
                "with op_basis = \"native\" give exactly one of physical_capacity and native_op",
            ))
        }
    };
    let user = match (d.user_capacity, op) {
        (Some(u), None) => nonzero("drive.user_capacity", u.0)?,
        (None, Some(o)) => {
            check_fraction("drive.op", o, 0.0, 1.0, true, false)?;
            round_down_sector(native as f64 * (1.0 - o), sector)
        }
        _ => {
            return Err(Error::config(
                "drive.op",
                "with op_basis = \"native\" give exactly one of op and user_capacity",
            ))
        }
    };
    if user > native {
        return Err(Error::capacity(
            "drive.user_capacity",
            format!("{user} bytes is more than the native capacity {native}"),
        ));
    }
    Ok((user, phys, Some(native)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn geo(toml: &str) -> Result<Geometry> {
        let c = Config::from_toml_str(toml)?;
        Geometry::from_config(&c)
    }

    #[test]
    fn user_basis() {
        let g = geo("[drive]\nuser_capacity = \"16GiB\"\nop = 0.07\n").unwrap();
        let r = g.op_report(2);
        assert!((r.user - 0.07).abs() < 1e-4, "{}", r.user);
        assert!((r.physical - 0.07 / 1.07).abs() < 1e-4);
        assert_eq!(g.user_pages, 4 << 20);
    }

    #[test]
    fn physical_basis() {
        let g = geo("[drive]\nuser_capacity = \"16GiB\"\nop = \"25%\"\nop_basis = \"physical\"\n").unwrap();
        assert!((g.op_report(2).physical - 0.25).abs() < 1e-4);
    }

    #[test]
    fn native_basis_micron() {
        // Micron: 1000 GB of a 1024 GB drive is 2.3% additional OP; 800 GB is 21.87%.
        let g = geo(
            "[drive]\nnative_capacity = \"1024GB\"\nnative_op = 0.0737\nuser_capacity = \"1000GB\"\nop_basis = \"native\"\npage_size = \"16KiB\"\n",
        )
        .unwrap();
        assert!((g.op_report(2).native.unwrap() - 0.0234375).abs() < 1e-9);
        let g = geo("[drive]\nnative_capacity = \"1024GB\"\nnative_op = 0.0737\nop = 0.21875\nop_basis = \"native\"\npage_size = \"16KiB\"\n").unwrap();
        assert_eq!(g.user_bytes, 800_000_000_000);
    }

    #[test]
    fn impossible_op_is_refused() {
        let e = geo("[drive]\nuser_capacity = \"1GiB\"\nop = 0\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("drive.op"));
        assert!(e.message.contains("no room for garbage collection"), "{}", e.message);
        let e = geo("[drive]\nuser_capacity = \"1GiB\"\nop = -0.1\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("drive.op"));
    }

    #[test]
    fn zero_and_unknown() {
        let e = geo("[drive]\nuser_capacity = 0\nop = 0.1\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("drive.user_capacity"));
        let e = geo("[drive]\nuser_capacity = \"1GiB\"\nop = 0.1\nbogus = 1\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("drive.bogus"));
        let e = geo("[drive]\nuser_capacity = \"1GiB\"\nop = 0.1\npages_per_block = 0\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("drive.pages_per_block"));
    }

    #[test]
    fn too_many_pages() {
        let e = geo("[drive]\nuser_capacity = \"64TiB\"\nop = 0.1\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("drive.page_size"));
    }
}
