//! How garbage collection is laid out over the drive, the knobs research simulators set
//! differently (docs/peers.md):
//!
//! - `ftl.gc_frontier`: GC copies go to their own open block ("separate", the default) or
//!   into the open block of the host write that triggered collection ("shared": compact
//!   the victim in place and fill the rest of the block with host data, the textbook greedy).
//! - `ftl.gc_scope`: a victim may come from anywhere ("drive", the default), or only from
//!   the die or plane of the write that needs space ("die", "plane": MQSim's per-plane GC),
//!   logical pages striped statically over the dies or planes.
//! - `ftl.gc_reserve`: the free-block reserve, `"20 blocks per plane"`: GC starts when a
//!   pool falls below it and the write that needs a block waits (is throttled) until GC has
//!   brought the pool back to it.  Without it, `gc_low_watermark` / `gc_high_watermark`
//!   (blocks per pool).
//!
//! The dies and planes come from `[timing]` (channels x dies_per_channel, planes) or, for
//! the functional model, from `drive.dies` and `drive.planes_per_die`.

use super::Config;
use crate::error::{Error, Result};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Where GC copies go.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum GcFrontier {
    /// A GC write frontier of their own.
    #[default]
    Separate,
    /// The host write frontier of the write that triggered collection.
    Shared,
}

/// `ftl.gc_unit`: what garbage collection collects and erases.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum GcUnitKind {
    /// The FTL block of `drive.pages_per_block` mapping units (the old model).
    #[default]
    Block,
    /// A superblock: one NAND block on each plane of each die of a stripe
    /// (`resolve::unit`).
    Superblock,
}

impl GcUnitKind {
    pub fn name(self) -> &'static str {
        match self {
            GcUnitKind::Block => "block",
            GcUnitKind::Superblock => "superblock",
        }
    }
}

/// The NAND unit GC works within, or a reserve is counted per.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum GcScope {
    #[default]
    Drive,
    Die,
    Plane,
}

impl GcScope {
    pub fn name(self) -> &'static str {
        match self {
            GcScope::Drive => "drive",
            GcScope::Die => "die",
            GcScope::Plane => "plane",
        }
    }
    /// How many of this unit the drive has.
    fn count(self, u: NandUnits) -> u32 {
        match self {
            GcScope::Drive => 1,
            GcScope::Die => u.dies,
            GcScope::Plane => u.dies.saturating_mul(u.planes_per_die),
        }
    }
}

/// `ftl.gc_reserve`: `"<N> blocks per plane|die|drive"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcReserve {
    pub blocks: u32,
    pub per: GcScope,
}

const RESERVE_FORM: &str = "expected \"<N> blocks per plane\", \"<N> blocks per die\" or \"<N> blocks per drive\"";

impl std::str::FromStr for GcReserve {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let w: Vec<&str> = s.split_whitespace().collect();
        let bad = || format!("{} is not a reserve; {RESERVE_FORM}", crate::quote::echo(s));
        let [n, unit, "per", per] = w[..] else { return Err(bad()) };
        if unit != "blocks" && unit != "block" {
            return Err(bad());
        }
        let blocks = n.parse::<u32>().map_err(|_| bad())?;
        let per = match per {
            "plane" => GcScope::Plane,
            "die" => GcScope::Die,
            "drive" => GcScope::Drive,
            _ => return Err(bad()),
        };
        Ok(GcReserve { blocks, per })
    }
}

impl Serialize for GcReserve {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{} blocks per {}", self.blocks, self.per.name()))
    }
}

impl<'de> Deserialize<'de> for GcReserve {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The most GC groups (dies or planes GC collects within): each keeps a victim index.
pub const MAX_GROUPS: u32 = 4096;

/// The drive's dies and planes per die.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NandUnits {
    pub dies: u32,
    pub planes_per_die: u32,
}

/// The NAND units of `cfg`: from `[timing]` or `drive.dies` / `drive.planes_per_die` (both
/// given: they must agree); None when neither says.
pub fn nand_units(cfg: &Config) -> Result<Option<NandUnits>> {
    let d = &cfg.drive;
    for (k, v, max) in [("drive.dies", d.dies, MAX_GROUPS), ("drive.planes_per_die", d.planes_per_die, 16)] {
        if v.is_some_and(|n| n == 0 || n > max) {
            return Err(Error::config(k, format!("{} is out of range; expected 1..={max}", v.unwrap_or(0))));
        }
    }
    let from_drive = match (d.dies, d.planes_per_die) {
        (Some(dies), p) => Some(NandUnits { dies, planes_per_die: p.unwrap_or(1) }),
        (None, Some(_)) => return Err(Error::config("drive.planes_per_die", "needs drive.dies")),
        (None, None) => None,
    };
    let from_timing = cfg
        .timing
        .as_ref()
        .map(|t| NandUnits { dies: t.channels.saturating_mul(t.dies_per_channel), planes_per_die: t.planes });
    match (from_drive, from_timing) {
        (Some(a), Some(b)) if a != b => Err(Error::config(
            "drive.dies",
            format!(
                "{} dies x {} planes disagree with [timing]'s {} dies (channels x dies_per_channel) x {} planes; \
                 give them in one place",
                a.dies, a.planes_per_die, b.dies, b.planes_per_die
            ),
        )),
        (a, b) => Ok(a.or(b)),
    }
}

/// Garbage collection's layout, resolved and checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcLayout {
    /// Block groups GC works within (dies or planes; 1: the whole drive).
    pub groups: u32,
    /// Per group: GC starts below `low` free blocks and runs until `high` are free.
    pub low: u32,
    pub high: u32,
    /// GC copies go into the triggering host frontier.
    pub shared: bool,
    /// GC frontiers per group (`ftl.separation`'s classes; 1: one).
    pub classes: u32,
    /// Host frontiers per stream (`ftl.separation = "sepbit"`: hot and cold; 1: one).
    pub host_classes: u32,
}

impl GcLayout {
    /// Blocks held free in all (the free-block reserve the OP GC sees leaves out).
    pub fn reserve_blocks(&self) -> u32 {
        self.low.saturating_mul(self.groups)
    }

    /// Blocks the FTL keeps outside the data it can collect into: the reserve, and a host
    /// frontier per stream and host class and a GC frontier per class in every group.
    pub fn fixed_blocks(&self, streams: u32) -> u64 {
        let open = streams as u64 * self.host_classes as u64 + self.classes as u64;
        self.reserve_blocks() as u64 + self.groups as u64 * open
    }

    /// Resolve and check `ftl.gc_frontier`, `ftl.gc_scope`, `ftl.gc_reserve` and the
    /// watermarks of `cfg`, each against what it cannot be combined with.
    pub fn resolve(cfg: &Config) -> Result<GcLayout> {
        let f = &cfg.ftl;
        let units = nand_units(cfg)?;
        let groups = gc_groups(cfg, units)?;
        let (low, high) = match f.gc_reserve {
            Some(r) => reserve_watermarks(cfg, r, groups, units)?,
            None => watermarks(f)?,
        };
        let shared = f.gc_frontier == GcFrontier::Shared;
        if shared && f.slc_cache.as_ref().is_some_and(|c| c.enabled) {
            return Err(Error::config(
                "ftl.gc_frontier",
                "\"shared\" cannot be combined with [ftl.slc_cache] (GC copies would land in SLC-mode blocks)",
            ));
        }
        let classes = super::separation::classes(cfg)?;
        let host_classes = super::separation::host_classes(cfg);
        Ok(GcLayout { groups, low, high, shared, classes, host_classes })
    }
}

/// The NAND's dies and planes, which `key` needs.
fn need_units(units: Option<NandUnits>, key: &str) -> Result<NandUnits> {
    units
        .ok_or_else(|| Error::config(key, "needs the NAND's dies and planes: give drive.dies and drive.planes_per_die"))
}

/// The GC groups of `ftl.gc_scope` (1: the whole drive), checked against the timed model,
/// the SLC cache and analytic preconditioning.
fn gc_groups(cfg: &Config, units: Option<NandUnits>) -> Result<u32> {
    let s = cfg.ftl.gc_scope;
    if s == GcScope::Drive {
        return Ok(1);
    }
    let key = "ftl.gc_scope";
    if cfg.timing.is_some() {
        return Err(Error::config(
            key,
            format!(
                "\"{}\" is modelled by the functional model only: the timed model stripes every FTL \
                 block over all dies (drop [timing], or use gc_scope = \"drive\")",
                s.name()
            ),
        ));
    }
    if cfg.ftl.slc_cache.as_ref().is_some_and(|c| c.enabled) {
        return Err(Error::config(key, format!("\"{}\" cannot be combined with [ftl.slc_cache]", s.name())));
    }
    if cfg.run.precondition == super::Precondition::Analytic {
        return Err(Error::config(
            key,
            format!("\"{}\" cannot be combined with run.precondition = \"analytic\"", s.name()),
        ));
    }
    let n = s.count(need_units(units, key)?);
    if n > MAX_GROUPS {
        return Err(Error::config(
            key,
            format!("\"{}\" makes {n} GC groups, more than the {MAX_GROUPS} modelled", s.name()),
        ));
    }
    Ok(n)
}

/// The watermarks of `ftl.gc_reserve` `r`: its blocks spread over the `groups`, the same low
/// and high watermark per group.
fn reserve_watermarks(cfg: &Config, r: GcReserve, groups: u32, units: Option<NandUnits>) -> Result<(u32, u32)> {
    let f = &cfg.ftl;
    let key = "ftl.gc_reserve";
    if f.gc_high_watermark.is_some() || f.gc_low_watermark != super::default_low() {
        return Err(Error::config(
            key,
            "give the free-block reserve once: gc_reserve, or gc_low_watermark and gc_high_watermark",
        ));
    }
    let u = if r.per == GcScope::Drive { NandUnits { dies: 1, planes_per_die: 1 } } else { need_units(units, key)? };
    let total = r.blocks as u64 * r.per.count(u) as u64;
    let per_group = total.div_ceil(groups as u64);
    if per_group < 2 || per_group > u32::MAX as u64 / 2 {
        return Err(Error::config(
            key,
            format!(
                "{} blocks per {} is {per_group} per GC {}; GC needs at least 2 free blocks per pool \
                 (one for its own frontier and one for the host)",
                r.blocks,
                r.per.name(),
                f.gc_scope.name()
            ),
        ));
    }
    Ok((per_group as u32, per_group as u32))
}

/// `ftl.gc_low_watermark` and `ftl.gc_high_watermark` (default: the low one), checked.
fn watermarks(f: &super::FtlConfig) -> Result<(u32, u32)> {
    if f.gc_low_watermark < 2 {
        return Err(Error::config(
            "ftl.gc_low_watermark",
            format!(
                "{} is too small: GC needs one free block for its own frontier and one for the host",
                f.gc_low_watermark
            ),
        ));
    }
    let high = f.gc_high_watermark.unwrap_or(f.gc_low_watermark);
    if high < f.gc_low_watermark {
        return Err(Error::config(
            "ftl.gc_high_watermark",
            format!("{high} is below gc_low_watermark {}", f.gc_low_watermark),
        ));
    }
    Ok((f.gc_low_watermark, high))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(toml: &str) -> Result<GcLayout> {
        GcLayout::resolve(&Config::from_toml_str(toml)?)
    }
    const DRIVE: &str = "[drive]\nuser_capacity = \"1GiB\"\nop = 0.1\n";

    #[test]
    fn reserve_parses_and_round_trips() {
        let r: GcReserve = "20 blocks per plane".parse().unwrap();
        assert_eq!(r, GcReserve { blocks: 20, per: GcScope::Plane });
        assert_eq!(serde_json::to_string(&r).unwrap(), "\"20 blocks per plane\"");
        assert_eq!("1 block per drive".parse::<GcReserve>().unwrap().per, GcScope::Drive);
        for bad in ["20", "20 blocks", "x blocks per plane", "20 pages per plane", "20 blocks per chip", ""] {
            assert!(bad.parse::<GcReserve>().is_err(), "{bad}");
        }
    }

    #[test]
    fn default_is_the_watermarks() {
        let l = layout(DRIVE).unwrap();
        assert_eq!(l, GcLayout { groups: 1, low: 2, high: 2, shared: false, classes: 1, host_classes: 1 });
        let l = layout(&format!("{DRIVE}[ftl]\ngc_low_watermark = 4\ngc_high_watermark = 9\n")).unwrap();
        assert_eq!((l.low, l.high, l.reserve_blocks()), (4, 9, 4));
    }

    #[test]
    fn reserve_per_unit_and_scope() {
        let units = "dies = 8\nplanes_per_die = 2\n";
        let l = layout(&format!("{DRIVE}{units}[ftl]\ngc_reserve = \"20 blocks per plane\"\n")).unwrap();
        assert_eq!((l.groups, l.low, l.high, l.reserve_blocks()), (1, 320, 320, 320));
        let l = layout(&format!("{DRIVE}{units}[ftl]\ngc_scope = \"plane\"\ngc_reserve = \"20 blocks per plane\"\n"))
            .unwrap();
        assert_eq!((l.groups, l.low, l.reserve_blocks()), (16, 20, 320));
        let l = layout(&format!("{DRIVE}{units}[ftl]\ngc_scope = \"die\"\ngc_reserve = \"20 blocks per plane\"\n"))
            .unwrap();
        assert_eq!((l.groups, l.low), (8, 40));
        // a drive-wide reserve shared out over the planes, rounded up
        let l = layout(&format!("{DRIVE}{units}[ftl]\ngc_scope = \"plane\"\ngc_reserve = \"50 blocks per drive\"\n"))
            .unwrap();
        assert_eq!((l.groups, l.low), (16, 4));
    }

    #[test]
    fn refusals_name_the_key() {
        let units = "dies = 8\nplanes_per_die = 2\n";
        let cases = [
            (format!("{DRIVE}[ftl]\ngc_scope = \"plane\"\n"), "ftl.gc_scope"),
            (format!("{DRIVE}[ftl]\ngc_reserve = \"20 blocks per die\"\n"), "ftl.gc_reserve"),
            (
                format!("{DRIVE}{units}[ftl]\ngc_reserve = \"1 blocks per plane\"\ngc_scope = \"plane\"\n"),
                "ftl.gc_reserve",
            ),
            (format!("{DRIVE}[ftl]\ngc_reserve = \"20 blocks per drive\"\ngc_low_watermark = 5\n"), "ftl.gc_reserve"),
            (format!("{DRIVE}[ftl]\ngc_scope = \"die\"\n[timing]\n"), "ftl.gc_scope"),
            (format!("{DRIVE}dies = 4\n[ftl]\ngc_scope = \"die\"\n[timing]\n"), "drive.dies"),
            (format!("{DRIVE}planes_per_die = 2\n"), "drive.planes_per_die"),
            (format!("{DRIVE}[ftl]\ngc_frontier = \"shared\"\n[ftl.slc_cache]\n"), "ftl.gc_frontier"),
            (format!("{DRIVE}{units}[ftl]\ngc_scope = \"plane\"\n[ftl.slc_cache]\n"), "ftl.gc_scope"),
            (
                format!("{DRIVE}{units}[ftl]\ngc_scope = \"plane\"\n[run]\nprecondition = \"analytic\"\n"),
                "ftl.gc_scope",
            ),
        ];
        for (toml, key) in cases {
            let e = layout(&toml).unwrap_err();
            assert!(e.to_string().contains(key), "{toml}: {e}");
        }
        let e = Config::from_toml_str(&format!("{DRIVE}[ftl]\ngc_reserve = \"lots\"\n")).unwrap_err();
        assert!(e.to_string().contains("ftl.gc_reserve"), "{e}");
    }
}
