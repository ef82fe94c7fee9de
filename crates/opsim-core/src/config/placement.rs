//! Data placement: `[ftl.placement]` (none, multi-stream, NVMe Flexible Data Placement) and
//! `[[namespace]]` (tenants, each with a slice of the LBA space, a workload and a share of the
//! command stream), and their resolution against a drive (docs/placement.md).
//!
//! Namespaces are carved from LBA 0 in the order given, each a whole number of mapping
//! units (pages); capacity no namespace holds is never written and acts as spare area, as
//! it does on a real drive.

use super::WorkloadConfig;
use crate::error::{Error, Result};
use crate::units::{parse_fraction, parse_size};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// The most namespaces (the FTL tags each logical page with its namespace in one byte).
pub const MAX_NAMESPACES: usize = 64;
/// The most reclaim unit handles / streams (a host write frontier each).
pub use crate::op::MAX_HANDLES;

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum PlacementMode {
    /// No placement: every tenant's writes share the write frontier (the I/O blender).
    #[default]
    None,
    /// NVMe Streams directive: a host write frontier per stream; GC copies share one.
    Streams,
    /// NVMe Flexible Data Placement (TP4146): a reclaim unit per handle; GC copies stay
    /// with their handle when `isolation = "persistently"`.
    Fdp,
}

impl PlacementMode {
    pub fn name(self) -> &'static str {
        match self {
            PlacementMode::None => "none",
            PlacementMode::Streams => "streams",
            PlacementMode::Fdp => "fdp",
        }
    }
}

/// FDP reclaim unit handle isolation: where garbage collection puts the valid data it moves.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    /// Initially isolated: host writes of each handle go to their own reclaim units; GC may
    /// mix the data of all handles of the reclaim group in one destination.
    #[default]
    Initially,
    /// Persistently isolated: GC copies stay with their handle (a GC frontier per handle).
    Persistently,
}

/// `[ftl.placement]`.
#[derive(Clone, Debug, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PlacementConfig {
    #[serde(default)]
    pub mode: PlacementMode,
    /// Reclaim unit handles (fdp) or streams (streams).  Default: enough for every
    /// `placement` the namespaces name and the default handle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handles: Option<u32>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub isolation: Isolation,
    /// Reclaim unit size.  The model's reclaim unit is its FTL block (a superblock when the
    /// geometry models one); the default, and the only size accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reclaim_unit: Option<crate::units::ByteSize>,
    /// Reclaim groups: 1 (the FTL's blocks form one pool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reclaim_groups: Option<u32>,
    /// The handle of a write that names none (a namespace without `placement`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub default_handle: u32,
}

fn is_default(i: &Isolation) -> bool {
    *i == Isolation::Initially
}
fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// How the tenants' commands are interleaved (`run.interleave`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Interleave {
    /// `share` is each namespace's fraction of the commands (by IOPS).
    #[default]
    Iops,
    /// `share` is each namespace's fraction of the bytes transferred (by rate).
    Bytes,
    /// Every namespace replays a trace; commands are merged in timestamp order.
    Timestamps,
}

/// A namespace's capacity: a size, or a fraction of the drive's user capacity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NsCapacity {
    Bytes(u64),
    Fraction(f64),
}

impl Serialize for NsCapacity {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            NsCapacity::Bytes(b) => s.serialize_u64(*b),
            NsCapacity::Fraction(f) => s.serialize_str(&format!("{}%", f * 100.0)),
        }
    }
}

impl<'de> Deserialize<'de> for NsCapacity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = NsCapacity;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size (\"960GB\", bytes as an integer) or a share of the user capacity (\"25%\", 0.25)")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<NsCapacity, E> {
                Ok(NsCapacity::Bytes(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<NsCapacity, E> {
                u64::try_from(v).map(NsCapacity::Bytes).map_err(|_| E::custom("a capacity cannot be negative"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<NsCapacity, E> {
                Ok(NsCapacity::Fraction(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<NsCapacity, E> {
                if v.trim().ends_with('%') {
                    parse_fraction(v).map(NsCapacity::Fraction).map_err(E::custom)
                } else {
                    parse_size(v).map(NsCapacity::Bytes).map_err(E::custom)
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// `placement` of a namespace: one handle, or one per stream of its workload (hot-cold:
/// `[cold, hot]`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum Handles {
    One(u32),
    PerStream(Vec<u32>),
}

impl Handles {
    pub fn list(&self) -> Vec<u32> {
        match self {
            Handles::One(h) => vec![*h],
            Handles::PerStream(v) => v.clone(),
        }
    }
}

/// `[[namespace]]`: a tenant.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NamespaceConfig {
    /// Shown in the results (default "ns1", "ns2"...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub capacity: NsCapacity,
    /// The tenant's workload, over its own namespace (offsets relative to its first LBA).
    #[serde(default)]
    pub workload: WorkloadConfig,
    /// Relative share of the command stream (`run.interleave`); default equal shares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Placement handle(s) of its writes (modes streams and fdp; ignored with none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Handles>,
}

/// A namespace resolved against the drive.
#[derive(Clone, Debug)]
pub struct Namespace {
    pub name: String,
    /// First sector and sectors (whole pages).
    pub first_sector: u64,
    pub sectors: u64,
    /// Share of the command stream, normalised to sum to 1 (0 with timestamps).
    pub share: f64,
    /// Handle per workload stream (mode none: the workload's own streams).
    pub handles: Vec<u32>,
    pub workload: WorkloadConfig,
}

/// Placement resolved against the drive.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub mode: PlacementMode,
    pub isolation: Isolation,
    /// Host write frontiers placement uses (handles; 0 with mode none).
    pub handles: u32,
    pub namespaces: Vec<Namespace>,
    pub interleave: Interleave,
}

impl Resolved {
    /// Whether writes carry a placement handle (streams, fdp).
    pub fn placed(&self) -> bool {
        self.mode != PlacementMode::None
    }
    /// GC copies stay with their handle.
    pub fn persistent(&self) -> bool {
        self.mode == PlacementMode::Fdp && self.isolation == Isolation::Persistently
    }
}

/// Resolve placement and namespaces: `user_sectors` is the drive's user capacity,
/// `page_sectors` the mapping unit, `block_bytes` the FTL block, `streams` the configured
/// `ftl.streams`.  None when neither is configured (the default: everything as before).
pub fn resolve(
    cfg: &super::Config,
    user_sectors: u64,
    page_sectors: u64,
    block_bytes: u64,
) -> Result<Option<Resolved>> {
    let p = cfg.ftl.placement.clone().unwrap_or_default();
    if cfg.namespaces.is_empty() && cfg.ftl.placement.is_none() {
        return Ok(None);
    }
    check_table(cfg, &p, block_bytes)?;
    if cfg.namespaces.is_empty() && p.mode == PlacementMode::None {
        return Ok(None); // nothing placed, nothing to count: off, as without the table
    }
    let interleave = cfg.run.interleave;
    if !cfg.namespaces.is_empty() {
        check_namespaces_alone(cfg)?;
    }
    let handles = handle_count(cfg, &p)?;
    let drive = Drive { user_sectors, page_sectors, sector: cfg.drive.sector_size as f64 };
    let weights: Vec<f64> = cfg.namespaces.iter().map(|n| n.share.unwrap_or(1.0)).collect();
    let total: f64 = weights.iter().sum();
    let mut first = 0u64;
    let mut namespaces = Vec::with_capacity(cfg.namespaces.len());
    for (i, n) in cfg.namespaces.iter().enumerate() {
        let k = |s: &str| format!("namespace[{i}].{s}");
        let sectors = namespace_sectors(n, &drive, first, &k)?;
        check_namespace_workload(n, interleave, &k)?;
        namespaces.push(Namespace {
            name: n.name.clone().unwrap_or_else(|| format!("ns{}", i + 1)),
            first_sector: first,
            sectors,
            share: if interleave == Interleave::Timestamps { 0.0 } else { weights[i] / total },
            handles: namespace_handles(n, &p, handles, &k)?,
            workload: n.workload.clone(),
        });
        first += sectors;
    }
    Ok(Some(Resolved { mode: p.mode, isolation: p.isolation, handles, namespaces, interleave }))
}

/// The drive as namespaces are cut from it: user sectors, sectors per mapping unit, bytes
/// per sector.
struct Drive {
    user_sectors: u64,
    page_sectors: u64,
    sector: f64,
}

/// `[ftl.placement]` against the model: the reclaim unit and groups, the keys its mode
/// uses, and the number of namespaces.
fn check_table(cfg: &super::Config, p: &PlacementConfig, block_bytes: u64) -> Result<()> {
    let key = "ftl.placement";
    if let Some(ru) = p.reclaim_unit {
        if ru.0 != block_bytes {
            return Err(Error::config(
                &format!("{key}.reclaim_unit"),
                format!(
                    "{} bytes: the model's reclaim unit is its FTL block of {block_bytes} bytes; set drive.pages_per_block \
                     (or page_size) so that a block is the reclaim unit",
                    ru.0
                ),
            ));
        }
    }
    if p.reclaim_groups.is_some_and(|g| g != 1) {
        return Err(Error::config(
            &format!("{key}.reclaim_groups"),
            "the model has one reclaim group (its blocks form one pool); reclaim_groups must be 1",
        ));
    }
    if p.mode == PlacementMode::None && (p.isolation != Isolation::Initially || p.handles.is_some()) {
        return Err(Error::config(key, "handles and isolation need mode = \"streams\" or \"fdp\""));
    }
    if p.mode == PlacementMode::Streams && p.isolation != Isolation::Initially {
        return Err(Error::config(
            &format!("{key}.isolation"),
            "is an FDP setting; streams share one GC destination (use mode = \"fdp\")",
        ));
    }
    if cfg.namespaces.len() > MAX_NAMESPACES {
        return Err(Error::config(
            "namespace",
            format!("{} namespaces; at most {MAX_NAMESPACES}", cfg.namespaces.len()),
        ));
    }
    Ok(())
}

/// With `[[namespace]]`: no phases, no top-level `[workload]`, no analytic preconditioning.
fn check_namespaces_alone(cfg: &super::Config) -> Result<()> {
    if !cfg.phases.is_empty() {
        return Err(Error::config(
            "phase",
            "[[phase]] and [[namespace]] cannot be combined (each namespace runs its own workload)",
        ));
    }
    let default_workload = serde_json::to_value(WorkloadConfig::default()).ok();
    if serde_json::to_value(&cfg.workload).ok() != default_workload {
        return Err(Error::config(
            "workload",
            "is not used with [[namespace]]: give each namespace its own [namespace.workload]",
        ));
    }
    if cfg.run.precondition == super::Precondition::Analytic {
        return Err(Error::config(
            "run.precondition",
            "\"analytic\" lays out one uniform workload; with [[namespace]] use \"fill\" or \"none\"",
        ));
    }
    Ok(())
}

/// Placement handles: enough for every placement named and the default handle (0 with mode
/// none), at least `ftl.streams`.
fn handle_count(cfg: &super::Config, p: &PlacementConfig) -> Result<u32> {
    if p.mode == PlacementMode::None {
        return Ok(0);
    }
    let key = "ftl.placement";
    let named = cfg.namespaces.iter().filter_map(|n| n.placement.as_ref()).flat_map(|h| h.list()).max();
    let need = named.map_or(0, |m| m + 1).max(p.default_handle + 1);
    let h = p.handles.unwrap_or(need);
    if h == 0 || h > MAX_HANDLES {
        return Err(Error::config(
            &format!("{key}.handles"),
            format!("{h} is out of range; expected 1..={MAX_HANDLES}"),
        ));
    }
    if p.default_handle >= h {
        return Err(Error::config(
            &format!("{key}.default_handle"),
            format!("{} is not a handle (handles 0..{h})", p.default_handle),
        ));
    }
    Ok(h.max(cfg.ftl.streams))
}

/// A namespace's sectors (whole mapping units), starting at sector `first`; `k` names its keys.
fn namespace_sectors(n: &NamespaceConfig, d: &Drive, first: u64, k: &dyn Fn(&str) -> String) -> Result<u64> {
    let bytes = match n.capacity {
        NsCapacity::Bytes(b) => b as f64,
        NsCapacity::Fraction(f) => {
            if !(f > 0.0 && f <= 1.0) {
                return Err(Error::config(&k("capacity"), format!("{f} is out of range; expected a share in (0, 1]")));
            }
            f * d.user_sectors as f64 * d.sector
        }
    };
    let pages = (bytes / d.sector / d.page_sectors as f64).floor() as u64;
    if pages == 0 {
        return Err(Error::config(&k("capacity"), "is smaller than one mapping unit (page)"));
    }
    let sectors = pages * d.page_sectors;
    if first + sectors > d.user_sectors {
        return Err(Error::config(
            &k("capacity"),
            format!(
                "the namespaces so far need {} sectors, more than the drive's {} user sectors",
                first + sectors,
                d.user_sectors
            ),
        ));
    }
    Ok(sectors)
}

/// A namespace's share and workload against `run.interleave`, and no PTS in a namespace.
fn check_namespace_workload(n: &NamespaceConfig, interleave: Interleave, k: &dyn Fn(&str) -> String) -> Result<()> {
    if let Some(s) = n.share {
        if !(s.is_finite() && s > 0.0) {
            return Err(Error::config(&k("share"), format!("{s} must be a positive number")));
        }
        if interleave == Interleave::Timestamps {
            return Err(Error::config(&k("share"), "is not used with run.interleave = \"timestamps\""));
        }
    }
    if interleave == Interleave::Timestamps && n.workload.kind != super::WorkloadType::Trace {
        return Err(Error::config(
            &k("workload.type"),
            "run.interleave = \"timestamps\" needs a trace in every namespace",
        ));
    }
    if matches!(n.workload.kind, super::WorkloadType::SniaPts) {
        return Err(Error::config(
            &k("workload.type"),
            "snia-pts runs its own stages on the whole drive; not in a namespace",
        ));
    }
    Ok(())
}

/// The handle of each of a namespace's workload streams (none with mode none).
fn namespace_handles(
    n: &NamespaceConfig,
    p: &PlacementConfig,
    handles: u32,
    k: &dyn Fn(&str) -> String,
) -> Result<Vec<u32>> {
    Ok(match (&n.placement, p.mode) {
        (_, PlacementMode::None) => vec![],
        (None, _) => vec![p.default_handle],
        (Some(h), _) => {
            let l = h.list();
            if l.is_empty() {
                return Err(Error::config(&k("placement"), "names no handle"));
            }
            if let Some(bad) = l.iter().find(|&&x| x >= handles) {
                return Err(Error::config(
                    &k("placement"),
                    format!("handle {bad} does not exist (handles 0..{handles})"),
                ));
            }
            l
        }
    })
}
