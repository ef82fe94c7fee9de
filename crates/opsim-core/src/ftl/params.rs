//! What an [`super::Ftl`] is built from: its geometry, watermarks and options, resolved.

use super::PlacementParams;

pub struct FtlParams {
    pub blocks: u32,
    pub pages_per_block: u32,
    pub lpns: u32,
    pub page_size: u64,
    pub sector_size: u32,
    pub streams: u32,
    pub gc_low: u32,
    pub gc_high: u32,
    pub policy_param: u32,
    pub check: bool,
    pub track_data: bool,
    pub seed: u64,
    pub slc: Option<SlcParams>,
    /// Namespaces and placement handles; None: off.
    pub placement: Option<PlacementParams>,
    /// Block groups GC works within (1: the whole drive); `blocks` must be a multiple.
    /// `gc_low` and `gc_high` are per group.
    pub groups: u32,
    /// GC copies go into the triggering host frontier (compact in place and refill).
    pub shared_frontier: bool,
    /// Metadata pages per host page (`ftl.meta_writes`) in units of 2^-32 (see
    /// [`meta_rate`]); 0: off.
    pub meta_rate: u64,
    /// GC frontiers per group by the data's GC age (`ftl.separation = "gc-age"`); 1: one.
    pub gc_classes: u32,
    /// Host frontiers per stream by the data's inferred lifetime (`ftl.separation =
    /// "sepbit"`: 2, hot and cold); 1: one.
    pub host_classes: u32,
}

/// One metadata page in the fixed point of [`FtlParams::meta_rate`].
pub const META_ONE: u64 = 1 << 32;

/// `ftl.meta_writes` (pages per host page, 0..=1) in the fixed point of
/// [`FtlParams::meta_rate`]: integer arithmetic keeps every run exact and seed-free.
pub fn meta_rate(meta_writes: f64) -> u64 {
    (meta_writes * META_ONE as f64).round() as u64
}

/// The SLC cache's limits, resolved to blocks.
#[derive(Clone, Copy, Debug)]
pub struct SlcParams {
    /// Ceiling of the dynamic cache, blocks.
    pub max_blocks: u32,
    /// Static part, blocks.
    pub min_blocks: u32,
    /// Bits per cell in native mode: an SLC block holds `pages_per_block / bits` pages.
    pub bits: u32,
    /// Cache full: fold the oldest SLC block (true) or write native-mode blocks (false).
    pub fold_when_full: bool,
}
