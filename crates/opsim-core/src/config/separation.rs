//! `ftl.separation`: temperature separation, as drives do it: which open unit a page goes to
//! by how long its data is likely to live.
//!
//! * `"none"` (the default): host writes go to their stream's frontier, every GC copy of a
//!   group to its one GC frontier: the model before this key (bit for bit).
//! * `"gc-age"`: GC copies are separated by how many collections their data has survived: a
//!   victim written by the host sends its valid pages to GC class 0, a victim of class `k` to
//!   class `k + 1`, the last class collecting everything older (`separation_classes` classes,
//!   each its own open unit).  Data that survives a collection is colder than data just
//!   written, and data that survives two colder still, so each class fills units with pages
//!   of like remaining lifetimes.  Sources: the age-ordered groups of MiDAS (Oh et al., FAST'24:
//!   a collected group's valid data moves to the next group) and SepBIT's GC classes by age
//!   (Wang et al., "Separating Data via Block Invalidation Time Inference for Write
//!   Amplification Reduction in Log-Structured Storage", FAST'22: classes 3-6).
//! * `"sepbit"`: the GC classes of `"gc-age"` and SepBIT's two host classes: a host write whose
//!   previous version lived less than the mean lifetime of the last 16 hot units collected
//!   goes to a hot unit, any other (first writes, older data) to a cold one
//!   (`ftl::temperature`).  Drives infer temperature from the host's own overwrites as this
//!   does (SepBIT; the host-stream separation of multi-streamed SSDs, Kang et al., HotStorage
//!   2014, done by the drive without the host's hints).
//!
//! Off, results are bit-identical to a config without the keys.  Needs a separate GC frontier
//! (`gc_frontier = "separate"`); `"gc-age"` cannot be combined with persistently isolated
//! placement (its GC frontiers are per handle), `"sepbit"` with any placement (its host
//! frontiers are per handle).

use super::gc::{GcFrontier, GcLayout};
use super::placement::Resolved;
use super::Config;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Most GC classes (`ftl.separation_classes`).
pub const MAX_CLASSES: u32 = 8;
/// GC classes of `"gc-age"` and `"sepbit"` when `ftl.separation_classes` is not given.
pub const DEFAULT_CLASSES: u32 = 4;

/// `ftl.separation`: where GC copies go by the temperature of their data.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Separation {
    /// One GC frontier per group (the model before the key).
    #[default]
    None,
    /// GC classes by the number of collections the data has survived.
    GcAge,
    /// GC classes by age and hot and cold host frontiers by the data's inferred lifetime.
    #[serde(rename = "sepbit")]
    SepBit,
}

impl Separation {
    pub fn name(self) -> &'static str {
        match self {
            Separation::None => "none",
            Separation::GcAge => "gc-age",
            Separation::SepBit => "sepbit",
        }
    }
}

/// The GC classes (open GC units per group) of `cfg`: 1 without separation, else
/// `ftl.separation_classes` (default [`DEFAULT_CLASSES`]), checked against what it cannot be
/// combined with.
pub fn classes(cfg: &Config) -> Result<u32> {
    let f = &cfg.ftl;
    let key = "ftl.separation_classes";
    if f.separation == Separation::None {
        if f.separation_classes.is_some() {
            return Err(Error::config(key, "is only used with ftl.separation = \"gc-age\" or \"sepbit\""));
        }
        return Ok(1);
    }
    let n = f.separation_classes.unwrap_or(DEFAULT_CLASSES);
    if !(2..=MAX_CLASSES).contains(&n) {
        return Err(Error::config(key, format!("{n} is out of range; expected 2..={MAX_CLASSES}")));
    }
    let name = f.separation.name();
    if f.gc_frontier == GcFrontier::Shared {
        return Err(Error::config(
            "ftl.separation",
            format!("\"{name}\" needs GC copies in their own frontiers: not with gc_frontier = \"shared\""),
        ));
    }
    Ok(n)
}

/// Host frontiers per stream of `cfg`: 2 with `"sepbit"` (hot and cold), else 1.
pub fn host_classes(cfg: &Config) -> u32 {
    if cfg.ftl.separation == Separation::SepBit {
        2
    } else {
        1
    }
}

/// Separation against placement: GC classes not with persistently isolated placement (its GC
/// frontiers are per handle), host classes with none (its host frontiers are per handle).
pub(crate) fn check_placement(cfg: &Config, gc: &GcLayout, placement: Option<&Resolved>) -> Result<()> {
    if gc.host_classes > 1 && placement.is_some() {
        return Err(Error::config(
            "ftl.separation",
            "\"sepbit\" cannot be combined with [ftl.placement] (host frontiers are per placement handle)",
        ));
    }
    if gc.classes > 1 && placement.is_some_and(|p| p.persistent()) {
        return Err(Error::config(
            "ftl.separation",
            format!(
                "\"{}\" cannot be combined with persistently isolated placement (GC copies stay with their handle)",
                cfg.ftl.separation.name()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn cfg(ftl: &str) -> crate::error::Result<crate::Simulator> {
        let c: Config = toml::from_str(&format!(
            "[drive]\nuser_capacity = \"64MiB\"\nop = 0.1\npages_per_block = 64\n[ftl]\n{ftl}\n"
        ))
        .unwrap();
        crate::Simulator::new(c)
    }

    #[test]
    fn bad_combinations_name_the_key() {
        for (ftl, key) in [
            ("separation_classes = 3", "ftl.separation_classes"),
            ("separation = \"gc-age\"\nseparation_classes = 1", "ftl.separation_classes"),
            ("separation = \"gc-age\"\nseparation_classes = 9", "ftl.separation_classes"),
            ("separation = \"gc-age\"\ngc_frontier = \"shared\"", "ftl.separation"),
        ] {
            let e = cfg(ftl).err().unwrap_or_else(|| panic!("{ftl}: accepted"));
            assert_eq!(e.key.as_deref(), Some(key), "{ftl}: {e}");
        }
        assert!(cfg("separation = \"gc-age\"").is_ok());
        assert!(cfg("separation = \"sepbit\"\nseparation_classes = 2").is_ok());
        let e = cfg("separation = \"sepbit\"\n[ftl.placement]\nmode = \"fdp\"\nhandles = 2").err().expect("refused");
        assert_eq!(e.key.as_deref(), Some("ftl.separation"), "{e}");
    }
}
